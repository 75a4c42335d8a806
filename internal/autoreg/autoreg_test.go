package autoreg

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

type fakeEvents struct {
	mu  sync.Mutex
	evs []event.Event
	id  uint64
}

func (f *fakeEvents) Commit(b *event.Batch) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range b.Events {
		f.id++
		b.Events[i].ID = f.id
		f.evs = append(f.evs, b.Events[i])
	}
	return nil
}

func openCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// setup makes a catalog with a group, a template and an enabled
// auto-registration action for metadata containing "linux".
func setup(t *testing.T, ops ...catalog.Operation) (*catalog.Catalog, uint64, uint64) {
	t.Helper()
	c := openCatalog(t)
	var g, tm uint64
	_, err := c.Edit(context.Background(), func(e *catalog.Edit) error {
		ids, err := e.CreateGroups([]string{"G", "Discovered"})
		if err != nil {
			return err
		}
		g = ids[0]
		hs, err := e.CreateHosts([]catalog.NewHost{{Host: "T", Template: true, GroupIDs: []uint64{g}}})
		tm = hs[0]
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) == 0 {
		ops = []catalog.Operation{{OperationType: catalog.OpAddHost}, {OperationType: catalog.OpAddToGroup, OpGroups: []uint64{g}},
			{OperationType: catalog.OpLinkTemplate, OpTemplates: []uint64{tm}}}
	}
	err = c.EditAlerts(context.Background(), func(cfg *catalog.AlertConfig) error {
		a := &catalog.Action{ID: cfg.NextID("action"), Name: "ar", EventSource: catalog.SourceAutoreg,
			Filter:     catalog.Filter{Conditions: []catalog.Condition{{ConditionType: catalog.CondHostMetadata, Operator: catalog.OpLike, Value: "linux", FormulaID: "A"}}},
			Operations: ops}
		cfg.Actions[a.ID] = a
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, g, tm
}

func drain(r *Registrar) {
	for {
		b := r.take()
		if len(b) == 0 {
			return
		}
		r.handle(context.Background(), b)
	}
}

// TestRegisterRules: 6.0.14's rules (recorded): an unknown host
// registers at every request, a known one only when its metadata (or,
// with HostInterface, its interface or port) changes; nothing without
// an enabled action.
func TestRegisterRules(t *testing.T) {
	c := openCatalog(t)
	ev := &fakeEvents{}
	r, err := New(Options{Catalog: c, Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	if r.Register(Request{Host: "h", HostMetadata: "linux"}) {
		t.Fatal("queued without an auto-registration action")
	}
	c, g, tm := setup(t)
	r, _ = New(Options{Catalog: c, Events: ev, DiscoveryGroup: func() uint64 { return g + 1 }})
	req := Request{Host: "h1", HostMetadata: "linux web", IP: "127.0.0.9", Port: 10051}
	for range 2 {
		if !r.Register(req) {
			t.Fatal("an unknown host registers at every request")
		}
	}
	if r.QueueLen() != 1 {
		t.Fatalf("queue %d: a host waiting is replaced, not added", r.QueueLen())
	}
	drain(r)
	h := c.Snapshot().Host("h1")
	if h == nil {
		t.Fatal("no host created")
	}
	if len(h.GroupIDs) != 2 || h.GroupIDs[0] != g || h.GroupIDs[1] != g+1 {
		t.Errorf("groups %v, want the operation's and the discovery group", h.GroupIDs)
	}
	if l := c.Snapshot().LinkedTemplates(h.ID); len(l) != 1 || l[0] != tm {
		t.Errorf("templates %v", l)
	}
	if f := h.Interfaces; len(f) != 1 || f[0].IP != "127.0.0.9" || f[0].Port != "10051" || !f[0].UseIP {
		t.Errorf("interfaces %+v", f)
	}
	if len(ev.evs) != 1 || ev.evs[0].Source != event.SourceAutoreg || ev.evs[0].Object != event.ObjectAutoreg || ev.evs[0].Value != 1 {
		t.Fatalf("events %+v", ev.evs)
	}
	if r.Register(req) {
		t.Error("a known host with the same details registered again")
	}
	req.Port = 10052
	if r.Register(req) {
		t.Error("a known host without HostInterface registered again for a port change (6.0 does not)")
	}
	req.HostMetadata = "linux db"
	if !r.Register(req) {
		t.Error("a known host's metadata change did not register")
	}
	drain(r)
	if id := ev.evs[len(ev.evs)-1].ObjectID; id != ev.evs[0].ObjectID {
		t.Errorf("autoreg host ID changed: %d then %d", ev.evs[0].ObjectID, id)
	}
	dns := Request{Host: "h2", HostMetadata: "linux", DNS: "h2.example", Flag: ConnDNS}
	r.Register(dns)
	drain(r)
	if f := c.Snapshot().Host("h2").Interfaces[0]; f.UseIP || f.DNS != "h2.example" || f.Port != "10050" {
		t.Errorf("DNS interface %+v", f)
	}
	r.Register(Request{Host: "h3", HostMetadata: "windows"})
	drain(r)
	if c.Snapshot().Host("h3") != nil {
		t.Error("h3 created, but no action matches")
	}
}

// TestQueueBound: past QueueSize hosts, requests are dropped and counted.
func TestQueueBound(t *testing.T) {
	c, _, _ := setup(t)
	r, _ := New(Options{Catalog: c, Events: &fakeEvents{}, QueueSize: 3})
	n := 0
	for _, h := range []string{"a", "b", "c", "d", "e"} {
		if r.Register(Request{Host: h, HostMetadata: "linux"}) {
			n++
		}
	}
	if n != 3 || r.m.dropped.Load() != 2 {
		t.Fatalf("queued %d, dropped %v", n, r.m.dropped.Load())
	}
}

// TestOperations: disable, remove from group, unlink, remove host.
func TestOperations(t *testing.T) {
	c, g, tm := setup(t)
	r, _ := New(Options{Catalog: c, Events: &fakeEvents{}})
	r.Register(Request{Host: "h", HostMetadata: "linux"})
	drain(r)
	err := c.EditAlerts(context.Background(), func(cfg *catalog.AlertConfig) error {
		for _, a := range cfg.Actions {
			a.Operations = []catalog.Operation{{OperationType: catalog.OpDisableHost}, {OperationType: catalog.OpUnlinkTemplate, OpTemplates: []uint64{tm}},
				{OperationType: catalog.OpAddToGroup, OpGroups: []uint64{g + 1}}, {OperationType: catalog.OpRemoveFromGroup, OpGroups: []uint64{g}}}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Register(Request{Host: "h", HostMetadata: "linux 2"})
	drain(r)
	h := c.Snapshot().Host("h")
	if h.Enabled || len(h.GroupIDs) != 1 || h.GroupIDs[0] != g+1 || len(c.Snapshot().LinkedTemplates(h.ID)) != 0 {
		t.Fatalf("host %+v templates %v", h, c.Snapshot().LinkedTemplates(h.ID))
	}
	c.EditAlerts(context.Background(), func(cfg *catalog.AlertConfig) error {
		for _, a := range cfg.Actions {
			a.Operations = []catalog.Operation{{OperationType: catalog.OpRemoveHost}}
		}
		return nil
	})
	r.Register(Request{Host: "h", HostMetadata: "linux 3"})
	drain(r)
	if c.Snapshot().Host("h") != nil {
		t.Fatal("host not removed")
	}
}

// TestMatches: like, not like, regular expressions, proxy.
func TestMatches(t *testing.T) {
	h := &Host{Request: Request{Host: "web-01", HostMetadata: "Linux x86_64", ProxyID: 7}}
	for _, tc := range []struct {
		c    catalog.Condition
		want bool
	}{
		{catalog.Condition{ConditionType: catalog.CondHostMetadata, Operator: catalog.OpLike, Value: "Linux"}, true},
		{catalog.Condition{ConditionType: catalog.CondHostMetadata, Operator: catalog.OpLike, Value: "linux"}, false},
		{catalog.Condition{ConditionType: catalog.CondHostMetadata, Operator: catalog.OpNotLike, Value: "Windows"}, true},
		{catalog.Condition{ConditionType: catalog.CondHostName, Operator: catalog.OpRegexp, Value: `^web-\d+$`}, true},
		{catalog.Condition{ConditionType: catalog.CondHostName, Operator: catalog.OpNotRegexp, Value: `^web`}, false},
		{catalog.Condition{ConditionType: catalog.CondHostName, Operator: catalog.OpRegexp, Value: `((`}, false},
		{catalog.Condition{ConditionType: catalog.CondProxy, Operator: catalog.OpEqual, Value: "7"}, true},
		{catalog.Condition{ConditionType: catalog.CondProxy, Operator: catalog.OpNotEqual, Value: "7"}, false},
	} {
		tc.c.FormulaID = "A"
		a := &catalog.Action{Filter: catalog.Filter{Conditions: []catalog.Condition{tc.c}}}
		if got := Matches(a, h, nil); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.c, got, tc.want)
		}
	}
}

// TestProxyShare: a proxy flooding registrations with random names
// fills only its share of the queue; agents talking to the server and
// other proxies still queue, and the drops are counted.
func TestProxyShare(t *testing.T) {
	c, _, _ := setup(t)
	r, _ := New(Options{Catalog: c, Events: &fakeEvents{}, QueueSize: 100, MaxPerProxy: 10})
	for i := range 1000 {
		r.Register(Request{Host: fmt.Sprintf("flood-%d", i), HostMetadata: "linux", ProxyID: 7})
	}
	if r.QueueLen() != 10 || r.m.proxyDropped.Load() != 990 {
		t.Fatalf("queue %d, dropped %d: want the proxy's share, 10", r.QueueLen(), r.m.proxyDropped.Load())
	}
	if !r.Register(Request{Host: "direct", HostMetadata: "linux"}) || !r.Register(Request{Host: "other-proxy", HostMetadata: "linux", ProxyID: 8}) {
		t.Fatal("a direct agent or another proxy's agent could not queue during the flood")
	}
	drain(r)
	if c.Snapshot().Host("direct") == nil || c.Snapshot().Host("other-proxy") == nil {
		t.Fatal("hosts not created")
	}
	// Its share is free again once taken.
	if !r.Register(Request{Host: "flood-again", HostMetadata: "linux", ProxyID: 7}) {
		t.Fatal("the proxy's share was not freed")
	}
}

// TestProxyHostMonitored: a host registered through a proxy is created
// monitored by that proxy, as 6.0 does; through a proxy deleted since,
// by the server.
func TestProxyHostMonitored(t *testing.T) {
	c, _, _ := setup(t)
	var pid uint64
	if _, err := c.Edit(context.Background(), func(e *catalog.Edit) error {
		ids, err := e.CreateProxies([]catalog.Proxy{{Name: "ar-proxy", Status: catalog.ProxyActive, TLS: catalog.DefaultHostTLS}})
		if err == nil {
			pid = ids[0]
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r, _ := New(Options{Catalog: c, Events: &fakeEvents{}})
	r.Register(Request{Host: "behind", HostMetadata: "linux", ProxyID: pid})
	r.Register(Request{Host: "behind-gone", HostMetadata: "linux", ProxyID: pid + 100})
	drain(r)
	if h := c.Snapshot().Host("behind"); h == nil || h.ProxyID != pid {
		t.Fatalf("host %+v, want monitored by proxy %d", h, pid)
	}
	if h := c.Snapshot().Host("behind-gone"); h == nil || h.ProxyID != 0 {
		t.Fatalf("host %+v, want created, monitored by the server", h)
	}
}
