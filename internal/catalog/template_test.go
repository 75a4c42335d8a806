package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tmplFixture is a catalog with a template "T" (an agent item with a
// value map and a tag, a dependent item of it, a trapper item, a
// trigger) and hosts "h1" (agent interface) and "h2" (none), nothing
// linked.
type tmplFixture struct {
	c                     *Catalog
	path                  string
	group, tmpl, h1, h2   uint64
	ping, dep, trap, trig uint64
	vm                    uint64
}

func newTmplFixture(t *testing.T) *tmplFixture {
	t.Helper()
	f := &tmplFixture{path: filepath.Join(t.TempDir(), "catalog.db")}
	f.c = reopenTrig(t, f.path)
	mustEdit(t, f.c, func(e *Edit) error {
		g, err := e.CreateGroups([]string{"G"})
		if err != nil {
			return err
		}
		f.group = g[0]
		ids, err := e.CreateHosts([]NewHost{
			{Host: "T", Name: "Template T", Template: true, GroupIDs: g},
			{Host: "h1", GroupIDs: g, Interfaces: []Interface{{Type: InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.1"}}},
			{Host: "h2", GroupIDs: g},
		})
		if err != nil {
			return err
		}
		f.tmpl, f.h1, f.h2 = ids[0], ids[1], ids[2]
		vm, err := e.CreateValueMaps([]ValueMap{{HostID: f.tmpl, Name: "state", Mappings: []Mapping{{Value: "1", NewValue: "Up"}}}})
		if err != nil {
			return err
		}
		f.vm = vm[0]
		it, err := e.CreateItems([]NewItem{
			{HostID: f.tmpl, ValueMapID: f.vm, ItemSpec: ItemSpec{Key: "agent.ping", Type: "zabbix_agent", ValueType: "uint", Tags: []TagSpec{{Tag: "c", Value: "d"}}}},
			{HostID: f.tmpl, ItemSpec: ItemSpec{Key: "trap", ValueType: "uint"}},
		})
		if err != nil {
			return err
		}
		f.ping, f.trap = it[0], it[1]
		dep, err := e.CreateItems([]NewItem{{HostID: f.tmpl, MasterItemID: f.ping, ItemSpec: ItemSpec{Key: "dep", Type: "dependent", ValueType: "uint"}}})
		if err != nil {
			return err
		}
		f.dep = dep[0]
		tr, err := e.CreateTriggers([]TriggerFields{{Description: "down on {HOST.NAME}", Expression: "last(/T/agent.ping)=0", Enabled: true, Priority: 4, Tags: []Tag{{Tag: "t", Value: "1"}}}})
		if err != nil {
			return err
		}
		f.trig = tr[0]
		return nil
	})
	return f
}

func (f *tmplFixture) link(t *testing.T, owner uint64, tmpls ...uint64) {
	t.Helper()
	mustEdit(t, f.c, func(e *Edit) error { _, err := e.LinkTemplates(owner, tmpls, "templates"); return err })
}

// reload reopens the catalog (with the fake expression parser) and
// checks that the loaded snapshot equals the edited one.
func (f *tmplFixture) reload(t *testing.T) {
	t.Helper()
	want := f.c.Snapshot()
	if err := f.c.Close(); err != nil {
		t.Fatal(err)
	}
	f.c = reopenTrig(t, f.path)
	if d := diffViews(want, f.c.Snapshot()); d != "" {
		t.Fatalf("reloaded snapshot differs from the edited one (-edited +loaded):\n%s", d)
	}
}

func TestTemplatesApartFromHosts(t *testing.T) {
	f := newTmplFixture(t)
	s := f.c.Snapshot()
	tm := s.Template(f.tmpl)
	if tm == nil || !tm.IsTemplate || tm.Name != "Template T" || len(tm.Ext().UUID) != 32 || tm.ItemCount() != 3 {
		t.Fatalf("template: %+v", tm)
	}
	if s.HostByID(f.tmpl) != nil || s.Host("T") != nil || s.Lookup("T", "agent.ping") != nil || s.Item(f.ping) != nil ||
		s.Trigger(f.trig) != nil || len(s.TriggersOfItem(f.ping)) != 0 || s.ItemCount() != 0 || s.HostCount() != 2 {
		t.Fatal("a template, its items or its trigger are visible among the hosts'")
	}
	if it := s.TemplateItem(f.ping); it == nil || it.Host != tm || len(it.Ext().UUID) != 32 || it.TemplateID != 0 || s.AnyItem(f.ping) != it {
		t.Fatalf("template item: %+v", it)
	}
	if tr := s.TemplateTrigger(f.trig); tr == nil || len(tr.UUID) != 32 || s.AnyTrigger(f.trig) != tr {
		t.Fatalf("template trigger: %+v", tr)
	}
	if m := s.ValueMap(f.vm); m == nil || len(m.UUID) != 32 {
		t.Fatalf("template value map: %+v", m)
	}
	f.reload(t)
}

func TestLinkCopiesItemsAndTriggers(t *testing.T) {
	f := newTmplFixture(t)
	f.link(t, f.h1, f.tmpl)
	s := f.c.Snapshot()
	h := s.Host("h1")
	ping, dep, trap := h.Item("agent.ping"), h.Item("dep"), h.Item("trap")
	if ping == nil || dep == nil || trap == nil || h.ItemCount() != 3 {
		t.Fatalf("h1's items: %v", h.Items())
	}
	if ping.TemplateID != f.ping || dep.TemplateID != f.dep || trap.TemplateID != f.trap || ping.Ext().UUID != "" {
		t.Fatalf("templateids: %d %d %d", ping.TemplateID, dep.TemplateID, trap.TemplateID)
	}
	if ping.InterfaceID != h.MainInterface(InterfaceAgent).ID || ping.ValueMapID != f.vm || !slices.Equal(ping.Tags, []Tag{{"c", "d"}}) {
		t.Fatalf("copy of agent.ping: %+v", ping)
	}
	if dep.MasterItemID != ping.ID || !ping.HasDependents() {
		t.Fatalf("dependent copy's master %d, want %d", dep.MasterItemID, ping.ID)
	}
	trigs := s.TriggersOfItem(ping.ID)
	if len(trigs) != 1 || trigs[0].Expression != "last(/h1/agent.ping)=0" || trigs[0].TemplateID != f.trig || trigs[0].Priority != 4 ||
		!slices.Equal(trigs[0].HostIDs, []uint64{f.h1}) || trigs[0].UUID != "" {
		t.Fatalf("trigger copies: %+v", trigs)
	}
	if c := s.Copies(f.ping); len(c) != 1 || c[0] != ping {
		t.Fatalf("Copies(agent.ping) = %v", c)
	}
	if got := s.LinkedTo(f.tmpl); !slices.Equal(got, []uint64{f.h1}) {
		t.Fatalf("LinkedTo = %v", got)
	}
	f.reload(t)

	// A host without an agent interface cannot take the agent item.
	_, err := f.c.Edit(context.Background(), func(e *Edit) error { _, err := e.LinkTemplates(f.h2, []uint64{f.tmpl}, "templates"); return err })
	var le *LinkError
	if !errors.As(err, &le) || le.Host != "h2" || le.Key != "agent.ping" {
		t.Fatalf("link to a host without interface: %v", err)
	}
}

func TestLinkMergesOwnItem(t *testing.T) {
	f := newTmplFixture(t)
	var own uint64
	mustEdit(t, f.c, func(e *Edit) error {
		ids, err := e.CreateItems([]NewItem{{HostID: f.h1, ItemSpec: ItemSpec{Key: "agent.ping", Type: "zabbix_agent", ValueType: "float", Delay: "30s", Units: "ms"}}})
		own = ids[0]
		return err
	})
	f.link(t, f.h1, f.tmpl)
	it := f.c.Snapshot().Item(own)
	if it == nil || it.TemplateID != f.ping || it.ValueType != 3 || it.Delay != "1m" || it.Units != "" || it.ValueMapID != f.vm {
		t.Fatalf("the host's own item was not taken over: %+v", it)
	}
	// A second template with the same key is refused.
	var t2 uint64
	mustEdit(t, f.c, func(e *Edit) error {
		ids, err := e.CreateHosts([]NewHost{{Host: "T2", Template: true, GroupIDs: []uint64{f.group}}})
		if err != nil {
			return err
		}
		t2 = ids[0]
		_, err = e.CreateItems([]NewItem{{HostID: t2, ItemSpec: ItemSpec{Key: "agent.ping", ValueType: "uint"}}})
		return err
	})
	_, err := f.c.Edit(context.Background(), func(e *Edit) error {
		_, err := e.LinkTemplates(f.h1, []uint64{f.tmpl, t2}, "templates")
		return err
	})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Kind != ItemExists || !ce.Template || ce.Host != "h1" {
		t.Fatalf("two templates with one key: %v", err)
	}
	f.reload(t)
}

func TestNestedTemplates(t *testing.T) {
	f := newTmplFixture(t)
	var t2 uint64
	mustEdit(t, f.c, func(e *Edit) error {
		ids, err := e.CreateHosts([]NewHost{{Host: "T2", Template: true, GroupIDs: []uint64{f.group}}})
		t2 = ids[0]
		return err
	})
	f.link(t, t2, f.tmpl)
	f.link(t, f.h1, t2)
	s := f.c.Snapshot()
	mid := s.Template(t2).Item("agent.ping")
	hp := s.Host("h1").Item("agent.ping")
	if mid == nil || mid.TemplateID != f.ping || hp == nil || hp.TemplateID != mid.ID {
		t.Fatalf("nested copies: T2 %+v, h1 %+v", mid, hp)
	}
	if tt := s.TemplateTriggersOfItem(mid.ID); len(tt) != 1 || tt[0].Expression != "last(/T2/agent.ping)=0" || tt[0].TemplateID != f.trig {
		t.Fatalf("T2's trigger copy: %+v", tt)
	}
	ht := s.TriggersOfItem(hp.ID)
	if len(ht) != 1 || ht[0].Expression != "last(/h1/agent.ping)=0" {
		t.Fatalf("h1's trigger copy: %+v", ht)
	}
	// T linked to h1 directly too: twice through T2.
	_, err := f.c.Edit(context.Background(), func(e *Edit) error { _, err := e.LinkTemplates(f.h1, []uint64{t2, f.tmpl}, "templates"); return err })
	var le *LinkError
	if !errors.As(err, &le) || !le.Twice {
		t.Fatalf("a template linked twice: %v", err)
	}
	// A cycle.
	_, err = f.c.Edit(context.Background(), func(e *Edit) error { _, err := e.LinkTemplates(f.tmpl, []uint64{t2}, "templates"); return err })
	if err == nil {
		t.Fatal("a cycle of templates was linked")
	}
	// An item created on T now reaches T2 and h1.
	mustEdit(t, f.c, func(e *Edit) error {
		_, err := e.CreateItems([]NewItem{{HostID: f.tmpl, ItemSpec: ItemSpec{Key: "late", ValueType: "uint"}}})
		return err
	})
	s = f.c.Snapshot()
	if it := s.Host("h1").Item("late"); it == nil || s.AnyItem(it.TemplateID).HostID != t2 {
		t.Fatalf("a late item did not reach h1 through T2: %+v", it)
	}
	f.reload(t)
}

func TestPropagationAndOverrides(t *testing.T) {
	f := newTmplFixture(t)
	f.link(t, f.h1, f.tmpl)
	hp := f.c.Snapshot().Host("h1").Item("agent.ping").ID
	str := func(s string) *string { return &s }
	// The host changes what it may: the interval.
	mustEdit(t, f.c, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: hp, Delay: str("2m"), Status: str("disabled")}})
	})
	// ... not the name.
	_, err := f.c.Edit(context.Background(), func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: hp, Name: str("x")}}) })
	var te *TemplatedError
	if !errors.As(err, &te) || te.Field != "name" {
		t.Fatalf("renaming a copy: %v", err)
	}
	// The template's name change reaches the copy; the interval the
	// host set survives it.
	mustEdit(t, f.c, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: f.ping, Name: str("Agent ping"), Units: str("s")}})
	})
	it := f.c.Snapshot().Item(hp)
	if it.Name != "Agent ping" || it.Units != "s" || it.Delay != "2m" || it.Enabled {
		t.Fatalf("after the template's change: %+v", it)
	}
	// A field the template names overwrites the host's, even unchanged.
	mustEdit(t, f.c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: f.ping, Delay: str("1m")}}) })
	if it := f.c.Snapshot().Item(hp); it.Delay != "1m" {
		t.Fatalf("interval after the template named it: %q", it.Delay)
	}
	// Triggers: the host sets the severity, not the name.
	ht := f.c.Snapshot().TriggersOfItem(hp)[0].ID
	sev := uint8(5)
	mustEdit(t, f.c, func(e *Edit) error { return e.UpdateTriggers([]TriggerUpdate{{ID: ht, Priority: &sev}}) })
	_, err = f.c.Edit(context.Background(), func(e *Edit) error {
		return e.UpdateTriggers([]TriggerUpdate{{ID: ht, Description: str("x")}})
	})
	if !errors.As(err, &te) || te.Field != "description" || te.Name != "x" {
		t.Fatalf("renaming a trigger copy: %v", err)
	}
	mustEdit(t, f.c, func(e *Edit) error {
		return e.UpdateTriggers([]TriggerUpdate{{ID: f.trig, Description: str("gone"), Expression: str("last(/T/agent.ping)=1")}})
	})
	tr := f.c.Snapshot().Trigger(ht)
	if tr.Description != "gone" || tr.Expression != "last(/h1/agent.ping)=1" || tr.Priority != 5 {
		t.Fatalf("trigger copy after the template's change: %+v", tr)
	}
	// Copies are not deleted alone.
	for _, fn := range []func(e *Edit) error{
		func(e *Edit) error { return e.DeleteItems([]uint64{hp}) },
		func(e *Edit) error { return e.DeleteTriggers([]uint64{ht}) },
	} {
		if _, err := f.c.Edit(context.Background(), fn); !errors.As(err, &te) || te.Op != "delete" {
			t.Fatalf("deleting a copy: %v", err)
		}
	}
	f.reload(t)
	// Deleting the template's item deletes the copy and its trigger.
	mustEdit(t, f.c, func(e *Edit) error { return e.DeleteItems([]uint64{f.ping}) })
	s := f.c.Snapshot()
	if s.Item(hp) != nil || s.Trigger(ht) != nil || s.Host("h1").Item("dep") != nil || s.Host("h1").ItemCount() != 1 {
		t.Fatalf("copies left after the template's item went: %v", s.Host("h1").Items())
	}
	f.reload(t)
}

func TestUnlinkClearAndDelete(t *testing.T) {
	f := newTmplFixture(t)
	var h3 uint64
	mustEdit(t, f.c, func(e *Edit) error {
		ids, err := e.CreateHosts([]NewHost{{Host: "h3", GroupIDs: []uint64{f.group}, Interfaces: []Interface{{Type: InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.3"}}}})
		h3 = ids[0]
		return err
	})
	f.link(t, f.h1, f.tmpl)
	f.link(t, h3, f.tmpl)
	// Unlink keeps the copies as the host's own.
	f.link(t, f.h1)
	s := f.c.Snapshot()
	h := s.Host("h1")
	if h.ItemCount() != 3 || h.Item("agent.ping").TemplateID != 0 || s.TriggersOfItem(h.Item("agent.ping").ID)[0].TemplateID != 0 ||
		len(s.LinkedTemplates(f.h1)) != 0 {
		t.Fatalf("after unlink: %v", h.Items())
	}
	// The template's value map is not the host's: 6.0 drops it.
	if h.Item("agent.ping").ValueMapID != 0 {
		t.Fatal("unlink kept the template's value map")
	}
	// Clear deletes them.
	mustEdit(t, f.c, func(e *Edit) error { _, err := e.SetTemplates(f.h1, nil, nil, "templates"); return err })
	f.link(t, f.h1, f.tmpl)
	mustEdit(t, f.c, func(e *Edit) error { _, err := e.SetTemplates(f.h1, nil, []uint64{f.tmpl}, "templates"); return err })
	s = f.c.Snapshot()
	// The relink took over the three items the unlink had kept; the
	// clear deleted them with the link.
	if n := s.Host("h1").ItemCount(); n != 0 || len(s.Triggers()) != 1 || s.Triggers()[0].HostIDs[0] != h3 {
		t.Fatalf("after clear: %v", s.Host("h1").Items())
	}
	f.reload(t)
	// Deleting the template clears it from h3 and leaves unlinked
	// items without its value map.
	f.link(t, f.h1, f.tmpl)
	f.link(t, f.h1)
	mustEdit(t, f.c, func(e *Edit) error { return e.DeleteHosts([]uint64{f.tmpl}) })
	s = f.c.Snapshot()
	if s.Template(f.tmpl) != nil || s.Host("h3").ItemCount() != 0 || len(s.Triggers()) != 1 || s.ValueMap(f.vm) != nil {
		t.Fatalf("after deleting the template: h3 %v, %d triggers", s.Host("h3").Items(), len(s.Triggers()))
	}
	if it := s.Host("h1").Item("agent.ping"); it == nil || it.ValueMapID != 0 {
		t.Fatalf("h1's former copy: %+v", it)
	}
	f.reload(t)
}

// TestMigrateTemplates: templates of schema version 24 (IDs above 2^40
// in their own table) become hosts of status 3 with IDs from the hosts'
// sequence; their macros and links follow, a name a host has gets a
// suffix.
func TestMigrateTemplates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	c := reopenTrig(t, path)
	mustApply(t, c, testSpec())
	c.Close()
	const big = 1 << 40
	execAll(t, path, append(slices.Clone(downgradeTemplates),
		"INSERT INTO sqlite_sequence (name, seq) VALUES ('templates', 1099511627776)",
		"INSERT INTO templates (id, host, name) VALUES (1099511627777, 'Base', 'Base'), (1099511627778, 'web-01', 'Web template')",
		"INSERT INTO template_links (owner_id, template_id) VALUES (1099511627778, 1099511627777)",
		"INSERT INTO template_links (owner_id, template_id) SELECT id, 1099511627778 FROM hosts WHERE host = 'switch 1'",
		"INSERT INTO usermacros (owner_id, macro, value, type, description) VALUES (1099511627777, '{$BASE}', 'b', 0, '')",
		"UPDATE catalog_meta SET schema_version = 24")...)
	c2 := reopenTrig(t, path)
	s := c2.Snapshot()
	base, web := s.TemplateByName("Base"), s.TemplateByName("web-01 template")
	db := s.Host("switch 1")
	if base == nil || web == nil || base.ID >= big || web.ID != base.ID+1 || base.ID <= s.Host("web-01").ID || len(base.Ext().UUID) != 32 || base.Ext().UUID[12] != '4' {
		t.Fatalf("migrated templates: %+v %+v", base, web)
	}
	if !slices.Equal(s.LinkedTemplates(web.ID), []uint64{base.ID}) || !slices.Equal(s.LinkedTemplates(db.ID), []uint64{web.ID}) {
		t.Fatalf("links: %v %v", s.LinkedTemplates(web.ID), s.LinkedTemplates(db.ID))
	}
	if v, ok := s.UserMacros(db.ID).UserMacro("BASE", ""); !ok || v != "b" {
		t.Fatalf("{$BASE} on db-01: %q %v", v, ok)
	}
	// New hosts continue after the templates.
	mustEdit(t, c2, func(e *Edit) error {
		ids, err := e.CreateHosts([]NewHost{{Host: "new", GroupIDs: db.GroupIDs}})
		if err == nil && ids[0] <= web.ID {
			t.Errorf("new host ID %d not after the templates' %d", ids[0], web.ID)
		}
		return err
	})
}

// TestImportTemplateAndLink: an export's template with items, a value
// map, tags and triggers (under an item and at the top level) is stored
// whole; a host of the same document linking it gets the copies; a
// second import is no change; an unsupported element is refused by
// path with nothing written.
func TestImportTemplateAndLink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	c := reopenTrig(t, path)
	const doc = `
hosts:
  - host: h
    groups: [Hosts]
    interfaces: [{ip: 127.0.0.1}]
    templates: [{name: App}]
zabbix_export:
  version: '6.0'
  groups: [{uuid: 7df96b18c230490a9a0a9e2307226338, name: Templates/Applications}]
  templates:
    - uuid: 1b0b4b7f1a3a4e6c8a5b2f3d4c5e6f70
      template: App
      name: App by Zabbix agent
      description: An application.
      groups: [{name: Templates/Applications}]
      tags: [{tag: class, value: software}]
      items:
        - uuid: 2b0b4b7f1a3a4e6c8a5b2f3d4c5e6f71
          name: App ping
          key: app.ping
          history: 7d
          valuemap: {name: Up}
          inventory_link: NAME
          tags: [{tag: component, value: app}]
          triggers:
            - uuid: 3b0b4b7f1a3a4e6c8a5b2f3d4c5e6f72
              expression: last(/App/app.ping)=0
              name: App is down
              priority: HIGH
        - uuid: 4b0b4b7f1a3a4e6c8a5b2f3d4c5e6f73
          name: App value
          key: app.value
          type: DEPENDENT
          value_type: FLOAT
          master_item: {key: app.ping}
      valuemaps:
        - uuid: 5b0b4b7f1a3a4e6c8a5b2f3d4c5e6f74
          name: Up
          mappings: [{value: '0', newvalue: Down}, {type: IN_RANGE, value: '1 - 10', newvalue: Up}]
      macros: [{macro: '{$APP.MAX}', value: '5'}]
  triggers:
    - uuid: 6b0b4b7f1a3a4e6c8a5b2f3d4c5e6f75
      expression: last(/App/app.ping)=0 and last(/App/app.value)>{$APP.MAX}
      name: App is odd
      dependencies: [{name: App is down, expression: last(/App/app.ping)=0}]
`
	spec, err := ParseSpec([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res := mustApply(t, c, spec)
	if res.TemplatesCreated != 1 || res.TriggersCreated < 2 {
		t.Fatalf("apply: %+v", res)
	}
	s := c.Snapshot()
	tm := s.TemplateByName("App")
	if tm == nil || tm.Ext().UUID != "1b0b4b7f1a3a4e6c8a5b2f3d4c5e6f70" || tm.Name != "App by Zabbix agent" || tm.Description != "An application." ||
		len(tm.GroupIDs) != 1 || s.GroupByID(tm.GroupIDs[0]).Name != "Templates/Applications" || len(tm.Tags) != 1 {
		t.Fatalf("template: %+v", tm)
	}
	ping, val := tm.Item("app.ping"), tm.Item("app.value")
	if ping == nil || val == nil || ping.Type != ZabbixAgent || ping.ValueType != 3 || ping.InventoryLink != 3 || ping.Ext().UUID != "2b0b4b7f1a3a4e6c8a5b2f3d4c5e6f71" ||
		val.MasterItemID != ping.ID || val.ValueType != 0 || s.ValueMap(ping.ValueMapID).UUID != "5b0b4b7f1a3a4e6c8a5b2f3d4c5e6f74" {
		t.Fatalf("items: %+v %+v", ping, val)
	}
	tt := s.TemplateTriggersOfItem(val.ID)
	if len(tt) != 1 || tt[0].UUID != "6b0b4b7f1a3a4e6c8a5b2f3d4c5e6f75" || len(tt[0].Dependencies) != 1 {
		t.Fatalf("top-level trigger: %+v", tt)
	}
	h := s.Host("h")
	hp := h.Item("app.ping")
	if hp == nil || hp.TemplateID != ping.ID || h.Item("app.value").MasterItemID != hp.ID || len(s.TriggersOfItem(hp.ID)) != 2 {
		t.Fatalf("host h's copies: %v", h.Items())
	}
	odd := s.TriggersOfItem(h.Item("app.value").ID)
	if len(odd) != 1 || odd[0].Expression != "last(/h/app.ping)=0 and last(/h/app.value)>{$APP.MAX}" ||
		len(odd[0].Dependencies) != 1 || s.Trigger(odd[0].Dependencies[0]).Expression != "last(/h/app.ping)=0" {
		t.Fatalf("host h's copy of the top-level trigger: %+v", odd)
	}
	if again := mustApply(t, c, spec); again.Changed() {
		t.Fatalf("a second import changed something: %+v", again)
	}
	reloadMatches(t, c, path)

	// A bad element (a web scenario without steps) or one Peregrine
	// cannot store refuses the file, by path.
	bad := strings.Replace(doc, "      macros: [{macro: '{$APP.MAX}', value: '5'}]", "      macros: [{macro: '{$APP.MAX}', value: '5'}]\n      httptests: [{name: Site}]", 1)
	if _, err := ParseSpec([]byte(bad)); err == nil || !strings.Contains(err.Error(), `zabbix_export.templates[0].httptests[0].steps: cannot be empty`) {
		t.Fatalf("httptests: %v", err)
	}
	bad = strings.Replace(doc, "          inventory_link: NAME", "          inventory_link: NAME\n          allowed_hosts: 'bad host!'", 1)
	if _, err := ParseSpec([]byte(bad)); err == nil || !strings.Contains(err.Error(), `zabbix_export.templates[0].items[0].allowed_hosts: Incorrect value for field "trapper_hosts": invalid address range "bad host!".`) {
		t.Fatalf("allowed_hosts: %v", err)
	}
}
