package http

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
)

// loginSite is a small site with a login form: GET /login sets a
// session cookie and hides a token in the form; POST /login with the
// token, user=admin and the session cookie sets auth=ok and redirects
// to /home, which greets only a logged-in session. The same flow as the
// one run against Zabbix 6.0.14 for the recorded values.
func loginSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s5sess", Path: "/"})
		w.Write([]byte(`<html><form method="post"><input type="hidden" name="csrf" value="TOK42xyz"></form></html>`))
	})
	mux.HandleFunc("HEAD /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s5sess", Path: "/"})
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("session")
		if r.ParseForm() != nil || r.PostForm.Get("csrf") != "TOK42xyz" || r.PostForm.Get("user") != "admin" || err != nil || c.Value != "s5sess" {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte("bad login"))
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "auth", Value: "ok", Path: "/"})
		http.Redirect(w, r, "/home?from=login", http.StatusFound)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("auth"); err != nil || c.Value != "ok" {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte("not logged in"))
			return
		}
		w.Write([]byte("Welcome, admin! q=" + r.URL.RawQuery))
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	return mux
}

// LoginScenario is the login flow as a scenario on base: step 1 gets
// the form and extracts the token into {csrf}, step 2 posts it with
// {user} (a scenario variable) and follows the redirect, step 3 checks
// the greeting. Item IDs are 1-3 for the scenario's items and
// 10*step+1..3 for the steps'.
func loginScenario(base string) *catalog.HTTPTest {
	t := &catalog.HTTPTest{ID: 1, Name: "login", HTTPTestFields: catalog.DefaultHTTPTestFields}
	t.Variables = []catalog.HTTPField{{Name: "{user}", Value: "admin"}}
	t.Steps = []catalog.HTTPStep{
		{Name: "get login", No: 1, URL: base + "/login", StatusCodes: "200", Required: "csrf", Timeout: "15s", FollowRedirects: 1,
			Variables: []catalog.HTTPField{{Name: "{csrf}", Value: `regex:name="csrf" value="([^"]+)"`}}},
		{Name: "post login", No: 2, URL: base + "/login", PostType: catalog.StepPostForm, StatusCodes: "200", Required: "Welcome", Timeout: "15s", FollowRedirects: 1,
			PostFields: []catalog.HTTPField{{Name: "csrf", Value: "{csrf}"}, {Name: "user", Value: "{user}"}}},
		{Name: "check home", No: 3, URL: base + "/home", Required: "Welcome, admin", Timeout: "15s", FollowRedirects: 1,
			QueryFields: []catalog.HTTPField{{Name: "t", Value: "{csrf}"}}},
	}
	t.ItemIDs = [3]uint64{1, 2, 3}
	for i := range t.Steps {
		b := uint64(10 * (i + 1))
		t.Steps[i].ItemIDs = [3]uint64{b + 1, b + 2, b + 3}
	}
	return t
}

// runScenario runs t once through the checker and returns its result
// and every value by item ID.
func runScenario(t *testing.T, sc *catalog.HTTPTest) (*poll.Result, map[uint64]string) {
	t.Helper()
	c := New(Options{
		Item:     func(id uint64) *catalog.Item { return &catalog.Item{ID: id, Type: catalog.WebItem} },
		HTTPTest: func(uint64) *catalog.HTTPTest { return sc },
	})
	defer c.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	var got *poll.Result
	c.Scenarios().Check(context.Background(), []poll.Check{{ItemID: 2, Key: "web.test.fail[" + sc.Name + "]"}}, func(r *poll.Result) {
		got = r
		wg.Done()
	})
	wg.Wait()
	vals := map[uint64]string{2: string(got.Value)}
	for _, v := range got.Also {
		vals[v.ItemID] = string(v.Value)
	}
	return got, vals
}

// TestScenarioLogin: the three steps run in order with the cookies of
// the earlier ones, the token extracted by step 1 posted by step 2, the
// redirect followed; every step's values and the scenario's (fail 0,
// no error value, the speed the floor of the steps' average) as 6.0.14
// stores them.
func TestScenarioLogin(t *testing.T) {
	srv := httptest.NewServer(loginSite())
	defer srv.Close()
	r, v := runScenario(t, loginScenario(srv.URL))
	if r.Status != poll.OK || v[2] != "0" {
		t.Fatalf("fail = %q (%s %s), values %v", v[2], r.Status, r.Error, v)
	}
	if _, ok := v[3]; ok {
		t.Errorf("web.test.error got %q on success; 6.0.14 stores none", v[3])
	}
	for _, s := range []uint64{10, 20, 30} {
		if v[s+3] != "200" || v[s+1] == "" || v[s+2] == "" {
			t.Errorf("step %d: in %q time %q code %q", s/10, v[s+1], v[s+2], v[s+3])
		}
	}
	if v[1] == "" || strings.Contains(v[1], ".") {
		t.Errorf("scenario speed %q", v[1])
	}
}

// TestScenarioFailures: a scenario stops at its first failing step with
// 6.0.14's messages; a step failed by its checks (status, required,
// variable) stores its values, one that got no response does not.
func TestScenarioFailures(t *testing.T) {
	srv := httptest.NewServer(loginSite())
	defer srv.Close()
	f := func(name string, mod func(*catalog.HTTPTest), fail, msg string, stepVals bool) {
		t.Helper()
		sc := loginScenario(srv.URL)
		mod(sc)
		_, v := runScenario(t, sc)
		if v[2] != fail || !strings.HasPrefix(v[3], msg) {
			t.Errorf("%s: fail %q error %q, want %q %q", name, v[2], v[3], fail, msg)
		}
		n := 0
		switch fail {
		case "1":
			n = 10
		case "2":
			n = 20
		}
		if _, ok := v[uint64(n+3)]; ok != stepVals {
			t.Errorf("%s: step values stored: %v, want %v (%v)", name, ok, stepVals, v)
		}
		if _, ok := v[uint64(n+13)]; ok {
			t.Errorf("%s: a step after the failed one ran", name)
		}
		if v[1] == "" {
			t.Errorf("%s: no scenario speed", name)
		}
	}
	f("status", func(s *catalog.HTTPTest) { s.Steps[0].StatusCodes = "201,300-302" }, "1",
		`response code "200" did not match any of the required status codes "201,300-302"`, true)
	f("required", func(s *catalog.HTTPTest) { s.Steps[1].Required = "never-there" }, "2",
		`required pattern "never-there" was not found on `+srv.URL+"/login", true)
	f("variable", func(s *catalog.HTTPTest) { s.Steps[0].Variables[0].Value = "regex:nomatch([0-9]+)" }, "1",
		`error in step variables "{csrf}=regex:nomatch([0-9]+)": cannot extract the value of "{csrf}" from response`, true)
	f("no cookie without step 1", func(s *catalog.HTTPTest) {
		s.Steps = s.Steps[1:]
		s.Steps[0].PostFields[0].Value = "TOK42xyz"
		s.Steps[0].ItemIDs, s.Steps[1].ItemIDs = [3]uint64{11, 12, 13}, [3]uint64{21, 22, 23}
	}, "1",
		`response code "403" did not match`, true)
	f("refused", func(s *catalog.HTTPTest) { s.Steps[0].URL = "http://127.0.0.1:1/x" }, "1", "Couldn't connect to server: ", false)
	f("timeout", func(s *catalog.HTTPTest) { s.Steps[0].URL = srv.URL + "/slow"; s.Steps[0].Timeout = "1s" }, "1",
		"Timeout was reached: Operation timed out after ", false)
	f("headers only is a HEAD with no body", func(s *catalog.HTTPTest) { s.Steps[0].RetrieveMode = 1; s.Steps[0].Required = "TOK42" }, "1",
		`required pattern "TOK42" was not found on `, true)
}

// BenchmarkScenarioLogin runs the three-step login scenario against a
// local site: the cost of one scenario run (three requests, a cookie
// jar, a variable) beside the site's own.
//
//	go test ./internal/poll/http -run '^$' -bench ScenarioLogin -benchmem -count 6
func BenchmarkScenarioLogin(b *testing.B) {
	srv := httptest.NewServer(loginSite())
	defer srv.Close()
	sc := loginScenario(srv.URL)
	c := New(Options{
		Item:     func(id uint64) *catalog.Item { return &catalog.Item{ID: id, Type: catalog.WebItem} },
		HTTPTest: func(uint64) *catalog.HTTPTest { return sc },
	})
	defer c.Close()
	batch := []poll.Check{{ItemID: 2, Key: "web.test.fail[login]"}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		done := make(chan *poll.Result, 1)
		c.Scenarios().Check(context.Background(), batch, func(r *poll.Result) { done <- r })
		if r := <-done; string(r.Value) != "0" {
			b.Fatalf("fail = %q", r.Value)
		}
	}
}
