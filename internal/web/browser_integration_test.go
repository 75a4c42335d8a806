package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/server"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// xssName is a host's visible name that a UI writing HTML from strings
// would run as a script.
const xssName = "<script>alert(1)</script>"

// startServer runs a whole Peregrine in this process on loopback with
// spec applied, and returns it with its base URL and the generated
// Admin password.
func startServer(t *testing.T, spec catalog.Spec, edit ...func(*config.Config)) (*server.Server, string, string) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Trapper.Listen = "127.0.0.1:0"
	cfg.HTTP.Listen = "127.0.0.1:0"
	scheme := "http://"
	for _, e := range edit {
		e(&cfg)
	}
	if cfg.HTTP.TLSCertFile != "" {
		scheme = "https://"
	}
	catalogtest.Write(t, server.CatalogPath(cfg.DataDir), spec)
	ctx := context.Background()
	s, err := server.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server stopped with %v", err)
		}
	})
	pw, err := os.ReadFile(filepath.Join(cfg.DataDir, "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	return s, scheme + s.HTTPAddr().String(), strings.TrimSpace(string(pw))
}

// browser starts the system's headless Chromium (Debian package
// chromium; no downloaded browser) with a 1400×900 viewport, the size of
// the screenshots in docs/screenshots.
func browser(t *testing.T) (context.Context, *shots) {
	t.Helper()
	bin := testutil.Need(t, "chromium", "chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.WindowSize(1400, 900),
		chromedp.Flag("disable-gpu", true),
	)
	// Not t.TempDir: Chromium may still be writing its profile for a
	// moment after it is told to stop, and TempDir's removal would fail
	// the test.
	profile, err := os.MkdirTemp("", "peregrine-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts = append(opts, chromedp.UserDataDir(profile))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 8*time.Minute)
	t.Cleanup(func() {
		cancelT()
		cancelC()
		cancelA()
		for i := 0; i < 50 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	// The window's size includes what a window draws around the page:
	// the viewport is set apart so that every screenshot is 1400×900.
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatalf("cannot start %s: %v", bin, err)
	}
	dir := os.Getenv("PEREGRINE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return ctx, &shots{dir: dir}
}

// shots saves screenshots as test artifacts (PEREGRINE_SCREENSHOTS, or
// the test's temporary directory).
type shots struct{ dir string }

func (s *shots) take(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(s.dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}

func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	t0 := time.Now()
	defer func() {
		if d := time.Since(t0); d > 5*time.Second {
			t.Logf("slow step %q: %v", what, d.Round(time.Millisecond))
		}
	}()
	// One step may take 90 s at most: a selector that never matches
	// fails here, naming the step, instead of at the browser's deadline.
	sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Run(sctx, actions...); err != nil {
		var loc string
		chromedp.Run(ctx, chromedp.Location(&loc))
		t.Fatalf("%s (at %s): %v", what, loc, err)
	}
}

func login(t *testing.T, ctx context.Context, base, password string) {
	t.Helper()
	run(t, ctx, "log in",
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible("#username", chromedp.ByQuery),
		chromedp.SendKeys("#username", "Admin", chromedp.ByQuery),
		chromedp.SendKeys("#password", password, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#health .stat", chromedp.ByQuery),
	)
}

func TestIntegrationBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium and the real zabbix_sender")
	}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "web-test", Name: "Web test host", Groups: []string{"Web"}, Items: []catalog.ItemSpec{
			{Key: "trap.temp", Name: "Room temperature", ValueType: "float", Units: "C"},
			{Key: "trap.count", Name: "Requests", ValueType: "unsigned"},
		}},
		{Host: "xss-host", Name: xssName, Groups: []string{"Web"}, Items: []catalog.ItemSpec{
			{Key: "trap.note", Name: "<img src=x onerror=alert(2)>", ValueType: "character"},
		}},
	}}
	s, base, password := startServer(t, spec)
	ctx, sh := browser(t)
	var dialogs []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs = append(dialogs, d.Message)
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
		}
	})

	// Every page sends a visitor without a session to the login page.
	for _, p := range []string{"/", "/overview", "/problems", "/hosts", "/latest", "/graph?itemids=1"} {
		var loc string
		run(t, ctx, "open "+p+" without a session", chromedp.Navigate(base+p), chromedp.WaitVisible("#login-form", chromedp.ByQuery), chromedp.Location(&loc))
		if loc != base+"/login" {
			t.Errorf("%s without a session ended at %s, want %s/login", p, loc, base)
		}
	}
	var help string
	run(t, ctx, "read the first-start help", chromedp.Text("#password-file", &help, chromedp.ByQuery))
	if !strings.HasSuffix(help, "admin-password") {
		t.Errorf("first-start help names %q, want the admin-password file", help)
	}
	sh.take(t, ctx, "login")

	// Wrong password: the API's message, no session.
	run(t, ctx, "wrong password",
		chromedp.SendKeys("#username", "Admin", chromedp.ByQuery),
		chromedp.SendKeys("#password", "not-the-password", chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#login-error", chromedp.ByQuery))

	login(t, ctx, base, password)
	sh.take(t, ctx, "overview")

	// A value sent with the real zabbix_sender shows in latest data.
	res := testutil.RunSender(t, s.TrapperAddr().String(), "-s", "web-test", "-k", "trap.temp", "-o", "21.75")
	if res.Processed != 1 {
		t.Fatalf("zabbix_sender: %+v", res)
	}
	temp := s.Catalog.Snapshot().Lookup("web-test", "trap.temp")
	row := fmt.Sprintf(`.item-row[data-itemid="%d"] .last-value`, temp.ID)
	var shown string
	run(t, ctx, "latest data shows the sent value",
		chromedp.Click(`#nav a[data-page="latest"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#item-search", chromedp.ByQuery),
		chromedp.SendKeys("#item-search", "temperature", chromedp.ByQuery),
		chromedp.Poll(fmt.Sprintf(`document.querySelectorAll('.item-row').length === 1 && document.querySelector(%q) !== null`, row), nil, chromedp.WithPollingTimeout(20*time.Second)),
		textOf(row, &shown))
	if shown != "21.75 C" {
		t.Errorf("latest data shows %q for the sent 21.75 (units C)", shown)
	}
	sh.take(t, ctx, "latest")

	// User-provided strings are text: the host name and item name that
	// are markup show literally and run nothing.
	var hostText, itemText string
	run(t, ctx, "hosts page shows the XSS name as text",
		chromedp.Click(`#nav a[data-page="hosts"]`, chromedp.ByQuery),
		chromedp.WaitVisible(".host-row", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('.host-name')].map(e => e.textContent).find(t => t.includes('script')) || ''`, &hostText))
	if hostText != xssName {
		t.Errorf("host name shown as %q, want the literal %q", hostText, xssName)
	}
	sh.take(t, ctx, "hosts")
	xss := s.Catalog.Snapshot().Host("xss-host")
	run(t, ctx, "latest data of the XSS host",
		chromedp.Navigate(fmt.Sprintf("%s/latest?hostid=%d", base, xss.ID)),
		chromedp.WaitVisible(".item-row:not(.loading) .item-name", chromedp.ByQuery),
		textOf(".item-row:not(.loading) .item-name", &itemText))
	if itemText != "<img src=x onerror=alert(2)>" {
		t.Errorf("item name shown as %q", itemText)
	}
	var injected int
	run(t, ctx, "count injected elements", chromedp.Evaluate(`document.querySelectorAll('main script, main img').length`, &injected))
	if injected != 0 || len(dialogs) != 0 {
		t.Errorf("markup from names became elements (%d) or ran (dialogs %q)", injected, dialogs)
	}

	// A graph of values sent with timestamps over the last hour, zoomed
	// by dragging across the chart.
	now := time.Now().Unix()
	var lines strings.Builder
	for i := int64(0); i < 60; i++ {
		fmt.Fprintf(&lines, "web-test trap.temp %d %d\n", now-3540+i*60, 20+i%7)
	}
	f := filepath.Join(t.TempDir(), "values.txt")
	os.WriteFile(f, []byte(lines.String()), 0o600)
	if res := testutil.RunSender(t, s.TrapperAddr().String(), "-T", "-i", f); res.Processed != 60 {
		t.Fatalf("zabbix_sender with timestamps: %+v", res)
	}
	var points, from0, till0 string
	run(t, ctx, "open the graph",
		chromedp.Navigate(fmt.Sprintf("%s/graph?itemids=%d&range=1h", base, temp.ID)),
		chromedp.WaitVisible(`#chart[data-state="ready"] canvas`, chromedp.ByQuery),
		chromedp.AttributeValue("#chart", "data-points", &points, nil, chromedp.ByQuery))
	if n, _ := strconv.Atoi(points); n < 30 {
		t.Errorf("graph has %s points for 61 values over 1 h", points)
	}
	sh.take(t, ctx, "graph")
	var box []float64
	run(t, ctx, "find the plot area", chromedp.Evaluate(`(() => { const r = document.querySelector('.u-over').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`, &box))
	x0, x1, y := box[0]+box[2]*0.25, box[0]+box[2]*0.5, box[1]+box[3]/2
	var zoomed string
	run(t, ctx, "drag to zoom",
		chromedp.Evaluate(`document.querySelector('#chart').dataset.state = 'old'`, nil),
		chromedp.MouseEvent(input.MouseMoved, x0, y),
		chromedp.MouseEvent(input.MousePressed, x0, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.MouseMoved, (x0+x1)/2, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.MouseMoved, x1, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.MouseReleased, x1, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.WaitVisible(`#chart[data-state="ready"] canvas`, chromedp.ByQuery),
		chromedp.Location(&zoomed))
	from0, till0 = queryParam(zoomed, "from"), queryParam(zoomed, "till")
	fr, _ := strconv.ParseInt(from0, 10, 64)
	ti, _ := strconv.ParseInt(till0, 10, 64)
	if ti-fr < 300 || ti-fr > 1500 {
		t.Errorf("dragging over a quarter of a 1 h graph gave the range %s..%s (%d s), want about 900 s", from0, till0, ti-fr)
	}
	sh.take(t, ctx, "graph-zoomed")
	var panned string
	run(t, ctx, "pan to earlier",
		chromedp.Evaluate(`document.querySelector('#chart').dataset.state = 'old'`, nil),
		chromedp.Click("#pan-left", chromedp.ByQuery),
		chromedp.WaitVisible(`#chart[data-state="ready"] canvas`, chromedp.ByQuery),
		chromedp.Location(&panned))
	pf, _ := strconv.ParseInt(queryParam(panned, "from"), 10, 64)
	pt, _ := strconv.ParseInt(queryParam(panned, "till"), 10, 64)
	if d := pf - (fr - (ti-fr)/2); pt-pf != ti-fr || d < -1 || d > 1 {
		t.Errorf("◀ moved %d..%d to %d..%d, want the same width half a width earlier", fr, ti, pf, pt)
	}

	// Problems: without problem.get (the trigger engine) the page says so.
	run(t, ctx, "problems page",
		chromedp.Click(`#nav a[data-page="problems"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#no-problem-api, .vlist", chromedp.ByQuery))
	sh.take(t, ctx, "problems")

	// CSRF: a call without the token is refused by the server.
	var status int
	run(t, ctx, "API call without CSRF token", chromedp.Evaluate(
		`fetch('/ui/api', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{"jsonrpc":"2.0","method":"host.get","params":{},"id":1}'}).then(r => r.status)`,
		&status, awaitPromise))
	if status != 403 {
		t.Errorf("/ui/api without the CSRF token: HTTP %d, want 403", status)
	}

	// Phone width: the overview still lays out.
	run(t, ctx, "phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/overview"), chromedp.WaitVisible("#health .stat", chromedp.ByQuery))
	sh.take(t, ctx, "overview-phone")
	run(t, ctx, "dark theme", chromedp.EmulateViewport(1400, 900), chromedp.Click("#theme-toggle", chromedp.ByQuery), chromedp.Sleep(100*time.Millisecond))
	sh.take(t, ctx, "overview-theme-toggled")

	// Log out: the session ends on the server, pages go to the login page.
	var loc string
	run(t, ctx, "log out", chromedp.Click("#logout", chromedp.ByQuery), chromedp.WaitVisible("#login-form", chromedp.ByQuery),
		chromedp.Navigate(base+"/latest"), chromedp.WaitVisible("#login-form", chromedp.ByQuery), chromedp.Location(&loc))
	if loc != base+"/login" {
		t.Errorf("after logout /latest ended at %s", loc)
	}
}

// awaitPromise makes Evaluate wait for the promise an expression returns.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

func queryParam(u, name string) string {
	_, q, _ := strings.Cut(u, "?")
	for _, kv := range strings.Split(q, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// TestIntegrationBrowserProblems runs the problems page and the overview
// against the whole server, nothing fed to it but values: a trigger
// created through the API, a value sent with the real zabbix_sender
// raises its problem (evaluation on commit), which the page shows with
// its host, name, severity and tags; it is acknowledged in the page and
// its event history read when asked for; a recovering value resolves it
// and the page lists it no more. A second raise is closed in the page
// (manual close, event.acknowledge).
func TestIntegrationBrowserProblems(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs headless Chromium and zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	spec := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "db-1", Name: "Database <1>", Groups: []string{"Web"}, Items: []catalog.ItemSpec{
		{Key: "trap.load", Name: "Load", ValueType: "float"},
	}}}}
	s, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	var created struct {
		TriggerIDs []string `json:"triggerids"`
	}
	res := apiCall(t, base, token, "trigger.create", map[string]any{
		"description": "Load too high on {HOST.HOST}", "expression": "last(/db-1/trap.load)>10",
		"priority": 4, "manual_close": 1, "tags": []map[string]string{{"tag": "team", "value": "dba"}},
	})
	if err := json.Unmarshal(res, &created); err != nil || len(created.TriggerIDs) != 1 {
		t.Fatalf("trigger.create: %s", res)
	}
	type problem struct {
		ObjectID     string `json:"objectid"`
		Severity     string `json:"severity"`
		Acknowledged string `json:"acknowledged"`
	}
	// problems polls problem.get until it holds want problems (at most
	// 10 s): evaluation runs on its own goroutine after the sender's
	// values are committed.
	problems := func(want int) []problem {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var ps []problem
			if err := json.Unmarshal(apiCall(t, base, token, "problem.get", map[string]any{"output": "extend"}), &ps); err != nil {
				t.Fatal(err)
			}
			if len(ps) == want || time.Now().After(deadline) {
				if len(ps) != want {
					t.Fatalf("problem.get: %+v after 10 s, want %d problems", ps, want)
				}
				return ps
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	send := func(v string) {
		t.Helper()
		if r := testutil.RunSender(t, s.TrapperAddr().String(), "-s", "db-1", "-k", "trap.load", "-o", v); r.Processed != 1 {
			t.Fatalf("zabbix_sender -o %s: %+v", v, r)
		}
	}
	send("42")
	if ps := problems(1); ps[0].ObjectID != created.TriggerIDs[0] || ps[0].Severity != "4" {
		t.Fatalf("problem raised by 42: %+v", ps[0])
	}
	ctx, sh := browser(t)
	login(t, ctx, base, password)
	var high string
	run(t, ctx, "overview counts the problem", chromedp.WaitVisible(`#severity-counts a.sev-4`, chromedp.ByQuery),
		chromedp.Text(`#severity-counts a.sev-4 .stat-value`, &high, chromedp.ByQuery))
	if high != "1" {
		t.Errorf("overview counts %q High problems, want 1", high)
	}
	sh.take(t, ctx, "overview-problem")
	const row = `.problem-row:not(.loading)`
	var host, name, sev, tags string
	// The row paints in steps (the problem, then its hosts, then the
	// last value of its item: the storm design); the test reads it
	// once the last value is there.
	run(t, ctx, "problems page",
		chromedp.Click(`#nav a[data-page="problems"]`, chromedp.ByQuery),
		chromedp.WaitVisible(row+` .problem-name .opdata`, chromedp.ByQuery),
		textOf(row+` .host-name`, &host), textOf(row+` .problem-name`, &name),
		textOf(row+` .badge.sev-4`, &sev), textOf(row+` .tags`, &tags))
	// Without operational data the row shows the last value of the
	// trigger's item.
	if host != "Database <1>" || name != "Load too high on db-1 (42)" || sev != "High" || tags != "team: dba" {
		t.Errorf("problem row: host %q, name %q, severity %q, tags %q", host, name, sev, tags)
	}
	run(t, ctx, "acknowledge", press(row+` .ack-btn`), chromedp.WaitVisible(row+` .ack-yes`, chromedp.ByQuery))
	if ps := problems(1); ps[0].Acknowledged != "1" {
		t.Errorf("after Ack in the page, problem.get says %+v", ps)
	}
	run(t, ctx, "event history",
		press(row+` .more-btn`),
		chromedp.Click(`#problem-actions .hist-btn`, chromedp.ByQuery),
		chromedp.WaitVisible(`#event-history table td`, chromedp.ByQuery))
	sh.take(t, ctx, "problems-real")

	// Live updates: the page follows the server without a reload (a
	// mark on the window survives only if the document stays).
	var one string
	run(t, ctx, "count text", textOf("#problem-count", &one))
	if one != "1 problem" {
		t.Errorf("count shows %q for one problem, want \"1 problem\"", one)
	}
	run(t, ctx, "mark the document", chromedp.Evaluate(`window.peregrineNoReload = 1`, nil))
	stillSame := func(what string) {
		t.Helper()
		var mark bool
		run(t, ctx, "same document", chromedp.Evaluate(`window.peregrineNoReload === 1`, &mark))
		if !mark {
			t.Errorf("%s: the page was reloaded", what)
		}
	}
	send("1")
	problems(0)
	zero := chromedp.Poll(`(document.querySelector('#problem-count') || {}).textContent === '0 problems'`, nil, chromedp.WithPollingTimeout(30*time.Second))
	run(t, ctx, "resolved by a value: the live page drops it", zero)
	stillSame("resolved")
	sh.take(t, ctx, "problems-resolved")

	send("42")
	problems(1)
	run(t, ctx, "raised again: the live page lists it", chromedp.WaitVisible(row+` .problem-name`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector('#problem-count').textContent === '1 problem'`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	stillSame("raised again")

	// The overview's counts follow too.
	send("1")
	problems(0)
	run(t, ctx, "overview", chromedp.Click(`#nav a[data-page="overview"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#severity-counts a.sev-4`, chromedp.ByQuery),
		chromedp.Evaluate(`window.peregrineNoReload = 2`, nil))
	send("42")
	problems(1)
	run(t, ctx, "the live overview counts the new problem",
		chromedp.Poll(`document.querySelector('#severity-counts a.sev-4 .stat-value').textContent === '1'`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	var mark int
	run(t, ctx, "same document", chromedp.Evaluate(`window.peregrineNoReload`, &mark))
	if mark != 2 {
		t.Error("the overview was reloaded")
	}
	run(t, ctx, "back to problems", chromedp.Click(`#nav a[data-page="problems"]`, chromedp.ByQuery), chromedp.WaitVisible(row+` .problem-name`, chromedp.ByQuery))
	run(t, ctx, "close the problem",
		press(row+` .more-btn`),
		chromedp.Click(`#problem-actions .close-btn`, chromedp.ByQuery),
		zero)
	problems(0)
}

// textOf reads an element's text in one step in the page: list rows are
// replaced when their details arrive, and a node found in one DevTools
// call may be gone by the next.
func textOf(sel string, out *string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(document.querySelector(%q) || {textContent: ''}).textContent`, sel), out)
}

// press clicks a button of a list row from inside the page (the row may
// be re-rendered between finding it and a DevTools mouse event).
func press(sel string) chromedp.Action {
	return chromedp.Poll(fmt.Sprintf(`(() => { const b = document.querySelector(%q); if (!b) return false; b.click(); return true; })()`, sel), nil,
		chromedp.WithPollingTimeout(30*time.Second))
}
