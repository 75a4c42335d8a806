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
	URL             jstring   `json:"url"`
	QueryFields     httpPairs `json:"query_fields"`
	RequestMethod   flexInt   `json:"request_method"`
	PostType        flexInt   `json:"post_type"`
	Posts           jstring   `json:"posts"`
	Headers         httpPairs `json:"headers"`
	StatusCodes     jstring   `json:"status_codes"`
	FollowRedirects flexInt   `json:"follow_redirects"`
	RetrieveMode    flexInt   `json:"retrieve_mode"`
	OutputFormat    flexInt   `json:"output_format"`
	SSLCertFile     jstring   `json:"ssl_cert_file"`
	SSLKeyFile      jstring   `json:"ssl_key_file"`
	SSLKeyPassword  jstring   `json:"ssl_key_password"`
	VerifyPeer      flexInt   `json:"verify_peer"`
	VerifyHost      flexInt   `json:"verify_host"`
	AuthType        flexInt   `json:"authtype"`
	Username        jstring   `json:"username"`
	Password        jstring   `json:"password"`
	HTTPProxy       jstring   `json:"http_proxy"`
}

// any reports whether any HTTP member was given.
func (h *httpParams) any() bool {
	return h.URL.set || h.QueryFields.set || h.RequestMethod.set || h.PostType.set || h.Posts.set ||
		h.Headers.set || h.StatusCodes.set || h.FollowRedirects.set || h.RetrieveMode.set || h.OutputFormat.set ||
		h.SSLCertFile.set || h.SSLKeyFile.set || h.SSLKeyPassword.set || h.VerifyPeer.set || h.VerifyHost.set ||
		h.AuthType.set || h.Username.set || h.Password.set || h.HTTPProxy.set
}

// apply sets the members given on hs (numbers as strings, which the
// catalog parses and bounds).
func (h *httpParams) apply(hs *catalog.HTTPSpec) {
	str := func(dst *string, v jstring) {
		if v.set {
			*dst = v.v
		}
	}
	num := func(dst *string, v flexInt) {
		if v.set {
			*dst = strconv.FormatInt(v.v, 10)
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
	if h.QueryFields.set {
		hs.QueryFields = h.QueryFields.v
	}
	if h.Headers.set {
		hs.Headers = h.Headers.v
	}
}

// httpPairs is query_fields or headers in any of the forms Zabbix's API
// has used: Zabbix 6.0's query_fields, an array of one-member objects
// ([{"a": "1"}, {"b": "2"}]); its headers, one object ({"a": "1", "b":
// "2"}, members in order); and Zabbix 7's [{"name": "a", "value": "1"}].
type httpPairs struct {
	set bool
	v   []catalog.HTTPField
}

var errPairs = errors.New(`must be an object of names and values, or an array of {"name": ..., "value": ...}`)

func (p *httpPairs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	p.set = true
	p.v = nil
	switch {
	case len(b) > 0 && b[0] == '{':
		pairs, err := orderedPairs(b)
		if err != nil {
			return err
		}
		p.v = pairs
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
				p.v = append(p.v, f)
				continue
			}
			pairs, err := orderedPairs(e)
			if err != nil {
				return err
			}
			p.v = append(p.v, pairs...)
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
