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
		{"type":2,"main":1,"useip":1,"ip":"127.0.0.2","details":{"version":"3","securitylevel":"7"},"dns":"","port":"161"}]}`, g))
	if e == nil || !strings.Contains(e.Data, "securitylevel") {
		t.Fatalf("securitylevel 7 accepted: %+v", e)
	}
	hid := f.ids(t, "host.create", fmt.Sprintf(`{"host":"sw","groups":[{"groupid":%q}],"interfaces":[
		{"type":2,"main":1,"useip":1,"ip":"127.0.0.2","port":"1161","details":{"version":"3","securityname":"peregrine",
		"securitylevel":"2","authprotocol":"1","authpassphrase":"authpass123","privprotocol":"1","privpassphrase":"privpass123"},"dns":""}]}`, g), "hostids")[0]
	got := f.get(t, "hostinterface.get", fmt.Sprintf(`{"hostids":[%q],"output":["details"]}`, hid))
	want := map[string]any{"version": "3", "bulk": "1", "securityname": "peregrine", "securitylevel": "2", "authprotocol": "1",
		"authpassphrase": "authpass123", "privprotocol": "1", "privpassphrase": "privpass123", "contextname": ""}
	if len(got) != 1 {
		t.Fatalf("interfaces %v", got)
	}
	if d := cmp.Diff(want, got[0]["details"]); d != "" {
		t.Fatalf("details (-want +got):\n%s", d)
	}
	snmpIf := f.cat.Snapshot().Host("sw").Interfaces[0].ID
	_, e = f.call(t, "super", "item.create", fmt.Sprintf(`{"hostid":%q,"name":"up","key_":"up","type":20,"value_type":3,"delay":"1m","interfaceid":"%d","snmp_oid":"FOO-MIB::x.0"}`, hid, snmpIf))
	if e == nil || !strings.Contains(e.Data, "snmp_oid") || !strings.Contains(e.Data, "numerically") {
		t.Fatalf("unknown MIB name accepted: %+v", e)
	}
	iid := f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"up","key_":"up","type":20,"value_type":3,"delay":"1m","interfaceid":"%d","snmp_oid":"SNMPv2-MIB::sysUpTime.0"}`, hid, snmpIf), "itemids")[0]
	items := f.get(t, "item.get", fmt.Sprintf(`{"itemids":[%q],"output":["snmp_oid","type","interfaceid"]}`, iid))
	if len(items) != 1 || items[0]["snmp_oid"] != "SNMPv2-MIB::sysUpTime.0" || items[0]["type"] != "20" || items[0]["interfaceid"] == "0" {
		t.Fatalf("item.get %v", items)
	}
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":%q,"snmp_oid":"1.3.6.1.2.1.1.3.0"}`, iid))
	if got := f.cat.Snapshot().Host("sw").Item("up").Ext().SNMPOID; got != "1.3.6.1.2.1.1.3.0" {
		t.Fatalf("updated snmp_oid %q", got)
	}
	f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"traps","key_":"snmptrap.fallback","type":17,"value_type":2,"delay":"0"}`, hid), "itemids")
}

// hostinterface.create/update/delete change one interface of a host,
// with the same validation as host.update (SNMP details included), and
// refuse to delete an interface an item uses.
func TestHostInterfaceWrite(t *testing.T) {
	f, _, _ := newIfaceFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	hid := f.ids(t, "host.create", fmt.Sprintf(`{"host":"sw","groups":[{"groupid":%q}],"interfaces":[{"type":1,"main":1,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050"}]}`, g), "hostids")[0]
	_, e := f.call(t, "super", "hostinterface.create", fmt.Sprintf(`{"hostid":%q,"type":2,"main":1,"useip":1,"ip":"127.0.0.5","dns":"","port":"161","details":{"version":"2"}}`, hid))
	if e == nil || !strings.Contains(e.Data, "community") {
		t.Fatalf("v2 without community accepted: %+v", e)
	}
	ids := f.ids(t, "hostinterface.create", fmt.Sprintf(`[{"hostid":%q,"type":2,"main":1,"useip":1,"ip":"127.0.0.5","dns":"","port":"1161","details":{"version":"2","community":"c1"}}]`, hid), "interfaceids")
	snmpIf := f.cat.Snapshot().Host("sw").MainInterface(2)
	if len(ids) != 1 || snmpIf == nil || ids[0] != fmt.Sprint(snmpIf.ID) || snmpIf.Port != "1161" || snmpIf.Details["bulk"] != "1" {
		t.Fatalf("created %v: %+v", ids, snmpIf)
	}
	f.ok(t, "hostinterface.update", fmt.Sprintf(`{"interfaceid":%q,"details":{"version":"3","securityname":"u","securitylevel":"1","authprotocol":"3","authpassphrase":"secret-pass"}}`, ids[0]))
	up := f.cat.Snapshot().Interface(snmpIf.ID)
	if up.Details["version"] != "3" || up.Details["authprotocol"] != "3" || up.Details["community"] != "" || up.Port != "1161" || up.IP != "127.0.0.5" {
		t.Fatalf("updated %+v", up)
	}
	_, e = f.call(t, "super", "hostinterface.update", fmt.Sprintf(`{"interfaceid":%q,"details":{"version":"3","privprotocol":"9"}}`, ids[0]))
	if e == nil || !strings.Contains(e.Data, "privprotocol") {
		t.Fatalf("privprotocol 9 accepted: %+v", e)
	}
	f.ids(t, "item.create", fmt.Sprintf(`{"hostid":%q,"name":"up","key_":"up","type":20,"value_type":3,"delay":"1m","snmp_oid":"1.3.6.1.2.1.1.3.0","interfaceid":%q}`, hid, ids[0]), "itemids")
	if _, e = f.call(t, "super", "hostinterface.delete", fmt.Sprintf(`[%q]`, ids[0])); e == nil {
		t.Fatal("an interface in use was deleted")
	}
	itemID := fmt.Sprint(f.cat.Snapshot().Host("sw").Item("up").ID)
	f.ok(t, "item.delete", fmt.Sprintf(`[%q]`, itemID))
	f.ok(t, "hostinterface.delete", fmt.Sprintf(`[%q]`, ids[0]))
	if f.cat.Snapshot().Interface(snmpIf.ID) != nil || len(f.cat.Snapshot().Host("sw").Interfaces) != 1 {
		t.Fatalf("interfaces after delete: %+v", f.cat.Snapshot().Host("sw").Interfaces)
	}
	// Refusals in Zabbix's words, recorded from Zabbix 6.0.14.
	const noPerm = "No permissions to referred object or it does not exist!"
	for _, c := range []struct{ method, params, want string }{
		{"hostinterface.create", `{"hostid":"999","type":1,"main":0,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050"}`, noPerm},
		{"hostinterface.create", `{"type":1,"main":0,"useip":1,"ip":"127.0.0.1","dns":"","port":"10050"}`, "Incorrect arguments passed to function."},
		{"hostinterface.create", `{"hostid":"` + hid + `","type":1,"main":0,"useip":1,"ip":"127.0.0.1","dns":""}`, "Incorrect arguments passed to function."},
		{"hostinterface.create", `{"hostid":"` + hid + `","type":1,"main":0,"useip":1,"ip":"300.1.1.1","dns":"","port":"10050"}`, `Invalid IP address "300.1.1.1".`},
		{"hostinterface.update", `{"interfaceid":"999","port":"1"}`, noPerm},
		{"hostinterface.update", `{"port":"1"}`, "Incorrect arguments passed to function."},
		{"hostinterface.delete", `["999"]`, noPerm},
	} {
		if _, e := f.call(t, "super", c.method, c.params); e == nil || e.Code != -32602 || e.Data != c.want {
			t.Errorf("%s %s: %+v, want -32602 %s", c.method, c.params, e, c.want)
		}
	}
}
