package catalog

import (
	"slices"
	"strings"
	"testing"
)

// downgradeItemDesc undoes the 20 → 21 (hosts' pre-shared keys) and
// 18 → 19 migrations (items' description), the first steps of every
// older downgrade.
var downgradeItemDesc = append(slices.Clone(downgradeHostPSK), "ALTER TABLE items DROP COLUMN description")

// downgradeTemplates takes away what schema version 25 added: templates
// go back to their own table (keeping their IDs) and the copies'
// template_id and the uuids go, after downgradeItemParams: the first
// steps of every older downgrade.
var downgradeTemplates = append(slices.Clone(downgradeItemParams),
	"CREATE TABLE templates (id INTEGER PRIMARY KEY AUTOINCREMENT, host TEXT NOT NULL UNIQUE, name TEXT NOT NULL)",
	"INSERT INTO templates (id, host, name) SELECT id, host, name FROM hosts WHERE status = 3",
	"DELETE FROM host_tags WHERE host_id IN (SELECT id FROM hosts WHERE status = 3)",
	"DELETE FROM hosts_groups WHERE host_id IN (SELECT id FROM hosts WHERE status = 3)",
	"DELETE FROM hosts WHERE status = 3",
	"DROP INDEX items_template", "DROP INDEX triggers_template",
	"ALTER TABLE hosts DROP COLUMN uuid", "ALTER TABLE items DROP COLUMN template_id", "ALTER TABLE items DROP COLUMN uuid",
	"ALTER TABLE triggers DROP COLUMN template_id", "ALTER TABLE triggers DROP COLUMN uuid", "ALTER TABLE valuemaps DROP COLUMN uuid",
	"ALTER TABLE items DROP COLUMN inventory_link",
)

// downgradeItemTags turns a database of schema version 19 into version
// 15 but for the version number.
var downgradeItemTags = append(slices.Clone(downgradeItemDesc), "DROP TABLE item_tags")

// itemTagsOf returns the tags of item id in c's snapshot.
func itemTagsOf(t *testing.T, c *Catalog, id uint64) []Tag {
	t.Helper()
	it := c.Snapshot().Item(id)
	if it == nil {
		t.Fatalf("item %d not found", id)
	}
	return it.Tags
}

// TestItemTags: an item's tags are stored in their order, read back
// after a reopen, replaced by an update that names them (an empty list
// removes them), kept by one that does not, validated as host tags are,
// and deleted with the item and with its host.
func TestItemTags(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	host := c.Snapshot().Host("web-01").ID
	tags := []Tag{{"itag", "iv"}, {"dup", "same"}, {"Component", "CPU"}, {"novalue", ""}}
	var ids []uint64
	mustEdit(t, c, func(e *Edit) (err error) {
		ids, err = e.CreateItems([]NewItem{
			{HostID: host, ItemSpec: ItemSpec{Key: "tagged", Tags: specOfTags(tags)}},
			{HostID: host, ItemSpec: ItemSpec{Key: "plain"}},
		})
		return err
	})
	if got := itemTagsOf(t, c, ids[0]); !slices.Equal(got, tags) {
		t.Fatalf("tags after create: %v", got)
	}
	if got := itemTagsOf(t, c, ids[1]); got != nil {
		t.Fatalf("untagged item: %v", got)
	}
	c = reloadMatches(t, c, path)
	if got := itemTagsOf(t, c, ids[0]); !slices.Equal(got, tags) {
		t.Fatalf("tags after reopen: %v", got)
	}

	units := "B"
	res := mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: ids[0], Units: &units}}) })
	if got := itemTagsOf(t, c, ids[0]); res.ItemsUpdated != 1 || !slices.Equal(got, tags) {
		t.Fatalf("tags after an update without them (%d updated): %v", res.ItemsUpdated, got)
	}
	same := slices.Clone(tags)
	if res := mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: ids[0], Tags: &same}}) }); res.ItemsUpdated != 0 {
		t.Fatalf("an update with the same tags updated %d items", res.ItemsUpdated)
	}
	repl := []Tag{{"Component", "Memory"}, {"a", "z"}}
	mustEdit(t, c, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: ids[0], Tags: &repl}, {ID: ids[1], Tags: &[]Tag{{"new", "1"}}}})
	})
	if got := itemTagsOf(t, c, ids[0]); !slices.Equal(got, repl) {
		t.Fatalf("tags after replace: %v", got)
	}
	c = reloadMatches(t, c, path)
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: ids[0], Tags: &[]Tag{}}}) })
	if got := itemTagsOf(t, c, ids[0]); got != nil {
		t.Fatalf("tags after removing them: %v", got)
	}
	c = reloadMatches(t, c, path)

	for _, bad := range []struct {
		tags []Tag
		want string
	}{
		{[]Tag{{"a", "1"}, {"a", "1"}}, `items[0].tags[1]: tag "a" with value "1" is listed twice`},
		{[]Tag{{"", "1"}}, "items[0].tags[0].tag: cannot be empty"},
		{[]Tag{{strings.Repeat("t", 256), ""}}, "items[0].tags[0].tag"},
		{[]Tag{{"a", strings.Repeat("v", 256)}}, "items[0].tags[0].value"},
	} {
		_, err := c.Edit(t.Context(), func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: ids[1], Tags: &bad.tags}}) })
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("tags %.40v: %v, want %q", bad.tags, err, bad.want)
		}
		_, err = c.Edit(t.Context(), func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: host, ItemSpec: ItemSpec{Key: "bad", Tags: specOfTags(bad.tags)}}})
			return err
		})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("create with tags %.40v: %v, want %q", bad.tags, err, bad.want)
		}
	}

	mustEdit(t, c, func(e *Edit) error { return e.DeleteItems(ids[1:]) })
	if n := countRows(t, c, "item_tags"); n != 0 {
		t.Fatalf("%d tag rows after the tagged items were deleted", n)
	}
	mustEdit(t, c, func(e *Edit) error {
		_, err := e.CreateItems([]NewItem{{HostID: host, ItemSpec: ItemSpec{Key: "again", Tags: []TagSpec{{"x", "y"}}}}})
		return err
	})
	mustEdit(t, c, func(e *Edit) error { return e.DeleteHosts([]uint64{host}) })
	if n := countRows(t, c, "item_tags"); n != 0 {
		t.Fatalf("%d tag rows after the host was deleted", n)
	}
}

// countRows counts the rows of table.
func countRows(t *testing.T, c *Catalog, table string) int {
	t.Helper()
	var n int
	if err := c.db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestApplyItemTags: the import's item tags (Zabbix's export form) make
// the item's tags equal to the list, in its order; the same document
// again changes nothing; a document without them removes them.
func TestApplyItemTags(t *testing.T) {
	c, path := openTemp(t)
	spec, err := ParseSpec([]byte(`
hosts:
  - host: tagged-host
    items:
      - key: cpu.load
        tags:
          - tag: component
            value: cpu
          - tag: scope
      - key: mem.free
`))
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, spec)
	cpu := c.Snapshot().Lookup("tagged-host", "cpu.load")
	if want := []Tag{{"component", "cpu"}, {"scope", ""}}; !slices.Equal(cpu.Tags, want) {
		t.Fatalf("imported tags %v, want %v", cpu.Tags, want)
	}
	v := c.Snapshot().Version()
	if res := mustApply(t, c, spec); res.Changed() || c.Snapshot().Version() != v {
		t.Fatalf("the same document again: %+v", res)
	}
	spec.Hosts[0].Items[0].Tags = []TagSpec{{"scope", ""}, {"component", "CPU"}}
	if res := mustApply(t, c, spec); res.ItemsUpdated != 1 {
		t.Fatalf("changed tags: %+v", res)
	}
	c = reloadMatches(t, c, path)
	if got, want := c.Snapshot().Lookup("tagged-host", "cpu.load").Tags, []Tag{{"scope", ""}, {"component", "CPU"}}; !slices.Equal(got, want) {
		t.Fatalf("tags after the second import: %v, want %v", got, want)
	}
	spec.Hosts[0].Items[0].Tags = nil
	if res := mustApply(t, c, spec); res.ItemsUpdated != 1 {
		t.Fatalf("tags left out: %+v", res)
	}
	if got := c.Snapshot().Lookup("tagged-host", "cpu.load").Tags; got != nil {
		t.Fatalf("tags after a document without them: %v", got)
	}
	spec.Hosts[0].Items[1].Tags = []TagSpec{{"a", "1"}, {"a", "1"}}
	if _, err := c.Apply(t.Context(), spec); err == nil || !strings.Contains(err.Error(), "hosts[0].items[1].tags[1]") {
		t.Fatalf("duplicate tag in the import: %v", err)
	}
}

// TestMigrateItemTags: a database of schema version 15 gains the table,
// its items have no tags, and tags can then be stored.
func TestMigrateItemTags(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	want := c.Snapshot()
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeItemTags), "UPDATE catalog_meta SET schema_version = 15")...)
	c2 := reopenTrig(t, path)
	if d := diffViews(want, c2.Snapshot()); d != "" {
		t.Fatalf("after the 15 → 16 migration (-before +after):\n%s", d)
	}
	id := c2.Snapshot().Lookup("web-01", "app.latency").ID
	mustEdit(t, c2, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: id, Tags: &[]Tag{{"k", "v"}}}}) })
	reloadMatches(t, c2, path)
}
