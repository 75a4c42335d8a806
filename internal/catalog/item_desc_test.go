package catalog

import (
	"slices"
	"strings"
	"testing"
)

// TestItemDescription: an item's description is stored, read back after
// a reopen, kept by an update that does not name it and changed by one
// that does; too long is refused; a database of schema version 18 gains
// the column with "" for its items.
func TestItemDescription(t *testing.T) {
	c, path := openTrig(t)
	g := c.Snapshot().Group("Web").ID
	var ids []uint64
	mustEdit(t, c, func(e *Edit) error {
		hs, err := e.CreateHosts([]NewHost{{Host: "desc-host", GroupIDs: []uint64{g}}})
		if err != nil {
			return err
		}
		ids, err = e.CreateItems([]NewItem{{HostID: hs[0], ItemSpec: ItemSpec{Key: "k1", Description: "free space, in bytes <b>"}}, {HostID: hs[0], ItemSpec: ItemSpec{Key: "k2"}}})
		return err
	})
	c.Close()
	c = reopenTrig(t, path)
	if got := c.Snapshot().Item(ids[0]).Ext().Description; got != "free space, in bytes <b>" {
		t.Fatalf("description after reopen: %q", got)
	}
	name := "renamed"
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: ids[0], Name: &name}}) })
	if got := c.Snapshot().Item(ids[0]).Ext().Description; got != "free space, in bytes <b>" {
		t.Fatalf("description after an update without it: %q", got)
	}
	desc := "now described"
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: ids[1], Description: &desc}}) })
	long := strings.Repeat("é", 65536)
	if _, err := c.Edit(t.Context(), func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: ids[1], Description: &long}}) }); err == nil || !strings.Contains(err.Error(), "description") {
		t.Fatalf("65,536-character description: %v", err)
	}
	c.Close()
	c = reopenTrig(t, path)
	if got := c.Snapshot().Item(ids[1]).Ext().Description; got != "now described" {
		t.Fatalf("updated description after reopen: %q", got)
	}
	c.Close()

	execAll(t, path, append(slices.Clone(downgradeItemDesc), "UPDATE catalog_meta SET schema_version = 18")...)
	c2 := reopenTrig(t, path)
	defer c2.Close()
	for _, id := range ids {
		if it := c2.Snapshot().Item(id); it == nil || it.Ext().Description != "" {
			t.Fatalf("item %d after the 18 → 19 migration: %+v", id, it)
		}
	}
}
