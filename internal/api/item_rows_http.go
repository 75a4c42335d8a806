package api

// The HTTP agent fields of an item answer (item.get): headers and query
// fields as Zabbix 6.0 returns them, and the HTTP agent's string and
// numeric fields.

import (
	"github.com/peregrine-mon/peregrine/internal/api/zjson"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// appendHTTPHeaders appends "headers" as Zabbix 6.0 returns it: an
// object of names and values ([] when there are none).
func appendHTTPHeaders(dst []byte, h *catalog.HTTPItem) []byte {
	dst = append(dst, `"headers":`...)
	if h == nil || len(h.Headers) == 0 {
		return append(dst, "[]"...)
	}
	dst = append(dst, '{')
	for i, f := range h.Headers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = zjson.AppendString(dst, f.Name)
		dst = append(dst, ':')
		dst = zjson.AppendString(dst, f.Value)
	}
	return append(dst, '}')
}

// appendQueryFields appends "query_fields" as Zabbix 6.0 returns it: an
// array of one-member objects.
func appendQueryFields(dst []byte, h *catalog.HTTPItem) []byte {
	dst = append(dst, `"query_fields":[`...)
	if h != nil {
		for i, f := range h.QueryFields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			dst = zjson.AppendString(dst, f.Name)
			dst = append(dst, ':')
			dst = zjson.AppendString(dst, f.Value)
			dst = append(dst, '}')
		}
	}
	return append(dst, ']')
}

// httpString is a string HTTP agent field of an item (h nil: not an HTTP
// agent item).
func httpString(h *catalog.HTTPItem, f itemField) string {
	if h == nil {
		h = &httpDefaults
	}
	switch f {
	case fHTTPProxy:
		return h.HTTPProxy
	case fPassword, fSSLKeyPassword:
		// 6.0 answers these; Peregrine never returns a secret.
		return ""
	case fPosts:
		return h.Posts
	case fSSLCertFile:
		return h.SSLCertFile
	case fSSLKeyFile:
		return h.SSLKeyFile
	case fStatusCodes:
		return h.StatusCodes
	case fURL:
		return h.URL
	case fUsername:
		return h.Username
	}
	return ""
}

// httpNumber is a numeric HTTP agent field of an item.
func httpNumber(h *catalog.HTTPItem, f itemField) uint8 {
	if h == nil {
		h = &httpDefaults
	}
	b := func(v bool) uint8 {
		if v {
			return 1
		}
		return 0
	}
	switch f {
	case fAuthType:
		return h.AuthType
	case fFollowRedirects:
		return b(h.FollowRedirects)
	case fOutputFormat:
		return h.OutputFormat
	case fPostType:
		return h.PostType
	case fRequestMethod:
		return h.RequestMethod
	case fRetrieveMode:
		return h.RetrieveMode
	case fVerifyHost:
		return b(h.VerifyHost)
	case fVerifyPeer:
		return b(h.VerifyPeer)
	}
	return 0
}
