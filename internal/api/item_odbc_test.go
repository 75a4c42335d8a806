package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestItemODBC: a database monitor item (type 11) through item.create,
// item.update and item.get, with Zabbix 6.0's answers (recorded from
// 6.0.14): the query is params (an empty one is taken), the login is
// username and password (the password stored, never returned), no
// interface (an interfaceid given is stored as 0), any key is taken but
// the form's default example.
func TestItemODBC(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", fmt.Sprintf(`{"host":"db","groups":[{"groupid":"%s"}],"interfaces":[
		{"type":1,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050"}]}`, g), "hostids")[0]
	agentIf := f.get(t, "hostinterface.get", fmt.Sprintf(`{"hostids":"%s","output":["interfaceid"]}`, h))[0]["interfaceid"].(string)
	item := func(key, extra string) string {
		return fmt.Sprintf(`{"name":"n","key_":%q,"hostid":"%s","type":11,"value_type":3,"delay":"1m"%s}`, key, h, extra)
	}
	id := f.ids(t, "item.create", item("db.odbc.select[sessions,pg]",
		`,"params":"select count(*) from pg_stat_activity","username":"mon","password":"s3cret","interfaceid":"`+agentIf+`"`), "itemids")[0]
	get := func(id string) map[string]any {
		t.Helper()
		items := f.get(t, "item.get", fmt.Sprintf(`{"itemids":"%s","output":["type","interfaceid","params","username","password"]}`, id))
		if len(items) != 1 {
			t.Fatalf("item.get: %v", items)
		}
		return items[0]
	}
	check := func(id string, want map[string]any) {
		t.Helper()
		got := get(id)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("item.get %s = %v, want %v", k, got[k], v)
			}
		}
	}
	check(id, map[string]any{"type": "11", "interfaceid": "0", "params": "select count(*) from pg_stat_activity", "username": "mon", "password": ""})
	if it := f.cat.Snapshot().Item(itemIDOf(t, id)); it.Ext().ODBC == nil || it.Ext().ODBC.Password != "s3cret" {
		t.Fatalf("stored: %+v", it.Ext().ODBC)
	}
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","username":"{$PG.USER}","params":"select 1"}`, id))
	check(id, map[string]any{"username": "{$PG.USER}", "params": "select 1", "password": ""})
	if it := f.cat.Snapshot().Item(itemIDOf(t, id)); it.Ext().ODBC.Password != "s3cret" {
		t.Errorf("password after an update without it: %q", it.Ext().ODBC.Password)
	}
	// 6.0 takes an item without a query, a login or a well-formed key
	// (its checks then fail), and any key, but the form's example.
	for _, key := range []string{"db.odbc.get[all,,Driver=x]", "foo.bar[a,dsn]", "db.odbc.select", "db.odbc.select[<unique short description>,<dsn>]"} {
		nid := f.ids(t, "item.create", item(key, ``), "itemids")[0]
		check(nid, map[string]any{"type": "11", "params": "", "username": "", "password": ""})
	}

	long := strings.Repeat("x", 65)
	for _, c := range []struct {
		method, params string
		code           int
		want           string
	}{
		{"item.create", item(catalog.ODBC.String(), `,"delay":"0"`), -32602,
			"Item will not be refreshed. Specified update interval requires having at least one either flexible or scheduling interval."},
		{"item.create", item(defaultODBCKey, ``), -32602, "Check the key, please. Default example was passed."},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","key_":%q}`, id, defaultODBCKey), -32602, "Check the key, please. Default example was passed."},
		{"item.create", item("db.odbc.select[u,dsn]", `,"username":"`+long+`"`), -32500,
			`Value "` + long + `" is too long for field "username" - 65 characters. Allowed length is 64 characters.`},
		{"item.create", item("db.odbc.select[p,dsn]", `,"password":"`+long+`"`), -32500,
			// 6.0 quotes the password refused; Peregrine masks it.
			`Value "******" is too long for field "password" - 65 characters. Allowed length is 64 characters.`},
	} {
		_, e := f.call(t, "super", c.method, c.params)
		if e == nil || e.Code != c.code || !strings.Contains(e.Data, c.want) {
			t.Errorf("%s %s: %+v, want %d %q", c.method, c.params, e, c.code, c.want)
		}
	}
	// 64 characters are taken.
	f.ids(t, "item.create", item("db.odbc.select[l,dsn]", `,"username":"`+long[:64]+`","password":"`+long[:64]+`"`), "itemids")
	// "Check now" takes database monitor items (they are polled).
	if !checkNowType(catalog.ODBC) {
		t.Error("task.create refuses database monitor items")
	}
}
