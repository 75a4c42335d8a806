package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// deriveFixtureYAML: template t with an item and a discovery rule whose
// prototype has a trigger prototype, template t2 with a master and a
// dependent item; hosts h0..h5, h0..h2 linked to t.
const deriveFixtureYAML = `zabbix_export:
  version: '6.0'
  groups:
    - name: g
  templates:
    - template: t
      name: t
      groups:
        - name: g
      items:
        - name: plain
          key: t.plain
          type: TRAP
      discovery_rules:
        - name: rule
          key: t.disc
          type: TRAP
          lifetime: 1h
          item_prototypes:
            - name: 'p {#X}'
              key: 't.p[{#X}]'
              type: TRAP
              trigger_prototypes:
                - expression: 'last(/t/t.p[{#X}])>1'
                  name: 'tp {#X}'
    - template: t2
      name: t2
      groups:
        - name: g
      items:
        - name: master
          key: t2.m
          type: TRAP
          value_type: TEXT
        - name: dependent
          key: t2.d
          type: DEPENDENT
          master_item:
            key: t2.m
`

// TestDeriveMatchesReload makes random edits of every kind a snapshot
// is derived through (items created, updated, deleted; hosts created,
// renamed, deleted; templates linked and unlinked, a template's item
// changed; discovery results applied) and after each checks the
// running snapshot's indexes against its hosts (checkDerived), that an
// item.update made anew only the item's host, and that a reload from
// the database shows the same catalog.
func TestDeriveMatchesReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	open := func() *Catalog {
		c, err := Open(context.Background(), Options{Path: path, ExprRefs: fakeRefs})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open()
	spec, err := ParseSpec([]byte(deriveFixtureYAML))
	if err != nil {
		t.Fatal(err)
	}
	for h := range 6 {
		hs := HostSpec{Host: fmt.Sprintf("h%d", h), Groups: []string{"g"}}
		if h < 3 {
			hs.Templates = []TemplateRef{{Name: "t"}}
		}
		for i := range 5 {
			hs.Items = append(hs.Items, ItemSpec{Key: fmt.Sprintf("k%d", i), ValueType: "unsigned"})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	mustApply(t, c, spec)
	checkDerived(t, c.Snapshot())
	rng := rand.New(rand.NewPCG(7, 30))
	pick := func(hs []*Host) *Host { return hs[rng.IntN(len(hs))] }
	ops := map[string]int{}
	for round := range 60 {
		before := c.Snapshot()
		op := rng.IntN(10)
		var updated uint64 // the host of an item.update
		_, err := c.Edit(context.Background(), func(e *Edit) error {
			s := c.Snapshot()
			hs := s.Hosts()
			h := pick(hs)
			var own []*Item
			for _, it := range h.Items() {
				if it.TemplateID == 0 && it.Discovery == nil && it.Ext().LLD == nil {
					own = append(own, it)
				}
			}
			switch {
			case op == 0 && len(own) > 0:
				updated = h.ID
				it := own[rng.IntN(len(own))]
				return e.UpdateItems([]ItemUpdate{{ID: it.ID, Units: ptr(fmt.Sprint(round)), Name: ptr(fmt.Sprintf("n%d", rng.IntN(4)))}})
			case op == 1:
				_, err := e.CreateItems([]NewItem{{HostID: h.ID, ItemSpec: ItemSpec{Key: fmt.Sprintf("new%d", round), ValueType: "unsigned"}}})
				return err
			case op == 2 && len(own) > 0:
				return e.DeleteItems([]uint64{own[rng.IntN(len(own))].ID})
			case op == 3:
				return e.UpdateHosts([]HostUpdate{{ID: h.ID, Host: ptr(fmt.Sprintf("r%d-%s", round, h.Host))}})
			case op == 4:
				ids, err := e.CreateHosts([]NewHost{{Host: fmt.Sprintf("n%d", round), GroupIDs: []uint64{s.Group("g").ID}}})
				if err != nil {
					return err
				}
				_, err = e.CreateItems([]NewItem{{HostID: ids[0], ItemSpec: ItemSpec{Key: "k0", ValueType: "unsigned"}}})
				return err
			case op == 5 && len(hs) > 3:
				return e.DeleteHosts([]uint64{h.ID})
			case op == 6:
				tmpl := s.TemplateByName([]string{"t", "t2"}[rng.IntN(2)])
				_, err := e.LinkTemplates(h.ID, []uint64{tmpl.ID}, "templates")
				return err
			case op == 7:
				_, err := e.SetTemplates(h.ID, nil, nil, "templates")
				return err
			case op == 8:
				ti := s.TemplateByName("t2").Item("t2.m")
				return e.UpdateItems([]ItemUpdate{{ID: ti.ID, Units: ptr(fmt.Sprint(round))}})
			default:
				rule := h.Item("t.disc")
				if rule == nil {
					return nil
				}
				proto := rule.Ext().LLD.ItemPrototypes[0]
				tp := rule.Ext().LLD.TriggerPrototypes[0]
				res := &DiscoveryResult{RuleID: rule.ID, Now: int64(1000 + round), Lifetime: 0}
				for _, x := range []string{"a", "b", "c", "d"} {
					if rng.IntN(2) == 0 {
						continue
					}
					is := proto.Item
					is.Key, is.Name = "t.p["+x+"]", "p "+x
					res.Items = append(res.Items, DiscoveredItem{ProtoID: proto.ID, Item: is})
					tf := tp.Fields
					tf.Description, tf.Expression, tf.UUID = "tp "+x, "last(/"+h.Host+"/t.p["+x+"])>1", ""
					res.Triggers = append(res.Triggers, DiscoveredTrigger{ProtoID: tp.ID, Fields: tf})
				}
				_, err := e.ApplyDiscovery(res)
				return err
			}
		})
		after := c.Snapshot()
		if err != nil {
			if after != before {
				t.Fatalf("round %d (op %d): a failed edit (%v) published a snapshot", round, op, err)
			}
			continue
		}
		ops[fmt.Sprint(op)]++
		checkDerived(t, after)
		if updated != 0 && after != before {
			made := 0
			for _, h := range after.hosts {
				if before.HostByID(h.ID) != h {
					made++
					if h.ID != updated {
						t.Fatalf("round %d: item.update on host %d made host %q anew", round, updated, h.Host)
					}
				}
			}
			for i, h := range after.part().hosts {
				if before.part().hosts[i] != h {
					t.Fatalf("round %d: item.update made template %q anew", round, h.Host)
				}
			}
			if made != 1 {
				t.Fatalf("round %d: item.update made %d hosts anew", round, made)
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		c = open()
		if d := diffViews(after, c.Snapshot()); d != "" {
			t.Fatalf("round %d (op %d): reloaded snapshot differs (-edited +loaded):\n%s", round, op, d)
		}
	}
	c.Close()
	t.Logf("edits committed by op: %v", ops)
	if len(ops) < 8 {
		t.Fatalf("the random edits took only ops %v", ops)
	}
}

// checkDerived checks a snapshot's indexes against its hosts and items,
// in both parts: the sorted host list, hosts by name and ID, interfaces
// and items by ID, key tables, dependents, macro scopes and copies.
func checkDerived(t *testing.T, s *Snapshot) {
	t.Helper()
	copies := map[uint64][]uint64{}
	for _, part := range []*Snapshot{s, s.part()} {
		if !slices.IsSortedFunc(part.hosts, func(a, b *Host) int { return compareStr(a.Host, b.Host) }) {
			t.Fatal("hosts not sorted by name")
		}
		if part.hostByName.len() != len(part.hosts) || part.hostByID.len() != len(part.hosts) {
			t.Fatalf("%d hosts, %d by name, %d by ID", len(part.hosts), part.hostByName.len(), part.hostByID.len())
		}
		n, nIf := 0, 0
		for i, h := range part.hosts {
			if i > 0 && part.hosts[i-1].Host == h.Host {
				t.Fatalf("host %q twice", h.Host)
			}
			if part.hostByName.get(h.Host) != h || part.hostByID.get(h.ID) != h {
				t.Fatalf("host %q not indexed", h.Host)
			}
			if h.UserMacros() != s.UserMacros(h.ID) {
				t.Fatalf("host %q: macro scope of another snapshot", h.Host)
			}
			for j := range h.Interfaces {
				if part.ifaceByID.get(h.Interfaces[j].ID) != &h.Interfaces[j] {
					t.Fatalf("interface %d of %q not indexed", h.Interfaces[j].ID, h.Host)
				}
			}
			nIf += len(h.Interfaces)
			deps := 0
			for j := range h.items {
				it := &h.items[j]
				n++
				if it.Host != h || part.Item(it.ID) != it || h.Item(it.Key) != it || s.AnyItem(it.ID) != it {
					t.Fatalf("item %d (%q on %q) not indexed", it.ID, it.Key, h.Host)
				}
				if it.TemplateID != 0 {
					copies[it.TemplateID] = append(copies[it.TemplateID], it.ID)
				}
				if it.MasterItemID != 0 {
					deps++
					m := part.Item(it.MasterItemID)
					if m == nil || !m.HasDependents() || !slices.Contains(part.Dependents(m.ID), it) {
						t.Fatalf("dependent %d of %d not indexed", it.ID, it.MasterItemID)
					}
				}
			}
			nd := 0
			for _, ds := range h.deps {
				nd += len(ds)
			}
			if nd != deps {
				t.Fatalf("host %q: %d dependents indexed, %d items", h.Host, nd, deps)
			}
		}
		if n != part.nItems || n != part.ItemCount() && part == s {
			t.Fatalf("%d items, counted %d", n, part.nItems)
		}
		if part.ifaceByID.len() != nIf {
			t.Fatalf("%d interfaces, %d indexed", nIf, part.ifaceByID.len())
		}
		pages := 0
		for _, p := range part.ids.pages.all {
			for _, it := range p {
				if it != nil {
					pages++
					if part.HostByID(it.HostID) != it.Host && part.part().HostByID(it.HostID) != it.Host {
						t.Fatalf("item %d indexed from another snapshot", it.ID)
					}
				}
			}
		}
		if pages != n {
			t.Fatalf("%d items indexed by ID, %d items", pages, n)
		}
	}
	for _, tm := range s.Templates() {
		for _, ti := range tm.Items() {
			var got []uint64
			for _, c := range s.Copies(ti.ID) {
				got = append(got, c.ID)
			}
			slices.Sort(got)
			want := copies[ti.ID]
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("copies of %d: %v, want %v", ti.ID, got, want)
			}
		}
	}
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
