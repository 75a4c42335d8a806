package catalog

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// HTTPField is one name/value pair of an HTTP agent item's query_fields
// or headers, in the order given.
type HTTPField struct {
	Name  string `yaml:"name" json:"name"`
	Value string `yaml:"value" json:"value"`
}

// HTTP agent request methods, post types, retrieve modes, output formats
// and authentication types: Zabbix 6.0's numbers.
const (
	HTTPGet  = 0
	HTTPPost = 1
	HTTPPut  = 2
	HTTPHead = 3

	HTTPPostRaw  = 0
	HTTPPostJSON = 2
	HTTPPostXML  = 3

	HTTPRetrieveBody    = 0
	HTTPRetrieveHeaders = 1
	HTTPRetrieveBoth    = 2

	HTTPOutputRaw  = 0
	HTTPOutputJSON = 1

	HTTPAuthNone     = 0
	HTTPAuthBasic    = 1
	HTTPAuthNTLM     = 2
	HTTPAuthKerberos = 3
	HTTPAuthDigest   = 4
)

// HTTPItem is the request of an HTTP agent item (type 19): Zabbix 6.0's
// item fields of the same names (JSON names as in the API). It belongs to
// its snapshot and MUST NOT be modified.
type HTTPItem struct {
	URL             string      `json:"url"`
	QueryFields     []HTTPField `json:"query_fields,omitempty"`
	RequestMethod   uint8       `json:"request_method"`
	PostType        uint8       `json:"post_type"`
	Posts           string      `json:"posts,omitempty"`
	Headers         []HTTPField `json:"headers,omitempty"`
	StatusCodes     string      `json:"status_codes"`
	FollowRedirects bool        `json:"follow_redirects"`
	RetrieveMode    uint8       `json:"retrieve_mode"`
	OutputFormat    uint8       `json:"output_format"`
	VerifyPeer      bool        `json:"verify_peer"`
	VerifyHost      bool        `json:"verify_host"`
	SSLCertFile     string      `json:"ssl_cert_file,omitempty"`
	SSLKeyFile      string      `json:"ssl_key_file,omitempty"`
	SSLKeyPassword  string      `json:"ssl_key_password,omitempty"`
	AuthType        uint8       `json:"authtype"`
	Username        string      `json:"username,omitempty"`
	Password        string      `json:"password,omitempty"`
	HTTPProxy       string      `json:"http_proxy,omitempty"`
}

func (a *HTTPItem) equal(b *HTTPItem) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.URL == b.URL && slices.Equal(a.QueryFields, b.QueryFields) && a.RequestMethod == b.RequestMethod &&
		a.PostType == b.PostType && a.Posts == b.Posts && slices.Equal(a.Headers, b.Headers) &&
		a.StatusCodes == b.StatusCodes && a.FollowRedirects == b.FollowRedirects && a.RetrieveMode == b.RetrieveMode &&
		a.OutputFormat == b.OutputFormat && a.VerifyPeer == b.VerifyPeer && a.VerifyHost == b.VerifyHost &&
		a.SSLCertFile == b.SSLCertFile && a.SSLKeyFile == b.SSLKeyFile && a.SSLKeyPassword == b.SSLKeyPassword &&
		a.AuthType == b.AuthType && a.Username == b.Username && a.Password == b.Password && a.HTTPProxy == b.HTTPProxy
}

// encodeHTTP is the item_http row's config: the item's JSON.
func encodeHTTP(h *HTTPItem) string {
	b, err := json.Marshal(h)
	if err != nil {
		panic("BUG: HTTPItem does not marshal: " + err.Error())
	}
	return string(b)
}

func decodeHTTP(s string) (*HTTPItem, error) {
	var h HTTPItem
	if err := json.Unmarshal([]byte(s), &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// HTTPSpec is the HTTP agent part of an item in the import format and of
// item.create/item.update: Zabbix's field names, each value either
// Zabbix's export name (request_method: POST, retrieve_mode: BOTH,
// follow_redirects: NO, authtype: BASIC) or its API number as a string.
// Empty fields take Zabbix's defaults: GET, raw post, status codes "200",
// follow redirects, body only, raw output, no verification, no
// authentication. Only http_agent items use it.
type HTTPSpec struct {
	URL             string      `yaml:"url"`
	QueryFields     []HTTPField `yaml:"query_fields"`
	RequestMethod   string      `yaml:"request_method"`
	PostType        string      `yaml:"post_type"`
	Posts           string      `yaml:"posts"`
	Headers         []HTTPField `yaml:"headers"`
	StatusCodes     string      `yaml:"status_codes"`
	FollowRedirects string      `yaml:"follow_redirects"`
	RetrieveMode    string      `yaml:"retrieve_mode"`
	OutputFormat    string      `yaml:"output_format"`
	VerifyPeer      string      `yaml:"verify_peer"`
	VerifyHost      string      `yaml:"verify_host"`
	SSLCertFile     string      `yaml:"ssl_cert_file"`
	SSLKeyFile      string      `yaml:"ssl_key_file"`
	SSLKeyPassword  string      `yaml:"ssl_key_password"`
	AuthType        string      `yaml:"authtype"`
	Username        string      `yaml:"username"`
	Password        string      `yaml:"password"`
	HTTPProxy       string      `yaml:"http_proxy"`
}

// Length limits of the HTTP agent fields, from the Zabbix 6.0 schema.
const (
	maxURLLen         = 2048
	maxStatusCodesLen = 255
	maxHTTPProxyLen   = 255
	maxHTTPUserLen    = 255 // username and password (Zabbix 6.0: 64 and 64 for most types, 255 for HTTP)
	maxSSLFileLen     = 255
	maxPostsLen       = 65535
)

// enumField parses one enumerated field: a name of names (case-
// insensitive, as Zabbix exports them upper-case) or an allowed number.
func enumField(v string, def uint8, names map[string]uint8, field, ip string, el *errList) uint8 {
	if v == "" {
		return def
	}
	if n, ok := names[strings.ToUpper(v)]; ok {
		return n
	}
	if n, err := strconv.ParseUint(v, 10, 8); err == nil {
		for _, allowed := range names {
			if allowed == uint8(n) {
				return uint8(n)
			}
		}
	}
	var opts []string
	for name, n := range names {
		opts = append(opts, fmt.Sprintf("%s (%d)", name, n))
	}
	slices.Sort(opts)
	el.addf(ip+"."+field, "invalid value %q: use one of %s", v, strings.Join(opts, ", "))
	return def
}

var (
	httpMethods     = map[string]uint8{"GET": HTTPGet, "POST": HTTPPost, "PUT": HTTPPut, "HEAD": HTTPHead}
	httpPostTypes   = map[string]uint8{"RAW": HTTPPostRaw, "JSON": HTTPPostJSON, "XML": HTTPPostXML}
	httpRetrieve    = map[string]uint8{"BODY": HTTPRetrieveBody, "HEADERS": HTTPRetrieveHeaders, "BOTH": HTTPRetrieveBoth}
	httpOutput      = map[string]uint8{"RAW": HTTPOutputRaw, "JSON": HTTPOutputJSON}
	httpYesNo       = map[string]uint8{"NO": 0, "YES": 1}
	httpAuthTypes   = map[string]uint8{"NONE": HTTPAuthNone, "BASIC": HTTPAuthBasic, "NTLM": HTTPAuthNTLM, "KERBEROS": HTTPAuthKerberos, "DIGEST": HTTPAuthDigest}
	httpMethodNames = [...]string{"GET", "POST", "PUT", "HEAD"}
)

// normHTTP validates the HTTP agent fields of an item of type typ and
// returns them with defaults applied: nil for other item types, whose
// HTTP fields are ignored (as Zabbix resets them when the type changes).
func normHTTP(hs *HTTPSpec, typ ItemType, ip string, el *errList) *HTTPItem {
	if typ != HTTPAgent {
		return nil
	}
	h := &HTTPItem{
		URL: hs.URL, QueryFields: hs.QueryFields, Posts: hs.Posts, Headers: hs.Headers, StatusCodes: hs.StatusCodes,
		SSLCertFile: hs.SSLCertFile, SSLKeyFile: hs.SSLKeyFile, SSLKeyPassword: hs.SSLKeyPassword,
		Username: hs.Username, Password: hs.Password, HTTPProxy: hs.HTTPProxy,
	}
	switch {
	case h.URL == "":
		el.addf(ip+".url", "cannot be empty: an HTTP agent item needs the URL to request")
	case len(h.URL) > maxURLLen:
		el.addf(ip+".url", "longer than %d characters", maxURLLen)
	case !strings.Contains(h.URL, "{"): // a URL with macros is checked once they are expanded
		if u, err := url.Parse(withScheme(h.URL)); err != nil || u.Host == "" {
			el.addf(ip+".url", "%q is not a URL: use http://host[:port]/path or https://...", h.URL)
		} else if u.Scheme != "http" && u.Scheme != "https" {
			el.addf(ip+".url", "scheme %q is not supported: use http or https", u.Scheme)
		}
	}
	h.RequestMethod = enumField(hs.RequestMethod, HTTPGet, httpMethods, "request_method", ip, el)
	h.PostType = enumField(hs.PostType, HTTPPostRaw, httpPostTypes, "post_type", ip, el)
	h.RetrieveMode = enumField(hs.RetrieveMode, HTTPRetrieveBody, httpRetrieve, "retrieve_mode", ip, el)
	h.OutputFormat = enumField(hs.OutputFormat, HTTPOutputRaw, httpOutput, "output_format", ip, el)
	h.FollowRedirects = enumField(hs.FollowRedirects, 1, httpYesNo, "follow_redirects", ip, el) == 1
	h.VerifyPeer = enumField(hs.VerifyPeer, 0, httpYesNo, "verify_peer", ip, el) == 1
	h.VerifyHost = enumField(hs.VerifyHost, 0, httpYesNo, "verify_host", ip, el) == 1
	h.AuthType = enumField(hs.AuthType, HTTPAuthNone, httpAuthTypes, "authtype", ip, el)
	if h.RequestMethod == HTTPHead && h.RetrieveMode != HTTPRetrieveHeaders {
		if hs.RetrieveMode == "" {
			h.RetrieveMode = HTTPRetrieveHeaders // a HEAD has no body to retrieve
		} else {
			el.addf(ip+".retrieve_mode", "must be headers (1) for request method HEAD, which has no body")
		}
	}
	if h.StatusCodes == "" {
		h.StatusCodes = "200"
	}
	if len(h.StatusCodes) > maxStatusCodesLen {
		el.addf(ip+".status_codes", "longer than %d characters", maxStatusCodesLen)
	} else if _, err := ParseStatusCodes(h.StatusCodes); err != nil {
		el.add(ip+".status_codes", err)
	}
	if len(h.Posts) > maxPostsLen {
		el.addf(ip+".posts", "longer than %d bytes", maxPostsLen)
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"http_proxy", h.HTTPProxy, maxHTTPProxyLen}, {"username", h.Username, maxHTTPUserLen},
		{"password", h.Password, maxHTTPUserLen}, {"ssl_cert_file", h.SSLCertFile, maxSSLFileLen},
		{"ssl_key_file", h.SSLKeyFile, maxSSLFileLen}, {"ssl_key_password", h.SSLKeyPassword, maxSSLFileLen},
	} {
		if len(f.v) > f.max {
			el.addf(ip+"."+f.name, "longer than %d characters", f.max)
		}
	}
	if h.SSLKeyFile != "" && h.SSLCertFile == "" {
		el.addf(ip+".ssl_cert_file", "cannot be empty when ssl_key_file is set")
	}
	for i, f := range h.QueryFields {
		if f.Name == "" {
			el.addf(ip+".query_fields["+strconv.Itoa(i)+"].name", "cannot be empty")
		}
	}
	for i, f := range h.Headers {
		if f.Name == "" || strings.ContainsAny(f.Name, ": \r\n") {
			el.addf(ip+".headers["+strconv.Itoa(i)+"].name", "%q is not a header name", f.Name)
		}
		if strings.ContainsAny(f.Value, "\r\n") {
			el.addf(ip+".headers["+strconv.Itoa(i)+"].value", "must not contain line breaks")
		}
	}
	if len(h.QueryFields) == 0 {
		h.QueryFields = nil
	}
	if len(h.Headers) == 0 {
		h.Headers = nil
	}
	return h
}

// withScheme adds http:// to a URL without a scheme, as Zabbix (cURL)
// assumes it.
func withScheme(u string) string {
	if strings.Contains(u, "://") {
		return u
	}
	return "http://" + u
}

// StatusRange is one element of an item's status_codes: From..To
// inclusive (From == To for a single code).
type StatusRange struct{ From, To int }

// ParseStatusCodes parses Zabbix's status_codes: a comma-separated list
// of codes and ranges ("200,201,210-299"); an empty list accepts every
// code. User macros ({$OK_CODES}) are not expanded yet and are refused.
func ParseStatusCodes(s string) ([]StatusRange, error) {
	var out []StatusRange
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		from, to, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(strings.TrimSpace(from))
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(strings.TrimSpace(to))
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b > 999 {
			return nil, fmt.Errorf("invalid status code list %q at %q: use codes and ranges such as 200,201,210-299", s, part)
		}
		out = append(out, StatusRange{a, b})
	}
	return out, nil
}

// httpSpecOf is the import form of h (numbers as strings), for
// revalidation on update.
func httpSpecOf(h *HTTPItem) HTTPSpec {
	if h == nil {
		return HTTPSpec{}
	}
	yn := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	n := func(v uint8) string { return strconv.Itoa(int(v)) }
	return HTTPSpec{
		URL: h.URL, QueryFields: h.QueryFields, RequestMethod: n(h.RequestMethod), PostType: n(h.PostType),
		Posts: h.Posts, Headers: h.Headers, StatusCodes: h.StatusCodes, FollowRedirects: yn(h.FollowRedirects),
		RetrieveMode: n(h.RetrieveMode), OutputFormat: n(h.OutputFormat), VerifyPeer: yn(h.VerifyPeer),
		VerifyHost: yn(h.VerifyHost), SSLCertFile: h.SSLCertFile, SSLKeyFile: h.SSLKeyFile,
		SSLKeyPassword: h.SSLKeyPassword, AuthType: n(h.AuthType), Username: h.Username, Password: h.Password,
		HTTPProxy: h.HTTPProxy,
	}
}

// MethodName is the request method's HTTP name.
func (a *HTTPItem) MethodName() string {
	if int(a.RequestMethod) < len(httpMethodNames) {
		return httpMethodNames[a.RequestMethod]
	}
	return "GET"
}
