package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// checkItems ticks exactly the named items' check boxes.
func checkItems(names ...string) chromedp.Action {
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names)
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const want = %s;
		for (const r of document.querySelectorAll('#config-items .config-item-row')) {
			const c = r.querySelector('.item-check'); if (!c) continue;
			const on = want.includes(r.querySelector('.item-name').textContent);
			if (c.checked !== on) { c.checked = on; c.dispatchEvent(new Event('change', {bubbles: true})); }
		} })()`, b), nil)
}

// rowsAre is a JS condition: the list shows exactly these item names
// (sorted by name, as item.get sorts them).
func rowsAre(names ...string) string {
	b, _ := json.Marshal(names)
	return fmt.Sprintf(`JSON.stringify([...document.querySelectorAll('#config-items .item-name')].map((e) => e.textContent)) === %q`, string(b))
}

// TestIntegrationBrowserItemList drives the items list's filter and mass
// actions in headless Chromium at 1400×900 and checks each through the
// API: the filter (name, key, type, type of information, status, state,
// tags, discovered) as item.get's filter and search; Disable and Enable
// of checked items; Execute now (one task id per item); Clear history
// (refused: the API has no history.clear yet, every value stays); Copy to another host (the same
// definitions), a second copy refused with the API's error and nothing
// made; Mass update of two items (interval, history, units, description,
// tags added, preprocessing replaced: one item.update), then a bad
// interval refused beside the field with nothing saved; Delete with its
// question.
func TestIntegrationBrowserItemList(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{})
	token := apiLogin(t, base, password)
	var g struct{ GroupIDs []string }
	json.Unmarshal(apiCall(t, base, token, "hostgroup.create", map[string]any{"name": "IL group"}), &g)
	iface := []map[string]any{{"type": 1, "main": 1, "useip": 1, "ip": "127.0.0.1", "dns": "", "port": "1"}}
	var hs struct{ HostIDs []string }
	json.Unmarshal(apiCall(t, base, token, "host.create", []map[string]any{
		{"host": "il-a", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}, "interfaces": iface},
		{"host": "il-b", "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}, "interfaces": iface}}), &hs)
	a, b := hs.HostIDs[0], hs.HostIDs[1]
	var made struct{ ItemIDs []string }
	json.Unmarshal(apiCall(t, base, token, "item.create", []map[string]any{
		{"hostid": a, "name": "il cpu", "key_": "il.cpu", "type": 0, "value_type": 0, "delay": "1h", "interfaceid": ifaceOf(t, base, token, a),
			"tags": []map[string]string{{"tag": "comp", "value": "cpu"}}},
		{"hostid": a, "name": "il mem", "key_": "il.mem", "type": 0, "value_type": 3, "delay": "1h", "interfaceid": ifaceOf(t, base, token, a)},
		{"hostid": a, "name": "il trap", "key_": "il.trap", "type": 2, "value_type": 3, "tags": []map[string]string{{"tag": "comp", "value": "net"}},
			"preprocessing": []map[string]any{{"type": 1, "params": "10", "error_handler": 0, "error_handler_params": ""}}},
		{"hostid": a, "name": "il text", "key_": "il.text", "type": 2, "value_type": 4, "status": 1},
	}), &made)
	cpu, mem, trap, txt := made.ItemIDs[0], made.ItemIDs[1], made.ItemIDs[2], made.ItemIDs[3]
	now := time.Now().Unix()
	var vals []map[string]any
	for i := int64(0); i < 5; i++ {
		vals = append(vals, map[string]any{"itemid": trap, "value": fmt.Sprint(i), "clock": now - 300 + i*60})
	}
	apiCall(t, base, token, "history.push", vals)
	histCount := func() int {
		return countOf(t, base, token, "history", map[string]any{"itemids": []string{trap}, "history": 3})
	}
	if n := histCount(); n != 5 {
		t.Fatalf("history of il.trap before: %d values", n)
	}

	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)
	page := base + "/config/items?hostid=" + a
	apply := chromedp.Click(`#item-filter-apply`, chromedp.ByQuery)
	reset := chromedp.Click(`#item-filter-reset`, chromedp.ByQuery)
	all4 := rowsAre("il cpu", "il mem", "il text", "il trap")
	run(t, ctx, "the list", chromedp.EmulateViewport(1400, 900), chromedp.Navigate(page), pollJS(all4),
		pollJS(`!document.querySelector('#item-mass').hidden && document.querySelector('#item-mass-enable').disabled`))

	// The filter: each as item.get's filter or search.
	for _, f := range []struct {
		what string
		set  []chromedp.Action
		want []string
	}{
		{"name", []chromedp.Action{setJS(`#item-filter-name`, "me")}, []string{"il mem"}},
		{"key", []chromedp.Action{setJS(`#item-filter-key`, "il.t")}, []string{"il text", "il trap"}},
		{"type", []chromedp.Action{setJS(`#item-filter-type`, "0")}, []string{"il cpu", "il mem"}},
		{"type of information", []chromedp.Action{setJS(`#item-filter-value-type`, "4")}, []string{"il text"}},
		{"status", []chromedp.Action{setJS(`#item-filter-status`, "1")}, []string{"il text"}},
		// 6.0.14's items.php with filter_state=0 lists no disabled item.
		{"state normal (enabled only)", []chromedp.Action{setJS(`#item-filter-state`, "0"), setJS(`#item-filter-type`, "2")}, []string{"il trap"}},
		{"tag equals", []chromedp.Action{setJS(`#item-filter-tag`, "comp"), setJS(`#item-filter-tag-operator`, "1"), setJS(`#item-filter-tag-value`, "net")}, []string{"il trap"}},
		{"tag exists", []chromedp.Action{setJS(`#item-filter-tag`, "comp"), setJS(`#item-filter-tag-operator`, "4")}, []string{"il cpu", "il trap"}},
		{"update interval", []chromedp.Action{setJS(`#item-filter-delay`, "1h")}, []string{"il cpu", "il mem"}},
		{"history", []chromedp.Action{setJS(`#item-filter-history`, "90d"), setJS(`#item-filter-value-type`, "4")}, []string{"il text"}},
		{"trends", []chromedp.Action{setJS(`#item-filter-trends`, "1d")}, []string{}},
		{"discovered", []chromedp.Action{setJS(`#item-filter-discovered`, "1")}, []string{}},
		{"not discovered, key", []chromedp.Action{setJS(`#item-filter-discovered`, "0"), setJS(`#item-filter-key`, "cpu")}, []string{"il cpu"}},
	} {
		steps := append([]chromedp.Action{reset, pollJS(all4)}, f.set...)
		steps = append(steps, apply, pollJS(rowsAre(f.want...)))
		run(t, ctx, "filter by "+f.what, steps...)
	}

	status := func(id string) string {
		return getOne(t, base, token, "item", map[string]any{"output": []string{"status"}, "itemids": []string{id}})["status"].(string)
	}
	// Disable the agent items (filtered, all checked), then enable them.
	run(t, ctx, "disable", reset, pollJS(all4), setJS(`#item-filter-type`, "0"), apply, pollJS(rowsAre("il cpu", "il mem")),
		clickJS(`document.querySelector('#item-check-all')`), pollJS(`document.querySelector('#item-mass-count').textContent === '2 selected'`),
		chromedp.Click(`#item-mass-disable`, chromedp.ByQuery), pollJS(`document.querySelectorAll('#config-items .ack-no').length === 2`))
	if status(cpu) != "1" || status(mem) != "1" || status(trap) != "0" {
		t.Fatalf("after Disable: %s %s %s", status(cpu), status(mem), status(trap))
	}
	run(t, ctx, "enable", chromedp.Click(`#item-mass-enable`, chromedp.ByQuery), pollJS(`document.querySelectorAll('#config-items .ack-no').length === 0`))
	if status(cpu) != "0" || status(mem) != "0" {
		t.Fatalf("after Enable: %s %s", status(cpu), status(mem))
	}

	// Execute now: task.create, a task id per item.
	var taskids string
	run(t, ctx, "execute now", chromedp.Click(`#item-mass-checknow`, chromedp.ByQuery),
		pollJS(`document.querySelector('#item-mass-note').textContent === 'Request sent for 2 items.'`),
		chromedp.Evaluate(`document.querySelector('#item-mass-note').dataset.taskids`, &taskids))
	if ids := strings.Split(taskids, ","); len(ids) != 2 || ids[0] == "" || ids[0] == ids[1] {
		t.Fatalf("Execute now's task ids: %q", taskids)
	}

	// Execute now of an agent and a trapper item: refused whole, as
	// 6.0.14's items.php refuses it (recorded: item.masscheck_now of an
	// agent and a trapper item says "Cannot send request: wrong item
	// type." and its task table gets no row; of the agent item alone, one
	// task of type 6).
	var checkErr string
	run(t, ctx, "execute now refused", reset, pollJS(all4), checkItems("il cpu", "il trap"), chromedp.Click(`#item-mass-checknow`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#item-mass-error').hidden`), textOf(`#item-mass-error`, &checkErr))
	if checkErr != "Cannot send request: wrong item type." {
		t.Errorf("Execute now of a trapper item: %q", checkErr)
	}

	// Clear history of il trap: the page sends history.clear of the
	// checked items as 6.0's does; Peregrine's API has no history.clear
	// yet (the history stores delete no single item's values), so the
	// API's refusal is shown and every value stays.
	var clearErr string
	run(t, ctx, "clear history", reset, pollJS(all4), checkItems("il trap"), chromedp.Click(`#item-mass-clearhistory`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#item-mass-error').hidden`), textOf(`#item-mass-error`, &clearErr))
	if clearErr != `Incorrect method "history.clear".` {
		t.Errorf("Clear history's error: %q", clearErr)
	}
	if n := histCount(); n != 5 {
		t.Fatalf("history of il.trap after the refused Clear history: %d values, want 5", n)
	}

	// Copy il trap and il text to il-b: the same definitions.
	copyTo := []chromedp.Action{checkItems("il trap", "il text"), chromedp.Click(`#item-mass-copy`, chromedp.ByQuery), chromedp.WaitVisible(`#item-copy`, chromedp.ByQuery),
		setJS(`#imu-copy-type`, "1"), pickJS(`#imu-copy-targets`, b), chromedp.Click(`#imu-copy-save`, chromedp.ByQuery)}
	run(t, ctx, "copy", append(copyTo, pollJS(`document.querySelector('#item-mass-note').textContent === '2 items copied.'`))...)
	def := func(host, key string) map[string]any {
		return getOne(t, base, token, "item", map[string]any{"hostids": []string{host}, "filter": map[string]any{"key_": key},
			"output": []string{"name", "type", "value_type", "status", "history", "trends", "units", "delay"}, "selectTags": []string{"tag", "value"},
			"selectPreprocessing": []string{"type", "params"}})
	}
	for _, key := range []string{"il.trap", "il.text"} {
		x, y := def(a, key), def(b, key)
		delete(x, "itemid")
		delete(y, "itemid")
		if js(x) != js(y) {
			t.Errorf("the copy of %s on il-b: %s, the original %s", key, js(y), js(x))
		}
	}
	var errText string
	run(t, ctx, "copy again", append(copyTo, pollJS(`!document.querySelector('#imu-copy-error').hidden`), textOf(`#imu-copy-error`, &errText))...)
	// The first key the API finds on il-b (6.0.14 answers the same way,
	// for item.create of il.text and il.trap on a host with il.trap:
	// Item with key "il.trap" already exists on "s9-itemlist-b".).
	if errText != `Item with key "il.trap" already exists on "il-b".` && errText != `Item with key "il.text" already exists on "il-b".` {
		t.Errorf("the second copy's error: %q", errText)
	}
	if n := countOf(t, base, token, "item", map[string]any{"hostids": []string{b}}); n != 2 {
		t.Errorf("il-b has %d items after the refused copy, want 2", n)
	}

	// Mass update of il cpu and il mem.
	vis := func(key string) chromedp.Action { return setJS(`#imu-vis-`+key, "1") }
	run(t, ctx, "mass update", chromedp.Navigate(page), pollJS(all4), checkItems("il cpu", "il mem"), chromedp.Click(`#item-mass-update`, chromedp.ByQuery),
		chromedp.WaitVisible(`#item-massupdate`, chromedp.ByQuery),
		vis("delay"), setJS(`#imu-delay`, "5m"), vis("history"), setJS(`#imu-history`, "7d"), vis("units"), setJS(`#imu-units`, "B"),
		vis("description"), setJS(`#imu-description`, "set by mass update"),
		vis("tags"), setJS(`#imu-tags tbody tr:nth-child(1) .tag-tag`, "env"), setJS(`#imu-tags tbody tr:nth-child(1) .tag-value`, "prod"),
		vis("preprocessing"), chromedp.Click(`#imu-preprocessing-add`, chromedp.ByQuery), setJS(`#imu-preprocessing .pp-type`, "1"),
		setJS(`#imu-preprocessing .pp-param-1`, "2"))
	shot1400(t, ctx, sh, "config-items-mass-update")
	var shown string
	run(t, ctx, "save the mass update", chromedp.Click(`#imu-save`, chromedp.ByQuery),
		pollJS(`document.querySelector('#item-mass-note').textContent !== '' || (document.querySelector('#imu-error') || {}).hidden === false`), textOf(`#item-mass-note`, &shown))
	if shown != "2 items updated." {
		var e string
		chromedp.Run(ctx, textOf(`#imu-error`, &e))
		t.Fatalf("the mass update: note %q, error %q", shown, e)
	}
	after := func(id string) map[string]any {
		return getOne(t, base, token, "item", map[string]any{"itemids": []string{id}, "output": []string{"delay", "history", "units", "description", "status"},
			"selectTags": []string{"tag", "value"}, "selectPreprocessing": []string{"type", "params"}})
	}
	wantTags := map[string]string{cpu: `[{"tag":"comp","value":"cpu"},{"tag":"env","value":"prod"}]`, mem: `[{"tag":"env","value":"prod"}]`}
	for _, id := range []string{cpu, mem} {
		it := after(id)
		if it["delay"] != "5m" || it["history"] != "7d" || it["units"] != "B" || it["description"] != "set by mass update" || it["status"] != "0" ||
			!sameJSONSet(it["tags"], wantTags[id]) || js(it["preprocessing"]) != `[{"params":"2","type":"1"}]` {
			t.Errorf("item %s after the mass update: %s", id, js(it))
		}
	}
	if it := after(trap); it["history"] != "90d" || js(it["preprocessing"]) != `[{"params":"10","type":"1"}]` {
		t.Errorf("il trap, not checked, changed: %s", js(it))
	}

	// A bad interval: the API's error beside the field, nothing saved
	// (the history in the same update not either).
	var errAt string
	run(t, ctx, "a bad interval", checkItems("il cpu", "il mem"), chromedp.Click(`#item-mass-update`, chromedp.ByQuery), chromedp.WaitVisible(`#item-massupdate`, chromedp.ByQuery),
		vis("history"), setJS(`#imu-history`, "1d"), vis("delay"), setJS(`#imu-delay`, "abc"), chromedp.Click(`#imu-save`, chromedp.ByQuery),
		pollJS(`!!document.querySelector('#item-massupdate .field-error')`),
		chromedp.Evaluate(`(() => { const e = document.querySelector('#item-massupdate .field-error'); return e.previousElementSibling.id + '|' + e.textContent; })()`, &errAt))
	// 6.0.14's words for item.update of an agent item with delay "abc"
	// (a trapper item's delay is not checked: 6.0 stores 0).
	if errAt != `imu-delay|Incorrect value for field "delay": invalid delay.` {
		t.Errorf("the bad interval's error: %q", errAt)
	}
	for _, id := range []string{cpu, mem} {
		if it := after(id); it["delay"] != "5m" || it["history"] != "7d" {
			t.Errorf("item %s after the refused mass update: %s", id, js(it))
		}
	}

	// Delete, asked first.
	run(t, ctx, "delete", chromedp.Navigate(page), pollJS(all4), checkItems("il text"), chromedp.Click(`#item-mass-delete`, chromedp.ByQuery),
		chromedp.WaitVisible(`#item-mass-delete-yes`, chromedp.ByQuery), chromedp.Click(`#item-mass-delete-yes`, chromedp.ByQuery),
		pollJS(rowsAre("il cpu", "il mem", "il trap")))
	if n := countOf(t, base, token, "item", map[string]any{"itemids": []string{txt}}); n != 0 {
		t.Fatalf("il text is still there after Delete")
	}
}

// ifaceOf is the host's first interface id.
func ifaceOf(t *testing.T, base, token, hostid string) string {
	t.Helper()
	return getOne(t, base, token, "hostinterface", map[string]any{"hostids": []string{hostid}, "output": []string{"interfaceid"}})["interfaceid"].(string)
}

// TestIntegrationBrowserItemListReadOnly: an Admin whose user group may
// only read the host's group sees its items with no check box and no
// mass action; the mass changes sent directly (item.update of the status
// as Enable sends, item.create on the host as Copy sends,
// item.delete) are refused for permissions and change nothing.
func TestIntegrationBrowserItemListReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "ilr-host", Groups: []string{"ILR"}}}})
	token := apiLogin(t, base, password)
	host := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "selectGroups": []string{"groupid"}, "filter": map[string]any{"host": "ilr-host"}})
	hostid := host["hostid"].(string)
	groupid := host["groups"].([]any)[0].(map[string]any)["groupid"].(string)
	var made struct{ ItemIDs []string }
	json.Unmarshal(apiCall(t, base, token, "item.create", map[string]any{"hostid": hostid, "name": "ilr trap", "key_": "ilr.trap", "type": 2, "value_type": 3}), &made)
	apiCall(t, base, token, "history.push", []map[string]any{{"itemid": made.ItemIDs[0], "value": "1"}})
	var ug struct{ UsrgrpIDs []string }
	json.Unmarshal(apiCall(t, base, token, "usergroup.create", map[string]any{"name": "ilr readers", "rights": []map[string]any{{"id": groupid, "permission": 2}}}), &ug)
	const pw = "Zx9!long-passw0rd"
	apiCall(t, base, token, "user.create", map[string]any{"username": "ilr-admin", "passwd": pw, "roleid": "2", "usrgrps": []map[string]string{{"usrgrpid": ug.UsrgrpIDs[0]}}})
	var reader string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "ilr-admin", "password": pw}), &reader)

	ctx, _ := browser(t)
	watchPage(t, ctx)
	loginAs(t, ctx, base, "ilr-admin", pw)
	var seen string
	run(t, ctx, "the list read-only", chromedp.Navigate(base+"/config/items?hostid="+hostid), pollJS(rowsAre("ilr trap")),
		chromedp.Evaluate(`[document.querySelectorAll('.item-check').length, !!document.querySelector('#item-check-all'), document.querySelector('#item-mass').hidden,
			[...document.querySelectorAll('#item-mass button')].filter((b) => b.offsetParent !== null).length].join('|')`, &seen))
	if seen != "0|false|true|0" {
		t.Fatalf("a read-only Admin's items list: check boxes, select all, mass bar hidden, visible mass buttons: %q", seen)
	}
	id := made.ItemIDs[0]
	for _, w := range []struct {
		method string
		params any
	}{
		{"item.update", []map[string]any{{"itemid": id, "status": 1}}},
		{"item.update", []map[string]any{{"itemid": id, "delay": "5m", "history": "1d"}}},
		{"item.create", []map[string]any{{"hostid": hostid, "name": "ilr copy", "key_": "ilr.copy", "type": 2, "value_type": 3}}},
		{"item.delete", []string{id}},
	} {
		if e := apiTry(t, base, reader, w.method, w.params); !strings.Contains(e, "ermission") {
			t.Errorf("a read-only Admin's %s: %q, want a refusal for permissions", w.method, e)
		}
	}
	it := getOne(t, base, token, "item", map[string]any{"itemids": []string{id}, "output": []string{"status", "history"}})
	if it["status"] != "0" || it["history"] != "90d" || countOf(t, base, token, "item", map[string]any{"hostids": []string{hostid}}) != 1 ||
		countOf(t, base, token, "history", map[string]any{"itemids": []string{id}, "history": 3}) != 1 {
		t.Errorf("the item changed after the refused calls: %s", js(it))
	}
}
