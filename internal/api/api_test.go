package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// fakeAuth is a test double for the auth store: one user per session.
// A user without an entry in rights may do anything (so that tests of
// other things need not set permissions up); permission tests use the
// real store (perm_test.go).
type fakeAuth struct {
	sessions map[string]User
	rights   map[uint64]auth.Rights
}

func (f *fakeAuth) Rights(_ context.Context, u User) (auth.Rights, error) {
	if r, ok := f.rights[u.ID]; ok {
		return r, nil
	}
	return auth.AllRights(), nil
}

func (f *fakeAuth) Authenticate(_ context.Context, s string) (User, error) {
	if u, ok := f.sessions[s]; ok {
		return u, nil
	}
	if s == "expired" {
		return User{}, ErrSessionExpired
	}
	return User{}, ErrBadCredentials
}

func (f *fakeAuth) Login(_ context.Context, user, pass string) (string, User, error) {
	if user == "Admin" && pass == "right-password" {
		return "0123456789abcdef0123456789abcdef", User{ID: 1, Username: "Admin", Role: RoleSuperAdmin}, nil
	}
	return "", User{}, ErrBadCredentials
}

func (f *fakeAuth) Logout(context.Context, string) error { return nil }

type fakeTrends struct{}

func (fakeTrends) ReadTrends(_ context.Context, item uint64, from, till int64) ([]Trend, error) {
	return []Trend{{Clock: 3600, Num: 60, Min: 1, Max: 3, Avg: 2}, {Clock: 7200, Num: 30, Min: 0.5, Max: 1.5, Avg: 1}}, nil
}

type fixture struct {
	srv   *httptest.Server
	cat   *catalog.Catalog
	store *memstore.Store
}

func newFixture(t *testing.T, maxRows int) *fixture {
	t.Helper()
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h1", Groups: []string{"G"}, Items: []catalog.ItemSpec{
		{Key: "f1", ValueType: "float"}, {Key: "f2", ValueType: "float"}, {Key: "u1", ValueType: "unsigned"}, {Key: "s1", ValueType: "character"},
	}}}})
	st := memstore.New()
	snap := cat.Snapshot()
	f1, f2, u1, s1 := snap.Lookup("h1", "f1").ID, snap.Lookup("h1", "f2").ID, snap.Lookup("h1", "u1").ID, snap.Lookup("h1", "s1").ID
	var v []history.Sample
	for i := 0; i < 10; i++ {
		v = append(v,
			history.Sample{ItemID: f1, Clock: 1000 + int64(2*i), Type: history.Float, F: float64(i) + 0.5},
			history.Sample{ItemID: f2, Clock: 1001 + int64(2*i), Type: history.Float, F: float64(-i)},
			history.Sample{ItemID: u1, Clock: 1000 + int64(i), NS: 7, Type: history.Uint, U: 18446744073709551615},
			history.Sample{ItemID: s1, Clock: 1000 + int64(i), Type: history.Str, S: `say "hi"`})
	}
	st.Write(context.Background(), v)
	api := New(Options{Catalog: cat, History: st, Trends: fakeTrends{}, MaxRows: maxRows, MaxBodyBytes: 4096,
		Auth: &fakeAuth{sessions: map[string]User{"tok": {ID: 1, Username: "Admin", Role: RoleSuperAdmin}, "ro": {ID: 2, Username: "viewer", Role: RoleUser}}}})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return &fixture{srv: srv, cat: cat, store: st}
}

func (f *fixture) post(t *testing.T, body string, header ...string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json-rpc")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b.String())
	}
	return b.String()
}

func (f *fixture) id(name string) uint64 { return f.cat.Snapshot().Lookup("h1", name).ID }

func TestEnvelopeAndErrors(t *testing.T) {
	f := newFixture(t, 1000)
	cases := []struct{ body, want string }{
		{`{"jsonrpc":"2.0","method":"apiinfo.version","params":{},"id":1}`, `{"jsonrpc":"2.0","result":"6.0.14","id":1}`},
		{`{"jsonrpc":"2.0","method":"apiinfo.version","params":[],"id":"x","auth":"tok"}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params.","data":"The \"apiinfo.version\" method must be called without the \"auth\" parameter."},"id":"x"}`},
		{`{"jsonrpc":"2.0","method":"apiinfo.version"`, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error","data":"Invalid JSON. An error occurred on the server while parsing the JSON text."},"id":null}`},
		{`{"jsonrpc":"1.0","method":"apiinfo.version","params":{},"id":1}`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request.","data":"Invalid parameter \"/jsonrpc\": value must be \"2.0\"."},"id":1}`},
		{`{"jsonrpc":"2.0","method":"host.frobnicate","params":{},"id":1,"auth":"tok"}`, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found.","data":"Incorrect method \"host.frobnicate\"."},"id":1}`},
		{`{"jsonrpc":"2.0","method":"history.get","params":{},"id":2}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params.","data":"Not authorized."},"id":2}`},
		// A token that opens no session: Zabbix 6.0's answer (recorded).
		{`{"jsonrpc":"2.0","method":"history.get","params":{},"id":2,"auth":"wrong"}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params.","data":"Session terminated, re-login, please."},"id":2}`},
		{`{"jsonrpc":"2.0","method":"history.get","params":{},"id":2,"auth":"expired"}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params.","data":"Session terminated, re-login, please."},"id":2}`},
		{`{"jsonrpc":"2.0","method":"history.get","params":{"limit":"many"},"id":3,"auth":"tok"}`, `"code":-32602`},
		{`{"jsonrpc":"2.0","method":"history.get","params":{"history":9},"id":3,"auth":"tok"}`, `Invalid parameter \"/history\"`},
		// A wrong password is Zabbix 6.0's permission error (recorded
		// from 6.0.14).
		{`{"jsonrpc":"2.0","method":"user.login","params":{"username":"Admin","password":"nope"},"id":4}`, `{"jsonrpc":"2.0","error":{"code":-32500,"message":"Application error.","data":"Incorrect user name or password or account is temporarily blocked."},"id":4}`},
		{`{"jsonrpc":"2.0","method":"user.login","params":{"username":"Admin","password":"right-password"},"id":5}`, `{"jsonrpc":"2.0","result":"0123456789abcdef0123456789abcdef","id":5}`},
		{`{"jsonrpc":"2.0","method":"user.login","params":{"user":"Admin","password":"right-password"},"id":6}`, `"result":"0123456789abcdef0123456789abcdef"`},
		{`{"jsonrpc":"2.0","method":"user.login","params":{"user":"Admin","username":"Admin","password":"x"},"id":7}`, `unexpected parameter \"user\"`},
		{`[{"jsonrpc":"2.0","method":"apiinfo.version","params":{},"id":1},{"jsonrpc":"2.0","method":"apiinfo.version","params":{}},{"jsonrpc":"2.0","method":"nope","params":{},"id":3}]`,
			`[{"jsonrpc":"2.0","result":"6.0.14","id":1},{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found.","data":"Incorrect API \"nope\"."},"id":3}]`},
		{`{"jsonrpc":"2.0","method":"apiinfo.version","params":{},"id":1,"pad":"` + strings.Repeat("x", 5000) + `"}`, `larger than the configured maximum`},
	}
	for _, c := range cases {
		got := f.post(t, c.body)
		if !strings.Contains(got, c.want) {
			t.Errorf("request %.90s\n got %s\nwant %s", c.body, got, c.want)
		}
	}
	// Bearer header instead of "auth".
	got := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"itemids":"%d","history":0,"limit":1},"id":9}`, f.id("f1")), "Authorization", "Bearer tok")
	if !strings.Contains(got, `"result":[{"itemid":"`) {
		t.Fatalf("bearer: %s", got)
	}
}

type row struct {
	ItemID, Clock, Value, NS string
}

func (f *fixture) history(t *testing.T, params string) []row {
	t.Helper()
	got := f.post(t, `{"jsonrpc":"2.0","method":"history.get","params":`+params+`,"id":1,"auth":"ro"}`)
	var resp struct {
		Result []row
		Error  *struct{ Data string }
	}
	if err := json.Unmarshal([]byte(got), &resp); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if resp.Error != nil {
		t.Fatalf("%s: %s", params, resp.Error.Data)
	}
	return resp.Result
}

func TestHistoryGet(t *testing.T) {
	f := newFixture(t, 1000)
	f1, f2, u1, s1 := f.id("f1"), f.id("f2"), f.id("u1"), f.id("s1")
	// Default history type is 3 (unsigned); float items need history=0.
	if r := f.history(t, fmt.Sprintf(`{"itemids":["%d"]}`, f1)); len(r) != 0 {
		t.Fatalf("float item read as unsigned: %v", r)
	}
	r := f.history(t, fmt.Sprintf(`{"itemids":%d,"time_from":"1002","time_till":1005}`, u1))
	if len(r) != 4 || r[0].Clock != "1002" || r[0].Value != "18446744073709551615" || r[0].NS != "7" || r[0].ItemID != fmt.Sprint(u1) {
		t.Fatalf("unsigned: %+v", r)
	}
	// Two items merged by clock, descending, limited.
	r = f.history(t, fmt.Sprintf(`{"history":0,"itemids":[%d,"%d"],"sortfield":"clock","sortorder":"DESC","limit":3}`, f1, f2))
	want := []string{"1019", "1018", "1017"}
	for i, w := range want {
		if r[i].Clock != w {
			t.Fatalf("merged desc: %+v", r)
		}
	}
	if r[0].Value != "-9" || r[1].Value != "9.5" {
		t.Fatalf("values: %+v", r)
	}
	// hostids selects the host's items of that type.
	h := f.cat.Snapshot().Host("h1").ID
	if r := f.history(t, fmt.Sprintf(`{"history":0,"hostids":"%d","sortfield":["clock"],"sortorder":"ASC"}`, h)); len(r) != 20 || r[0].Clock != "1000" || r[1].Clock != "1001" {
		t.Fatalf("hostids: %d rows %+v", len(r), r[:2])
	}
	// Strings are JSON-escaped; output subsets.
	got := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":1,"itemids":%d,"output":["value"],"limit":1},"id":1,"auth":"ro"}`, s1))
	if got != `{"jsonrpc":"2.0","result":[{"value":"say \"hi\""}],"id":1}` {
		t.Fatalf("string output: %s", got)
	}
	got = f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":%d,"countOutput":true},"id":1,"auth":"ro"}`, f1))
	if got != `{"jsonrpc":"2.0","result":"10","id":1}` {
		t.Fatalf("countOutput: %s", got)
	}
}

func TestHistoryGetRowBound(t *testing.T) {
	f := newFixture(t, 15)
	got := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"history.get","params":{"history":0,"itemids":[%d,%d]},"id":1,"auth":"ro"}`, f.id("f1"), f.id("f2")))
	if !strings.Contains(got, `"code":-32500`) || !strings.Contains(got, "more than 15 history rows") {
		t.Fatalf("over the bound: %s", got)
	}
	// With a limit under the bound it is served.
	if r := f.history(t, fmt.Sprintf(`{"history":0,"itemids":[%d,%d],"limit":12}`, f.id("f1"), f.id("f2"))); len(r) != 12 {
		t.Fatalf("limited: %d rows", len(r))
	}
}

func TestTrendGet(t *testing.T) {
	f := newFixture(t, 1000)
	got := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"trend.get","params":{"itemids":["%d","%d"],"limit":1},"id":1,"auth":"ro"}`, f.id("f1"), f.id("s1")))
	want := fmt.Sprintf(`{"jsonrpc":"2.0","result":[{"itemid":"%d","clock":"3600","num":"60","value_min":"1","value_avg":"2","value_max":"3"}],"id":1}`, f.id("f1"))
	if got != want {
		t.Fatalf("trend.get:\n got %s\nwant %s", got, want)
	}
}
