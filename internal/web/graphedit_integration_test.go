package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

const graphName = `<b>CPU</b> & "memory"`

// TestIntegrationBrowserGraphEditor drives /config/graphs and
// /config/templatedashboards in headless Chromium at 1400×900 and
// checks every step through the API: a graph of two items (colours,
// functions, draw styles, the right Y axis, fixed Y min and max) is
// created with its preview drawn from the items' values, edited,
// refused as a duplicate with the API's error beside the name (nothing
// saved), cloned with its items and deleted; a template's dashboard is
// created, given a page's widget on the template's item through the
// dashboard editor, cloned with its widgets and deleted. A User is
// refused the pages; a read-only Admin sees no edit control and the
// API refuses the change.
func TestIntegrationBrowserGraphEditor(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	_, base, password := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "gr-host", Groups: []string{"Linux"}}}})
	token := apiLogin(t, base, password)
	hostID := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "filter": map[string]any{"host": "gr-host"}})["hostid"].(string)
	linux := getOne(t, base, token, "hostgroup", map[string]any{"output": []string{"groupid"}, "filter": map[string]any{"name": "Linux"}})["groupid"].(string)
	var made struct{ ItemIDs []string }
	json.Unmarshal(apiCall(t, base, token, "item.create", []map[string]any{
		{"hostid": hostID, "name": "CPU load", "key_": "cpu.load", "type": 2, "value_type": 0, "units": "%"},
		{"hostid": hostID, "name": "Memory used", "key_": "mem.used", "type": 2, "value_type": 3, "units": "B"}}), &made)
	cpu, mem := made.ItemIDs[0], made.ItemIDs[1]
	now := time.Now().Unix()
	var vals []map[string]any
	for i := int64(0); i < 20; i++ {
		vals = append(vals, map[string]any{"itemid": cpu, "value": fmt.Sprint(10 + i%7), "clock": now - 1800 + i*60},
			map[string]any{"itemid": mem, "value": fmt.Sprint((1 + i%3) << 30), "clock": now - 1800 + i*60})
	}
	apiCall(t, base, token, "history.push", vals)

	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)
	page := base + "/config/graphs?hostid=" + hostID
	run(t, ctx, "new graph", chromedp.Navigate(page), chromedp.WaitVisible(`#graph-create`, chromedp.ByQuery),
		chromedp.Click(`#graph-create`, chromedp.ByQuery), chromedp.WaitVisible(`#graph-edit`, chromedp.ByQuery),
		setJS(`#graph-name`, graphName), setJS(`#graph-ymin-type`, "1"), setJS(`#graph-yaxismin`, "0"), setJS(`#graph-ymax-type`, "1"), setJS(`#graph-yaxismax`, "100"),
		chromedp.Click(`#graph-gitems-add`, chromedp.ByQuery), chromedp.Click(`#graph-gitems-add`, chromedp.ByQuery),
		setJS(`.graph-gitems-row:nth-child(1) .gitem-item`, cpu), setJS(`.graph-gitems-row:nth-child(1) .gitem-color`, "FF0000"),
		setJS(`.graph-gitems-row:nth-child(1) .gitem-calc`, "4"),
		setJS(`.graph-gitems-row:nth-child(2) .gitem-item`, mem), setJS(`.graph-gitems-row:nth-child(2) .gitem-color`, "0000FF"),
		setJS(`.graph-gitems-row:nth-child(2) .gitem-draw`, "2"), setJS(`.graph-gitems-row:nth-child(2) .gitem-side`, "1"),
		clickJS(`document.querySelector('#graph-tabs [data-tab="Preview"]')`), chromedp.Click(`#graph-preview-draw`, chromedp.ByQuery),
		pollJS(`document.querySelector('#graph-preview').dataset.state === 'ready' && !!document.querySelector('#graph-preview canvas')`))
	var note string
	run(t, ctx, "preview note", chromedp.Evaluate(`document.querySelector('#graph-preview-note').textContent`, &note))
	if !strings.Contains(note, "2 item(s)") {
		t.Errorf("preview note %q", note)
	}
	shot1400(t, ctx, sh, "config-graph-form")
	run(t, ctx, "create the graph", chromedp.Click(`#graph-save`, chromedp.ByQuery), pollJS(savedOr("graph", graphName)))
	gParams := map[string]any{"output": "extend", "selectGraphItems": "extend", "hostids": hostID, "filter": map[string]any{"name": graphName}}
	g := getOne(t, base, token, "graph", gParams)
	gi := js(g["gitems"])
	if g["ymin_type"] != "1" || g["ymax_type"] != "1" || !strings.HasPrefix(fmt.Sprint(g["yaxismax"]), "100") ||
		!strings.Contains(gi, `"FF0000"`) || !strings.Contains(gi, `"calc_fnc":"4"`) || !strings.Contains(gi, `"yaxisside":"1"`) || !strings.Contains(gi, `"drawtype":"2"`) {
		t.Fatalf("graph made by the form: %v", g)
	}
	run(t, ctx, "edit the graph", clickJS(rowNamed("graph", graphName)),
		pollJS(`document.querySelectorAll('.graph-gitems-row').length === 2`), setJS(`#graph-height`, "300"), setJS(`#graph-graphtype`, "1"),
		setJS(`.graph-gitems-row:nth-child(1) .gitem-draw`, "1"), chromedp.Click(`#graph-save`, chromedp.ByQuery), pollJS(`document.querySelector('#graph-form').hidden`))
	if g = getOne(t, base, token, "graph", gParams); g["height"] != "300" || g["graphtype"] != "1" || !strings.Contains(js(g["gitems"]), `"drawtype":"1"`) {
		t.Fatalf("graph after the edit: %v", g)
	}
	shot1400(t, ctx, sh, "config-graphs")
	// A duplicate: the API's error beside the name, nothing saved.
	apiCall(t, base, token, "graph.create", map[string]any{"name": "gr taken", "gitems": []map[string]any{{"itemid": cpu, "color": "00AA00"}}})
	run(t, ctx, "a refused edit", clickJS(rowNamed("graph", graphName)), pollJS(`document.querySelectorAll('.graph-gitems-row').length === 2`),
		setJS(`#graph-name`, "gr taken"), setJS(`#graph-height`, "150"), chromedp.Click(`#graph-save`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#graph-error').hidden`), pollJS(fieldError("graph-name", "gr taken")))
	if g = getOne(t, base, token, "graph", gParams); g["height"] != "300" {
		t.Fatalf("a refused edit saved something: %v", g)
	}
	run(t, ctx, "clone the graph", setJS(`#graph-name`, graphName), chromedp.Click(`#graph-clone`, chromedp.ByQuery),
		pollJS(`(document.querySelector('#graph-name') || {}).value.endsWith('(copy)')`), chromedp.Click(`#graph-save`, chromedp.ByQuery),
		pollJS(savedOr("graph", graphName+" (copy)")))
	cp := getOne(t, base, token, "graph", map[string]any{"output": "extend", "selectGraphItems": "extend", "hostids": hostID, "filter": map[string]any{"name": graphName + " (copy)"}})
	if !strings.Contains(js(cp["gitems"]), `"0000FF"`) || cp["height"] != "150" { // the form's values when Clone was pressed
		t.Fatalf("clone: %v", cp)
	}
	run(t, ctx, "delete the clone", deleteThroughForm("graph", graphName+" (copy)"))
	run(t, ctx, "mass delete", massDelete("graph", g["graphid"].(string), graphName))
	if n := countOf(t, base, token, "graph", map[string]any{"hostids": hostID}); n != 1 {
		t.Fatalf("%d graphs left, want 1 (gr taken)", n)
	}

	// A template's dashboard: create, a widget through the editor,
	// clone, delete.
	var tpl struct{ TemplateIDs []string }
	json.Unmarshal(apiCall(t, base, token, "template.create", map[string]any{"host": "gr-tpl", "groups": []map[string]string{{"groupid": linux}}}), &tpl)
	tid := tpl.TemplateIDs[0]
	var ti struct{ ItemIDs []string }
	json.Unmarshal(apiCall(t, base, token, "item.create", map[string]any{"hostid": tid, "name": "Template load", "key_": "tpl.load", "type": 2, "value_type": 0}), &ti)
	dashName := `<i>Overview</i> "tpl"`
	tdash := base + "/config/templatedashboards?templateid=" + tid
	run(t, ctx, "new template dashboard", chromedp.Navigate(base+"/config/templates"),
		pollJS(fmt.Sprintf(`!!document.querySelector('.template-row[data-id="%s"]')`, tid)), chromedp.Navigate(tdash),
		chromedp.WaitVisible(`#tdash-create`, chromedp.ByQuery), chromedp.Click(`#tdash-create`, chromedp.ByQuery),
		chromedp.WaitVisible(`#tdash-edit`, chromedp.ByQuery), setJS(`#tdash-name`, dashName), setJS(`#tdash-display-period`, "60"),
		chromedp.Click(`#tdash-save`, chromedp.ByQuery), pollJS(savedOr("tdash", dashName)))
	dParams := map[string]any{"output": "extend", "selectPages": "extend", "templateids": tid, "filter": map[string]any{"name": dashName}}
	d := getOne(t, base, token, "templatedashboard", dParams)
	if d["display_period"] != "60" {
		t.Fatalf("template dashboard: %v", d)
	}
	run(t, ctx, "a widget on the template's item", clickJS(`document.querySelector('.tdash-open')`),
		chromedp.WaitVisible(`#dashboard-edit`, chromedp.ByQuery), chromedp.Click(`#dashboard-edit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#widget-add`, chromedp.ByQuery), chromedp.Click(`#widget-add`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-edit`, chromedp.ByQuery),
		pollJS(`![...document.querySelectorAll('#widget-type option')].some((o) => o.value === 'problems')`),
		setJS(`#widget-type`, "item"), pollJS(fmt.Sprintf(`!!document.querySelector('#widget-itemid option[value="%s"]')`, ti.ItemIDs[0])),
		setJS(`#widget-itemid`, ti.ItemIDs[0]), setJS(`#widget-name`, "Load"), chromedp.Click(`#widget-apply`, chromedp.ByQuery),
		chromedp.Click(`#dashboard-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#dashboard-edit')`))
	shot1400(t, ctx, sh, "config-template-dashboard")
	if d = getOne(t, base, token, "templatedashboard", dParams); !strings.Contains(js(d["pages"]), `"value":"`+ti.ItemIDs[0]+`"`) {
		t.Fatalf("template dashboard after the editor: %v", d)
	}
	run(t, ctx, "clone the dashboard", clickJS(`document.querySelector('#dashboard-back')`), pollJS(rowNamed("tdash", dashName)),
		clickJS(rowNamed("tdash", dashName)), pollJS(`(document.querySelector('#tdash-name') || {}).value !== ''`),
		chromedp.Click(`#tdash-clone`, chromedp.ByQuery), pollJS(`(document.querySelector('#tdash-name') || {}).value.endsWith('(copy)')`),
		chromedp.Click(`#tdash-save`, chromedp.ByQuery), pollJS(savedOr("tdash", dashName+" (copy)")))
	dc := getOne(t, base, token, "templatedashboard", map[string]any{"output": "extend", "selectPages": "extend", "templateids": tid, "filter": map[string]any{"name": dashName + " (copy)"}})
	if !strings.Contains(js(dc["pages"]), ti.ItemIDs[0]) {
		t.Fatalf("clone of the template dashboard: %v", dc)
	}
	run(t, ctx, "delete the clone", deleteThroughForm("tdash", dashName+" (copy)"))
	if n := countOf(t, base, token, "templatedashboard", map[string]any{"templateids": tid}); n != 1 {
		t.Fatalf("%d template dashboards, want 1", n)
	}

	// A User is refused the pages; a read-only Admin sees no edit control.
	apiCall(t, base, token, "user.create", map[string]any{"username": "gr-user", "passwd": "Zx9!long-passw0rd", "roleid": "1", "usrgrps": []map[string]string{{"usrgrpid": getOne(t, base, token, "usergroup", map[string]any{"output": []string{"usrgrpid"}, "filter": map[string]any{"name": "Guests"}})["usrgrpid"].(string)}}})
	var us string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "gr-user", "password": "Zx9!long-passw0rd"}), &us)
	for _, p := range []string{"/config/graphs", "/config/templatedashboards"} {
		if st := pageStatus(t, base, us, p); st != http.StatusForbidden {
			t.Errorf("a User opening %s: %d, want 403", p, st)
		}
	}
	var ug struct{ UsrgrpIDs []string }
	json.Unmarshal(apiCall(t, base, token, "usergroup.create", map[string]any{"name": "gr readers", "rights": []map[string]any{{"id": linux, "permission": 2}}}), &ug)
	apiCall(t, base, token, "user.create", map[string]any{"username": "gr-reader", "passwd": "Zx9!long-passw0rd", "roleid": "2", "usrgrps": []map[string]string{{"usrgrpid": ug.UsrgrpIDs[0]}}})
	var reader string
	json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "gr-reader", "password": "Zx9!long-passw0rd"}), &reader)
	taken := getOne(t, base, token, "graph", map[string]any{"output": []string{"graphid"}, "filter": map[string]any{"name": "gr taken"}})["graphid"]
	if e := apiTry(t, base, reader, "graph.update", map[string]any{"graphid": taken, "height": 120}); e == "" {
		t.Error("a read-only Admin's graph.update was accepted")
	}
	if e := apiTry(t, base, reader, "templatedashboard.update", map[string]any{"dashboardid": d["dashboardid"], "name": "x"}); e == "" {
		t.Error("a read-only Admin's templatedashboard.update was accepted")
	}
	rctx, _ := browser(t)
	loginAs(t, rctx, base, "gr-reader", "Zx9!long-passw0rd")
	run(t, rctx, "read-only graphs", chromedp.Navigate(page), chromedp.WaitVisible(`#graph-list .graph-row`, chromedp.ByQuery),
		pollJS(`document.querySelectorAll('.graph-row .row-check').length === 0`), pollJS(`document.querySelector('#graph-mass').hidden`),
		clickJS(rowNamed("graph", "gr taken")), pollJS(`document.querySelectorAll('.graph-gitems-row').length === 1`),
		pollJS(`!document.querySelector('#graph-save') && document.querySelector('#graph-name').disabled`),
		chromedp.Navigate(tdash), chromedp.WaitVisible(`#tdash-list .tdash-row`, chromedp.ByQuery),
		pollJS(`document.querySelectorAll('.tdash-row .row-check').length === 0`),
		clickJS(`document.querySelector('.tdash-open')`), chromedp.WaitVisible(`#dashboard-grid .widget`, chromedp.ByQuery),
		pollJS(`!document.querySelector('#dashboard-edit')`))

	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img, main b, main i').length`, &injected))
	if injected != 0 {
		t.Errorf("markup from names became elements (%d)", injected)
	}
}
