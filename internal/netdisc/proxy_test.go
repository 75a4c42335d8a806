package netdisc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// proxyRows reads a "proxy data" request recorded from the real
// zabbix_proxy 6.0.14 (../ingest/testdata/proxy_discovery_zabbix60.md)
// and returns its discovery rows with the recorded rule 32 and checks
// 86, 87, 88 renumbered to rule and checks.
func proxyRows(t *testing.T, file string, rule uint64, checks []uint64) []ProxyResult {
	t.Helper()
	b, err := os.ReadFile("../ingest/testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Discovery json.RawMessage `json:"discovery data"`
	}
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	rows, err := DecodeProxyResults(req.Discovery)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if rows[i].DRule != 32 {
			t.Fatalf("row %d: rule %d, want the recorded 32", i, rows[i].DRule)
		}
		rows[i].DRule = rule
		if rows[i].DCheck != 0 {
			rows[i].DCheck = checks[rows[i].DCheck-86]
		}
	}
	return rows
}

type evKey struct {
	object uint8
	svc    int // 0 the host, else the service's order of creation
	value  uint8
	clock  int64
}

// shape turns events into evKeys, numbering services by first sight.
func shape(evs []event.Event) []evKey {
	svc := map[uint64]int{}
	var out []evKey
	for _, e := range evs {
		k := evKey{object: e.Object, value: e.Value, clock: e.Clock}
		if e.Object == ObjectDService {
			if svc[e.ObjectID] == 0 {
				svc[e.ObjectID] = len(svc) + 1
			}
			k.svc = svc[e.ObjectID]
		}
		out = append(out, k)
	}
	return out
}

// failingEvents fails its first Commit when fail is set, and keeps
// every event it took for Events, as the event store does.
type failingEvents struct {
	events
	fail bool
	all  []event.Event
}

func (f *failingEvents) Commit(b *event.Batch) error {
	if f.fail {
		f.fail = false
		return errors.New("disk full")
	}
	f.mu.Lock()
	f.all = append(f.all, b.Events...)
	f.mu.Unlock()
	return f.events.Commit(b)
}

func (f *failingEvents) Events(keep func(*event.Event) bool) []event.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []event.Event
	for i := range f.all {
		if keep(&f.all[i]) {
			out = append(out, f.all[i])
		}
	}
	return out
}

func proxyFixture(t *testing.T) (*catalog.Catalog, uint64, uint64, []uint64) {
	t.Helper()
	ctx := context.Background()
	c := openCatalog(t)
	var pid uint64
	if _, err := c.Edit(ctx, func(e *catalog.Edit) error {
		ids, err := e.CreateProxies([]catalog.Proxy{{Name: "proxydisc-proxy", Status: catalog.ProxyActive, TLS: catalog.DefaultHostTLS}})
		if err == nil {
			pid = ids[0]
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ids, err := c.SaveDRules(ctx, []catalog.DRule{{Name: "through the proxy", ProxyID: pid, IPRange: "127.0.0.77-78", Delay: "10s", Checks: []catalog.DCheck{
		{Type: catalog.DCheckAgent, Key: "system.uname", Ports: "10077", HostSource: 1},
		{Type: catalog.DCheckTCP, Ports: "10077-10078", HostSource: 1},
		{Type: catalog.DCheckHTTP, Ports: "10079", HostSource: 1},
	}}, {Name: "the server's", IPRange: "127.0.0.1", Delay: "1h", Checks: []catalog.DCheck{{Type: catalog.DCheckTCP, Ports: "1", HostSource: 1}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := c.DRule(ids[0])
	return c, pid, ids[0], []uint64{r.Checks[0].ID, r.Checks[1].ID, r.Checks[2].ID}
}

// TestApplyProxyRecorded replays what the real proxy 6.0.14 sent and
// expects the events the real server made of it (recorded from 6.0.14:
// ../ingest/testdata/proxy_discovery_zabbix60.md), with the rows'
// clocks; a resend (also after a restart) makes nothing twice; an
// action with the proxy condition creates the host monitored by the
// proxy.
func TestApplyProxyRecorded(t *testing.T) {
	ctx := context.Background()
	c, pid, rule, checks := proxyFixture(t)
	err := c.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		id := cfg.NextID("action")
		cfg.Actions[id] = &catalog.Action{ID: id, Name: "through proxy", EventSource: catalog.SourceDiscovery, Period: "1h",
			Filter: catalog.Filter{Conditions: []catalog.Condition{
				{ConditionType: catalog.CondProxy, Operator: catalog.OpEqual, Value: itoa(pid)},
				{ConditionType: catalog.CondDStatus, Operator: catalog.OpEqual, Value: "2"}}},
			Operations: []catalog.Operation{{OperationType: catalog.OpAddHost, StepFrom: 1, StepTo: 1}}}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ev := &failingEvents{}
	d, err := New(Options{Catalog: c, Events: ev, DiscoveryGroup: func() uint64 { return 5 }})
	if err != nil {
		t.Fatal(err)
	}
	up := proxyRows(t, "proxy_discovery_up_zabbix60.json", rule, checks)
	const t0 = 1795981852
	// A store failure: an error, nothing marked taken.
	ev.fail = true
	if _, err := d.ApplyProxy(ctx, pid, up); err == nil {
		t.Fatal("a failed event commit was not reported")
	}
	st, err := d.ApplyProxy(ctx, pid, up)
	if err != nil {
		t.Fatal(err)
	}
	want := []evKey{{2, 1, 2, t0}, {1, 0, 2, t0}, {2, 1, 0, t0}, {2, 2, 2, t0}, {2, 2, 0, t0}, {1, 0, 0, t0}}
	got := ev.take()
	if !slices.Equal(shape(got), want) {
		t.Fatalf("events %+v, want (recorded from 6.0.14) %+v", shape(got), want)
	}
	if st.Hosts != 1 || st.Events != 6 {
		t.Fatalf("stats %+v", st)
	}
	h := c.Snapshot().Host("127.0.0.77")
	if h == nil || h.ProxyID != pid || len(h.Interfaces) != 1 || h.Interfaces[0].Port != "10077" {
		t.Fatalf("host created by the action: %+v, want monitored by proxy %d with an agent interface on 10077", h, pid)
	}
	svcs := c.Discovery().Services
	if len(svcs) != 2 {
		t.Fatalf("%d services, want 2", len(svcs))
	}
	for _, s := range svcs {
		if s.LastUp != t0 || s.IP != "127.0.0.77" {
			t.Fatalf("service %+v: want up since the proxy's clock", s)
		}
	}
	// The same request again (the proxy did not get the reply).
	st, err = d.ApplyProxy(ctx, pid, up)
	if err != nil || len(ev.take()) != 0 || st.Resent < 5 {
		t.Fatalf("resend: %+v, %v; want nothing made again", st, err)
	}
	// And after a restart.
	d2, _ := New(Options{Catalog: c, Events: ev})
	if st, err = d2.ApplyProxy(ctx, pid, up); err != nil || len(ev.take()) != 0 {
		t.Fatalf("resend after a restart: %+v, %v", st, err)
	}
	// The next sweep, split by the proxy before the host row.
	next := slices.Clone(up)
	for i := range next {
		next[i].Clock += 10
	}
	if _, err := d.ApplyProxy(ctx, pid, next[:4]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ApplyProxy(ctx, pid, next[4:]); err != nil {
		t.Fatal(err)
	}
	want = []evKey{{2, 1, 0, t0 + 10}, {2, 2, 0, t0 + 10}, {1, 0, 0, t0 + 10}}
	if got := shape(ev.take()); !slices.Equal(got, want) {
		t.Fatalf("next sweep: %+v, want %+v", got, want)
	}
	// Resent after a restart: a sweep that changed no status is known
	// by its events' clocks.
	d3, _ := New(Options{Catalog: c, Events: ev})
	if st, err = d3.ApplyProxy(ctx, pid, next); err != nil || len(ev.take()) != 0 {
		t.Fatalf("a resent sweep without changes after a restart: %+v, %v; want nothing made again", st, err)
	}
	lost := proxyRows(t, "proxy_discovery_lost_zabbix60.json", rule, checks)
	if _, err := d.ApplyProxy(ctx, pid, lost); err != nil {
		t.Fatal(err)
	}
	const t1 = 1795981972
	want = []evKey{{2, 1, 3, t1}, {2, 1, 1, t1}, {2, 2, 3, t1}, {2, 2, 1, t1}, {1, 0, 3, t1}, {1, 0, 1, t1}}
	if got := shape(ev.take()); !slices.Equal(got, want) {
		t.Fatalf("lost: %+v, want (recorded from 6.0.14) %+v", got, want)
	}
}

// TestApplyProxyBadRows: rows of unknown rules or checks, of the
// server's or another proxy's rules, and malformed ones are refused and
// counted; the others are taken. A part that is not rows is an error.
func TestApplyProxyBadRows(t *testing.T) {
	ctx := context.Background()
	c, pid, rule, checks := proxyFixture(t)
	ev := &events{}
	d, _ := New(Options{Catalog: c, Events: ev})
	server := c.DRules()[len(c.DRules())-1]
	if server.ProxyID != 0 {
		t.Fatal("fixture: the last rule is the server's")
	}
	rows := []ProxyResult{
		{Clock: 5, DRule: 99999, DCheck: checks[0], IP: "127.0.0.77", Port: 10077},
		{Clock: 5, DRule: server.ID, DCheck: server.Checks[0].ID, IP: "127.0.0.1", Port: 1},
		{Clock: 5, DRule: rule, DCheck: 99999, IP: "127.0.0.77", Port: 10077},
		{Clock: 5, DRule: rule, DCheck: checks[1], IP: "not an address", Port: 10077},
		{Clock: -1, DRule: rule, DCheck: checks[1], IP: "127.0.0.77", Port: 10077},
		{Clock: 5, DRule: rule, DCheck: checks[1], IP: "127.0.0.77", Port: 10077, Status: 7},
		{Clock: 5, DRule: rule, DCheck: checks[1], IP: "127.0.0.77", Port: 10077},
		{Clock: 5, DRule: rule, IP: "127.0.0.77"},
	}
	st, err := d.ApplyProxy(ctx, pid, rows)
	if err != nil {
		t.Fatal(err)
	}
	wantRefused := map[string]int{RefusedUnknownRule: 1, RefusedNotItsRule: 1, RefusedUnknownCheck: 1, RefusedMalformed: 3}
	if st.Taken != 2 || !mapsEqual(st.Refused, wantRefused) {
		t.Fatalf("stats %+v, want 2 taken and refused %v", st, wantRefused)
	}
	if st, _ := d.ApplyProxy(ctx, pid+1, rows[6:]); st.Refused[RefusedNotItsRule] != 2 {
		t.Fatalf("another proxy's rows: %+v", st)
	}
	for _, bad := range []string{`{"not":"rows"}`, `[{"clock":"x"}]`, `[{"drule":-1}]`} {
		if _, err := DecodeProxyResults([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	if rows, err := DecodeProxyResults([]byte(`[{"drule":1,"ip":"127.0.0.1"}]`)); err != nil || rows[0].Clock != -1 {
		t.Fatalf("a row without a clock: %+v, %v; want it refused as malformed", rows, err)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
