package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/auth"
)

// apiClient talks JSON-RPC to a test server.
type apiClient struct {
	t    *testing.T
	url  string
	auth string // sent as "auth"
	// bearer, when set, is sent as Authorization: Bearer instead.
	bearer string
}

func newAPIClient(t *testing.T, s *Server) *apiClient {
	return &apiClient{t: t, url: "http://" + s.HTTPAddr().String() + "/api_jsonrpc.php"}
}

// raw posts body and returns the response body.
func (c *apiClient) raw(body []byte) string {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json-rpc")
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

type rpcResponse struct {
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
		Data    string
	}
}

// call invokes method and returns the response, decoded.
func (c *apiClient) call(method string, params any) rpcResponse {
	c.t.Helper()
	req := map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
	if c.auth != "" {
		req["auth"] = c.auth
	}
	b, _ := json.Marshal(req)
	out := c.raw(b)
	var r rpcResponse
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		c.t.Fatalf("%s: undecodable response %q: %v", method, out, err)
	}
	return r
}

// ok invokes method, fails the test on an error and decodes the result.
func (c *apiClient) ok(method string, params any, result any) {
	c.t.Helper()
	r := c.call(method, params)
	if r.Error != nil {
		c.t.Fatalf("%s: error %d %s %s", method, r.Error.Code, r.Error.Message, r.Error.Data)
	}
	if result != nil {
		if err := json.Unmarshal(r.Result, result); err != nil {
			c.t.Fatalf("%s: result %s: %v", method, r.Result, err)
		}
	}
}

// fails invokes method and checks the error's code and that its data
// contains want.
func (c *apiClient) fails(method string, params any, code int, want string) {
	c.t.Helper()
	r := c.call(method, params)
	if r.Error == nil {
		c.t.Fatalf("%s: succeeded with %s, want error %d %q", method, r.Result, code, want)
	}
	if r.Error.Code != code || !strings.Contains(r.Error.Data, want) {
		c.t.Fatalf("%s: error %d %q, want %d containing %q", method, r.Error.Code, r.Error.Data, code, want)
	}
}

func (c *apiClient) login(user, password string) string {
	c.t.Helper()
	var sid string
	saved := c.auth
	c.auth = ""
	c.ok("user.login", map[string]string{"username": user, "password": password}, &sid)
	c.auth = saved
	return sid
}

func adminLogin(t *testing.T, s *Server) *apiClient {
	t.Helper()
	pw, err := os.ReadFile(filepath.Join(s.cfg.DataDir, "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	c := newAPIClient(t, s)
	c.auth = c.login("Admin", strings.TrimSpace(string(pw)))
	return c
}

// TestAPIEveryMethodNeedsAuth calls every served method without
// credentials, and with a bogus token: only apiinfo.version answers.
func TestAPIEveryMethodNeedsAuth(t *testing.T) {
	s := startServer(t, integrationSpec())
	c := newAPIClient(t, s)
	methods := s.API.Methods()
	names := make([]string, 0, len(methods))
	for m := range methods {
		names = append(names, m)
	}
	sort.Strings(names)
	if len(names) < 15 {
		t.Fatalf("only %d methods served: %v", len(names), names)
	}
	for _, m := range names {
		switch m {
		case "apiinfo.version":
			c.ok(m, []any{}, nil)
			continue
		case "user.login", "user.checkAuthentication":
			// These take credentials as parameters: with none they fail.
			if r := c.call(m, map[string]any{}); r.Error == nil {
				t.Errorf("%s without credentials succeeded: %s", m, r.Result)
			}
			continue
		}
		if methods[m] == 0 {
			t.Errorf("method %s is served without authentication", m)
		}
		c.fails(m, map[string]any{}, -32602, "Not authorized.")
		c.bearer = strings.Repeat("ab", 32)
		c.fails(m, map[string]any{}, -32602, "Session terminated, re-login, please.")
		c.bearer = ""
	}
}

// TestAPIRolesAndAccounts: the admin creates a read-only user and an
// admin; the read-only user reads but cannot create, push or manage
// users; API tokens work as Bearer and stop working once deleted.
func TestAPIRolesAndAccounts(t *testing.T) {
	s := startServer(t, integrationSpec())
	admin := adminLogin(t, s)

	// The read-only user reads the Integration host group through a user
	// group; without one they would see nothing.
	var groups []struct{ GroupID string }
	admin.ok("hostgroup.get", map[string]any{"filter": map[string]any{"name": "Integration"}}, &groups)
	var ug struct{ UsrgrpIDs []string }
	admin.ok("usergroup.create", map[string]any{"name": "Viewers", "rights": []map[string]any{{"id": groups[0].GroupID, "permission": 2}}}, &ug)
	var created struct{ UserIDs []string }
	admin.ok("user.create", []map[string]any{
		{"username": "viewer", "passwd": "V1ewer-secret", "roleid": "1", "usrgrps": []map[string]string{{"usrgrpid": ug.UsrgrpIDs[0]}}},
		{"username": "ops", "passwd": "0ps-secret-1", "roleid": 2, "usrgrps": []map[string]string{{"usrgrpid": "12"}}},
	}, &created)
	if len(created.UserIDs) != 2 {
		t.Fatalf("user.create: %+v", created)
	}
	admin.fails("user.create", map[string]any{"username": "viewer", "passwd": "another-password", "roleid": "1", "usrgrps": []map[string]string{{"usrgrpid": "7"}}}, -32602, `User with username "viewer" already exists.`)
	admin.fails("user.create", map[string]any{"username": "x", "passwd": "short", "roleid": "1"}, -32602, `"/1"`)
	admin.fails("user.create", map[string]any{"username": "x", "passwd": "long-enough", "roleid": "9", "usrgrps": []map[string]string{{"usrgrpid": "7"}}}, -32602, `User role with ID "9" is not available.`)
	admin.fails("user.create", map[string]any{"username": "x", "passwd": "long-enough"}, -32602, `the parameter "roleid" is missing`)
	admin.fails("user.create", map[string]any{"username": "x", "passwd": "long-enough", "roleid": 1, "bogus": 1}, -32602, `unexpected parameter "bogus"`)
	admin.fails("user.create", map[string]any{"username": "x", "passwd": "long-enough", "roleid": 1}, -32602, `the parameter "usrgrps" is missing`)
	var users []map[string]string
	admin.ok("user.get", map[string]any{"output": "extend"}, &users)
	if len(users) != 4 { // with Zabbix's guest
		t.Fatalf("user.get as super admin: %v", users)
	}
	users = nil
	admin.ok("user.get", map[string]any{"output": []string{"username"}, "filter": map[string]any{"username": "ops"}}, &users)
	// The user's ID comes with any output list, as in Zabbix 6.0.
	if len(users) != 1 || users[0]["username"] != "ops" || users[0]["userid"] == "" || len(users[0]) != 2 {
		t.Fatalf("user.get filter+output: %v", users)
	}
	var n string
	admin.ok("user.get", map[string]any{"search": map[string]any{"username": "VIEW"}, "countOutput": true}, &n)
	if n != "1" {
		t.Fatalf("user.get search countOutput: %q", n)
	}
	// An ID that is not one selects nothing (recorded from Zabbix 6.0.14).
	users = nil
	admin.ok("user.get", map[string]any{"userids": "x1"}, &users)
	if len(users) != 0 {
		t.Fatalf("user.get userids x1: %v", users)
	}

	viewer := newAPIClient(t, s)
	viewer.auth = viewer.login("viewer", "V1ewer-secret")
	viewer.ok("user.get", map[string]any{}, &users)
	if len(users) != 1 || users[0]["username"] != "viewer" || users[0]["roleid"] != "1" {
		t.Fatalf("user.get as a user sees only themselves: %v", users)
	}
	viewer.ok("history.get", map[string]any{"itemids": "1", "limit": 1}, nil)
	var hosts []map[string]string
	viewer.ok("host.get", map[string]any{}, &hosts)
	if len(hosts) != 1 || hosts[0]["host"] != "peregrine-test" {
		t.Fatalf("host.get as a member of Viewers: %v", hosts)
	}
	for m, p := range map[string]any{
		"user.create":  map[string]any{"username": "evil", "passwd": "3vil-secret", "roleid": "3", "usrgrps": []map[string]string{{"usrgrpid": "7"}}},
		"user.delete":  []string{created.UserIDs[1]},
		"history.push": []map[string]any{{"host": "peregrine-test", "key": "trap.uint", "value": 1}},
	} {
		viewer.fails(m, p, -32602, `No permissions to call "`+m+`".`)
	}
	// Every write method of the API is refused to the read-only role, in
	// Zabbix 6.0's words.
	for m, role := range s.API.Methods() {
		if role > api.RoleUser {
			viewer.fails(m, map[string]any{}, -32602, `No permissions to call "`+m+`".`)
		}
	}
	viewer.fails("user.update", map[string]any{"userid": created.UserIDs[0], "roleid": "3"}, -32500, "No permissions")
	viewer.fails("user.update", map[string]any{"userid": created.UserIDs[0], "passwd": "New-v1ewer-secret"}, -32602, "current_passwd")
	viewer.fails("user.update", map[string]any{"userid": created.UserIDs[0], "passwd": "New-v1ewer-secret", "current_passwd": "wrong-one"}, -32602, "incorrect current password")

	// Promotion takes effect on the running session.
	admin.ok("user.update", map[string]any{"userid": created.UserIDs[0], "roleid": "2"}, nil)
	viewer.ok("history.push", []map[string]any{{"host": "peregrine-test", "key": "trap.uint", "value": 1, "clock": 1700000000}}, nil)

	// Tokens: created without a secret, generated once, used as Bearer.
	var tok struct{ TokenIDs []string }
	viewer.ok("token.create", map[string]any{"name": "grafana", "description": "dashboards"}, &tok)
	viewer.fails("token.create", map[string]any{"name": "grafana"}, -32602, "already exists")
	viewer.fails("token.create", map[string]any{"name": "other", "userid": "1"}, -32500, "No permissions")
	var gen []struct{ TokenID, Token string }
	viewer.ok("token.generate", tok.TokenIDs, &gen)
	if len(gen) != 1 || len(gen[0].Token) != 64 {
		t.Fatalf("token.generate: %+v", gen)
	}
	bearer := newAPIClient(t, s)
	bearer.bearer = gen[0].Token
	var toks []map[string]string
	bearer.ok("token.get", map[string]any{"output": "extend"}, &toks)
	if len(toks) != 1 || toks[0]["name"] != "grafana" || toks[0]["status"] != "0" || toks[0]["userid"] != created.UserIDs[0] {
		t.Fatalf("token.get: %v", toks)
	}
	if _, ok := toks[0]["token"]; ok {
		t.Fatal("token.get must never return the secret")
	}
	// The "auth" field takes a token too.
	tokAuth := newAPIClient(t, s)
	tokAuth.auth = gen[0].Token
	tokAuth.ok("host.get", map[string]any{}, nil)
	// Another user's tokens are invisible and undeletable to a non-super admin.
	ops := newAPIClient(t, s)
	ops.auth = ops.login("ops", "0ps-secret-1")
	ops.ok("token.get", map[string]any{}, &toks)
	if len(toks) != 0 {
		t.Fatalf("ops sees another user's tokens: %v", toks)
	}
	ops.fails("token.delete", tok.TokenIDs, -32500, "No permissions")
	admin.ok("token.get", map[string]any{"userids": created.UserIDs[0]}, &toks)
	if len(toks) != 1 {
		t.Fatalf("super admin token.get by userids: %v", toks)
	}
	viewer.ok("token.delete", tok.TokenIDs, nil)
	bearer.fails("host.get", map[string]any{}, -32602, "Session terminated, re-login, please.")

	// Own password change with the current one ends the user's sessions.
	viewer.ok("user.update", map[string]any{"userid": created.UserIDs[0], "passwd": "New-v1ewer-secret", "current_passwd": "V1ewer-secret"}, nil)
	viewer.fails("host.get", map[string]any{}, -32602, "")
	viewer.auth = viewer.login("viewer", "New-v1ewer-secret")

	// Deleting a user ends its sessions; nobody deletes themselves.
	admin.fails("user.delete", []string{"1"}, -32602, "delete himself")
	admin.ok("user.delete", []string{created.UserIDs[0]}, nil)
	viewer.fails("host.get", map[string]any{}, -32602, "")
	admin.fails("user.delete", []string{created.UserIDs[0]}, -32500, "No permissions")
}

// TestAPIWrongPasswordsSlowedAndBlocked: every failed login takes at
// least the configured delay (a floor the server enforces, not a
// measurement), and five failures block the account even for the right
// password, while other users keep logging in.
func TestAPIWrongPasswordsSlowedAndBlocked(t *testing.T) {
	s := startServer(t, integrationSpec())
	admin := adminLogin(t, s)
	admin.ok("user.create", map[string]any{"username": "target", "passwd": "T4rget-secret", "roleid": "1", "usrgrps": []map[string]string{{"usrgrpid": "7"}}}, nil)
	c := newAPIClient(t, s)
	var wg sync.WaitGroup
	for i := 0; i < auth.DefaultMaxFailures; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newAPIClient(t, s)
			start := time.Now()
			r := c.call("user.login", map[string]string{"username": "target", "password": fmt.Sprintf("guess-%d", i)})
			if took := time.Since(start); took < auth.DefaultFailDelay {
				t.Errorf("a failed login answered after %v, before the %v delay", took, auth.DefaultFailDelay)
			}
			if r.Error == nil || !strings.Contains(r.Error.Data, "Incorrect user name or password") {
				t.Errorf("wrong password: %+v", r)
			}
		}()
	}
	wg.Wait()
	// A blocked account is Zabbix 6.0's permission error, -32500.
	c.fails("user.login", map[string]string{"username": "target", "password": "T4rget-secret"}, -32500, "temporarily blocked")
	start := time.Now()
	// An unknown user fails the same way and as slowly (no user
	// enumeration): -32500, which Zabbix 6.0 gives a wrong password (it
	// gives -32602 for a name it does not know, which tells which names
	// exist).
	c.fails("user.login", map[string]string{"username": "nobody", "password": "whatever-pw"}, -32500, "Incorrect user name or password")
	if took := time.Since(start); took < auth.DefaultFailDelay {
		t.Errorf("unknown user answered after %v", took)
	}
	admin.ok("host.get", map[string]any{}, nil)
}

// TestAPIBadRequestsKeepServing sends malformed and hostile requests and
// checks each gets the right JSON-RPC error while the server goes on
// serving a normal client.
func TestAPIBadRequestsKeepServing(t *testing.T) {
	s := startServer(t, integrationSpec())
	admin := adminLogin(t, s)
	raw := func(body string, code int, want string) {
		t.Helper()
		out := admin.raw([]byte(body))
		var r rpcResponse
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Error == nil {
			t.Fatalf("%.60q: response %q", body, out)
		}
		if r.Error.Code != code || !strings.Contains(r.Error.Data, want) {
			t.Fatalf("%.60q: error %d %q, want %d %q", body, r.Error.Code, r.Error.Data, code, want)
		}
	}
	raw(`{"jsonrpc":"2.0","method":"host.get",`, -32700, "Invalid JSON")
	raw(`not json at all`, -32700, "Invalid JSON")
	raw(`[`, -32700, "Invalid JSON")
	raw(`[]`, -32600, "The received JSON is not a valid JSON-RPC request.") // Zabbix 6.0's text (recorded)
	raw(`{"jsonrpc":"1.0","method":"host.get","params":{},"id":1}`, -32600, `"/jsonrpc"`)
	raw(`{"jsonrpc":"2.0","params":{},"id":1}`, -32600, `"method" is missing`)
	raw(`{"jsonrpc":"2.0","method":"host.get","params":"x","id":1}`, -32600, `"/params"`)
	raw(`{"jsonrpc":"2.0","method":"nosuch.get","params":{},"id":1}`, -32601, `Incorrect API "nosuch"`)
	raw(`{"jsonrpc":"2.0","method":"host.nosuch","params":{},"id":1}`, -32601, `Incorrect method "host.nosuch"`)
	admin.fails("history.get", map[string]any{"itemids": "1", "time_from": "yesterday"}, -32602, "time_from")
	admin.fails("history.get", map[string]any{"itemids": "1", "limit": []int{1}}, -32602, "limit")
	admin.fails("history.push", map[string]any{"host": "peregrine-test", "key": "trap.uint", "value": true}, -32602, `"/1/value"`)
	admin.fails("history.push", map[string]any{"host": "peregrine-test", "key": "trap.uint", "value": 1, "clock": "noon"}, -32602, `"/1/clock"`)
	admin.fails("user.create", map[string]any{"username": "x", "passwd": "long-enough", "roleid": 7, "usrgrps": []map[string]string{{"usrgrpid": "7"}}}, -32602, `User role with ID "7" is not available.`)
	// An object of IDs is its values, as PHP reads it (recorded from Zabbix 6.0.14).
	admin.fails("user.delete", map[string]any{"userid": "x"}, -32602, `Invalid parameter "/1": a number is expected.`)
	admin.fails("token.generate", []string{"not-a-number"}, -32602, `Invalid parameter "/1": a number is expected.`)
	// A body past api.max_body_size is refused without being read whole.
	huge := append([]byte(`{"jsonrpc":"2.0","method":"host.get","params":{"search":{"host":"`), bytes.Repeat([]byte("x"), int(s.cfg.API.MaxBodySize)+1)...)
	huge = append(huge, `"}},"id":1}`...)
	raw(string(huge), -32600, "larger than the configured maximum")
	// A batch mixing good, bad and notification requests.
	out := admin.raw([]byte(`[{"jsonrpc":"2.0","method":"apiinfo.version","params":[],"id":1},{"jsonrpc":"2.0","method":"x.y","params":{},"id":2},{"jsonrpc":"2.0","method":"apiinfo.version","params":[]}]`))
	var batch []rpcResponse
	if err := json.Unmarshal([]byte(out), &batch); err != nil || len(batch) != 2 || batch[0].Error != nil || batch[1].Error == nil || batch[1].Error.Code != -32601 {
		t.Fatalf("batch: %s", out)
	}
	// Each refusal is counted by code on /metrics.
	var metrics strings.Builder
	if err := s.Metrics.WriteText(&metrics); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`peregrine_api_errors_total{code="-32700"} 3`, `peregrine_api_errors_total{code="-32601"} 3`, `peregrine_api_requests_total `} {
		if !strings.Contains(metrics.String(), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, grepLines(metrics.String(), "peregrine_api"))
		}
	}
	// Still serving.
	var hosts []map[string]any
	admin.ok("host.get", map[string]any{"output": []string{"host"}, "filter": map[string]any{"host": "peregrine-test"}}, &hosts)
	if len(hosts) != 1 {
		t.Fatalf("host.get after bad requests: %v", hosts)
	}
}

// TestAPIHistoryPush pushes values by itemid and by host and key, with
// bad values in between, and reads back exactly the accepted ones.
func TestAPIHistoryPush(t *testing.T) {
	s := startServer(t, integrationSpec())
	admin := adminLogin(t, s)
	snap := s.Catalog.Snapshot()
	fl := snap.Lookup("peregrine-test", "trap.float")
	var res struct {
		Response string
		Data     []map[string]string
	}
	admin.ok("history.push", []map[string]any{
		{"itemid": fl.ID, "value": 1.5, "clock": 1700000000, "ns": 5},
		{"host": "peregrine-test", "key": "trap.float", "value": "2.5", "clock": 1700000001},
		{"host": "peregrine-test", "key": "trap.float", "value": "abc", "clock": 1700000002},
		{"host": "nosuch", "key": "trap.float", "value": 1},
		{"host": "peregrine-test", "key": "agent.ping", "value": 1},
		{"itemid": 999999, "value": 1},
		{"host": "peregrine-test", "key": "trap.str", "value": "hello"},
	}, &res)
	want := []string{fmt.Sprint(fl.ID), fmt.Sprint(fl.ID), "error:Invalid value", "error:No permissions", "error:not a trapper", "error:No permissions", ""}
	if res.Response != "success" || len(res.Data) != len(want) {
		t.Fatalf("history.push: %+v", res)
	}
	for i, w := range want {
		got := res.Data[i]
		switch {
		case strings.HasPrefix(w, "error:"):
			if !strings.Contains(got["error"], w[len("error:"):]) || got["itemid"] != "" {
				t.Errorf("value %d: %v, want an error containing %q", i, got, w[6:])
			}
		case w == "":
			if got["itemid"] == "" {
				t.Errorf("value %d: %v, want an itemid", i, got)
			}
		case got["itemid"] != w:
			t.Errorf("value %d: %v, want itemid %s", i, got, w)
		}
	}
	var rows []map[string]string
	admin.ok("history.get", map[string]any{"itemids": fl.ID, "history": 0, "sortfield": "clock"}, &rows)
	if len(rows) != 2 || rows[0]["value"] != "1.5" || rows[0]["ns"] != "5" || rows[1]["value"] != "2.5" || rows[1]["clock"] != "1700000001" {
		t.Fatalf("history.get after push: %v", rows)
	}
	// Pushed values are counted with the trapper's.
	if got := s.readItem(t, "peregrine-test", "trap.str"); len(got) != 1 || got[0].S != "hello" {
		t.Fatalf("string pushed without clock: %+v", got)
	}
}

func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
