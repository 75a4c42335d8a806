package catalog

import (
	"slices"
	"testing"
)

// downgradeLLD undoes the 27 → 28 migration (discovery rules,
// prototypes, discovered items and triggers) after downgradeProxies.
var downgradeLLD = append(slices.Clone(downgradeProxies), "DROP TABLE item_lld", "DROP TABLE item_discovery", "DROP TABLE trigger_discovery")

// TestMigrateLLD opens a database of schema version 27 (no LLD
// tables): it gains them, empty, and keeps its items.
func TestMigrateLLD(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"},
		Items: []ItemSpec{{Key: "t", Type: "trapper", ValueType: "3"}}}}})
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeLLD), "UPDATE catalog_meta SET schema_version = 27")...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if c2.Snapshot().Lookup("h", "t") == nil {
		t.Fatal("item lost by the migration")
	}
	for _, tab := range []string{"item_lld", "item_discovery", "trigger_discovery"} {
		var n int
		if err := c2.db.QueryRow("SELECT count(*) FROM " + tab).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s after the migration: %d rows, %v", tab, n, err)
		}
	}
}
