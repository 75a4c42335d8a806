package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestIntegrationBrowserDiscoveryPages drives /config/discovery and
// /config/prototypes in headless Chromium and checks every step
// through the API: a discovery rule of a host is created with a filter
// (custom formula), an LLD macro path, a preprocessing step and an
// override, edited, refused with the API's error beside the field
// (nothing saved), cloned and deleted; its item, trigger, graph and
// host prototypes are created, edited and deleted; a template's rule
// is listed from the templates page. A User is refused the pages (the
// templates test checks the read-only Admin).
func TestIntegrationBrowserDiscoveryPages(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "lld-host", Groups: []string{"Linux"},
		Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: "127.0.0.1", Port: "10050"}}}}})
	token := apiLogin(t, base, password)
	hostID := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "filter": map[string]any{"host": "lld-host"}})["hostid"].(string)
	linux := getOne(t, base, token, "hostgroup", map[string]any{"output": []string{"groupid"}, "filter": map[string]any{"name": "Linux"}})["groupid"].(string)

	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)

	// A rule with every tab filled.
	run(t, ctx, "new discovery rule", chromedp.Navigate(base+"/config/discovery?hostid="+hostID),
		chromedp.WaitVisible(`#lld-create`, chromedp.ByQuery), chromedp.Click(`#lld-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#lld-edit`, chromedp.ByQuery),
		setJS(`#lld-name`, `Mounted <b>filesystems</b>`), setJS(`#lld-type`, "0"), setJS(`#lld-key`, "vfs.fs.discovery"),
		setJS(`#lld-delay`, "30m"), setJS(`#lld-lifetime`, "7d"),
		clickJS(`document.querySelector('#lld-tabs [data-tab="Preprocessing"]')`), chromedp.Click(`#lld-preprocessing-add`, chromedp.ByQuery),
		setJS(`#lld-preprocessing .pp-type`, "20"), setJS(`#lld-preprocessing .pp-params`, "1h"),
		clickJS(`document.querySelector('#lld-tabs [data-tab="LLD macros"]')`), chromedp.Click(`#lld-macro-paths-add`, chromedp.ByQuery),
		setJS(`#lld-macro-paths .path-macro`, "{#FSTYPE}"), setJS(`#lld-macro-paths .path-path`, "$.fstype"),
		clickJS(`document.querySelector('#lld-tabs [data-tab="Filters"]')`),
		chromedp.Click(`#lld-filter-conditions-add`, chromedp.ByQuery), chromedp.Click(`#lld-filter-conditions-add`, chromedp.ByQuery),
		setJS(`#lld-filter-conditions .lld-filter-conditions-row:nth-child(1) .cond-macro`, "{#FSTYPE}"),
		setJS(`#lld-filter-conditions .lld-filter-conditions-row:nth-child(1) .cond-value`, "^ext4$"),
		setJS(`#lld-filter-conditions .lld-filter-conditions-row:nth-child(2) .cond-macro`, "{#FSNAME}"),
		setJS(`#lld-filter-conditions .lld-filter-conditions-row:nth-child(2) .cond-operator`, "9"),
		setJS(`#lld-filter-conditions .lld-filter-conditions-row:nth-child(2) .cond-value`, "^/snap"),
		setJS(`#lld-filter-evaltype`, "3"), setJS(`#lld-filter-formula`, "A and B"),
		clickJS(`document.querySelector('#lld-tabs [data-tab="Overrides"]')`), chromedp.Click(`#lld-overrides-add`, chromedp.ByQuery),
		setJS(`.lld-override .ov-name`, "no tmpfs"), setJS(`.lld-override .ov-stop`, "1"),
		chromedp.Click(`#lld-ov-0-ops-add`, chromedp.ByQuery), setJS(`.lld-ov-0-ops-row .op-value`, "tmp"), setJS(`.lld-ov-0-ops-row .op-operator`, "2"),
		setJS(`.lld-ov-0-ops-row .op-discover`, "1"))
	shot1400(t, ctx, sh, "config-discovery-form")
	run(t, ctx, "create the rule", chromedp.Click(`#lld-save`, chromedp.ByQuery),
		pollJS(savedOr("lld", `Mounted <b>filesystems</b>`)))
	var formErr string
	run(t, ctx, "no error", chromedp.Evaluate(`document.querySelector('#lld-error') && !document.querySelector('#lld-error').hidden ? document.querySelector('#lld-error').textContent : ''`, &formErr))
	if formErr != "" {
		t.Fatalf("discoveryrule.create from the form: %s", formErr)
	}
	rParams := map[string]any{"output": "extend", "selectFilter": "extend", "selectLLDMacroPaths": "extend", "selectOverrides": "extend", "selectPreprocessing": "extend",
		"hostids": hostID, "filter": map[string]any{"key_": "vfs.fs.discovery"}}
	r := getOne(t, base, token, "discoveryrule", rParams)
	ruleID := r["itemid"].(string)
	if f := js(r["filter"]); r["delay"] != "30m" || r["lifetime"] != "7d" || r["type"] != "0" || r["interfaceid"] == "0" ||
		!strings.Contains(f, `"evaltype":"3"`) || !strings.Contains(f, `"formula":"A and B"`) ||
		!strings.Contains(f, `"formulaid":"B","macro":"{#FSNAME}","operator":"9","value":"^/snap"`) ||
		!strings.Contains(js(r["lld_macro_paths"]), `"path":"$.fstype"`) ||
		!strings.Contains(js(r["preprocessing"]), `"params":"1h","type":"20"`) ||
		!strings.Contains(js(r["overrides"]), `"name":"no tmpfs"`) || !strings.Contains(js(r["overrides"]), `"opdiscover":{"discover":"1"}`) {
		t.Fatalf("rule made by the form: %v", r)
	}
	run(t, ctx, "edit the rule", clickJS(rowNamed("lld", `Mounted <b>filesystems</b>`)),
		pollJS(`(document.querySelector('#lld-key') || {}).value === 'vfs.fs.discovery' && document.querySelectorAll('.lld-override').length === 1`),
		setJS(`#lld-lifetime`, "14d"), chromedp.Click(`#lld-save`, chromedp.ByQuery), pollJS(`document.querySelector('#lld-form').hidden`))
	if r = getOne(t, base, token, "discoveryrule", rParams); r["lifetime"] != "14d" || !strings.Contains(js(r["overrides"]), `"name":"no tmpfs"`) || !strings.Contains(js(r["filter"]), `"A and B"`) {
		t.Fatalf("rule after the edit: %v", r)
	}
	// A refused edit (a bad interval) shows the error and saves nothing.
	run(t, ctx, "a refused edit", clickJS(rowNamed("lld", `Mounted <b>filesystems</b>`)),
		pollJS(`(document.querySelector('#lld-key') || {}).value === 'vfs.fs.discovery'`),
		setJS(`#lld-delay`, "soon"), setJS(`#lld-lifetime`, "1d"), chromedp.Click(`#lld-save`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#lld-error').hidden`))
	var refused, beside string
	run(t, ctx, "read the error", chromedp.Evaluate(`document.querySelector('#lld-error').textContent`, &refused),
		chromedp.Evaluate(`(document.querySelector('#lld-edit .field-error') || {previousElementSibling: {id: ''}}).previousElementSibling.id`, &beside))
	if beside != "lld-delay" {
		t.Errorf("the error %q is shown beside %q, want lld-delay", refused, beside)
	}
	if r = getOne(t, base, token, "discoveryrule", rParams); r["lifetime"] != "14d" || r["delay"] != "30m" {
		t.Fatalf("a refused edit saved something: %v", r)
	}
	// Clone with another key, then delete the clone.
	run(t, ctx, "clone the rule", setJS(`#lld-delay`, "30m"), chromedp.Click(`#lld-clone`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#lld-name') || {}).value.endsWith('(copy)')`), setJS(`#lld-key`, "vfs.fs.discovery[copy]"),
		chromedp.Click(`#lld-save`, chromedp.ByQuery), pollJS(rowNamed("lld", `Mounted <b>filesystems</b> (copy)`)))
	cp := getOne(t, base, token, "discoveryrule", map[string]any{"output": "extend", "selectFilter": "extend", "selectOverrides": "extend", "hostids": hostID,
		"filter": map[string]any{"key_": "vfs.fs.discovery[copy]"}})
	if !strings.Contains(js(cp["filter"]), `"A and B"`) || !strings.Contains(js(cp["overrides"]), `"no tmpfs"`) {
		t.Fatalf("clone: %v", cp)
	}
	run(t, ctx, "delete the clone", clickJS(rowNamed("lld", `Mounted <b>filesystems</b> (copy)`)),
		pollJS(`(document.querySelector('#lld-key') || {}).value === 'vfs.fs.discovery[copy]'`),
		clickJS(`document.querySelector('#lld-delete')`), pollJS(`!!document.querySelector('#lld-delete-yes')`), clickJS(`document.querySelector('#lld-delete-yes')`),
		pollJS(`!`+rowNamed("lld", `Mounted <b>filesystems</b> (copy)`)))
	if n := countOf(t, base, token, "discoveryrule", map[string]any{"hostids": hostID}); n != 1 {
		t.Fatalf("%d rules after deleting the clone, want 1", n)
	}

	// Prototypes: an item prototype, a trigger prototype on it, a graph
	// prototype and a host prototype.
	protos := base + "/config/prototypes?ruleid=" + ruleID
	run(t, ctx, "new item prototype", chromedp.Navigate(protos+"&kind=item"),
		chromedp.WaitVisible(`#itemproto-create`, chromedp.ByQuery), chromedp.Click(`#itemproto-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#itemproto-edit`, chromedp.ByQuery),
		setJS(`#itemproto-name`, "Free on {#FSNAME}"), setJS(`#itemproto-type`, "0"), setJS(`#itemproto-key`, "vfs.fs.size[{#FSNAME},free]"),
		setJS(`#itemproto-units`, "B"), chromedp.Click(`#itemproto-save`, chromedp.ByQuery), pollJS(rowNamed("itemproto", "Free on {#FSNAME}")))
	ip := getOne(t, base, token, "itemprototype", map[string]any{"output": "extend", "discoveryids": ruleID})
	if ip["key_"] != "vfs.fs.size[{#FSNAME},free]" || ip["units"] != "B" {
		t.Fatalf("item prototype: %v", ip)
	}
	run(t, ctx, "edit the item prototype", clickJS(rowNamed("itemproto", "Free on {#FSNAME}")),
		pollJS(`(document.querySelector('#itemproto-key') || {}).value === 'vfs.fs.size[{#FSNAME},free]'`), setJS(`#itemproto-delay`, "5m"),
		// The item form's preprocessing is its own tab, as in 6.0.
		clickJS(`document.querySelector('#itemproto-tabs [data-tab="Preprocessing"]')`), chromedp.Click(`#itemproto-preprocessing-add`, chromedp.ByQuery), setJS(`#itemproto-preprocessing .pp-type`, "1"), setJS(`#itemproto-preprocessing .pp-params`, "8"),
		chromedp.Click(`#itemproto-save`, chromedp.ByQuery), pollJS(`document.querySelector('#itemproto-form').hidden`))
	if ip = getOne(t, base, token, "itemprototype", map[string]any{"output": "extend", "selectPreprocessing": "extend", "discoveryids": ruleID}); ip["delay"] != "5m" || !strings.Contains(js(ip["preprocessing"]), `"params":"8"`) {
		t.Fatalf("item prototype after the edit: %v", ip)
	}
	shot1400(t, ctx, sh, "config-prototypes")
	run(t, ctx, "new trigger prototype", chromedp.Navigate(protos+"&kind=trigger"),
		chromedp.WaitVisible(`#triggerproto-create`, chromedp.ByQuery), chromedp.Click(`#triggerproto-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#triggerproto-edit`, chromedp.ByQuery),
		setJS(`#triggerproto-description`, "Low space on {#FSNAME}"), setJS(`#triggerproto-expression`, "last(/lld-host/vfs.fs.size[{#FSNAME},free])<1G"),
		setJS(`#triggerproto-priority`, "3"), chromedp.Click(`#triggerproto-save`, chromedp.ByQuery),
		pollJS(savedOr("triggerproto", "Low space on {#FSNAME}")))
	run(t, ctx, "no error", chromedp.Evaluate(`document.querySelector('#triggerproto-error') && !document.querySelector('#triggerproto-error').hidden ? document.querySelector('#triggerproto-error').textContent : ''`, &formErr))
	if formErr != "" {
		t.Fatalf("triggerprototype.create from the form: %s", formErr)
	}
	tp := getOne(t, base, token, "triggerprototype", map[string]any{"output": "extend", "discoveryids": ruleID, "expandExpression": true})
	if tp["priority"] != "3" || !strings.Contains(tp["expression"].(string), "vfs.fs.size[{#FSNAME},free]") {
		t.Fatalf("trigger prototype: %v", tp)
	}
	run(t, ctx, "delete the trigger prototype", clickJS(rowNamed("triggerproto", "Low space on {#FSNAME}")),
		pollJS(`(document.querySelector('#triggerproto-description') || {}).value === 'Low space on {#FSNAME}'`),
		clickJS(`document.querySelector('#triggerproto-delete')`), pollJS(`!!document.querySelector('#triggerproto-delete-yes')`), clickJS(`document.querySelector('#triggerproto-delete-yes')`),
		pollJS(`!`+rowNamed("triggerproto", "Low space on {#FSNAME}")))
	if n := countOf(t, base, token, "triggerprototype", map[string]any{"discoveryids": ruleID}); n != 0 {
		t.Fatal("the deleted trigger prototype is still there")
	}
	run(t, ctx, "new graph prototype", chromedp.Navigate(protos+"&kind=graph"),
		chromedp.WaitVisible(`#graphproto-create`, chromedp.ByQuery), chromedp.Click(`#graphproto-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#graphproto-edit`, chromedp.ByQuery),
		setJS(`#graphproto-name`, "Space on {#FSNAME}"), chromedp.Click(`#graphproto-gitems-add`, chromedp.ByQuery),
		setJS(`.graphproto-gitems-row .gitem-item`, ip["itemid"].(string)), chromedp.Click(`#graphproto-save`, chromedp.ByQuery),
		pollJS(savedOr("graphproto", "Space on {#FSNAME}")))
	run(t, ctx, "no error", chromedp.Evaluate(`document.querySelector('#graphproto-error') && !document.querySelector('#graphproto-error').hidden ? document.querySelector('#graphproto-error').textContent : ''`, &formErr))
	if formErr != "" {
		t.Fatalf("graphprototype.create from the form: %s", formErr)
	}
	if gp := getOne(t, base, token, "graphprototype", map[string]any{"output": "extend", "discoveryids": ruleID, "selectGraphItems": "extend"}); !strings.Contains(js(gp["gitems"]), ip["itemid"].(string)) {
		t.Fatalf("graph prototype: %v", gp)
	}
	run(t, ctx, "new host prototype", chromedp.Navigate(protos+"&kind=host"),
		chromedp.WaitVisible(`#hostproto-create`, chromedp.ByQuery), chromedp.Click(`#hostproto-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#hostproto-edit`, chromedp.ByQuery),
		setJS(`#hostproto-host`, "fs-{#FSNAME}"), pickJS(`#hostproto-groupLinks`, linux),
		chromedp.Click(`#hostproto-groupprototypes-add`, chromedp.ByQuery), setJS(`.hostproto-groupprototypes-row .gp-name`, "FS {#FSTYPE}"),
		chromedp.Click(`#hostproto-save`, chromedp.ByQuery),
		pollJS(savedOr("hostproto", "fs-{#FSNAME}")))
	run(t, ctx, "no error", chromedp.Evaluate(`document.querySelector('#hostproto-error') && !document.querySelector('#hostproto-error').hidden ? document.querySelector('#hostproto-error').textContent : ''`, &formErr))
	if formErr != "" {
		t.Fatalf("hostprototype.create from the form: %s", formErr)
	}
	hp := getOne(t, base, token, "hostprototype", map[string]any{"output": "extend", "discoveryids": ruleID, "selectGroupLinks": "extend", "selectGroupPrototypes": "extend"})
	if !strings.Contains(js(hp["groupLinks"]), linux) || !strings.Contains(js(hp["groupPrototypes"]), "FS {#FSTYPE}") {
		t.Fatalf("host prototype: %v", hp)
	}
	run(t, ctx, "disable the host prototype (mass)", clickJS(fmt.Sprintf(`document.querySelector('.hostproto-row[data-id="%s"] .row-check')`, hp["hostid"])),
		clickJS(`document.querySelector('#hostproto-mass-disable')`),
		pollJS(fmt.Sprintf(`(document.querySelector('.hostproto-row[data-id="%s"]') || {textContent: ''}).textContent.includes('Disabled')`, hp["hostid"])))
	if hp = getOne(t, base, token, "hostprototype", map[string]any{"output": "extend", "discoveryids": ruleID}); hp["status"] != "1" {
		t.Fatalf("host prototype after mass disable: %v", hp)
	}

	// The rule list counts the prototypes.
	run(t, ctx, "the rule's counts", chromedp.Navigate(base+"/config/discovery?hostid="+hostID),
		pollJS(fmt.Sprintf(`(() => { const r = document.querySelector('.lld-row[data-id="%s"]'); return !!r && r.querySelector('.lld-item-protos').textContent === '1' && r.querySelector('.lld-trigger-protos').textContent === '0' && r.querySelector('.lld-graph-protos').textContent === '1' && r.querySelector('.lld-host-protos').textContent === '1'; })()`, ruleID)))
	shot1400(t, ctx, sh, "config-discovery")

	// A template's rule, reached from the templates page.
	var made struct{ TemplateIDs []string }
	if err := json.Unmarshal(apiCall(t, base, token, "template.create", map[string]any{"host": "lld-tpl", "groups": []map[string]string{{"groupid": linux}}}), &made); err != nil {
		t.Fatal(err)
	}
	apiCall(t, base, token, "discoveryrule.create", map[string]any{"hostid": made.TemplateIDs[0], "name": "Template rule", "key_": "tpl.discovery", "type": 2})
	run(t, ctx, "a template's rules", chromedp.Navigate(base+"/config/templates"),
		pollJS(fmt.Sprintf(`!!document.querySelector('.template-row[data-id="%s"] .template-discovery')`, made.TemplateIDs[0])),
		clickJS(fmt.Sprintf(`document.querySelector('.template-row[data-id="%s"] .template-discovery')`, made.TemplateIDs[0])),
		pollJS(rowNamed("lld", "Template rule")))
	// A read-only Admin: no edit control, the API refuses the change.
	var ug struct{ UsrgrpIDs []string }
	json.Unmarshal(apiCall(t, base, token, "usergroup.create", map[string]any{"name": "lld readers", "rights": []map[string]any{{"id": linux, "permission": 2}}}), &ug)
	apiCall(t, base, token, "user.create", map[string]any{"username": "lld-reader", "passwd": "Zx9!long-passw0rd", "roleid": "2", "usrgrps": []map[string]string{{"usrgrpid": ug.UsrgrpIDs[0]}}})
	var reader string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "lld-reader", "password": "Zx9!long-passw0rd"}), &reader)
	if e := apiTry(t, base, reader, "discoveryrule.update", map[string]any{"itemid": ruleID, "lifetime": "1d"}); e == "" {
		t.Error("a read-only Admin's discoveryrule.update was accepted")
	}
	if e := apiTry(t, base, reader, "itemprototype.update", map[string]any{"itemid": ip["itemid"], "delay": "1m"}); e == "" {
		t.Error("a read-only Admin's itemprototype.update was accepted")
	}
	rctx, _ := browser(t)
	loginAs(t, rctx, base, "lld-reader", "Zx9!long-passw0rd")
	run(t, rctx, "read-only rules", chromedp.Navigate(base+"/config/discovery?hostid="+hostID), chromedp.WaitVisible(`#lld-list .lld-row`, chromedp.ByQuery),
		pollJS(`document.querySelectorAll('.lld-row .row-check').length === 0`), pollJS(`document.querySelector('#lld-mass').hidden`),
		clickJS(rowNamed("lld", `Mounted <b>filesystems</b>`)), pollJS(`(document.querySelector('#lld-key') || {}).value === 'vfs.fs.discovery'`),
		pollJS(`!document.querySelector('#lld-save') && document.querySelector('#lld-key').disabled && document.querySelector('#lld-overrides-add').disabled`),
		chromedp.Navigate(protos+"&kind=item"), chromedp.WaitVisible(`#itemproto-list .itemproto-row`, chromedp.ByQuery),
		pollJS(`document.querySelectorAll('.itemproto-row .row-check').length === 0`))

	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img, main b').length`, &injected))
	if injected != 0 {
		t.Errorf("markup from names became elements (%d)", injected)
	}
}

// savedOr is a JS expression: the row of noun named name is listed, or
// the form shows an error.
func savedOr(noun, name string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector('#%s-error'); return !!(%s) || (!!e && !e.hidden); })()`, noun, rowNamed(noun, name))
}
