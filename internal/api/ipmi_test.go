package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestIPMIAPI: host IPMI settings and IPMI items (type 12) through the
// API, with Zabbix 6.0's checks and words (recorded from 6.0.14 with
// its item.create, item.update and host.create). The one intended
// difference: host.get never returns ipmi_password (6.0 returns it).
func TestIPMIAPI(t *testing.T) {
	f, _, _ := newIfaceFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	hid := f.ids(t, "host.create", fmt.Sprintf(`{"host":"bmc","groups":[{"groupid":%q}],"ipmi_authtype":6,"ipmi_privilege":"4","ipmi_username":"admin","ipmi_password":"s3cret",
		"interfaces":[{"type":3,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"623"},{"type":1,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050"}]}`, g), "hostids")[0]
	if got, want := f.cat.Snapshot().Host("bmc").Ext().IPMI, (catalog.HostIPMI{AuthType: 6, Privilege: 4, Username: "admin", Password: "s3cret"}); got != want {
		t.Fatalf("stored %+v, want %+v", got, want)
	}
	got := f.get(t, "host.get", `{"output":["ipmi_authtype","ipmi_privilege","ipmi_username","ipmi_password"],"filter":{"host":"bmc"}}`)
	want := []map[string]any{{"hostid": hid, "ipmi_authtype": "6", "ipmi_privilege": "4", "ipmi_username": "admin", "ipmi_password": ""}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("host.get (-want +got):\n%s", d)
	}
	// One member: the others stay.
	f.ids(t, "host.update", fmt.Sprintf(`{"hostid":%q,"ipmi_username":5}`, hid), "hostids")
	if got, want := f.cat.Snapshot().Host("bmc").Ext().IPMI, (catalog.HostIPMI{AuthType: 6, Privilege: 4, Username: "5", Password: "s3cret"}); got != want {
		t.Fatalf("after update %+v, want %+v", got, want)
	}
	hostErr := func(params, want string) {
		t.Helper()
		_, e := f.call(t, "super", "host.update", fmt.Sprintf(`{"hostid":%q,%s}`, hid, params))
		if e == nil || e.Data != want {
			t.Errorf("host.update %s: %+v, want %q", params, e, want)
		}
	}
	hostErr(`"ipmi_authtype":"x"`, `Incorrect value "x" for int field "ipmi_authtype".`)
	hostErr(`"ipmi_privilege":3.5`, `Incorrect value "3.5" for int field "ipmi_privilege".`)
	hostErr(`"ipmi_username":"`+strings.Repeat("u", 17)+`"`, `Value "`+strings.Repeat("u", 17)+`" is too long for field "ipmi_username" - 17 characters. Allowed length is 16 characters.`)
	hostErr(`"ipmi_password":"`+strings.Repeat("p", 21)+`"`, `Value "******" is too long for field "ipmi_password" - 21 characters. Allowed length is 20 characters.`)

	var ipmiIf, agentIf string
	for _, i := range f.get(t, "hostinterface.get", fmt.Sprintf(`{"hostids":%q,"output":["type"]}`, hid)) {
		if i["type"] == "3" {
			ipmiIf = i["interfaceid"].(string)
		} else {
			agentIf = i["interfaceid"].(string)
		}
	}
	item := func(extra string) string {
		return fmt.Sprintf(`{"hostid":%q,"name":"n","type":12,"value_type":0,"delay":"1m",%s}`, hid, extra)
	}
	id := f.ids(t, "item.create", item(`"key_":"cpu.temp","interfaceid":"`+ipmiIf+`","ipmi_sensor":"CPU Temp"`), "itemids")[0]
	f.ids(t, "item.create", item(`"key_":"ipmi.get","interfaceid":"`+ipmiIf+`","value_type":4`), "itemids")
	f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"t","key_":"t","type":2,"value_type":0,"ipmi_sensor":"kept"}`, hid), "itemids")
	items := f.get(t, "item.get", fmt.Sprintf(`{"hostids":%q,"output":["key_","type","ipmi_sensor"],"sortfield":"key_"}`, hid))
	wantItems := []map[string]any{
		{"itemid": id, "key_": "cpu.temp", "type": "12", "ipmi_sensor": "CPU Temp"},
		{"itemid": items[1]["itemid"], "key_": "ipmi.get", "type": "12", "ipmi_sensor": ""},
		{"itemid": items[2]["itemid"], "key_": "t", "type": "2", "ipmi_sensor": "kept"},
	}
	if d := cmp.Diff(wantItems, items); d != "" {
		t.Fatalf("item.get (-want +got):\n%s", d)
	}
	itemErr := func(method, params, want string) {
		t.Helper()
		_, e := f.call(t, "super", method, params)
		if e == nil || e.Data != want {
			t.Errorf("%s %s: %+v, want %q", method, params, e, want)
		}
	}
	empty := `Incorrect value for field "ipmi_sensor": cannot be empty.`
	itemErr("item.create", item(`"key_":"a","interfaceid":"`+ipmiIf+`"`), empty)
	itemErr("item.create", item(`"key_":"a","interfaceid":"`+ipmiIf+`","ipmi_sensor":""`), empty)
	itemErr("item.create", item(`"key_":"ipmi.get[x]","interfaceid":"`+ipmiIf+`"`), empty)
	itemErr("item.create", item(`"key_":"a","interfaceid":"`+agentIf+`","ipmi_sensor":"X"`), "Item uses incorrect interface type.")
	itemErr("item.create", item(`"key_":"a"`), "No interface found.")
	itemErr("item.create", item(`"key_":"a","interfaceid":"`+ipmiIf+`","ipmi_sensor":"`+strings.Repeat("x", 129)+`"`),
		`Value "`+strings.Repeat("x", 129)+`" is too long for field "ipmi_sensor" - 129 characters. Allowed length is 128 characters.`)
	itemErr("item.update", fmt.Sprintf(`{"itemid":%q,"ipmi_sensor":""}`, id), empty)
	// A trapper item without a sensor cannot become an IPMI one; one
	// with a sensor can.
	tid := f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"u","key_":"u","type":2,"value_type":0}`, hid), "itemids")[0]
	itemErr("item.update", fmt.Sprintf(`{"itemid":%q,"type":12,"interfaceid":%q}`, tid, ipmiIf), empty)
	f.ids(t, "item.update", fmt.Sprintf(`{"itemid":%q,"type":12,"interfaceid":%q}`, items[2]["itemid"], ipmiIf), "itemids")
	f.ids(t, "item.update", fmt.Sprintf(`{"itemid":%q,"ipmi_sensor":"name:(7.1).CPU Temp"}`, id), "itemids")
	if got := f.cat.Snapshot().Host("bmc").Item("cpu.temp").Ext().IPMISensor; got != "name:(7.1).CPU Temp" {
		t.Fatalf("updated sensor %q", got)
	}
}
