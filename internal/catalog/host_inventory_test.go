package catalog

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// downgradeHostInventory undoes the 30 → 31 migration (hosts'
// inventory), after downgradeLLDHosts.
var downgradeHostInventory = append(slices.Clone(downgradeLLDHosts), "DROP TABLE host_inventory")

// TestHostInventory: disabled (nil) by default; set on create, changed
// and disabled on update, kept across a reopen, dropped with its host;
// bad fields refused in 6.0's words (recorded from 6.0.14).
func TestHostInventory(t *testing.T) {
	ctx := context.Background()
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "plain", Groups: []string{"G"}}}})
	g := c.Snapshot().Group("G").ID
	var ids []uint64
	_, err := c.Edit(ctx, func(e *Edit) error {
		var err error
		ids, err = e.CreateHosts([]NewHost{{Host: "inv", GroupIDs: []uint64{g}, Inventory: &HostInventory{Mode: InventoryManual, Fields: map[string]string{"os": "Debian", "location": ""}}}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if inv := c.Snapshot().Host("plain").Ext().Inventory; inv != nil {
		t.Errorf("default inventory: %+v", inv)
	}
	inv := c.Snapshot().Host("inv").Ext().Inventory
	if inv == nil || inv.Mode != InventoryManual || len(inv.Fields) != 1 || inv.Fields["os"] != "Debian" {
		t.Fatalf("created: %+v", inv)
	}
	update := func(u HostInventory) error {
		_, err := c.Edit(ctx, func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: ids[0], Inventory: &u}}) })
		return err
	}
	if err := update(HostInventory{Mode: InventoryAutomatic, Fields: map[string]string{"os": "Debian", "location": "r1"}}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	inv = c.Snapshot().Host("inv").Ext().Inventory
	if inv == nil || inv.Mode != InventoryAutomatic || inv.Fields["location"] != "r1" {
		t.Fatalf("reopened: %+v", inv)
	}
	for _, bad := range []struct {
		inv  HostInventory
		want string
	}{
		{HostInventory{Mode: 2}, `Incorrect value for field "inventory_mode": value must be one of -1, 0, 1.`},
		{HostInventory{Fields: map[string]string{"foo": "x"}}, `Incorrect inventory field "foo".`},
		{HostInventory{Fields: map[string]string{"os": strings.Repeat("a", 129)}}, `is too long for field "os" - 129 characters. Allowed length is 128 characters.`},
	} {
		if err := update(bad.inv); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want %q", bad.inv, err, bad.want)
		}
	}
	if err := update(HostInventory{Mode: InventoryDisabled}); err != nil {
		t.Fatal(err)
	}
	if inv := c.Snapshot().Host("inv").Ext().Inventory; inv != nil {
		t.Errorf("disabled: %+v", inv)
	}
	var n int
	if err := c.db.QueryRow("SELECT count(*) FROM host_inventory").Scan(&n); err != nil || n != 0 {
		t.Errorf("rows after disabling: %d (%v)", n, err)
	}
	// Disabled again, given as mode -1 beside another change (what the
	// host form sends): the host keeps no inventory at all, not one of
	// mode -1 (host.get panicked on it).
	name := "renamed"
	if _, err := c.Edit(ctx, func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: ids[0], Name: &name, Inventory: &HostInventory{Mode: InventoryDisabled}}})
	}); err != nil {
		t.Fatal(err)
	}
	if h := c.Snapshot().Host("inv"); h.Name != "renamed" || h.Ext().Inventory != nil {
		t.Errorf("renamed with inventory mode -1: name %q, inventory %+v", h.Name, h.Ext().Inventory)
	}
}

func TestMigrateHostInventory(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}}}})
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeHostInventory), "UPDATE catalog_meta SET schema_version = 30")...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if inv := c2.Snapshot().Host("h").Ext().Inventory; inv != nil {
		t.Errorf("after the upgrade: %+v", inv)
	}
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}

// TestExportHostInventory: a host's inventory in 6.0.14's export
// (recorded: fields in 6.0's order under inventory, then inventory_mode
// with MANUAL left out).
func TestExportHostInventory(t *testing.T) {
	ctx := context.Background()
	c, _ := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "plain", Groups: []string{"Linux servers"}}}})
	g := c.Snapshot().Group("Linux servers").ID
	var ids []uint64
	_, err := c.Edit(ctx, func(e *Edit) error {
		var err error
		ids, err = e.CreateHosts([]NewHost{
			{Host: "s5mig-exp1", GroupIDs: []uint64{g}, Inventory: &HostInventory{Mode: InventoryManual, Fields: map[string]string{"poc_1_name": "x", "location": "r 1", "os": "Debian"}}},
			{Host: "s5mig-exp2", GroupIDs: []uint64{g}, Inventory: &HostInventory{Mode: InventoryAutomatic}},
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Snapshot().Export(ExportOptions{Hosts: ids, Format: "yaml", Date: time.Date(2026, 11, 29, 17, 17, 33, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	want := `zabbix_export:
  version: '6.0'
  date: '2026-11-29T17:17:33Z'
  groups:
    -
      uuid: dc579cd7a1a34222933f24f52a68bcd8
      name: 'Linux servers'
  hosts:
    -
      host: s5mig-exp1
      name: s5mig-exp1
      groups:
        -
          name: 'Linux servers'
      inventory:
        os: Debian
        location: 'r 1'
        poc_1_name: x
    -
      host: s5mig-exp2
      name: s5mig-exp2
      groups:
        -
          name: 'Linux servers'
      inventory_mode: AUTOMATIC
`
	if string(got) != want {
		t.Errorf("export:\n%s\nwant (recorded from 6.0.14):\n%s", got, want)
	}
}
