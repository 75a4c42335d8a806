package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestIntegrationBrowserHostPrototypeForm drives the host prototype
// form (/config/prototypes?kind=host) in headless Chromium at 1400×900
// and checks every step through the API: a prototype with custom
// interfaces (an agent's and an SNMP one), a template, a group link and
// a group prototype, tags, a text and a secret macro and automatic
// inventory is created; an edit that leaves the macros alone keeps the
// secret (the API replaces macros whole and never returns a secret);
// changing the macros without typing the secret again is refused
// beside the macros and saves nothing; a clone resets the secret (as
// 6.0's clone does) and is deleted; a read-only Admin sees the form
// read-only and the API refuses the change.
func TestIntegrationBrowserHostPrototypeForm(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "hp-host", Groups: []string{"Linux"},
		Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: "127.0.0.1", Port: "10050"}}}}})
	token := apiLogin(t, base, password)
	hostID := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "filter": map[string]any{"host": "hp-host"}})["hostid"].(string)
	linux := getOne(t, base, token, "hostgroup", map[string]any{"output": []string{"groupid"}, "filter": map[string]any{"name": "Linux"}})["groupid"].(string)
	var rule struct{ ItemIDs []string }
	json.Unmarshal(apiCall(t, base, token, "discoveryrule.create", map[string]any{"hostid": hostID, "name": "VMs", "key_": "vm.discovery", "type": 2}), &rule)
	var tpl struct{ TemplateIDs []string }
	json.Unmarshal(apiCall(t, base, token, "template.create", map[string]any{"host": "hp-tpl", "groups": []map[string]string{{"groupid": linux}}}), &tpl)

	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)
	page := base + "/config/prototypes?kind=host&ruleid=" + rule.ItemIDs[0]
	tab := func(name string) chromedp.Action {
		return clickJS(fmt.Sprintf(`document.querySelector('#hostproto-tabs [data-tab=%q]')`, name))
	}
	run(t, ctx, "new host prototype", chromedp.Navigate(page), chromedp.WaitVisible(`#hostproto-create`, chromedp.ByQuery),
		chromedp.Click(`#hostproto-create`, chromedp.ByQuery), chromedp.WaitVisible(`#hostproto-edit`, chromedp.ByQuery),
		setJS(`#hostproto-host`, "vm-{#VM.ID}"), setJS(`#hostproto-name`, `<b>VM</b> {#VM.NAME} & "co"`), pickJS(`#hostproto-groupLinks`, linux),
		pickJS(`#hostproto-templates`, tpl.TemplateIDs[0]),
		chromedp.Click(`#hostproto-groupprototypes-add`, chromedp.ByQuery), setJS(`.hostproto-groupprototypes-row .gp-name`, "VMs of {#VM.CLUSTER}"),
		setJS(`#hostproto-custom-interfaces`, "1"),
		chromedp.Click(`#hostproto-interfaces-add`, chromedp.ByQuery), chromedp.Click(`#hostproto-interfaces-add`, chromedp.ByQuery),
		setJS(`.hostproto-interfaces-row:nth-child(1) .if-ip`, "{#VM.IP}"),
		setJS(`.hostproto-interfaces-row:nth-child(2) .if-type`, "2"), setJS(`.hostproto-interfaces-row:nth-child(2) .if-useip`, "0"),
		setJS(`.hostproto-interfaces-row:nth-child(2) .if-dns`, "{#VM.DNS}"), setJS(`.hostproto-interfaces-row:nth-child(2) .if-snmp-community`, "public"),
		tab("Tags"), chromedp.Click(`#hostproto-tags-add`, chromedp.ByQuery), setJS(`.hostproto-tags-row .tag-tag`, "cluster"), setJS(`.hostproto-tags-row .tag-value`, "{#VM.CLUSTER}"),
		tab("Macros"), chromedp.Click(`#hostproto-macros-add`, chromedp.ByQuery), chromedp.Click(`#hostproto-macros-add`, chromedp.ByQuery),
		setJS(`.hostproto-macros-row:nth-child(1) .macro-name`, "{$VM.ROLE}"), setJS(`.hostproto-macros-row:nth-child(1) .macro-value`, "db"),
		setJS(`.hostproto-macros-row:nth-child(2) .macro-name`, "{$VM.PASS}"), setJS(`.hostproto-macros-row:nth-child(2) .macro-type`, "1"),
		setJS(`.hostproto-macros-row:nth-child(2) .macro-value`, "s3cret"),
		tab("Inventory"), setJS(`#hostproto-inventory-mode`, "1"), tab("Host prototype"))
	shot1400(t, ctx, sh, "config-hostproto-form")
	run(t, ctx, "create it", chromedp.Click(`#hostproto-save`, chromedp.ByQuery), pollJS(savedOr("hostproto", `<b>VM</b> {#VM.NAME} & "co"`)))
	var formErr string
	run(t, ctx, "no error", chromedp.Evaluate(`document.querySelector('#hostproto-error') && !document.querySelector('#hostproto-error').hidden ? document.querySelector('#hostproto-error').textContent : ''`, &formErr))
	if formErr != "" {
		t.Fatalf("hostprototype.create from the form: %s", formErr)
	}
	hpParams := map[string]any{"output": "extend", "discoveryids": rule.ItemIDs[0], "selectGroupLinks": "extend", "selectGroupPrototypes": "extend",
		"selectTemplates": []string{"templateid"}, "selectTags": "extend", "selectMacros": "extend", "selectInterfaces": "extend"}
	hp := getOne(t, base, token, "hostprototype", hpParams)
	ifs, ms := js(hp["interfaces"]), js(hp["macros"])
	if hp["custom_interfaces"] != "1" || hp["inventory_mode"] != "1" || !strings.Contains(js(hp["templates"]), tpl.TemplateIDs[0]) ||
		!strings.Contains(js(hp["groupPrototypes"]), "VMs of {#VM.CLUSTER}") || !strings.Contains(js(hp["tags"]), `"value":"{#VM.CLUSTER}"`) ||
		!strings.Contains(ifs, `"ip":"{#VM.IP}"`) || !strings.Contains(ifs, `"community":"public"`) || !strings.Contains(ifs, `"dns":"{#VM.DNS}"`) ||
		!strings.Contains(ms, `"value":"db"`) ||
		!strings.Contains(ms, `"{$VM.PASS}"`) || strings.Contains(ms, "s3cret") {
		t.Fatalf("host prototype made by the form: %v", hp)
	}
	// An edit leaving the macros alone keeps the secret macro.
	run(t, ctx, "edit the tags", clickJS(rowNamed("hostproto", `<b>VM</b> {#VM.NAME} & "co"`)),
		pollJS(`document.querySelectorAll('.hostproto-macros-row').length === 2`), tab("Tags"), setJS(`.hostproto-tags-row .tag-value`, "main"),
		chromedp.Click(`#hostproto-save`, chromedp.ByQuery), pollJS(`document.querySelector('#hostproto-form').hidden`))
	if hp = getOne(t, base, token, "hostprototype", hpParams); !strings.Contains(js(hp["tags"]), `"value":"main"`) || !strings.Contains(js(hp["macros"]), `"{$VM.PASS}"`) {
		t.Fatalf("host prototype after the tag edit: %v", hp)
	}
	// Changing the macros without the secret: refused beside them.
	run(t, ctx, "a refused macro edit", clickJS(rowNamed("hostproto", `<b>VM</b> {#VM.NAME} & "co"`)),
		pollJS(`document.querySelectorAll('.hostproto-macros-row').length === 2`), tab("Macros"),
		setJS(`.hostproto-macros-row:nth-child(1) .macro-value`, "web"), tab("Inventory"), setJS(`#hostproto-inventory-mode`, "0"),
		chromedp.Click(`#hostproto-save`, chromedp.ByQuery), pollJS(`!document.querySelector('#hostproto-error').hidden`),
		pollJS(`(() => { const e = document.querySelector('#hostproto-macros').nextElementSibling; return !!e && e.classList.contains('field-error'); })()`))
	if hp = getOne(t, base, token, "hostprototype", hpParams); hp["inventory_mode"] != "1" || !strings.Contains(js(hp["macros"]), `"value":"db"`) {
		t.Fatalf("a refused edit saved something: %v", hp)
	}
	// With the secret typed again it is saved.
	run(t, ctx, "the macro edit with the secret", setJS(`.hostproto-macros-row:nth-child(2) .macro-value`, "s3cret2"),
		chromedp.Click(`#hostproto-save`, chromedp.ByQuery), pollJS(`document.querySelector('#hostproto-form').hidden`))
	if hp = getOne(t, base, token, "hostprototype", hpParams); hp["inventory_mode"] != "0" || !strings.Contains(js(hp["macros"]), `"value":"web"`) {
		t.Fatalf("host prototype after the macro edit: %v", hp)
	}
	// Clone: the secret is reset to an empty text macro.
	run(t, ctx, "clone", clickJS(rowNamed("hostproto", `<b>VM</b> {#VM.NAME} & "co"`)),
		pollJS(`document.querySelectorAll('.hostproto-macros-row').length === 2`), chromedp.Click(`#hostproto-clone`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#hostproto-host') || {}).value === 'vm-{#VM.ID}-copy'`),
		chromedp.Click(`#hostproto-save`, chromedp.ByQuery), pollJS(savedOr("hostproto", `<b>VM</b> {#VM.NAME} & "co" (copy)`)))
	cp := getOne(t, base, token, "hostprototype", map[string]any{"output": "extend", "discoveryids": rule.ItemIDs[0], "selectMacros": "extend",
		"selectInterfaces": "extend", "filter": map[string]any{"host": "vm-{#VM.ID}-copy"}})
	if !strings.Contains(js(cp["interfaces"]), `"community":"public"`) || !strings.Contains(js(cp["macros"]), `"macro":"{$VM.PASS}"`) || strings.Contains(js(cp["macros"]), `"type":"1"`) {
		t.Fatalf("clone: %v", cp)
	}
	run(t, ctx, "delete the clone", deleteThroughForm("hostproto", `<b>VM</b> {#VM.NAME} & "co" (copy)`))
	if n := countOf(t, base, token, "hostprototype", map[string]any{"discoveryids": rule.ItemIDs[0]}); n != 1 {
		t.Fatalf("%d host prototypes, want 1", n)
	}

	// A read-only Admin: the form read-only, the API refuses.
	var ug struct{ UsrgrpIDs []string }
	json.Unmarshal(apiCall(t, base, token, "usergroup.create", map[string]any{"name": "hp readers", "rights": []map[string]any{{"id": linux, "permission": 2}}}), &ug)
	apiCall(t, base, token, "user.create", map[string]any{"username": "hp-reader", "passwd": "Zx9!long-passw0rd", "roleid": "2", "usrgrps": []map[string]string{{"usrgrpid": ug.UsrgrpIDs[0]}}})
	var reader string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "hp-reader", "password": "Zx9!long-passw0rd"}), &reader)
	if e := apiTry(t, base, reader, "hostprototype.update", map[string]any{"hostid": hp["hostid"], "status": 1}); e == "" {
		t.Error("a read-only Admin's hostprototype.update was accepted")
	}
	rctx, _ := browser(t)
	loginAs(t, rctx, base, "hp-reader", "Zx9!long-passw0rd")
	run(t, rctx, "read-only host prototypes", chromedp.Navigate(page), chromedp.WaitVisible(`#hostproto-list .hostproto-row`, chromedp.ByQuery),
		pollJS(`document.querySelectorAll('.hostproto-row .row-check').length === 0`),
		clickJS(rowNamed("hostproto", `<b>VM</b> {#VM.NAME} & "co"`)), pollJS(`document.querySelectorAll('.hostproto-interfaces-row').length === 2`),
		pollJS(`!document.querySelector('#hostproto-save') && document.querySelector('#hostproto-host').disabled && document.querySelector('#hostproto-macros-add').hidden`))
	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img, main b').length`, &injected))
	if injected != 0 {
		t.Errorf("markup from names became elements (%d)", injected)
	}
}
