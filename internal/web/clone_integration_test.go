package web_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// cloneCase is one page family's clone through its form: the object is
// made through the API, opened from its list row, cloned under a new
// name (Clone, then Create), and the clone deleted through its form
// (Delete, then "Yes, delete"); the API sees the clone appear and go
// and the original stay as it was.
type cloneCase struct {
	page, api, noun string
	nameKey         string // the API's name member
	nameInput       string // the form's name field
	row             string // a list row's name link: class of the row, class of the link
	create          map[string]any
	extra           []chromedp.Action // set before Create (a user's password)
	filter          map[string]any    // the get's other parameters (an item's host)
	same            []string          // members the clone has as the original
}

// TestIntegrationBrowserClone clones and deletes, through their pages,
// one object of each family whose other browser tests do not clone:
// hosts, items, triggers, users, user groups, roles, scripts, actions,
// maintenance periods, dashboards, services and SLAs. Names carry
// markup and quotes: they stay text.
func TestIntegrationBrowserClone(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "clone-src", Groups: []string{"Clone"},
		Items: []catalog.ItemSpec{{Key: "clone.load", Name: "Load", ValueType: "float"}}}}}
	_, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	host := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "selectGroups": []string{"groupid"}, "filter": map[string]any{"host": "clone-src"}})
	hostid := host["hostid"].(string)
	groupid := host["groups"].([]any)[0].(map[string]any)["groupid"].(string)
	apiCall(t, base, token, "trigger.create", map[string]any{"description": `<b>load</b> "high"`, "expression": "last(/clone-src/clone.load)>5", "priority": 3})
	now := time.Now().Unix()
	cases := []cloneCase{
		{page: "/config/hosts", api: "host", noun: "host", nameKey: "host", nameInput: "#host-host", row: "config-host-row .host-name"},
		{page: "/config/items?hostid=" + hostid, api: "item", noun: "item", nameKey: "name", nameInput: "#item-name", row: "config-item-row .item-name", same: []string{"type", "value_type", "delay", "units"},
			extra: []chromedp.Action{setJS(`#item-key`, "clone.load2")}, filter: map[string]any{"hostids": []string{hostid}}},
		{page: "/config/triggers?hostid=" + hostid, api: "trigger", noun: "trigger", nameKey: "description", nameInput: "#trigger-description", row: "config-trigger-row .trigger-name", same: []string{"priority", "status"}},
		{page: "/admin/usergroups", api: "usergroup", noun: "usergroup", nameKey: "name", create: map[string]any{"name": `<i>ops</i> "team"`}},
		{page: "/admin/users", api: "user", noun: "user", nameKey: "username", nameInput: "#user-username",
			create: map[string]any{"username": `<i>ann</i> "a"`, "passwd": "Zx9!long-passw0rd", "roleid": "1", "usrgrps": []map[string]string{{"usrgrpid": "8"}}},
			extra:  []chromedp.Action{setJS(`#user-passwd`, "Zx9!other-passw0rd")}},
		{page: "/admin/roles", api: "role", noun: "role", nameKey: "name", create: map[string]any{"name": `<i>viewer</i> "r"`, "type": 1}, same: []string{"type"}},
		{page: "/admin/scripts", api: "script", noun: "script", nameKey: "name",
			create: map[string]any{"name": `<i>ping</i> "s"`, "type": 0, "scope": 2, "execute_on": 2, "command": "echo {HOST.HOST}"}, same: []string{"command", "scope", "type"}},
		{page: "/config/actions", api: "action", noun: "action", nameKey: "name",
			create: map[string]any{"name": `<i>page</i> "a"`, "eventsource": 0, "status": 0,
				"operations": []map[string]any{{"operationtype": 0, "opmessage_grp": []map[string]string{{"usrgrpid": "7"}}, "opmessage": map[string]any{"default_msg": 1}}}}},
		{page: "/config/maintenance", api: "maintenance", noun: "maintenance", nameKey: "name",
			create: map[string]any{"name": `<i>window</i> "m"`, "active_since": now - now%60, "active_till": now - now%60 + 86400, "groups": []map[string]string{{"groupid": groupid}},
				"timeperiods": []map[string]any{{"timeperiod_type": 0, "period": 3600, "start_date": now - now%60}}}, same: []string{"active_since", "active_till"}},
		{page: "/dashboards", api: "dashboard", noun: "dashboard", nameKey: "name",
			create: map[string]any{"name": `<i>wall</i> "d"`, "pages": []map[string]any{{"widgets": []map[string]any{{"type": "clock", "x": 0, "y": 0, "width": 4, "height": 3}}}}}},
		{page: "/services", api: "service", noun: "service", nameKey: "name", create: map[string]any{"name": `<i>web</i> "sv"`, "algorithm": 1, "sortorder": 0}, same: []string{"algorithm"}},
		{page: "/user/tokens", api: "token", noun: "token", nameKey: "name", create: map[string]any{"name": `<i>ci</i> "t"`}},
		{page: "/services/sla", api: "sla", noun: "sla", nameKey: "name",
			create: map[string]any{"name": `<i>gold</i> "sla"`, "slo": "99.5", "period": 0, "timezone": "UTC", "effective_date": 0,
				"service_tags": []map[string]any{{"tag": "team", "value": "web"}}}, same: []string{"slo", "period", "timezone"}},
	}
	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)
	for _, c := range cases {
		t.Run(c.noun, func(t *testing.T) {
			if c.create != nil {
				apiCall(t, base, token, c.api+".create", c.create)
			}
			if c.nameInput == "" {
				c.nameInput = "#" + c.noun + "-name"
			}
			if c.row == "" {
				c.row = c.noun + "-row ." + c.noun + "-name"
			}
			count := func(name string) int {
				p := map[string]any{"filter": map[string]any{c.nameKey: name}}
				for k, v := range c.filter {
					p[k] = v
				}
				return countOf(t, base, token, c.api, p)
			}
			var name string
			switch c.noun {
			case "host":
				name = "clone-src"
			case "item":
				name = "Load"
			case "trigger":
				name = `<b>load</b> "high"`
			default:
				name = c.create[c.nameKey].(string)
			}
			cloned := name + " <u>2</u>"
			if c.noun == "host" {
				cloned = "clone-src 2" // a host name is letters, digits, spaces, ".", "_" and "-"
			}
			row := func(n string) string {
				return fmt.Sprintf(`[...document.querySelectorAll('.%s')].find((e) => e.textContent === %q)`, c.row, n)
			}
			steps := []chromedp.Action{chromedp.Navigate(base + c.page), pollJS(row(name)), clickJS(row(name)),
				pollJS(fmt.Sprintf(`(document.querySelector(%q) || {}).value === %q`, c.nameInput, name)),
				chromedp.WaitVisible("#"+c.noun+"-clone", chromedp.ByQuery), chromedp.Click("#"+c.noun+"-clone", chromedp.ByQuery),
				pollJS(fmt.Sprintf(`!document.querySelector('#%s-clone') && !!document.querySelector(%q)`, c.noun, c.nameInput)),
				setJS(c.nameInput, cloned)}
			steps = append(steps, c.extra...)
			run(t, ctx, "clone", steps...)
			shot1400(t, ctx, sh, "clone-"+c.noun)
			run(t, ctx, "save the clone", chromedp.Click("#"+c.noun+"-save", chromedp.ByQuery), pollJS(row(cloned)))
			if n, m := count(cloned), count(name); n != 1 || m != 1 {
				t.Fatalf("after the clone: %d clones, %d originals", n, m)
			}
			if len(c.same) > 0 {
				get := func(n string) map[string]any {
					p := map[string]any{"output": "extend", "filter": map[string]any{c.nameKey: n}}
					for k, v := range c.filter {
						p[k] = v
					}
					return getOne(t, base, token, c.api, p)
				}
				a, b := get(name), get(cloned)
				for _, k := range c.same {
					if a[k] != b[k] {
						t.Errorf("the clone's %s is %v, the original's %v", k, b[k], a[k])
					}
				}
			}
			run(t, ctx, "delete the clone", clickJS(row(cloned)),
				pollJS(fmt.Sprintf(`(document.querySelector(%q) || {}).value === %q`, c.nameInput, cloned)),
				chromedp.Click("#"+c.noun+"-delete", chromedp.ByQuery), chromedp.WaitVisible("#"+c.noun+"-delete-yes", chromedp.ByQuery),
				chromedp.Click("#"+c.noun+"-delete-yes", chromedp.ByQuery), pollJS(`!`+row(cloned)))
			if n, m := count(cloned), count(name); n != 0 || m != 1 {
				t.Errorf("after deleting the clone: %d clones, %d originals", n, m)
			}
			// Bad input: a clone under the original's name (a duplicate;
			// services may share names) is refused, the API's error shown
			// beside the field it names (under the form on the hosts,
			// items and triggers pages), and nothing is made (a token as
			// 6.0.14: 'API token "x" already exists for userid "1".').
			if c.noun == "service" {
				return
			}
			shown := fmt.Sprintf(`!!document.querySelector('#%s-edit .field-error')`, c.noun)
			if c.noun == "host" || c.noun == "item" || c.noun == "trigger" {
				shown = fmt.Sprintf(`!document.querySelector('#%s-error').hidden`, c.noun)
			}
			var errText string
			dup := []chromedp.Action{clickJS(row(name)), pollJS(fmt.Sprintf(`(document.querySelector(%q) || {}).value === %q`, c.nameInput, name)),
				chromedp.WaitVisible("#"+c.noun+"-clone", chromedp.ByQuery), chromedp.Click("#"+c.noun+"-clone", chromedp.ByQuery),
				pollJS(fmt.Sprintf(`!document.querySelector('#%s-clone') && !!document.querySelector(%q)`, c.noun, c.nameInput)),
				setJS(c.nameInput, name)}
			if c.noun != "item" {
				dup = append(dup, c.extra...)
			}
			dup = append(dup, chromedp.Click("#"+c.noun+"-save", chromedp.ByQuery), pollJS(shown),
				chromedp.Evaluate(fmt.Sprintf(`(document.querySelector('#%s-edit .field-error') || document.querySelector('#%s-error')).textContent`, c.noun, c.noun), &errText))
			run(t, ctx, "a duplicate", dup...)
			if errText == "" || count(name) != 1 {
				t.Errorf("a duplicate clone: error %q, %d objects of the name", errText, count(name))
			}
			// Edit: the original renamed through its form (a host: its
			// visible name; the list shows it).
			edited, input, key := name+" e", c.nameInput, c.nameKey
			if c.noun == "host" {
				edited, input, key = "Clone source", "#host-name", "name"
			}
			run(t, ctx, "edit", clickJS(row(name)), pollJS(fmt.Sprintf(`(document.querySelector(%q) || {}).value === %q`, c.nameInput, name)),
				pollJS(fmt.Sprintf(`!!document.querySelector('#%s-clone')`, c.noun)), setJS(input, edited),
				chromedp.Click("#"+c.noun+"-save", chromedp.ByQuery), pollJS(row(edited)))
			c.nameKey = key
			if n := count(edited); n != 1 {
				t.Errorf("after the edit: %d of the new name", n)
			}
		})
	}
	// General settings and authentication: one form each, changed and
	// read back; a wrong value refused beside its field, nothing saved.
	inventoryMode := func() any {
		var st map[string]any
		json.Unmarshal(apiCall(t, base, token, "settings.get", map[string]any{"output": []string{"default_inventory_mode"}}), &st)
		return st["default_inventory_mode"]
	}
	invBefore := inventoryMode()
	run(t, ctx, "general settings", chromedp.Navigate(base+"/admin/settings"), chromedp.WaitVisible(`#settings-login-attempts`, chromedp.ByQuery),
		setJS(`#settings-login-attempts`, "7"), chromedp.Click(`#settings-save`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#settings-saved') || {}).textContent === 'Saved: login_attempts.'`))
	settings := func() string {
		var st map[string]any
		json.Unmarshal(apiCall(t, base, token, "settings.get", map[string]any{"output": []string{"login_attempts"}}), &st)
		return fmt.Sprint(st["login_attempts"])
	}
	if v := settings(); v != "7" {
		t.Errorf("login_attempts after the form: %s", v)
	}
	if v := inventoryMode(); v != invBefore {
		t.Errorf("saving login_attempts changed default_inventory_mode from %v to %v", invBefore, v)
	}
	run(t, ctx, "a wrong setting", setJS(`#settings-login-attempts`, "99"), chromedp.Click(`#settings-save`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#settings-error').hidden && !!document.querySelector('#settings-edit .field-error')`))
	if v := settings(); v != "7" {
		t.Errorf("login_attempts after a refused 99: %s", v)
	}
	run(t, ctx, "authentication", chromedp.Navigate(base+"/admin/authentication"), chromedp.WaitVisible(`#authentication-passwd-min-length`, chromedp.ByQuery),
		setJS(`#authentication-passwd-min-length`, "12"), chromedp.Click(`#authentication-save`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#authentication-saved') || {}).textContent === 'Saved.'`))
	var auth map[string]any
	json.Unmarshal(apiCall(t, base, token, "authentication.get", map[string]any{"output": []string{"passwd_min_length"}}), &auth)
	if auth["passwd_min_length"] != "12" {
		t.Errorf("passwd_min_length after the form: %v", auth["passwd_min_length"])
	}

	// The single-form and read-only administration pages, for the docs.
	for _, p := range []struct{ path, wait, shot string }{
		{"/admin/settings", "#settings-edit", "admin-settings"}, {"/admin/housekeeping", "#housekeeping-edit", "admin-housekeeping"},
		{"/admin/authentication", "#authentication-edit", "admin-authentication"}, {"/admin/autoreg", "#autoreg-save", "admin-autoreg"},
		{"/user/tokens", "#token-create", "user-tokens"}, {"/admin/queue", "#queue-overview", "admin-queue"},
		{"/admin/auditlog", "#audit-table", "admin-auditlog"}, {"/admin/sysinfo", "#sysinfo-table", "admin-sysinfo"},
	} {
		run(t, ctx, p.path, chromedp.Navigate(base+p.path), chromedp.WaitVisible(p.wait, chromedp.ByQuery))
		shot1400(t, ctx, sh, p.shot)
	}
	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main b, main i, main u').length`, &injected))
	if injected != 0 {
		t.Errorf("markup from names became elements (%d)", injected)
	}
}
