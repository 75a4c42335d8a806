package lld_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/lld"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// Host prototypes make hosts (6.0's discovered hosts): named from the
// row, in the linked groups and the group prototypes' (made), with the
// prototype's templates, macros, tags and the parent's interfaces; a
// host no longer discovered is lost, then deleted after the lifetime;
// deleting the rule deletes the hosts it made.
func TestDiscoveredHosts(t *testing.T) {
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(t.TempDir(), "c.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var rule, tmpl uint64
	_, err = cat.Edit(ctx, func(e *catalog.Edit) error {
		gids, err := e.CreateGroups([]string{"g"})
		if err != nil {
			return err
		}
		tids, err := e.CreateHosts([]catalog.NewHost{{Host: "T", GroupIDs: gids, Template: true}})
		if err != nil {
			return err
		}
		tmpl = tids[0]
		if _, err := e.CreateItems([]catalog.NewItem{{HostID: tmpl, ItemSpec: catalog.ItemSpec{Key: "t.item", Type: "trapper"}}}); err != nil {
			return err
		}
		hids, err := e.CreateHosts([]catalog.NewHost{{Host: "parent", GroupIDs: gids,
			Interfaces: []catalog.Interface{{Type: catalog.InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.1"}}}})
		if err != nil {
			return err
		}
		ids, err := e.CreateItems([]catalog.NewItem{{HostID: hids[0], ItemSpec: catalog.ItemSpec{Key: "vm.discovery", Type: "trapper"},
			LLD: &catalog.LLDRule{Lifetime: "1h", HostPrototypes: []catalog.HostPrototype{{
				Host: "vm-{#NAME}", Name: "VM {#NAME}", GroupLinks: gids, GroupPrototypes: []string{"vms-{#POOL}"},
				Templates: []uint64{tmpl}, Macros: []catalog.HostProtoMacro{{Macro: "{$VM}", Value: "{#NAME}"}},
				Tags: []catalog.Tag{{Tag: "pool", Value: "{#POOL}"}},
			}}}}})
		if err != nil {
			return err
		}
		rule = ids[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	eng := lld.New(lld.Options{Catalog: cat, Now: func() time.Time { return now }})
	eng.Apply(ctx, []lld.Value{{RuleID: rule, Value: `[{"{#NAME}":"a","{#POOL}":"p1"},{"{#NAME}":"b","{#POOL}":"p2"}]`}})
	if e := eng.RuleError(rule); e != "" {
		t.Fatalf("rule error: %q", e)
	}
	s := cat.Snapshot()
	a := s.Host("vm-a")
	if a == nil || s.Host("vm-b") == nil {
		t.Fatal("hosts vm-a and vm-b not discovered")
	}
	if a.Name != "VM a" || a.Ext().Discovery == nil || a.Ext().Discovery.RuleID != rule || !a.Enabled {
		t.Errorf("vm-a: %+v", a)
	}
	if len(a.GroupIDs) != 2 || len(a.Interfaces) != 1 || a.Interfaces[0].IP != "127.0.0.1" {
		t.Errorf("vm-a groups %v interfaces %+v", a.GroupIDs, a.Interfaces)
	}
	if len(a.Tags) != 1 || a.Tags[0] != (catalog.Tag{Tag: "pool", Value: "p1"}) {
		t.Errorf("vm-a tags %+v", a.Tags)
	}
	if !slices.Contains(s.LinkedTemplates(a.ID), tmpl) || a.Item("t.item") == nil {
		t.Errorf("vm-a: template not linked (%v)", s.LinkedTemplates(a.ID))
	}
	if ms := s.Macros(a.ID); len(ms) != 1 || ms[0].Value != "a" {
		t.Errorf("vm-a macros %+v", ms)
	}
	// The same value again changes nothing: no new snapshot.
	v := s.Version()
	eng.Apply(ctx, []lld.Value{{RuleID: rule, Value: `[{"{#NAME}":"a","{#POOL}":"p1"},{"{#NAME}":"b","{#POOL}":"p2"}]`}})
	if cat.Snapshot().Version() != v {
		t.Error("an unchanged result made a new snapshot")
	}
	// b lost: kept for the lifetime, then deleted.
	eng.Apply(ctx, []lld.Value{{RuleID: rule, Value: `[{"{#NAME}":"a","{#POOL}":"p1"}]`}})
	b := cat.Snapshot().Host("vm-b")
	if b == nil || b.Ext().Discovery.TSDelete != now.Unix()+3600 {
		t.Fatalf("lost vm-b: %+v", b)
	}
	now = now.Add(2 * time.Hour)
	eng.Apply(ctx, []lld.Value{{RuleID: rule, Value: `[{"{#NAME}":"a","{#POOL}":"p1"}]`}})
	if cat.Snapshot().Host("vm-b") != nil {
		t.Fatal("vm-b not deleted after the lifetime")
	}
	_, err = cat.Edit(ctx, func(e *catalog.Edit) error { return e.DeleteItems([]uint64{rule}) })
	if err != nil {
		t.Fatal(err)
	}
	if cat.Snapshot().Host("vm-a") != nil {
		t.Fatal("vm-a kept after its rule was deleted")
	}
}

// TestDiscoveredHostsGoWithTheirHost: deleting the host whose rule
// discovered hosts deletes them (recorded from 6.0.14: conformance case
// lld_discovery).
func TestDiscoveredHostsGoWithTheirHost(t *testing.T) {
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(t.TempDir(), "c.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var rule, parent uint64
	_, err = cat.Edit(ctx, func(e *catalog.Edit) error {
		gids, err := e.CreateGroups([]string{"g"})
		if err != nil {
			return err
		}
		hids, err := e.CreateHosts([]catalog.NewHost{{Host: "parent", GroupIDs: gids}})
		if err != nil {
			return err
		}
		parent = hids[0]
		ids, err := e.CreateItems([]catalog.NewItem{{HostID: parent, ItemSpec: catalog.ItemSpec{Key: "vm.discovery", Type: "trapper"},
			LLD: &catalog.LLDRule{HostPrototypes: []catalog.HostPrototype{{Host: "vm-{#NAME}", GroupLinks: gids}}}}})
		if err != nil {
			return err
		}
		rule = ids[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	eng := lld.New(lld.Options{Catalog: cat, Now: func() time.Time { return time.Unix(1_700_000_000, 0) }})
	eng.Apply(ctx, []lld.Value{{RuleID: rule, Value: `[{"{#NAME}":"a"}]`}})
	if cat.Snapshot().Host("vm-a") == nil {
		t.Fatalf("vm-a not discovered: %q", eng.RuleError(rule))
	}
	if _, err := cat.Edit(ctx, func(e *catalog.Edit) error { return e.DeleteHosts([]uint64{parent}) }); err != nil {
		t.Fatal(err)
	}
	if cat.Snapshot().Host("vm-a") != nil {
		t.Fatal("vm-a kept after its parent host was deleted")
	}
}

// BenchmarkApplyHosts measures one result of a rule with a host
// prototype on a catalog of n plain hosts: unchanged (nothing written)
// and a result that discovers one new host and loses the previous one
// (lifetime 0: deleted at once), one small Edit each.
//
//	go test ./internal/lld/ -run '^$' -bench ApplyHosts -benchtime 20x
func BenchmarkApplyHosts(b *testing.B) {
	for _, n := range []int{100, 1000} {
		ctx := context.Background()
		cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(b.TempDir(), "c.db"), ExprRefs: trigger.ItemRefs})
		if err != nil {
			b.Fatal(err)
		}
		var rule uint64
		_, err = cat.Edit(ctx, func(e *catalog.Edit) error {
			gids, err := e.CreateGroups([]string{"g"})
			if err != nil {
				return err
			}
			hs := make([]catalog.NewHost, n)
			for i := range hs {
				hs[i] = catalog.NewHost{Host: fmt.Sprintf("h%d", i), GroupIDs: gids}
			}
			hids, err := e.CreateHosts(hs)
			if err != nil {
				return err
			}
			ids, err := e.CreateItems([]catalog.NewItem{{HostID: hids[0], ItemSpec: catalog.ItemSpec{Key: "vm.discovery", Type: "trapper"},
				LLD: &catalog.LLDRule{Lifetime: "0", HostPrototypes: []catalog.HostPrototype{{Host: "vm-{#NAME}", GroupLinks: gids,
					Tags: []catalog.Tag{{Tag: "vm", Value: "{#NAME}"}}}}}}})
			if err != nil {
				return err
			}
			rule = ids[0]
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		eng := lld.New(lld.Options{Catalog: cat})
		val := func(i int) []lld.Value {
			return []lld.Value{{RuleID: rule, Value: fmt.Sprintf(`[{"{#NAME}":"v%d"}]`, i)}}
		}
		eng.Apply(ctx, val(0))
		b.Run(fmt.Sprintf("hosts=%d/unchanged", n), func(b *testing.B) {
			b.ReportAllocs()
			v := val(0)
			for b.Loop() {
				eng.Apply(ctx, v)
			}
		})
		b.Run(fmt.Sprintf("hosts=%d/one-new-one-lost", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 1
			for b.Loop() {
				eng.Apply(ctx, val(i))
				i++
			}
		})
		if e := eng.RuleError(rule); e != "" {
			b.Fatalf("rule error: %q", e)
		}
		cat.Close()
	}
}
