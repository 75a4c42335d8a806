package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestIntegrationUIScale measures, in headless Chromium, the latest-data
// page over 100,000 items and a 1-year graph of one item at 1-minute
// resolution (525,600 values), and logs the figures. It is a
// measurement, not a check (no timed assertion), and takes a minute or
// two of CPU, so it runs only with PEREGRINE_UI_SCALE=1:
//
//	PEREGRINE_UI_SCALE=1 go test -count=1 -run TestIntegrationUIScale -v ./internal/web/
//
// What it does check: the rows appear, the search narrows the list on
// the server, the graph draws one point per bucket.
func TestIntegrationUIScale(t *testing.T) {
	if testing.Short() || os.Getenv("PEREGRINE_UI_SCALE") == "" {
		t.Skip("measurement: set PEREGRINE_UI_SCALE=1 (100k items, 525,600 values, headless Chromium)")
	}
	const hosts, perHost = 100, 1000
	spec := catalog.Spec{}
	for h := 0; h < hosts; h++ {
		hs := catalog.HostSpec{Host: fmt.Sprintf("scale-%03d", h), Groups: []string{"Scale"}}
		for i := 0; i < perHost; i++ {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: fmt.Sprintf("m[%d]", i), Name: fmt.Sprintf("Metric %03d-%04d", h, i), ValueType: "float"})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	spec.Hosts = append(spec.Hosts, catalog.HostSpec{Host: "year", Groups: []string{"Scale"}, Items: []catalog.ItemSpec{
		{Key: "year.minute", Name: "A year at one minute", ValueType: "float", History: "400d"},
	}})
	t0 := time.Now()
	s, base, password := startServer(t, spec)
	t.Logf("server with %d items up in %v", s.Catalog.Snapshot().ItemCount(), time.Since(t0).Round(time.Millisecond))

	// 525,600 values, one a minute over the last 365 days, through the
	// API's history.push in batches.
	year := s.Catalog.Snapshot().Lookup("year", "year.minute")
	token := apiLogin(t, base, password)
	end := time.Now().Unix() / 60 * 60
	start := end - 525600*60
	t0 = time.Now()
	const batch = 50000
	for k := 0; k < 525600; k += batch {
		vals := make([]map[string]any, 0, batch)
		for i := k; i < min(k+batch, 525600); i++ {
			clock := start + int64(i+1)*60
			v := 50 + 40*float64((i/1440)%30)/30 + float64(i%60)/6
			vals = append(vals, map[string]any{"itemid": strconv.FormatUint(year.ID, 10), "clock": clock, "value": strconv.FormatFloat(v, 'f', 2, 64)})
		}
		apiCall(t, base, token, "history.push", vals)
	}
	t.Logf("pushed 525,600 values in %v", time.Since(t0).Round(time.Millisecond))

	ctx, sh := browser(t)
	login(t, ctx, base, password)

	// Latest data, all 100k items: time from navigation to the first
	// rows with their values on screen.
	for run := 0; run < 3; run++ {
		var count, ms string
		t0 = time.Now()
		err := chromedp.Run(ctx,
			chromedp.Navigate(base+"/latest"),
			chromedp.Poll(`document.querySelector('.item-row:not(.loading)') !== null`, nil, chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second)),
		)
		paint := time.Since(t0)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%d items", s.Catalog.Snapshot().ItemCount())
		if err := chromedp.Run(ctx,
			chromedp.Poll(fmt.Sprintf(`document.querySelector('#item-count').textContent === %q`, want), nil, chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second)),
			chromedp.Text("#item-count", &count, chromedp.ByQuery), chromedp.AttributeValue("#item-count", "data-ms", &ms, nil, chromedp.ByQuery),
		); err != nil {
			t.Fatalf("latest data never counted %s: %v", want, err)
		}
		t.Logf("latest data, %s, run %d: first rows with values after %v, whole list scrollable after %v (id list call %s ms)", count, run+1, paint.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond), ms)
	}
	sh.take(t, ctx, "latest-100k")
	// Scroll to the middle: rows there fetch their details.
	t0 = time.Now()
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelector('.vviewport').scrollTop = 50000 * 28`, nil),
		chromedp.Poll(`[...document.querySelectorAll('.item-row:not(.loading) .item-name')].some(e => e.textContent.startsWith('Metric 04'))`, nil, chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)),
	); err != nil {
		t.Fatal(err)
	}
	t.Logf("latest data: jump to row 50,000, rows filled after %v", time.Since(t0).Round(time.Millisecond))
	// Search: the server filters 100k items.
	t0 = time.Now()
	if err := chromedp.Run(ctx,
		chromedp.SendKeys("#item-search", "Metric 042-07", chromedp.ByQuery),
		chromedp.Poll(`document.querySelector('#item-count').textContent === '100 items' && document.querySelectorAll('.item-row:not(.loading)').length > 10`, nil, chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)),
	); err != nil {
		t.Fatal(err)
	}
	t.Logf("latest data: search narrowed 100k items to 100 and drew them %v after typing (incl. 250 ms debounce)", time.Since(t0).Round(time.Millisecond))

	// The 1-year graph: the page's own figure (API call and drawing).
	for run := 0; run < 3; run++ {
		var ms, points, source string
		t0 := time.Now()
		if err := chromedp.Run(ctx,
			chromedp.Navigate(fmt.Sprintf("%s/graph?itemids=%d&range=1y", base, year.ID)),
			chromedp.WaitVisible(`#chart[data-state="ready"] canvas`, chromedp.ByQuery),
			chromedp.AttributeValue("#chart", "data-render-ms", &ms, nil, chromedp.ByQuery),
			chromedp.AttributeValue("#chart", "data-points", &points, nil, chromedp.ByQuery),
			chromedp.AttributeValue("#chart", "data-source", &source, nil, chromedp.ByQuery),
		); err != nil {
			t.Fatal(err)
		}
		if n, _ := strconv.Atoi(points); n < 1000 {
			t.Fatalf("1-year graph has %s points", points)
		}
		t.Logf("1-year graph of 525,600 values, run %d: %s ms (API and drawing), %v from navigation to drawn chart, %s points, %s", run+1, ms, time.Since(t0).Round(time.Millisecond), points, source)
	}
	sh.take(t, ctx, "graph-1y")
}

func apiLogin(t *testing.T, base, password string) string {
	t.Helper()
	var session string
	if err := json.Unmarshal(apiCall(t, base, "", "user.login", map[string]string{"username": "Admin", "password": password}), &session); err != nil {
		t.Fatal(err)
	}
	return session
}

func apiCall(t *testing.T, base, token, method string, params any) json.RawMessage {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": 1})
	req, _ := http.NewRequest("POST", base+"/api_jsonrpc.php", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json-rpc")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var res struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Data string `json:"data"`
		} `json:"error"`
	}
	if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("%s: %s", method, res.Error.Data)
	}
	return res.Result
}
