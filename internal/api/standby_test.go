package api

import (
	"errors"
	"strings"
	"testing"
)

// TestStandbyRefusesWrites: while Options.Standby returns an error, a
// call that changes state is refused with its text and changes nothing;
// reads are served; once it returns nil the same call works.
func TestStandbyRefusesWrites(t *testing.T) {
	f := newAuditFixture(t)
	var standby error = errors.New(`This node ("node-b") is a standby node of the HA cluster: changes are made on the active node "node-a" at 192.0.2.1:10051.`)
	f.api.opts.Standby = func() error { return standby }
	if _, e := f.callAs(f.sid, "hostgroup.create", `{"name":"standby group"}`); e == nil || e.Code != -32500 || !strings.Contains(e.Data, `changes are made on the active node "node-a"`) {
		t.Fatalf("hostgroup.create on a standby: %+v", e)
	}
	if got := mustOK(t, f, "hostgroup.get", `{"filter":{"name":"standby group"},"countOutput":true}`); string(got) != `"0"` {
		t.Fatalf("the refused create made a group: %s", got)
	}
	standby = nil
	mustOK(t, f, "hostgroup.create", `{"name":"standby group"}`)
	if got := mustOK(t, f, "hostgroup.get", `{"filter":{"name":"standby group"},"countOutput":true}`); string(got) != `"1"` {
		t.Fatalf("hostgroup.get after the create on the active node: %s", got)
	}
}

// TestStandbyCallsExist: every method a standby serves by name is one
// the API has (a renamed method would otherwise be refused on standbys
// without a test noticing), and none of them is a create, update or
// delete.
func TestStandbyCallsExist(t *testing.T) {
	f := newAuditFixture(t)
	svc := newServiceFixture(t, nil, nil) // sla.getsli
	for m := range standbyCalls {
		if f.api.methods[m] == nil && svc.api.methods[m] == nil {
			t.Errorf("standbyCalls names %s, which the API does not have", m)
		}
		for _, w := range []string{"create", "update", "delete", "mass"} {
			if strings.Contains(m, w) {
				t.Errorf("a standby serves %s", m)
			}
		}
	}
}

// TestStandbyUnserved: Options.Unserved refuses a method before
// anything else, registered or not, with its text; user.login is a
// write a standby refuses; other methods are served.
func TestStandbyUnserved(t *testing.T) {
	f := newAuditFixture(t)
	refusal := errors.New(`This node ("node-b") is a standby node of the HA cluster and does not serve service.get yet.`)
	f.api.opts.Unserved = func(m string) error {
		if strings.HasPrefix(m, "service.") || m == "nothing.get" {
			return refusal
		}
		return nil
	}
	f.api.opts.Standby = func() error { return errors.New("standby") }
	for _, m := range []string{"service.get", "nothing.get"} {
		if _, e := f.callAs(f.sid, m, `{}`); e == nil || e.Code != -32500 || e.Data != refusal.Error() {
			t.Fatalf("%s on a standby: %+v", m, e)
		}
	}
	if standbyServes("user.login") || !standbyServes("user.logout") {
		t.Fatal("a standby serves user.login, which writes a session, or refuses user.logout, which only deletes its own")
	}
	for _, m := range []string{"sla.getsli", "script.getscriptsbyhosts", "configuration.importcompare"} {
		if !standbyServes(m) {
			t.Fatalf("a standby refuses %s, which only reads", m)
		}
	}
	mustOK(t, f, "hostgroup.get", `{"countOutput":true}`)
}
