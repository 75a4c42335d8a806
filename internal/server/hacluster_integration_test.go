package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// haCluster is the nodes of a whole-server HA test, each a process of
// its own (TestIntegrationHANodeChild), on one PostgreSQL and one
// ClickHouse.
type haCluster struct {
	t     *testing.T
	dsn   string // the nodes' DSN unless a node has its own
	ch    string
	nodes []*haChild
	dsns  map[string]string // a node's own DSN (the partition test's relay)
	admin *ha.Admin
}

// newHACluster moves seed's catalog, users and services into the
// cluster's PostgreSQL (peregrine ha migrate's steps: the nodes share
// them) and makes n nodes' data directories, each with a copy of seed's
// admin-password file (the migrated Admin's password).
func newHACluster(t *testing.T, dsn, ch, seed string, n int) *haCluster {
	c := &haCluster{t: t, dsn: dsn, ch: ch, dsns: map[string]string{}}
	seedPGFromDir(t, dsn, seed)
	addrs := freeAddrs(t, 2*n)
	for i := range n {
		name := "node-" + string(rune('a'+i))
		nd := &haChild{name: name, dir: filepath.Join(t.TempDir(), name), trapper: addrs[2*i], http: addrs[2*i+1]}
		if err := os.MkdirAll(nd.dir, 0o700); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			f := e.Name()
			if e.IsDir() || f != "admin-password" {
				continue
			}
			b, err := os.ReadFile(filepath.Join(seed, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(nd.dir, f), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		c.nodes = append(c.nodes, nd)
	}
	t.Cleanup(func() {
		if c.admin != nil {
			c.admin.Close()
		}
	})
	return c
}

func (c *haCluster) start(n *haChild) {
	t := c.t
	t.Helper()
	dsn := c.dsn
	if d, ok := c.dsns[n.name]; ok {
		dsn = d
	}
	startHAChild(t, n, dsn, c.ch)
}

func (c *haCluster) status(name string) ha.Status {
	ctx := context.Background()
	if c.admin == nil {
		a, err := ha.OpenAdmin(ctx, c.dsn)
		if err != nil {
			return -1
		}
		c.admin = a
	}
	cl, err := c.admin.Cluster(ctx)
	if err != nil {
		return -1
	}
	for _, n := range cl.Nodes {
		if n.Name == name {
			return n.Status
		}
	}
	return -1
}

// node reads one node's registry row.
func (c *haCluster) node(name string) (ha.NodeInfo, bool) {
	c.status(name) // opens c.admin
	if c.admin == nil {
		return ha.NodeInfo{}, false
	}
	cl, err := c.admin.Cluster(context.Background())
	if err != nil {
		return ha.NodeInfo{}, false
	}
	for _, n := range cl.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return ha.NodeInfo{}, false
}

// active returns the active node, or nil.
func (c *haCluster) active() *haChild {
	for _, n := range c.nodes {
		if n.cmd != nil && c.status(n.name) == ha.StatusActive {
			return n
		}
	}
	return nil
}

func (c *haCluster) waitStatus(name string, want ha.Status, within time.Duration) time.Duration {
	c.t.Helper()
	t0 := time.Now()
	for time.Since(t0) < within {
		if c.status(name) == want {
			return time.Since(t0)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("%s is not %s after %s", name, want, within)
	return 0
}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

func waitListening(t *testing.T, addr string, within time.Duration) {
	t.Helper()
	for t0 := time.Now(); !listening(addr); time.Sleep(50 * time.Millisecond) {
		if time.Since(t0) > within {
			t.Fatalf("%s does not listen after %s", addr, within)
		}
	}
}

// nodeAPI logs in to a node's API as Admin (the admin-password file
// copied from the seed, whose users were moved into PostgreSQL).
func nodeAPI(t *testing.T, n *haChild) *apiClient {
	t.Helper()
	pw, err := os.ReadFile(filepath.Join(n.dir, "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	c := &apiClient{t: t, url: "http://" + n.http + "/api_jsonrpc.php"}
	c.auth = c.login("Admin", strings.TrimSpace(string(pw)))
	return c
}

// clickhouseCount runs a count query against ClickHouse.
func clickhouseCount(t *testing.T, chURL, query string) int {
	t.Helper()
	resp, err := httpGet(strings.TrimRight(chURL, "/") + "/?" + url.Values{"query": {query}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(resp))
	return n
}

func httpGet(u string) (string, error) {
	resp, err := http.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// haSeed builds the catalog every node of a cluster test shares (moved
// into PostgreSQL by newHACluster): host
// peregrine-test with the trapper items, an active agent item and a
// trigger, a webhook media type to hook, Admin's medium and an action,
// configured through the API of a standalone server that is then
// stopped. It returns the seed's data directory and the trigger's ID.
func haSeed(t *testing.T, hook *hookListener) (string, map[string]uint64) {
	t.Helper()
	spec := integrationSpec()
	h := &spec.Hosts[0]
	h.Items = append(h.Items, catalog.ItemSpec{Key: "system.localtime", Type: "zabbix_agent_active", ValueType: "unsigned", Delay: "1s"})
	h.Triggers = []catalog.TriggerSpec{{Name: "HA test problem", Expression: "last(/peregrine-test/trap.uint)>100", Priority: "HIGH"}}
	cfg := testConfig(t, spec)
	s, stop := runServer(t, cfg)
	ids := map[string]uint64{}
	snap := s.Catalog.Snapshot()
	for _, k := range []string{"trap.float", "trap.uint", "system.localtime"} {
		ids[k] = snap.Lookup("peregrine-test", k).ID
	}
	admin := adminLogin(t, s)
	// An active proxy (it connects to Server=a;b;c) and a host it
	// monitors, with a trapper item fed through the proxy.
	var px struct{ ProxyIDs []string }
	admin.ok("proxy.create", map[string]any{"host": "ha-proxy", "status": 5}, &px)
	var g struct{ GroupIDs []string }
	admin.ok("hostgroup.create", map[string]any{"name": "HA proxied"}, &g)
	var ph struct{ HostIDs []string }
	admin.ok("host.create", map[string]any{"host": "ha-proxied", "proxy_hostid": px.ProxyIDs[0], "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}}, &ph)
	var pi struct{ ItemIDs []string }
	admin.ok("item.create", map[string]any{"name": "px", "key_": "px.v", "hostid": ph.HostIDs[0], "type": 2, "value_type": 3}, &pi)
	ids["px.v"], _ = strconv.ParseUint(pi.ItemIDs[0], 10, 64)
	var mt struct{ MediaTypeIDs []string }
	admin.ok("mediatype.create", map[string]any{
		"name": "HA hook", "type": "4", "script": hookJS, "timeout": "5s",
		"parameters": []map[string]string{
			{"name": "url", "value": "{ALERT.SENDTO}"}, {"name": "subject", "value": "{ALERT.SUBJECT}"},
			{"name": "event", "value": "{EVENT.ID}"}, {"name": "status", "value": "{EVENT.STATUS}"},
		},
		"message_templates": []map[string]any{
			{"eventsource": "0", "recovery": "0", "subject": "Problem: {EVENT.NAME}", "message": "p"},
			{"eventsource": "0", "recovery": "1", "subject": "Resolved: {EVENT.NAME}", "message": "r"},
		},
	}, &mt)
	var users []struct{ UserID string }
	admin.ok("user.get", map[string]any{"filter": map[string]string{"username": "Admin"}}, &users)
	admin.ok("user.update", map[string]any{"userid": users[0].UserID, "medias": []map[string]any{
		{"mediatypeid": mt.MediaTypeIDs[0], "sendto": hook.srv.URL + "/admin", "severity": 63},
	}}, nil)
	admin.ok("action.create", map[string]any{
		"name": "HA notify", "eventsource": 0, "esc_period": "1h",
		"operations": []map[string]any{{"operationtype": 0, "esc_step_from": 1, "esc_step_to": 1,
			"opmessage": map[string]any{"default_msg": 1, "mediatypeid": mt.MediaTypeIDs[0]}, "opmessage_usr": []map[string]string{{"userid": users[0].UserID}}}},
		"recovery_operations": []map[string]any{{"operationtype": 11, "opmessage": map[string]any{"default_msg": 1}}},
	}, nil)
	stop()
	return cfg.DataDir, ids
}

// Three nodes, failover delay 10 s, under load from the real
// zabbix_sender (a value every 200 ms, ServerActive listing the three
// nodes) and the real zabbix_agentd with an active check every second
// (ServerActive=a;b;c, as 6.0's agents fail over). A trigger opened
// before the kill and its alert, sent by the webhook to the test's
// listener: the active node is killed with SIGKILL (PEREGRINE_HA_KILLS
// times in turn, default 2); each time a standby is active within the
// delay (plus a heartbeat and its start), the problem is still open on
// it, and both the sender and the agent deliver to it. Then the value
// goes back: the problem recovers on the node active then, the problem
// and its recovery reach the listener once each, and every value the
// sender saw acknowledged is in ClickHouse exactly once (or twice when
// its run spanned a kill, see TestIntegrationHANodeFailover).
func TestIntegrationHAThreeNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL, ClickHouse, three nodes, zabbix_sender and zabbix_agentd")
	}
	sender := testutil.Need(t, "zabbix_sender", "zabbix-agent")
	hook := newHookListener(t)
	seed, ids := haSeed(t, hook)
	pg := testutil.StartPostgres(t)
	ch := testutil.StartClickHouse(t)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)
	const delay = 10 * time.Second
	c := newHACluster(t, dsn, ch.URL, seed, 3)
	c.start(c.nodes[0])
	c.waitStatus("node-a", ha.StatusActive, time.Minute)
	waitListening(t, c.nodes[0].trapper, time.Minute)
	for _, n := range c.nodes[1:] {
		c.start(n)
		c.waitStatus(n.name, ha.StatusStandby, time.Minute)
	}
	time.Sleep(2 * ha.Heartbeat(delay))
	for _, n := range c.nodes[1:] {
		if listening(n.trapper) {
			t.Fatalf("standby %s listens on its trapper port", n.name)
		}
	}
	var (
		mu    sync.Mutex
		acked []ack3
		sends []ack3
	)
	all := c.nodes[0].trapper + ";" + c.nodes[1].trapper + ";" + c.nodes[2].trapper
	testutil.StartActiveAgent(t, testutil.Agentd, testutil.ActiveAgentOptions{ServerActive: all, Hostname: "peregrine-test"})
	// The real zabbix_proxy 6.0 (sqlite3) with Server=a;b;c, 6.0's way
	// for a proxy to follow an HA cluster, when there is one (.ci/run
	// unpacks it; ZABBIX_PROXY_BIN): a value a second into its trapper,
	// unique clock and ns, counted once the proxy took it.
	var proxyAddr string
	if p := os.Getenv("ZABBIX_PROXY_BIN"); p != "" || fileExists("/usr/sbin/zabbix_proxy") {
		proxyAddr = testutil.StartProxy(t, testutil.ProxyOptions{Name: "ha-proxy", Server: all}).Addr
	} else {
		t.Log("zabbix_proxy is not available (ZABBIX_PROXY_BIN): the cluster runs without a proxy")
	}
	var proxyTaken []int
	proxyStop, proxyDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(proxyDone)
		if proxyAddr == "" {
			return
		}
		clock0 := time.Now().Unix()
		for v := 1; v <= 20000; v++ {
			select {
			case <-proxyStop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			frame := fmt.Sprintf(`{"request":"sender data","data":[{"host":"ha-proxied","key":"px.v","value":"%d","clock":%d,"ns":%d}]}`, v, clock0, v)
			if sendFrame(proxyAddr, frame) == 1 {
				mu.Lock()
				proxyTaken = append(proxyTaken, v)
				mu.Unlock()
			}
		}
	}()

	// The problem, opened on node-a and alerted before any kill.
	conf := filepath.Join(t.TempDir(), "sender.conf")
	os.WriteFile(conf, []byte("ServerActive="+all+"\nHostname=peregrine-test\n"), 0o600)
	sendOne := func(key, v string) bool {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(sctx, sender, "-c", conf, "-t", "5", "-k", key, "-o", v).CombinedOutput()
		m := processedRe.FindSubmatch(out)
		return m != nil && string(m[1]) == "1"
	}
	if !sendOne("trap.uint", "500") {
		t.Fatal("trap.uint 500 not acknowledged")
	}
	waitHook := func(subject string) {
		t.Helper()
		for t0 := time.Now(); ; time.Sleep(50 * time.Millisecond) {
			for _, b := range hook.got() {
				if strings.HasPrefix(b["subject"], subject) {
					return
				}
			}
			if time.Since(t0) > 30*time.Second {
				t.Fatalf("no %q alert after 30 s: %v", subject, hook.got())
			}
		}
	}
	waitHook("Problem: ")
	type problem struct {
		EventID  string
		REventID string `json:"r_eventid"`
	}
	var probs []problem
	nodeAPI(t, c.nodes[0]).ok("problem.get", map[string]any{"output": []string{"eventid", "r_eventid"}, "recent": true}, &probs)
	if len(probs) != 1 || probs[0].REventID != "0" {
		t.Fatalf("problem.get on node-a: %+v", probs)
	}
	problemID := probs[0].EventID

	stopSend, sendDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sendDone)
		for v := 1; v <= 20000; v++ {
			select {
			case <-stopSend:
				return
			case <-time.After(200 * time.Millisecond):
			}
			a := ack3{v: v, sent: time.Now()}
			ok := sendOne("trap.float", strconv.Itoa(v))
			a.at = time.Now()
			mu.Lock()
			if ok {
				acked = append(acked, a)
			}
			sends = append(sends, a)
			mu.Unlock()
		}
	}()
	ackedCount := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	for t0 := time.Now(); ackedCount() < 5; time.Sleep(50 * time.Millisecond) {
		if time.Since(t0) > 30*time.Second {
			t.Fatal("fewer than 5 values acknowledged in 30 s")
		}
	}
	agentValues := func(since time.Time) int {
		return clickhouseCount(t, ch.URL, fmt.Sprintf("SELECT count() FROM peregrine.history_uint FINAL WHERE itemid = %d AND clock >= %d FORMAT TSV", ids["system.localtime"], since.Unix()))
	}
	if n := waitNonZero(t, 30*time.Second, func() int { return agentValues(time.Now().Add(-time.Hour)) }); n == 0 {
		t.Fatal("no active agent value in ClickHouse")
	}

	kills := 2
	if v, err := strconv.Atoi(os.Getenv("PEREGRINE_HA_KILLS")); err == nil && v > 0 {
		kills = v
	}
	var killTimes [][2]time.Time
	for k := 1; k <= kills; k++ {
		act := c.active()
		if act == nil {
			t.Fatal("no active node")
		}
		killed := time.Now()
		act.cmd.Process.Signal(syscall.SIGKILL)
		act.cmd.Wait()
		dead := time.Now()
		killTimes = append(killTimes, [2]time.Time{killed, dead})
		var next *haChild
		t0 := time.Now()
		for next == nil && time.Since(t0) < 3*delay {
			time.Sleep(100 * time.Millisecond)
			if n := c.active(); n != nil && n != act {
				next = n
			}
		}
		if next == nil {
			t.Fatalf("kill %d: no standby active %s after killing %s", k, 3*delay, act.name)
		}
		took := time.Since(killed)
		if took > delay+ha.Heartbeat(delay)+3*time.Second {
			t.Errorf("kill %d: %s took over %s after the kill; the failover delay is %s", k, next.name, took, delay)
		}
		waitListening(t, next.trapper, 30*time.Second)
		active := time.Now()
		// The sender's and the agent's values reach the new node.
		for n := ackedCount(); ackedCount() < n+3; time.Sleep(50 * time.Millisecond) {
			if time.Since(active) > 30*time.Second {
				t.Fatalf("kill %d: the sender's values are not acknowledged by %s", k, next.name)
			}
		}
		if waitNonZero(t, 30*time.Second, func() int { return agentValues(active) }) == 0 {
			t.Fatalf("kill %d: no active agent value reached %s in 30 s", k, next.name)
		}
		// The problem opened before the kill is open on the new node.
		probs = nil
		nodeAPI(t, next).ok("problem.get", map[string]any{"output": []string{"eventid", "r_eventid"}, "recent": true}, &probs)
		if len(probs) != 1 || probs[0].EventID != problemID || probs[0].REventID != "0" {
			t.Fatalf("kill %d: problem.get on %s: %+v, want %s open", k, next.name, probs, problemID)
		}
		t.Logf("kill -9 %d of %s: %s active after %.1f s, its trapper open after %.1f s", k, act.name, next.name, took.Seconds(), active.Sub(killed).Seconds())
		c.start(act)
		c.waitStatus(act.name, ha.StatusStandby, time.Minute)
	}
	close(stopSend)
	<-sendDone
	close(proxyStop)
	<-proxyDone

	// The value goes back: the problem recovers on the active node, and
	// the listener got the problem and its recovery once each.
	if !sendOne("trap.uint", "1") {
		t.Fatal("trap.uint 1 not acknowledged")
	}
	waitHook("Resolved: ")
	time.Sleep(2 * time.Second) // a repeated alert would come now
	counts := map[string]int{}
	for _, b := range hook.got() {
		counts[b["status"]+" "+b["event"]]++
	}
	if len(counts) != 2 || counts["PROBLEM "+problemID] != 1 {
		t.Errorf("alerts received (status eventid: count): %v; want the problem %s and its recovery once each", counts, problemID)
	}
	act := c.active()
	var alerts []struct{ AlertID, EventID, Status string }
	nodeAPI(t, act).ok("alert.get", map[string]any{"output": "extend", "sortfield": "alertid"}, &alerts)
	t.Logf("alert.get on %s: %+v", act.name, alerts)
	if len(alerts) != 2 {
		t.Errorf("alert.get on %s: %d alerts, want 2 (the problem's and its recovery's)", act.name, len(alerts))
	}

	want := map[int]bool{}
	for _, a := range acked {
		want[a.v] = true
	}
	var got map[int]int
	for t0 := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		got = clickhouseValues(t, ch.URL, ids["trap.float"])
		missing := 0
		for v := range want {
			if got[v] == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Since(t0) > time.Minute {
			t.Fatalf("%d of %d acknowledged values are not in ClickHouse", missing, len(want))
		}
	}
	twice := 0
	for v, n := range got {
		switch {
		case n == 1:
		case n == 2 && spannedKill(sends, v, killTimes):
			twice++
		default:
			t.Errorf("value %d is %d times in ClickHouse", v, n)
		}
	}
	if proxyAddr != "" {
		mu.Lock()
		taken := append([]int(nil), proxyTaken...)
		mu.Unlock()
		if len(taken) == 0 {
			t.Fatal("the proxy took no value")
		}
		var pgot map[int]int
		for t0 := time.Now(); ; time.Sleep(500 * time.Millisecond) {
			pgot = clickhouseUintValues(t, ch.URL, ids["px.v"])
			missing := 0
			for _, v := range taken {
				if pgot[v] == 0 {
					missing++
				}
			}
			if missing == 0 {
				break
			}
			if time.Since(t0) > 90*time.Second {
				t.Fatalf("%d of the %d values the proxy took are not in ClickHouse", missing, len(taken))
			}
		}
		for v, n := range pgot {
			if n != 1 {
				t.Errorf("proxy value %d is %d times in ClickHouse", v, n)
			}
		}
		t.Logf("%d values taken by the proxy across the kills, each once in ClickHouse", len(taken))
	}
	t.Logf("%d values acknowledged by the sender over %d kills, all in ClickHouse, %d twice (their run spanned a kill); %d agent values",
		len(want), kills, twice, agentValues(time.Now().Add(-time.Hour)))
}

type ack3 struct {
	v        int
	sent, at time.Time
}

func spannedKill(sends []ack3, v int, kills [][2]time.Time) bool {
	for _, a := range sends {
		if a.v == v {
			for _, k := range kills {
				if a.sent.Before(k[1]) && a.at.After(k[0]) {
					return true
				}
			}
		}
	}
	return false
}

// waitNonZero polls f until it is non-zero or within passes.
func waitNonZero(t *testing.T, within time.Duration, f func() int) int {
	t.Helper()
	for t0 := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		if n := f(); n != 0 || time.Since(t0) > within {
			return n
		}
	}
}

// pgRelay is a loopback TCP relay between a node and PostgreSQL that
// the test cuts to make a partition: while cut, nothing is forwarded in
// either direction and new connections wait (packets dropped, not
// refused, as a partition does); healed, it forwards again.
type pgRelay struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	healed *sync.Cond
}

func startPGRelay(t *testing.T, target string) *pgRelay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &pgRelay{ln: ln, target: target}
	r.healed = sync.NewCond(&r.mu)
	t.Cleanup(func() { ln.Close(); r.setCut(false) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.serve(c)
		}
	}()
	return r
}

func (r *pgRelay) setCut(cut bool) {
	r.mu.Lock()
	r.cut = cut
	r.mu.Unlock()
	r.healed.Broadcast()
}

func (r *pgRelay) wait() {
	r.mu.Lock()
	for r.cut {
		r.healed.Wait()
	}
	r.mu.Unlock()
}

func (r *pgRelay) serve(c net.Conn) {
	defer c.Close()
	r.wait()
	s, err := net.Dial("tcp", r.target)
	if err != nil {
		return
	}
	defer s.Close()
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				r.wait()
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		c.Close()
		s.Close()
	}
	go pipe(s, c)
	pipe(c, s)
}

// A partition: node-a reaches PostgreSQL through a relay the test cuts
// for longer than the failover delay, while PostgreSQL stays up for
// node-b. node-a stops processing (its trapper port closes) before
// node-b takes over (the lease ends by node-a's own clock before the
// delay; a write it still tried would be refused by the fence), and
// when the relay is healed node-a rejoins as a standby.
func TestIntegrationHAPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL, ClickHouse and two nodes")
	}
	hook := newHookListener(t)
	seed, _ := haSeed(t, hook)
	pg := testutil.StartPostgres(t)
	ch := testutil.StartClickHouse(t)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)
	relay := startPGRelay(t, fmt.Sprintf("127.0.0.1:%d", pg.Port))
	const delay = 10 * time.Second
	c := newHACluster(t, dsn, ch.URL, seed, 2)
	c.dsns["node-a"] = fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", relay.ln.Addr())
	a, b := c.nodes[0], c.nodes[1]
	c.start(a)
	c.waitStatus("node-a", ha.StatusActive, time.Minute)
	waitListening(t, a.trapper, time.Minute)
	c.start(b)
	c.waitStatus("node-b", ha.StatusStandby, time.Minute)
	time.Sleep(2 * ha.Heartbeat(delay))

	cut := time.Now()
	relay.setCut(true)
	var closed, took time.Duration
	for closed == 0 || took == 0 {
		if time.Since(cut) > 3*delay {
			relay.setCut(false)
			t.Fatalf("after %s: node-a's trapper closed after %s, node-b active after %s", 3*delay, closed, took)
		}
		if closed == 0 && !listening(a.trapper) {
			closed = time.Since(cut)
		}
		if took == 0 && c.status("node-b") == ha.StatusActive {
			took = time.Since(cut)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if closed == 0 || closed >= took {
		t.Errorf("node-a's trapper closed %s after the cut, node-b active after %s: the old active must stop first", closed, took)
	}
	if took > delay+ha.Heartbeat(delay)+3*time.Second {
		t.Errorf("node-b took over %s after the cut; the failover delay is %s", took, delay)
	}
	waitListening(t, b.trapper, 30*time.Second)
	time.Sleep(5 * time.Second) // the partition lasts past the takeover
	if listening(a.trapper) {
		t.Fatal("node-a listens on its trapper while partitioned from PostgreSQL")
	}
	// The registry as node-b left it: node-a not active, its heartbeat
	// stopped at the cut. Back, node-a heartbeats again as a standby.
	before, ok := c.node("node-a")
	if !ok || before.Status == ha.StatusActive {
		t.Fatalf("node-a in the registry during the partition: %+v", before)
	}
	relay.setCut(false)
	healed := time.Now()
	for {
		if n, ok := c.node("node-a"); ok && n.Status == ha.StatusStandby && n.LastAccess > before.LastAccess {
			break
		}
		if time.Since(healed) > time.Minute {
			n, _ := c.node("node-a")
			t.Fatalf("node-a does not heartbeat as a standby a minute after the heal: %+v (during the partition %+v)", n, before)
		}
		time.Sleep(100 * time.Millisecond)
	}
	back := time.Since(healed)
	time.Sleep(ha.Heartbeat(delay))
	if listening(a.trapper) || c.status("node-b") != ha.StatusActive {
		t.Fatal("after the partition node-a listens on its trapper or node-b is no longer active")
	}
	t.Logf("partition: node-a stopped its trapper %.1f s after the cut, node-b active after %.1f s (delay %s); node-a (%s in the registry during the partition) heartbeating as standby %.1f s after the heal",
		closed.Seconds(), took.Seconds(), delay, before.Status, back.Seconds())
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// clickhouseUintValues counts an item's unsigned values in ClickHouse.
func clickhouseUintValues(t *testing.T, chURL string, itemID uint64) map[int]int {
	t.Helper()
	body, err := httpGet(strings.TrimRight(chURL, "/") + "/?" + url.Values{"query": {fmt.Sprintf(
		"SELECT value, count() FROM peregrine.history_uint FINAL WHERE itemid = %d GROUP BY value FORMAT TSV", itemID)}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, l := range strings.Split(body, "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			v, _ := strconv.Atoi(f[0])
			n, _ := strconv.Atoi(f[1])
			out[v] = n
		}
	}
	return out
}

// An alert in flight at the kill: the webhook's listener takes the
// problem's alert from node-a and holds its answer while node-a is
// killed with SIGKILL, so node-a never logs it sent. node-b, active
// within the delay, finds the alert logged unsent in PostgreSQL, with
// node-a's attempt started (a fenced "send started" record) and no
// outcome, and sends it again: the listener gets it twice (repeated
// once, never more), and alert.get lists it once, sent, marked: retries
// counts node-a's attempt and node-b's (2) and error says it was sent
// again after a failover (alert.RepeatSent).
func TestIntegrationHAAlertInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL, ClickHouse, two nodes and zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hook := &hookListener{}
	hook.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]string
		_ = json.NewDecoder(r.Body).Decode(&b)
		hook.mu.Lock()
		hook.bodies = append(hook.bodies, b)
		hook.mu.Unlock()
		first := false
		once.Do(func() { first = true })
		if first {
			close(arrived)
			select {
			case <-release:
			case <-time.After(60 * time.Second):
			}
		}
	}))
	t.Cleanup(hook.srv.Close)
	seed, _ := haSeed(t, hook)
	pg := testutil.StartPostgres(t)
	ch := testutil.StartClickHouse(t)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)
	const delay = 10 * time.Second
	c := newHACluster(t, dsn, ch.URL, seed, 2)
	a, b := c.nodes[0], c.nodes[1]
	c.start(a)
	c.waitStatus("node-a", ha.StatusActive, time.Minute)
	waitListening(t, a.trapper, time.Minute)
	c.start(b)
	c.waitStatus("node-b", ha.StatusStandby, time.Minute)
	if r := testutil.RunSender(t, a.trapper, "-s", "peregrine-test", "-k", "trap.uint", "-o", "500"); r.Processed != 1 {
		t.Fatalf("zabbix_sender: %+v", r)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("no alert reached the listener in 30 s")
	}
	killed := time.Now()
	a.cmd.Process.Signal(syscall.SIGKILL)
	a.cmd.Wait()
	close(release)
	took := c.waitStatus("node-b", ha.StatusActive, 3*delay)
	problems := func() (n int, event string) {
		for _, x := range hook.got() {
			if x["status"] == "PROBLEM" {
				n++
				event = x["event"]
			}
		}
		return n, event
	}
	var resent time.Duration
	for t0 := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		if n, _ := problems(); n >= 2 {
			resent = time.Since(killed)
			break
		}
		if time.Since(t0) > 30*time.Second {
			t.Fatalf("the alert in flight at the kill was not sent again by node-b within 30 s of its takeover: %v", hook.got())
		}
	}
	time.Sleep(3 * time.Second) // a third copy would come now
	n, event := problems()
	if n != 2 {
		t.Fatalf("the listener got the problem's alert %d times, want 2 (repeated once): %v", n, hook.got())
	}
	var alerts []struct {
		AlertID string `json:"alertid"`
		EventID string `json:"eventid"`
		Status  string `json:"status"`
		Retries string `json:"retries"`
		Error   string `json:"error"`
	}
	nodeAPI(t, b).ok("alert.get", map[string]any{"output": "extend", "sortfield": "alertid"}, &alerts)
	if len(alerts) != 1 || alerts[0].EventID != event || alerts[0].Status != "1" {
		t.Fatalf("alert.get on node-b: %+v, want one alert for event %s, sent", alerts, event)
	}
	if alerts[0].Retries != "2" || alerts[0].Error != alert.RepeatSent {
		t.Fatalf("alert.get on node-b: %+v, want retries 2 (node-a's attempt and node-b's) and error %q", alerts[0], alert.RepeatSent)
	}
	t.Logf("the alert in flight at the kill: node-b active %.1f s after the kill, sent it again %.1f s after the kill; alert.get: %+v",
		took.Seconds(), resent.Seconds(), alerts[0])
}
