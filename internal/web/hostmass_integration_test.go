package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// checkHosts ticks exactly the named hosts' check boxes.
func checkHosts(names ...string) chromedp.Action {
	if names == nil {
		names = []string{}
	}
	js, _ := json.Marshal(names)
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const want = %s;
		for (const r of document.querySelectorAll('#config-hosts .config-host-row')) {
			const c = r.querySelector('.host-check'); if (!c) continue;
			const on = want.includes(r.querySelector('.host-name').textContent);
			if (c.checked !== on) { c.checked = on; c.dispatchEvent(new Event('change', {bubbles: true})); }
		} })()`, js), nil)
}

// TestIntegrationBrowserHostMass drives the hosts list's mass actions
// in headless Chromium at 1400×900 and checks each through the API:
// Disable and Enable of checked hosts and of all (the "select all" box),
// Export (the YAML of the checked hosts), a mass update of two hosts
// with host groups replaced, a template linked, a tag added, macros
// added (one existing updated with "Update existing", a secret kept),
// inventory mode and a field, the proxy, IPMI username and a value map
// added, the third host untouched; a second one with the template
// unlinked and cleared, the tag and a macro removed and the value map
// renamed; a refused mass update (host groups
// all removed) leaves nothing half-saved, its value map made first put
// back; Delete with its question. Then the host form's IPMI tab (the
// password never shown back, a too long username refused beside the
// field) and value map tab (add, edit, remove through valuemap.*; a
// duplicate, a too long name and a mapping of the wrong type refused
// beside the field; a name with markup shown as text), and host names
// refused (too long, "<script>") beside the field with nothing saved.
func TestIntegrationBrowserHostMass(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "mass-a", Groups: []string{"MassOld"}}, {Host: "mass-b", Groups: []string{"MassOld"}},
		{Host: "mass-c", Groups: []string{"MassOld"}}, {Host: "mass-d", Groups: []string{"MassOld"}},
	}}
	s, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	hostID := func(name string) string {
		return getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "filter": map[string]any{"host": name}})["hostid"].(string)
	}
	a, b, c := hostID("mass-a"), hostID("mass-b"), hostID("mass-c")
	var g struct{ GroupIDs []string }
	json.Unmarshal(apiCall(t, base, token, "hostgroup.create", map[string]any{"name": "MassNew"}), &g)
	oldGroup := getOne(t, base, token, "hostgroup", map[string]any{"output": []string{"groupid"}, "filter": map[string]any{"name": "MassOld"}})["groupid"].(string)
	var tp struct{ TemplateIDs []string }
	json.Unmarshal(apiCall(t, base, token, "template.create", map[string]any{"host": "mass-tpl", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}), &tp)
	apiCall(t, base, token, "item.create", map[string]any{"hostid": tp.TemplateIDs[0], "name": "tpl item", "key_": "mass.tpl", "type": 2, "value_type": 3})
	var px struct{ ProxyIDs []string }
	json.Unmarshal(apiCall(t, base, token, "proxy.create", map[string]any{"host": "mass-proxy", "status": 5}), &px)
	apiCall(t, base, token, "host.update", map[string]any{"hostid": a, "tags": []map[string]string{{"tag": "keep", "value": "1"}},
		"macros": []map[string]any{{"macro": "{$OLD}", "value": "old"}, {"macro": "{$SECRET}", "value": "s3cret", "type": 1}}})

	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)
	status := func(id string) string {
		return getOne(t, base, token, "host", map[string]any{"output": []string{"status"}, "hostids": []string{id}})["status"].(string)
	}
	// The four and the server's own host.
	listed := `document.querySelectorAll('#config-hosts .host-check').length === 5`
	run(t, ctx, "the list", chromedp.EmulateViewport(1400, 900), chromedp.Navigate(base+"/config/hosts"), pollJS(listed),
		pollJS(`!document.querySelector('#host-mass').hidden && document.querySelector('#host-mass-enable').disabled`))

	// Disable two, then enable all.
	run(t, ctx, "disable two", checkHosts("mass-a", "mass-b"), pollJS(`document.querySelector('#host-mass-count').textContent === '2 selected'`),
		chromedp.Click(`#host-mass-disable`, chromedp.ByQuery), pollJS(`document.querySelectorAll('#config-hosts .ack-no').length === 2`))
	if status(a) != "1" || status(b) != "1" || status(c) != "0" {
		t.Fatalf("after Disable of mass-a and mass-b: statuses %s %s %s", status(a), status(b), status(c))
	}
	run(t, ctx, "enable all", checkHosts(), clickJS(`document.querySelector('#host-check-all')`),
		pollJS(`document.querySelector('#host-mass-count').textContent === '5 selected'`),
		chromedp.Click(`#host-mass-enable`, chromedp.ByQuery), pollJS(`document.querySelectorAll('#config-hosts .ack-no').length === 0`))
	if status(a) != "0" || status(b) != "0" {
		t.Fatalf("after Enable of all: statuses %s %s", status(a), status(b))
	}

	// Export: the YAML of the checked host only.
	var doc string
	run(t, ctx, "export", checkHosts("mass-b"), chromedp.Click(`#host-mass-export`, chromedp.ByQuery), pollJS(`!!document.querySelector('#host-export-link')`),
		chromedp.Evaluate(`document.querySelector('#host-export-text').textContent`, &doc))
	if !strings.Contains(doc, "host: mass-b") || strings.Contains(doc, "mass-a") || !strings.Contains(doc, "zabbix_export:") {
		t.Fatalf("the export of mass-b:\n%s", doc)
	}

	// Mass update of mass-a and mass-b.
	tab := func(i int) chromedp.Action { return chromedp.Click(fmt.Sprintf(`#hmu-tabs-%d`, i), chromedp.ByQuery) }
	vis := func(key string) chromedp.Action { return setJS(`#hmu-vis-`+key, "1") }
	run(t, ctx, "mass update", checkHosts("mass-a", "mass-b"), chromedp.Click(`#host-mass-update`, chromedp.ByQuery), chromedp.WaitVisible(`#host-massupdate`, chromedp.ByQuery),
		vis("templates"), pickJS(`#hmu-templates`, tp.TemplateIDs[0]),
		vis("groups"), setJS(`#hmu-groups-action`, "1"), pickJS(`#hmu-groups`, g.GroupIDs[0]),
		vis("proxy_hostid"), setJS(`#hmu-proxy`, px.ProxyIDs[0]),
		tab(1), vis("ipmi_username"), setJS(`#hmu-ipmi-username`, "operator"),
		tab(2), vis("tags"), setJS(`#hmu-tags tbody tr:nth-child(1) .tag-tag`, "env"), setJS(`#hmu-tags tbody tr:nth-child(1) .tag-value`, "prod"),
		tab(3), vis("macros"), setJS(`#hmu-macros tbody tr:nth-child(1) .macro-name`, "{$OLD}"), setJS(`#hmu-macros tbody tr:nth-child(1) .macro-value`, "new"),
		chromedp.Click(`#hmu-macros-add`, chromedp.ByQuery),
		setJS(`#hmu-macros tbody tr:nth-child(2) .macro-name`, "{$ADDED}"), setJS(`#hmu-macros tbody tr:nth-child(2) .macro-value`, "1"),
		setJS(`#hmu-macros-update-existing`, "1"),
		tab(4), vis("inventory_mode"), setJS(`#hmu-inventory-mode`, "0"), vis("inventory-os"), setJS(`#inventory-os`, "Linux"),
		tab(6), vis("valuemaps"), setJS(`#hmu-valuemaps .valuemap-name`, "mass-map"),
		setJS(`#hmu-valuemaps .hmu-vm-0-row input.hmu-vm-0-value`, "1"), setJS(`#hmu-valuemaps .hmu-vm-0-row input.hmu-vm-0-newvalue`, "Up"),
		tab(0))
	shot1400(t, ctx, sh, "config-hosts-mass-update")
	var shown string
	run(t, ctx, "save the mass update", chromedp.Click(`#hmu-save`, chromedp.ByQuery),
		pollJS(`document.querySelector('#host-form').hidden || !document.querySelector('#hmu-error').hidden`), textOf(`#host-mass-note`, &shown))
	if shown != "Updated 2 hosts." {
		var e string
		chromedp.Run(ctx, textOf(`#hmu-error`, &e))
		t.Fatalf("the mass update: note %q, error %q", shown, e)
	}
	full := func(id string) map[string]any {
		return getOne(t, base, token, "host", map[string]any{"hostids": []string{id}, "output": []string{"proxy_hostid", "inventory_mode", "ipmi_username"},
			"selectGroups": []string{"groupid"}, "selectParentTemplates": []string{"templateid"}, "selectTags": []string{"tag", "value"},
			"selectMacros": []string{"macro", "value", "type"}, "selectInventory": []string{"os"}})
	}
	maps := func(id string) string {
		var l []map[string]any
		json.Unmarshal(apiCall(t, base, token, "valuemap.get", map[string]any{"hostids": []string{id}, "output": []string{"name"}, "selectMappings": []string{"value", "newvalue"}}), &l)
		return js(l)
	}
	for _, id := range []string{a, b} {
		ho := full(id)
		wantTags := `[{"tag":"env","value":"prod"}]`
		wantMacros := `[{"macro":"{$OLD}","type":"0","value":"new"},{"macro":"{$ADDED}","type":"0","value":"1"}]`
		if id == a {
			// Added to mass-a's own, {$OLD} updated ("Update existing"),
			// the secret kept (its value is never returned).
			wantTags = `[{"tag":"keep","value":"1"},{"tag":"env","value":"prod"}]`
			wantMacros = `[{"macro":"{$OLD}","type":"0","value":"new"},{"macro":"{$SECRET}","type":"1"},{"macro":"{$ADDED}","type":"0","value":"1"}]`
		}
		if js(ho["groups"]) != fmt.Sprintf(`[{"groupid":"%s"}]`, g.GroupIDs[0]) || js(ho["parentTemplates"]) != fmt.Sprintf(`[{"templateid":"%s"}]`, tp.TemplateIDs[0]) ||
			!sameJSONSet(ho["tags"], wantTags) || !sameJSONSet(ho["macros"], wantMacros) || ho["inventory_mode"] != "0" || js(ho["inventory"]) != `{"os":"Linux"}` ||
			ho["proxy_hostid"] != px.ProxyIDs[0] || ho["ipmi_username"] != "operator" || maps(id) != `[{"mappings":[{"newvalue":"Up","value":"1"}],"name":"mass-map"}]` {
			t.Errorf("host %s after the mass update: %s, value maps %s", id, js(ho), maps(id))
		}
	}
	if ho := full(c); js(ho["groups"]) != fmt.Sprintf(`[{"groupid":"%s"}]`, oldGroup) || js(ho["parentTemplates"]) != `[]` || ho["proxy_hostid"] != "0" || maps(c) != `[]` {
		t.Errorf("mass-c, not checked, changed: %s %s", js(ho), maps(c))
	}
	for _, m := range s.Catalog.Snapshot().Macros(s.Catalog.Snapshot().Host("mass-a").ID) {
		if m.Macro == "{$SECRET}" && m.Value != "s3cret" {
			t.Errorf("the secret macro's value is now %q", m.Value)
		}
	}

	// A second mass update: the template unlinked and cleared (its item
	// goes), the tag and a macro removed, the value map renamed.
	run(t, ctx, "second mass update", checkHosts("mass-a", "mass-b"), chromedp.Click(`#host-mass-update`, chromedp.ByQuery), chromedp.WaitVisible(`#host-massupdate`, chromedp.ByQuery),
		vis("templates"), setJS(`#hmu-templates-action`, "2"), pickJS(`#hmu-templates`, tp.TemplateIDs[0]), setJS(`#hmu-templates-clear`, "1"),
		tab(2), vis("tags"), setJS(`#hmu-tags-action`, "2"), setJS(`#hmu-tags tbody tr:nth-child(1) .tag-tag`, "env"), setJS(`#hmu-tags tbody tr:nth-child(1) .tag-value`, "prod"),
		tab(3), vis("macros"), setJS(`#hmu-macros-action`, "2"), setJS(`#hmu-macros tbody tr:nth-child(1) .macro-name`, "{$ADDED}"),
		tab(6), vis("valuemaps"), setJS(`#hmu-valuemaps-action`, "4"),
		setJS(`.hmu-valuemap-rename-row input.hmu-valuemap-rename-from`, "mass-map"), setJS(`.hmu-valuemap-rename-row input.hmu-valuemap-rename-to`, "mass-map-r"),
		chromedp.Click(`#hmu-save`, chromedp.ByQuery), pollJS(`document.querySelector('#host-form').hidden || !document.querySelector('#hmu-error').hidden`),
		textOf(`#host-mass-note`, &shown))
	if shown != "Updated 2 hosts." {
		var e string
		chromedp.Run(ctx, textOf(`#hmu-error`, &e))
		t.Fatalf("the second mass update: note %q, error %q", shown, e)
	}
	for _, id := range []string{a, b} {
		ho := full(id)
		var items []map[string]any
		json.Unmarshal(apiCall(t, base, token, "item.get", map[string]any{"hostids": []string{id}, "output": []string{"key_"}}), &items)
		wantTags, wantMacros := `[]`, `[{"macro":"{$OLD}","type":"0","value":"new"}]`
		if id == a {
			wantTags = `[{"tag":"keep","value":"1"}]`
			wantMacros = `[{"macro":"{$OLD}","type":"0","value":"new"},{"macro":"{$SECRET}","type":"1"}]`
		}
		if js(ho["parentTemplates"]) != `[]` || len(items) != 0 || !sameJSONSet(ho["tags"], wantTags) || !sameJSONSet(ho["macros"], wantMacros) ||
			maps(id) != `[{"mappings":[{"newvalue":"Up","value":"1"}],"name":"mass-map-r"}]` {
			t.Errorf("host %s after the second mass update: %s, items %s, value maps %s", id, js(ho), js(items), maps(id))
		}
	}

	// A refused mass update: removing every host group of the hosts, with
	// a value map to add; the API's error beside the host groups, the
	// value map made first taken back, nothing saved.
	var errAt string
	besideJS := func(form string) string {
		return fmt.Sprintf(`(() => { const e = document.querySelector('%s .field-error'); return e ? (e.previousElementSibling.id || e.previousElementSibling.className) + '|' + e.textContent : ''; })()`, form)
	}
	run(t, ctx, "a refused mass update", checkHosts("mass-a", "mass-b"), chromedp.Click(`#host-mass-update`, chromedp.ByQuery), chromedp.WaitVisible(`#host-massupdate`, chromedp.ByQuery),
		vis("groups"), setJS(`#hmu-groups-action`, "2"), pickJS(`#hmu-groups`, g.GroupIDs[0]),
		vis("status"), setJS(`#hmu-status`, "1"),
		tab(6), vis("valuemaps"), setJS(`#hmu-valuemaps .valuemap-name`, "never-map"),
		setJS(`#hmu-valuemaps .hmu-vm-0-row input.hmu-vm-0-value`, "2"), setJS(`#hmu-valuemaps .hmu-vm-0-row input.hmu-vm-0-newvalue`, "Down"),
		chromedp.Click(`#hmu-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#host-massupdate .field-error')`), chromedp.Evaluate(besideJS("#host-massupdate"), &errAt))
	if errAt != `hmu-groups|Host "mass-a" cannot be without host group.` {
		t.Errorf("the refused mass update's error: %q", errAt)
	}
	if ho := full(a); js(ho["groups"]) != fmt.Sprintf(`[{"groupid":"%s"}]`, g.GroupIDs[0]) || status(a) != "0" || status(b) != "0" ||
		strings.Contains(maps(a), "never-map") || strings.Contains(maps(b), "never-map") {
		t.Errorf("the refused mass update saved something: %s, status %s %s, value maps %s %s", js(ho), status(a), status(b), maps(a), maps(b))
	}

	// Delete, asked first.
	run(t, ctx, "delete one", chromedp.Navigate(base+"/config/hosts"), pollJS(listed), checkHosts("mass-c"),
		chromedp.Click(`#host-mass-delete`, chromedp.ByQuery), chromedp.WaitVisible(`#host-mass-delete-yes`, chromedp.ByQuery),
		chromedp.Click(`#host-mass-delete-yes`, chromedp.ByQuery), pollJS(`document.querySelectorAll('#config-hosts .host-check').length === 4`))
	if n := countOf(t, base, token, "host", map[string]any{"hostids": []string{c}}); n != 0 {
		t.Fatalf("mass-c is still there after Delete")
	}

	// The host form's IPMI tab: the password is stored, never shown back.
	hostTab := func(i int) chromedp.Action { return chromedp.Click(fmt.Sprintf(`#host-tabs-%d`, i), chromedp.ByQuery) }
	rowLink := func(name string) string {
		return fmt.Sprintf(`[...document.querySelectorAll('#config-hosts .host-name')].find((e) => e.textContent === %q)`, name)
	}
	saved := `document.querySelector('#host-form').hidden || !document.querySelector('#host-error').hidden`
	// openB opens mass-b's form afresh (the one before taken away first,
	// so that nothing is read from it).
	openB := chromedp.Tasks{chromedp.Evaluate(`document.querySelector('#host-form').replaceChildren()`, nil), clickJS(rowLink("mass-b")),
		pollJS(`(document.querySelector('#host-host') || {}).value === 'mass-b'`)}
	run(t, ctx, "IPMI", clickJS(rowLink("mass-b")), chromedp.WaitVisible(`#host-edit`, chromedp.ByQuery), hostTab(4),
		setJS(`#host-ipmi-authtype`, "2"), setJS(`#host-ipmi-privilege`, "4"), setJS(`#host-ipmi-username`, "admin"), setJS(`#host-ipmi-password`, "pw-1"))
	shot1400(t, ctx, sh, "config-host-ipmi")
	run(t, ctx, "save IPMI", chromedp.Click(`#host-save`, chromedp.ByQuery), pollJS(saved), textOf(`#host-error`, &shown))
	ipmi := func() (string, string) {
		ho := getOne(t, base, token, "host", map[string]any{"hostids": []string{b}, "output": []string{"ipmi_authtype", "ipmi_privilege", "ipmi_username", "ipmi_password"}})
		h := s.Catalog.Snapshot().Host("mass-b")
		return js(ho), h.Ext().IPMI.Password
	}
	if got, pw := ipmi(); shown != "" || !strings.Contains(got, `"ipmi_authtype":"2","ipmi_password":"","ipmi_privilege":"4","ipmi_username":"admin"`) || pw != "pw-1" {
		t.Fatalf("IPMI saved: %s, stored password %q, error %q", got, pw, shown)
	}
	run(t, ctx, "the password is not shown", openB,
		chromedp.Evaluate(`document.querySelector('#host-ipmi-password').value + '|' + document.querySelector('#host-ipmi-authtype').value`, &shown))
	if shown != "|2" {
		t.Fatalf("IPMI password field and algorithm shown: %q", shown)
	}
	run(t, ctx, "a too long IPMI username", hostTab(4), setJS(`#host-ipmi-username`, strings.Repeat("u", 17)), setJS(`#host-ipmi-privilege`, "5"),
		chromedp.Click(`#host-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#host-edit .field-error')`), chromedp.Evaluate(besideJS("#host-edit"), &errAt))
	if errAt != `host-ipmi-username|Value "uuuuuuuuuuuuuuuuu" is too long for field "ipmi_username" - 17 characters. Allowed length is 16 characters.` {
		t.Errorf("the too long IPMI username: %q", errAt)
	}
	if got, pw := ipmi(); !strings.Contains(got, `"ipmi_privilege":"4","ipmi_username":"admin"`) || pw != "pw-1" {
		t.Errorf("IPMI after the refusal: %s, password %q", got, pw)
	}

	// The value map tab: mass-map (from the mass update) listed; add,
	// edit, remove; bad input beside the field.
	vmRow := func(name string) string {
		return fmt.Sprintf(`[...document.querySelectorAll('#host-valuemaps .host-valuemap-name')].find((e) => e.textContent === %q)`, name)
	}
	vmEdit := func(name, value, newvalue string) []chromedp.Action {
		return []chromedp.Action{setJS(`#host-valuemap-name`, name),
			setJS(`#host-valuemap-mappings .host-valuemap-mappings-row:nth-child(1) .host-valuemap-mappings-value`, value),
			setJS(`#host-valuemap-mappings .host-valuemap-mappings-row:nth-child(1) .host-valuemap-mappings-newvalue`, newvalue)}
	}
	run(t, ctx, "value maps listed", openB, hostTab(5), pollJS(vmRow("mass-map-r")))
	steps := []chromedp.Action{chromedp.Click(`#host-valuemap-add`, chromedp.ByQuery), chromedp.WaitVisible(`#host-valuemap-name`, chromedp.ByQuery)}
	steps = append(steps, vmEdit(`<b>form</b> map`, "0", "Down")...)
	steps = append(steps, chromedp.Click(`#host-valuemap-save`, chromedp.ByQuery), pollJS(vmRow(`<b>form</b> map`)))
	run(t, ctx, "add a value map", steps...)
	if got := maps(b); got != `[{"mappings":[{"newvalue":"Up","value":"1"}],"name":"mass-map-r"},{"mappings":[{"newvalue":"Down","value":"0"}],"name":"\u003cb\u003eform\u003c/b\u003e map"}]` {
		t.Errorf("value maps after the add: %s", got)
	}
	var tags int
	run(t, ctx, "the name is text", chromedp.Evaluate(`document.querySelectorAll('#host-valuemaps b').length`, &tags))
	if tags != 0 {
		t.Errorf("a value map's name made %d elements", tags)
	}
	shot1400(t, ctx, sh, "config-host-valuemaps")
	steps = []chromedp.Action{clickJS(vmRow("mass-map-r")), pollJS(`(document.querySelector('#host-valuemap-name') || {}).value === 'mass-map-r'`)}
	steps = append(steps, vmEdit("mass-map 2", "1", "Online")...)
	steps = append(steps, chromedp.Click(`#host-valuemap-save`, chromedp.ByQuery), pollJS(vmRow("mass-map 2")))
	run(t, ctx, "edit a value map", steps...)
	if got := maps(b); !strings.Contains(got, `{"mappings":[{"newvalue":"Online","value":"1"}],"name":"mass-map 2"}`) || strings.Contains(got, `"mass-map-r"`) {
		t.Errorf("value maps after the edit: %s", got)
	}
	if got := maps(a); got != `[{"mappings":[{"newvalue":"Up","value":"1"}],"name":"mass-map-r"}]` {
		t.Errorf("mass-a's value map changed by mass-b's edit: %s", got)
	}
	for _, bad := range []struct{ name, value, want string }{
		{"mass-map 2", "1", `host-valuemap-name|Value map "mass-map 2" already exists.`},
		{strings.Repeat("v", 65), "1", `host-valuemap-name|Invalid parameter "/1/name": value is too long.`},
	} {
		steps = []chromedp.Action{chromedp.Click(`#host-valuemap-add`, chromedp.ByQuery), chromedp.WaitVisible(`#host-valuemap-name`, chromedp.ByQuery)}
		steps = append(steps, vmEdit(bad.name, bad.value, "x")...)
		steps = append(steps, chromedp.Click(`#host-valuemap-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#host-valuemap-editor .field-error')`),
			chromedp.Evaluate(besideJS("#host-valuemap-editor"), &errAt))
		run(t, ctx, "a refused value map "+bad.want, steps...)
		if errAt != bad.want {
			t.Errorf("value map %q: %q, want %q", bad.name, errAt, bad.want)
		}
	}
	// A mapping "is greater than or equals" a text: wrong type.
	steps = []chromedp.Action{chromedp.Click(`#host-valuemap-add`, chromedp.ByQuery), chromedp.WaitVisible(`#host-valuemap-name`, chromedp.ByQuery),
		setJS(`#host-valuemap-mappings .host-valuemap-mappings-row:nth-child(1) select`, "1")}
	steps = append(steps, vmEdit("typed", "abc", "x")...)
	steps = append(steps, chromedp.Click(`#host-valuemap-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#host-valuemap-editor .field-error')`),
		chromedp.Evaluate(besideJS("#host-valuemap-editor"), &errAt))
	run(t, ctx, "a mapping of the wrong type", steps...)
	if errAt != `host-valuemap-mappings|Invalid parameter "/1/mappings/1/value": a floating point value is expected.` {
		t.Errorf("the mapping of the wrong type: %q", errAt)
	}
	if got := maps(b); strings.Count(got, `"name"`) != 2 {
		t.Errorf("value maps after the refusals: %s", got)
	}
	run(t, ctx, "remove a value map", clickJS(fmt.Sprintf(`%s.closest('tr').querySelector('.host-valuemap-remove')`, vmRow("mass-map 2"))),
		clickJS(fmt.Sprintf(`%s.closest('tr').querySelector('.host-valuemap-remove-yes')`, vmRow("mass-map 2"))), pollJS(fmt.Sprintf(`!(%s)`, vmRow("mass-map 2"))))
	if got := maps(b); strings.Contains(got, "mass-map 2") || !strings.Contains(got, "form") {
		t.Errorf("value maps after the remove: %s", got)
	}

	// Host names refused beside the field, nothing saved; a visible name
	// with markup is saved and shown as text.
	for _, bad := range []struct{ host, want string }{
		{strings.Repeat("h", 129), `host-host|Value "` + strings.Repeat("h", 129) + `" is too long for field "host" - 129 characters. Allowed length is 128 characters.`},
		{"<script>", `host-host|Incorrect characters used for host name "<script>".`},
		{"mass-a", `host-host|Host with the same name "mass-a" already exists.`},
	} {
		run(t, ctx, "host name "+bad.host[:min(len(bad.host), 10)], openB,
			setJS(`#host-host`, bad.host), chromedp.Click(`#host-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#host-edit .field-error')`),
			chromedp.Evaluate(besideJS("#host-edit"), &errAt))
		if errAt != bad.want {
			t.Errorf("host name %q: %q, want %q", bad.host, errAt, bad.want)
		}
	}
	if n := countOf(t, base, token, "host", map[string]any{"hostids": []string{b}, "filter": map[string]any{"host": "mass-b"}}); n != 1 {
		t.Errorf("mass-b was renamed by a refused save")
	}
	run(t, ctx, "a visible name with markup", openB,
		setJS(`#host-name`, `<script>alert(1)</script> b`), chromedp.Click(`#host-save`, chromedp.ByQuery), pollJS(rowLink(`<script>alert(1)</script> b`)),
		chromedp.Evaluate(`document.querySelectorAll('#config-hosts script').length`, &tags))
	if tags != 0 {
		t.Errorf("a visible name made %d script elements", tags)
	}
	if name := getOne(t, base, token, "host", map[string]any{"hostids": []string{b}, "output": []string{"name"}})["name"]; name != `<script>alert(1)</script> b` {
		t.Errorf("visible name saved: %v", name)
	}
}

// sameJSONSet reports whether v, as JSON, is the list want in any order.
func sameJSONSet(v any, want string) bool {
	var w []any
	json.Unmarshal([]byte(want), &w)
	l, _ := v.([]any)
	if len(l) != len(w) {
		return false
	}
	for _, x := range w {
		found := false
		for _, y := range l {
			if js(x) == js(y) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestIntegrationBrowserHostMassReadOnly: an Admin whose user group may
// only read the hosts' group sees the hosts with no check box and no
// mass action; the mass changes sent directly (host.update of the
// status as Enable sends, host.massupdate, host.massadd, host.delete,
// valuemap.create with the host) are refused for permissions and change
// nothing.
func TestIntegrationBrowserHostMassReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "rom-host", Groups: []string{"ROM"}}, {Host: "rom-host2", Groups: []string{"ROM"}}}}
	_, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	host := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "selectGroups": []string{"groupid"}, "filter": map[string]any{"host": "rom-host"}})
	hostid := host["hostid"].(string)
	groupid := host["groups"].([]any)[0].(map[string]any)["groupid"].(string)
	var ug struct{ UsrgrpIDs []string }
	json.Unmarshal(apiCall(t, base, token, "usergroup.create", map[string]any{"name": "rom readers", "rights": []map[string]any{{"id": groupid, "permission": 2}}}), &ug)
	const pw = "Zx9!long-passw0rd"
	apiCall(t, base, token, "user.create", map[string]any{"username": "rom-admin", "passwd": pw, "roleid": "2", "usrgrps": []map[string]string{{"usrgrpid": ug.UsrgrpIDs[0]}}})
	var reader string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "rom-admin", "password": pw}), &reader)

	ctx, _ := browser(t)
	watchPage(t, ctx)
	loginAs(t, ctx, base, "rom-admin", pw)
	var seen string
	run(t, ctx, "the list read-only", chromedp.Navigate(base+"/config/hosts"),
		pollJS(`document.querySelectorAll('#config-hosts .config-host-row').length === 2`),
		chromedp.Evaluate(`[document.querySelectorAll('.host-check').length, !!document.querySelector('#host-check-all'), document.querySelector('#host-mass').hidden,
			[...document.querySelectorAll('#host-mass button')].filter((b) => b.offsetParent !== null).length].join('|')`, &seen))
	if seen != "0|false|true|0" {
		t.Fatalf("a read-only Admin's hosts list: check boxes, select all, mass bar hidden, visible mass buttons: %q", seen)
	}
	for _, w := range []struct {
		method string
		params any
	}{
		{"host.update", []map[string]any{{"hostid": hostid, "status": 1}}},
		{"host.massupdate", map[string]any{"hosts": []map[string]string{{"hostid": hostid}}, "status": 1}},
		{"host.massadd", map[string]any{"hosts": []map[string]string{{"hostid": hostid}}, "macros": []map[string]string{{"macro": "{$RO}", "value": "x"}}}},
		{"host.massremove", map[string]any{"hostids": []string{hostid}, "macros": []string{"{$RO}"}}},
		{"valuemap.create", map[string]any{"hostid": hostid, "name": "ro map", "mappings": []map[string]string{{"value": "1", "newvalue": "Up"}}}},
		{"host.delete", []string{hostid}},
	} {
		if e := apiTry(t, base, reader, w.method, w.params); !strings.Contains(e, "ermission") {
			t.Errorf("a read-only Admin's %s: %q, want a refusal for permissions", w.method, e)
		}
	}
	ho := getOne(t, base, token, "host", map[string]any{"hostids": []string{hostid}, "output": []string{"status"}, "selectMacros": []string{"macro"}})
	if ho["status"] != "0" || js(ho["macros"]) != `[]` || countOf(t, base, token, "valuemap", map[string]any{"hostids": []string{hostid}}) != 0 {
		t.Errorf("the host changed after the refused calls: %s", js(ho))
	}
}
