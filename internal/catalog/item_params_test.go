package catalog

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestCheckItemParams(t *testing.T) {
	f := func(ps []ItemParam, want string) {
		t.Helper()
		var el errList
		checkItemParams(ps, "items[0].parameters", &el)
		err := el.err()
		if want == "" {
			if err != nil {
				t.Errorf("%v: %v", ps, err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want %q", ps, err, want)
		}
	}
	f([]ItemParam{{"a", "1"}, {"b", ""}}, "")
	// 6.0.14's limits: 255 and 2048 characters.
	f([]ItemParam{{strings.Repeat("n", 255), strings.Repeat("ü", 2048)}}, "")
	f([]ItemParam{{"", "x"}}, "items[0].parameters[0].name: cannot be empty")
	f([]ItemParam{{"a", "x"}, {"a", "y"}}, `items[0].parameters[1].name: parameter "a" is given twice`)
	f([]ItemParam{{strings.Repeat("n", 256), "x"}}, "longer than 255 characters")
	f([]ItemParam{{"a", strings.Repeat("v", 2049)}}, "longer than 2048 characters")
	f(make([]ItemParam, MaxItemParams+1), "more than 1000")
}

// TestItemParamsStored: a script item's parameters survive create,
// update (of them and of other fields), reopen and re-import, in their
// order, and go with the item and its host.
func TestItemParamsStored(t *testing.T) {
	c, path := openTemp(t)
	ps := []ItemParam{{"url", "{$URL}"}, {"a", "1"}}
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"},
		Items: []ItemSpec{{Key: "s1", Type: "script", ValueType: "text", Params: "return value", Parameters: ps}}}}})
	it := c.Snapshot().Lookup("h", "s1")
	if !slices.Equal(it.Ext().Parameters, ps) {
		t.Fatalf("imported: %+v", it.Ext().Parameters)
	}
	hid := it.HostID
	var id2 uint64
	mustEdit(t, c, func(e *Edit) error {
		ids, err := e.CreateItems([]NewItem{{HostID: hid, ItemSpec: ItemSpec{Key: "s2", Type: "21", ValueType: "4", Delay: "1m", Params: "return 1",
			Parameters: []ItemParam{{"z", "9"}}}}})
		if err != nil {
			return err
		}
		id2 = ids[0]
		return e.UpdateItems([]ItemUpdate{{ID: it.ID, Parameters: &[]ItemParam{{"b", "2"}, {"a", "3"}}}})
	})
	check := func(c *Catalog) {
		t.Helper()
		s := c.Snapshot()
		if got := s.Item(it.ID).Ext().Parameters; !slices.Equal(got, []ItemParam{{"b", "2"}, {"a", "3"}}) {
			t.Errorf("updated: %+v", got)
		}
		if got := s.Item(id2).Ext().Parameters; !slices.Equal(got, []ItemParam{{"z", "9"}}) {
			t.Errorf("created: %+v", got)
		}
	}
	check(c)
	c.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	check(c2)
	mustEdit(t, c2, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: it.ID, Delay: new("5m")}}) })
	if got := c2.Snapshot().Item(it.ID).Ext().Parameters; len(got) != 2 {
		t.Errorf("after another field's update: %+v", got)
	}
	// A duplicate name is refused, and nothing changes.
	_, err = c2.Edit(context.Background(), func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: it.ID, Parameters: &[]ItemParam{{"a", "1"}, {"a", "2"}}}})
	})
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("duplicate name: %v", err)
	}
	mustEdit(t, c2, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: id2, Parameters: &[]ItemParam{}}}) })
	if got := c2.Snapshot().Item(id2).Ext().Parameters; got != nil {
		t.Errorf("emptied: %+v", got)
	}
	mustApply(t, c2, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"},
		Items: []ItemSpec{{Key: "s1", Type: "script", ValueType: "text", Params: "return value", Parameters: []ItemParam{{"x", "y"}}}}}}})
	if got := c2.Snapshot().Item(it.ID).Ext().Parameters; !slices.Equal(got, []ItemParam{{"x", "y"}}) {
		t.Errorf("re-imported: %+v", got)
	}
	// Parameters on another type are refused; a type change drops them.
	_, err = c2.Edit(context.Background(), func(e *Edit) error {
		_, err := e.CreateItems([]NewItem{{HostID: hid, ItemSpec: ItemSpec{Key: "t", Parameters: []ItemParam{{"a", "1"}}}}})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "only script items have parameters, not trapper items") {
		t.Errorf("trapper with parameters: %v", err)
	}
	mustEdit(t, c2, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: id2, Parameters: &[]ItemParam{{"k", "v"}}}})
	})
	mustEdit(t, c2, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: id2, Type: new("trapper"), Delay: new("0"), Params: new("")}})
	})
	if got := c2.Snapshot().Item(id2).Ext().Parameters; got != nil {
		t.Errorf("trapper kept its parameters: %+v", got)
	}
	mustEdit(t, c2, func(e *Edit) error { return e.DeleteItems([]uint64{id2}) })
	mustEdit(t, c2, func(e *Edit) error { return e.DeleteHosts([]uint64{hid}) })
	var rows int
	if err := c2.db.QueryRow("SELECT count(*) FROM item_parameters").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("item_parameters rows left: %d (%v)", rows, err)
	}
}

// downgradeItemParams undoes the 25 → 26 migration (item parameters),
// after downgradeLLD: the first steps of every older downgrade.
var downgradeItemParams = append(slices.Clone(downgradeLLD), "DROP TABLE item_parameters")

// TestMigrateItemParams opens a database of schema version 25 (no
// item_parameters): it gains the table, and parameters can be stored.
func TestMigrateItemParams(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}}}})
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeItemParams), "UPDATE catalog_meta SET schema_version = 25")...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	mustApply(t, c2, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"},
		Items: []ItemSpec{{Key: "s", Type: "script", ValueType: "4", Params: "return 1", Parameters: []ItemParam{{"a", "b"}}}}}}})
	if got := c2.Snapshot().Lookup("h", "s").Ext().Parameters; len(got) != 1 {
		t.Fatalf("after the upgrade: %+v", got)
	}
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}
