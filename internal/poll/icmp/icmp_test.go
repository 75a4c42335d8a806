package icmp

import (
	"context"
	"encoding/binary"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// collect gathers the results of checks by item id.
type collect struct {
	mu  sync.Mutex
	got map[uint64]*poll.Result
	ch  chan struct{}
}

func newCollect(n int) *collect {
	return &collect{got: map[uint64]*poll.Result{}, ch: make(chan struct{}, n)}
}

func (c *collect) done(r *poll.Result) {
	c.mu.Lock()
	if c.got[r.ItemID] != nil {
		panic("BUG: item " + strconv.FormatUint(r.ItemID, 10) + " reported twice")
	}
	c.got[r.ItemID] = r
	c.mu.Unlock()
	c.ch <- struct{}{}
}

func (c *collect) wait(t *testing.T, n int) map[uint64]*poll.Result {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-c.ch:
		case <-time.After(60 * time.Second):
			t.Fatalf("only %d of %d results arrived", i, n)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got
}

func metric(t *testing.T, m *selfmon.Registry, line string) int {
	t.Helper()
	var b strings.Builder
	m.WriteText(&b)
	for _, l := range strings.Split(b.String(), "\n") {
		if v, ok := strings.CutPrefix(l, line+" "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("metric %s = %q", line, v)
			}
			return n
		}
	}
	t.Fatalf("no metric %s in\n%s", line, b.String())
	return 0
}

// newChecker returns a checker whose IPv4 socket opens, or skips the
// test where ICMP sockets are not permitted (never under CI, which runs
// as root).
func newChecker(t *testing.T, opts Options) *Checker {
	t.Helper()
	s, err := openSock(false, opts.Socket, 1<<16)
	if err != nil {
		// CI runs as root: raw sockets must work there. Datagram ICMP
		// also needs net.ipv4.ping_group_range, which is usually closed
		// ("1 0"): TestNetnsDeadAndAlive opens it in its own namespace.
		if os.Getenv("CI") != "" && opts.Socket != ModeDgram {
			t.Fatalf("under CI ICMP sockets must work: %v", err)
		}
		t.Skipf("no ICMP socket here: %v", err)
	}
	s.conn.Close()
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	c := New(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// run checks keys (item ids 1..n in order) against addr and returns the
// results by key.
func runKeys(t *testing.T, c *Checker, addr string, keys ...string) map[string]*poll.Result {
	t.Helper()
	batch := make([]poll.Check, len(keys))
	for i, k := range keys {
		batch[i] = poll.Check{ItemID: uint64(i + 1), Key: k, Addr: addr, Timeout: 3 * time.Second}
	}
	col := newCollect(len(keys))
	c.Check(context.Background(), batch, col.done)
	got := col.wait(t, len(keys))
	out := map[string]*poll.Result{}
	for i, k := range keys {
		out[k] = got[uint64(i+1)]
	}
	return out
}

func wantValue(t *testing.T, res map[string]*poll.Result, key, want string) {
	t.Helper()
	r := res[key]
	if r.Status != poll.OK || string(r.Value) != want {
		t.Errorf("%s = %s %q (%s), want %q", key, r.Status, r.Value, r.Error, want)
	}
}

// wantSeconds checks an icmppingsec value is a reply time: above zero
// and below the timeout.
func wantSeconds(t *testing.T, res map[string]*poll.Result, key string, below float64) {
	t.Helper()
	r := res[key]
	v, err := strconv.ParseFloat(string(r.Value), 64)
	if r.Status != poll.OK || err != nil || v < 0.0001 || v >= below {
		t.Errorf("%s = %s %q (%s), want seconds in [0.0001, %g)", key, r.Status, r.Value, r.Error, below)
	}
}

func TestLoopback(t *testing.T) {
	for _, mode := range []string{ModeRaw, ModeDgram} {
		t.Run("socket="+mode, func(t *testing.T) {
			m := selfmon.NewRegistry()
			c := newChecker(t, Options{Socket: mode, Metrics: m})
			res := runKeys(t, c, "127.0.0.1:10050",
				"icmpping", "icmppingloss[,2,20]", "icmppingsec[127.0.0.1,3,20,,,min]",
				"icmppingsec[,3,20,1400,,max]", "icmpping[127.0.0.2,1]", "icmpping[,0]")
			wantValue(t, res, "icmpping", "1")
			wantValue(t, res, "icmppingloss[,2,20]", "0")
			wantSeconds(t, res, "icmppingsec[127.0.0.1,3,20,,,min]", 0.5)
			wantSeconds(t, res, "icmppingsec[,3,20,1400,,max]", 0.5)
			wantValue(t, res, "icmpping[127.0.0.2,1]", "1")
			if r := res["icmpping[,0]"]; r.Status != poll.NotSupported || !strings.Contains(r.Error, "number of packets") {
				t.Errorf("icmpping[,0] = %s %q, want not supported", r.Status, r.Error)
			}
			// 3 + 2 + 3 + 3 + 1 packets, every one answered.
			if n := metric(t, m, "peregrine_poll_icmp_requests_total"); n != 12 {
				t.Errorf("requests sent = %d, want 12", n)
			}
			if n := metric(t, m, "peregrine_poll_icmp_replies_total"); n != 12 {
				t.Errorf("replies = %d, want 12", n)
			}
			if n := metric(t, m, `peregrine_poll_icmp_checks_total{result="ok"}`); n != 5 {
				t.Errorf("ok checks = %d, want 5", n)
			}
		})
	}
}

func TestLoopbackIPv6(t *testing.T) {
	c := newChecker(t, Options{})
	if _, err := openSock(true, "", 1<<16); err != nil {
		t.Skipf("no IPv6 ICMP socket: %v", err)
	}
	res := runKeys(t, c, "[::1]:10050", "icmpping[,2,20]", "icmppingloss[::1,2,20]", "icmppingsec[,2,20]")
	wantValue(t, res, "icmpping[,2,20]", "1")
	wantValue(t, res, "icmppingloss[::1,2,20]", "0")
	wantSeconds(t, res, "icmppingsec[,2,20]", 0.5)
}

// TestPacketSpacing checks that a check's packets leave one interval
// apart: with 4 packets 60 ms apart the check cannot end before 180 ms
// (a lower bound only, which a slow machine cannot break).
func TestPacketSpacing(t *testing.T) {
	c := newChecker(t, Options{})
	start := time.Now()
	res := runKeys(t, c, "127.0.0.1:1", "icmppingloss[,4,60]")
	if el := time.Since(start); el < 180*time.Millisecond {
		t.Errorf("4 packets 60 ms apart took %v", el)
	}
	wantValue(t, res, "icmppingloss[,4,60]", "0")
}

// TestRateLimit checks that the sender keeps to its rate: 30 packets at
// 100/s with a burst of 1 take at least 290 ms.
func TestRateLimit(t *testing.T) {
	m := selfmon.NewRegistry()
	c := newChecker(t, Options{Rate: 100, Metrics: m})
	keys := make([]string, 30)
	for i := range keys {
		keys[i] = "icmpping[127.0.0." + strconv.Itoa(i+1) + ",1]"
	}
	start := time.Now()
	res := runKeys(t, c, "127.0.0.1:1", keys...)
	if el := time.Since(start); el < 290*time.Millisecond {
		t.Errorf("30 packets at 100/s took %v", el)
	}
	for _, k := range keys {
		wantValue(t, res, k, "1")
	}
	if metric(t, m, "peregrine_poll_icmp_rate_limited_total") == 0 {
		t.Error("the rate limit never made the sender wait")
	}
}

// TestForgedReplies sends echo replies to ourselves from a second raw
// socket: one with another process's identifier, one with ours but a
// sequence nobody asked for, one with ours and a wrong payload. All three
// are counted and dropped, and a real check still gets its reply.
func TestForgedReplies(t *testing.T) {
	m := selfmon.NewRegistry()
	c := newChecker(t, Options{Socket: ModeRaw, Metrics: m})
	runKeys(t, c, "127.0.0.1:1", "icmpping[,1]") // opens the socket, learns nothing else
	s, err := openSock(false, ModeRaw, 1<<16)
	if err != nil {
		t.Skipf("no second raw socket: %v", err)
	}
	defer s.conn.Close()
	forge := func(id, seq uint16, cookie []byte) {
		b := make([]byte, 8+len(c.cookie)+8)
		b[0] = 0 // echo reply
		binary.BigEndian.PutUint16(b[4:], id)
		binary.BigEndian.PutUint16(b[6:], seq)
		copy(b[8:], cookie)
		binary.BigEndian.PutUint16(b[2:], checksum(b))
		if err := s.writeTo(b, netip.MustParseAddr("127.0.0.1")); err != nil {
			t.Fatal(err)
		}
	}
	forge(c.id+1, 1, c.cookie[:])
	forge(c.id, 40000, c.cookie[:])
	forge(c.id, 1, []byte("notours!"))
	deadline := time.Now().Add(10 * time.Second)
	for metric(t, m, `peregrine_poll_icmp_dropped_replies_total{reason="foreign_id"}`) < 1 ||
		metric(t, m, `peregrine_poll_icmp_dropped_replies_total{reason="unmatched"}`) < 1 ||
		metric(t, m, `peregrine_poll_icmp_dropped_replies_total{reason="bad_payload"}`) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("forged replies were not all counted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	res := runKeys(t, c, "127.0.0.1:1", "icmppingloss[,2,20]")
	wantValue(t, res, "icmppingloss[,2,20]", "0")
}

// TestClose ends checks in progress as abandoned, each reported once.
func TestClose(t *testing.T) {
	c := newChecker(t, Options{})
	col := newCollect(2)
	c.Check(context.Background(), []poll.Check{
		{ItemID: 1, Key: "icmpping[,100,1000]", Addr: "127.0.0.1:1"},
		{ItemID: 2, Key: "icmpping[,100,1000]", Addr: "127.0.0.1:1"},
	}, col.done)
	time.Sleep(50 * time.Millisecond) // let the first packets go
	c.Close()
	for id, r := range col.wait(t, 2) {
		if r.Status != poll.NetworkError || r.Error != errStopping {
			t.Errorf("item %d after Close: %s %q", id, r.Status, r.Error)
		}
	}
}

// TestContextCancel stops sending a check's packets once its context
// ends (not at its next packet, an hour away); the check reports
// abandoned.
func TestContextCancel(t *testing.T) {
	c := newChecker(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	col := newCollect(1)
	c.Check(ctx, []poll.Check{{ItemID: 1, Key: "icmpping[,100,3600000]", Addr: "127.0.0.1:1"}}, col.done)
	time.Sleep(50 * time.Millisecond)
	cancel()
	r := col.wait(t, 1)[1]
	if r.Status != poll.NetworkError || r.Error != errStopping {
		t.Errorf("after cancel: %s %q", r.Status, r.Error)
	}
}

// TestDNSTarget: a target given by name is resolved (localhost: from
// /etc/hosts, no packet leaves), then pinged like an address.
func TestDNSTarget(t *testing.T) {
	c := newChecker(t, Options{})
	res := runKeys(t, c, "127.0.0.1:1", "icmpping[localhost,2,20]")
	wantValue(t, res, "icmpping[localhost,2,20]", "1")
	// The interface's DNS name when the key names no target.
	res = runKeys(t, c, "localhost:10050", "icmppingloss[,2,20]")
	wantValue(t, res, "icmppingloss[,2,20]", "0")
}
