package ingest

import (
	"encoding/json"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// A proxy's items in 6.0's "proxy config" form: one row of the items
// table per item, in itemFields' order, with the fields of its type
// filled and every other field at 6.0's default. The forms were
// recorded from 6.0.14 (testdata/proxy_config_types_zabbix60.json: an
// HTTP agent, SSH, Telnet, JMX, database monitor and script item on a
// host behind an active proxy):
//   - query_fields is a JSON array of one-member objects in their order,
//     headers "Name: value" lines joined by CR LF;
//   - authtype, username, password, publickey and privatekey carry an
//     SSH or Telnet item's login, an HTTP agent item's authentication,
//     a JMX or database monitor item's credentials;
//   - params is a script item's script, an SSH or Telnet item's command,
//     a database monitor item's query; a script item's parameters go to
//     the item_parameter table.
//
// 6.0 sends user macros unexpanded with the macro tables; Peregrine
// expands them here (its macro tables are sent empty), so the proxy
// expands only the built-in macros ({HOST.CONN}, {HOST.PORT}, ...) it
// knows itself.

// proxyItemRow returns item it's row of the items table.
func proxyItemRow(it *catalog.Item, m *usermacro.Scope) []any {
	var iface any
	if it.InterfaceID != 0 {
		iface = it.InterfaceID
	}
	timeout := it.Ext().Timeout
	if timeout == "" {
		timeout = "3s"
	}
	var (
		authtype                                  int
		username, password, publickey, privatekey string
		jmxEndpoint                               string
	)
	h := proxyHTTPDefaults
	switch {
	case it.Ext().HTTP != nil:
		x := it.Ext().HTTP
		authtype, username, password = int(x.AuthType), x.Username, x.Password
		h = proxyHTTP{url: m.Expand(x.URL), queryFields: httpQueryFields(x.QueryFields, m), posts: m.Expand(x.Posts),
			statusCodes: m.Expand(x.StatusCodes), followRedirects: b2i(x.FollowRedirects), postType: int(x.PostType),
			httpProxy: m.Expand(x.HTTPProxy), headers: httpHeaders(x.Headers, m), retrieveMode: int(x.RetrieveMode),
			requestMethod: int(x.RequestMethod), outputFormat: int(x.OutputFormat), sslCertFile: m.Expand(x.SSLCertFile),
			sslKeyFile: m.Expand(x.SSLKeyFile), sslKeyPassword: m.Expand(x.SSLKeyPassword), verifyPeer: b2i(x.VerifyPeer),
			verifyHost: b2i(x.VerifyHost)}
	case it.Ext().Login != nil:
		x := it.Ext().Login
		authtype, username, password, publickey, privatekey = int(x.AuthType), x.Username, x.Password, x.PublicKey, x.PrivateKey
	case it.Ext().JMX != nil:
		username, password, jmxEndpoint = it.Ext().JMX.Username, it.Ext().JMX.Password, m.Expand(it.Ext().JMX.Endpoint)
	case it.Ext().ODBC != nil:
		username, password = it.Ext().ODBC.Username, it.Ext().ODBC.Password
	}
	return []any{it.ID, int(it.Type), m.Expand(it.Ext().SNMPOID), it.HostID, m.Expand(it.Key), m.Expand(it.Delay),
		it.History, b2i(!it.Enabled), int(it.ValueType), "", "", m.Expand(it.Ext().Params), it.Ext().IPMISensor,
		authtype, m.Expand(username), m.Expand(password), m.Expand(publickey), m.Expand(privatekey), 0, iface,
		int(it.InventoryLink), jmxEndpoint, nil, m.Expand(timeout), h.url, h.queryFields, h.posts, h.statusCodes, h.followRedirects,
		h.postType, h.httpProxy, h.headers, h.retrieveMode, h.requestMethod, h.outputFormat, h.sslCertFile, h.sslKeyFile,
		h.sslKeyPassword, h.verifyPeer, h.verifyHost, 0}
}

// proxyHTTP are the HTTP agent fields of an items row.
type proxyHTTP struct {
	url, queryFields, posts, statusCodes      string
	followRedirects, postType                 int
	httpProxy, headers                        string
	retrieveMode, requestMethod, outputFormat int
	sslCertFile, sslKeyFile, sslKeyPassword   string
	verifyPeer, verifyHost                    int
}

// proxyHTTPDefaults are 6.0's values of the HTTP agent fields on items
// of other types (recorded from 6.0.14).
var proxyHTTPDefaults = proxyHTTP{statusCodes: "200", followRedirects: 1}

// httpQueryFields is query_fields in 6.0's stored form:
// [{"name":"value"},...], "" for none.
func httpQueryFields(fs []catalog.HTTPField, m *usermacro.Scope) string {
	if len(fs) == 0 {
		return ""
	}
	out := make([]map[string]string, len(fs))
	for i, f := range fs {
		out[i] = map[string]string{m.Expand(f.Name): m.Expand(f.Value)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic("BUG: query fields do not marshal: " + err.Error())
	}
	return string(b)
}

// httpHeaders is headers in 6.0's stored form: "Name: value" lines
// joined by CR LF.
func httpHeaders(fs []catalog.HTTPField, m *usermacro.Scope) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString(m.Expand(f.Name))
		b.WriteString(": ")
		b.WriteString(m.Expand(f.Value))
	}
	return b.String()
}
