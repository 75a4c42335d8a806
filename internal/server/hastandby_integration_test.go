package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationHAStandbyReads: a standby node serves the API and the
// UI for reads (issue 31 item 2) — the catalog, users, events, services,
// alert and audit logs from PostgreSQL, history from ClickHouse — and refuses changes naming the
// active node. Two node processes on Debian's postgresql-15 and
// clickhouse-server: a host, item and trigger made through the active
// node's API are read by host.get on the standby within its poll; the
// values the active node acknowledged to the real zabbix_sender are in
// the standby's history.get, the problem they opened in its problem.get
// and event.get with the same event ID; the active node's services and
// SLA, media types, actions, the alert it sent, its audit log, its queue
// and item.get's last values read the same on the standby
// (hastandby_state_integration_test.go), as do an item made not
// supported and an agent interface made unavailable on the active node
// (hastandby_runtime_integration_test.go); host.create, service.create,
// mediatype.update and user.login on the standby are refused naming the
// active node. The UI on the standby, with the session made on the
// active node: its pages open, their API reads answer and a change shows
// the refusal; its login form shows the refusal. A session logged out
// on the standby is refused on both nodes and the logout audited. Then the
// active node stops cleanly: the standby closes its read-only stores,
// takes over, makes a host itself and shows the item the stopped node
// made not supported as not supported.
func TestIntegrationHAStandbyReads(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL, ClickHouse and two node processes")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	pg := testutil.StartPostgres(t)
	ch := testutil.StartClickHouse(t)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)
	addrs := freeAddrs(t, 4)
	c := &haCluster{t: t, dsn: dsn, ch: ch.URL, dsns: map[string]string{}}
	t.Cleanup(func() {
		if c.admin != nil {
			c.admin.Close()
		}
	})
	for i, name := range []string{"node-a", "node-b"} {
		c.nodes = append(c.nodes, &haChild{name: name, dir: filepath.Join(t.TempDir(), name), trapper: addrs[2*i], http: addrs[2*i+1],
			unreachable: time.Second}) // checkStandbyRuntime's interface: unavailable within seconds
	}
	a, b := c.nodes[0], c.nodes[1]
	c.start(a)
	c.waitStatus("node-a", ha.StatusActive, time.Minute)
	waitListening(t, a.http, time.Minute)
	api := nodeAPI(t, a) // the first active node made Admin and its admin-password file
	c.start(b)
	c.waitStatus("node-b", ha.StatusStandby, time.Minute)
	sb := &apiClient{t: t, url: "http://" + b.http + "/api_jsonrpc.php", auth: api.auth}
	waitHA(t, "the standby's reads", time.Minute, func() bool {
		r := sb.call("hostgroup.get", map[string]any{"countOutput": true})
		return r.Error == nil
	})

	// Made through the active node's API.
	var grp struct{ GroupIDs []string }
	api.ok("hostgroup.create", map[string]any{"name": "s8-standby group"}, &grp)
	var host struct{ HostIDs []string }
	made := time.Now()
	api.ok("host.create", map[string]any{"host": "s8-standby-host", "groups": []any{map[string]any{"groupid": grp.GroupIDs[0]}}}, &host)
	var item struct{ ItemIDs []string }
	api.ok("item.create", map[string]any{"hostid": host.HostIDs[0], "name": "standby value", "key_": "standby.value", "type": 2, "value_type": 3}, &item)
	var trig struct{ TriggerIDs []string }
	api.ok("trigger.create", map[string]any{"description": "s8-standby value high", "expression": "last(/s8-standby-host/standby.value)>5", "priority": 3,
		"tags": []map[string]string{{"tag": "service", "value": "s9-standby"}}}, &trig)
	hook := newHookListener(t)
	objs := standbySetup(t, api, hook) // hastandby_state_integration_test.go
	standbyQueueItem(t, api, host.HostIDs[0])

	waitHA(t, "host.get on the standby", 30*time.Second, func() bool {
		var hs []struct{ HostID string }
		sb.ok("host.get", map[string]any{"filter": map[string]any{"host": "s8-standby-host"}, "output": []string{"hostid"}}, &hs)
		return len(hs) == 1 && hs[0].HostID == host.HostIDs[0]
	})
	t.Logf("the host made on the active node is in the standby's host.get %.1f s after host.create (poll %s)", time.Since(made).Seconds(), standbyPoll)

	// Values the active node acknowledged: in the standby's history.get.
	for _, v := range []string{"3", "7"} {
		if r := testutil.RunSender(t, a.trapper, "-s", "s8-standby-host", "-k", "standby.value", "-o", v); r.Processed != 1 {
			t.Fatalf("zabbix_sender %s to the active node: %+v", v, r)
		}
	}
	var onActive []struct{ EventID, Name string }
	waitHA(t, "the problem on the active node", 30*time.Second, func() bool {
		api.ok("problem.get", map[string]any{"objectids": trig.TriggerIDs, "output": []string{"eventid", "name"}}, &onActive)
		return len(onActive) == 1
	})
	var hist []struct{ Value string }
	sb.ok("history.get", map[string]any{"itemids": item.ItemIDs, "history": 3, "output": "extend", "sortfield": "clock"}, &hist)
	if len(hist) != 2 || hist[0].Value != "3" || hist[1].Value != "7" {
		t.Fatalf("history.get on the standby: %+v, want 3 and 7", hist)
	}
	waitHA(t, "problem.get on the standby", 30*time.Second, func() bool {
		var ps []struct{ EventID, Name string }
		sb.ok("problem.get", map[string]any{"objectids": trig.TriggerIDs, "output": []string{"eventid", "name"}}, &ps)
		return len(ps) == 1 && ps[0] == onActive[0]
	})
	var evs []struct{ EventID, Value string }
	sb.ok("event.get", map[string]any{"objectids": trig.TriggerIDs, "output": []string{"eventid", "value"}}, &evs)
	if len(evs) != 1 || evs[0].EventID != onActive[0].EventID || evs[0].Value != "1" {
		t.Fatalf("event.get on the standby: %+v, want the problem event %s", evs, onActive[0].EventID)
	}
	checkStandbyState(t, api, sb, objs, hook, onActive[0].EventID, item.ItemIDs[0])
	unsupported := checkStandbyRuntime(t, api, sb, a.trapper, host.HostIDs[0], grp.GroupIDs[0]) // hastandby_runtime_integration_test.go
	var trigs []struct{ Value string }
	sb.ok("trigger.get", map[string]any{"triggerids": trig.TriggerIDs, "output": []string{"value"}}, &trigs)
	if len(trigs) != 1 || trigs[0].Value != "1" {
		t.Fatalf("trigger.get on the standby: %+v, want value 1 (problem)", trigs)
	}

	// Changes are refused, naming the active node.
	const names = `the active node, "node-a" at 127.0.0.1`
	sb.fails("host.create", map[string]any{"host": "s8-standby-refused", "groups": []any{map[string]any{"groupid": grp.GroupIDs[0]}}}, -32500, names)
	sb.fails("event.acknowledge", map[string]any{"eventids": []string{onActive[0].EventID}, "action": 2}, -32500, names)
	anon := &apiClient{t: t, url: sb.url}
	anon.fails("user.login", map[string]string{"username": "Admin", "password": "whatever"}, -32500, `the active node, "node-a" at 127.0.0.1`)
	sb.fails("service.create", map[string]any{"name": "s9-standby refused", "algorithm": 1, "sortorder": 0}, -32500, names)
	sb.fails("mediatype.update", map[string]any{"mediatypeid": objs.mediaType, "status": 1}, -32500, names)
	var n string
	api.ok("host.get", map[string]any{"filter": map[string]any{"host": "s8-standby-refused"}, "countOutput": true}, &n)
	if n != "0" {
		t.Fatalf("the host refused on the standby exists: %s", n)
	}

	// The UI on the standby with the active node's session (one cookie
	// for the cluster's name behind a load balancer).
	base := "http://" + b.http
	get := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.AddCookie(&http.Cookie{Name: "peregrine_session", Value: api.auth})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, page := get("/hosts")
	m := regexp.MustCompile(`<meta name="peregrine-csrf" content="([^"]+)">`).FindStringSubmatch(page)
	if code != 200 || m == nil {
		t.Fatalf("GET /hosts on the standby: %d %.300q", code, page)
	}
	uiCall := func(method string, params any) rpcResponse {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": 1})
		req, _ := http.NewRequest("POST", base+"/ui/api", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", m[1])
		req.AddCookie(&http.Cookie{Name: "peregrine_session", Value: api.auth})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r rpcResponse
		out, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("/ui/api %s on the standby: %d %q", method, resp.StatusCode, out)
		}
		return r
	}
	if r := uiCall("host.get", map[string]any{"filter": map[string]any{"host": "s8-standby-host"}, "output": []string{"host"}}); r.Error != nil || !strings.Contains(string(r.Result), "s8-standby-host") {
		t.Fatalf("the UI's host.get on the standby: %+v %s", r.Error, r.Result)
	}
	if r := uiCall("host.delete", []string{host.HostIDs[0]}); r.Error == nil || !strings.Contains(r.Error.Data, names) {
		t.Fatalf("the UI's host.delete on the standby: %+v", r)
	}
	checkStandbyPages(t, get, uiCall, objs, item.ItemIDs[0])
	pw, _ := os.ReadFile(filepath.Join(a.dir, "admin-password"))
	checkStandbyLogout(t, api, sb, strings.TrimSpace(string(pw)))
	if code, body := postLogin(t, base); code != http.StatusUnauthorized || !strings.Contains(body, "is a standby node of the HA cluster") {
		t.Fatalf("the standby's login form: %d %.400q", code, body)
	}

	// The active node stops cleanly: the standby closes what it read
	// and takes over at once; its own writes work.
	a.cmd.Process.Signal(syscall.SIGTERM)
	a.cmd.Wait()
	c.waitStatus("node-b", ha.StatusActive, 30*time.Second)
	waitListening(t, b.http, 30*time.Second)
	waitHA(t, "host.create on the new active node", 30*time.Second, func() bool {
		return sb.call("host.create", map[string]any{"host": "s8-standby-after", "groups": []any{map[string]any{"groupid": grp.GroupIDs[0]}}}).Error == nil
	})
	sb.ok("history.get", map[string]any{"itemids": item.ItemIDs, "history": 3, "output": "extend"}, &hist)
	if len(hist) != 2 {
		t.Fatalf("history.get on the new active node: %+v", hist)
	}
	// It started from the item states the stopped node stored.
	var st []struct{ State, Error string }
	sb.ok("item.get", map[string]any{"itemids": []string{unsupported}, "output": []string{"state", "error"}}, &st)
	if len(st) != 1 || st[0].State != "1" || !strings.Contains(st[0].Error, `Value "abc"`) {
		t.Fatalf("item.get of the item not supported on the new active node: %+v", st)
	}
}

// postLogin posts the login form of the UI at base (with its login CSRF
// pair, as a browser does) and returns the answer.
func postLogin(t *testing.T, base string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(page))
	if m == nil {
		t.Fatalf("no login CSRF field in %.300q", page)
	}
	form := url.Values{"username": {"Admin"}, "password": {"whatever"}, "csrf": {m[1]}}
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, ck := range resp.Cookies() {
		req.AddCookie(ck)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitHA polls ok until it holds, failing the test after within; it
// returns how long that took.
func waitHA(t *testing.T, what string, within time.Duration, ok func() bool) time.Duration {
	t.Helper()
	t0 := time.Now()
	for !ok() {
		if time.Since(t0) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(t0)
}
