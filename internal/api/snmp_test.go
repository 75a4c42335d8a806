package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSNMPInterfaceAndItemAPI: an SNMPv3 interface's details are stored
// complete and returned as Zabbix 6.0 returns them (passphrases
// included), bad details are refused naming the field, and SNMP items
// take and return snmp_oid.
func TestSNMPInterfaceAndItemAPI(t *testing.T) {
	f, _, _ := newIfaceFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	_, e := f.call(t, "super", "host.create", fmt.Sprintf(`{"host":"bad","groups":[{"groupid":%q}],"interfaces":[
		{"type":2,"main":1,"useip":1,"ip":"127.0.0.2","details":{"version":"3","securitylevel":"7"}}]}`, g))
	if e == nil || !strings.Contains(e.Data, "securitylevel") {
		t.Fatalf("securitylevel 7 accepted: %+v", e)
	}
	hid := f.ids(t, "host.create", fmt.Sprintf(`{"host":"sw","groups":[{"groupid":%q}],"interfaces":[
		{"type":2,"main":1,"useip":1,"ip":"127.0.0.2","port":"1161","details":{"version":"3","securityname":"peregrine",
		"securitylevel":"2","authprotocol":"1","authpassphrase":"authpass123","privprotocol":"1","privpassphrase":"privpass123"}}]}`, g), "hostids")[0]
	got := f.get(t, "hostinterface.get", fmt.Sprintf(`{"hostids":[%q],"output":["details"]}`, hid))
	want := map[string]any{"version": "3", "bulk": "1", "securityname": "peregrine", "securitylevel": "2", "authprotocol": "1",
		"authpassphrase": "authpass123", "privprotocol": "1", "privpassphrase": "privpass123", "contextname": ""}
	if len(got) != 1 {
		t.Fatalf("interfaces %v", got)
	}
	if d := cmp.Diff(want, got[0]["details"]); d != "" {
		t.Fatalf("details (-want +got):\n%s", d)
	}
	_, e = f.call(t, "super", "item.create", fmt.Sprintf(`{"hostid":%q,"name":"up","key_":"up","type":20,"value_type":3,"delay":"1m","snmp_oid":"FOO-MIB::x.0"}`, hid))
	if e == nil || !strings.Contains(e.Data, "snmp_oid") || !strings.Contains(e.Data, "numerically") {
		t.Fatalf("unknown MIB name accepted: %+v", e)
	}
	iid := f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"up","key_":"up","type":20,"value_type":3,"delay":"1m","snmp_oid":"SNMPv2-MIB::sysUpTime.0"}`, hid), "itemids")[0]
	items := f.get(t, "item.get", fmt.Sprintf(`{"itemids":[%q],"output":["snmp_oid","type","interfaceid"]}`, iid))
	if len(items) != 1 || items[0]["snmp_oid"] != "SNMPv2-MIB::sysUpTime.0" || items[0]["type"] != "20" || items[0]["interfaceid"] == "0" {
		t.Fatalf("item.get %v", items)
	}
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":%q,"snmp_oid":"1.3.6.1.2.1.1.3.0"}`, iid))
	if got := f.cat.Snapshot().Host("sw").Item("up").SNMPOID; got != "1.3.6.1.2.1.1.3.0" {
		t.Fatalf("updated snmp_oid %q", got)
	}
	f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"traps","key_":"snmptrap.fallback","type":17,"value_type":2}`, hid), "itemids")
}
