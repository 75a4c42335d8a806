package catalog

import (
	"slices"
	"strings"
	"testing"
)

// downgradeHostDesc turns a database of the current schema into version
// 14 but for the version number.
var downgradeHostDesc = append(slices.Clone(downgradeItemTags), "ALTER TABLE hosts DROP COLUMN description")

// TestHostDescription: a host's description is stored, read back after
// a reopen, changed by an update and left alone by one that does not
// name it and by Apply; a database of schema version 14 gains the column
// with "" for its hosts.
func TestHostDescription(t *testing.T) {
	c, path := openTrig(t)
	g := c.Snapshot().Group("Web").ID
	var ids []uint64
	mustEdit(t, c, func(e *Edit) (err error) {
		ids, err = e.CreateHosts([]NewHost{{Host: "described", GroupIDs: []uint64{g}, Description: "rack 4, café"}, {Host: "plain", GroupIDs: []uint64{g}}})
		return err
	})
	c.Close()
	c = reopenTrig(t, path)
	if got := c.Snapshot().HostByID(ids[0]).Description; got != "rack 4, café" {
		t.Fatalf("description after reopen: %q", got)
	}
	name := "Described"
	mustEdit(t, c, func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: ids[0], Name: &name}}) })
	if got := c.Snapshot().HostByID(ids[0]).Description; got != "rack 4, café" {
		t.Fatalf("description after an update without it: %q", got)
	}
	desc := "moved"
	mustEdit(t, c, func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: ids[1], Description: &desc}}) })
	if got := c.Snapshot().HostByID(ids[1]).Description; got != "moved" {
		t.Fatalf("description after update: %q", got)
	}
	long := strings.Repeat("x", 65536)
	if _, err := c.Edit(t.Context(), func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: ids[1], Description: &long}}) }); err == nil || !strings.Contains(err.Error(), "description") {
		t.Fatalf("65,536-character description: %v", err)
	}
	c.Close()
	c = reopenTrig(t, path)
	if got := c.Snapshot().HostByID(ids[1]).Description; got != "moved" {
		t.Fatalf("updated description after reopen: %q", got)
	}
	c.Close()

	execAll(t, path, append(slices.Clone(downgradeHostDesc), "UPDATE catalog_meta SET schema_version = 14")...)
	c2 := reopenTrig(t, path)
	defer c2.Close()
	for _, id := range ids {
		if h := c2.Snapshot().HostByID(id); h == nil || h.Description != "" {
			t.Fatalf("host %d after the 14 → 15 migration: %+v", id, h)
		}
	}
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}
