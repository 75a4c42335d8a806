package api

import (
	"fmt"
	"strings"
	"testing"
)

// TestItemInventoryAndStorage: an item's inventory_link, history and
// trends and its name's length through item.create and item.update,
// refused as Zabbix 6.0 refuses them (recorded from 6.0.14 on the
// peer, host s9-itemform-host): a field number out of 0..70, two items
// of a host filling one field, a history or trends that is no time unit
// or out of range, a name over 255 characters; a refused object saves
// nothing.
func TestItemInventoryAndStorage(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", fmt.Sprintf(`{"host":"inv-host","groups":[{"groupid":"%s"}]}`, g), "hostids")[0]
	item := func(name, key, extra string) string {
		return fmt.Sprintf(`{"name":%q,"key_":%q,"hostid":"%s","type":2,"value_type":3%s}`, name, key, h, extra)
	}
	inv1 := f.ids(t, "item.create", item("inv1", "k4", `,"inventory_link":5`), "itemids")[0]
	// A log item may fill a field too (6.0.14 takes it).
	logItem := f.ids(t, "item.create", fmt.Sprintf(`{"name":"inv3","key_":"k6","hostid":"%s","type":2,"value_type":2,"inventory_link":6}`, h), "itemids")[0]
	get := func(id, field string) any {
		t.Helper()
		l := f.get(t, "item.get", fmt.Sprintf(`{"itemids":"%s","output":[%q,"name"]}`, id, field))
		if len(l) != 1 {
			t.Fatalf("item.get %s: %v", id, l)
		}
		return l[0][field]
	}
	if get(inv1, "inventory_link") != "5" || get(logItem, "inventory_link") != "6" {
		t.Fatalf("inventory_link stored as %v and %v, want 5 and 6", get(inv1, "inventory_link"), get(logItem, "inventory_link"))
	}
	long := strings.Repeat("n", 256)
	for _, c := range []struct{ method, params, want string }{
		{"item.create", item("inv2", "k5", `,"inventory_link":5`),
			`Two items ("inv2" and "inv1") cannot populate one host inventory field "OS", this would lead to a conflict.`},
		{"item.create", item("inv4", "k7", `,"inventory_link":71`),
			`Item "inv4" cannot populate a missing host inventory field number "71". Choices are: from 0 (do not populate) to 70.`},
		{"item.create", `[` + item("a", "ka", `,"inventory_link":9`) + `,` + item("b", "kb", `,"inventory_link":9`) + `]`,
			`Two items ("a" and "b") cannot populate one host inventory field "Serial number B", this would lead to a conflict.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","inventory_link":5}`, logItem),
			`Two items ("inv3" and "inv1") cannot populate one host inventory field "OS", this would lead to a conflict.`},
		{"item.create", item("h", "h1", `,"history":"1s"`), `Incorrect value for field "history": value must be one of 0, 3600-788400000.`},
		{"item.create", item("h", "h2", `,"history":"abc"`), `Incorrect value for field "history": a time unit is expected.`},
		{"item.create", item("h", "h3", `,"history":"1.5h"`), `Incorrect value for field "history": a time unit is expected.`},
		{"item.create", item("h", "h4", `,"history":"26y"`), `Incorrect value for field "history": a time unit is expected.`},
		{"item.create", item("h", "h5", `,"trends":"abc"`), `Incorrect value for field "trends": a time unit is expected.`},
		{"item.create", item("h", "h6", `,"trends":"1h"`), `Incorrect value for field "trends": value must be one of 0, 86400-788400000.`},
		{"item.update", fmt.Sprintf(`{"itemid":"%s","name":"renamed","history":"abc"}`, inv1), `Incorrect value for field "history": a time unit is expected.`},
	} {
		_, e := f.call(t, "super", c.method, c.params)
		if e == nil || e.Code != -32602 || e.Data != c.want {
			t.Errorf("%s %s: %+v, want -32602 %q", c.method, c.params, e, c.want)
		}
	}
	_, e := f.call(t, "super", "item.create", item(long, "k1", ""))
	if want := `Value "` + long + `" is too long for field "name" - 256 characters. Allowed length is 255 characters.`; e == nil || e.Code != -32500 || e.Data != want {
		t.Errorf("a 256-character name: %+v", e)
	}
	// Nothing of a refused call was saved; a swap of fields in one
	// update is taken.
	if n := len(f.get(t, "item.get", fmt.Sprintf(`{"hostids":"%s"}`, h))); n != 2 {
		t.Errorf("%d items after the refusals, want 2", n)
	}
	if get(inv1, "name") != "inv1" {
		t.Errorf("a refused update renamed the item")
	}
	f.ok(t, "item.update", fmt.Sprintf(`[{"itemid":"%s","inventory_link":6},{"itemid":"%s","inventory_link":5}]`, inv1, logItem))
	if get(inv1, "inventory_link") != "6" || get(logItem, "inventory_link") != "5" {
		t.Errorf("after the swap: %v and %v", get(inv1, "inventory_link"), get(logItem, "inventory_link"))
	}
}
