package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// fakeAPI answers the JSON-RPC methods the UI's server side calls
// (user.login, user.checkAuthentication, user.logout) and echoes, for
// any other method, the Authorization header it was called with, so
// tests see what /ui/api attached. The real API is exercised by the
// integration tests (browser_integration_test.go).
type fakeAPI struct {
	mu       sync.Mutex
	sessions map[string]bool
	calls    []string // methods called
	// userType is the sessions' user type (0: 3, super admin); rules,
	// when set, is the rules of their role "9" (role.get).
	userType int
	rules    map[string]any
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		ID     any             `json:"id"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", 400)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req.Method)
	reply := func(res any) {
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "result": res, "id": req.ID})
	}
	fail := func(data string) {
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": -32602, "message": "Invalid params.", "data": data}, "id": req.ID})
	}
	switch req.Method {
	case "user.login":
		var p map[string]string
		json.Unmarshal(req.Params, &p)
		if p["username"] == "Admin" && p["password"] == "right" {
			f.sessions["0123456789abcdef0123456789abcdef"] = true
			reply("0123456789abcdef0123456789abcdef")
			return
		}
		fail("Incorrect user name or password or account is temporarily blocked.")
	case "user.checkAuthentication":
		var p map[string]string
		json.Unmarshal(req.Params, &p)
		if f.sessions[p["sessionid"]] {
			// The type is a number, as Zabbix 6.0 answers it.
			ty := f.userType
			if ty == 0 {
				ty = 3
			}
			u := map[string]any{"userid": "1", "username": "Admin", "type": ty}
			if f.rules != nil {
				u["roleid"] = "9"
			}
			reply(u)
			return
		}
		fail("Session terminated, re-login, please.")
	case "role.get":
		if f.rules == nil {
			fail("No permissions to referred object or it does not exist!")
			return
		}
		reply([]map[string]any{{"roleid": "9", "rules": f.rules}})
	case "user.logout":
		delete(f.sessions, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		reply(true)
	default:
		reply(map[string]string{"authorization": r.Header.Get("Authorization")})
	}
}

type fixture struct {
	srv     *httptest.Server
	api     *fakeAPI
	metrics *selfmon.Registry
	pwFile  string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{api: &fakeAPI{sessions: map[string]bool{}}, metrics: selfmon.NewRegistry()}
	f.pwFile = filepath.Join(t.TempDir(), "admin-password")
	if err := os.WriteFile(f.pwFile, []byte("generated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ui, err := New(Options{API: f.api, AdminPasswordFile: f.pwFile, Metrics: f.metrics})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ui.Register(mux)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// client does not follow redirects, so tests see them.
func (f *fixture) client(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func read(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// login logs c in and returns the CSRF token of its session.
func (f *fixture) login(t *testing.T, c *http.Client, password string) *http.Response {
	t.Helper()
	r, err := c.Get(f.srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	m := csrfInput.FindStringSubmatch(read(t, r))
	if m == nil {
		t.Fatal("login page has no csrf field")
	}
	r, err = c.PostForm(f.srv.URL+"/login", url.Values{"csrf": {m[1]}, "username": {"Admin"}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) session(t *testing.T, c *http.Client) map[string]string {
	t.Helper()
	r, err := c.Get(f.srv.URL + "/ui/session")
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != 200 {
		t.Fatalf("/ui/session: %d %s", r.StatusCode, read(t, r))
	}
	var s map[string]string
	if err := json.Unmarshal([]byte(read(t, r)), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPagesNeedSession(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	for _, p := range pagePaths {
		r, err := c.Get(f.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		read(t, r)
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/login" {
			t.Errorf("GET %s without a session: %d Location %q, want 303 to /login", p, r.StatusCode, r.Header.Get("Location"))
		}
	}
	// A made-up cookie is no session either.
	u, _ := url.Parse(f.srv.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: "forged"}})
	r, _ := c.Get(f.srv.URL + "/latest")
	read(t, r)
	if r.StatusCode != http.StatusSeeOther {
		t.Errorf("forged session: %d, want 303", r.StatusCode)
	}
	r, _ = c.Get(f.srv.URL + "/ui/session")
	read(t, r)
	if r.StatusCode != http.StatusUnauthorized {
		t.Errorf("/ui/session with a forged session: %d, want 401", r.StatusCode)
	}
	var sb strings.Builder
	f.metrics.WriteText(&sb)
	if want := "peregrine_web_no_session_total " + strconv.Itoa(len(pagePaths)+2); !strings.Contains(sb.String(), want) {
		t.Errorf("metrics lack %q:\n%s", want, sb.String())
	}
}

func TestLoginSetsHardenedCookieAndLogoutEndsSession(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	r := f.login(t, c, "right")
	read(t, r)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/overview" {
		t.Fatalf("login: %d to %q, want 303 to /overview", r.StatusCode, r.Header.Get("Location"))
	}
	var sc *http.Cookie
	for _, ck := range r.Cookies() {
		if ck.Name == sessionCookie {
			sc = ck
		}
	}
	if sc == nil || !sc.HttpOnly || sc.SameSite != http.SameSiteStrictMode || sc.Secure || sc.Path != "/" {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, not Secure over plain HTTP, Path /", sc)
	}
	r, _ = c.Get(f.srv.URL + "/hosts")
	body := read(t, r)
	if r.StatusCode != 200 || !regexp.MustCompile(`src="/assets/v-[\w-]+/app.js"`).MatchString(body) {
		t.Fatalf("GET /hosts logged in: %d, body %.400q", r.StatusCode, body)
	}
	s := f.session(t, c)
	if s["username"] != "Admin" || s["csrf"] == "" {
		t.Fatalf("/ui/session = %v", s)
	}
	// The page carries the same token, so the app needs no round trip.
	if !strings.Contains(body, `<meta name="peregrine-csrf" content="`+s["csrf"]+`">`) {
		t.Fatalf("page lacks the session's CSRF token: %.600q", body)
	}
	// Logout without the token is refused and the session lives on.
	r, _ = c.PostForm(f.srv.URL+"/logout", url.Values{})
	read(t, r)
	if r.StatusCode != http.StatusForbidden {
		t.Fatalf("logout without CSRF token: %d, want 403", r.StatusCode)
	}
	r, _ = c.PostForm(f.srv.URL+"/logout", url.Values{"csrf": {s["csrf"]}})
	read(t, r)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/login" {
		t.Fatalf("logout: %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
	if len(f.api.sessions) != 0 {
		t.Fatalf("API sessions after logout: %v (user.logout not called)", f.api.sessions)
	}
	r, _ = c.Get(f.srv.URL + "/hosts")
	read(t, r)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("page after logout: %d, want 303 to /login", r.StatusCode)
	}
}

func TestLoginFailureShowsAPIMessageEscaped(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	r := f.login(t, c, "wrong<b>")
	body := read(t, r)
	if r.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Incorrect user name or password") {
		t.Fatalf("wrong password: %d %.300q", r.StatusCode, body)
	}
	for _, ck := range r.Cookies() {
		if ck.Name == sessionCookie && ck.Value != "" {
			t.Fatalf("failed login set a session cookie")
		}
	}
}

func TestLoginPageExplainsFirstStart(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	r, _ := c.Get(f.srv.URL + "/login")
	body := read(t, r)
	for _, want := range []string{`<code id="password-file">admin-password</code> in the data directory`, "The file is still there", "Admin"} {
		if !strings.Contains(body, want) {
			t.Errorf("login page lacks %q", want)
		}
	}
	// The page is for anyone: it names the file, never where the
	// server keeps it (issue 25).
	if dir := filepath.Dir(f.pwFile); strings.Contains(body, dir) {
		t.Errorf("login page shows the data directory %s", dir)
	}
	if strings.Contains(body, "generated") {
		t.Error("login page shows the password file's content")
	}
	os.Remove(f.pwFile)
	r, _ = c.Get(f.srv.URL + "/login")
	if body := read(t, r); !strings.Contains(body, "The file is gone") {
		t.Error("login page does not say the password file is gone")
	}
}

func TestLoginCSRF(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	// A cross-site form post has neither the login cookie nor its token.
	r, _ := c.PostForm(f.srv.URL+"/login", url.Values{"username": {"Admin"}, "password": {"right"}})
	read(t, r)
	if r.StatusCode != http.StatusForbidden {
		t.Fatalf("login without CSRF pair: %d, want 403", r.StatusCode)
	}
	// A token from another login cookie does not match this one.
	other := f.client(t)
	r, _ = other.Get(f.srv.URL + "/login")
	tok := csrfInput.FindStringSubmatch(read(t, r))[1]
	c.Get(f.srv.URL + "/login")
	r, _ = c.PostForm(f.srv.URL+"/login", url.Values{"csrf": {tok}, "username": {"Admin"}, "password": {"right"}})
	read(t, r)
	if r.StatusCode != http.StatusForbidden {
		t.Fatalf("login with another visitor's token: %d, want 403", r.StatusCode)
	}
	if len(f.api.sessions) != 0 {
		t.Fatal("a refused login reached user.login")
	}
}

func TestAPIProxyAttachesSessionAndNeedsCSRF(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	read(t, f.login(t, c, "right"))
	s := f.session(t, c)
	call := func(token, origin string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", f.srv.URL+"/ui/api", strings.NewReader(`{"jsonrpc":"2.0","method":"host.get","params":{},"id":7}`))
		if token != "" {
			req.Header.Set(csrfHeader, token)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		r, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return r, read(t, r)
	}
	r, body := call(s["csrf"], f.srv.URL)
	if r.StatusCode != 200 || !strings.Contains(body, `"authorization":"Bearer 0123456789abcdef0123456789abcdef"`) {
		t.Fatalf("proxied call: %d %s", r.StatusCode, body)
	}
	// The API's own time rides along for the page's measurements.
	if st := r.Header.Get("Server-Timing"); !strings.HasPrefix(st, "api;dur=") {
		t.Errorf("proxied call: Server-Timing %q, want api;dur=<ms>", st)
	}
	for _, tc := range []struct{ name, token, origin string }{
		{"no token", "", ""},
		{"wrong token", "AAAA" + s["csrf"][4:], ""},
		{"foreign origin", s["csrf"], "https://evil.example"},
	} {
		r, body := call(tc.token, tc.origin)
		if r.StatusCode != http.StatusForbidden || strings.Contains(body, "Bearer") {
			t.Errorf("%s: %d %s, want 403 without reaching the API", tc.name, r.StatusCode, body)
		}
	}
	var sb strings.Builder
	f.metrics.WriteText(&sb)
	if !strings.Contains(sb.String(), "peregrine_web_csrf_refused_total 3") {
		t.Errorf("metrics do not count 3 CSRF refusals:\n%s", sb.String())
	}
	// Without a session: 401, whatever the token.
	anon := f.client(t)
	req, _ := http.NewRequest("POST", f.srv.URL+"/ui/api", strings.NewReader(`{}`))
	req.Header.Set(csrfHeader, s["csrf"])
	r, _ = anon.Do(req)
	read(t, r)
	if r.StatusCode != http.StatusUnauthorized {
		t.Errorf("no session: %d, want 401", r.StatusCode)
	}
}

func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	for _, p := range []string{"/login", "/assets/app.js", "/overview"} {
		r, err := c.Get(f.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		read(t, r)
		csp := r.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Strict-Transport-Security") != "" {
			t.Errorf("%s: headers %v (no HSTS over plain HTTP)", p, r.Header)
		}
	}
	ui, _ := New(Options{API: f.api, TLS: true, HSTSMaxAge: time.Hour})
	mux := http.NewServeMux()
	ui.Register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/login", nil))
	if got := rec.Header().Get("Strict-Transport-Security"); got != "max-age=3600" {
		t.Errorf("HSTS under TLS = %q", got)
	}
	for _, ck := range rec.Result().Cookies() {
		if !ck.Secure {
			t.Errorf("cookie %s not Secure under TLS", ck.Name)
		}
	}
}

// TestNoInlineScript checks the documents against the CSP: no inline
// script element or event-handler attribute, and the modules never
// write HTML from strings (user data must go in as text).
func TestNoInlineScript(t *testing.T) {
	docs := []string{"pages/app.html", "pages/login.html"}
	inline := regexp.MustCompile(`(?i)<script(?:[^>]*)>\s*[^<\s]|\son[a-z]+=`)
	for _, d := range docs {
		b, err := pageFS.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		if m := inline.Find(b); m != nil {
			t.Errorf("%s has inline script: %q", d, m)
		}
	}
	f := newFixture(t)
	for name, a := range f.mustUI(t).assets.files {
		if !strings.HasSuffix(name, ".js") || strings.Contains(name, "/vendor/") {
			continue
		}
		if regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(`).Match(a.body) {
			t.Errorf("%s writes HTML from strings or evaluates code", name)
		}
	}
}

func (f *fixture) mustUI(t *testing.T) *UI {
	ui, err := New(Options{API: f.api})
	if err != nil {
		t.Fatal(err)
	}
	return ui
}

func TestAssetsRevalidate(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	r, _ := c.Get(f.srv.URL + "/assets/vendor/uplot/uPlot.esm.js")
	body := read(t, r)
	etag := r.Header.Get("ETag")
	if r.StatusCode != 200 || etag == "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/javascript") || !strings.Contains(body, "uPlot") {
		t.Fatalf("uPlot: %d %v", r.StatusCode, r.Header)
	}
	req, _ := http.NewRequest("GET", f.srv.URL+"/assets/vendor/uplot/uPlot.esm.js", nil)
	req.Header.Set("If-None-Match", etag)
	r, _ = c.Do(req)
	read(t, r)
	if r.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation: %d, want 304", r.StatusCode)
	}
	// Versioned URLs (what pages link) are cached for good; another
	// version's are served but revalidated.
	ui := f.mustUI(t)
	r, _ = c.Get(f.srv.URL + ui.assets.prefix() + "pages/graph.js")
	read(t, r)
	if r.StatusCode != 200 || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Fatalf("versioned asset: %d %q", r.StatusCode, r.Header.Get("Cache-Control"))
	}
	r, _ = c.Get(f.srv.URL + "/assets/v-old/pages/graph.js")
	read(t, r)
	if r.StatusCode != 200 || r.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("asset of another version: %d %q", r.StatusCode, r.Header.Get("Cache-Control"))
	}
	r, _ = c.Get(f.srv.URL + "/assets/nope.js")
	read(t, r)
	if r.StatusCode != 404 {
		t.Fatalf("missing asset: %d", r.StatusCode)
	}
	r, _ = c.Get(f.srv.URL + "/assets/vendor/uplot/LICENSE")
	if body := read(t, r); !strings.Contains(body, "MIT") {
		t.Fatal("uPlot's licence is not served beside it")
	}
}
