package web_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// biMarkup is a name that a page writing HTML from strings would run
// (both forms: a script element and an image's error handler). Zabbix
// 6.0.14 stores such names as given wherever a name is free text; a
// host's or proxy's technical name refuses them ("invalid host name").
const biMarkup = `<script>alert(1)</script><img src=x onerror=alert(2)>`

// biInput is one bad value typed into a form's field: the API's error,
// as the test expects to find it beside the field (a part of it, the
// words 6.0.14 uses unless the comment says otherwise).
type biInput struct {
	what, field, value, want string
	// before runs first (a check box that shows the field).
	before []chromedp.Action
}

// biCase is one page family: an object A made through the API is
// opened from its list row and given bad input; its API object must
// stay as it was, the family's object count too, and the form stays
// open with the input. Then A is renamed to biMarkup, which is stored
// as given and listed as text.
type biCase struct {
	name      string
	page      string
	noun      string // ids #<noun>-edit, #<noun>-save
	api       string
	idKey     string
	nameKey   string
	nameField string         // the name input's id (default <noun>-name)
	row       string         // class of the list row's name link (default <noun>-row .<noun>-name)
	a, b      map[string]any // the objects A and B (B: the duplicate's name)
	filter    map[string]any // the get's other parameters
	limit     int            // the name's length in 6.0's schema
	long      string         // the too-long error's words (default "value is too long")
	bad       []biInput      // more bad inputs: a wrong type, markup refused
	dup       *biInput       // the duplicate (default: B's name in the name field)
	xssField  string         // the field that takes markup (default the name's)
	xssKey    string
	xssRefuse string // the error when the name refuses markup
	kids      func() int
	shot      string // a screenshot of the too-long error
}

// TestIntegrationBrowserBadInput submits bad input through the form of
// every page family but hosts and items (hostform and clone test
// those): a name over its column's length, a text in a numeric or time
// field, markup in a name and a duplicate name. The API's error shows
// beside the field it names, the form stays open with what was typed,
// and the API shows nothing half-saved: the edited object unchanged,
// no object or child made. Markup in a name is stored as given and
// listed as text, no script run (watchPage fails the test on a
// dialog). One browser for the whole table.
func TestIntegrationBrowserBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "bi-host", Groups: []string{"BI"},
		Items: []catalog.ItemSpec{{Key: "bi.load", Name: "BI load", ValueType: "float"}}}}}
	_, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	host := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "selectGroups": []string{"groupid"}, "filter": map[string]any{"host": "bi-host"}})
	hostid := host["hostid"].(string)
	groupid := host["groups"].([]any)[0].(map[string]any)["groupid"].(string)
	itemid := getOne(t, base, token, "item", map[string]any{"output": []string{"itemid"}, "filter": map[string]any{"key_": "bi.load"}})["itemid"].(string)
	hosts := map[string]any{"hostids": []string{hostid}}
	op := []map[string]any{{"operationtype": 0, "opmessage_grp": []map[string]string{{"usrgrpid": "7"}}, "opmessage": map[string]any{"default_msg": 1}}}
	maint := func(name string) map[string]any {
		return map[string]any{"name": name, "active_since": 1700000000, "active_till": 1700086400, "groups": []map[string]string{{"groupid": groupid}},
			"timeperiods": []map[string]any{{"timeperiod_type": 0, "period": 3600, "start_date": 1700000000}}}
	}
	corr := func(name string) map[string]any {
		return map[string]any{"name": name, "filter": map[string]any{"evaltype": 0, "conditions": []map[string]any{{"type": 0, "tag": "t"}}}, "operations": []map[string]any{{"type": 0}}}
	}
	sla := func(name string) map[string]any {
		return map[string]any{"name": name, "slo": "99.5", "period": 0, "timezone": "UTC", "effective_date": 0, "service_tags": []map[string]any{{"tag": "t", "value": "v"}}}
	}
	webItems := func() int {
		return countOf(t, base, token, "item", map[string]any{"hostids": []string{hostid}, "webitems": true})
	}
	const intWanted = "an integer is expected"
	const timeWanted = "a time unit is expected"
	cases := []biCase{
		{name: "templates", page: "/config/templates", noun: "template", api: "template", idKey: "templateid", nameKey: "host", nameField: "template-host",
			a: map[string]any{"host": "bi-tpl-a", "groups": []map[string]string{{"groupid": groupid}}}, b: map[string]any{"host": "bi-tpl-b", "groups": []map[string]string{{"groupid": groupid}}},
			limit: 128, dup: &biInput{want: `Template with host name "bi-tpl-b" already exists.`},
			bad:      []biInput{{what: "markup in the technical name", field: "template-host", value: biMarkup, want: "invalid host name"}},
			xssField: "template-name", xssKey: "name"},
		{name: "host groups", page: "/config/hostgroups", noun: "hostgroup", api: "hostgroup", idKey: "groupid", nameKey: "name",
			a: map[string]any{"name": "bi group a"}, b: map[string]any{"name": "bi group b"}, limit: 255, shot: "badinput-hostgroup-too-long"},
		{name: "triggers", page: "/config/triggers?hostid=" + hostid, noun: "trigger", api: "trigger", idKey: "triggerid", nameKey: "description",
			nameField: "trigger-description", row: "config-trigger-row .trigger-name", filter: hosts,
			// A duplicate is the same name and expression on the host.
			a:     map[string]any{"description": "bi trigger a", "expression": "last(/bi-host/bi.load)>1"},
			b:     map[string]any{"description": "bi trigger b", "expression": "last(/bi-host/bi.load)>1"},
			limit: 255, dup: &biInput{want: `Trigger "bi trigger b" already exists on "bi-host".`}},
		{name: "discovery rules", page: "/config/discovery?hostid=" + hostid, noun: "lld", api: "discoveryrule", idKey: "itemid", nameKey: "name", filter: hosts,
			a: map[string]any{"name": "bi lld a", "hostid": hostid, "key_": "bi.lld.a", "type": 2}, b: map[string]any{"name": "bi lld b", "hostid": hostid, "key_": "bi.lld.b", "type": 2},
			// 6.0.14's legacy API: 'Value "…" is too long for field "name" - 256 characters.'; Peregrine: "value is too long (…)".
			limit: 255, long: "too long",
			bad: []biInput{{what: "a text for the lifetime", field: "lld-lifetime", value: "abc", want: `Incorrect value for field "lifetime": a time unit is expected.`}},
			// The duplicate of a rule is its key.
			dup:  &biInput{field: "lld-key", value: "bi.lld.b", want: `Item with key "bi.lld.b" already exists on "bi-host".`},
			kids: func() int { return countOf(t, base, token, "item", map[string]any{"hostids": []string{hostid}}) }},
		{name: "web scenarios", page: "/config/webscenarios?hostid=" + hostid, noun: "httptest", api: "httptest", idKey: "httptestid", nameKey: "name", filter: hosts,
			a:     map[string]any{"name": "bi web a", "hostid": hostid, "steps": []map[string]any{{"name": "s", "url": "http://127.0.0.1:1/", "no": 1}}},
			b:     map[string]any{"name": "bi web b", "hostid": hostid, "steps": []map[string]any{{"name": "s", "url": "http://127.0.0.1:1/", "no": 1}}},
			limit: 64, bad: []biInput{{what: "a text for the interval", field: "httptest-delay", value: "abc", want: timeWanted},
				{what: "a text for the attempts", field: "httptest-retries", value: "abc", want: intWanted}},
			kids: webItems},
		{name: "network discovery", page: "/config/drules", noun: "drule", api: "drule", idKey: "druleid", nameKey: "name",
			a:     map[string]any{"name": "bi drule a", "iprange": "127.0.0.1", "dchecks": []map[string]any{{"type": 12}}},
			b:     map[string]any{"name": "bi drule b", "iprange": "127.0.0.1", "dchecks": []map[string]any{{"type": 12}}},
			limit: 255, long: `is too long for field "name" - 256 characters. Allowed length is 255 characters.`,
			bad: []biInput{{what: "a text for the interval", field: "drule-delay", value: "abc", want: `Incorrect value for field "delay": a time unit is expected.`}}},
		{name: "actions", page: "/config/actions", noun: "action", api: "action", idKey: "actionid", nameKey: "name",
			a: map[string]any{"name": "bi action a", "eventsource": 0, "operations": op}, b: map[string]any{"name": "bi action b", "eventsource": 0, "operations": op},
			limit: 255, bad: []biInput{{what: "a text for the escalation step", field: "action-esc-period", value: "abc", want: timeWanted}}},
		{name: "maintenance", page: "/config/maintenance", noun: "maintenance", api: "maintenance", idKey: "maintenanceid", nameKey: "name",
			a: maint("bi maint a"), b: maint("bi maint b"), limit: 128,
			// 6.0.14 takes a time unit for a period's length ("a time
			// unit is expected" for a text); Peregrine takes seconds.
			bad: []biInput{{what: "a text for a period's length", field: "maintenance-periods", value: "abc", want: intWanted}}},
		{name: "event correlation", page: "/config/correlation", noun: "correlation", api: "correlation", idKey: "correlationid", nameKey: "name",
			a: corr("bi corr a"), b: corr("bi corr b"), limit: 255},
		{name: "proxies", page: "/config/proxies", noun: "proxy", api: "proxy", idKey: "proxyid", nameKey: "host", nameField: "proxy-host",
			a:     map[string]any{"host": "bi-proxy-a", "status": 6, "interface": map[string]any{"ip": "127.0.0.1", "dns": "", "useip": 1, "port": "10051"}},
			b:     map[string]any{"host": "bi-proxy-b", "status": 5},
			limit: 128, dup: &biInput{want: `Proxy "bi-proxy-b" already exists.`},
			bad: []biInput{{what: "a text for the port", field: "proxy-port", value: "abc", want: intWanted}},
			// A proxy's name is a technical name: markup is refused.
			xssRefuse: "invalid host name"},
		{name: "users", page: "/admin/users", noun: "user", api: "user", idKey: "userid", nameKey: "username", nameField: "user-username",
			a:     map[string]any{"username": "bi-user-a", "passwd": "Zx9!long-passw0rd", "roleid": "1", "usrgrps": []map[string]string{{"usrgrpid": "8"}}},
			b:     map[string]any{"username": "bi-user-b", "passwd": "Zx9!long-passw0rd", "roleid": "1", "usrgrps": []map[string]string{{"usrgrpid": "8"}}},
			limit: 100, dup: &biInput{want: `User with username "bi-user-b" already exists.`},
			bad: []biInput{{what: "a text for rows per page", field: "user-rows-per-page", value: "abc", want: intWanted},
				{what: "a text for the auto-logout", field: "user-autologout", value: "abc", want: timeWanted}}},
		{name: "user groups", page: "/admin/usergroups", noun: "usergroup", api: "usergroup", idKey: "usrgrpid", nameKey: "name",
			a: map[string]any{"name": "bi ugroup a"}, b: map[string]any{"name": "bi ugroup b"}, limit: 64},
		{name: "roles", page: "/admin/roles", noun: "role", api: "role", idKey: "roleid", nameKey: "name",
			a: map[string]any{"name": "bi role a", "type": 1}, b: map[string]any{"name": "bi role b", "type": 1}, limit: 255},
		{name: "media types", page: "/admin/mediatypes", noun: "mediatype", api: "mediatype", idKey: "mediatypeid", nameKey: "name",
			a:     map[string]any{"name": "bi mt a", "type": 0, "smtp_server": "localhost", "smtp_helo": "localhost", "smtp_email": "a@example.com"},
			b:     map[string]any{"name": "bi mt b", "type": 1, "exec_path": "x.sh"},
			limit: 100, shot: "badinput-mediatype-too-long",
			bad: []biInput{{what: "a text for the port", field: "mediatype-smtp-port", value: "abc", want: intWanted},
				{what: "a text for the attempts", field: "mediatype-maxattempts", value: "abc", want: intWanted}}},
		{name: "scripts", page: "/admin/scripts", noun: "script", api: "script", idKey: "scriptid", nameKey: "name",
			a:     map[string]any{"name": "bi script a", "type": 5, "scope": 2, "command": "return 1"},
			b:     map[string]any{"name": "bi script b", "type": 0, "scope": 2, "command": "true"},
			limit: 255, bad: []biInput{{what: "a text for the timeout", field: "script-timeout", value: "abc", want: timeWanted}}},
		{name: "API tokens", page: "/user/tokens", noun: "token", api: "token", idKey: "tokenid", nameKey: "name",
			a: map[string]any{"name": "bi token a"}, b: map[string]any{"name": "bi token b"}, limit: 64,
			dup: &biInput{want: `API token "bi token b" already exists for userid "1".`}},
		{name: "dashboards", page: "/dashboards", noun: "dashboard", api: "dashboard", idKey: "dashboardid", nameKey: "name",
			a: map[string]any{"name": "bi dash a", "pages": []map[string]any{{}}}, b: map[string]any{"name": "bi dash b", "pages": []map[string]any{{}}}, limit: 255},
		{name: "services", page: "/services", noun: "service", api: "service", idKey: "serviceid", nameKey: "name",
			a: map[string]any{"name": "bi service a", "algorithm": 1, "sortorder": 0}, limit: 128,
			bad: []biInput{{what: "a text for the sort order", field: "service-sortorder", value: "abc", want: intWanted}}},
		{name: "SLAs", page: "/services/sla", noun: "sla", api: "sla", idKey: "slaid", nameKey: "name",
			a: sla("bi sla a"), b: sla("bi sla b"), limit: 255,
			bad: []biInput{{what: "a text for the SLO", field: "sla-slo", value: "abc", want: "a floating point value is expected"}}},
		{name: "value maps", page: "/config/valuemaps?hostid=" + hostid, noun: "valuemap", api: "valuemap", idKey: "valuemapid", nameKey: "name",
			row: "config-valuemap-row .valuemap-name", filter: hosts,
			a:     map[string]any{"name": "bi vm a", "hostid": hostid, "mappings": []map[string]any{{"value": "1", "newvalue": "Up"}}},
			b:     map[string]any{"name": "bi vm b", "hostid": hostid, "mappings": []map[string]any{{"value": "1", "newvalue": "Up"}}},
			limit: 64,
			// 6.0.14: 'Value map "bi vm b" already exists.'
			dup: &biInput{want: `Value map "bi vm b" already exists.`}},
		{name: "graphs", page: "/config/graphs?hostid=" + hostid, noun: "graph", api: "graph", idKey: "graphid", nameKey: "name", filter: hosts,
			a:     map[string]any{"name": "bi graph a", "width": 900, "height": 200, "gitems": []map[string]any{{"itemid": itemid, "color": "00AA00"}}},
			b:     map[string]any{"name": "bi graph b", "width": 900, "height": 200, "gitems": []map[string]any{{"itemid": itemid, "color": "00AA00"}}},
			limit: 128, dup: &biInput{want: `Graph with name "bi graph b" already exists in graphs or graph prototypes.`},
			// 6.0.14: 'Incorrect value "abc" for int field "width".'
			bad: []biInput{{what: "a text for the width", field: "graph-width", value: "abc", want: intWanted}}},
	}

	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.nameField == "" {
				c.nameField = c.noun + "-name"
			}
			if c.row == "" {
				c.row = c.noun + "-row ." + c.noun + "-name"
			}
			if c.long == "" {
				c.long = "value is too long"
			}
			if c.xssField == "" {
				c.xssField, c.xssKey = c.nameField, c.nameKey
			}
			var made map[string][]string
			json.Unmarshal(apiCall(t, base, token, c.api+".create", c.a), &made)
			ida := made[c.idKey+"s"][0]
			if c.b != nil {
				apiCall(t, base, token, c.api+".create", c.b)
			}
			nameA := c.a[c.nameKey].(string)
			params := func(p map[string]any) map[string]any {
				for k, v := range c.filter {
					p[k] = v
				}
				return p
			}
			objA := func() map[string]any {
				return getOne(t, base, token, c.api, params(map[string]any{"output": "extend", c.idKey + "s": []string{ida}}))
			}
			all := func() int { return countOf(t, base, token, c.api, params(map[string]any{})) }
			kids := func() int {
				if c.kids == nil {
					return 0
				}
				return c.kids()
			}
			before, n0, k0 := objA(), all(), kids()
			row := func(name string) string {
				return fmt.Sprintf(`[...document.querySelectorAll('.%s')].find((e) => e.textContent === %q)`, c.row, name)
			}
			open := chromedp.Tasks{chromedp.Navigate(base + c.page), pollJS(row(nameA)), clickJS(row(nameA)),
				pollJS(fmt.Sprintf(`(document.querySelector('#%s') || {}).value === %q`, c.nameField, nameA))}
			inputs := []biInput{{what: "a name over the limit", field: c.nameField, value: strings.Repeat("L", c.limit+1), want: c.long}}
			inputs = append(inputs, c.bad...)
			if c.dup == nil && c.b != nil {
				bn := c.b[c.nameKey].(string)
				c.dup = &biInput{value: bn, want: "already exists"}
			}
			if c.dup != nil {
				d := *c.dup
				d.what = "a duplicate"
				if d.field == "" {
					d.field, d.value = c.nameField, c.b[c.nameKey].(string)
				}
				inputs = append(inputs, d)
			}
			if c.xssRefuse != "" {
				inputs = append(inputs, biInput{what: "markup in the name", field: c.nameField, value: biMarkup, want: c.xssRefuse})
			}
			for i, in := range inputs {
				set := setJS("#"+in.field, in.value)
				if in.field == "maintenance-periods" {
					set = setJS("#maintenance-periods .period-length", in.value)
				}
				steps := chromedp.Tasks{open}
				steps = append(steps, in.before...)
				steps = append(steps, set, chromedp.Click("#"+c.noun+"-save", chromedp.ByQuery), pollJS(fieldError(in.field, in.want)))
				run(t, ctx, in.what, steps...)
				var kept bool
				keep := fmt.Sprintf(`!!document.querySelector('#%s-edit') && document.querySelector('#%s').value === %q`, c.noun, in.field, in.value)
				if in.field == "maintenance-periods" {
					keep = fmt.Sprintf(`document.querySelector('#maintenance-periods .period-length').value === %q`, in.value)
				}
				run(t, ctx, "the form keeps the input", chromedp.Evaluate(keep, &kept))
				if !kept {
					t.Errorf("%s: the form closed or lost the input", in.what)
				}
				if i == 0 && c.shot != "" {
					shot1400(t, ctx, sh, c.shot)
				}
				if after := objA(); !reflect.DeepEqual(after, before) {
					t.Errorf("%s changed the object: %v, was %v", in.what, after, before)
				}
				if n, k := all(), kids(); n != n0 || k != k0 {
					t.Errorf("%s: %d objects and %d children after, %d and %d before", in.what, n, k, n0, k0)
				}
			}

			// Markup in a name: stored as given, listed as text.
			if c.xssRefuse != "" {
				return
			}
			run(t, ctx, "markup in the name", open, setJS("#"+c.xssField, biMarkup), chromedp.Click("#"+c.noun+"-save", chromedp.ByQuery),
				pollJS(row(biMarkup)))
			if got := objA()[c.xssKey]; got != biMarkup {
				t.Errorf("the name with markup is stored as %q", got)
			}
			var injected int
			run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img').length`, &injected))
			if injected != 0 {
				t.Errorf("markup in a name became %d elements", injected)
			}
		})
	}

	// The one-form pages: a wrong value beside its field, the setting
	// unchanged.
	for _, c := range []struct {
		name, page, api, key, field, value, want string
		before                                   []chromedp.Action
		shot                                     string
	}{
		{"general settings", "/admin/settings", "settings", "login_attempts", "settings-login-attempts", "abc", intWanted, nil, "badinput-settings-wrong-type"},
		{"general settings", "/admin/settings", "settings", "work_period", "settings-work-period", "abc", "a time period is expected", nil, ""},
		{"housekeeping", "/admin/housekeeping", "housekeeping", "hk_audit", "housekeeping-hk-audit", "abc", timeWanted, nil, ""},
		{"housekeeping", "/admin/housekeeping", "housekeeping", "hk_audit", "housekeeping-hk-audit", "1h", "value must be one of 86400-788400000", nil, ""},
		{"authentication", "/admin/authentication", "authentication", "passwd_min_length", "authentication-passwd-min-length", "abc", intWanted, nil, ""},
		{"authentication", "/admin/authentication", "authentication", "passwd_min_length", "authentication-passwd-min-length", "99", "value must be one of 1-70", nil, ""},
		{"autoregistration", "/admin/autoreg", "autoregistration", "tls_accept", "autoreg-tls-psk-identity", strings.Repeat("L", 129), "value is too long",
			[]chromedp.Action{setJS("#autoreg-accept-psk", "1"), setJS("#autoreg-tls-psk", "1f87b595725ac58dd977beef14b97461")}, ""},
		{"autoregistration", "/admin/autoreg", "autoregistration", "tls_accept", "autoreg-tls-psk", "zz", "minimum length is 32 characters",
			[]chromedp.Action{setJS("#autoreg-accept-psk", "1"), setJS("#autoreg-tls-psk-identity", "bi")}, ""},
	} {
		t.Run(c.name+" "+c.key+" "+c.value, func(t *testing.T) {
			read := func() any {
				var st map[string]any
				json.Unmarshal(apiCall(t, base, token, c.api+".get", map[string]any{"output": "extend"}), &st)
				return st[c.key]
			}
			was := read()
			save := fmt.Sprintf("#%s-save", strings.Split(c.field, "-")[0])
			steps := chromedp.Tasks{chromedp.Navigate(base + c.page), chromedp.WaitVisible(save, chromedp.ByQuery)}
			steps = append(steps, c.before...)
			steps = append(steps, setJS("#"+c.field, c.value), chromedp.Click(save, chromedp.ByQuery),
				pollJS(fieldError(c.field, c.want)),
				pollJS(fmt.Sprintf(`document.querySelector('#%s').value === %q`, c.field, c.value)))
			run(t, ctx, "a wrong value", steps...)
			if c.shot != "" {
				shot1400(t, ctx, sh, c.shot)
			}
			if now := read(); now != was {
				t.Errorf("%s is %v after the refused form, was %v", c.key, now, was)
			}
		})
	}
}

// TestIntegrationBrowserReadOnlyServices: the services, SLA and API
// token pages of users who may only read. A User (type 1) sees services
// and SLAs without a create control and their forms read-only, and the
// API refuses the same writes sent directly; an Admin whose role denies
// manage_sla and manage_api_tokens sees the SLAs read-only and is
// refused the API tokens page (403), and the API refuses sla.* and
// token.* writes. Nothing changes.
func TestIntegrationBrowserReadOnlyServices(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{})
	token := apiLogin(t, base, password)
	var sv struct{ ServiceIDs []string }
	json.Unmarshal(apiCall(t, base, token, "service.create", map[string]any{"name": "ro service", "algorithm": 1, "sortorder": 0}), &sv)
	var sl struct{ SLAIDs []string }
	json.Unmarshal(apiCall(t, base, token, "sla.create", map[string]any{"name": "ro sla", "slo": "99.5", "period": 0, "timezone": "UTC", "effective_date": 0,
		"service_tags": []map[string]any{{"tag": "t", "value": "v"}}}), &sl)
	var role struct{ RoleIDs []string }
	json.Unmarshal(apiCall(t, base, token, "role.create", map[string]any{"name": "ro no sla", "type": 2,
		"rules": map[string]any{"actions": []map[string]any{{"name": "manage_sla", "status": 0}, {"name": "manage_api_tokens", "status": 0}}}}), &role)
	const pw = "Zx9!long-passw0rd"
	for user, roleid := range map[string]string{"ro-user": "1", "ro-nosla": role.RoleIDs[0]} {
		apiCall(t, base, token, "user.create", map[string]any{"username": user, "passwd": pw, "roleid": roleid, "usrgrps": []map[string]string{{"usrgrpid": "8"}}})
	}
	var user, nosla string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "ro-user", "password": pw}), &user)
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "ro-nosla", "password": pw}), &nosla)
	svBefore := getOne(t, base, token, "service", map[string]any{"output": "extend", "serviceids": sv.ServiceIDs})
	slBefore := getOne(t, base, token, "sla", map[string]any{"output": "extend", "slaids": sl.SLAIDs})

	ctx, _ := browser(t)
	watchPage(t, ctx)
	readOnlyForm := func(who, page, noun, name string) {
		t.Helper()
		row := fmt.Sprintf(`[...document.querySelectorAll('.%s-row .%s-name')].find((e) => e.textContent === %q)`, noun, noun, name)
		run(t, ctx, who+": "+page+" read-only", chromedp.Navigate(base+page), pollJS(row),
			pollJS(fmt.Sprintf(`!document.querySelector('#%s-create') && !document.querySelector('.%s-row .row-check')`, noun, noun)), clickJS(row),
			pollJS(fmt.Sprintf(`(document.querySelector('#%s-name') || {}).value === %q`, noun, name)),
			pollJS(fmt.Sprintf(`document.querySelector('#%s-name').disabled && !document.querySelector('#%s-save') && !document.querySelector('#%s-clone') && !document.querySelector('#%s-delete')`,
				noun, noun, noun, noun)))
	}
	loginAs(t, ctx, base, "ro-user", pw)
	readOnlyForm("a User", "/services", "service", "ro service")
	readOnlyForm("a User", "/services/sla", "sla", "ro sla")
	run(t, ctx, "log out", chromedp.Click("#logout", chromedp.ByQuery), chromedp.WaitVisible("#login-form", chromedp.ByQuery))
	loginAs(t, ctx, base, "ro-nosla", pw)
	readOnlyForm("an Admin without manage_sla", "/services/sla", "sla", "ro sla")
	var tokensLink bool
	run(t, ctx, "no API tokens link", chromedp.Evaluate(`!!document.querySelector('a[href="/user/tokens"]')`, &tokensLink))
	if tokensLink {
		t.Error("an Admin without manage_api_tokens is offered the API tokens page")
	}
	if s := pageStatus(t, base, nosla, "/user/tokens"); s != 403 {
		t.Errorf("an Admin without manage_api_tokens: GET /user/tokens %d, want 403", s)
	}
	if s := pageStatus(t, base, user, "/user/tokens"); s != 200 {
		t.Errorf("a User (manage_api_tokens allowed): GET /user/tokens %d, want 200", s)
	}

	// Direct requests: refused for permissions (services in 6.0.14's
	// words: 'Cannot update service "x": read-write access to the
	// service is required.'), nothing changed or made.
	for _, w := range []struct {
		who, sess, method string
		params            any
	}{
		{"a User", user, "service.update", map[string]any{"serviceid": sv.ServiceIDs[0], "name": "hijacked"}},
		{"a User", user, "service.create", map[string]any{"name": "ro made", "algorithm": 1, "sortorder": 0}},
		{"a User", user, "service.delete", sv.ServiceIDs},
		{"a User", user, "sla.update", map[string]any{"slaid": sl.SLAIDs[0], "name": "hijacked"}},
		{"a User", user, "sla.delete", sl.SLAIDs},
		{"an Admin without manage_sla", nosla, "sla.update", map[string]any{"slaid": sl.SLAIDs[0], "name": "hijacked"}},
		{"an Admin without manage_sla", nosla, "sla.create", map[string]any{"name": "ro made", "slo": "99", "period": 0, "timezone": "UTC", "effective_date": 0,
			"service_tags": []map[string]any{{"tag": "t", "value": "v"}}}},
		{"an Admin without manage_api_tokens", nosla, "token.create", map[string]any{"name": "ro made"}},
		{"an Admin without manage_api_tokens", nosla, "token.get", map[string]any{}},
	} {
		e := apiTry(t, base, w.sess, w.method, w.params)
		if want := "ermission"; strings.HasPrefix(w.method, "service.") {
			want = "read-write access to the service is required"
			if !strings.Contains(e, want) {
				t.Errorf("%s's %s: %q, want %q", w.who, w.method, e, want)
			}
		} else if !strings.Contains(e, want) {
			t.Errorf("%s's %s: %q, want a refusal for permissions", w.who, w.method, e)
		}
	}
	if now := getOne(t, base, token, "service", map[string]any{"output": "extend", "serviceids": sv.ServiceIDs}); !reflect.DeepEqual(now, svBefore) {
		t.Errorf("the service changed: %v, was %v", now, svBefore)
	}
	if now := getOne(t, base, token, "sla", map[string]any{"output": "extend", "slaids": sl.SLAIDs}); !reflect.DeepEqual(now, slBefore) {
		t.Errorf("the SLA changed: %v, was %v", now, slBefore)
	}
	for api, name := range map[string]string{"service": "ro made", "sla": "ro made", "token": "ro made"} {
		if n := countOf(t, base, token, api, map[string]any{"filter": map[string]any{"name": name}}); n != 0 {
			t.Errorf("a refused %s.create made %d", api, n)
		}
	}
}
