package catalog

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// downgradeValueMaps turns a database of the current schema into version
// 11 but for the version number (14: event names, 13: global scripts,
// whose migration makes its table only if it is missing; 12: value maps).
var downgradeValueMaps = append(slices.Clone(downgradeEventName), "DROP TABLE valuemaps", "ALTER TABLE items DROP COLUMN valuemap_id")

func TestValueMapMap(t *testing.T) {
	m := &ValueMap{Mappings: []Mapping{
		{Type: MapEqual, Value: "1", NewValue: "Up"},
		{Type: MapEqual, Value: "0", NewValue: "Down"},
		{Type: MapRange, Value: "10-20,-5--1", NewValue: "Odd"},
		{Type: MapGreaterOrEqual, Value: "100", NewValue: "Big"},
		{Type: MapLessOrEqual, Value: "-100", NewValue: "Very negative"},
		{Type: MapRegexp, Value: "^err", NewValue: "Error"},
		{Type: MapDefault, NewValue: "Other"},
	}}
	f := func(in, want string, wantOK bool) {
		t.Helper()
		got, ok := m.Map(in)
		if got != want || ok != wantOK {
			t.Errorf("Map(%q) = %q, %v; want %q, %v", in, got, ok, want, wantOK)
		}
	}
	f("1", "Up", true)
	f("1.0", "Up", true) // numbers compare as numbers
	f("0", "Down", true)
	f("15", "Odd", true)
	f("-3", "Odd", true)
	f("250", "Big", true)
	f("-101", "Very negative", true)
	f("error: disk", "Error", true)
	f("7", "Other", true) // the default applies only when nothing else does
	none := &ValueMap{Mappings: []Mapping{{Type: MapEqual, Value: "1", NewValue: "Up"}}}
	if got, ok := none.Map("2"); ok || got != "" {
		t.Errorf("no match: %q, %v", got, ok)
	}
}

// TestEditValueMaps creates, updates and deletes value maps through Edit
// and links items to them; every step survives a reload, and a deleted
// map leaves its items without one.
func TestEditValueMaps(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	s := c.Snapshot()
	web, sw := s.Host("web-01"), s.Host("switch 1")
	req := s.Lookup("web-01", "app.requests")
	var vm uint64
	res := mustEdit(t, c, func(e *Edit) error {
		ids, err := e.CreateValueMaps([]ValueMap{{HostID: web.ID, Name: "Service state", Mappings: []Mapping{
			{Type: MapEqual, Value: "0", NewValue: "Down"}, {Type: MapEqual, Value: "1", NewValue: "Up"}}}})
		if err != nil {
			return err
		}
		vm = ids[0]
		return e.UpdateItems([]ItemUpdate{{ID: req.ID, ValueMapID: &vm}})
	})
	if res.ValueMapsCreated != 1 || res.ItemsUpdated != 1 {
		t.Fatalf("edit result %+v", res)
	}
	c = reloadMatches(t, c, path)
	s = c.Snapshot()
	m := s.ValueMap(vm)
	if m == nil || m.HostID != web.ID || len(m.Mappings) != 2 || s.Item(req.ID).ValueMapID != vm {
		t.Fatalf("value map %+v, item's valuemap %d", m, s.Item(req.ID).ValueMapID)
	}
	if got, _ := m.Map("1"); got != "Up" {
		t.Fatalf("Map(1) = %q", got)
	}

	// Errors: a map of another host, a duplicate name, bad mappings.
	icmp := s.Lookup("switch 1", "icmpping")
	_, err := c.Edit(t.Context(), func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: icmp.ID, ValueMapID: &vm}}) })
	if err == nil || !strings.Contains(err.Error(), "items[0].valuemapid") {
		t.Errorf("a map of another host: %v", err)
	}
	_, err = c.Edit(t.Context(), func(e *Edit) error {
		_, err := e.CreateValueMaps([]ValueMap{
			{HostID: web.ID, Name: "Service state", Mappings: []Mapping{{Value: "1", NewValue: "x"}}},
			{HostID: sw.ID, Name: "Bad", Mappings: []Mapping{{Type: MapRange, Value: "a-b", NewValue: "x"}, {Type: MapRegexp, Value: "(", NewValue: "y"}, {Type: 9, NewValue: "z"}}},
			{HostID: sw.ID, Name: "Empty"},
		})
		return err
	})
	for _, want := range []string{"valuemaps[0].name", "valuemaps[1].mappings[0].value", "valuemaps[1].mappings[1].value", "valuemaps[1].mappings[2].type", "valuemaps[2].mappings"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad value maps: error %v does not name %s", err, want)
		}
	}

	// Update, then delete: the item loses its map.
	name := "Service status"
	res = mustEdit(t, c, func(e *Edit) error {
		return e.UpdateValueMaps([]ValueMapUpdate{{ID: vm, Name: &name, Mappings: &[]Mapping{{Type: MapDefault, NewValue: "Unknown"}}}})
	})
	if res.ValueMapsUpdated != 1 || c.Snapshot().ValueMap(vm).Name != name {
		t.Fatalf("update: %+v, %+v", res, c.Snapshot().ValueMap(vm))
	}
	mustEdit(t, c, func(e *Edit) error { return e.DeleteValueMaps([]uint64{vm}) })
	if c.Snapshot().ValueMap(vm) != nil || c.Snapshot().Item(req.ID).ValueMapID != 0 {
		t.Fatalf("after delete: map %+v, item's valuemap %d", c.Snapshot().ValueMap(vm), c.Snapshot().Item(req.ID).ValueMapID)
	}
	c = reloadMatches(t, c, path)
	_, err = c.Edit(t.Context(), func(e *Edit) error { return e.DeleteValueMaps([]uint64{vm}) })
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("deleting a deleted map: %v", err)
	}

	// A host's maps go with it.
	mustEdit(t, c, func(e *Edit) error {
		_, err := e.CreateValueMaps([]ValueMap{{HostID: sw.ID, Name: "Link", Mappings: []Mapping{{Value: "1", NewValue: "up"}}}})
		return err
	})
	mustEdit(t, c, func(e *Edit) error { return e.DeleteHosts([]uint64{sw.ID}) })
	if n := len(c.Snapshot().ValueMaps()); n != 0 {
		t.Fatalf("%d value maps left after deleting their host", n)
	}
	reloadMatches(t, c, path)
}

const valueMapYAML = `
hosts:
  - host: web-01
    groups: [Linux servers]
    valuemaps:
      - uuid: 2a3b
        name: Service state
        mappings:
          - value: '0'
            newvalue: Down
          - value: '1'
            newvalue: Up
          - type: DEFAULT
            newvalue: Unknown
    items:
      - key: service.state
        value_type: unsigned
        valuemap:
          name: Service state
      - key: app.latency
`

// TestApplyValueMaps imports value maps in the form of Zabbix's YAML
// export: the map is created and the item points at it; applying again
// changes nothing; changed mappings update the map.
func TestApplyValueMaps(t *testing.T) {
	c, path := openTemp(t)
	spec, err := ParseSpec([]byte(valueMapYAML))
	if err != nil {
		t.Fatal(err)
	}
	res := mustApply(t, c, spec)
	if res.ValueMapsCreated != 1 {
		t.Fatalf("apply: %+v", res)
	}
	s := c.Snapshot()
	it := s.Lookup("web-01", "service.state")
	m := s.ValueMap(it.ValueMapID)
	if m == nil || m.Name != "Service state" || len(m.Mappings) != 3 || m.Mappings[2].Type != MapDefault {
		t.Fatalf("imported map %+v", m)
	}
	if s.Lookup("web-01", "app.latency").ValueMapID != 0 {
		t.Error("an item without valuemap got one")
	}
	if res := mustApply(t, c, spec); res.Changed() {
		t.Errorf("second apply changed %+v", res)
	}
	spec.Hosts[0].ValueMaps[0].Mappings[1].NewValue = "Running"
	if res := mustApply(t, c, spec); res.ValueMapsUpdated != 1 {
		t.Errorf("changed mapping: %+v", res)
	}
	c = reloadMatches(t, c, path)
	if got, _ := c.Snapshot().ValueMap(it.ValueMapID).Map("1"); got != "Running" {
		t.Errorf("after the update Map(1) = %q", got)
	}

	// An item naming a map the host does not have.
	spec.Hosts[0].Items[1].ValueMap = &ValueMapRefSpec{Name: "Nope"}
	if _, err := c.Apply(t.Context(), spec); err == nil || !strings.Contains(err.Error(), `no value map "Nope"`) {
		t.Errorf("unknown map: %v", err)
	}
}

// TestMigrateV11ValueMaps opens a database of schema version 11 (no
// value maps): it is upgraded and value maps can be created.
func TestMigrateV11ValueMaps(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	want := c.Snapshot()
	c.Close()
	execAll(t, path, append(downgradeValueMaps, "UPDATE catalog_meta SET schema_version = 11")...)
	c2 := reopenTrig(t, path)
	if d := diffViews(want, c2.Snapshot()); d != "" {
		t.Fatalf("migrated snapshot differs:\n%s", d)
	}
	mustEdit(t, c2, func(e *Edit) error {
		_, err := e.CreateValueMaps([]ValueMap{{HostID: want.Host("web-01").ID, Name: "m", Mappings: []Mapping{{Value: "1", NewValue: "one"}}}})
		return err
	})
}
