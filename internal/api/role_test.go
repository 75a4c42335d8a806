package api

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/auth"
)

// TestRoleMethods: role.create, .update, .delete and role.get's rules,
// each answer as Zabbix 6.0.14 gave it to the same calls (recorded from
// the peer with a role of its own, df-role1, created as role 6 there).
func TestRoleMethods(t *testing.T) {
	f := newPermFixture(t)
	var created struct{ RoleIDs []string }
	f.mustDo(f.root, "role.create", `{"name":"df-role1","type":1}`, &created)
	id := created.RoleIDs[0]
	if id != "5" {
		t.Errorf("role.create: %v, want role 5 (after the four defaults)", created)
	}
	rules := func() map[string]any {
		var rs []struct{ Rules map[string]any }
		f.mustDo(f.root, "role.get", `{"roleids":"`+id+`","selectRules":"extend"}`, &rs)
		return rs[0].Rules
	}
	// A new role's rules are the user type's, all allowed (recorded).
	const userRules = `{"ui":[{"name":"inventory.hosts","status":"1"},{"name":"inventory.overview","status":"1"},{"name":"monitoring.dashboard","status":"1"},{"name":"monitoring.hosts","status":"1"},{"name":"monitoring.latest_data","status":"1"},{"name":"monitoring.maps","status":"1"},{"name":"monitoring.problems","status":"1"},{"name":"reports.availability_report","status":"1"},{"name":"reports.top_triggers","status":"1"},{"name":"services.services","status":"1"},{"name":"services.sla_report","status":"1"}],"ui.default_access":"1","services.read.mode":"1","services.read.list":[],"services.read.tag":{"tag":"","value":""},"services.write.mode":"0","services.write.list":[],"services.write.tag":{"tag":"","value":""},"modules":[],"modules.default_access":"1","api.access":"1","api.mode":"0","api":[],"actions":[{"name":"edit_dashboards","status":"1"},{"name":"edit_maps","status":"1"},{"name":"acknowledge_problems","status":"1"},{"name":"close_problems","status":"1"},{"name":"change_severity","status":"1"},{"name":"add_problem_comments","status":"1"},{"name":"execute_scripts","status":"1"},{"name":"manage_api_tokens","status":"1"}],"actions.default_access":"1"}`
	var want map[string]any
	json.Unmarshal([]byte(userRules), &want)
	if d := cmp.Diff(want, rules()); d != "" {
		t.Fatalf("a new role's rules (-Zabbix +Peregrine):\n%s", d)
	}
	f.mustDo(f.root, "role.update", `{"roleid":"`+id+`","rules":{"ui":[{"name":"monitoring.hosts","status":0}],"api.mode":1,"api":["host.get","*.create"],"actions":[{"name":"execute_scripts","status":0}],"actions.default_access":0}}`, nil)
	got := rules()
	status := func(list any, name string) any {
		for _, e := range list.([]any) {
			if m := e.(map[string]any); m["name"] == name {
				return m["status"]
			}
		}
		return nil
	}
	if status(got["ui"], "monitoring.hosts") != "0" || status(got["ui"], "monitoring.maps") != "1" || got["api.mode"] != "1" ||
		!cmp.Equal(got["api"], []any{"host.get", "*.create"}) || got["actions.default_access"] != "0" ||
		status(got["actions"], "execute_scripts") != "0" || status(got["actions"], "edit_maps") != "1" {
		t.Errorf("after an update of the rules: %v", got)
	}
	for _, c := range []struct{ method, params, want string }{
		{"role.update", `{"roleid":"` + id + `","rules":{"ui":[{"name":"monitoring.hosts","status":0}],"ui.default_access":0}}`, `At least one UI element must be enabled for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"ui":[{"name":"administration.users","status":1}]}}`, `UI element "administration.users" is not available for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"ui":[{"name":"nosuch","status":1}]}}`, `UI element "nosuch" is not available for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"actions":[{"name":"edit_maintenance","status":1}]}}`, `Action "edit_maintenance" is not available for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"api":["nosuch.method"]}}`, `Invalid API method "nosuch.method" for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"api":["host.nosuch"]}}`, `Invalid API method "host.nosuch" for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"api":["nosuch.*"]}}`, `Invalid API method "nosuch.*" for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"api":["*.nosuch"]}}`, `Invalid API method "*.nosuch" for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"api":["host*"]}}`, `Invalid API method "host*" for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"api":["HOST.GET"]}}`, `Invalid API method "HOST.GET" for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"api":["user.login"]}}`, `Invalid API method "user.login" for user role "df-role1".`},
		{"role.update", `{"roleid":"` + id + `","rules":{"api":["apiinfo.version"]}}`, `Invalid API method "apiinfo.version" for user role "df-role1".`},
		{"role.update", `{"roleid":"3","name":"x"}`, `Cannot update readonly user role "Super admin role".`},
		{"role.update", `{"roleid":"1","name":"Admin role"}`, `User role "Admin role" already exists.`},
		{"role.create", `{"name":"df-r2"}`, `Invalid parameter "/1": the parameter "type" is missing.`},
		{"role.create", `{"name":"df-r2","type":4}`, `Invalid parameter "/1/type": value must be one of 1, 2, 3.`},
		{"role.create", `{"name":"","type":1}`, `Invalid parameter "/1/name": cannot be empty.`},
		{"role.delete", `["3"]`, `Cannot delete readonly user role "Super admin role".`},
		{"role.delete", `["1"]`, `Cannot delete assigned user role "User role".`},
		{"role.get", `{"userids":["1"]}`, `Invalid parameter "/": unexpected parameter "userids".`},
		{"role.get", `{"selectRules":"count"}`, `Invalid parameter "/selectRules": value must be "extend".`},
	} {
		if _, e := f.do(f.root, c.method, c.params); e == nil || e.Data != c.want {
			t.Errorf("%s %s: %+v, want %q", c.method, c.params, e, c.want)
		}
	}
	// Accepted API rules (recorded).
	for _, rule := range []string{"host.*", "*.*", "*.create", "*", "user.create"} {
		f.mustDo(f.root, "role.update", `{"roleid":"`+id+`","rules":{"api":["`+rule+`"]}}`, nil)
	}
	var counts []struct{ Name, Users string }
	f.mustDo(f.root, "role.get", `{"output":["name"],"selectUsers":"count","roleids":["3"]}`, &counts)
	if len(counts) != 1 || counts[0].Users != "1" {
		t.Errorf("selectUsers count: %+v", counts)
	}
	f.mustDo(f.root, "role.delete", `["`+id+`"]`, nil)
}

// TestRulesAllow: what a role's API rules let its users call (Zabbix
// 6.0.14's answers to a user of a role with these rules: "No
// permissions to call" for each false).
func TestRulesAllow(t *testing.T) {
	for _, c := range []struct {
		rules  auth.RoleRules
		method string
		want   bool
	}{
		{auth.RoleRules{APIAccess: 1}, "user.get", true},
		{auth.RoleRules{APIAccess: 0}, "user.get", false},
		{auth.RoleRules{APIAccess: 0}, "user.logout", false},
		{auth.RoleRules{APIAccess: 1, APIMode: 1, API: []string{"host.get"}}, "host.get", true},
		{auth.RoleRules{APIAccess: 1, APIMode: 1, API: []string{"host.get"}}, "user.get", false},
		{auth.RoleRules{APIAccess: 1, APIMode: 0, API: []string{"host.get"}}, "host.get", false},
		{auth.RoleRules{APIAccess: 1, APIMode: 0, API: []string{"host.get"}}, "user.get", true},
		{auth.RoleRules{APIAccess: 1, APIMode: 1, API: []string{"host.*"}}, "host.create", true},
		{auth.RoleRules{APIAccess: 1, APIMode: 1, API: []string{"*.get"}}, "item.get", true},
		{auth.RoleRules{APIAccess: 1, APIMode: 1, API: []string{"*.get"}}, "item.create", false},
		{auth.RoleRules{APIAccess: 1, APIMode: 1, API: []string{"*"}}, "item.create", true},
		{auth.RoleRules{APIAccess: 1, ActionsDefault: 1, Actions: map[string]int{"manage_api_tokens": 0}}, "token.get", false},
		{auth.RoleRules{APIAccess: 1, ActionsDefault: 1, Actions: map[string]int{"execute_scripts": 0}}, "script.execute", false},
		{auth.RoleRules{APIAccess: 1, ActionsDefault: 0}, "script.get", true},
		{auth.RoleRules{APIAccess: 1, ActionsDefault: 0}, "maintenance.create", false},
	} {
		if got := rulesAllow(&c.rules, c.method); got != c.want {
			t.Errorf("%+v, %s: %v, want %v", c.rules, c.method, got, c.want)
		}
	}
	if n := len(zabbixMethods); n != 193 {
		t.Errorf("%d methods of Zabbix 6.0.14 that need a login, want 193", n)
	}
}
