package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

func TestNormODBC(t *testing.T) {
	var el errList
	got := normODBC(&HTTPSpec{Username: "mon", Password: "s3cret"}, ODBC, "items[0]", &el)
	if err := el.err(); err != nil || *got != (ODBCItem{Username: "mon", Password: "s3cret"}) {
		t.Errorf("login: %+v %v", got, err)
	}
	if o := normODBC(&HTTPSpec{Username: "u"}, Trapper, "i", &el); o != nil || el.err() != nil {
		t.Errorf("trapper item: %+v %v", o, el.err())
	}
	// Without a login: the DSN's own applies.
	if o := normODBC(&HTTPSpec{}, ODBC, "i", &el); o == nil || *o != (ODBCItem{}) || el.err() != nil {
		t.Errorf("no login: %+v %v", o, el.err())
	}
	f := func(user, pass, want string) {
		t.Helper()
		var el errList
		normODBC(&HTTPSpec{Username: user, Password: pass}, ODBC, "items[0]", &el)
		if err := el.err(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("normODBC(%q, %q) = %v, want an error with %q", user, pass, err, want)
		}
	}
	// The limits 6.0.14 refuses beyond (64 characters are taken).
	f(strings.Repeat("u", 65), "", "items[0].username: 65 characters is longer than the limit of 64")
	f("", strings.Repeat("p", 65), "items[0].password: 65 characters")
	f("\xff", "", "items[0].username: is not valid UTF-8")
	var el2 errList
	if normODBC(&HTTPSpec{Username: strings.Repeat("ü", 64)}, ODBC, "i", &el2); el2.err() != nil {
		t.Errorf("64 characters refused: %v", el2.err())
	}
}

func TestODBCItemExpand(t *testing.T) {
	o := &ODBCItem{Username: "mon", Password: "p"}
	if o.Expand(usermacro.NewScope()) != o {
		t.Error("a login without macros was copied")
	}
	r1, _ := usermacro.ParseRef("{$USER}")
	r2, _ := usermacro.ParseRef("{$PW}")
	d1, _ := usermacro.NewDef(r1, "mon", usermacro.Text)
	d2, _ := usermacro.NewDef(r2, "s3cret", usermacro.Secret)
	sc := usermacro.NewScope(usermacro.NewLevel([]usermacro.Def{d1, d2}))
	if got := (&ODBCItem{Username: "{$USER}", Password: "{$PW}"}).Expand(sc); *got != (ODBCItem{Username: "mon", Password: "s3cret"}) {
		t.Errorf("expanded: %+v", got)
	}
}

// TestODBCItemStored: a database monitor item's query and login survive
// create, update (of them and of other fields), reopen, and are dropped
// with a type change, the item and its host.
func TestODBCItemStored(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "db", Groups: []string{"G"},
		Interfaces: []InterfaceSpec{{Type: "agent", IP: "127.0.0.1", Port: "10050"}},
		Items: []ItemSpec{
			{Key: "db.odbc.select[sessions,pg]", Type: "odbc", ValueType: "unsigned", Params: "select count(*) from pg_stat_activity",
				HTTPSpec: HTTPSpec{Username: "mon", Password: "s3cret"}},
		}}}})
	s := c.Snapshot()
	it := s.Lookup("db", "db.odbc.select[sessions,pg]")
	if it.Ext().ODBC == nil || *it.Ext().ODBC != (ODBCItem{Username: "mon", Password: "s3cret"}) || it.Ext().Params != "select count(*) from pg_stat_activity" {
		t.Fatalf("imported: %+v %q", it.Ext().ODBC, it.Ext().Params)
	}
	if it.InterfaceID != 0 || it.Ext().HTTP != nil {
		t.Errorf("imported: interface %d, HTTP %+v: a database monitor item has neither", it.InterfaceID, it.Ext().HTTP)
	}
	hid := it.HostID
	var id2 uint64
	mustEdit(t, c, func(e *Edit) error {
		// No query and no login: 6.0 takes both.
		ids, err := e.CreateItems([]NewItem{{HostID: hid, ItemSpec: ItemSpec{Key: "db.odbc.get[all,,Driver=x]", Type: "11", ValueType: "4", Delay: "1m"}}})
		if err != nil {
			return err
		}
		id2 = ids[0]
		return e.UpdateItems([]ItemUpdate{
			{ID: it.ID, HTTP: func(h *HTTPSpec) { h.Password = "{$PG.PW}" }},
			{ID: id2, Name: new("renamed"), Params: new("select 1"), HTTP: func(h *HTTPSpec) { h.Username = "u2" }},
		})
	})
	check := func(c *Catalog) {
		t.Helper()
		s := c.Snapshot()
		a, b := s.Item(it.ID), s.Item(id2)
		if a.Ext().ODBC == nil || *a.Ext().ODBC != (ODBCItem{Username: "mon", Password: "{$PG.PW}"}) {
			t.Errorf("updated item: %+v", a.Ext().ODBC)
		}
		if b.Ext().ODBC == nil || *b.Ext().ODBC != (ODBCItem{Username: "u2"}) || b.Name != "renamed" || b.Ext().Params != "select 1" {
			t.Errorf("created item: %+v %q %q", b.Ext().ODBC, b.Name, b.Ext().Params)
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
	// An update of another field keeps the login.
	mustEdit(t, c2, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: it.ID, Delay: new("5m")}}) })
	if o := c2.Snapshot().Item(it.ID).Ext().ODBC; o == nil || o.Password != "{$PG.PW}" {
		t.Errorf("after another field's update: %+v", o)
	}
	// The item becomes a trapper item: its login and query go.
	mustEdit(t, c2, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: id2, Type: new("trapper"), Delay: new("0"), Params: new("")}})
	})
	if o := c2.Snapshot().Item(id2).Ext().ODBC; o != nil {
		t.Errorf("trapper item kept its login: %+v", o)
	}
	// The import likewise replaces the login.
	mustApply(t, c2, Spec{Hosts: []HostSpec{{Host: "db", Groups: []string{"G"},
		Items: []ItemSpec{{Key: "db.odbc.select[sessions,pg]", Type: "odbc", ValueType: "unsigned", Params: "select 2"}}}}})
	if got := c2.Snapshot().Item(it.ID); got.Ext().ODBC == nil || *got.Ext().ODBC != (ODBCItem{}) || got.Ext().Params != "select 2" {
		t.Errorf("re-imported without a login: %+v %q", got.Ext().ODBC, got.Ext().Params)
	}
	mustEdit(t, c2, func(e *Edit) error { return e.DeleteItems([]uint64{id2}) })
	mustEdit(t, c2, func(e *Edit) error { return e.DeleteHosts([]uint64{hid}) })
	var rows int
	if err := c2.db.QueryRow("SELECT count(*) FROM item_odbc").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("item_odbc rows left: %d (%v)", rows, err)
	}
}

// downgradeItemODBC undoes the 23 → 24 migration (database monitor
// logins) after downgradeTemplates.
var downgradeItemODBC = append(slices.Clone(downgradeTemplates), "DROP TABLE item_odbc")

// TestMigrateItemODBC opens a database of schema version 23 (no
// item_odbc): it gains the table, and database monitor items can be
// stored.
func TestMigrateItemODBC(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "db", Groups: []string{"G"}}}})
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeItemODBC), "UPDATE catalog_meta SET schema_version = 23")...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	mustApply(t, c2, Spec{Hosts: []HostSpec{{Host: "db", Groups: []string{"G"},
		Items: []ItemSpec{{Key: "db.odbc.select[a,b]", Type: "odbc", ValueType: "3", Params: "select 1", HTTPSpec: HTTPSpec{Username: "u"}}}}}})
	if o := c2.Snapshot().Lookup("db", "db.odbc.select[a,b]").Ext().ODBC; o == nil || o.Username != "u" {
		t.Fatalf("after the upgrade: %+v", o)
	}
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}
