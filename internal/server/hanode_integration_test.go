package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// haNodeConfig is a cluster node's configuration for the tests: the
// shared PostgreSQL and ClickHouse, its own data directory and ports.
func haNodeConfig(dsn, chURL, dataDir, name, trapper, httpAddr string, delay time.Duration) config.Config {
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Trapper.Listen, cfg.HTTP.Listen = trapper, httpAddr
	cfg.State = config.StateConfig{Store: "postgres", Postgres: config.StatePostgresConfig{DSN: dsn}}
	cfg.History.Store = "clickhouse"
	cfg.History.ClickHouse.URLs = []string{chURL}
	cfg.History.ClickHouse.FlushInterval = config.Duration(50 * time.Millisecond)
	cfg.HA = config.HAConfig{NodeName: name, NodeAddress: trapper, FailoverDelay: config.Duration(delay)}
	return cfg
}

// TestIntegrationHANodeChild is a cluster node run as a process of its
// own by TestIntegrationHANodeFailover (PEREGRINE_HANODE_CHILD set);
// otherwise it does nothing. It runs until killed or SIGTERM.
func TestIntegrationHANodeChild(t *testing.T) {
	env := os.Getenv("PEREGRINE_HANODE_CHILD")
	if env == "" {
		t.Skip("run by TestIntegrationHANodeFailover")
	}
	var a struct{ DSN, CH, Dir, Name, Trapper, HTTP, Unreachable string }
	if err := json.Unmarshal([]byte(env), &a); err != nil {
		t.Fatal(err)
	}
	cfg := haNodeConfig(a.DSN, a.CH, a.Dir, a.Name, a.Trapper, a.HTTP, 10*time.Second)
	if a.Unreachable != "" { // haChild.unreachable
		d, err := time.ParseDuration(a.Unreachable)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Poll.UnreachablePeriod, cfg.Poll.UnreachableDelay = config.Duration(d), config.Duration(d)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("node", a.Name)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	s, err := New(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

type haChild struct {
	name, dir, trapper, http string
	cmd                      *exec.Cmd
	// unreachable, when set, is the node's poll.unreachable_period and
	// unreachable_delay (an interface unavailable after two failed
	// checks that far apart, not 45 s).
	unreachable time.Duration
}

var processedRe = regexp.MustCompile(`processed: (\d+); failed: (\d+)`)

// Two nodes, each a `peregrine serve` process of its own, on one
// PostgreSQL and one ClickHouse, failover delay 10 s. The standby does
// not listen on its trapper port (as 6.0.14's), and its API refuses
// calls naming the active node. The real zabbix_sender, given both
// nodes as ServerActive=a;b, sends a value every 200 ms while the
// active node is killed with SIGKILL: the standby takes over within the
// failover delay (plus a heartbeat and its start) and acknowledges the
// sender's values. Then the killed node comes back as a standby and the
// new active one stops cleanly: the first takes over at once, ships what
// its spool held, and every value any node acknowledged is in
// ClickHouse exactly once.
func TestIntegrationHANodeFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL, ClickHouse and two node processes")
	}
	sender := testutil.Need(t, "zabbix_sender", "zabbix-agent")
	pg := testutil.StartPostgres(t)
	ch := testutil.StartClickHouse(t)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)
	const delay = 10 * time.Second
	addrs := freeAddrs(t, 4)
	nodes := []*haChild{
		{name: "node-a", dir: filepath.Join(t.TempDir(), "a"), trapper: addrs[0], http: addrs[1]},
		{name: "node-b", dir: filepath.Join(t.TempDir(), "b"), trapper: addrs[2], http: addrs[3]},
	}
	// The nodes share one catalog, in PostgreSQL.
	itemID := seedPGCatalog(t, dsn, integrationSpec()).Lookup("peregrine-test", "trap.float").ID
	start := func(n *haChild) { t.Helper(); startHAChild(t, n, dsn, ch.URL) }
	ctx := context.Background()
	var admin *ha.Admin
	status := func(name string) ha.Status {
		if admin == nil {
			a, err := ha.OpenAdmin(ctx, dsn)
			if err != nil {
				return -1
			}
			admin = a
		}
		cl, err := admin.Cluster(ctx)
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
	defer func() {
		if admin != nil {
			admin.Close()
		}
	}()
	waitStatus := func(name string, want ha.Status, within time.Duration) time.Duration {
		t.Helper()
		t0 := time.Now()
		for time.Since(t0) < within {
			if status(name) == want {
				return time.Since(t0)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s is not %s after %s", name, want, within)
		return 0
	}
	listening := func(addr string) bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}

	start(nodes[0])
	waitStatus("node-a", ha.StatusActive, time.Minute)
	for t0 := time.Now(); !listening(nodes[0].trapper); time.Sleep(50 * time.Millisecond) {
		if time.Since(t0) > time.Minute {
			t.Fatal("the active node's trapper does not listen")
		}
	}
	start(nodes[1])
	waitStatus("node-b", ha.StatusStandby, time.Minute)
	time.Sleep(2 * ha.Heartbeat(delay))

	// The standby: no trapper port (6.0.14's standby does not listen:
	// "Connection refused", recorded by bench/zabbix-ha-failover.sh), and
	// an API that names the active node.
	if listening(nodes[1].trapper) {
		t.Fatal("the standby node listens on its trapper port")
	}
	if got := standbyCall(t, nodes[1].http, "host.create"); !strings.Contains(got, `"code":-32500`) || !strings.Contains(got, `standby node`) || !strings.Contains(got, `\"node-a\" at 127.0.0.1`) {
		t.Fatalf("the standby's API answered host.create with %s", got)
	}
	if got := standbyCall(t, nodes[1].http, "apiinfo.version"); !strings.Contains(got, `"result":"6.0.14"`) {
		t.Fatalf("the standby's apiinfo.version: %s", got)
	}

	// zabbix_sender with both nodes, the standby first: 6.0.14's sender
	// moves on to the next address of ServerActive when one refuses.
	conf := filepath.Join(t.TempDir(), "agentd.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("ServerActive=%s;%s\nHostname=peregrine-test\n", nodes[1].trapper, nodes[0].trapper)), 0o600)
	type ack struct {
		v    int
		sent time.Time // when zabbix_sender started
		at   time.Time // when it reported the value processed
	}
	var (
		mu        sync.Mutex
		acked     []ack
		sends     []ack          // every run of zabbix_sender, acknowledged or not
		killTimes [][2]time.Time // when a kill was sent, when the node was dead
	)
	stopSend := make(chan struct{})
	sendDone := make(chan struct{})
	go func() {
		defer close(sendDone)
		for v := 1; v <= 20000; v++ {
			select {
			case <-stopSend:
				return
			case <-time.After(200 * time.Millisecond):
			}
			sent := time.Now()
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			out, _ := exec.CommandContext(sctx, sender, "-c", conf, "-t", "5", "-k", "trap.float", "-o", strconv.Itoa(v)).CombinedOutput()
			cancel()
			if m := processedRe.FindSubmatch(out); m != nil && string(m[1]) == "1" {
				mu.Lock()
				acked = append(acked, ack{v, sent, time.Now()})
				mu.Unlock()
			}
			mu.Lock()
			sends = append(sends, ack{v, sent, time.Now()})
			mu.Unlock()
		}
	}()
	ackedCount := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	for t0 := time.Now(); ackedCount() < 5; time.Sleep(50 * time.Millisecond) {
		if time.Since(t0) > 30*time.Second {
			t.Fatal("the active node acknowledged fewer than 5 values in 30 s")
		}
	}
	// PEREGRINE_HA_KILLS kills in turn (default 1): each time the active
	// node is killed, the other takes over, and the killed one comes back
	// as a standby.
	kills := 1
	if v, err := strconv.Atoi(os.Getenv("PEREGRINE_HA_KILLS")); err == nil && v > 0 {
		kills = v
	}
	act, sb := nodes[0], nodes[1]
	for k := 1; k <= kills; k++ {
		killed := time.Now()
		act.cmd.Process.Signal(syscall.SIGKILL)
		act.cmd.Wait()
		dead := time.Now() // a value sent from now on cannot be the killed node's
		killTimes = append(killTimes, [2]time.Time{killed, dead})
		took := waitStatus(sb.name, ha.StatusActive, 3*delay)
		// The standby takes over once the killed node's last heartbeat is
		// older than the delay: within delay + one heartbeat.
		if took > delay+ha.Heartbeat(delay)+2*time.Second {
			t.Errorf("%s took over %s after the kill; the failover delay is %s", sb.name, took, delay)
		}
		var firstAfter time.Duration
		for t0 := time.Now(); firstAfter == 0; time.Sleep(50 * time.Millisecond) {
			mu.Lock()
			if l := acked[len(acked)-1]; l.sent.After(dead) {
				firstAfter = l.at.Sub(killed)
			}
			mu.Unlock()
			if time.Since(t0) > 30*time.Second {
				t.Fatal("no value acknowledged by the new active node within 30 s of its takeover")
			}
		}
		t.Logf("kill -9 %d of the active node: %s active after %.1f s, the sender's first value acknowledged after %.1f s (failover delay %s)",
			k, sb.name, took.Seconds(), firstAfter.Seconds(), delay)
		if k == 1 {
			checkHANodeGet(t, sb, nodes[0])
		}
		for n := ackedCount(); ackedCount() < n+3; time.Sleep(50 * time.Millisecond) {
		}
		// The killed node comes back as a standby.
		start(act)
		waitStatus(act.name, ha.StatusStandby, time.Minute)
		time.Sleep(ha.Heartbeat(delay))
		act, sb = sb, act
	}

	// The active node stops cleanly and the standby takes over at once,
	// shipping what its spool held when it was killed.
	close(stopSend)
	<-sendDone
	act.cmd.Process.Signal(syscall.SIGTERM)
	if err := act.cmd.Wait(); err != nil {
		t.Errorf("%s stopped with %v", act.name, err)
	}
	waitStatus(sb.name, ha.StatusActive, 3*ha.Heartbeat(delay)+10*time.Second)

	want := map[int]bool{}
	for _, a := range acked {
		want[a.v] = true
	}
	var got map[int]int
	for t0 := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		got = clickhouseValues(t, ch.URL, itemID)
		var missing []int
		for v := range want {
			if got[v] == 0 {
				missing = append(missing, v)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Since(t0) > time.Minute {
			t.Fatalf("%d of %d acknowledged values are not in ClickHouse: %v; there: %v", len(missing), len(want), missing, got)
		}
	}
	// A value is stored once, except one whose zabbix_sender run spanned
	// a kill: the killed node may have stored it and died before
	// answering, and the sender then gave it to the next node of
	// ServerActive (at least once, as with 6.0's nodes).
	spanned := func(v int) bool {
		for _, a := range sends {
			if a.v == v {
				for _, k := range killTimes {
					if a.sent.Before(k[1]) && a.at.After(k[0]) {
						return true
					}
				}
			}
		}
		return false
	}
	twice := 0
	for v, n := range got {
		switch {
		case n == 1:
		case n == 2 && spanned(v):
			twice++
		default:
			t.Errorf("value %d is %d times in ClickHouse", v, n)
		}
	}
	t.Logf("%d values acknowledged (by both nodes), all in ClickHouse, %d of them twice (sent to a node as it was killed, then to the next)", len(want), twice)
}

func tailLines(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// standbyCall posts one JSON-RPC call without auth and returns the body.
func standbyCall(t *testing.T, addr, method string) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{},"id":1}`, method)
	resp, err := http.Post("http://"+addr+"/api_jsonrpc.php", "application/json-rpc", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// checkHANodeGet logs in to the node's API (its admin-password file) and
// reads hanode.get: both nodes, n the active one.
func checkHANodeGet(t *testing.T, n, first *haChild) {
	t.Helper()
	// The users are the cluster's, in PostgreSQL: the first node to be
	// active made the Admin user once (its password file); another
	// node makes none and rotates nothing.
	pw, err := os.ReadFile(filepath.Join(first.dir, "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(n.dir, "admin-password")); !os.IsNotExist(err) {
		t.Fatalf("%s made an admin-password file of its own (%v)", n.name, err)
	}
	call := func(method, params, auth string) json.RawMessage {
		a := ""
		if auth != "" {
			a = fmt.Sprintf(`,"auth":%q`, auth)
		}
		resp, err := http.Post("http://"+n.http+"/api_jsonrpc.php", "application/json-rpc",
			strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s,"id":1%s}`, method, params, a)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Result json.RawMessage
			Error  json.RawMessage
		}
		json.NewDecoder(resp.Body).Decode(&r)
		if r.Error != nil {
			t.Fatalf("%s: %s", method, r.Error)
		}
		return r.Result
	}
	var tok string
	json.Unmarshal(call("user.login", fmt.Sprintf(`{"username":"Admin","password":%q}`, strings.TrimSpace(string(pw))), ""), &tok)
	var nodes []struct{ Name, Status string }
	json.Unmarshal(call("hanode.get", `{"output":["name","status"],"sortfield":"name"}`, tok), &nodes)
	if len(nodes) != 2 || nodes[0].Name != "node-a" || nodes[1].Name != "node-b" ||
		(nodes[0].Status == "3") == (nodes[1].Status == "3") || (n.name == "node-b") != (nodes[1].Status == "3") {
		t.Fatalf("hanode.get on the new active node: %+v", nodes)
	}
}

// clickhouseValues counts an item's float values in ClickHouse.
func clickhouseValues(t *testing.T, chURL string, itemID uint64) map[int]int {
	t.Helper()
	q := url.Values{"query": {fmt.Sprintf("SELECT toInt64(value), count() FROM peregrine.history FINAL WHERE itemid = %d GROUP BY value FORMAT TSV", itemID)}}
	resp, err := http.Get(strings.TrimRight(chURL, "/") + "/?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[int]int{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 {
			v, _ := strconv.Atoi(f[0])
			n, _ := strconv.Atoi(f[1])
			out[v] = n
		}
	}
	return out
}

// startHAChild starts n as a child process running a cluster node
// (TestIntegrationHANodeChild) on PostgreSQL dsn and ClickHouse ch; its
// log goes to a file, shown when the test fails (or PEREGRINE_HA_LOGS is
// set), and the process is killed when the test ends.
func startHAChild(t *testing.T, n *haChild, dsn, ch string) {
	t.Helper()
	e := map[string]string{"DSN": dsn, "CH": ch, "Dir": n.dir, "Name": n.name, "Trapper": n.trapper, "HTTP": n.http}
	if n.unreachable > 0 {
		e["Unreachable"] = n.unreachable.String()
	}
	env, _ := json.Marshal(e)
	n.cmd = exec.Command(os.Args[0], "-test.run=^TestIntegrationHANodeChild$", "-test.v")
	n.cmd.Env = append(os.Environ(), "PEREGRINE_HANODE_CHILD="+string(env))
	logf, err := os.Create(filepath.Join(t.TempDir(), n.name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := n.cmd
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() || os.Getenv("PEREGRINE_HA_LOGS") != "" {
			out, _ := os.ReadFile(logf.Name())
			t.Logf("%s's log:\n%s", n.name, tailLines(string(out), 40))
		}
	})
}
