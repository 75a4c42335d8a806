package lld_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/lld"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// discoveredGraphs returns the host's discovered graphs by name.
func discoveredGraphs(s *catalog.Snapshot, host uint64) map[string]*catalog.Graph {
	out := map[string]*catalog.Graph{}
	for i := range s.Graphs() {
		if g := &s.Graphs()[i]; g.HostID == host && g.Discovery != nil {
			out[g.Name] = g
		}
	}
	return out
}

// TestDiscoverGraphs links the whole "Linux by Zabbix agent active"
// (graph prototypes included) to a host and discovers file systems:
// one "{#FSNAME}: Disk space usage" graph per file system over the
// discovered items, kept on rediscovery, lost and deleted with the
// file system.
// graphFixture is a catalog holding the whole "Linux by Zabbix agent
// active" (graph prototypes included) linked to n hosts.
func graphFixture(tb testing.TB, n int) (*catalog.Catalog, *catalog.Host, []uint64) {
	tb.Helper()
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(tb.TempDir(), "c.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cat.Close() })
	data, err := os.ReadFile(filepath.Join(testutil.ZabbixTemplates(tb), "os", "linux_active", "template_os_linux_active.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	spec, err := catalog.ParseSpec(data)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := cat.Apply(ctx, spec); err != nil {
		tb.Fatal(err)
	}
	tmpl := cat.Snapshot().TemplateByName("Linux by Zabbix agent active")
	var hosts []uint64
	_, err = cat.Edit(ctx, func(e *catalog.Edit) error {
		gids, err := e.CreateGroups([]string{"lld"})
		if err != nil {
			return err
		}
		var nh []catalog.NewHost
		for i := range n {
			nh = append(nh, catalog.NewHost{Host: "g" + itoa(i), GroupIDs: gids,
				Interfaces: []catalog.Interface{{Type: catalog.InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.1"}}})
		}
		if hosts, err = e.CreateHosts(nh); err != nil {
			return err
		}
		for _, h := range hosts {
			if _, err := e.LinkTemplates(h, []uint64{tmpl.ID}, "templates"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return cat, tmpl, hosts
}

func TestDiscoverGraphs(t *testing.T) {
	ctx := context.Background()
	cat, tmpl, hosts := graphFixture(t, 1)
	host := hosts[0]
	s := cat.Snapshot()
	rule := s.HostByID(host).Item("vfs.fs.discovery")
	trule := tmpl.Item("vfs.fs.discovery")
	if len(rule.Ext().LLD.GraphPrototypes) != 1 || len(trule.Ext().LLD.GraphPrototypes) != 1 {
		t.Fatalf("graph prototypes: host %+v template %+v", rule.Ext().LLD.GraphPrototypes, trule.Ext().LLD.GraphPrototypes)
	}
	gp, tgp := rule.Ext().LLD.GraphPrototypes[0], trule.Ext().LLD.GraphPrototypes[0]
	if gp.TemplateID != tgp.ID || gp.ID == tgp.ID || gp.UUID != "" || tgp.UUID == "" || s.Graph(gp.ID) != nil {
		t.Errorf("host's copy %d (template %d, uuid %q) of %d (uuid %q)", gp.ID, gp.TemplateID, gp.UUID, tgp.ID, tgp.UUID)
	}
	if gi, ti := gp.Items[0].Item.GItemID, tgp.Items[0].Item.GItemID; gi == 0 || ti == 0 || gi == ti {
		t.Errorf("gitemids: copy %d, template %d", gi, ti)
	}
	if p, r := s.GraphPrototype(gp.ID); p == nil || r.ID != rule.ID {
		t.Errorf("GraphPrototype(%d) = %v, %v", gp.ID, p, r)
	}

	now := time.Unix(1_700_000_000, 0)
	eng := lld.New(lld.Options{Catalog: cat, Now: func() time.Time { return now }})
	eng.Apply(ctx, []lld.Value{{RuleID: rule.ID, Value: fsTwo}})
	if e := eng.RuleError(rule.ID); e != "" {
		t.Fatalf("rule error: %q", e)
	}
	s = cat.Snapshot()
	got := discoveredGraphs(s, host)
	if len(got) != 2 || got["/: Disk space usage"] == nil || got["/data: Disk space usage"] == nil {
		t.Fatalf("discovered graphs: %v", got)
	}
	g := got["/data: Disk space usage"]
	if g.Discovery.RuleID != rule.ID || g.Discovery.ProtoID != gp.ID || g.GraphType != 2 || len(g.Items) != 2 {
		t.Fatalf("graph: %+v", g)
	}
	for _, gi := range g.Items {
		it := s.Item(gi.ItemID)
		if it == nil || it.HostID != host || it.Discovery == nil {
			t.Errorf("graph item %d: %+v", gi.ItemID, it)
		}
	}
	v := s.Version()
	eng.Apply(ctx, []lld.Value{{RuleID: rule.ID, Value: fsTwo}})
	if cat.Snapshot().Version() != v {
		t.Error("an unchanged result made a new snapshot")
	}
	// /data is lost: its graph too, then deleted with its items.
	eng.Apply(ctx, []lld.Value{{RuleID: rule.ID, Value: fsOne}})
	got = discoveredGraphs(cat.Snapshot(), host)
	if l := got["/data: Disk space usage"]; l == nil || l.Discovery.TSDelete != now.Unix()+30*86400 {
		t.Fatalf("lost graph: %+v", l)
	}
	now = now.Add(31 * 24 * time.Hour)
	eng.Apply(ctx, []lld.Value{{RuleID: rule.ID, Value: fsOne}})
	got = discoveredGraphs(cat.Snapshot(), host)
	if len(got) != 1 || got["/: Disk space usage"] == nil {
		t.Fatalf("after the lifetime: %v", got)
	}
	// Deleting the rule deletes its graphs with its items.
	if _, err := cat.Edit(ctx, func(e *catalog.Edit) error {
		_, err := e.SetTemplates(host, nil, []uint64{tmpl.ID}, "templates_clear")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got = discoveredGraphs(cat.Snapshot(), host); len(got) != 0 {
		t.Errorf("graphs of a cleared rule: %v", got)
	}
}

// BenchmarkApplyGraphs is BenchmarkApply with graph prototypes: each
// result also makes or keeps one "{#FSNAME}: Disk space usage" graph per
// file system.
func BenchmarkApplyGraphs(b *testing.B) {
	for _, n := range []int{100, 1000} {
		cat, _, hosts := graphFixture(b, n)
		eng := lld.New(lld.Options{Catalog: cat})
		ctx := context.Background()
		s := cat.Snapshot()
		rules := make([]uint64, n)
		for i, h := range hosts {
			rules[i] = s.HostByID(h).Item("vfs.fs.discovery").ID
		}
		vals := func(k int) []lld.Value {
			out := make([]lld.Value, n)
			for i, r := range rules {
				out[i] = lld.Value{RuleID: r, Value: fmt.Sprintf(`[{"{#FSNAME}":"/","{#FSTYPE}":"ext4"},{"{#FSNAME}":"/d%d","{#FSTYPE}":"xfs"}]`, k)}
			}
			return out
		}
		eng.Apply(ctx, vals(0))
		if g := discoveredGraphs(cat.Snapshot(), hosts[n-1]); len(g) != 2 {
			b.Fatalf("discovered graphs: %v", g)
		}
		b.Run(fmt.Sprintf("hosts=%d/unchanged", n), func(b *testing.B) {
			v := vals(0)
			b.ReportAllocs()
			for b.Loop() {
				eng.Apply(ctx, v)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/result")
		})
		b.Run(fmt.Sprintf("hosts=%d/changed", n), func(b *testing.B) {
			b.ReportAllocs()
			k := 1
			for b.Loop() {
				eng.Apply(ctx, vals(k))
				k++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/result")
		})
	}
}
