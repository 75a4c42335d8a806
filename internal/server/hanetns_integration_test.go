package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationHAPartitionNetns is TestIntegrationHAPartition with the
// partition made by the kernel instead of a relay the test cuts: node-a
// runs in a network namespace of its own (unshare -rn), where it reaches
// PostgreSQL and ClickHouse through loopback ports of that namespace
// (relayed over Unix sockets to the real servers, which the namespace
// cannot reach otherwise); the cut is an nftables rule in the namespace
// that drops every packet to and from its PostgreSQL port (dropped, not
// refused: new connections hang too), while ClickHouse and PostgreSQL
// stay up for node-b. node-a stops its active server (its trapper port
// closes) before node-b takes over, and once the rule is gone it
// heartbeats again as a standby. Skipped where user and network
// namespaces are refused.
func TestIntegrationHAPartitionNetns(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL, ClickHouse and two nodes, one in a network namespace")
	}
	testutil.Need(t, "unshare", "util-linux")
	testutil.Need(t, "nft", "nftables")
	if out, err := exec.Command("unshare", "-rn", "nft", "list", "ruleset").CombinedOutput(); err != nil {
		t.Skipf("user and network namespaces are refused here (unshare -rn nft: %v: %s); TestIntegrationHAPartition makes the partition with a relay instead",
			err, strings.TrimSpace(string(out)))
	}
	pg := testutil.StartPostgres(t)
	ch := testutil.StartClickHouse(t)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)
	socks := t.TempDir()
	unixRelay(t, filepath.Join(socks, "pg"), fmt.Sprintf("127.0.0.1:%d", pg.Port))
	unixRelay(t, filepath.Join(socks, "ch"), fmt.Sprintf("127.0.0.1:%d", ch.HTTP))
	const delay = 10 * time.Second

	ctx := context.Background()
	admin, err := ha.OpenAdmin(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	node := func(name string) (ha.NodeInfo, bool) {
		cl, err := admin.Cluster(ctx)
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
	status := func(name string) ha.Status {
		if n, ok := node(name); ok {
			return n.Status
		}
		return -1
	}
	waitStatus := func(name string, want ha.Status) {
		t.Helper()
		for t0 := time.Now(); status(name) != want; time.Sleep(50 * time.Millisecond) {
			if time.Since(t0) > time.Minute {
				t.Fatalf("%s is not %s after a minute (%s)", name, want, status(name))
			}
		}
	}

	// node-a, in its namespace; its trapper is probed through a Unix
	// socket the child serves ("1": the trapper accepts, "0": not).
	probe := filepath.Join(socks, "a-trapper")
	env, _ := json.Marshal(map[string]string{"PG": filepath.Join(socks, "pg"), "CH": filepath.Join(socks, "ch"),
		"Dir": filepath.Join(t.TempDir(), "a"), "Probe": probe})
	a := exec.Command("unshare", "-rn", os.Args[0], "-test.run=^TestIntegrationHANetnsChild$", "-test.v")
	a.Env = append(os.Environ(), "PEREGRINE_HANETNS_CHILD="+string(env))
	logA, err := os.Create(filepath.Join(t.TempDir(), "node-a.log"))
	if err != nil {
		t.Fatal(err)
	}
	a.Stdout, a.Stderr = logA, logA
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Process.Kill()
		a.Wait()
		if t.Failed() {
			out, _ := os.ReadFile(logA.Name())
			t.Logf("node-a's log:\n%s", tailLines(string(out), 40))
		}
	})
	trapperA := func() bool {
		c, err := net.DialTimeout("unix", probe, time.Second)
		if err != nil {
			return false
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(3 * time.Second))
		b := make([]byte, 1)
		_, err = io.ReadFull(c, b)
		return err == nil && b[0] == '1'
	}
	waitStatus("node-a", ha.StatusActive)
	for t0 := time.Now(); !trapperA(); time.Sleep(50 * time.Millisecond) {
		if time.Since(t0) > time.Minute {
			t.Fatal("node-a active but its trapper does not listen after a minute")
		}
	}
	addrs := freeAddrs(t, 2)
	b := &haChild{name: "node-b", dir: filepath.Join(t.TempDir(), "b"), trapper: addrs[0], http: addrs[1]}
	startHAChild(t, b, dsn, ch.URL)
	waitStatus("node-b", ha.StatusStandby)
	time.Sleep(2 * ha.Heartbeat(delay))

	cut := time.Now()
	if err := a.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var closed, took time.Duration
	for closed == 0 || took == 0 {
		if time.Since(cut) > 3*delay {
			t.Fatalf("after %s: node-a's trapper closed after %s, node-b active after %s", 3*delay, closed, took)
		}
		if closed == 0 && !trapperA() {
			closed = time.Since(cut)
		}
		if took == 0 && status("node-b") == ha.StatusActive {
			took = time.Since(cut)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if closed >= took {
		t.Errorf("node-a's trapper closed %s after the cut, node-b active after %s: the old active must stop first", closed, took)
	}
	waitListening(t, b.trapper, 30*time.Second)
	before, ok := node("node-a")
	if !ok || before.Status == ha.StatusActive || trapperA() {
		t.Fatalf("node-a during the partition: %+v, trapper listening %v", before, trapperA())
	}
	healed := time.Now()
	if err := a.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	for {
		if n, ok := node("node-a"); ok && n.Status == ha.StatusStandby && n.LastAccess > before.LastAccess {
			break
		}
		if time.Since(healed) > time.Minute {
			n, _ := node("node-a")
			t.Fatalf("node-a does not heartbeat as a standby a minute after the heal: %+v (during the partition %+v)", n, before)
		}
		time.Sleep(100 * time.Millisecond)
	}
	back := time.Since(healed)
	if trapperA() || status("node-b") != ha.StatusActive {
		t.Fatal("after the partition node-a listens on its trapper or node-b is no longer active")
	}
	t.Logf("partition (nftables in a network namespace): node-a stopped its trapper %.1f s after the cut, node-b active after %.1f s (delay %s); node-a (%s during the partition) a standby %.1f s after the heal",
		closed.Seconds(), took.Seconds(), delay, before.Status, back.Seconds())
}

// TestIntegrationHANetnsChild is node-a of TestIntegrationHAPartitionNetns,
// run inside its network namespace (PEREGRINE_HANETNS_CHILD set);
// otherwise it does nothing. SIGUSR1 adds the nftables rule that drops
// PostgreSQL's packets, SIGUSR2 removes it.
func TestIntegrationHANetnsChild(t *testing.T) {
	env := os.Getenv("PEREGRINE_HANETNS_CHILD")
	if env == "" {
		t.Skip("run by TestIntegrationHAPartitionNetns")
	}
	var a struct{ PG, CH, Dir, Probe string }
	if err := json.Unmarshal([]byte(env), &a); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	pgAddr := tcpRelay(t, a.PG)
	chAddr := tcpRelay(t, a.CH)
	addrs := freeAddrs(t, 2)
	_, pgPort, _ := net.SplitHostPort(pgAddr)
	cfg := haNodeConfig("postgres://postgres@"+pgAddr+"/postgres?sslmode=disable", "http://"+chAddr+"/", a.Dir, "node-a", addrs[0], addrs[1], 10*time.Second)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	probeTrapper(t, a.Probe, addrs[0])

	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for s := range sig {
			script := "delete table inet partition"
			if s == syscall.SIGUSR1 {
				script = "add table inet partition\nadd chain inet partition out { type filter hook output priority 0; }\n" +
					"add rule inet partition out tcp dport " + pgPort + " drop\nadd rule inet partition out tcp sport " + pgPort + " drop"
			}
			cmd := exec.Command("nft", "-f", "-")
			cmd.Stdin = strings.NewReader(script + "\n")
			out, err := cmd.CombinedOutput()
			fmt.Fprintf(os.Stderr, "nft %q: %v %s\n", script, err, out)
		}
	}()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("node", "node-a")
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

// unixRelay serves a Unix socket at path whose connections it forwards
// to the TCP address target, until the test ends.
func unixRelay(t *testing.T, path, target string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go forward(ln, "tcp", target)
}

// tcpRelay serves a loopback TCP port whose connections it forwards to
// the Unix socket path, and returns its address.
func tcpRelay(t *testing.T, path string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go forward(ln, "unix", path)
	return ln.Addr().String()
}

func forward(ln net.Listener, network, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			s, err := net.Dial(network, target)
			if err != nil {
				return
			}
			defer s.Close()
			go func() { io.Copy(s, c); s.Close() }()
			io.Copy(c, s)
		}()
	}
}

// probeTrapper answers each connection to the Unix socket path with "1"
// when addr accepts a connection, "0" when not.
func probeTrapper(t *testing.T, path, addr string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			answer := "0"
			if listening(addr) {
				answer = "1"
			}
			io.WriteString(c, answer)
			c.Close()
		}
	}()
}
