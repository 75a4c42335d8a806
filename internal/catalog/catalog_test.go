package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// openTemp opens a catalog in a fresh temporary directory and closes it
// when the test ends.
func openTemp(t testing.TB) (*Catalog, string) {
	t.Helper()
	if b := pgFor(t); b != nil {
		return b.open(t)
	}
	path := filepath.Join(t.TempDir(), "catalog.db")
	c, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, path
}

func mustApply(t testing.TB, c *Catalog, s Spec) ApplyResult {
	t.Helper()
	res, err := c.Apply(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// testSpec has two groups, two hosts, every value type and several item
// types, and relies on defaults for most fields.
func testSpec() Spec {
	return Spec{
		Groups: []GroupSpec{{Name: "Linux servers"}, {Name: "Network"}},
		Hosts: []HostSpec{
			{
				Host: "web-01", Name: "Web server 1", Groups: []string{"Linux servers", "Web"},
				Interfaces: []InterfaceSpec{{IP: "127.0.0.1"}},
				Items: []ItemSpec{
					{Key: "app.requests", ValueType: "unsigned", Units: "req"},
					{Key: "app.latency", Units: "s"},
					{Key: "app.version", ValueType: "character"},
					{Key: `log[/var/log/app.log,"ERROR"]`, Type: "zabbix_agent_active", ValueType: "log", Delay: "30s"},
					{Key: "system.uname", Type: "zabbix_agent", ValueType: "text", Delay: "1h", History: "7d"},
					{Key: "system.cpu.load[all,avg1]", Type: "zabbix_agent", Name: "CPU load"},
					{Key: "zabbix[host,agent,available]", Type: "internal", ValueType: "uint", Status: "disabled"},
				},
			},
			{
				Host: "switch 1", Status: "disabled", Groups: []string{"Network"},
				Items: []ItemSpec{
					{Key: "net.if.in[ifHCInOctets.1]", Type: "snmp_agent", ValueType: "3", Units: "bps", History: "1w", Trends: "0", SNMPOID: "IF-MIB::ifHCInOctets.1"},
					{Key: "icmpping", Type: "simple", ValueType: "uint"},
					{Key: "web.page.get[example.com]", Type: "http_agent", ValueType: "text", Delay: "5m", HTTPSpec: HTTPSpec{URL: "http://example.com/"}},
					{Key: "check.sh[a,b]", Type: "10", ValueType: "str", Delay: "10m;50s/1-5,09:00-18:00"},
				},
			},
		},
	}
}

// view is a comparable copy of a snapshot: plain values, no back
// pointers.
type view struct {
	Version uint64
	Groups  []Group
	Hosts   []Host
	Items   map[string][]Item
	// Triggers, ascending by ID, as Snapshot.Triggers has them.
	Triggers []Trigger
	// Macros by ID; Templates by name; Links by owner.
	Macros    map[uint64]Macro
	Templates []Host
	Links     map[uint64][]uint64
	// TemplateTriggers ascending by ID.
	TemplateTriggers []Trigger
	Scopes           map[uint64]string // a probe of each owner's resolution
	Maints           []Maintenance
	// ValueMaps, ascending by ID.
	ValueMaps []ValueMap
}

func viewOf(s *Snapshot) view {
	v := view{Version: s.Version(), Items: map[string][]Item{}}
	for _, g := range s.Groups() {
		v.Groups = append(v.Groups, *g)
	}
	for _, h := range s.Hosts() {
		v.Hosts = append(v.Hosts, *h)
		for _, it := range h.Items() {
			c := *it
			c.Host = nil
			v.Items[h.Host] = append(v.Items[h.Host], c)
		}
	}
	v.Triggers = append(v.Triggers, s.Triggers()...)
	v.Macros = map[uint64]Macro{}
	for _, m := range append(s.AllMacros(), s.Macros(0)...) {
		v.Macros[m.ID] = *m
	}
	v.Links = map[uint64][]uint64{}
	for _, t := range s.Templates() {
		v.Templates = append(v.Templates, *t)
		for _, it := range t.Items() {
			c := *it
			c.Host = nil
			v.Items["template "+t.Host] = append(v.Items["template "+t.Host], c)
		}
		if l := s.LinkedTemplates(t.ID); len(l) > 0 {
			v.Links[t.ID] = l
		}
	}
	for _, h := range s.Hosts() {
		if l := s.LinkedTemplates(h.ID); len(l) > 0 {
			v.Links[h.ID] = l
		}
	}
	v.TemplateTriggers = append(v.TemplateTriggers, s.TemplateTriggers()...)
	v.Maints = s.Maintenances()
	v.Scopes = map[uint64]string{}
	ids := slices.Sorted(maps.Keys(v.Macros))
	for _, id := range ids {
		owner := v.Macros[id].HostID
		if _, done := v.Scopes[owner]; done {
			continue
		}
		sc := s.UserMacros(owner)
		v.Scopes[owner] = ""
		for _, o := range ids {
			r := v.Macros[o].Ref()
			val, _ := sc.UserMacro(r.Name, r.Context)
			v.Scopes[owner] += r.Key() + "=" + val + ";"
		}
	}
	v.ValueMaps = append(v.ValueMaps, s.ValueMaps()...)
	return v
}

var viewOpts = cmp.Options{cmpopts.IgnoreUnexported(Host{}, Item{}, Macro{}, TrapHosts{}), cmpopts.EquateEmpty()}

func diffViews(want, got *Snapshot) string {
	return cmp.Diff(viewOf(want), viewOf(got), viewOpts)
}

// diffMigrated is diffViews for a database downgraded to before schema
// version 7, which lost the items' snmp_oid.
func diffMigrated(want, got *Snapshot) string {
	noOID := cmp.Transformer("noOID", func(x *ItemExtra) ItemExtra {
		if x == nil {
			return ItemExtra{}
		}
		c := *x
		c.SNMPOID = ""
		return c
	})
	return cmp.Diff(viewOf(want), viewOf(got), viewOpts, noOID)
}

func TestOpenApplyReopen(t *testing.T) {
	c, path := openTemp(t)
	if s := c.Snapshot(); s == nil || s.ItemCount() != 0 || s.Version() != 0 || s.Lookup("web-01", "x") != nil {
		t.Fatalf("empty catalog: unexpected snapshot %+v", s)
	}
	res := mustApply(t, c, testSpec())
	want := ApplyResult{GroupsCreated: 3, HostsCreated: 2, ItemsCreated: 11}
	if res != want {
		t.Fatalf("Apply result %+v, want %+v", res, want)
	}
	s := c.Snapshot()
	if s.Version() != 1 || s.ItemCount() != 11 || s.HostCount() != 2 {
		t.Fatalf("version %d, %d items, %d hosts", s.Version(), s.ItemCount(), s.HostCount())
	}

	web := s.Host("web-01")
	if web == nil || web.Name != "Web server 1" || !web.Enabled || len(web.GroupIDs) != 2 {
		t.Fatalf("web-01: %+v", web)
	}
	if s.HostByID(web.ID) != web {
		t.Fatalf("HostByID(%d) is not Host(web-01)", web.ID)
	}
	sw := s.Host("switch 1")
	if sw == nil || sw.Name != "switch 1" || sw.Enabled {
		t.Fatalf("switch 1: %+v", sw)
	}
	if g := s.Group("Network"); g == nil || !slices.Equal(sw.GroupIDs, []uint64{g.ID}) || s.GroupByID(g.ID) != g {
		t.Fatalf("switch 1 groups %v, group Network %+v", sw.GroupIDs, g)
	}
	var names []string
	for _, g := range s.Groups() {
		names = append(names, g.Name)
	}
	if d := cmp.Diff([]string{"Linux servers", "Network", "Web"}, names); d != "" {
		t.Fatalf("groups (-want +got):\n%s", d)
	}
	names = nil
	for _, h := range s.Hosts() {
		names = append(names, h.Host)
	}
	if d := cmp.Diff([]string{"switch 1", "web-01"}, names); d != "" {
		t.Fatalf("hosts (-want +got):\n%s", d)
	}

	check := func(host, key string, want Item) {
		t.Helper()
		got := s.Lookup(host, key)
		if got == nil {
			t.Fatalf("Lookup(%q, %q) = nil", host, key)
		}
		if got.Host != s.Host(host) || got.HostID != got.Host.ID || s.Item(got.ID) != got || got.Host.Item(key) != got {
			t.Fatalf("Lookup(%q, %q): inconsistent back pointers or indexes: %+v", host, key, got)
		}
		want.ID, want.HostID, want.Host, want.Key = got.ID, got.HostID, got.Host, key
		if d := cmp.Diff(want, *got, cmpopts.IgnoreFields(Item{}, "Host"), cmpopts.IgnoreUnexported(Item{})); d != "" {
			t.Errorf("Lookup(%q, %q) (-want +got):\n%s", host, key, d)
		}
	}
	const d90, d365 = 90 * 86400, 365 * 86400
	agentIf := web.MainInterface(InterfaceAgent)
	if d := cmp.Diff([]Interface{{ID: agentIf.ID, HostID: web.ID, Type: InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.1", Port: "10050"}}, web.Interfaces); d != "" {
		t.Errorf("interfaces of web-01 (-want +got):\n%s", d)
	}
	check("web-01", "app.requests", Item{Name: "app.requests", Type: Trapper, ValueType: history.Uint, Units: "req",
		Delay: "0", History: "90d", Trends: "365d", HistorySeconds: d90, TrendsSeconds: d365, Enabled: true})
	check("web-01", "app.latency", Item{Name: "app.latency", Type: Trapper, ValueType: history.Float, Units: "s",
		Delay: "0", History: "90d", Trends: "365d", HistorySeconds: d90, TrendsSeconds: d365, Enabled: true})
	check("web-01", "app.version", Item{Name: "app.version", Type: Trapper, ValueType: history.Str,
		Delay: "0", History: "90d", Trends: "0", HistorySeconds: d90, Enabled: true})
	check("web-01", `log[/var/log/app.log,"ERROR"]`, Item{Name: `log[/var/log/app.log,"ERROR"]`, Type: ZabbixAgentActive,
		ValueType: history.Log, Delay: "30s", History: "90d", Trends: "0", HistorySeconds: d90, Enabled: true})
	check("web-01", "system.uname", Item{Name: "system.uname", Type: ZabbixAgent, ValueType: history.Text,
		Delay: "1h", History: "7d", Trends: "0", HistorySeconds: 7 * 86400, Enabled: true, InterfaceID: agentIf.ID})
	check("web-01", "system.cpu.load[all,avg1]", Item{Name: "CPU load", Type: ZabbixAgent, ValueType: history.Float,
		Delay: "1m", History: "90d", Trends: "365d", HistorySeconds: d90, TrendsSeconds: d365, Enabled: true, InterfaceID: agentIf.ID})
	check("web-01", "zabbix[host,agent,available]", Item{Name: "zabbix[host,agent,available]", Type: Internal,
		ValueType: history.Uint, Delay: "1m", History: "90d", Trends: "365d", HistorySeconds: d90, TrendsSeconds: d365})
	check("switch 1", "net.if.in[ifHCInOctets.1]", Item{
		Name:           "net.if.in[ifHCInOctets.1]",
		Type:           SNMPAgent,
		ValueType:      history.Uint,
		Units:          "bps",
		Delay:          "1m",
		History:        "1w",
		Trends:         "0",
		HistorySeconds: 7 * 86400,
		Enabled:        true,
		Extra:          &ItemExtra{SNMPOID: "IF-MIB::ifHCInOctets.1"},
	})
	check("switch 1", "icmpping", Item{Name: "icmpping", Type: SimpleCheck, ValueType: history.Uint,
		Delay: "1m", History: "90d", Trends: "365d", HistorySeconds: d90, TrendsSeconds: d365, Enabled: true})
	check("switch 1", "web.page.get[example.com]", Item{
		Name:           "web.page.get[example.com]",
		Type:           HTTPAgent,
		ValueType:      history.Text,
		Delay:          "5m",
		History:        "90d",
		Trends:         "0",
		HistorySeconds: d90,
		Enabled:        true,
		Extra:          &ItemExtra{HTTP: &HTTPItem{URL: "http://example.com/", StatusCodes: "200", FollowRedirects: true}},
	})
	check("switch 1", "check.sh[a,b]", Item{Name: "check.sh[a,b]", Type: External, ValueType: history.Str,
		Delay: "10m;50s/1-5,09:00-18:00", History: "90d", Trends: "0", HistorySeconds: d90, Enabled: true})

	for _, miss := range [][2]string{{"web-01", "nope"}, {"nope", "app.latency"}, {"switch 1", "app.latency"}, {"", ""}, {"web-01", "app.latency "}} {
		if it := s.Lookup(miss[0], miss[1]); it != nil {
			t.Errorf("Lookup(%q, %q) = %+v, want nil", miss[0], miss[1], it)
		}
	}
	if s.Host("nope") != nil || s.HostByID(0) != nil || s.Item(0) != nil || s.Item(1<<40) != nil || web.Item("nope") != nil {
		t.Error("unknown host, host ID, item ID or key found")
	}
	var keys []string
	for _, it := range web.Items() {
		keys = append(keys, it.Key)
	}
	if !slices.IsSorted(keys) || len(keys) != 7 || web.ItemCount() != 7 {
		t.Errorf("web-01 Items() not sorted by key or incomplete: %q", keys)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(context.Background(), testSpec()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Apply after Close: %v, want ErrClosed", err)
	}
	if c.Snapshot() != s {
		t.Fatal("Snapshot after Close is not the last snapshot")
	}
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if d := diffViews(s, c2.Snapshot()); d != "" {
		t.Fatalf("reopened snapshot differs (-before +after):\n%s", d)
	}
	if res := mustApply(t, c2, testSpec()); res.Changed() {
		t.Fatalf("re-applying after reopen changed something: %+v", res)
	}
}

func TestApplyIdempotentAndImmutable(t *testing.T) {
	c, _ := openTemp(t)
	sub := c.Subscribe()
	mustApply(t, c, testSpec())
	select {
	case <-sub:
	default:
		t.Fatal("no signal after the first Apply")
	}

	before := c.Snapshot()
	res := mustApply(t, c, testSpec())
	if want := (ApplyResult{Unchanged: 13}); res != want {
		t.Fatalf("second Apply: %+v, want %+v", res, want)
	}
	if c.Snapshot() != before {
		t.Fatal("an Apply that changed nothing swapped the snapshot")
	}
	select {
	case <-sub:
		t.Fatal("signal after an Apply that changed nothing")
	default:
	}

	oldItem := before.Lookup("web-01", "app.latency")
	spec := testSpec()
	spec.Hosts[0].Items[1].Units = "ms"
	spec.Hosts[0].Items[1].ValueType = "unsigned"
	res = mustApply(t, c, spec)
	if want := (ApplyResult{ItemsUpdated: 1, Unchanged: 12}); res != want {
		t.Fatalf("Apply with one changed item: %+v, want %+v", res, want)
	}
	select {
	case <-sub:
	default:
		t.Fatal("no signal after a changing Apply")
	}
	after := c.Snapshot()
	newItem := after.Lookup("web-01", "app.latency")
	if newItem.ID != oldItem.ID || newItem.Units != "ms" || newItem.ValueType != history.Uint {
		t.Fatalf("changed item: %+v (old ID %d)", newItem, oldItem.ID)
	}
	if after.Version() != before.Version()+1 {
		t.Fatalf("version %d after %d", after.Version(), before.Version())
	}
	// The old snapshot is untouched.
	if oldItem.Units != "s" || oldItem.ValueType != history.Float || before.Lookup("web-01", "app.latency") != oldItem {
		t.Fatalf("old snapshot changed: %+v", oldItem)
	}
	if oldItem.Host == newItem.Host || oldItem.Host != before.Host("web-01") {
		t.Fatal("old and new snapshots share a host, or the old back pointer moved")
	}
	// Every other item of the changed host is equal but distinct; the
	// items of hosts the Apply did not change are shared (derive).
	for _, h := range before.Hosts() {
		for _, it := range h.Items() {
			n := after.Item(it.ID)
			if (n == it) != (h.Host != "web-01") || n.Key != it.Key || (it.Key != "app.latency" && !n.sameConfig(it)) {
				t.Fatalf("item %d: old %+v new %+v", it.ID, it, n)
			}
		}
	}
}

func TestApplyHostChangesNoDeletes(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	s1 := c.Snapshot()
	web1 := s1.Host("web-01")

	// A spec naming web-01 with one item, new groups and a new status:
	// the host is updated, the item is unchanged, the other items and the
	// other host stay.
	res := mustApply(t, c, Spec{Hosts: []HostSpec{{
		Host: "web-01", Status: "disabled", Groups: []string{"Web", "Staging"},
		Items: []ItemSpec{{Key: "app.requests", ValueType: "unsigned", Units: "req"}},
	}}})
	if want := (ApplyResult{GroupsCreated: 1, HostsUpdated: 1, Unchanged: 1}); res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	s2 := c.Snapshot()
	web2 := s2.Host("web-01")
	if web2.ID != web1.ID || web2.Enabled || web2.Name != "web-01" {
		t.Fatalf("web-01 after update: %+v", web2)
	}
	wantGroups := []uint64{s2.Group("Web").ID, s2.Group("Staging").ID}
	slices.Sort(wantGroups)
	if !slices.Equal(web2.GroupIDs, wantGroups) {
		t.Fatalf("web-01 groups %v, want %v", web2.GroupIDs, wantGroups)
	}
	if web2.ItemCount() != 7 || s2.Host("switch 1") == nil || s2.ItemCount() != 11 || s2.Group("Linux servers") == nil {
		t.Fatal("Apply deleted something that was absent from the spec")
	}
	if web1.Enabled != true || len(web1.GroupIDs) != 2 {
		t.Fatal("old snapshot's host changed")
	}
	// Adding an item to an existing host, and a host with no groups.
	res = mustApply(t, c, Spec{Hosts: []HostSpec{
		{Host: "web-01", Status: "disabled", Groups: []string{"Web", "Staging"}, Items: []ItemSpec{{Key: "new.item"}}},
		{Host: "bare"},
	}})
	if want := (ApplyResult{HostsCreated: 1, ItemsCreated: 1, Unchanged: 1}); res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	s3 := c.Snapshot()
	if it := s3.Lookup("web-01", "new.item"); it == nil || it.HostID != web1.ID {
		t.Fatalf("new.item: %+v", it)
	}
	c.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if d := diffViews(s3, c2.Snapshot()); d != "" {
		t.Fatalf("reopened snapshot differs (-before +after):\n%s", d)
	}
}

// TestApplyMatchesReload applies random specs and checks after each that
// the snapshot Apply built incrementally equals the one Open loads from
// the database.
func TestApplyMatchesReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	rng := rand.New(rand.NewPCG(1, 2))
	types := []string{"trapper", "zabbix_agent", "snmp_agent", "zabbix_agent_active"}
	vtypes := []string{"float", "character", "log", "unsigned", "text"}
	var prev *Snapshot
	rounds := 25
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		c, err := openPath(path)
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil {
			if d := diffViews(prev, c.Snapshot()); d != "" {
				t.Fatalf("round %d: reloaded snapshot differs from the applied one (-applied +loaded):\n%s", round, d)
			}
		}
		var spec Spec
		for h := range rng.IntN(6) {
			hs := HostSpec{Host: fmt.Sprintf("h%d", rng.IntN(8)), Status: []string{"", "disabled"}[rng.IntN(2)]}
			if slices.ContainsFunc(spec.Hosts, func(o HostSpec) bool { return o.Host == hs.Host }) {
				continue
			}
			for g := range rng.IntN(3) {
				hs.Groups = append(hs.Groups, fmt.Sprintf("g%d-%d", h, g+rng.IntN(2)*3))
			}
			// Interfaces: none given (kept), one, or two with either main.
			switch rng.IntN(4) {
			case 1:
				hs.Interfaces = []InterfaceSpec{{IP: "127.0.0.1"}}
			case 2:
				hs.Interfaces = []InterfaceSpec{{IP: "127.0.0.1"}, {DNS: "h.example", Main: rng.IntN(2) == 0, Port: "10060"}}
			case 3:
				hs.Interfaces = []InterfaceSpec{}
			}
			seen := map[string]bool{}
			for range rng.IntN(20) {
				k := fmt.Sprintf("k[%d]", rng.IntN(30))
				if seen[k] {
					continue
				}
				seen[k] = true
				hs.Items = append(hs.Items, ItemSpec{
					Key: k, Type: types[rng.IntN(len(types))], ValueType: vtypes[rng.IntN(len(vtypes))],
					Units: []string{"", "B", "%"}[rng.IntN(3)], Name: []string{"", "named"}[rng.IntN(2)],
					Status:  []string{"", "enabled", "disabled"}[rng.IntN(3)],
					SNMPOID: []string{"1.3.6.1.2.1.1.3.0", "IF-MIB::ifInOctets.1"}[rng.IntN(2)],
				})
			}
			spec.Hosts = append(spec.Hosts, hs)
		}
		before := c.Snapshot()
		if _, err := c.Apply(context.Background(), spec); err != nil {
			// Dropping an interface that items left out of this spec
			// still use is refused, and must change nothing.
			var ce *ConflictError
			if !errors.As(err, &ce) || ce.Kind != InterfaceInUse || c.Snapshot() != before {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		prev = c.Snapshot()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if prev.ItemCount() == 0 {
		t.Fatal("the random specs created nothing")
	}
}

func TestSubscribeCoalesces(t *testing.T) {
	c, _ := openTemp(t)
	a, b := c.Subscribe(), c.Subscribe()
	for i := range 3 {
		mustApply(t, c, Spec{Hosts: []HostSpec{{Host: fmt.Sprintf("h%d", i)}}})
	}
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Fatal("subscriber not signalled")
		}
		select {
		case <-ch:
			t.Fatal("more than one buffered signal")
		default:
		}
	}
}

func TestApplyInvalidWritesNothing(t *testing.T) {
	c, _ := openTemp(t)
	spec := testSpec()
	spec.Hosts[1].Items[0].Key = "bad["
	if _, err := c.Apply(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "hosts[1].items[0].key") {
		t.Fatalf("Apply of an invalid spec: %v", err)
	}
	if s := c.Snapshot(); s.Version() != 0 || s.HostCount() != 0 {
		t.Fatal("an invalid spec changed the catalog")
	}
}

func TestApplyCancelled(t *testing.T) {
	c, path := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Apply(ctx, genSpec(2, 3000)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply with a cancelled context: %v", err)
	}
	if s := c.Snapshot(); s.Version() != 0 || s.ItemCount() != 0 {
		t.Fatal("a cancelled Apply changed the snapshot")
	}
	// A context that ends while the rows are being written: the
	// transaction is rolled back.
	late := &lateCancel{Context: context.Background(), after: 2}
	if _, err := c.Apply(late, genSpec(2, 3000)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply cancelled mid-write: %v", err)
	}
	if late.calls.Load() < 2 {
		t.Fatalf("the context was consulted %d times; the write did not get under way", late.calls.Load())
	}
	if s := c.Snapshot(); s.Version() != 0 || s.ItemCount() != 0 {
		t.Fatal("a cancelled Apply changed the snapshot")
	}
	mustApply(t, c, testSpec())
	c.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if s := c2.Snapshot(); s.ItemCount() != 11 || s.Version() != 1 {
		t.Fatalf("after cancelled Applies and a good one: %d items, version %d", s.ItemCount(), s.Version())
	}
}

// lateCancel is a context whose Err reports cancellation from its
// after-th call on. Its Done channel is nil, so only Apply's own periodic
// checks see it.
type lateCancel struct {
	context.Context
	after int64
	calls atomic.Int64
}

func (c *lateCancel) Err() error {
	if c.calls.Add(1) >= c.after {
		return context.Canceled
	}
	return nil
}

func TestOpenErrors(t *testing.T) {
	f := func(name string, prepare func(path string), want string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "catalog.db")
		if prepare != nil {
			prepare(path)
		}
		c, err := openPath(path)
		if err == nil {
			c.Close()
			t.Fatalf("%s: Open succeeded, want an error containing %q", name, want)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %q does not contain %q", name, err, want)
		}
	}
	exec := func(path string, stmts ...string) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	create := func(path string) {
		c, err := openPath(path)
		if err != nil {
			t.Fatal(err)
		}
		mustApply(t, c, testSpec())
		c.Close()
	}
	f("newer schema", func(p string) { create(p); exec(p, "UPDATE catalog_meta SET schema_version = 99") }, "schema version 99 is newer")
	f("foreign database", func(p string) { exec(p, "CREATE TABLE t (x)") }, "not a Peregrine catalog")
	f("bad value type", func(p string) { create(p); exec(p, "UPDATE items SET value_type = 9 WHERE id = 1") }, "item 1 has type")
	f("bad retention", func(p string) { create(p); exec(p, "UPDATE items SET history = 'soon' WHERE id = 2") }, "item 2 history")

	if _, err := Open(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), "Options.Path") {
		t.Fatalf("Open without a path: %v", err)
	}
	if _, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "no", "such", "dir", "c.db")}); err == nil {
		t.Fatal("Open in a missing directory succeeded")
	}
	path := filepath.Join(t.TempDir(), "corrupt.db")
	create(path)
	exec(path, "UPDATE items SET type = 99 WHERE id = 3")
	if _, err := openPath(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open of a damaged database: %v, want ErrCorrupt", err)
	}
}

func TestOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%chars")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cat?.db")
	c, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, testSpec())
	c.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not created at %q", path)
	}
	c, err = openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Snapshot().ItemCount() != 11 {
		t.Fatal("reopened catalog at an odd path is empty")
	}
}

func TestConcurrentReaders(t *testing.T) {
	c, _ := openTemp(t)
	spec := genSpec(5, 50)
	setUnits := func(u string) {
		for h := range spec.Hosts {
			for j := range spec.Hosts[h].Items {
				spec.Hosts[h].Items[j].Units = u
			}
		}
	}
	setUnits("initial")
	mustApply(t, c, spec)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var lookups atomic.Int64
	errc := make(chan error, 4)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				s := c.Snapshot()
				hs := &spec.Hosts[(i+r)%len(spec.Hosts)]
				key := hs.Items[i%len(hs.Items)].Key
				it := s.Lookup(hs.Host, key)
				if it == nil || it.Key != key || it.Host.Host != hs.Host || s.Item(it.ID) != it {
					errc <- fmt.Errorf("snapshot %d: Lookup(%q, %q) = %+v", s.Version(), hs.Host, key, it)
					return
				}
				// Within one snapshot every item has the same units.
				if first := s.Lookup(spec.Hosts[0].Host, spec.Hosts[0].Items[0].Key); first.Units != it.Units {
					errc <- fmt.Errorf("snapshot %d mixes units %q and %q", s.Version(), first.Units, it.Units)
					return
				}
				lookups.Add(1)
			}
		}()
	}
	for i := range 20 {
		setUnits(fmt.Sprintf("u%d", i))
		mustApply(t, c, spec)
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if c.Snapshot().Version() != 21 || lookups.Load() == 0 {
		t.Fatalf("version %d after 21 Applies, %d lookups", c.Snapshot().Version(), lookups.Load())
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	c, _ := openTemp(t)
	mustApply(t, c, testSpec())
	buf := []byte("web-01system.cpu.load[all,avg1]")
	allocs := testing.AllocsPerRun(1000, func() {
		s := c.Snapshot()
		host := unsafe.String(&buf[0], 6)
		key := unsafe.String(&buf[6], len(buf)-6)
		if s.Lookup(host, key) == nil || s.Host(host).Item(key) == nil {
			panic("lookup failed")
		}
	})
	if allocs != 0 {
		t.Fatalf("Lookup allocates %.1f times per call", allocs)
	}
	// Reusing the buffer for another name must not affect the snapshot.
	copy(buf, "xxxxxx")
	if c.Snapshot().Host("web-01") == nil {
		t.Fatal("the snapshot retained a lookup argument")
	}
}

func TestExampleFile(t *testing.T) {
	const path = "../../docs/import-example.yaml"
	spec, err := LoadSpecFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := reopenTrig(t, filepath.Join(t.TempDir(), "catalog.db"))
	res := mustApply(t, c, spec)
	if res.TriggersCreated != 2 {
		t.Errorf("%s created %d triggers, want 2", path, res.TriggersCreated)
	}
	if res.HostsCreated < 2 || res.ItemsCreated < 5 || res.GroupsCreated < 2 {
		t.Fatalf("%s created too little: %+v", path, res)
	}
	if res.NotPolled != 0 {
		t.Fatalf("%s has %d agent items on hosts without an agent interface", path, res.NotPolled)
	}
	web := c.Snapshot().Host("web-01.example.net")
	if len(web.Interfaces) != 2 || web.Item("vfs.fs.size[/,pfree]").InterfaceID != web.Interfaces[1].ID ||
		web.Item("agent.ping").InterfaceID != web.MainInterface(InterfaceAgent).ID || web.Item("vfs.fs.size[/,pfree]").Ext().Timeout != "10s" {
		t.Fatalf("interfaces of %s: %+v", web.Host, web.Interfaces)
	}
	s := c.Snapshot()
	sc := s.UserMacros(web.ID)
	if v, _ := sc.UserMacro("CHECKOUT.SLOW", ""); v != "2" {
		t.Errorf("{$CHECKOUT.SLOW} on %s = %q, want the host's 2", web.Host, v)
	}
	if v, _ := sc.UserMacro("FS.PFREE.MIN.WARN", ""); v != "10" {
		t.Errorf("{$FS.PFREE.MIN.WARN} on %s = %q, want the template's 10", web.Host, v)
	}
	if v, _ := s.UserMacros(s.Host("core-sw-01").ID).UserMacro("FS.PFREE.MIN.WARN", ""); v != "5" {
		t.Errorf("{$FS.PFREE.MIN.WARN} on core-sw-01 = %q, want the global 5", v)
	}
	seen := map[history.ValueType]bool{}
	types := map[ItemType]bool{}
	for _, h := range s.Hosts() {
		for _, it := range h.Items() {
			seen[it.ValueType] = true
			types[it.Type] = true
		}
	}
	if len(seen) != 5 {
		t.Errorf("%s does not use every value type: %v", path, seen)
	}
	for _, want := range []ItemType{Trapper, ZabbixAgent, SNMPAgent, Dependent, Calculated, SimpleCheck, HTTPAgent} {
		if !types[want] {
			t.Errorf("%s has no %s item", path, want)
		}
	}
	if h := web.Item("app.health").Ext().HTTP; h == nil || h.URL != "http://127.0.0.1:8080/health" || h.StatusCodes != "200,503" ||
		len(h.QueryFields) != 1 || h.Headers[0].Value != "application/json" || !h.FollowRedirects {
		t.Errorf("the HTTP agent item of %s: %+v", path, h)
	}
	if res := mustApply(t, c, spec); res.Changed() {
		t.Fatalf("re-applying %s changed something: %+v", path, res)
	}
}

// genSpec generates hosts×items items with realistic keys and a mix of
// types, value types and retention settings.
func genSpec(hosts, items int) Spec {
	s := Spec{Groups: []GroupSpec{{Name: "Generated"}}}
	vts := []string{"float", "unsigned", "float", "unsigned", "character", "text", "log"}
	s.Hosts = make([]HostSpec, hosts)
	for h := range s.Hosts {
		hs := &s.Hosts[h]
		hs.Host = fmt.Sprintf("host-%05d.example.net", h)
		hs.Groups = []string{"Generated"}
		hs.Items = make([]ItemSpec, items)
		for i := range hs.Items {
			is := &hs.Items[i]
			switch i % 4 {
			case 0:
				is.Key = fmt.Sprintf("app.metric[%d,requests]", i)
			case 1:
				is.Key = fmt.Sprintf("vfs.fs.size[/data%d,pfree]", i)
				is.Units = "%"
			case 2:
				is.Key = fmt.Sprintf("net.if.in[eth%d,bytes]", i)
				is.Units = "bps"
			default:
				is.Key = fmt.Sprintf("custom.check.%d", i)
			}
			is.ValueType = vts[i%len(vts)]
			if i%10 == 0 {
				is.History = "7d"
			}
		}
	}
	return s
}

func TestGenSpecIsValid(t *testing.T) {
	if err := genSpec(3, 100).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestBuildSnapshot(t *testing.T) {
	hosts := func() []Host { return []Host{{ID: 7, Host: "b"}, {ID: 3, Host: "a"}} }
	// Sparse IDs use the map index; dense ones the slice.
	for _, ids := range [][]uint64{{1, 2, 3}, {5, 1 << 40, 1 << 50}} {
		items := []Item{
			{ID: ids[0], HostID: 7, Key: "k1"},
			{ID: ids[1], HostID: 3, Key: "k1"},
			{ID: ids[2], HostID: 7, Key: "k0"},
		}
		s, err := buildSnapshot(9, nil, hosts(), itemSource{extra: items})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range items {
			got := s.Item(want.ID)
			if got == nil || got.Key != want.Key || got.HostID != want.HostID || got.Host.ID != want.HostID {
				t.Fatalf("IDs %v: Item(%d) = %+v", ids, want.ID, got)
			}
		}
		if s.Item(4) != nil || s.Item(1<<45) != nil || s.Item(0) != nil {
			t.Fatalf("IDs %v: an unknown ID was found", ids)
		}
		if s.Lookup("a", "k1").ID != ids[1] || s.Lookup("b", "k0").ID != ids[2] || s.Lookup("a", "k0") != nil {
			t.Fatalf("IDs %v: lookups by key wrong", ids)
		}
		if s.Hosts()[0].Host != "a" || s.Version() != 9 {
			t.Fatal("hosts not sorted or wrong version")
		}
	}

	f := func(items []Item, want string) {
		t.Helper()
		_, err := buildSnapshot(1, nil, hosts(), itemSource{extra: items})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want ErrCorrupt containing %q", err, want)
		}
	}
	f([]Item{{ID: 1, HostID: 7, Key: "k"}, {ID: 2, HostID: 7, Key: "k"}}, `host "b" has two items with key "k" (IDs 1 and 2)`)
	f([]Item{{ID: 1, HostID: 4, Key: "k"}}, "item 1 belongs to unknown host 4")
	if _, err := buildSnapshot(1, nil, []Host{{ID: 1, Host: "a"}, {ID: 2, Host: "a"}}, itemSource{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("duplicate host name: %v", err)
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	c, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openPath(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2, err := openPath(path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	c2.Close()
}

// TestHostItemsShared: Host.Items is sorted once per snapshot and every
// caller, concurrent ones included, gets that one slice; a later
// snapshot has its own, with the change, and the old one is untouched.
func TestHostItemsShared(t *testing.T) {
	c, _ := openTemp(t)
	mustApply(t, c, testSpec())
	before := c.Snapshot()
	web := before.Host("web-01")
	const n = 8
	got := make([][]*Item, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = web.Items()
		}()
	}
	wg.Wait()
	keysOf := func(its []*Item) []string {
		var ks []string
		for _, it := range its {
			ks = append(ks, it.Key)
		}
		return ks
	}
	first := keysOf(got[0])
	if len(first) != 7 || !slices.IsSorted(first) {
		t.Fatalf("web-01 Items: %q, want its 7 keys sorted", first)
	}
	for i := range got {
		if &got[i][0] != &got[0][0] || len(got[i]) != len(got[0]) {
			t.Fatalf("call %d got a slice of its own, want the snapshot's shared one", i)
		}
	}
	if again := web.Items(); &again[0] != &got[0][0] {
		t.Fatal("a later call sorted again")
	}
	if its := before.Host("switch 1").Items(); &its[0] == &got[0][0] || len(its) != 4 {
		t.Fatalf("switch 1 got %d items sharing web-01's slice", len(its))
	}

	spec := testSpec()
	spec.Hosts[0].Items = append(spec.Hosts[0].Items, ItemSpec{Key: "aaa.first", Units: "s"})
	mustApply(t, c, spec)
	now := keysOf(c.Snapshot().Host("web-01").Items())
	if len(now) != 8 || now[0] != "aaa.first" {
		t.Fatalf("after adding aaa.first: %q", now)
	}
	if old := keysOf(web.Items()); !slices.Equal(old, first) {
		t.Fatalf("the old snapshot's Items changed: %q, was %q", old, first)
	}
}
