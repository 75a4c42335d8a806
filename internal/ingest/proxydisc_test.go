package ingest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestProxyConfigDRules: the enabled discovery rules of a proxy go in
// its configuration's drules and dchecks tables as the 6.0.14 server
// sends them (recorded from 6.0.14:
// testdata/proxy_config_drules_zabbix60.json, see
// testdata/proxy_discovery_zabbix60.md): fields, types and order; a
// disabled rule, the server's rules and another proxy's are left out.
// A delay that is a global macro is sent expanded (6.0 sends it as is
// with the macro in globalmacro, which Peregrine sends empty).
func TestProxyConfigDRules(t *testing.T) {
	b, err := os.ReadFile("testdata/proxy_config_drules_zabbix60.json")
	if err != nil {
		t.Fatal(err)
	}
	var want configTables
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	ts := startTrapper(t, proxySpec(), func(o *Options) { o.DRules = o.Catalog.(*catalog.Catalog).DRules })
	pid := addProxy(t, ts, "proxydisc-proxy")
	other := addProxy(t, ts, "proxydisc-other")
	ctx := context.Background()
	if _, err := ts.cat.Edit(ctx, func(e *catalog.Edit) error {
		_, err := e.CreateMacros([]catalog.MacroFields{{Macro: "{$PROXYDISC_DELAY}", Value: "15s"}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// As on the peer: rule 32 with checks 86-88, 33 disabled, 34 with
	// the macro delay and check 90.
	ids, err := ts.cat.SaveDRules(ctx, []catalog.DRule{
		{Name: "proxydisc-rule", ProxyID: pid, IPRange: "127.0.0.77-78", Delay: "10s", Checks: []catalog.DCheck{
			{Type: catalog.DCheckAgent, Key: "system.uname", Ports: "10077", HostSource: 1},
			{Type: catalog.DCheckTCP, Ports: "10077-10078", HostSource: 1},
			{Type: catalog.DCheckHTTP, Ports: "10079", HostSource: 1}}},
		{Name: "proxydisc-rule2", ProxyID: pid, IPRange: "127.0.0.79", Delay: "{$PROXYDISC_DELAY}", Status: 1, Checks: []catalog.DCheck{
			{Type: catalog.DCheckTCP, Ports: "10077", HostSource: 1}}},
		{Name: "proxydisc-rule3", ProxyID: pid, IPRange: "127.0.0.80", Delay: "{$PROXYDISC_DELAY}", Checks: []catalog.DCheck{
			{Type: catalog.DCheckTCP, Ports: "10077", HostSource: 1}}},
		{Name: "the server's", IPRange: "127.0.0.81", Delay: "1h", Checks: []catalog.DCheck{{Type: catalog.DCheckTCP, Ports: "1", HostSource: 1}}},
		{Name: "another proxy's", ProxyID: other, IPRange: "127.0.0.82", Delay: "1h", Checks: []catalog.DCheck{{Type: catalog.DCheckTCP, Ports: "1", HostSource: 1}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got configTables
	if err := json.Unmarshal(request(t, ts.addr, []byte(`{"request":"proxy config","host":"proxydisc-proxy","version":"6.0.14"}`)), &got); err != nil {
		t.Fatal(err)
	}
	// Renumber the recorded IDs to ours.
	ruleID := map[float64]float64{32: float64(ids[0]), 34: float64(ids[2])}
	checkID := map[float64]float64{}
	for i, rec := range []float64{86, 87, 88} {
		checkID[rec] = float64(ts.cat.DRule(ids[0]).Checks[i].ID)
	}
	checkID[90] = float64(ts.cat.DRule(ids[2]).Checks[0].ID)
	for _, row := range want["drules"].Data {
		row[0] = ruleID[row[0].(float64)]
		if row[3] == "{$PROXYDISC_DELAY}" {
			row[3] = "15s"
		}
	}
	for _, row := range want["dchecks"].Data {
		row[0], row[1] = checkID[row[0].(float64)], ruleID[row[1].(float64)]
	}
	for _, tb := range []string{"drules", "dchecks"} {
		if d := cmp.Diff(want[tb], got[tb]); d != "" {
			t.Errorf("%s (-recorded from 6.0.14 +Peregrine):\n%s", tb, d)
		}
	}
}

// TestProxyDiscoveryFrame: the "proxy data" frame the real proxy 6.0.14
// sent with its discovery rows (recorded, compressed:
// testdata/proxy_discovery_up_zabbix60.hex) is taken, its discovery
// part handed to Options.ProxyExtras as sent, and acknowledged; an
// error of ProxyExtras refuses it, counted bad_part, or store_error
// when it wraps ErrProxyStore.
func TestProxyDiscoveryFrame(t *testing.T) {
	h, err := os.ReadFile("testdata/proxy_discovery_up_zabbix60.hex")
	if err != nil {
		t.Fatal(err)
	}
	frame, err := hex.DecodeString(strings.TrimSpace(string(h)))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := os.ReadFile("testdata/proxy_discovery_up_zabbix60.json")
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Discovery json.RawMessage `json:"discovery data"`
	}
	if err := json.Unmarshal(plain, &req); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []byte
	var fail error
	ts := startTrapper(t, proxySpec(), func(o *Options) {
		o.ProxyExtras = func(p *catalog.Proxy, autoReg, discovery []byte) error {
			mu.Lock()
			defer mu.Unlock()
			got = append([]byte(nil), discovery...)
			return fail
		}
	})
	addProxy(t, ts, "proxydisc-proxy")
	_, reply := roundTrip(t, ts.addr, frame)
	if string(reply) != `{"upload":"enabled","response":"success"}` {
		t.Fatalf("reply %s", reply)
	}
	mu.Lock()
	if !bytes.Equal(got, req.Discovery) {
		t.Fatalf("ProxyExtras got %s, want the recorded discovery part", got)
	}
	fail = errors.New("not rows")
	mu.Unlock()
	if _, reply = roundTrip(t, ts.addr, frame); !strings.Contains(string(reply), "failed") {
		t.Fatalf("reply %s, want failed", reply)
	}
	mu.Lock()
	fail = fmt.Errorf("proxy %q: %w: disk full", "proxydisc-proxy", ErrProxyStore)
	mu.Unlock()
	roundTrip(t, ts.addr, frame)
	for res, want := range map[string]float64{"ok": 1, "bad_part": 1, "store_error": 1} {
		if n := ts.metric(t, `peregrine_trapper_proxy_requests_total{kind="data",result="`+res+`"}`); n != want {
			t.Errorf("%s: %v, want %v", res, n, want)
		}
	}
}
