package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestIntegrationBrowserReadOnly: an Admin whose user group may only
// read the host group opens its host, item and trigger in headless
// Chromium and gets no create, save, clone or delete control, the forms
// read-only; the API refuses the same changes sent directly. A User
// (type 1) gets 403 for every configuration and administration page and
// the API refuses it each family's write; an Admin gets 403 for the
// administration pages. Nothing is made by a refused call.
func TestIntegrationBrowserReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "ro-host", Groups: []string{"RO"},
		Items: []catalog.ItemSpec{{Key: "ro.load", Name: "RO load", ValueType: "float"}}}}}
	_, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	host := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "selectGroups": []string{"groupid"}, "filter": map[string]any{"host": "ro-host"}})
	hostid := host["hostid"].(string)
	groupid := host["groups"].([]any)[0].(map[string]any)["groupid"].(string)
	itemid := getOne(t, base, token, "item", map[string]any{"output": []string{"itemid"}, "filter": map[string]any{"key_": "ro.load"}})["itemid"].(string)
	var tr struct{ TriggerIDs []string }
	json.Unmarshal(apiCall(t, base, token, "trigger.create", map[string]any{"description": "RO high", "expression": "last(/ro-host/ro.load)>5"}), &tr)
	var ug struct{ UsrgrpIDs []string }
	json.Unmarshal(apiCall(t, base, token, "usergroup.create", map[string]any{"name": "ro readers", "rights": []map[string]any{{"id": groupid, "permission": 2}}}), &ug)
	const pw = "Zx9!long-passw0rd"
	for user, role := range map[string]string{"ro-admin": "2", "ro-user": "1"} {
		apiCall(t, base, token, "user.create", map[string]any{"username": user, "passwd": pw, "roleid": role, "usrgrps": []map[string]string{{"usrgrpid": ug.UsrgrpIDs[0]}}})
	}
	var reader, user string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "ro-admin", "password": pw}), &reader)
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "ro-user", "password": pw}), &user)

	// The read-only Admin's pages.
	ctx, _ := browser(t)
	loginAs(t, ctx, base, "ro-admin", pw)
	for _, c := range []struct{ page, noun, row, name, input string }{
		{"/config/hosts", "host", "config-host-row .host-name", "ro-host", "#host-host"},
		{"/config/items?hostid=" + hostid, "item", "config-item-row .item-name", "RO load", "#item-name"},
		{"/config/triggers?hostid=" + hostid, "trigger", "config-trigger-row .trigger-name", "RO high", "#trigger-description"},
	} {
		row := fmt.Sprintf(`[...document.querySelectorAll('.%s')].find((e) => e.textContent === %q)`, c.row, c.name)
		run(t, ctx, c.noun+" read-only", chromedp.Navigate(base+c.page), pollJS(row),
			pollJS(fmt.Sprintf(`document.querySelector('#%s-create').hidden`, c.noun)), clickJS(row),
			pollJS(fmt.Sprintf(`(document.querySelector(%q) || {}).value === %q`, c.input, c.name)),
			pollJS(fmt.Sprintf(`document.querySelector(%q).disabled && !document.querySelector('#%s-save') && !document.querySelector('#%s-clone') && !document.querySelector('#%s-delete')`,
				c.input, c.noun, c.noun, c.noun)))
	}
	for method, params := range map[string]any{
		"host.update":    map[string]any{"hostid": hostid, "name": "hijacked"},
		"item.update":    map[string]any{"itemid": itemid, "name": "hijacked"},
		"trigger.update": map[string]any{"triggerid": tr.TriggerIDs[0], "description": "hijacked"},
		"host.delete":    []string{hostid},
	} {
		if e := apiTry(t, base, reader, method, params); !strings.Contains(e, "ermission") {
			t.Errorf("a read-only Admin's %s: %q, want a refusal for permissions", method, e)
		}
	}
	if n := countOf(t, base, token, "host", map[string]any{"hostids": []string{hostid}, "filter": map[string]any{"name": "ro-host"}}); n != 1 {
		t.Errorf("the host changed after the refused calls")
	}

	// Pages: configuration is an Admin's, administration a Super admin's.
	config := []string{"/config/hosts", "/config/items", "/config/triggers", "/config/valuemaps", "/config/templates", "/config/hostgroups",
		"/config/discovery", "/config/prototypes", "/config/graphs", "/config/templatedashboards", "/config/webscenarios", "/config/drules",
		"/config/actions", "/config/maintenance", "/discovery"}
	admin := []string{"/admin/users", "/admin/usergroups", "/admin/roles", "/admin/mediatypes", "/admin/scripts", "/admin/settings",
		"/admin/housekeeping", "/admin/auditlog", "/admin/queue", "/admin/authentication", "/admin/autoreg", "/config/proxies", "/config/correlation"}
	for _, p := range config {
		if s := pageStatus(t, base, user, p); s != 403 {
			t.Errorf("a User's GET %s: %d, want 403", p, s)
		}
		if s := pageStatus(t, base, reader, p); s != 200 {
			t.Errorf("an Admin's GET %s: %d, want 200", p, s)
		}
	}
	for _, p := range admin {
		for who, sess := range map[string]string{"User": user, "Admin": reader} {
			if s := pageStatus(t, base, sess, p); s != 403 {
				t.Errorf("a %s's GET %s: %d, want 403", who, p, s)
			}
		}
	}

	// A User's direct writes, one per family: refused for permissions,
	// nothing made.
	writes := []struct {
		method string
		params any
		made   func() int // objects the call would have made or changed
	}{
		{"hostgroup.create", map[string]any{"name": "ro made"}, func() int {
			return countOf(t, base, token, "hostgroup", map[string]any{"filter": map[string]any{"name": "ro made"}})
		}},
		{"template.create", map[string]any{"host": "ro made", "groups": []map[string]string{{"groupid": groupid}}}, func() int {
			return countOf(t, base, token, "template", map[string]any{"filter": map[string]any{"host": "ro made"}})
		}},
		{"host.create", map[string]any{"host": "ro-made", "groups": []map[string]string{{"groupid": groupid}}}, func() int {
			return countOf(t, base, token, "host", map[string]any{"filter": map[string]any{"host": "ro-made"}})
		}},
		{"item.create", map[string]any{"hostid": hostid, "name": "ro made", "key_": "ro.made", "type": 2, "value_type": 0}, func() int {
			return countOf(t, base, token, "item", map[string]any{"filter": map[string]any{"key_": "ro.made"}})
		}},
		{"trigger.create", map[string]any{"description": "ro made", "expression": "last(/ro-host/ro.load)>9"}, func() int {
			return countOf(t, base, token, "trigger", map[string]any{"filter": map[string]any{"description": "ro made"}})
		}},
		{"discoveryrule.create", map[string]any{"hostid": hostid, "name": "ro made", "key_": "ro.lld", "type": 2}, func() int {
			return countOf(t, base, token, "discoveryrule", map[string]any{"filter": map[string]any{"key_": "ro.lld"}})
		}},
		{"httptest.create", map[string]any{"hostid": hostid, "name": "ro made", "steps": []map[string]any{{"name": "s", "url": "http://127.0.0.1:1/", "no": 1}}}, func() int {
			return countOf(t, base, token, "httptest", map[string]any{"filter": map[string]any{"name": "ro made"}})
		}},
		{"drule.create", map[string]any{"name": "ro made", "iprange": "127.0.0.1", "dchecks": []map[string]any{{"type": 12}}}, func() int {
			return countOf(t, base, token, "drule", map[string]any{"filter": map[string]any{"name": "ro made"}})
		}},
		{"action.create", map[string]any{"name": "ro made", "eventsource": 0,
			"operations": []map[string]any{{"operationtype": 0, "opmessage_grp": []map[string]string{{"usrgrpid": "7"}}, "opmessage": map[string]any{"default_msg": 1}}}}, func() int {
			return countOf(t, base, token, "action", map[string]any{"filter": map[string]any{"name": "ro made"}})
		}},
		{"maintenance.create", map[string]any{"name": "ro made", "active_since": 0, "active_till": 86400, "groups": []map[string]string{{"groupid": groupid}},
			"timeperiods": []map[string]any{{"timeperiod_type": 0, "period": 3600}}}, func() int {
			return countOf(t, base, token, "maintenance", map[string]any{"filter": map[string]any{"name": "ro made"}})
		}},
		{"proxy.create", map[string]any{"host": "ro-made", "status": 5}, func() int {
			return countOf(t, base, token, "proxy", map[string]any{"filter": map[string]any{"host": "ro-made"}})
		}},
		{"user.create", map[string]any{"username": "ro-made", "passwd": pw, "roleid": "1", "usrgrps": []map[string]string{{"usrgrpid": "8"}}}, func() int {
			return countOf(t, base, token, "user", map[string]any{"filter": map[string]any{"username": "ro-made"}})
		}},
		{"usergroup.create", map[string]any{"name": "ro made"}, func() int {
			return countOf(t, base, token, "usergroup", map[string]any{"filter": map[string]any{"name": "ro made"}})
		}},
		{"role.create", map[string]any{"name": "ro made", "type": 1}, func() int {
			return countOf(t, base, token, "role", map[string]any{"filter": map[string]any{"name": "ro made"}})
		}},
		{"mediatype.create", map[string]any{"name": "ro made", "type": 1, "exec_path": "x.sh"}, func() int {
			return countOf(t, base, token, "mediatype", map[string]any{"filter": map[string]any{"name": "ro made"}})
		}},
		{"script.create", map[string]any{"name": "ro made", "type": 0, "scope": 2, "command": "true"}, func() int {
			return countOf(t, base, token, "script", map[string]any{"filter": map[string]any{"name": "ro made"}})
		}},
		{"settings.update", map[string]any{"login_attempts": 9}, func() int {
			var s map[string]any
			json.Unmarshal(apiCall(t, base, token, "settings.get", map[string]any{"output": []string{"login_attempts"}}), &s)
			if s["login_attempts"] == "9" {
				return 1
			}
			return 0
		}},
		{"housekeeping.update", map[string]any{"hk_audit": "401d"}, func() int {
			var s map[string]any
			json.Unmarshal(apiCall(t, base, token, "housekeeping.get", map[string]any{"output": []string{"hk_audit"}}), &s)
			if s["hk_audit"] == "401d" {
				return 1
			}
			return 0
		}},
		{"authentication.update", map[string]any{"passwd_min_length": 30}, func() int {
			var s map[string]any
			json.Unmarshal(apiCall(t, base, token, "authentication.get", map[string]any{"output": []string{"passwd_min_length"}}), &s)
			if s["passwd_min_length"] == "30" {
				return 1
			}
			return 0
		}},
	}
	for _, w := range writes {
		if e := apiTry(t, base, user, w.method, w.params); !strings.Contains(e, "ermission") {
			t.Errorf("a User's %s: %q, want a refusal for permissions", w.method, e)
		}
		if n := w.made(); n != 0 {
			t.Errorf("a User's refused %s made or changed %d objects", w.method, n)
		}
	}
}
