package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

func proxySpec() catalog.Spec {
	return catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "px-host", Groups: []string{"Test"}, Items: []catalog.ItemSpec{
			{Key: "px.trap", ValueType: "unsigned"},
			{Key: "agent.ping", Type: "zabbix_agent_active", ValueType: "unsigned", Delay: "1s"},
		}},
		{Host: "direct-host", Groups: []string{"Test"}, Items: []catalog.ItemSpec{{Key: "px.trap", ValueType: "unsigned"}}},
	}}
}

// addProxy creates an active proxy monitoring px-host.
func addProxy(t testing.TB, ts *testServer, name string) uint64 {
	t.Helper()
	var id uint64
	_, err := ts.cat.Edit(context.Background(), func(e *catalog.Edit) error {
		ids, err := e.CreateProxies([]catalog.Proxy{{Name: name, Status: catalog.ProxyActive, TLS: catalog.DefaultHostTLS, AutoCompress: true}})
		if err != nil {
			return err
		}
		id = ids[0]
		return e.SetHostsProxy([]uint64{ts.cat.Snapshot().Host("px-host").ID}, id)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

const sess = "0123456789abcdef0123456789abcdef"

func proxyData(name, session, version string, rows ...string) []byte {
	return []byte(fmt.Sprintf(`{"request":"proxy data","host":%q,"session":%q,"version":%q,"history data":[%s],"clock":1,"ns":1}`,
		name, session, version, strings.Join(rows, ",")))
}

// TestProxyData: history rows keep the proxy's timestamps, a resent row
// is stored once, unknown items and other hosts' items are counted as
// failed, and the refusals recorded from 6.0.14 keep their words.
func TestProxyData(t *testing.T) {
	ts := startTrapper(t, proxySpec(), nil)
	pid := addProxy(t, ts, "px1")
	trap := ts.item(t, "px-host", "px.trap").ID
	other := ts.item(t, "direct-host", "px.trap").ID
	row := func(id, item uint64, clock int64, v string) string {
		return fmt.Sprintf(`{"id":%d,"itemid":%d,"clock":%d,"ns":5,"value":%q}`, id, item, clock, v)
	}
	for _, tc := range []struct {
		payload []byte
		want    string
	}{
		{proxyData("px1", sess, "6.0.14", row(1, trap, 1700000000, "7"), row(2, 999999, 1700000001, "1"), row(3, other, 1700000002, "1")), `{"upload":"enabled","response":"success"}`},
		{proxyData("px1", sess, "6.0.14", row(1, trap, 1700000000, "7"), row(4, trap, 1700000003, "8")), `{"upload":"enabled","response":"success"}`},
		{proxyData("nosuch", sess, "6.0.14"), `{"response":"failed","info":"proxy \"nosuch\" not found"}`},
		{proxyData("px1", "bb", "6.0.14", row(9, trap, 1700000009, "9")), `{"response":"failed","info":"invalid session token length 2"}`},
		{proxyData("px1", sess, "7.0.0", row(9, trap, 1700000009, "9")), `"response":"failed"`},
		{proxyData("px1", sess, "6.0.14", `"garbage"`), `"response":"failed"`},
		{[]byte(`{"request":"proxy data","host":"px1","session":"` + sess + `","version":"6.0.14","auto registration":[{"host":"new"}]}`), `{"upload":"enabled","response":"success"}`},
		{[]byte(`{"request":"proxy heartbeat","host":"px1","version":"6.0.14"}`), `{"response":"success"}`},
	} {
		if got := string(request(t, ts.addr, tc.payload)); !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.payload, got, tc.want)
		}
	}
	got := ts.read(t, "px-host", "px.trap")
	if len(got) != 2 || got[0].Clock != 1700000000 || got[0].NS != 5 || got[1].Clock != 1700000003 {
		t.Fatalf("stored: %+v", got)
	}
	if n := len(ts.read(t, "direct-host", "px.trap")); n != 0 {
		t.Fatalf("a value for a host the proxy does not monitor was stored")
	}
	if ts.srv.ProxyLastAccess(pid) == 0 {
		t.Fatal("no lastaccess")
	}
	if ts.metric(t, `peregrine_trapper_values_failed_total{reason="duplicate"}`) != 1 ||
		ts.metric(t, `peregrine_trapper_values_failed_total{reason="unknown_item"}`) != 2 ||
		ts.metric(t, `peregrine_trapper_proxy_requests_total{kind="data",result="unknown_proxy"}`) != 1 ||
		ts.metric(t, `peregrine_trapper_proxy_unprocessed_parts_total`) != 1 {
		t.Fatalf("metrics")
	}
	// A sender may not feed a host behind a proxy.
	if got := string(request(t, ts.addr, []byte(`{"request":"sender data","data":[{"host":"px-host","key":"px.trap","value":"1"}]}`))); !strings.Contains(got, "failed: 1") {
		t.Fatalf("sender to a proxied host: %s", got)
	}
}

// TestProxyConfig: the reply has 6.0's tables and the proxy's host
// and items only.
func TestProxyConfig(t *testing.T) {
	ts := startTrapper(t, proxySpec(), nil)
	addProxy(t, ts, "px1")
	var cfg map[string]struct {
		Fields []string
		Data   [][]any
	}
	if err := json.Unmarshal(request(t, ts.addr, []byte(`{"request":"proxy config","host":"px1","version":"6.0.14"}`)), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg["hosts"].Data) != 1 || cfg["hosts"].Data[0][1] != "px-host" || len(cfg["items"].Data) != 2 || len(cfg["items"].Fields) != 41 {
		t.Fatalf("config: %+v", cfg)
	}
}

// TestIntegrationRealProxy: the real zabbix_proxy 6.0 takes its
// configuration from Peregrine, and the values of zabbix_sender and of
// an active zabbix_agentd it collects reach history with its
// timestamps.
func TestIntegrationRealProxy(t *testing.T) {
	testutil.ProxyBinary(t)
	ts := startTrapper(t, proxySpec(), nil)
	pid := addProxy(t, ts, "px-real")
	px := testutil.StartProxy(t, testutil.ProxyOptions{Name: "px-real", Server: ts.addr})
	// The proxy answers a sender only once it has its configuration.
	before := time.Now().Unix()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := testutil.RunSender(t, px.Addr, "-s", "px-host", "-k", "px.trap", "-o", "42")
		if r.Processed == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy never accepted the sender's value: %+v\n%s", r, ts.logs.String())
		}
		time.Sleep(time.Second)
	}
	// The agent starts once the proxy knows its host: asked before, the
	// proxy answers "host [px-host] not found" and the agent asks again
	// only at its next refresh, which on a loaded machine came after the
	// deadline (a CI run).
	testutil.StartActiveAgent(t, testutil.Agentd, testutil.ActiveAgentOptions{ServerActive: px.Addr, Hostname: "px-host"})
	deadline = time.Now().Add(60 * time.Second)
	for {
		trap, ping := ts.read(t, "px-host", "px.trap"), ts.read(t, "px-host", "agent.ping")
		if len(trap) == 1 && len(ping) > 0 {
			if trap[0].Clock < before || trap[0].Clock > time.Now().Unix() {
				t.Fatalf("the proxy's timestamp was not kept: %+v", trap[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("values did not arrive: trap %v ping %v\n%s", trap, ping, ts.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if ts.srv.ProxyLastAccess(pid) < before {
		t.Fatal("lastaccess not set")
	}
}

// TestIntegrationRealProxyWebScenario: the real zabbix_proxy 6.0 takes a
// web scenario of its host from Peregrine's configuration (6.0's
// httptest tables), runs it against a local site (a cookie set by step
// 1 checked by step 2) and its values reach history.
func TestIntegrationRealProxyWebScenario(t *testing.T) {
	testutil.ProxyBinary(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s5", Path: "/"})
			w.Write([]byte(`token="T42"`))
			return
		}
		if c, err := r.Cookie("session"); err != nil || c.Value != "s5" || r.URL.Query().Get("t") != "T42" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Write([]byte("Welcome"))
	}))
	defer site.Close()
	ts := startTrapper(t, proxySpec(), nil)
	addProxy(t, ts, "px-web")
	_, err := ts.cat.Edit(context.Background(), func(e *catalog.Edit) error {
		sc := catalog.HTTPTest{HostID: ts.cat.Snapshot().Host("px-host").ID, Name: "site", HTTPTestFields: catalog.DefaultHTTPTestFields}
		sc.Delay = "5s"
		sc.Steps = []catalog.HTTPStep{
			{Name: "login", No: 1, URL: site.URL + "/login", Timeout: "15s", FollowRedirects: 1, StatusCodes: "200",
				Variables: []catalog.HTTPField{{Name: "{t}", Value: `regex:token="([^"]+)"`}}},
			{Name: "home", No: 2, URL: site.URL + "/home", Timeout: "15s", FollowRedirects: 1, Required: "Welcome",
				QueryFields: []catalog.HTTPField{{Name: "t", Value: "{t}"}}},
		}
		_, err := e.CreateHTTPTests([]catalog.HTTPTest{sc})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	testutil.StartProxy(t, testutil.ProxyOptions{Name: "px-web", Server: ts.addr, HTTPPollers: 1})
	deadline := time.Now().Add(90 * time.Second)
	for {
		fail, code := ts.read(t, "px-host", "web.test.fail[site]"), ts.read(t, "px-host", "web.test.rspcode[site,home]")
		if len(fail) > 0 && len(code) > 0 {
			if fail[0].U != 0 || code[0].U != 200 {
				t.Fatalf("web.test.fail %+v, rspcode %+v", fail[0], code[0])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no web scenario values from the proxy\n%s", ts.logs.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}
