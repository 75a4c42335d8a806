package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// proxyTypesSpec is the host the golden file's configuration was
// recorded with: the same items on a host behind proxy "px-types".
func proxyTypesSpec() catalog.Spec {
	return catalog.Spec{Hosts: []catalog.HostSpec{{Host: "s5px-host", Groups: []string{"Test"},
		Interfaces: []catalog.InterfaceSpec{{IP: "127.0.0.1", Port: "10050"}, {Type: "jmx", IP: "127.0.0.1", Port: "12345"}},
		Items: []catalog.ItemSpec{
			{Key: "s5px.http", Type: "http_agent", ValueType: "text", Delay: "30s", Timeout: "7s", Interface: "127.0.0.1:10050",
				HTTPSpec: catalog.HTTPSpec{URL: "http://127.0.0.1:8080/x", QueryFields: []catalog.HTTPField{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}},
					Headers: []catalog.HTTPField{{Name: "X-A", Value: "v1"}, {Name: "X-B", Value: "v2"}}, Posts: `{"k":1}`, PostType: "JSON", RequestMethod: "POST",
					StatusCodes: "200,201", FollowRedirects: "NO", RetrieveMode: "BOTH", OutputFormat: "JSON", HTTPProxy: "http://p:3128", AuthType: "BASIC",
					Username: "hu", Password: "hp", VerifyPeer: "YES", VerifyHost: "YES", SSLCertFile: "c.pem", SSLKeyFile: "k.pem", SSLKeyPassword: "kp"}},
			{Key: "ssh.run[s5]", Type: "ssh", ValueType: "text", Params: "uptime", Interface: "127.0.0.1:10050",
				HTTPSpec: catalog.HTTPSpec{AuthType: "PUBLIC_KEY", Username: "su", Password: "sp"}, PublicKey: "id.pub", PrivateKey: "id"},
			{Key: "telnet.run[s5]", Type: "telnet", ValueType: "text", Params: "uname", Interface: "127.0.0.1:10050",
				HTTPSpec: catalog.HTTPSpec{Username: "tu", Password: "tp"}},
			{Key: `jmx["java.lang:type=Memory",HeapMemoryUsage.used]`, Type: "jmx", ValueType: "unsigned", Interface: "127.0.0.1:12345",
				JMXEndpoint: "service:jmx:rmi:///jndi/rmi://{HOST.CONN}:{HOST.PORT}/jmxrmi", HTTPSpec: catalog.HTTPSpec{Username: "ju", Password: "jp"}},
			{Key: "db.odbc.select[s5,dsn1]", Type: "odbc", ValueType: "text", Params: "select 1", HTTPSpec: catalog.HTTPSpec{Username: "ou", Password: "op"}},
			{Key: "s5px.script", Type: "script", ValueType: "text", Timeout: "5s", Params: "return JSON.stringify(value)",
				Parameters: []catalog.ItemParam{{Name: "p1", Value: "v1"}, {Name: "p2", Value: "{HOST.HOST}"}}},
		}}}}
}

type configTables map[string]struct {
	Fields []string `json:"fields"`
	Data   [][]any  `json:"data"`
}

// itemsByKey returns the items table's rows by key_, with the ids (itemid,
// hostid, interfaceid) blanked: they differ between the two servers.
func (c configTables) itemsByKey(t *testing.T) map[string]map[string]any {
	t.Helper()
	items := c["items"]
	out := map[string]map[string]any{}
	for _, row := range items.Data {
		m := map[string]any{}
		for i, f := range items.Fields {
			m[f] = row[i]
		}
		for _, f := range []string{"itemid", "hostid", "interfaceid"} {
			if m[f] != nil {
				m[f] = "id"
			}
		}
		// Peregrine does not keep an HTTP agent item's allow_traps and
		// trapper_hosts (item.create takes and ignores them): the
		// recorded item has them set, Peregrine sends 6.0's defaults.
		if m["type"] == float64(catalog.HTTPAgent) {
			m["allow_traps"], m["trapper_hosts"] = "ignored", "ignored"
		}
		out[m["key_"].(string)] = m
	}
	return out
}

// TestProxyConfigItemTypes: HTTP agent, SSH, Telnet, JMX, database
// monitor and script items are sent to a proxy field for field as the
// 6.0.14 server sends them (recorded from 6.0.14:
// testdata/proxy_config_types_zabbix60.json), with a script item's
// parameters in item_parameter; the autoregistration encryption
// settings go to config and config_autoreg_tls.
func TestProxyConfigItemTypes(t *testing.T) {
	b, err := os.ReadFile("testdata/proxy_config_types_zabbix60.json")
	if err != nil {
		t.Fatal(err)
	}
	var want configTables
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	cat := catalogtest.Open(t, proxyTypesSpec())
	h := cat.Snapshot().Host("s5px-host")
	p := &catalog.Proxy{ID: 1, Name: "px-types", Status: catalog.ProxyActive}
	setProxy(t, cat, p, h.ID)
	ar := catalog.AutoregSettings{TLSAccept: 3, PSKIdentity: "ar-id", PSK: "0123456789abcdef0123456789abcdef"}
	var got configTables
	if err := json.Unmarshal(ProxyConfig(cat.Snapshot(), p, nil, ar, nil), &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want["items"].Fields, got["items"].Fields); d != "" {
		t.Fatalf("items fields (-6.0.14 +Peregrine):\n%s", d)
	}
	if d := cmp.Diff(want.itemsByKey(t), got.itemsByKey(t)); d != "" {
		t.Errorf("items (-6.0.14 +Peregrine):\n%s", d)
	}
	params := func(c configTables) [][]any {
		var out [][]any
		for _, r := range c["item_parameter"].Data {
			out = append(out, r[2:])
		}
		return out
	}
	if d := cmp.Diff(params(want), params(got)); d != "" {
		t.Errorf("item_parameter (-6.0.14 +Peregrine):\n%s", d)
	}
	if d := cmp.Diff(want["item_parameter"].Fields, got["item_parameter"].Fields); d != "" {
		t.Errorf("item_parameter fields:\n%s", d)
	}
	if c, a := got["config"].Data[0], got["config_autoreg_tls"].Data[0]; c[5] != float64(3) || a[1] != "ar-id" || a[2] != "0123456789abcdef0123456789abcdef" {
		t.Errorf("autoregistration settings: config %v config_autoreg_tls %v", c, a)
	}
	// Every table 6.0 sends, with its fields in 6.0's order.
	for name, tb := range want {
		if d := cmp.Diff(tb.Fields, got[name].Fields); d != "" {
			t.Errorf("table %s fields (-6.0.14 +Peregrine):\n%s", name, d)
		}
	}
}

// setProxy creates proxy p (setting its ID) and puts host behind it.
func setProxy(t *testing.T, cat *catalog.Catalog, p *catalog.Proxy, host uint64) {
	t.Helper()
	_, err := cat.Edit(context.Background(), func(e *catalog.Edit) error {
		ids, err := e.CreateProxies([]catalog.Proxy{{Name: p.Name, Status: p.Status, TLS: catalog.DefaultHostTLS}})
		if err != nil {
			return err
		}
		p.ID = ids[0]
		return e.SetHostsProxy([]uint64{host}, p.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationRealProxyItemTypes: the real zabbix_proxy 6.0 takes an
// HTTP agent item and a script item (with its parameters) from
// Peregrine's configuration, runs them, and their values reach
// Peregrine's history.
func TestIntegrationRealProxyItemTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	testutil.ProxyBinary(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"q":%q,"h":%q}`, r.URL.Query().Get("a"), r.Header.Get("X-A"))
	}))
	defer web.Close()
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "px-host", Groups: []string{"Test"}, Items: []catalog.ItemSpec{
		{Key: "px.http", Type: "http_agent", ValueType: "text", Delay: "2s",
			HTTPSpec: catalog.HTTPSpec{URL: web.URL + "/x", QueryFields: []catalog.HTTPField{{Name: "a", Value: "{$QA}"}},
				Headers: []catalog.HTTPField{{Name: "X-A", Value: "hv"}}}},
		{Key: "px.script", Type: "script", ValueType: "text", Delay: "2s", Params: "var p = JSON.parse(value); return p.p1 + '-' + p.p2;",
			Parameters: []catalog.ItemParam{{Name: "p1", Value: "one"}, {Name: "p2", Value: "{$QA}"}}},
	}, Macros: []catalog.MacroSpec{{Macro: "{$QA}", Value: "qv"}}}}}
	ts := startTrapper(t, spec, nil)
	addProxy(t, ts, "px-types")
	testutil.StartProxy(t, testutil.ProxyOptions{Name: "px-types", Server: ts.addr, Extra: []string{"StartHTTPPollers=1"}})
	deadline := time.Now().Add(60 * time.Second)
	for {
		h, s := ts.read(t, "px-host", "px.http"), ts.read(t, "px-host", "px.script")
		if len(h) > 0 && len(s) > 0 {
			if h[0].S != `{"q":"qv","h":"hv"}` || s[0].S != "one-qv" {
				t.Fatalf("values: http %+v script %+v", h[0], s[0])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("values did not arrive: http %v script %v\n%s", h, s, ts.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestIntegrationRealProxyAutoregPSK: the real zabbix_proxy applies the
// autoregistration encryption policy Peregrine sends it (config's
// autoreg_tls_accept, config_autoreg_tls): with PSK only, an agent
// registering through it under the autoregistration key is forwarded
// (tls_accepted 2), an unencrypted one is not.
func TestIntegrationRealProxyAutoregPSK(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	if !zbxpsk.Available {
		t.Skip("TLS with pre-shared keys is not in this build (cgo and OpenSSL)")
	}
	testutil.ProxyBinary(t)
	testutil.Need(t, "zabbix_agentd", "zabbix-agent")
	testutil.Need(t, "zabbix_agent2", "zabbix-agent2")
	const key = "8f2a6e0c4b1d3f5a7c9e0b2d4f6a8c1e"
	var mu sync.Mutex
	got := map[string]int{} // host -> tls_accepted
	ts := startTrapper(t, proxySpec(), func(o *Options) {
		o.AutoregSettings = func() catalog.AutoregSettings {
			return catalog.AutoregSettings{TLSAccept: 2, PSKIdentity: "ar-psk", PSK: key}
		}
		o.ProxyExtras = func(p *catalog.Proxy, autoReg, _ []byte) error {
			var rows []struct {
				Host        string `json:"host"`
				TLSAccepted int    `json:"tls_accepted"`
			}
			if err := json.Unmarshal(autoReg, &rows); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rows {
				got[r.Host] = r.TLSAccepted
			}
			return nil
		}
	})
	addProxy(t, ts, "px-ar")
	px := testutil.StartProxy(t, testutil.ProxyOptions{Name: "px-ar", Server: ts.addr})
	// Start the agents once the proxy has its configuration (it answers
	// a sender then): before, it knows no policy.
	deadline := time.Now().Add(60 * time.Second)
	for testutil.RunSender(t, px.Addr, "-s", "px-host", "-k", "px.trap", "-o", "1").Processed != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the proxy never took its configuration\n%s", ts.logs.String())
		}
		time.Sleep(time.Second)
	}
	testutil.StartActiveAgent(t, testutil.Agentd, testutil.ActiveAgentOptions{ServerActive: px.Addr, Hostname: "ar-plain", HostMetadata: "linux"})
	testutil.StartActiveAgent(t, testutil.Agent2, testutil.ActiveAgentOptions{ServerActive: px.Addr, Hostname: "ar-psk-good",
		HostMetadata: "linux", Extra: []string{"TLSConnect=psk", "TLSPSKIdentity=ar-psk", "TLSPSKFile=" + testutil.WritePSK(t, key)}})
	for {
		mu.Lock()
		tls, ok := got["ar-psk-good"]
		mu.Unlock()
		if ok {
			if tls != 2 {
				t.Fatalf("ar-psk-good registered with tls_accepted %d, want 2 (PSK)", tls)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the PSK agent's registration never came through the proxy: %v\n%s", got, ts.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // the plain agent asked at the same time
	mu.Lock()
	defer mu.Unlock()
	if _, ok := got["ar-plain"]; ok {
		t.Fatalf("the proxy forwarded an unencrypted registration although the policy is PSK only: %v", got)
	}
}
