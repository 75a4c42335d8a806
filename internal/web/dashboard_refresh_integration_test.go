package web_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestIntegrationDashboardRefresh opens a 16-widget dashboard (every
// type the benchmark's 12-widget dashboard has, and system information
// and URL) whose widgets refresh every 10 s (rf_rate) and records what the page sends
// over its next refresh: one POST /ui/api per widget that reads data
// (several calls go as one JSON-RPC batch), none for the clock and the
// URL, and no page load. The methods are those `peregrine bench
// ui-dashboard` sends for Peregrine (internal/bench/uidash_web.go,
// peregrineWidgetCalls): if this test changes, that function changes
// with it.
func TestIntegrationDashboardRefresh(t *testing.T) {
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "dash-01", Groups: []string{"Dash"},
		Items: []catalog.ItemSpec{{Key: "cpu", Name: "CPU", ValueType: "float"}}}}}
	_, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	var items []struct{ ItemID string }
	json.Unmarshal(apiCall(t, base, token, "item.get", map[string]any{"output": []string{"itemid"}, "filter": map[string]any{"key_": "cpu"}}), &items)
	var groups []struct{ GroupID string }
	json.Unmarshal(apiCall(t, base, token, "hostgroup.get", map[string]any{"output": []string{"groupid"}, "filter": map[string]any{"name": "Dash"}}), &groups)
	if len(items) != 1 || len(groups) != 1 {
		t.Fatalf("items %v, groups %v", items, groups)
	}
	item := map[string]any{"type": 4, "name": "itemid", "value": items[0].ItemID}
	group := map[string]any{"type": 2, "name": "groupids", "value": groups[0].GroupID}
	rf := map[string]any{"type": 0, "name": "rf_rate", "value": "10"}
	specs := []struct {
		typ    string
		fields []map[string]any
	}{
		{"graph", []map[string]any{item}}, {"graph", []map[string]any{item}}, {"item", []map[string]any{item}}, {"item", []map[string]any{item}},
		{"plaintext", []map[string]any{{"type": 4, "name": "itemids", "value": items[0].ItemID}}},
		{"problems", []map[string]any{group}}, {"problemsbysv", []map[string]any{group}}, {"hostavail", []map[string]any{group}},
		{"trigover", []map[string]any{group}}, {"systeminfo", nil}, {"clock", nil},
		{"url", []map[string]any{{"type": 1, "name": "url", "value": "http://127.0.0.1:1/"}}},
	}
	// Problem hosts, top hosts (two item columns) and data overview,
	// with the fields 6.0 stores (hostWidgetFields).
	hw := hostWidgetFields(groups[0].GroupID, groups[0].GroupID)
	for _, typ := range []string{"problemhosts", "tophosts", "dataover"} {
		specs = append(specs, struct {
			typ    string
			fields []map[string]any
		}{typ, hw[typ]})
	}
	var sla struct{ SLAIDs []string }
	json.Unmarshal(apiCall(t, base, token, "sla.create", map[string]any{"name": "gold", "slo": "99.5", "period": 0, "timezone": "UTC",
		"effective_date": 0, "service_tags": []map[string]any{{"tag": "team", "value": "web"}}}), &sla)
	if len(sla.SLAIDs) != 1 {
		t.Fatalf("sla.create: %v", sla)
	}
	specs = append(specs, struct {
		typ    string
		fields []map[string]any
	}{"slareport", []map[string]any{{"type": 10, "name": "slaid", "value": sla.SLAIDs[0]}}})
	var ws []map[string]any
	for i, s := range specs {
		ws = append(ws, map[string]any{"type": s.typ, "x": (i % 3) * 8, "y": (i / 3) * 4, "width": 8, "height": 4, "fields": append(s.fields, rf)})
	}
	var created struct{ DashboardIDs []string }
	json.Unmarshal(apiCall(t, base, token, "dashboard.create", map[string]any{"name": "wall", "pages": []map[string]any{{"widgets": ws}}}), &created)

	ctx, _ := browser(t)
	login(t, ctx, base, password)
	var mu sync.Mutex
	var calls []string // one entry per /ui/api request: its methods
	documents := 0
	chromedp.ListenTarget(ctx, func(ev any) {
		e, ok := ev.(*network.EventRequestWillBeSent)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if e.Type == network.ResourceTypeDocument {
			documents++
		}
		if !strings.HasSuffix(e.Request.URL, "/ui/api") || len(e.Request.PostDataEntries) == 0 {
			return
		}
		var body string
		for _, p := range e.Request.PostDataEntries {
			body += p.Bytes // base64 in the protocol
		}
		calls = append(calls, methodsOf(t, body))
	})
	run(t, ctx, "open the dashboard", network.Enable(), chromedp.Navigate(base+"/dashboards?id="+created.DashboardIDs[0]),
		chromedp.WaitVisible(`.widget-systeminfo`, chromedp.ByQuery), chromedp.WaitVisible(`.widget-hostavail`, chromedp.ByQuery),
		chromedp.WaitVisible(`.widget-bysv`, chromedp.ByQuery), chromedp.WaitVisible(`.widget-item`, chromedp.ByQuery),
		chromedp.WaitVisible(`.widget-problemhosts`, chromedp.ByQuery), chromedp.WaitVisible(`.widget[data-type=tophosts] .widget-body > *`, chromedp.ByQuery),
		chromedp.WaitVisible(`.widget-dataover`, chromedp.ByQuery), chromedp.WaitVisible(`.widget[data-type=slareport] .widget-body > *`, chromedp.ByQuery))
	// The first draws are done (the item widgets read their value type
	// once then); what follows is one refresh of each.
	time.Sleep(2 * time.Second)
	mu.Lock()
	calls, documents = nil, 0
	mu.Unlock()
	want := []string{"apiinfo.version,host.get,item.get,trigger.get", "host.get", "host.get,item.get,item.get", "hostgroup.get,host.get,trigger.get,problem.get",
		"item.get", "item.get", "item.get,history.get", "item.get,history.get", "item.get,history.get", "item.get,trigger.get",
		"problem.get", "problem.get,problem.get,problem.get,problem.get,problem.get,problem.get", "sla.get,sla.getsli,service.get", "trigger.get"}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(calls)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	got := slices.Clone(calls)
	docs := documents
	mu.Unlock()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("one refresh of the dashboard sent %d requests:\n%s\nwant one per widget reading data:\n%s", len(got), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if docs != 0 {
		t.Errorf("the dashboard loaded %d documents while refreshing: a reload", docs)
	}
}

// methodsOf lists the methods of a JSON-RPC request body (base64, as
// DevTools hands post data), comma-separated.
func methodsOf(t *testing.T, b64 string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Errorf("post data: %v", err)
		return ""
	}
	type req struct{ Method string }
	var many []req
	if json.Unmarshal(raw, &many) != nil {
		var one req
		json.Unmarshal(raw, &one)
		many = []req{one}
	}
	var out []string
	for _, r := range many {
		out = append(out, r.Method)
	}
	return strings.Join(out, ",")
}
