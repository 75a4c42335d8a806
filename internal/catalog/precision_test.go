package catalog

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

func precisionSpec(prec string) Spec {
	return Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}, Items: []ItemSpec{
		{Key: "fine", TimestampPrecision: prec},
		{Key: "plain"},
	}}}}
}

// TestItemTimestampPrecision: an item's timestamp_precision is stored,
// survives a reopen, changes with the spec, is kept by an item update
// that does not name it, and is validated.
func TestItemTimestampPrecision(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, precisionSpec("ms"))
	check := func(what string, c *Catalog, want string) {
		t.Helper()
		snap := c.Snapshot()
		it := snap.Lookup("h", "fine")
		if it.Ext().TimestampPrecision != want {
			t.Fatalf("%s: precision %q, want %q", what, it.Ext().TimestampPrecision, want)
		}
		p, ok := it.Precision()
		if wp, err := history.ParsePrecision(want); ok != (want != "") || (ok && (err != nil || p != wp)) {
			t.Fatalf("%s: Precision() = %v, %v for %q", what, p, ok, want)
		}
		if _, ok := snap.Lookup("h", "plain").Precision(); ok {
			t.Fatalf("%s: an item without a precision has one", what)
		}
	}
	check("applied", c, "ms")
	c = reloadMatches(t, c, path)
	check("reopened", c, "ms")
	if res := mustApply(t, c, precisionSpec("s")); res.ItemsUpdated != 1 {
		t.Fatalf("changing the precision updated %d items", res.ItemsUpdated)
	}
	check("changed", c, "s")
	id := c.Snapshot().Lookup("h", "fine").ID
	units := "B"
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: id, Units: &units}}) })
	check("after item.update of units", c, "s")
	c = reloadMatches(t, c, path)
	check("reopened after the update", c, "s")
	mustApply(t, c, precisionSpec(""))
	check("back to the server's", c, "")

	_, err := c.Apply(context.Background(), precisionSpec("1ms"))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "hosts[0].items[0].timestamp_precision" {
		t.Fatalf("bad precision: %v", err)
	}
}

// TestMigrateV3Precision opens a database of schema version 3 (no per-item
// timestamp precision): items get the server's.
func TestMigrateV3Precision(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	want := c.Snapshot()
	c.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append(downgradeTLS[:tlsSteps:tlsSteps], "ALTER TABLE items DROP COLUMN timestamp_precision", "UPDATE catalog_meta SET schema_version = 3") {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if d := diffMigrated(want, c2.Snapshot()); d != "" {
		t.Fatalf("migrated snapshot differs:\n%s", d)
	}
	mustApply(t, c2, precisionSpec("us"))
	if got := c2.Snapshot().Lookup("h", "fine").Ext().TimestampPrecision; got != "us" {
		t.Fatalf("precision after the upgrade: %q", got)
	}
}

// TestEditTimestampPrecision: the edit API (item.create/update) stores an
// item's precision, changes and clears it, and a reopen sees what the
// snapshot saw.
func TestEditTimestampPrecision(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}}}})
	hid := c.Snapshot().Host("h").ID
	var id uint64
	mustEdit(t, c, func(e *Edit) error {
		ids, err := e.CreateItems([]NewItem{{HostID: hid, ItemSpec: ItemSpec{Key: "k", TimestampPrecision: "us"}}})
		if err == nil {
			id = ids[0]
		}
		return err
	})
	f := func(what, want string) {
		t.Helper()
		if got := c.Snapshot().Item(id).Ext().TimestampPrecision; got != want {
			t.Fatalf("%s: precision %q, want %q", what, got, want)
		}
		c = reloadMatches(t, c, path)
		if got := c.Snapshot().Item(id).Ext().TimestampPrecision; got != want {
			t.Fatalf("%s, reopened: precision %q, want %q", what, got, want)
		}
	}
	f("created", "us")
	for _, p := range []string{"s", ""} {
		mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: id, TimestampPrecision: &p}}) })
		f("updated to "+p, p)
	}
	bad := "fortnight"
	_, err := c.Edit(context.Background(), func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: id, TimestampPrecision: &bad}}) })
	var fe *FieldError
	if !errors.As(err, &fe) || !strings.HasSuffix(fe.Field, "timestamp_precision") {
		t.Fatalf("bad precision: %v", err)
	}
}
