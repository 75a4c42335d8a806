package api

import (
	"fmt"
	"slices"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// The answers of the mass methods to a super admin are in the
// conformance case mass (internal/conformance, recorded from Zabbix
// 6.0.14). This file has their answers to an admin whose user group has
// read on one host group and read-write on another, recorded from
// 6.0.14 with such an admin: for 6.0, the read-only group was "ro",
// holding the host "ro-host", the read-write one "rw" with "rw-host";
// here they are DB (db-1) and Linux (web-1), and Secret is a group the
// admin has no rights on.
func TestMassMethodsPermissions(t *testing.T) {
	f := newPermFixture(t)
	f.usergroup("Writers", map[string]int{"DB": 2, "Linux": 3}, "writer")
	sid := f.login("writer")
	ro, rw := f.host("db-1"), f.host("web-1")
	roG, rwG, noG := f.group("DB"), f.group("Linux"), f.group("Secret")
	const noPerm = "No permissions to referred object or it does not exist!"
	const noOp = "You do not have permission to perform this operation."
	iface := `{"type":1,"main":0,"useip":1,"ip":"127.0.9.1","dns":"","port":"1"}`
	for _, tc := range []struct {
		method, params string
		code           int // 0: a result
		data           string
	}{
		{"host.massadd", `{"hosts":[{"hostid":"%[1]d"}],"groups":[{"groupid":"%[4]d"}]}`, -32500, noOp},
		{"host.massadd", `{"hosts":[{"hostid":"%[2]d"}],"groups":[{"groupid":"%[3]d"}]}`, -32500, noPerm},
		{"host.massadd", `{"hosts":[{"hostid":"%[2]d"}],"groups":[{"groupid":"%[5]d"}]}`, -32500, noPerm},
		{"host.massadd", `{"hosts":[{"hostid":"%[2]d"}],"macros":[{"macro":"{$MASS_U}","value":"u"}]}`, 0, ""},
		{"host.massremove", `{"hostids":["%[1]d"],"macros":["{$MASS_Z}"]}`, -32500, noPerm},
		{"host.massremove", `{"hostids":["%[2]d"],"groupids":["%[3]d"]}`, -32500, noPerm},
		{"host.massupdate", `{"hosts":[{"hostid":"%[1]d"}],"status":0}`, -32500, noOp},
		{"host.massupdate", `{"hosts":[{"hostid":"%[2]d"}],"groups":[{"groupid":"%[3]d"}]}`, -32500, noPerm},
		{"hostgroup.massadd", `{"groups":[{"groupid":"%[3]d"}],"hosts":[{"hostid":"%[2]d"}]}`, -32500, noPerm},
		{"hostgroup.massadd", `{"groups":[{"groupid":"%[4]d"}],"hosts":[{"hostid":"%[1]d"}]}`, -32500, noPerm},
		{"hostgroup.massremove", `{"groupids":["%[3]d"],"hostids":["%[2]d"]}`, -32500, noPerm},
		{"hostgroup.massupdate", `{"groups":[{"groupid":"%[3]d"}],"hosts":[{"hostid":"%[1]d"}],"templates":[]}`, -32500, noPerm},
		{"hostinterface.massadd", `{"hosts":[{"hostid":"%[1]d"}],"interfaces":[` + iface + `]}`, -32602, noPerm},
		{"hostinterface.massremove", `{"hostids":["%[1]d"],"interfaces":[{"ip":"127.0.9.1","dns":"","port":"1"}]}`, -32500, noPerm},
		{"hostinterface.replacehostinterfaces", `{"hostid":"%[1]d","interfaces":[{"type":1,"main":1,"useip":1,"ip":"127.0.9.1","dns":"","port":"1"}]}`, -32602, noPerm},
	} {
		params := fmt.Sprintf(tc.params, ro, rw, roG, rwG, noG)
		_, e := f.do(sid, tc.method, params)
		switch {
		case tc.code == 0 && e != nil:
			t.Errorf("%s %s: %+v", tc.method, params, e)
		case tc.code != 0 && (e == nil || e.Code != tc.code || e.Data != tc.data):
			t.Errorf("%s %s: %+v, want %d %q", tc.method, params, e, tc.code, tc.data)
		}
	}
	// hostgroup.massupdate gives the group exactly the hosts named.
	if _, e := f.do(f.root, "hostgroup.massupdate", fmt.Sprintf(`{"groups":[{"groupid":"%d"}],"hosts":[{"hostid":"%d"},{"hostid":"%d"}],"templates":[]}`, rwG, rw, f.host("both-1"))); e != nil {
		t.Fatalf("as the super admin: %+v", e)
	}
	if got := f.names(f.root, "host.get", fmt.Sprintf(`{"groupids":["%d"],"output":["host"]}`, rwG), "host"); got != "both-1,web-1" {
		t.Errorf("Linux after hostgroup.massupdate: %s", got)
	}
	// Nothing a refused call named was changed.
	if got := f.names(f.root, "host.get", fmt.Sprintf(`{"hostids":["%d"],"selectGroups":["groupid"],"output":["host"]}`, rw), "host"); got != "web-1" {
		t.Errorf("web-1: %s", got)
	}
	if f.cat.Snapshot().HostByID(rw).GroupIDs[0] != rwG || len(f.cat.Snapshot().HostByID(rw).GroupIDs) != 1 {
		t.Errorf("web-1's groups changed: %v", f.cat.Snapshot().HostByID(rw).GroupIDs)
	}
}

// TestMassTemplates: linking and unlinking templates with the mass
// methods, as 6.0.14 does it (recorded with two templates t1, t2 on a
// host): massadd links what is not linked yet and keeps the rest;
// massupdate's "templates" is the new list, and its "templates_clear"
// unlinks (only when "templates" is not given: with both, the list
// given wins, t1 stays); massremove's templateids and templateids_clear
// unlink; the same template twice is refused by massadd and massupdate
// in 6.0's words, a template that does not exist with "No permissions".
func TestMassTemplates(t *testing.T) {
	f := newWriteFixture(t)
	spec := catalog.Spec{Templates: []catalog.TemplateSpec{{Template: "t1"}, {Template: "t2"}},
		Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"g"}}}}
	if _, err := f.cat.Apply(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	snap := f.cat.Snapshot()
	h, t1, t2 := snap.Host("h").ID, snap.TemplateByName("t1").ID, snap.TemplateByName("t2").ID
	links := func() []uint64 { return f.cat.Snapshot().LinkedTemplates(h) }
	ok := func(method, params string, want ...uint64) {
		t.Helper()
		if _, e := f.call(t, "super", method, params); e != nil {
			t.Fatalf("%s %s: %+v", method, params, e)
		}
		if got := links(); !slices.Equal(got, want) {
			t.Fatalf("%s %s: linked %v, want %v", method, params, got, want)
		}
	}
	hs := fmt.Sprintf(`{"hostid":"%d"}`, h)
	ok("host.massadd", fmt.Sprintf(`{"hosts":[%s],"templates":[{"templateid":"%d"}]}`, hs, t1), t1)
	ok("host.massadd", fmt.Sprintf(`{"hosts":[%s],"templates":["%d"]}`, hs, t2), t1, t2)
	ok("host.massupdate", fmt.Sprintf(`{"hosts":[%s],"templates_clear":[{"templateid":"%d"}]}`, hs, t1), t2)
	ok("host.massupdate", fmt.Sprintf(`{"hosts":[%s],"templates":[{"templateid":"%d"},{"templateid":"%d"}],"templates_clear":[{"templateid":"%d"}]}`, hs, t1, t2, t1), t1, t2)
	ok("host.massupdate", fmt.Sprintf(`{"hosts":[%s],"templates":[{"templateid":"%d"}],"templates_clear":[{"templateid":"%d"}]}`, hs, t1, t2), t1)
	ok("host.massupdate", fmt.Sprintf(`{"hosts":[%s],"templates":[]}`, hs))
	ok("host.massadd", fmt.Sprintf(`{"hosts":[%s],"templates":[{"templateid":"%d"},{"templateid":"%d"}]}`, hs, t1, t2), t1, t2)
	ok("host.massremove", fmt.Sprintf(`{"hostids":["%d"],"templateids":["%d","%d"]}`, h, t1, t1), t2)
	ok("host.massremove", fmt.Sprintf(`{"hostids":["%d"],"templateids_clear":"%d"}`, h, t2))
	for _, m := range []string{"host.massadd", "host.massupdate"} {
		_, e := f.call(t, "super", m, fmt.Sprintf(`{"hosts":[%s],"templates":[{"templateid":"%d"},{"templateid":"%d"}]}`, hs, t1, t1))
		if want := fmt.Sprintf(`Cannot pass duplicate template IDs for the linkage: template ID "%d" is passed 2 times.`, t1); e == nil || e.Data != want {
			t.Errorf("%s with a template twice: %+v", m, e)
		}
		_, e = f.call(t, "super", m, fmt.Sprintf(`{"hosts":[%s],"templates":[{"templateid":"%d"}]}`, hs, h))
		if e == nil || e.Code != -32500 || e.Data != "No permissions to referred object or it does not exist!" {
			t.Errorf("%s linking a host: %+v", m, e)
		}
	}
}
