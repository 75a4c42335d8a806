package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Names with markup and quotes: they must stay text.
const (
	tplGroup = `UI <b>templates</b> "'&`
	tplName  = `ui-tpl`
	tplBase  = `ui-base`
)

// apiTry calls method and returns its error text ("" when it worked).
func apiTry(t *testing.T, base, token, method string, params any) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": 1})
	req, _ := http.NewRequestWithContext(context.Background(), "POST", base+"/api_jsonrpc.php", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json-rpc")
	req.Header.Set("Authorization", "Bearer "+token)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var res struct {
		Error *struct{ Message, Data string } `json:"error"`
	}
	if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if res.Error == nil {
		return ""
	}
	return res.Error.Message + " " + res.Error.Data
}

// loginAs logs the browser in as another user.
func loginAs(t *testing.T, ctx context.Context, base, user, password string) {
	t.Helper()
	run(t, ctx, "log in as "+user,
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible("#username", chromedp.ByQuery),
		chromedp.SendKeys("#username", user, chromedp.ByQuery),
		chromedp.SendKeys("#password", password, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#whoami", chromedp.ByQuery),
		pollJS(fmt.Sprintf(`(document.querySelector('#whoami') || {}).textContent === %q`, user)))
}

// pageStatus is the HTTP status of a page for a session.
func pageStatus(t *testing.T, base, session, path string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", base+path, nil)
	req.AddCookie(&http.Cookie{Name: "peregrine_session", Value: session})
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	return r.StatusCode
}

// shot1400 takes a screenshot at 1400×900 (the docs' size).
func shot1400(t *testing.T, ctx context.Context, sh *shots, name string) {
	t.Helper()
	run(t, ctx, "viewport 1400x900", chromedp.EmulateViewport(1400, 900))
	sh.take(t, ctx, name)
}

// watchPage collects dialogs and exceptions of the page; the test fails
// at its end if there were any.
func watchPage(t *testing.T, ctx context.Context) {
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
	t.Cleanup(func() {
		if len(exceptions) > 0 || len(dialogs) > 0 {
			t.Errorf("page exceptions %q, dialogs %q", exceptions, dialogs)
		}
	})
}

// TestIntegrationBrowserTemplatePages drives /config/hostgroups and
// /config/templates in headless Chromium and checks every step through
// the API: a host group is created, renamed, cloned and deleted; a
// template is created with groups, a linked template, tags and macros
// (the linked template's macro shown as inherited), edited, refused
// with the API's error beside the field (nothing saved), cloned, fully
// cloned (its item and trigger copied), exported to YAML, imported
// from a file, mass updated, and deleted both ways ("Delete" leaves the
// linked host its copies, "Delete and clear" does not). An Admin with
// read-only rights sees no edit control and the API refuses the direct
// request; a User is refused the pages (403).
func TestIntegrationBrowserTemplatePages(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "tpl-host", Groups: []string{"Linux"}}}})
	token := apiLogin(t, base, password)
	linux := getOne(t, base, token, "hostgroup", map[string]any{"output": []string{"groupid"}, "filter": map[string]any{"name": "Linux"}})["groupid"].(string)
	hostID := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "filter": map[string]any{"host": "tpl-host"}})["hostid"].(string)
	var made struct{ TemplateIDs []string }
	json.Unmarshal(apiCall(t, base, token, "template.create", map[string]any{"host": tplBase, "groups": []map[string]string{{"groupid": linux}},
		"macros": []map[string]string{{"macro": "{$BASE_MACRO}", "value": "from base"}}}), &made)
	baseID := made.TemplateIDs[0]

	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)

	// Host groups: create, rename, clone, delete.
	run(t, ctx, "new host group", chromedp.Navigate(base+"/config/hostgroups"),
		chromedp.WaitVisible(`#hostgroup-create`, chromedp.ByQuery), chromedp.Click(`#hostgroup-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#hostgroup-edit`, chromedp.ByQuery), setJS(`#hostgroup-name`, tplGroup+" x"),
		chromedp.Click(`#hostgroup-save`, chromedp.ByQuery), pollJS(rowNamed("hostgroup", tplGroup+" x")))
	group := getOne(t, base, token, "hostgroup", map[string]any{"output": []string{"groupid"}, "filter": map[string]any{"name": tplGroup + " x"}})["groupid"].(string)
	run(t, ctx, "rename the host group", clickJS(rowNamed("hostgroup", tplGroup+" x")),
		pollJS(fmt.Sprintf(`(document.querySelector('#hostgroup-name') || {}).value === %q`, tplGroup+" x")),
		setJS(`#hostgroup-name`, tplGroup), chromedp.Click(`#hostgroup-save`, chromedp.ByQuery), pollJS(rowNamed("hostgroup", tplGroup)))
	if n := countOf(t, base, token, "hostgroup", map[string]any{"groupids": group, "filter": map[string]any{"name": tplGroup}}); n != 1 {
		t.Fatal("the host group was not renamed")
	}
	run(t, ctx, "a duplicate name is refused beside the field", clickJS(rowNamed("hostgroup", tplGroup)),
		pollJS(fmt.Sprintf(`(document.querySelector('#hostgroup-name') || {}).value === %q`, tplGroup)),
		chromedp.Click(`#hostgroup-clone`, chromedp.ByQuery), pollJS(`(document.querySelector('#hostgroup-name') || {}).value.endsWith('(copy)')`),
		setJS(`#hostgroup-name`, "Linux"), chromedp.Click(`#hostgroup-save`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#hostgroup-error').hidden && !!document.querySelector('#hostgroup-edit .field-error')`),
		setJS(`#hostgroup-name`, tplGroup+" (copy)"), chromedp.Click(`#hostgroup-save`, chromedp.ByQuery), pollJS(rowNamed("hostgroup", tplGroup+" (copy)")))
	if n := countOf(t, base, token, "hostgroup", map[string]any{"filter": map[string]any{"name": "Linux"}}); n != 1 {
		t.Fatalf("a refused duplicate left %d groups named Linux", n)
	}
	run(t, ctx, "the hosts are counted", pollJS(`[...document.querySelectorAll('.hostgroup-row')].some((r) => r.querySelector('.hostgroup-name').textContent === 'Linux' && r.querySelector('.hostgroup-hosts').textContent === '1' && r.querySelector('.hostgroup-templates').textContent === '1')`))
	run(t, ctx, "disable the hosts of a group", clickJS(`[...document.querySelectorAll('.hostgroup-row')].find((r) => r.querySelector('.hostgroup-name').textContent === 'Linux').querySelector('.row-check')`),
		clickJS(`document.querySelector('#hostgroup-mass-disable-hosts')`), pollJS(`!!document.querySelector('#hostgroup-mass-disable-hosts-yes')`),
		clickJS(`document.querySelector('#hostgroup-mass-disable-hosts-yes')`), pollJS(`!document.querySelector('#hostgroup-mass-disable-hosts-yes')`))
	if h := getOne(t, base, token, "host", map[string]any{"hostids": hostID, "output": []string{"status"}}); h["status"] != "1" {
		t.Fatalf("the group's host after Disable hosts: %v", h)
	}
	run(t, ctx, "enable them again", clickJS(`document.querySelector('#hostgroup-mass-enable-hosts')`), pollJS(`!!document.querySelector('#hostgroup-mass-enable-hosts-yes')`),
		clickJS(`document.querySelector('#hostgroup-mass-enable-hosts-yes')`), pollJS(`!document.querySelector('#hostgroup-mass-enable-hosts-yes')`))
	if h := getOne(t, base, token, "host", map[string]any{"hostids": hostID, "output": []string{"status"}}); h["status"] != "0" {
		t.Fatalf("the group's host after Enable hosts: %v", h)
	}
	shot1400(t, ctx, sh, "config-hostgroups")
	run(t, ctx, "delete the cloned group", clickJS(rowNamed("hostgroup", tplGroup+" (copy)")),
		pollJS(fmt.Sprintf(`(document.querySelector('#hostgroup-name') || {}).value === %q`, tplGroup+" (copy)")),
		clickJS(`document.querySelector('#hostgroup-delete')`), pollJS(`!!document.querySelector('#hostgroup-delete-yes')`), clickJS(`document.querySelector('#hostgroup-delete-yes')`),
		pollJS(`!`+rowNamed("hostgroup", tplGroup+" (copy)")))
	if n := countOf(t, base, token, "hostgroup", map[string]any{"filter": map[string]any{"name": tplGroup + " (copy)"}}); n != 0 {
		t.Fatal("the deleted group is still there")
	}

	// A template: groups, a linked template, a tag, a macro.
	run(t, ctx, "new template", chromedp.Navigate(base+"/config/templates"),
		chromedp.WaitVisible(`#template-create`, chromedp.ByQuery), chromedp.Click(`#template-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#template-edit`, chromedp.ByQuery),
		setJS(`#template-host`, tplName), setJS(`#template-name`, "UI template <i>v1</i>"), pickJS(`#template-groups`, group),
		pickJS(`#template-templates`, baseID), setJS(`#template-description`, "made in the page"),
		clickJS(`document.querySelector('#template-tabs [data-tab="Tags"]')`), chromedp.Click(`#template-tags-add`, chromedp.ByQuery),
		setJS(`.template-tags-row .tag-tag`, "class"), setJS(`.template-tags-row .tag-value`, "os"),
		clickJS(`document.querySelector('#template-tabs [data-tab="Macros"]')`), chromedp.Click(`#template-macros-add`, chromedp.ByQuery),
		setJS(`.template-macros-row .macro-name`, "{$UI_MACRO}"), setJS(`.template-macros-row .macro-value`, "42"),
		chromedp.Click(`#template-save`, chromedp.ByQuery), pollJS(rowNamed("template", "UI template <i>v1</i>")))
	tParams := map[string]any{"output": "extend", "selectGroups": []string{"groupid"}, "selectParentTemplates": []string{"templateid"}, "selectTags": "extend",
		"selectMacros": []string{"macro", "value"}, "filter": map[string]any{"host": tplName}}
	tpl := getOne(t, base, token, "template", tParams)
	tplID := tpl["templateid"].(string)
	if js(tpl["groups"]) != fmt.Sprintf(`[{"groupid":%q}]`, group) || js(tpl["parentTemplates"]) != fmt.Sprintf(`[{"templateid":%q}]`, baseID) ||
		!strings.Contains(js(tpl["tags"]), `"tag":"class","value":"os"`) || !strings.Contains(js(tpl["macros"]), `"macro":"{$UI_MACRO}","value":"42"`) ||
		tpl["description"] != "made in the page" {
		t.Fatalf("template made by the form: %v", tpl)
	}
	// Edit: the inherited macro is shown; a new visible name.
	run(t, ctx, "edit the template", clickJS(rowNamed("template", "UI template <i>v1</i>")),
		pollJS(fmt.Sprintf(`(document.querySelector('#template-host') || {}).value === %q`, tplName)),
		clickJS(`document.querySelector('#template-tabs [data-tab="Macros"]')`),
		pollJS(`[...document.querySelectorAll('#template-inherited-macros .inherited-macro')].some((r) => r.textContent.includes('{$BASE_MACRO}') && r.textContent.includes('from base'))`),
		clickJS(`document.querySelector('#template-tabs [data-tab="Graphs and dashboards"]')`), pollJS(`!!document.querySelector('#template-others .template-dashboards')`),
		clickJS(`document.querySelector('#template-tabs [data-tab="Macros"]')`))
	shot1400(t, ctx, sh, "config-template-form")
	run(t, ctx, "save the edit", clickJS(`document.querySelector('#template-tabs [data-tab="Template"]')`), setJS(`#template-name`, "UI template"),
		chromedp.Click(`#template-save`, chromedp.ByQuery), pollJS(rowNamed("template", "UI template")))
	if tpl = getOne(t, base, token, "template", tParams); tpl["name"] != "UI template" || !strings.Contains(js(tpl["macros"]), "{$UI_MACRO}") {
		t.Fatalf("template after the edit: %v", tpl)
	}
	// A refused edit: the technical name of another template.
	run(t, ctx, "a refused edit", clickJS(rowNamed("template", "UI template")),
		pollJS(fmt.Sprintf(`(document.querySelector('#template-host') || {}).value === %q`, tplName)),
		setJS(`#template-host`, tplBase), chromedp.Click(`#template-save`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#template-error').hidden`))
	var refused string
	run(t, ctx, "read the error", chromedp.Evaluate(`document.querySelector('#template-error').textContent`, &refused))
	if tpl = getOne(t, base, token, "template", tParams); tpl["name"] != "UI template" || refused == "" {
		t.Fatalf("after a refused edit (%q): %v", refused, tpl)
	}
	t.Logf("refused: %s", refused)
	// Clone: a new template from the form.
	run(t, ctx, "clone", setJS(`#template-host`, tplName), chromedp.Click(`#template-clone`, chromedp.ByQuery),
		pollJS(fmt.Sprintf(`(document.querySelector('#template-host') || {}).value === %q`, tplName+" copy")),
		chromedp.Click(`#template-save`, chromedp.ByQuery), pollJS(rowNamed("template", "UI template (copy)")))
	clone := getOne(t, base, token, "template", map[string]any{"output": "extend", "selectParentTemplates": []string{"templateid"}, "selectMacros": []string{"macro"},
		"selectGroups": []string{"groupid"}, "filter": map[string]any{"host": tplName + " copy"}})
	if js(clone["parentTemplates"]) != js(tpl["parentTemplates"]) || js(clone["groups"]) != js(tpl["groups"]) || !strings.Contains(js(clone["macros"]), "{$UI_MACRO}") {
		t.Fatalf("clone %v of %v", clone, tpl)
	}

	// Unlink and clear: the clone leaves ui-base.
	run(t, ctx, "unlink and clear", clickJS(rowNamed("template", "UI template (copy)")),
		pollJS(fmt.Sprintf(`(document.querySelector('#template-host') || {}).value === %q`, tplName+" copy")),
		chromedp.Evaluate(`for (const o of document.querySelector('#template-templates').options) o.selected = false`, nil), setJS(`#template-unlink-clear`, "1"),
		chromedp.Click(`#template-save`, chromedp.ByQuery), pollJS(`document.querySelector('#template-form').hidden`))
	if c := getOne(t, base, token, "template", map[string]any{"templateids": clone["templateid"], "output": []string{"templateid"}, "selectParentTemplates": []string{"templateid"}}); js(c["parentTemplates"]) != `[]` {
		t.Fatalf("the clone after unlink and clear: %v", c)
	}

	// Full clone: the template's item and trigger come along.
	var item struct{ ItemIDs []string }
	json.Unmarshal(apiCall(t, base, token, "item.create", map[string]any{"hostid": tplID, "name": "UI trap", "key_": "ui.trap", "type": 2, "value_type": 3}), &item)
	apiCall(t, base, token, "trigger.create", map[string]any{"description": "UI trap high", "expression": "last(/" + tplName + "/ui.trap)>5"})
	run(t, ctx, "full clone", chromedp.Navigate(base+"/config/templates"), pollJS(rowNamed("template", "UI template")),
		clickJS(rowNamed("template", "UI template")), pollJS(fmt.Sprintf(`(document.querySelector('#template-host') || {}).value === %q`, tplName)),
		chromedp.Click(`#template-fullclone`, chromedp.ByQuery), setJS(`#template-fullclone-host`, tplName+"-full"),
		chromedp.Click(`#template-fullclone-yes`, chromedp.ByQuery), pollJS(rowNamed("template", tplName+"-full")))
	full := getOne(t, base, token, "template", map[string]any{"output": []string{"templateid"}, "selectItems": []string{"key_"}, "selectTriggers": []string{"expression"},
		"selectParentTemplates": []string{"templateid"}, "filter": map[string]any{"host": tplName + "-full"}})
	if js(full["items"]) != `[{"key_":"ui.trap"}]` || !strings.Contains(js(full["triggers"]), "ui.trap") || js(full["parentTemplates"]) != js(tpl["parentTemplates"]) {
		t.Fatalf("full clone: %v", full)
	}
	// The list's counts link to the template's items.
	run(t, ctx, "the template's items", pollJS(fmt.Sprintf(`!!document.querySelector('.template-row[data-id="%s"] .template-items')`, tplID)),
		clickJS(fmt.Sprintf(`document.querySelector('.template-row[data-id="%s"] .template-items')`, tplID)),
		pollJS(fmt.Sprintf(`!!document.querySelector('.config-item-row[data-itemid="%s"]')`, item.ItemIDs[0])))

	// Filter by linked template, then export the checked ones.
	run(t, ctx, "filter by linked template", chromedp.Navigate(base+"/config/templates"), pollJS(rowNamed("template", "UI template")),
		setJS(`#template-filter-linked`, baseID), pollJS(fmt.Sprintf(`document.querySelectorAll('.template-row').length === 2 && !document.querySelector('.template-row[data-id="%s"]')`, baseID)))
	shot1400(t, ctx, sh, "config-templates")
	var exported string
	run(t, ctx, "export", clickJS(fmt.Sprintf(`document.querySelector('.template-row[data-id="%s"] .row-check')`, tplID)),
		clickJS(`document.querySelector('#template-mass-export')`), pollJS(`!!document.querySelector('#template-export-link')`),
		chromedp.Evaluate(`document.querySelector('#template-export-text').textContent`, &exported))
	if !strings.Contains(exported, "zabbix_export:") || !strings.Contains(exported, "template: "+tplName) || !strings.Contains(exported, "key: ui.trap") {
		t.Fatalf("exported YAML:\n%s", exported)
	}

	// Import a file: a new template.
	doc := "zabbix_export:\n  version: '6.0'\n  groups:\n    - uuid: 7df96b18c230490a9a0a9e2307226338\n      name: Linux\n  templates:\n" +
		"    - uuid: 0b3ac8a6c3c54e6a8e0ad54ff1f4e0f1\n      template: ui-imported\n      name: 'UI imported'\n      groups:\n        - name: Linux\n" +
		"      items:\n        - uuid: 5a1f25d9a3b7438b8c6bfb2b0b0a7c11\n          name: 'Imported trap'\n          type: TRAP\n          key: imported.trap\n"
	file := filepath.Join(t.TempDir(), "import.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "import", clickJS(`document.querySelector('#template-import-open')`), chromedp.WaitVisible(`#template-import-file`, chromedp.ByQuery),
		chromedp.SetUploadFiles(`#template-import-file`, []string{file}, chromedp.ByQuery), chromedp.Click(`#template-import-save`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#template-note') || {}).textContent === 'Imported import.yaml.' || !document.querySelector('#template-import-error').hidden`))
	if got := getOne(t, base, token, "template", map[string]any{"output": []string{"name"}, "selectItems": []string{"key_"}, "filter": map[string]any{"host": "ui-imported"}}); js(got["items"]) != `[{"key_":"imported.trap"}]` {
		t.Fatalf("imported template: %v", got)
	}

	// Mass update: both UI templates join Linux.
	copyID := clone["templateid"].(string)
	run(t, ctx, "mass update", setJS(`#template-filter-linked`, ""), pollJS(fmt.Sprintf(`!!document.querySelector('.template-row[data-id="%s"] .row-check')`, copyID)),
		clickJS(fmt.Sprintf(`document.querySelector('.template-row[data-id="%s"] .row-check')`, copyID)),
		clickJS(`document.querySelector('#template-mass-update')`), chromedp.WaitVisible(`#template-massupdate`, chromedp.ByQuery),
		setJS(`#template-mu-what`, "groups-add"), pickJS(`#template-mu-groups`, linux),
		chromedp.Click(`#template-mu-save`, chromedp.ByQuery), pollJS(`(document.querySelector('#template-note') || {}).textContent === 'Updated 2 templates.' || !document.querySelector('#template-mu-error').hidden`))
	run(t, ctx, "mass update the description", pollJS(`!document.querySelector('#template-massupdate')`),
		clickJS(`document.querySelector('#template-mass-update')`), chromedp.WaitVisible(`#template-massupdate`, chromedp.ByQuery),
		setJS(`#template-mu-what`, "description"), setJS(`#template-mu-description`, "both"),
		chromedp.Click(`#template-mu-save`, chromedp.ByQuery), pollJS(`!document.querySelector('#template-massupdate') || !document.querySelector('#template-mu-error').hidden`))
	for _, id := range []string{tplID, copyID} {
		got := getOne(t, base, token, "template", map[string]any{"templateids": id, "output": []string{"description"}, "selectGroups": []string{"groupid"}})
		if g := js(got["groups"]); !strings.Contains(g, linux) || !strings.Contains(g, group) || got["description"] != "both" {
			t.Fatalf("template %s after mass update: %v", id, got)
		}
	}

	// Read-only Admin: read on the group, no edit control, the API
	// refuses the change; a User is refused the pages.
	var ug struct{ UsrgrpIDs []string }
	json.Unmarshal(apiCall(t, base, token, "usergroup.create", map[string]any{"name": "ui-tpl readers", "rights": []map[string]any{{"id": group, "permission": 2}}}), &ug)
	apiCall(t, base, token, "user.create", map[string]any{"username": "tpl-reader", "passwd": "Zx9!long-passw0rd", "roleid": "2", "usrgrps": []map[string]string{{"usrgrpid": ug.UsrgrpIDs[0]}}})
	apiCall(t, base, token, "user.create", map[string]any{"username": "tpl-user", "passwd": "Zx9!long-passw0rd", "roleid": "1", "usrgrps": []map[string]string{{"usrgrpid": ug.UsrgrpIDs[0]}}})
	var reader, user string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "tpl-reader", "password": "Zx9!long-passw0rd"}), &reader)
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "tpl-user", "password": "Zx9!long-passw0rd"}), &user)
	if e := apiTry(t, base, reader, "template.update", map[string]any{"templateid": tplID, "name": "hijacked"}); e == "" {
		t.Error("a read-only Admin's template.update was accepted")
	}
	for _, p := range []string{"/config/templates", "/config/hostgroups", "/config/discovery", "/config/prototypes"} {
		if s := pageStatus(t, base, user, p); s != 403 {
			t.Errorf("a User's GET %s: %d, want 403", p, s)
		}
		if s := pageStatus(t, base, reader, p); s != 200 {
			t.Errorf("an Admin's GET %s: %d, want 200", p, s)
		}
	}
	rctx, _ := browser(t)
	loginAs(t, rctx, base, "tpl-reader", "Zx9!long-passw0rd")
	run(t, rctx, "read-only list", chromedp.Navigate(base+"/config/templates"), chromedp.WaitVisible(`#template-list .template-row`, chromedp.ByQuery),
		pollJS(rowNamed("template", "UI template")),
		pollJS(`document.querySelectorAll('.template-row .row-check').length === 0 && document.querySelector('#template-mass').hidden`),
		clickJS(rowNamed("template", "UI template")), pollJS(fmt.Sprintf(`(document.querySelector('#template-host') || {}).value === %q`, tplName)),
		pollJS(`!document.querySelector('#template-save') && !document.querySelector('#template-delete') && document.querySelector('#template-host').disabled`))
	run(t, rctx, "read-only host groups", chromedp.Navigate(base+"/config/hostgroups"), chromedp.WaitVisible(`#hostgroup-list .hostgroup-row`, chromedp.ByQuery),
		pollJS(rowNamed("hostgroup", tplGroup)), pollJS(`document.querySelectorAll('.hostgroup-row .row-check').length === 0`))
	if e := apiTry(t, base, reader, "hostgroup.update", map[string]any{"groupid": group, "name": "hijacked"}); e == "" {
		t.Error("a read-only Admin's hostgroup.update was accepted")
	}

	// Delete: the linked host keeps its copy of the item; delete and
	// clear: the clone's copies go.
	apiCall(t, base, token, "host.update", map[string]any{"hostid": hostID, "templates": []map[string]string{{"templateid": tplID}}})
	run(t, ctx, "delete (keep copies)", chromedp.Navigate(base+"/config/templates"), pollJS(fmt.Sprintf(`!!document.querySelector('.template-row[data-id="%s"] .row-check')`, tplID)),
		clickJS(fmt.Sprintf(`document.querySelector('.template-row[data-id="%s"] .row-check')`, tplID)),
		clickJS(`document.querySelector('#template-mass-delete')`), pollJS(`!!document.querySelector('#template-mass-delete-yes')`), clickJS(`document.querySelector('#template-mass-delete-yes')`),
		pollJS(fmt.Sprintf(`!document.querySelector('.template-row[data-id="%s"]')`, tplID)))
	if n := countOf(t, base, token, "template", map[string]any{"templateids": tplID}); n != 0 {
		t.Fatal("the deleted template is still there")
	}
	if kept := getOne(t, base, token, "host", map[string]any{"hostids": hostID, "output": []string{"hostid"}, "selectItems": []string{"key_", "templateid"}}); !strings.Contains(js(kept["items"]), `"key_":"ui.trap","templateid":"0"`) {
		t.Fatalf("the host's items after Delete: %v", kept["items"])
	}
	fullID := full["templateid"].(string)
	apiCall(t, base, token, "host.update", map[string]any{"hostid": hostID, "templates": []map[string]string{{"templateid": fullID}}})
	if linked := getOne(t, base, token, "host", map[string]any{"hostids": hostID, "output": []string{"hostid"}, "selectItems": []string{"key_", "templateid"}}); strings.Contains(js(linked["items"]), `"templateid":"0"`) {
		t.Fatalf("the host's items linked to the full clone: %v", linked["items"])
	}
	run(t, ctx, "delete and clear", chromedp.Navigate(base+"/config/templates"), pollJS(fmt.Sprintf(`!!document.querySelector('.template-row[data-id="%s"] .row-check')`, fullID)),
		clickJS(fmt.Sprintf(`document.querySelector('.template-row[data-id="%s"] .row-check')`, fullID)),
		clickJS(`document.querySelector('#template-mass-delete-clear')`), pollJS(`!!document.querySelector('#template-mass-delete-clear-yes')`), clickJS(`document.querySelector('#template-mass-delete-clear-yes')`),
		pollJS(fmt.Sprintf(`!document.querySelector('.template-row[data-id="%s"]')`, fullID)))
	// Linking the full clone made the host's kept ui.trap its copy (the
	// same key), so clearing takes it too.
	if kept := getOne(t, base, token, "host", map[string]any{"hostids": hostID, "output": []string{"hostid"}, "selectItems": []string{"key_"}}); js(kept["items"]) != `[]` {
		t.Fatalf("the host's items after Delete and clear: %v (want none)", kept["items"])
	}
	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img, main b, main i').length`, &injected))
	if injected != 0 {
		t.Errorf("markup from names became elements (%d)", injected)
	}
}
