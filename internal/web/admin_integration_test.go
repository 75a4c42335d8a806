package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// The names the test gives: markup and quotes that a page writing HTML
// from strings would break on or run.
const (
	adminMT    = `<script>alert("mt")</script>'&hook`
	adminUser  = `<script>u</script>"'&`
	adminGroup = `Ops <img src=x onerror=alert(3)> "'&`
	adminMaint = `<script>m</script> window "'&`
	adminAct   = `<b>Disaster</b> pager "'&`
)

// setJS sets a form control's value (or a check box's state) and tells
// the page (input and change events), as a user's choice would.
func setJS(sel, v string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) throw new Error('no ' + %q);
		if (e.type === 'checkbox') e.checked = %q === '1'; else e.value = %q;
		e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, sel, v, v), nil)
}

// pickJS selects the options of a multiple select by value.
func pickJS(sel string, vs ...string) chromedp.Action {
	js, _ := json.Marshal(vs)
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const want = %s; for (const o of document.querySelector(%q).options) o.selected = want.includes(o.value); })()`, js, sel), nil)
}

func pollJS(expr string) chromedp.Action {
	return chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(20*time.Second))
}

// rowNamed is a JS expression: the list row link of noun with this text.
func rowNamed(noun, name string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.%s-row .%s-name')].find((e) => e.textContent === %q)`, noun, noun, name)
}

func clickJS(expr string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const e = %s; if (!e) throw new Error('nothing to click'); e.click(); })()`, expr), nil)
}

// getOne reads the one object of api whose filter matches, or fails.
func getOne(t *testing.T, base, token, api string, params map[string]any) map[string]any {
	t.Helper()
	var l []map[string]any
	json.Unmarshal(apiCall(t, base, token, api+".get", params), &l)
	if len(l) != 1 {
		t.Fatalf("%s.get %v: %d objects, want 1: %v", api, params, len(l), l)
	}
	return l[0]
}

func countOf(t *testing.T, base, token, api string, params map[string]any) int {
	t.Helper()
	var l []map[string]any
	json.Unmarshal(apiCall(t, base, token, api+".get", params), &l)
	return len(l)
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestIntegrationBrowserAdminPages drives the administration pages and
// the maintenance and action pages in headless Chromium: it creates,
// edits, clones and deletes a media type with webhook parameters and a
// message template, a user group with host group rights, a user with a
// medium, a maintenance period and an action, and checks every step
// through the API. Names carry markup and quotes: they must stay text.
// A user of type "User" is refused the administration pages by the
// server itself.
func TestIntegrationBrowserAdminPages(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "web-1", Groups: []string{"Web"}}}})
	token := apiLogin(t, base, password)
	web := getOne(t, base, token, "hostgroup", map[string]any{"output": []string{"groupid"}, "filter": map[string]any{"name": "Web"}})["groupid"].(string)
	admin := getOne(t, base, token, "user", map[string]any{"output": []string{"userid"}, "filter": map[string]any{"username": "Admin"}})["userid"].(string)

	ctx, sh := browser(t)
	var dialogs, exceptions []string
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			dialogs = append(dialogs, e.Message)
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
		case *runtime.EventExceptionThrown:
			exceptions = append(exceptions, e.ExceptionDetails.Error())
		}
	})
	login(t, ctx, base, password)
	defer func() {
		if len(exceptions) > 0 {
			t.Errorf("page exceptions: %q", exceptions)
		}
	}()

	// Media type: a webhook with two parameters and a message template.
	run(t, ctx, "new media type",
		chromedp.Navigate(base+"/admin/mediatypes"),
		chromedp.WaitVisible(`#mediatype-create`, chromedp.ByQuery),
		chromedp.Click(`#mediatype-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#mediatype-edit`, chromedp.ByQuery),
		setJS(`#mediatype-name`, adminMT), setJS(`#mediatype-type`, "4"),
		setJS(`#mediatype-params .mediatype-params-row:first-child .mediatype-params-value`, "http://127.0.0.1:9/hook"),
		chromedp.Click(`#mediatype-params .add-row`, chromedp.ByQuery),
		setJS(`#mediatype-params .mediatype-params-row:last-child .mediatype-params-name`, "Severity"),
		setJS(`#mediatype-params .mediatype-params-row:last-child .mediatype-params-value`, "{EVENT.SEVERITY}"),
		setJS(`#mediatype-script`, "return 'ok';"),
		chromedp.Click(`#mediatype-templates-add`, chromedp.ByQuery),
		setJS(`.mediatype-templates-row .template-subject`, "Problem: {EVENT.NAME}"),
		setJS(`.mediatype-templates-row .template-message`, "Host {HOST.NAME}"),
		setJS(`#mediatype-maxattempts`, "4"))
	sh.take(t, ctx, "admin-mediatype-form")
	run(t, ctx, "create the media type", chromedp.Click(`#mediatype-save`, chromedp.ByQuery), pollJS(rowNamed("mediatype", adminMT)))
	mtParams := map[string]any{"output": "extend", "selectMessageTemplates": "extend", "filter": map[string]any{"name": adminMT}}
	mt := getOne(t, base, token, "mediatype", mtParams)
	mtID := mt["mediatypeid"].(string)
	if ps := js(mt["parameters"]); mt["type"] != "4" || mt["maxattempts"] != "4" ||
		!strings.Contains(ps, `"name":"URL","value":"http://127.0.0.1:9/hook"`) || !strings.Contains(ps, `"name":"Severity","value":"{EVENT.SEVERITY}"`) {
		t.Fatalf("media type made by the form: %v", mt)
	}
	if tm := js(mt["message_templates"]); !strings.Contains(tm, `"subject":"Problem: {EVENT.NAME}"`) || !strings.Contains(tm, `"message":"Host {HOST.NAME}"`) {
		t.Fatalf("message templates: %s", tm)
	}
	run(t, ctx, "the media type's queue", pollJS(fmt.Sprintf(`(document.querySelector('.mediatype-queue[data-id="%s"]') || {}).textContent === 'empty'`, mtID)))
	run(t, ctx, "edit the media type", clickJS(rowNamed("mediatype", adminMT)),
		pollJS(fmt.Sprintf(`(document.querySelector('#mediatype-name') || {}).value === %q`, adminMT)),
		setJS(`#mediatype-timeout`, "10s"), chromedp.Click(`#mediatype-save`, chromedp.ByQuery),
		pollJS(`document.querySelector('#mediatype-form').hidden`))
	if mt = getOne(t, base, token, "mediatype", mtParams); mt["timeout"] != "10s" || mt["maxattempts"] != "4" {
		t.Fatalf("media type after the edit: %v", mt)
	}
	// A refused change shows the API's error beside the field, and
	// nothing is saved.
	run(t, ctx, "a refused edit", clickJS(rowNamed("mediatype", adminMT)),
		pollJS(fmt.Sprintf(`(document.querySelector('#mediatype-name') || {}).value === %q`, adminMT)),
		setJS(`#mediatype-name`, ""), chromedp.Click(`#mediatype-save`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#mediatype-error').hidden && !!document.querySelector('#mediatype-edit .field-error')`))
	run(t, ctx, "clone the media type", setJS(`#mediatype-name`, adminMT), chromedp.Click(`#mediatype-clone`, chromedp.ByQuery),
		pollJS(fmt.Sprintf(`(document.querySelector('#mediatype-name') || {}).value === %q`, adminMT+" (copy)")),
		chromedp.Click(`#mediatype-save`, chromedp.ByQuery), pollJS(rowNamed("mediatype", adminMT+" (copy)")))
	clone := getOne(t, base, token, "mediatype", map[string]any{"output": "extend", "filter": map[string]any{"name": adminMT + " (copy)"}})
	if js(clone["parameters"]) != js(mt["parameters"]) || clone["timeout"] != "10s" {
		t.Fatalf("clone %v of %v", clone, mt)
	}
	run(t, ctx, "delete the clone", clickJS(rowNamed("mediatype", adminMT+" (copy)")),
		pollJS(fmt.Sprintf(`(document.querySelector('#mediatype-name') || {}).value === %q`, adminMT+" (copy)")),
		pollJS(`!!document.querySelector('#mediatype-delete') && !document.querySelector('#mediatype-delete').disabled`), clickJS(`document.querySelector('#mediatype-delete')`), pollJS(`!!document.querySelector('#mediatype-delete-yes') && !document.querySelector('#mediatype-delete-yes').disabled`), clickJS(`document.querySelector('#mediatype-delete-yes')`),
		pollJS(`!`+rowNamed("mediatype", adminMT+" (copy)")))
	if n := countOf(t, base, token, "mediatype", map[string]any{"filter": map[string]any{"name": adminMT + " (copy)"}}); n != 0 {
		t.Fatalf("the deleted clone is still there (%d)", n)
	}
	sh.take(t, ctx, "admin-mediatypes")

	// User group: read-write on the host group, then disabled.
	run(t, ctx, "new user group", chromedp.Navigate(base+"/admin/usergroups"),
		chromedp.WaitVisible(`#usergroup-create`, chromedp.ByQuery), chromedp.Click(`#usergroup-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#usergroup-edit`, chromedp.ByQuery),
		setJS(`#usergroup-name`, adminGroup), chromedp.Click(`#usergroup-rights-add`, chromedp.ByQuery),
		setJS(`.usergroup-rights-row .right-group`, web), setJS(`.usergroup-rights-row .right-permission`, "3"),
		// Peregrine has no tag-based permissions: a tag filter is
		// refused with the API's message, the group is not made.
		chromedp.Click(`#usergroup-tags-add`, chromedp.ByQuery),
		setJS(`.usergroup-tags-row .tag-group`, web), setJS(`.usergroup-tags-row .tag-tag`, "service"), setJS(`.usergroup-tags-row .tag-value`, "web"),
		chromedp.Click(`#usergroup-save`, chromedp.ByQuery),
		pollJS(`document.querySelector('#usergroup-edit .field-error') && document.querySelector('#usergroup-edit .field-error').textContent.includes('tag_filters')`),
		chromedp.Click(`#usergroup-tags .remove-row`, chromedp.ByQuery),
		chromedp.Click(`#usergroup-save`, chromedp.ByQuery), pollJS(rowNamed("usergroup", adminGroup)))
	ugParams := map[string]any{"output": "extend", "selectRights": "extend", "selectTagFilters": "extend", "filter": map[string]any{"name": adminGroup}}
	ug := getOne(t, base, token, "usergroup", ugParams)
	ugID := ug["usrgrpid"].(string)
	if r := js(ug["rights"]); r != fmt.Sprintf(`[{"id":%q,"permission":"3"}]`, web) {
		t.Fatalf("user group made by the form: %v", ug)
	}
	run(t, ctx, "disable the user group", clickJS(rowNamed("usergroup", adminGroup)),
		pollJS(fmt.Sprintf(`(document.querySelector('#usergroup-name') || {}).value === %q`, adminGroup)),
		setJS(`#usergroup-users-status`, "0"), setJS(`.usergroup-rights-row .right-permission`, "2"),
		chromedp.Click(`#usergroup-save`, chromedp.ByQuery), pollJS(`document.querySelector('#usergroup-form').hidden`))
	if ug = getOne(t, base, token, "usergroup", ugParams); ug["users_status"] != "1" || !strings.Contains(js(ug["rights"]), `"permission":"2"`) {
		t.Fatalf("user group after the edit: %v", ug)
	}
	// Enabled again with the mass action (once the list shows the
	// edit: a row drawn before it still says Enabled).
	run(t, ctx, "mass enable", pollJS(fmt.Sprintf(`!!document.querySelector('.usergroup-row[data-id="%s"] .ack-no')`, ugID)),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector('.usergroup-row[data-id="%s"] .row-check').click()`, ugID), nil),
		pollJS(`!!document.querySelector('#usergroup-mass-enable') && !document.querySelector('#usergroup-mass-enable').disabled`), clickJS(`document.querySelector('#usergroup-mass-enable')`),
		pollJS(fmt.Sprintf(`(document.querySelector('.usergroup-row[data-id="%s"]') || {textContent: ''}).textContent.includes('Enabled')`, ugID)))
	if ug = getOne(t, base, token, "usergroup", ugParams); ug["users_status"] != "0" {
		t.Fatalf("user group after mass enable: %v", ug)
	}

	// User: in the group, with a webhook medium for all but "Not classified".
	run(t, ctx, "new user", chromedp.Navigate(base+"/admin/users"),
		chromedp.WaitVisible(`#user-create`, chromedp.ByQuery), chromedp.Click(`#user-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#user-edit`, chromedp.ByQuery),
		setJS(`#user-username`, adminUser), setJS(`#user-passwd`, "Zx9!long-passw0rd"), setJS(`#user-roleid`, "1"),
		pickJS(`#user-usrgrps`, ugID),
		chromedp.Click(`#user-medias-add`, chromedp.ByQuery),
		setJS(`.user-medias-row .media-type`, mtID), setJS(`.user-medias-row .media-sendto`, "ops-room"),
		setJS(`.user-medias-row .media-period`, "1-5,09:00-18:00"), setJS(`.user-medias-row .media-sev-0`, "0"))
	sh.take(t, ctx, "admin-user-form")
	run(t, ctx, "create the user", chromedp.Click(`#user-save`, chromedp.ByQuery), pollJS(rowNamed("user", adminUser)))
	uParams := map[string]any{"output": "extend", "selectMedias": "extend", "selectUsrgrps": []string{"usrgrpid"}, "filter": map[string]any{"username": adminUser}}
	u := getOne(t, base, token, "user", uParams)
	if m := js(u["medias"]); u["roleid"] != "1" || js(u["usrgrps"]) != fmt.Sprintf(`[{"usrgrpid":%q}]`, ugID) ||
		!strings.Contains(m, `"sendto":"ops-room"`) || !strings.Contains(m, `"severity":"62"`) || !strings.Contains(m, `"period":"1-5,09:00-18:00"`) ||
		!strings.Contains(m, fmt.Sprintf(`"mediatypeid":%q`, mtID)) {
		t.Fatalf("user made by the form: %v", u)
	}
	run(t, ctx, "edit the user", clickJS(rowNamed("user", adminUser)),
		pollJS(fmt.Sprintf(`(document.querySelector('#user-username') || {}).value === %q`, adminUser)),
		setJS(`#user-name`, `Edited <i>name</i>`), setJS(`.user-medias-row .media-active`, "0"),
		chromedp.Click(`#user-save`, chromedp.ByQuery), pollJS(`document.querySelector('#user-form').hidden`))
	if u = getOne(t, base, token, "user", uParams); u["name"] != `Edited <i>name</i>` || !strings.Contains(js(u["medias"]), `"active":"1"`) {
		t.Fatalf("user after the edit: %v", u)
	}
	sh.take(t, ctx, "admin-users")

	// Maintenance: the host group, a one-time period, a tag.
	run(t, ctx, "new maintenance", chromedp.Navigate(base+"/config/maintenance"),
		chromedp.WaitVisible(`#maintenance-create`, chromedp.ByQuery), chromedp.Click(`#maintenance-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#maintenance-edit`, chromedp.ByQuery),
		setJS(`#maintenance-name`, adminMaint), pickJS(`#maintenance-groups`, web),
		setJS(`.maintenance-periods-row .period-length`, "2h"),
		chromedp.Click(`#maintenance-tags-add`, chromedp.ByQuery), setJS(`.maintenance-tags-row .mtag-tag`, "service"),
		setJS(`.maintenance-tags-row .mtag-value`, "web"))
	// The host by search.
	run(t, ctx, "search a host", setJS(`#maintenance-hosts-search`, "web"),
		pollJS(`document.querySelectorAll('#maintenance-hosts-results option').length === 1`),
		chromedp.Evaluate(`document.querySelector('#maintenance-hosts-results option').selected = true`, nil),
		chromedp.Click(`#maintenance-hosts-add`, chromedp.ByQuery))
	sh.take(t, ctx, "config-maintenance-form")
	run(t, ctx, "create the maintenance", chromedp.Click(`#maintenance-save`, chromedp.ByQuery), pollJS(rowNamed("maintenance", adminMaint)))
	mParams := map[string]any{"output": "extend", "selectGroups": []string{"groupid"}, "selectHosts": []string{"host"}, "selectTimeperiods": "extend", "selectTags": "extend",
		"filter": map[string]any{"name": adminMaint}}
	m := getOne(t, base, token, "maintenance", mParams)
	if tp := js(m["timeperiods"]); js(m["groups"]) != fmt.Sprintf(`[{"groupid":%q}]`, web) || !strings.Contains(js(m["hosts"]), `"host":"web-1"`) ||
		!strings.Contains(tp, `"period":"7200"`) || !strings.Contains(tp, `"timeperiod_type":"0"`) || !strings.Contains(js(m["tags"]), `"tag":"service"`) {
		t.Fatalf("maintenance made by the form: %v", m)
	}
	run(t, ctx, "edit the maintenance", clickJS(rowNamed("maintenance", adminMaint)),
		pollJS(fmt.Sprintf(`(document.querySelector('#maintenance-name') || {}).value === %q`, adminMaint)),
		setJS(`.maintenance-periods-row .period-type`, "3"), setJS(`.maintenance-periods-row .period-start-time`, "01:30"),
		setJS(`.maintenance-periods-row .period-dow:nth-of-type(1)`, "1"),
		chromedp.Evaluate(`document.querySelector('.maintenance-periods-row .period-dow').checked = true`, nil),
		chromedp.Click(`#maintenance-save`, chromedp.ByQuery), pollJS(`document.querySelector('#maintenance-form').hidden`))
	if m = getOne(t, base, token, "maintenance", mParams); !strings.Contains(js(m["timeperiods"]), `"timeperiod_type":"3"`) ||
		!strings.Contains(js(m["timeperiods"]), `"start_time":"5400"`) || !strings.Contains(js(m["timeperiods"]), `"dayofweek":"1"`) {
		t.Fatalf("maintenance after the edit: %v", m["timeperiods"])
	}
	sh.take(t, ctx, "config-maintenance")
	run(t, ctx, "delete the maintenance", clickJS(rowNamed("maintenance", adminMaint)),
		pollJS(fmt.Sprintf(`(document.querySelector('#maintenance-name') || {}).value === %q`, adminMaint)),
		pollJS(`!!document.querySelector('#maintenance-delete') && !document.querySelector('#maintenance-delete').disabled`), clickJS(`document.querySelector('#maintenance-delete')`), pollJS(`!!document.querySelector('#maintenance-delete-yes') && !document.querySelector('#maintenance-delete-yes').disabled`), clickJS(`document.querySelector('#maintenance-delete-yes')`),
		pollJS(`!`+rowNamed("maintenance", adminMaint)))
	if n := countOf(t, base, token, "maintenance", map[string]any{"filter": map[string]any{"name": adminMaint}}); n != 0 {
		t.Fatal("the maintenance is still there")
	}

	// Action: severity ≥ Disaster, a message to Admin through the media
	// type from step 1 to 2; then a recovery operation.
	run(t, ctx, "new action", chromedp.Navigate(base+"/config/actions"),
		chromedp.WaitVisible(`#action-create`, chromedp.ByQuery), chromedp.Click(`#action-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#action-edit`, chromedp.ByQuery),
		setJS(`#action-name`, adminAct), setJS(`#action-esc-period`, "30m"),
		chromedp.Click(`#action-conditions-add`, chromedp.ByQuery),
		setJS(`.action-conditions-row .condition-type`, "4"), setJS(`.action-conditions-row .condition-operator`, "5"),
		setJS(`.action-conditions-row .condition-value`, "5"),
		chromedp.Click(`#action-operations-add`, chromedp.ByQuery),
		setJS(`.action-operations-row .op-step-to`, "2"), setJS(`.action-operations-row .op-mediatype`, mtID),
		pickJS(`.action-operations-row .op-users`, admin), pickJS(`.action-operations-row .op-groups`, ugID))
	sh.take(t, ctx, "config-action-form")
	run(t, ctx, "create the action", chromedp.Click(`#action-save`, chromedp.ByQuery), pollJS(rowNamed("action", adminAct)))
	aParams := map[string]any{"output": "extend", "selectFilter": "extend", "selectOperations": "extend", "selectRecoveryOperations": "extend",
		"filter": map[string]any{"name": adminAct}}
	a := getOne(t, base, token, "action", aParams)
	ops := js(a["operations"])
	if a["esc_period"] != "30m" || !strings.Contains(js(a["filter"]), `"conditiontype":"4","formulaid":"A","operator":"5","value":"5"`) ||
		!strings.Contains(ops, `"esc_step_to":"2"`) || !strings.Contains(ops, fmt.Sprintf(`"mediatypeid":%q`, mtID)) ||
		!strings.Contains(ops, fmt.Sprintf(`"userid":%q`, admin)) || !strings.Contains(ops, fmt.Sprintf(`"usrgrpid":%q`, ugID)) {
		t.Fatalf("action made by the form: %v", a)
	}
	run(t, ctx, "edit the action", clickJS(rowNamed("action", adminAct)),
		pollJS(fmt.Sprintf(`(document.querySelector('#action-name') || {}).value === %q && document.querySelectorAll('.action-conditions-row').length === 1`, adminAct)),
		chromedp.Click(`#action-recovery-operations-add`, chromedp.ByQuery), setJS(`.action-recovery-operations-row .op-type`, "11"),
		chromedp.Click(`#action-save`, chromedp.ByQuery), pollJS(`document.querySelector('#action-form').hidden`))
	if a = getOne(t, base, token, "action", aParams); !strings.Contains(js(a["recovery_operations"]), `"operationtype":"11"`) || !strings.Contains(js(a["operations"]), `"esc_step_to":"2"`) {
		t.Fatalf("action after the edit: %v", a)
	}
	sh.take(t, ctx, "config-actions")
	run(t, ctx, "delete the action (mass)", chromedp.Evaluate(fmt.Sprintf(`document.querySelector('.action-row[data-id="%s"] .row-check').click()`, a["actionid"]), nil),
		pollJS(`!!document.querySelector('#action-mass-delete') && !document.querySelector('#action-mass-delete').disabled`), clickJS(`document.querySelector('#action-mass-delete')`), pollJS(`!!document.querySelector('#action-mass-delete-yes') && !document.querySelector('#action-mass-delete-yes').disabled`), clickJS(`document.querySelector('#action-mass-delete-yes')`),
		pollJS(`!`+rowNamed("action", adminAct)))
	if n := countOf(t, base, token, "action", map[string]any{"filter": map[string]any{"name": adminAct}}); n != 0 {
		t.Fatal("the action is still there")
	}

	// The other administration pages open and show the API's data.
	run(t, ctx, "general settings", chromedp.Navigate(base+"/admin/settings"), chromedp.WaitVisible(`#settings-edit`, chromedp.ByQuery))
	run(t, ctx, "housekeeping", chromedp.Navigate(base+"/admin/housekeeping"), chromedp.WaitVisible(`#housekeeping-edit`, chromedp.ByQuery),
		setJS(`#housekeeping-hk-audit`, "400d"), chromedp.Click(`#housekeeping-save`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#housekeeping-saved') || {}).textContent === 'Saved: hk_audit.'`))
	var hk map[string]any
	json.Unmarshal(apiCall(t, base, token, "housekeeping.get", map[string]any{"output": []string{"hk_audit"}}), &hk)
	if hk["hk_audit"] != "400d" {
		t.Fatalf("housekeeping after the form: %v", hk)
	}
	run(t, ctx, "roles", chromedp.Navigate(base+"/admin/roles"), chromedp.WaitVisible(`.role-row`, chromedp.ByQuery))
	run(t, ctx, "scripts", chromedp.Navigate(base+"/admin/scripts"), chromedp.WaitVisible(`#script-list`, chromedp.ByQuery))
	run(t, ctx, "queue", chromedp.Navigate(base+"/admin/queue"), chromedp.WaitVisible(`#queue-overview`, chromedp.ByQuery))
	run(t, ctx, "audit log", chromedp.Navigate(base+"/admin/auditlog"), chromedp.WaitVisible(`#audit-table`, chromedp.ByQuery),
		setJS(`#audit-resource`, "0"), pollJS(fmt.Sprintf(`[...document.querySelectorAll('.audit-name')].some((e) => e.textContent === %q)`, adminUser)))
	sh.take(t, ctx, "admin-auditlog")

	// The user deleted with the mass action, the group and media type
	// through their forms.
	run(t, ctx, "delete the user", chromedp.Navigate(base+"/admin/users"), pollJS(rowNamed("user", adminUser)),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector('.user-row[data-id="%s"] .row-check').click()`, u["userid"]), nil),
		pollJS(`!!document.querySelector('#user-mass-delete') && !document.querySelector('#user-mass-delete').disabled`), clickJS(`document.querySelector('#user-mass-delete')`), pollJS(`!!document.querySelector('#user-mass-delete-yes') && !document.querySelector('#user-mass-delete-yes').disabled`), clickJS(`document.querySelector('#user-mass-delete-yes')`),
		pollJS(`!`+rowNamed("user", adminUser)))
	run(t, ctx, "delete the user group", chromedp.Navigate(base+"/admin/usergroups"), pollJS(rowNamed("usergroup", adminGroup)),
		clickJS(rowNamed("usergroup", adminGroup)), pollJS(fmt.Sprintf(`(document.querySelector('#usergroup-name') || {}).value === %q`, adminGroup)),
		pollJS(`!!document.querySelector('#usergroup-delete') && !document.querySelector('#usergroup-delete').disabled`), clickJS(`document.querySelector('#usergroup-delete')`), pollJS(`!!document.querySelector('#usergroup-delete-yes') && !document.querySelector('#usergroup-delete-yes').disabled`), clickJS(`document.querySelector('#usergroup-delete-yes')`),
		pollJS(`!`+rowNamed("usergroup", adminGroup)))
	run(t, ctx, "delete the media type", chromedp.Navigate(base+"/admin/mediatypes"), pollJS(rowNamed("mediatype", adminMT)),
		clickJS(rowNamed("mediatype", adminMT)), pollJS(fmt.Sprintf(`(document.querySelector('#mediatype-name') || {}).value === %q`, adminMT)),
		pollJS(`!!document.querySelector('#mediatype-delete') && !document.querySelector('#mediatype-delete').disabled`), clickJS(`document.querySelector('#mediatype-delete')`), pollJS(`!!document.querySelector('#mediatype-delete-yes') && !document.querySelector('#mediatype-delete-yes').disabled`), clickJS(`document.querySelector('#mediatype-delete-yes')`),
		pollJS(`!`+rowNamed("mediatype", adminMT)))
	for api, f := range map[string]map[string]any{"user": {"username": adminUser}, "usergroup": {"name": adminGroup}, "mediatype": {"name": adminMT}} {
		if n := countOf(t, base, token, api, map[string]any{"filter": f}); n != 0 {
			t.Errorf("%s %v is still there", api, f)
		}
	}
	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img, main b, main i').length`, &injected))
	if injected != 0 || len(dialogs) != 0 {
		t.Errorf("markup from names became elements (%d) or ran (dialogs %q)", injected, dialogs)
	}

	// A user of type User: the server refuses the administration and
	// configuration pages (403) though the session is good.
	apiCall(t, base, token, "user.create", map[string]any{"username": "plain-user", "passwd": "Zx9!long-passw0rd", "roleid": "1",
		"usrgrps": []map[string]string{{"usrgrpid": getOne(t, base, token, "usergroup", map[string]any{"output": []string{"usrgrpid"}, "filter": map[string]any{"name": "Guests"}})["usrgrpid"].(string)}}})
	var plain string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "plain-user", "password": "Zx9!long-passw0rd"}), &plain)
	for p, want := range map[string]int{"/admin/users": 403, "/admin/mediatypes": 403, "/config/maintenance": 403, "/config/actions": 403, "/problems": 200} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", base+p, nil)
		req.AddCookie(&http.Cookie{Name: "peregrine_session", Value: plain})
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != want {
			t.Errorf("a User's GET %s: %d, want %d", p, r.StatusCode, want)
		}
	}
}
