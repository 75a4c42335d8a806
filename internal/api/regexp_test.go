package api

import (
	"testing"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// The answers of regexp.*, task.get and hanode.get to a super admin
// are in the conformance cases regexp and tasks (internal/conformance,
// recorded from Zabbix 6.0.14); this file has what those cases cannot
// show: the answers to other users, and the catalog's view of what the
// API wrote.

// TestAdministrationMethodsNeedSuperAdmin: an admin (and a user) gets
// 6.0's answers, recorded from 6.0.14 with an admin of a user group:
// regexp.* and task.get are refused by their role ("No permissions to
// call", -32602), hanode.get by the method (-32500), before their
// parameters are read.
func TestAdministrationMethodsNeedSuperAdmin(t *testing.T) {
	f := newAuditFixture(t)
	for _, role := range []auth.Role{auth.RoleAdmin, auth.RoleUser} {
		name := "rx-" + string(rune('a'+role))
		if _, err := f.store.CreateUser(t.Context(), name, "Rx-pass-123!", role); err != nil {
			t.Fatal(err)
		}
		var sid string
		f.rpc(`{"jsonrpc":"2.0","method":"user.login","params":{"username":"`+name+`","password":"Rx-pass-123!"},"id":1}`, &sid)
		for _, tc := range []struct {
			method, params string
			code           int
			data           string
		}{
			{"regexp.get", `{"xyz":1}`, -32602, `No permissions to call "regexp.get".`},
			{"regexp.create", `{"name":"rx","expressions":[{"expression":"a","expression_type":0}]}`, -32602, `No permissions to call "regexp.create".`},
			{"regexp.update", `{"regexpid":"1","name":"rx"}`, -32602, `No permissions to call "regexp.update".`},
			{"regexp.delete", `["1"]`, -32602, `No permissions to call "regexp.delete".`},
			{"task.get", `{"xyz":1}`, -32602, `No permissions to call "task.get".`},
			{"hanode.get", `{"xyz":1}`, -32500, "You do not have permission to perform this operation."},
		} {
			_, e := f.callAs(sid, tc.method, tc.params)
			if e == nil || e.Code != tc.code || e.Data != tc.data {
				t.Errorf("role %d: %s: %+v, want %d %q", role, tc.method, e, tc.code, tc.data)
			}
		}
	}
	if f.api.opts.Catalog.Snapshot().RegexpByName("rx") != nil {
		t.Fatal("a refused regexp.create created it")
	}
}

// TestRegexpByNameAfterAPI: what regexp.create and update store is what
// an "@name" reference finds in the catalog, matching as its
// expressions say.
func TestRegexpByNameAfterAPI(t *testing.T) {
	f := newAuditFixture(t)
	mustOK(t, f, "regexp.create", `{"name":"Errors","test_string":"an error","expressions":[
		{"expression":"error,fail","expression_type":1,"exp_delimiter":","},
		{"expression":"^debug","expression_type":4,"case_sensitive":1}]}`)
	r := f.api.opts.Catalog.Snapshot().RegexpByName("Errors")
	if r == nil || r.TestString != "an error" || len(r.Expressions) != 2 {
		t.Fatalf("stored: %+v", r)
	}
	want := []catalog.Expression{{Expression: "error,fail", Type: catalog.ExprAnyIncluded, Delimiter: ","},
		{Expression: "^debug", Type: catalog.ExprFalse, Delimiter: ",", CaseSensitive: true}}
	for i := range want {
		if r.Expressions[i] != want[i] {
			t.Errorf("expression %d: %+v, want %+v", i, r.Expressions[i], want[i])
		}
	}
	for v, m := range map[string]bool{"disk FAILED": true, "debug: error": false, "Debug: error": true, "all fine": false} {
		if r.Match(v) != m {
			t.Errorf("%q: %v, want %v", v, !m, m)
		}
	}
	mustOK(t, f, "regexp.update", `{"regexpid":"`+id(r.ID)+`","name":"Errors2"}`)
	if s := f.api.opts.Catalog.Snapshot(); s.RegexpByName("Errors") != nil || s.RegexpByName("Errors2") == nil {
		t.Fatal("the renamed regular expression is not found by its new name only")
	}
}
