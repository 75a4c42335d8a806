package web_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationBrowserHostDashboards: the official "Linux by Zabbix
// agent" template (Debian's zabbix-frontend-php), imported as shipped
// but for shorter intervals, linked to a host polled from the real
// zabbix_agentd; the host's dashboards page, reached from the Hosts
// page, lists the template's two dashboards and draws them for the
// host: the "System load" widget shows the host's copies of the
// template graph's items with the agent's values, and the graph
// prototype widget of the file systems one of the graphs discovery
// made on the host. The screenshot (1400×900) is
// docs/screenshots/host-dashboard.png when PEREGRINE_SCREENSHOTS is
// docs/screenshots.
//
// Test overrides: discovery rules every 5 s, items and item prototypes
// every 10 s (the template's 1m to 1h would make the test long).
func TestIntegrationBrowserHostDashboards(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium and zabbix_agentd")
	}
	src := linuxTemplate(t)
	addr := testutil.StartAgentd(t)
	ip, port, _ := net.SplitHostPort(addr)
	_, base, password := startServer(t, catalog.Spec{})
	token := apiLogin(t, base, password)
	all := map[string]any{"createMissing": true, "updateExisting": true}
	apiCall(t, base, token, "configuration.import", map[string]any{"format": "yaml", "source": src, "rules": map[string]any{
		"groups": all, "templates": all, "items": all, "triggers": all, "graphs": all, "valueMaps": all,
		"templateLinkage": map[string]any{"createMissing": true}, "templateDashboards": all, "discoveryRules": all}})
	var tm []struct{ TemplateID string }
	json.Unmarshal(apiCall(t, base, token, "template.get", map[string]any{"filter": map[string]any{"host": "Linux by Zabbix agent"}, "output": []string{"templateid"}}), &tm)
	var g struct{ GroupIDs []string }
	json.Unmarshal(apiCall(t, base, token, "hostgroup.create", map[string]any{"name": "Linux hosts"}), &g)
	if len(tm) != 1 || len(g.GroupIDs) != 1 {
		t.Fatalf("template %+v, group %+v", tm, g)
	}
	var hc struct{ HostIDs []string }
	json.Unmarshal(apiCall(t, base, token, "host.create", map[string]any{"host": "web-linux", "name": "Linux <i>web</i> host",
		"groups": []any{map[string]any{"groupid": g.GroupIDs[0]}}, "templates": []any{map[string]any{"templateid": tm[0].TemplateID}},
		"interfaces": []any{map[string]any{"type": 1, "main": 1, "useip": 1, "ip": ip, "dns": "", "port": port}}}), &hc)
	hostID := hc.HostIDs[0]

	// The host's copy of "System load" and a discovered file-system
	// graph, once the agent's values are in (two of each item at least).
	var load hdGraph
	var fsGraphs []hdGraph
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var gs []hdGraph
		json.Unmarshal(apiCall(t, base, token, "graph.get", map[string]any{"hostids": []string{hostID}, "output": []string{"graphid", "name"},
			"selectGraphItems": []string{"itemid"}, "sortfield": "name"}), &gs)
		fsGraphs = fsGraphs[:0]
		for _, x := range gs {
			switch {
			case x.Name == "System load":
				load = x
			case strings.HasSuffix(x.Name, ": Disk space usage"):
				fsGraphs = append(fsGraphs, x)
			}
		}
		// Every item with a value, the load averages with a few (the
		// number of CPUs is kept once a day: discard unchanged).
		if load.GraphID != "" && len(fsGraphs) > 0 && valuesIn(t, base, token, load, 1) && valuesIn(t, base, token, hdGraph{GItems: load.GItems[:1]}, 3) &&
			valuesIn(t, base, token, fsGraphs[0], 1) {
			break
		}
		if time.Now().After(deadline) {
			var its []map[string]string
			if load.GraphID != "" {
				json.Unmarshal(apiCall(t, base, token, "item.get", map[string]any{"graphids": []string{load.GraphID},
					"output": []string{"key_", "delay", "state", "error", "lastclock"}}), &its)
			}
			t.Fatalf("no data after 4 minutes: System load %+v (%v), file-system graphs %d", load, its, len(fsGraphs))
		}
		time.Sleep(2 * time.Second)
	}
	loadIDs := make([]string, len(load.GItems))
	for i, gi := range load.GItems {
		loadIDs[i] = gi.ItemID
	}
	fsIDs := map[string]bool{}
	for _, x := range fsGraphs {
		ids := make([]string, len(x.GItems))
		for i, gi := range x.GItems {
			ids[i] = gi.ItemID
		}
		fsIDs[strings.Join(ids, ",")] = true
	}

	ctx, sh := browser(t)
	login(t, ctx, base, password)
	var tabs []string
	run(t, ctx, "open the host's dashboards from the Hosts page",
		chromedp.Navigate(base+"/hosts"),
		chromedp.WaitVisible(`a.host-dashboards`, chromedp.ByQuery),
		chromedp.Click(`a.host-dashboards`, chromedp.ByQuery),
		chromedp.WaitVisible(`#hostdash-tabs .page-tab`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#hostdash-tabs .page-tab')].map((b) => b.textContent)`, &tabs),
	)
	if strings.Join(tabs, "|") != "Network interfaces|System performance" {
		t.Errorf("dashboard tabs %q, want the template's two", tabs)
	}
	var title string
	var loadBox struct {
		ItemIDs string
		Lines   int
		Legend  []string
	}
	var fsBox string
	run(t, ctx, "draw System performance",
		chromedp.Evaluate(`[...document.querySelectorAll('#hostdash-tabs .page-tab')].find((b) => b.textContent === 'System performance').click()`, nil),
		chromedp.Poll(`(() => { const w = [...document.querySelectorAll('#hostdash-grid .widget')].find((x) => x.querySelector('.widget-title').textContent === 'System load');
			return !!w && w.querySelectorAll('polyline').length > 0; })()`, nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Poll(`[...document.querySelectorAll('#hostdash-grid .widget[data-type="graphprototype"] .host-graph')].length > 0`, nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Text(`#hostdash-title`, &title, chromedp.ByQuery),
		chromedp.Evaluate(`(() => { const w = [...document.querySelectorAll('#hostdash-grid .widget')].find((x) => x.querySelector('.widget-title').textContent === 'System load');
			const b = w.querySelector('.host-graph');
			return { ItemIDs: b.dataset.itemids, Lines: w.querySelectorAll('polyline').length,
				Legend: [...w.querySelectorAll('.graph-legend tbody tr')].map((r) => r.cells[0].textContent.replace('■ ', '') + '=' + r.cells[1].textContent) }; })()`, &loadBox),
		chromedp.Evaluate(`document.querySelector('#hostdash-grid .widget[data-type="graphprototype"] .host-graph').dataset.itemids`, &fsBox),
	)
	if title != "Dashboards: Linux <i>web</i> host" {
		t.Errorf("title %q: the host's name must stay text", title)
	}
	// The widget names the template's graph; it shows the host's copy:
	// its items (the host's, in the graph's order), each with a value.
	if loadBox.ItemIDs != strings.Join(loadIDs, ",") || loadBox.Lines == 0 {
		t.Errorf("System load widget: items %q (want the host's %q), %d lines", loadBox.ItemIDs, strings.Join(loadIDs, ","), loadBox.Lines)
	}
	for _, l := range loadBox.Legend {
		if strings.HasSuffix(l, "=—") {
			t.Errorf("System load legend without a value: %q", l)
		}
	}
	if !fsIDs[fsBox] {
		t.Errorf("the file-system prototype widget shows items %q, not those of a graph discovered on the host (%v)", fsBox, fsIDs)
	}
	run(t, ctx, "screenshot at 1400×900", chromedp.EmulateViewport(1400, 900), chromedp.Sleep(500*time.Millisecond))
	sh.take(t, ctx, "host-dashboard")
	t.Logf("System load: %v", loadBox.Legend)
}

// hdGraph is a graph as graph.get gives it with its items.
type hdGraph struct {
	GraphID string
	Name    string
	GItems  []struct{ ItemID string } `json:"gitems"`
}

// valuesIn reports whether each item of g has at least n values.
func valuesIn(t *testing.T, base, token string, g hdGraph, n int) bool {
	for _, gi := range g.GItems {
		var its []struct {
			ValueType string `json:"value_type"`
		}
		json.Unmarshal(apiCall(t, base, token, "item.get", map[string]any{"itemids": []string{gi.ItemID}, "output": []string{"value_type"}}), &its)
		if len(its) != 1 {
			return false
		}
		var vs []json.RawMessage
		json.Unmarshal(apiCall(t, base, token, "history.get", map[string]any{"itemids": []string{gi.ItemID}, "history": its[0].ValueType, "limit": n}), &vs)
		if len(vs) < n {
			return false
		}
	}
	return len(g.GItems) > 0
}

// linuxTemplate is "Linux by Zabbix agent" as Debian ships it, with the
// test's shorter intervals.
func linuxTemplate(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testutil.ZabbixTemplates(t), "os/linux/template_os_linux.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, tm := range doc["zabbix_export"].(map[string]any)["templates"].([]any) {
		tm := tm.(map[string]any)
		faster := func(l any, d string) {
			xs, _ := l.([]any)
			for _, x := range xs {
				if m := x.(map[string]any); m["delay"] != nil || m["type"] == nil || m["type"] == "ZABBIX_PASSIVE" {
					if m["type"] != "DEPENDENT" && m["type"] != "CALCULATED" {
						m["delay"] = d
					}
				}
			}
		}
		faster(tm["items"], "10s")
		rules, _ := tm["discovery_rules"].([]any)
		faster(rules, "5s")
		for _, r := range rules {
			faster(r.(map[string]any)["item_prototypes"], "10s")
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
