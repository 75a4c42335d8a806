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

// TestIntegrationBrowserHostGraphs: a template's graph, linked to a host,
// is listed on the host's graphs page (reached from the Hosts page) as a
// copy of the template's, and its link opens the graph page with the
// graph's items in their order; a name that is markup stays text.
func TestIntegrationBrowserHostGraphs(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium")
	}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "gr-host", Name: "Graph host", Groups: []string{"G"}}}}
	s, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	var tm struct{ TemplateIDs []string }
	groups := []map[string]any{{"groupid": fmt.Sprint(s.Catalog.Snapshot().Host("gr-host").GroupIDs[0])}}
	json.Unmarshal(apiCall(t, base, token, "template.create", map[string]any{"host": "gr-tmpl", "groups": groups}), &tm)
	var its struct{ ItemIDs []string }
	json.Unmarshal(apiCall(t, base, token, "item.create", []map[string]any{
		{"hostid": tm.TemplateIDs[0], "name": "In", "key_": "in", "type": 2, "value_type": 0},
		{"hostid": tm.TemplateIDs[0], "name": "Out", "key_": "out", "type": 2, "value_type": 0},
	}), &its)
	apiCall(t, base, token, "graph.create", map[string]any{"name": "Traffic <b>x</b>", "width": 900, "height": 200,
		"gitems": []map[string]any{{"itemid": its.ItemIDs[1], "color": "00AA00"}, {"itemid": its.ItemIDs[0], "color": "AA0000"}}})
	host := s.Catalog.Snapshot().Host("gr-host")
	apiCall(t, base, token, "host.update", map[string]any{"hostid": host.ID, "templates": []map[string]any{{"templateid": tm.TemplateIDs[0]}}})
	snap := s.Catalog.Snapshot()
	out, in := snap.Lookup("gr-host", "out"), snap.Lookup("gr-host", "in")

	ctx, _ := browser(t)
	login(t, ctx, base, password)
	var href, name, badge string
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/hosts"),
		chromedp.WaitVisible(`a.host-graphs`, chromedp.ByQuery),
		chromedp.Click(`a.host-graphs`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelectorAll('#graph-list .graph-row').length === 1`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.AttributeValue(`#graph-list .graph-row a`, "href", &href, nil, chromedp.ByQuery),
		chromedp.Text(`#graph-list .graph-row a`, &name, chromedp.ByQuery),
		chromedp.Text(`#graph-list .graph-row .badge`, &badge, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The graph's items in its order: Out first, then In.
	if want := fmt.Sprintf("/graph?itemids=%d,%d", out.ID, in.ID); !strings.HasSuffix(href, want) {
		t.Errorf("graph link %q, want it to end in %q", href, want)
	}
	if name != "Traffic <b>x</b>" || badge != "from a template" {
		t.Errorf("graph row: name %q, badge %q", name, badge)
	}
	var chart bool
	if err := chromedp.Run(ctx, chromedp.Click(`#graph-list .graph-row a`, chromedp.ByQuery),
		chromedp.Poll(`!!document.querySelector('#chart')`, &chart, chromedp.WithPollingTimeout(20*time.Second))); err != nil || !chart {
		t.Errorf("the graph page did not open: %v", err)
	}
}
