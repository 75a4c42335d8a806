package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// httpParams are the HTTP agent members of a Zabbix 6.0 item object
// (type 19), validated by the catalog with the import format's rules.
type httpParams struct {
	URL             opt[string]    `json:"url"`
	QueryFields     opt[httpPairs] `json:"query_fields"`
	RequestMethod   opt[int64]     `json:"request_method"`
	PostType        opt[int64]     `json:"post_type"`
	Posts           opt[string]    `json:"posts"`
	Headers         opt[httpPairs] `json:"headers"`
	StatusCodes     opt[string]    `json:"status_codes"`
	FollowRedirects opt[int64]     `json:"follow_redirects"`
	RetrieveMode    opt[int64]     `json:"retrieve_mode"`
	OutputFormat    opt[int64]     `json:"output_format"`
	SSLCertFile     opt[string]    `json:"ssl_cert_file"`
	SSLKeyFile      opt[string]    `json:"ssl_key_file"`
	SSLKeyPassword  opt[string]    `json:"ssl_key_password"`
	VerifyPeer      opt[int64]     `json:"verify_peer"`
	VerifyHost      opt[int64]     `json:"verify_host"`
	AuthType        opt[int64]     `json:"authtype"`
	Username        opt[string]    `json:"username"`
	Password        opt[string]    `json:"password"`
	HTTPProxy       opt[string]    `json:"http_proxy"`
}

// any reports whether any HTTP member was given.
func (h *httpParams) any() bool {
	return h.URL.Set || h.QueryFields.Given() || h.RequestMethod.Given() || h.PostType.Given() || h.Posts.Set ||
		h.Headers.Given() || h.StatusCodes.Set || h.FollowRedirects.Given() || h.RetrieveMode.Given() || h.OutputFormat.Given() ||
		h.SSLCertFile.Set || h.SSLKeyFile.Set || h.SSLKeyPassword.Set || h.VerifyPeer.Given() || h.VerifyHost.Given() ||
		h.AuthType.Given() || h.Username.Set || h.Password.Set || h.HTTPProxy.Set
}

// apply sets the members given on hs (numbers as strings, which the
// catalog parses and bounds).
func (h *httpParams) apply(hs *catalog.HTTPSpec) {
	str := func(dst *string, v opt[string]) {
		if v.Set {
			*dst = v.Value
		}
	}
	num := func(dst *string, v opt[int64]) {
		if v.Given() {
			*dst = strconv.FormatInt(v.Value, 10)
		}
	}
	str(&hs.URL, h.URL)
	num(&hs.RequestMethod, h.RequestMethod)
	num(&hs.PostType, h.PostType)
	str(&hs.Posts, h.Posts)
	str(&hs.StatusCodes, h.StatusCodes)
	num(&hs.FollowRedirects, h.FollowRedirects)
	num(&hs.RetrieveMode, h.RetrieveMode)
	num(&hs.OutputFormat, h.OutputFormat)
	str(&hs.SSLCertFile, h.SSLCertFile)
	str(&hs.SSLKeyFile, h.SSLKeyFile)
	str(&hs.SSLKeyPassword, h.SSLKeyPassword)
	num(&hs.VerifyPeer, h.VerifyPeer)
	num(&hs.VerifyHost, h.VerifyHost)
	num(&hs.AuthType, h.AuthType)
	str(&hs.Username, h.Username)
	str(&hs.Password, h.Password)
	str(&hs.HTTPProxy, h.HTTPProxy)
	if h.QueryFields.Given() {
		hs.QueryFields = h.QueryFields.Value
	}
	if h.Headers.Given() {
		hs.Headers = h.Headers.Value
	}
}

// httpPairs is query_fields or headers in any of the forms Zabbix's API
// has used: Zabbix 6.0's query_fields, an array of one-member objects
// ([{"a": "1"}, {"b": "2"}]); its headers, one object ({"a": "1", "b":
// "2"}, members in order); and Zabbix 7's [{"name": "a", "value": "1"}].
type httpPairs []catalog.HTTPField

var errPairs = errors.New(`must be an object of names and values, or an array of {"name": ..., "value": ...}`)

func (p *httpPairs) decodeParam(b []byte, _ *fieldCtx) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil // absent
	}
	*p = nil
	switch {
	case len(b) > 0 && b[0] == '{':
		pairs, err := orderedPairs(b)
		if err != nil {
			return err
		}
		*p = pairs
		return nil
	case len(b) > 0 && b[0] == '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(b, &elems); err != nil {
			return errPairs
		}
		for _, e := range elems {
			var nv struct {
				Name  *string `json:"name"`
				Value *string `json:"value"`
			}
			if err := json.Unmarshal(e, &nv); err == nil && nv.Name != nil {
				f := catalog.HTTPField{Name: *nv.Name}
				if nv.Value != nil {
					f.Value = *nv.Value
				}
				*p = append(*p, f)
				continue
			}
			pairs, err := orderedPairs(e)
			if err != nil {
				return err
			}
			*p = append(*p, pairs...)
		}
		return nil
	}
	return errPairs
}

// orderedPairs decodes a JSON object of string values keeping its
// members' order (headers are sent in the order given).
func orderedPairs(b []byte) ([]catalog.HTTPField, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errPairs
	}
	var out []catalog.HTTPField
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, errPairs
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return nil, errPairs
		}
		out = append(out, catalog.HTTPField{Name: k.(string), Value: v})
	}
	return out, nil
}
