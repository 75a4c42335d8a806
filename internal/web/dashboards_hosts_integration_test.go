package web_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// hostWidgetFields are the fields of the problem hosts, top hosts and
// data overview widgets as Zabbix 6.0 stores them: recorded from
// 6.0.14's dashboard.get after a dashboard.create with these names
// (field type 0 integer, 1 string, 2 host group; a top hosts column's
// fields are columns.<field>.<N>, data 1 item value, 2 host name, 3
// text; order 2 top N, 3 bottom N; tags are tags.tag.N,
// tags.operator.N, tags.value.N; style 0 hosts on the left, 1 on top).
func hostWidgetFields(group, otherGroup string) map[string][]map[string]any {
	f := func(typ int, name string, value any) map[string]any {
		return map[string]any{"type": typ, "name": name, "value": value}
	}
	return map[string][]map[string]any{
		"problemhosts": {f(2, "groupids", group), f(2, "groupids", otherGroup), f(0, "show_suppressed", 1), f(0, "hide_empty_groups", 0), f(0, "ext_ack", 0)},
		"tophosts": {f(1, "columns.name.0", "Host"), f(0, "columns.data.0", 2), f(1, "columns.name.1", "CPU <b>"), f(0, "columns.data.1", 1),
			f(1, "columns.item.1", "<i>CPU</i> load"), f(1, "columns.name.2", "State"), f(0, "columns.data.2", 1), f(1, "columns.item.2", "State"),
			f(1, "columns.name.3", "Note"), f(0, "columns.data.3", 3), f(1, "columns.text.3", "<img src=x onerror=alert(1)>"),
			f(0, "order", 2), f(0, "column", 1), f(0, "count", 2)},
		"dataover": {f(2, "groupids", group), f(0, "style", 0)},
	}
}

// TestIntegrationBrowserDashboardHostWidgets draws the problem hosts,
// top hosts and data overview widgets of a dashboard made through the
// API with 6.0's fields, and checks each one's cells: counts by host
// group with the worst severity's colour, hosts ordered by an item's
// value with a value map's text, items by hosts with units; and the SLA
// report of an SLA's services and of one service. Names and
// texts carry markup: it must stay text. The screenshot (1400×900) is
// docs/screenshots/dashboard-host-widgets.png when
// PEREGRINE_SCREENSHOTS is docs/screenshots.
func TestIntegrationBrowserDashboardHostWidgets(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	items := []catalog.ItemSpec{{Key: "cpu", Name: "<i>CPU</i> load", ValueType: "float", Units: "%"}, {Key: "state", Name: "State", ValueType: "unsigned"}}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "web-01", Groups: []string{"Web"}, Items: items, Triggers: []catalog.TriggerSpec{{Name: "CPU high", Expression: "last(/web-01/cpu)>90", Priority: "HIGH"}}},
		{Host: "web-02", Groups: []string{"Web"}, Items: items},
		{Host: "db-01", Groups: []string{"DB"}, Items: items, Triggers: []catalog.TriggerSpec{{Name: "DB CPU", Expression: "last(/db-01/cpu)>10", Priority: "WARNING"}}},
	}}
	s, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	snap := s.Catalog.Snapshot()
	var vm struct{ ValueMapIDs []string }
	json.Unmarshal(apiCall(t, base, token, "valuemap.create", map[string]any{"hostid": snap.Host("web-01").ID, "name": "Up/down",
		"mappings": []map[string]any{{"value": "1", "newvalue": "Up"}, {"value": "0", "newvalue": "Down"}}}), &vm)
	apiCall(t, base, token, "item.update", map[string]any{"itemid": snap.Lookup("web-01", "state").ID, "valuemapid": vm.ValueMapIDs[0]})
	for _, v := range [][3]string{{"web-01", "cpu", "95.5"}, {"web-02", "cpu", "20"}, {"db-01", "cpu", "50"}, {"web-01", "state", "1"}, {"web-02", "state", "0"}} {
		if r := testutil.RunSender(t, s.TrapperAddr().String(), "-s", v[0], "-k", v[1], "-o", v[2]); r.Processed != 1 {
			t.Fatalf("zabbix_sender %v: %+v", v, r)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ps []any
		json.Unmarshal(apiCall(t, base, token, "problem.get", map[string]any{"output": []string{"eventid"}}), &ps)
		if len(ps) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("problems %v after 10 s, want 2", ps)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var groups []struct{ GroupID, Name string }
	json.Unmarshal(apiCall(t, base, token, "hostgroup.get", map[string]any{"output": []string{"groupid", "name"}, "filter": map[string]any{"name": []string{"Web", "DB"}}}), &groups)
	gid := map[string]string{}
	for _, g := range groups {
		gid[g.Name] = g.GroupID
	}
	fields := hostWidgetFields(gid["Web"], gid["DB"])
	var ws []map[string]any
	for i, typ := range []string{"problemhosts", "tophosts", "dataover"} {
		ws = append(ws, map[string]any{"type": typ, "x": i * 8, "y": 0, "width": 8, "height": 5, "fields": fields[typ]})
	}
	// An SLA report of all its services and one of a service, with the
	// fields 6.0 stores (slaid field type 10, serviceid 9).
	var svc struct{ ServiceIDs []string }
	json.Unmarshal(apiCall(t, base, token, "service.create", map[string]any{"name": "<b>shop</b>", "algorithm": 1, "sortorder": 0,
		"tags": []map[string]any{{"tag": "team", "value": "web"}}}), &svc)
	var sla struct{ SLAIDs []string }
	json.Unmarshal(apiCall(t, base, token, "sla.create", map[string]any{"name": "<i>gold</i>", "slo": "99.5", "period": 0, "timezone": "UTC",
		"effective_date": time.Now().Unix() - 5*86400, "service_tags": []map[string]any{{"tag": "team", "value": "web"}}}), &sla)
	if len(svc.ServiceIDs) != 1 || len(sla.SLAIDs) != 1 {
		t.Fatalf("service %v, SLA %v", svc, sla)
	}
	slaField := map[string]any{"type": 10, "name": "slaid", "value": sla.SLAIDs[0]}
	periods := map[string]any{"type": 0, "name": "show_periods", "value": 3}
	ws = append(ws, map[string]any{"type": "slareport", "x": 0, "y": 5, "width": 12, "height": 4, "fields": []map[string]any{slaField, periods}},
		map[string]any{"type": "slareport", "x": 12, "y": 5, "width": 12, "height": 4, "fields": []map[string]any{slaField, periods,
			{"type": 9, "name": "serviceid", "value": svc.ServiceIDs[0]}}})
	var created struct{ DashboardIDs []string }
	json.Unmarshal(apiCall(t, base, token, "dashboard.create", map[string]any{"name": "hosts", "pages": []map[string]any{{"widgets": ws}}}), &created)
	if len(created.DashboardIDs) != 1 {
		t.Fatal("dashboard.create made no dashboard")
	}

	ctx, sh := browser(t)
	watchPage(t, ctx)
	login(t, ctx, base, password)
	run(t, ctx, "open the dashboard", chromedp.EmulateViewport(1400, 900), chromedp.Navigate(base+"/dashboards?id="+created.DashboardIDs[0]),
		chromedp.WaitVisible(`.widget-problemhosts`, chromedp.ByQuery), chromedp.WaitVisible(`.widget-tophosts`, chromedp.ByQuery),
		chromedp.WaitVisible(`.widget-dataover`, chromedp.ByQuery), chromedp.WaitVisible(`.widget-slareport`, chromedp.ByQuery))
	rows := func(sel string) []string {
		t.Helper()
		var out []string
		run(t, ctx, "read "+sel, chromedp.Evaluate(`[...document.querySelectorAll(`+"`"+sel+"`"+`)].map((r) => [...r.children].map((c) => c.textContent + (c.className.includes('sev-') ? '{' + c.className.match(/sev-(\d)/)[1] + '}' : '')).join('|'))`, &out))
		return out
	}
	t.Run("problemhosts", func(t *testing.T) {
		got := strings.Join(rows(`.widget-problemhosts tr`), "\n")
		want := "Host group|Without problems|With problems|Total\nDB|0|1{2}|1\nWeb|1|1{4}|2"
		if got != want {
			t.Errorf("problem hosts:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("tophosts", func(t *testing.T) {
		got := strings.Join(rows(`.widget-tophosts tr`), "\n")
		want := "Host|CPU <b>|State|Note\nweb-01|95.5 %|Up (1)|<img src=x onerror=alert(1)>\ndb-01|50 %||<img src=x onerror=alert(1)>"
		if got != want {
			t.Errorf("top hosts:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("dataover", func(t *testing.T) {
		got := strings.Join(rows(`.widget-dataover tr`), "\n")
		want := "Hosts|<i>CPU</i> load|State\nweb-01|95.5 %{4}|Up (1)\nweb-02|20 %|0"
		if got != want {
			t.Errorf("data overview:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("slareport", func(t *testing.T) {
		var tables [][]string
		run(t, ctx, "read the SLA reports", chromedp.Poll(`document.querySelectorAll('.widget-slareport').length === 2`, nil, chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Evaluate(`[...document.querySelectorAll('.widget-slareport')].map((tb) => [...tb.rows].map((r) => [...r.cells].map((c) => c.textContent).join('|')))`, &tables))
		sli := regexp.MustCompile(`^(N/A|\d+\.\d{4}%)$`)
		day := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
		all, one := tables[0], tables[1]
		if len(all) != 2 || !strings.HasPrefix(all[0], "Service|SLO|") || len(strings.Split(all[0], "|")) != 5 || !strings.HasPrefix(all[1], "<b>shop</b>|99.5%|") {
			t.Errorf("SLA report of all services: %q", all)
		} else {
			for _, c := range strings.Split(all[1], "|")[2:] {
				if !sli.MatchString(c) {
					t.Errorf("SLI cell %q", c)
				}
			}
		}
		if len(one) != 4 || one[0] != "Reporting period|SLO|SLI|Uptime|Downtime|Error budget|Excluded downtimes" {
			t.Errorf("SLA report of a service: %q", one)
		} else {
			for _, r := range one[1:] {
				c := strings.Split(r, "|")
				if !day.MatchString(c[0]) || c[1] != "99.5%" || !sli.MatchString(c[2]) {
					t.Errorf("SLA report row %q", r)
				}
			}
		}
	})
	var markup int
	run(t, ctx, "no markup from names", chromedp.Evaluate(`document.querySelectorAll('.widget img, .widget i, .widget b').length`, &markup))
	if markup != 0 {
		t.Errorf("%d elements made from names or texts", markup)
	}
	sh.take(t, ctx, "dashboard-host-widgets")

	// Through the widget form: a new top hosts widget with two columns,
	// and the API's top hosts widget applied unchanged (its columns and
	// other fields kept as they were).
	t.Run("tophosts form", func(t *testing.T) {
		dParams := map[string]any{"dashboardids": created.DashboardIDs, "selectPages": "extend"}
		tophosts := func(d map[string]any) []string {
			var out []string
			for _, w := range d["pages"].([]any)[0].(map[string]any)["widgets"].([]any) {
				if w := w.(map[string]any); w["type"] == "tophosts" {
					b, _ := json.Marshal(w["fields"])
					out = append(out, string(b))
				}
			}
			return out
		}
		before := tophosts(getOne(t, base, token, "dashboard", dParams))
		run(t, ctx, "add a top hosts widget", chromedp.Click(`#dashboard-edit`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-add`, chromedp.ByQuery),
			clickJS(`document.querySelector('.widget[data-type="tophosts"] .widget-edit')`), chromedp.WaitVisible(`#widget-edit`, chromedp.ByQuery),
			pollJS(`document.querySelector('#widget-columns-value-1').value === '<i>CPU</i> load'`), chromedp.Click(`#widget-apply`, chromedp.ByQuery),
			chromedp.Click(`#widget-add`, chromedp.ByQuery), chromedp.WaitVisible(`#widget-edit`, chromedp.ByQuery),
			setJS(`#widget-type`, "tophosts"), chromedp.WaitVisible(`#widget-columns-name-0`, chromedp.ByQuery),
			setJS(`#widget-columns-name-0`, "Host"), setJS(`#widget-columns-data-0`, "2"),
			setJS(`#widget-columns-name-1`, "Load"), setJS(`#widget-columns-value-1`, "<i>CPU</i> load"),
			setJS(`#widget-column`, "1"), setJS(`#widget-order`, "3"), setJS(`#widget-count`, "1"),
			chromedp.Click(`#widget-apply`, chromedp.ByQuery), chromedp.Click(`#dashboard-save`, chromedp.ByQuery),
			pollJS(`!!document.querySelector('#dashboard-edit')`),
			pollJS(`document.querySelectorAll('.widget-tophosts').length === 2`))
		after := tophosts(getOne(t, base, token, "dashboard", dParams))
		want := `[{"name":"columns.name.0","type":"1","value":"Host"},{"name":"columns.data.0","type":"0","value":"2"},` +
			`{"name":"columns.name.1","type":"1","value":"Load"},{"name":"columns.data.1","type":"0","value":"1"},{"name":"columns.item.1","type":"1","value":"\u003ci\u003eCPU\u003c/i\u003e load"},` +
			`{"name":"order","type":"0","value":"3"},{"name":"column","type":"0","value":"1"},{"name":"count","type":"0","value":"1"}]`
		if len(after) != 2 || !sameFields(after[0], before[0]) || !sameFields(after[1], want) {
			t.Errorf("top hosts widgets' fields after the form:\n%s\nwant the first as before:\n%s\nand the new one:\n%s", strings.Join(after, "\n"), before[0], want)
		}
		var last []string
		run(t, ctx, "the new widget", chromedp.Evaluate(`[...[...document.querySelectorAll('.widget-tophosts')].pop().rows].map((r) => r.textContent)`, &last))
		if strings.Join(last, "|") != "HostLoad|web-0220 %" {
			t.Errorf("new top hosts widget rows %q, want the bottom host by load", last)
		}
	})
}

// sameFields reports whether two JSON lists of widget fields hold the
// same fields, in any order.
func sameFields(a, b string) bool {
	var x, y []map[string]string
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil || len(x) != len(y) {
		return false
	}
	key := func(l []map[string]string) []string {
		var out []string
		for _, f := range l {
			out = append(out, f["name"]+"\x00"+f["type"]+"\x00"+f["value"])
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(x), key(y))
}
