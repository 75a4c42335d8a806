package catalog

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMigrateV6SNMP opens a database of schema version 6 (no snmp_oid):
// its SNMP items load with an empty snmp_oid, and a re-import gives them
// one.
func TestMigrateV6SNMP(t *testing.T) {
	c, path := openTemp(t)
	spec := testSpec()
	mustApply(t, c, spec)
	c.Close()
	execAll(t, path, downgradeSNMP...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	it := c2.Snapshot().Host("switch 1").Item("net.if.in[ifHCInOctets.1]")
	if it == nil || it.Ext().SNMPOID != "" {
		t.Fatalf("migrated SNMP item %+v, want one without snmp_oid", it)
	}
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
	res := mustApply(t, c2, spec)
	if res.ItemsUpdated != 1 {
		t.Fatalf("re-import updated %d items, want the SNMP one", res.ItemsUpdated)
	}
	if got := c2.Snapshot().Host("switch 1").Item("net.if.in[ifHCInOctets.1]").Ext().SNMPOID; got != "IF-MIB::ifHCInOctets.1" {
		t.Fatalf("snmp_oid after the re-import %q", got)
	}
}

// TestSNMPOID: SNMP agent items need a valid snmp_oid (create, update,
// import), other types keep none; a reopen sees what was stored.
func TestSNMPOID(t *testing.T) {
	c, path := openTemp(t)
	snmpIf := InterfaceSpec{Type: "snmp", IP: "127.0.0.1", Details: map[string]string{"version": "2", "community": "public"}}
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "sw", Groups: []string{"G"}, Interfaces: []InterfaceSpec{snmpIf}}}})
	h := c.Snapshot().Host("sw")
	create := func(is ItemSpec) error {
		_, err := c.Edit(context.Background(), func(e *Edit) error {
			_, err := e.CreateItems([]NewItem{{HostID: h.ID, ItemSpec: is}})
			return err
		})
		return err
	}
	for _, bad := range []struct{ oid, want string }{
		{"", "items[0].snmp_oid: cannot be empty"},
		{"FOO-MIB::bar.0", "Peregrine loads no MIB files"},
		{"walk[1.3.6]", "Zabbix 6.4 form"},
	} {
		err := create(ItemSpec{Key: "k", Type: "snmp_agent", SNMPOID: bad.oid})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("snmp_oid %q: %v, want an error containing %q", bad.oid, err, bad.want)
		}
	}
	if err := create(ItemSpec{Key: "up", Type: "snmp_agent", ValueType: "unsigned", SNMPOID: "SNMPv2-MIB::sysUpTime.0"}); err != nil {
		t.Fatal(err)
	}
	if err := create(ItemSpec{Key: "t", Type: "trapper", SNMPOID: "1.3.6.1"}); err != nil {
		t.Fatal(err)
	}
	s := c.Snapshot()
	up := s.Host("sw").Item("up")
	if up.Ext().SNMPOID != "SNMPv2-MIB::sysUpTime.0" || up.InterfaceID != s.Host("sw").MainInterface(InterfaceSNMP).ID {
		t.Fatalf("created SNMP item %+v", up)
	}
	if tr := s.Host("sw").Item("t"); tr.Ext().SNMPOID != "" {
		t.Fatalf("a trapper item kept snmp_oid %q", tr.Ext().SNMPOID)
	}
	oid := "1.3.6.1.2.1.1.5.0"
	mustEdit(t, c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: up.ID, SNMPOID: &oid}}) })
	bad := "1.3.x"
	if _, err := c.Edit(context.Background(), func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: up.ID, SNMPOID: &bad}}) }); err == nil || !strings.Contains(err.Error(), "snmp_oid") {
		t.Fatalf("update to %q: %v", bad, err)
	}
	want := c.Snapshot()
	if got := want.Item(up.ID).Ext().SNMPOID; got != oid {
		t.Fatalf("updated snmp_oid %q", got)
	}
	c.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if d := diffViews(want, c2.Snapshot()); d != "" {
		t.Fatalf("reloaded snapshot differs:\n%s", d)
	}
}

// TestSNMPDetails: details are validated with Zabbix 6.0's rules and
// stored complete, with the version's own fields and defaults.
func TestSNMPDetails(t *testing.T) {
	f := func(in map[string]string, want map[string]string, wantErr string) {
		t.Helper()
		c, _ := openTemp(t)
		_, err := c.Apply(context.Background(), Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"},
			Interfaces: []InterfaceSpec{{Type: "snmp", IP: "127.0.0.1", Details: in}}}}})
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("details %v: error %v, want one containing %q", in, err, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("details %v: %v", in, err)
		}
		got := c.Snapshot().Host("h").MainInterface(InterfaceSNMP).Details
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("details %v stored as (-want +got):\n%s", in, d)
		}
	}
	f(map[string]string{"version": "2", "community": "public"}, map[string]string{"version": "2", "bulk": "1", "community": "public"}, "")
	f(map[string]string{"version": "1", "bulk": "0", "community": "c", "securityname": ""}, map[string]string{"version": "1", "bulk": "0", "community": "c"}, "")
	f(map[string]string{"version": "3", "securityname": "u"}, map[string]string{"version": "3", "bulk": "1", "securityname": "u",
		"securitylevel": "0", "authprotocol": "0", "privprotocol": "0", "authpassphrase": "", "privpassphrase": "", "contextname": ""}, "")
	f(map[string]string{"version": "3", "securityname": "u", "securitylevel": "2", "authprotocol": "1", "authpassphrase": "authpass1",
		"privprotocol": "1", "privpassphrase": "privpass1", "contextname": "ctx", "community": ""},
		map[string]string{"version": "3", "bulk": "1", "securityname": "u", "securitylevel": "2", "authprotocol": "1",
			"authpassphrase": "authpass1", "privprotocol": "1", "privpassphrase": "privpass1", "contextname": "ctx"}, "")
	f(map[string]string{"version": "3", "community": "public"}, nil, "details.community: is not a setting of SNMP version 3")
	f(map[string]string{"version": "2", "community": "p", "securitylevel": "1"}, nil, "details.securitylevel: is not a setting of SNMP version 2")
	f(map[string]string{"version": "3", "securitylevel": "3"}, nil, `details.securitylevel: "3": use 0 (noAuthNoPriv)`)
	f(map[string]string{"version": "3", "authprotocol": "6"}, nil, "details.authprotocol")
	f(map[string]string{"version": "3", "privprotocol": "x"}, nil, "details.privprotocol")
	f(map[string]string{"version": "2", "community": "p", "bulk": "2"}, nil, "details.bulk")
	f(map[string]string{"version": "2c", "community": "p"}, nil, "not an SNMP version")
	f(map[string]string{"version": "2", "community": "p", "max_repetitions": "10"}, nil, "unknown SNMP detail")
	// A bad secret is refused without being quoted.
	c, _ := openTemp(t)
	_, err := c.Apply(context.Background(), Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"},
		Interfaces: []InterfaceSpec{{Type: "snmp", IP: "127.0.0.1", Details: map[string]string{"version": "3", "authpassphrase": "s3cr\xffet"}}}}}})
	if err == nil || !strings.Contains(err.Error(), "details.authpassphrase") || strings.Contains(err.Error(), "s3cr") {
		t.Fatalf("bad passphrase: %v", err)
	}
}

// TestSNMPTrapType: snmp_trap items (type 17) are pushed like trapper
// items: their delay defaults to "0".
func TestSNMPTrapType(t *testing.T) {
	c, _ := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"},
		Interfaces: []InterfaceSpec{{Type: "snmp", IP: "127.0.0.1", Details: map[string]string{"version": "2", "community": "p"}}},
		Items:      []ItemSpec{{Key: "snmptrap.fallback", Type: "snmp_trap", ValueType: "log"}, {Key: `snmptrap["linkDown"]`, Type: "17", ValueType: "text"}}}}})
	h := c.Snapshot().Host("h")
	for _, k := range []string{"snmptrap.fallback", `snmptrap["linkDown"]`} {
		it := h.Item(k)
		if it == nil || it.Type != SNMPTrap || it.Delay != "0" || it.InterfaceID != h.MainInterface(InterfaceSNMP).ID {
			t.Fatalf("%s: %+v", k, it)
		}
	}
}
