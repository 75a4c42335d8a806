package lld_test

import (
	"context"
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
	if a.Name != "VM a" || a.Discovery == nil || a.Discovery.RuleID != rule || !a.Enabled {
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
	// b lost: kept for the lifetime, then deleted.
	eng.Apply(ctx, []lld.Value{{RuleID: rule, Value: `[{"{#NAME}":"a","{#POOL}":"p1"}]`}})
	b := cat.Snapshot().Host("vm-b")
	if b == nil || b.Discovery.TSDelete != now.Unix()+3600 {
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
