package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// filterWidgetFields are widgets' severity and tag filters as Zabbix 6.0
// stores them: recorded from 6.0.14's dashboard.get after its own widget
// form saved each widget (zabbix.php?action=dashboard.update). Host
// groups, excluded groups and hosts are one field each (types 2, 3);
// severities one integer field "severities" per ticked severity; the
// tag filter evaltype (0 And/Or, stored only as 2 Or) with
// tags.tag.N (string), tags.operator.N (integer: 0 contains, 1 equals,
// 2 does not contain, 3 does not equal, 4 exists, 5 does not exist) and
// tags.value.N (string, stored empty for exists); options at their
// defaults (show 1, show_timeline 1, sort_triggers 4, show_lines 25,
// ext_ack 0, style 0, ...) are not stored. The top hosts widget's host
// tags are the same fields. One field 6.0's form would not store
// (problemsbysv's evaltype 0) is there as dashboard.create may send it:
// a form applied unchanged must keep it.
func filterWidgetFields(g1, g2, g3, host string) map[string][]map[string]any {
	f := func(typ int, name string, value any) map[string]any {
		return map[string]any{"type": typ, "name": name, "value": fmt.Sprint(value)}
	}
	return map[string][]map[string]any{
		"problemhosts": {f(2, "groupids", g1), f(1, "problem", "cpu"), f(0, "severities", 2), f(0, "severities", 4), f(0, "evaltype", 2),
			f(1, "tags.tag.0", "svc"), f(0, "tags.operator.0", 1), f(1, "tags.value.0", "web"),
			f(1, "tags.tag.1", "env"), f(0, "tags.operator.1", 4), f(1, "tags.value.1", ""), f(0, "show_suppressed", 1), f(0, "ext_ack", 2)},
		"problems": {f(0, "show", 3), f(2, "groupids", g1), f(2, "groupids", g2), f(2, "exclude_groupids", g3), f(3, "hostids", host),
			f(0, "severities", 0), f(0, "severities", 5), f(1, "tags.tag.0", "a"), f(0, "tags.operator.0", 0), f(1, "tags.value.0", "b"),
			f(0, "show_tags", 2), f(0, "tag_name_format", 1), f(1, "tag_priority", "x,y"), f(0, "show_opdata", 1),
			f(0, "unacknowledged", 1), f(0, "sort_triggers", 3), f(0, "show_lines", 30)},
		"trigover": {f(0, "show", 2), f(2, "groupids", g1), f(0, "evaltype", 2), f(1, "tags.tag.0", "a"), f(0, "tags.operator.0", 5),
			f(1, "tags.value.0", ""), f(0, "show_suppressed", 1), f(0, "style", 1)},
		"dataover":     {f(1, "tags.tag.0", "component"), f(0, "tags.operator.0", 1), f(1, "tags.value.0", "cpu")},
		"problemsbysv": {f(0, "severities", 3), f(0, "hide_empty_groups", 1), f(0, "evaltype", 0)},
		"tophosts": {f(1, "columns.name.0", "Host"), f(0, "columns.data.0", 2), f(0, "evaltype", 2),
			f(1, "tags.tag.0", "role"), f(0, "tags.operator.0", 1), f(1, "tags.value.0", "db")},
	}
}

// TestIntegrationBrowserWidgetFilters opens in headless Chromium a
// dashboard made through the API with Zabbix 6.0's severity and tag
// filter fields, applies each widget's form unchanged and saves: every
// widget keeps exactly its fields. Then a problems widget is made
// through the form with two severities and a tag filter: its fields are
// what 6.0's form stores for the same choices, and a problems by
// severity widget shows only the severities it filters on. A template
// dashboard imported with configuration.import round-trips through the
// template's dashboard editor the same way.
func TestIntegrationBrowserWidgetFilters(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "web-1", Groups: []string{"Web"}, Items: []catalog.ItemSpec{{Key: "load", Name: "Load", ValueType: "float"}}},
		{Host: "db-1", Groups: []string{"DB"}},
		{Host: "lab-1", Groups: []string{"Lab"}},
	}}
	_, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	gid := func(name string) string {
		return getOne(t, base, token, "hostgroup", map[string]any{"output": []string{"groupid"}, "filter": map[string]any{"name": name}})["groupid"].(string)
	}
	host := getOne(t, base, token, "host", map[string]any{"output": []string{"hostid"}, "filter": map[string]any{"host": "web-1"}})["hostid"].(string)
	fields := filterWidgetFields(gid("Web"), gid("DB"), gid("Lab"), host)
	types := []string{"problemhosts", "problems", "trigover", "dataover", "problemsbysv", "tophosts"}
	var widgets []map[string]any
	for i, typ := range types {
		widgets = append(widgets, map[string]any{"type": typ, "x": (i % 2) * 12, "y": (i / 2) * 4, "width": 12, "height": 4, "fields": fields[typ]})
	}
	var created struct{ DashboardIDs []string }
	json.Unmarshal(apiCall(t, base, token, "dashboard.create", map[string]any{"name": "filters", "pages": []any{map[string]any{"widgets": widgets}}}), &created)
	id := created.DashboardIDs[0]
	dParams := map[string]any{"dashboardids": []string{id}, "selectPages": "extend"}
	byType := func(api string, params map[string]any) map[string][]string {
		out := map[string][]string{}
		for _, w := range getOne(t, base, token, api, params)["pages"].([]any)[0].(map[string]any)["widgets"].([]any) {
			w := w.(map[string]any)
			b, _ := json.Marshal(w["fields"])
			out[w["type"].(string)] = append(out[w["type"].(string)], string(b))
		}
		return out
	}
	before := byType("dashboard", dParams)
	for _, typ := range types {
		want, _ := json.Marshal(asStored(fields[typ]))
		if len(before[typ]) != 1 || !sameFields(before[typ][0], string(want)) {
			t.Fatalf("%s as created: %v, want %s", typ, before[typ], want)
		}
	}

	ctx, sh := browser(t)
	login(t, ctx, base, password)
	// Each widget's form, applied unchanged, once the form has read its
	// host groups and hosts (their names replace the ids).
	run(t, ctx, "edit the dashboard", chromedp.Navigate(base+"/dashboards?id="+id), chromedp.WaitVisible(`#dashboard-edit`, chromedp.ByQuery),
		chromedp.Click(`#dashboard-edit`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-add`, chromedp.ByQuery))
	for _, typ := range types {
		run(t, ctx, typ+" form", clickJS(fmt.Sprintf(`document.querySelector('.widget[data-type="%s"] .widget-edit')`, typ)),
			chromedp.WaitVisible(`#widget-edit`, chromedp.ByQuery),
			pollJS(`[...document.querySelectorAll('#widget-edit select[multiple] option')].every((o) => !o.textContent.startsWith('#'))`))
		if typ == "problems" {
			shot1400(t, ctx, sh, "dashboard-widget-filters")
		}
		run(t, ctx, typ+" apply", chromedp.Click(`#widget-apply`, chromedp.ByQuery), pollJS(`document.querySelector('#widget-form').hidden`))
	}
	run(t, ctx, "save", chromedp.Click(`#dashboard-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#dashboard-edit')`))
	after := byType("dashboard", dParams)
	for _, typ := range types {
		if len(after[typ]) != 1 || !sameFields(after[typ][0], before[typ][0]) {
			t.Errorf("%s after its form: %v\nwant as before: %s", typ, after[typ], before[typ][0])
		}
	}
	// The severity filter: one card, Average.
	run(t, ctx, "problems by severity filtered", pollJS(`document.querySelectorAll('.widget-bysv .card').length === 1 && document.querySelector('.widget-bysv .card').textContent.endsWith('Average')`))

	// A new problems widget through the form: High and Disaster, Or,
	// tag svc equals "web", show problems; the widget's form shows the
	// choices again.
	run(t, ctx, "a filtered problems widget", chromedp.Click(`#dashboard-edit`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-add`, chromedp.ByQuery),
		clickJS(`document.querySelector('.widget[data-type="dataover"] .widget-remove')`),
		chromedp.Click(`#widget-add`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-edit`, chromedp.ByQuery),
		setJS(`#widget-type`, "problems"), chromedp.WaitVisible(`#widget-severities-4`, chromedp.ByQuery),
		setJS(`#widget-show`, "3"), setJS(`#widget-severities-4`, "1"), setJS(`#widget-severities-5`, "1"), setJS(`#widget-evaltype`, "2"),
		chromedp.Click(`#widget-tags-add`, chromedp.ByQuery), setJS(`.widget-tags-row input[data-key="tag"]`, "svc"),
		setJS(`.widget-tags-row select[data-key="operator"]`, "1"), setJS(`.widget-tags-row input[data-key="value"]`, `<b>web</b>`),
		chromedp.Click(`#widget-apply`, chromedp.ByQuery), chromedp.Click(`#dashboard-save`, chromedp.ByQuery),
		pollJS(`!!document.querySelector('#dashboard-edit')`), pollJS(`document.querySelectorAll('.widget[data-type="problems"]').length === 2`))
	after = byType("dashboard", dParams)
	want := `[{"type":"0","name":"show","value":"3"},{"type":"0","name":"severities","value":"4"},{"type":"0","name":"severities","value":"5"},` +
		`{"type":"0","name":"evaltype","value":"2"},{"type":"1","name":"tags.tag.0","value":"svc"},{"type":"0","name":"tags.operator.0","value":"1"},` +
		`{"type":"1","name":"tags.value.0","value":"\u003cb\u003eweb\u003c/b\u003e"}]`
	if len(after["problems"]) != 2 || !sameFields(after["problems"][1], want) || len(after["dataover"]) != 0 {
		t.Fatalf("after adding a problems widget through the form: %v\nwant the new one: %s", after, want)
	}
	var shown []bool
	run(t, ctx, "the new widget's form", chromedp.Click(`#dashboard-edit`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-add`, chromedp.ByQuery),
		clickJS(`[...document.querySelectorAll('.widget[data-type="problems"] .widget-edit')].pop()`), chromedp.WaitVisible(`#widget-edit`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('.widget-severities input')].map((b) => b.checked).concat([
			document.querySelector('#widget-evaltype').value === '2', document.querySelector('.widget-tags-row input[data-key="value"]').value === '<b>web</b>',
			document.querySelector('.widget-tags-row select[data-key="operator"]').value === '1'])`, &shown),
		chromedp.Click(`#dashboard-cancel`, chromedp.ByQuery))
	if js(shown) != `[false,false,false,false,true,true,true,true,true]` {
		t.Errorf("the form of the new widget shows %v", shown)
	}

	// A template's dashboard from configuration.import (6.0 allows only
	// clock, classic graph, graph prototype, item value, plain text and
	// URL widgets there: its import refuses PROBLEMS, recorded from
	// 6.0.14), applied unchanged in the template's dashboard editor.
	yaml := `zabbix_export:
  version: '6.0'
  groups:
    - uuid: 0f8d6f2b8c0a4d3e9b1a2c3d4e5f6a7b
      name: Templates/Widgets
  templates:
    - uuid: 1a8d6f2b8c0a4d3e9b1a2c3d4e5f6a7b
      template: Widget fields
      groups:
        - name: Templates/Widgets
      items:
        - uuid: 2b8d6f2b8c0a4d3e9b1a2c3d4e5f6a7b
          name: Log line
          key: log.line
          type: TRAP
          value_type: TEXT
      dashboards:
        - uuid: 3c8d6f2b8c0a4d3e9b1a2c3d4e5f6a7b
          name: Imported
          pages:
            - widgets:
                - type: PLAIN_TEXT
                  width: '12'
                  height: '5'
                  fields:
                    - type: INTEGER
                      name: show_lines
                      value: '7'
                    - type: INTEGER
                      name: style
                      value: '1'
                    - type: ITEM
                      name: itemids
                      value:
                        host: 'Widget fields'
                        key: log.line
`
	apiCall(t, base, token, "configuration.import", map[string]any{"format": "yaml", "source": yaml,
		"rules": map[string]any{"templates": map[string]any{"createMissing": true}, "items": map[string]any{"createMissing": true},
			"templateDashboards": map[string]any{"createMissing": true},
			"groups":             map[string]any{"createMissing": true}}})
	tid := getOne(t, base, token, "template", map[string]any{"output": []string{"templateid"}, "filter": map[string]any{"host": "Widget fields"}})["templateid"].(string)
	td := getOne(t, base, token, "templatedashboard", map[string]any{"output": []string{"dashboardid"}, "templateids": []string{tid}})["dashboardid"].(string)
	tParams := map[string]any{"dashboardids": []string{td}, "selectPages": "extend"}
	tBefore := byType("templatedashboard", tParams)
	if len(tBefore["plaintext"]) != 1 || !strings.Contains(tBefore["plaintext"][0], `"name":"itemids","type":"4"`) {
		t.Fatalf("imported template dashboard: %v", tBefore)
	}
	run(t, ctx, "template dashboard widget unchanged", chromedp.Navigate(fmt.Sprintf("%s/config/templatedashboards?templateid=%s&id=%s", base, tid, td)),
		chromedp.WaitVisible(`#dashboard-edit`, chromedp.ByQuery), chromedp.Click(`#dashboard-edit`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-add`, chromedp.ByQuery),
		clickJS(`document.querySelector('.widget[data-type="plaintext"] .widget-edit')`), chromedp.WaitVisible(`#widget-edit`, chromedp.ByQuery),
		pollJS(`[...document.querySelectorAll('#widget-itemids option')].some((o) => o.textContent === 'Log line' && o.selected)`),
		chromedp.Click(`#widget-apply`, chromedp.ByQuery), chromedp.Click(`#dashboard-save`, chromedp.ByQuery), pollJS(`!!document.querySelector('#dashboard-edit')`))
	if tAfter := byType("templatedashboard", tParams); len(tAfter["plaintext"]) != 1 || !sameFields(tAfter["plaintext"][0], tBefore["plaintext"][0]) {
		t.Errorf("template dashboard widget after its form: %v, want %v", tAfter["plaintext"], tBefore["plaintext"])
	}
}

// asStored is fields as get returns them: every member a string.
func asStored(fields []map[string]any) []map[string]string {
	out := make([]map[string]string, len(fields))
	for i, f := range fields {
		out[i] = map[string]string{"type": fmt.Sprint(f["type"]), "name": fmt.Sprint(f["name"]), "value": fmt.Sprint(f["value"])}
	}
	return out
}
