package agent

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/agentsim"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// collect gathers the results of one Check call.
type collect struct {
	mu  sync.Mutex
	got map[uint64]*poll.Result
	ch  chan *poll.Result
}

func newCollect(n int) *collect {
	return &collect{got: map[uint64]*poll.Result{}, ch: make(chan *poll.Result, n)}
}

func (c *collect) done(r *poll.Result) {
	c.mu.Lock()
	c.got[r.ItemID] = r
	c.mu.Unlock()
	c.ch <- r
}

func (c *collect) wait(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-c.ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of %d results arrived", i, n)
		}
	}
}

func counter(t *testing.T, m *selfmon.Registry, line string) string {
	t.Helper()
	var b strings.Builder
	m.WriteText(&b)
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, line+" ") {
			return strings.TrimPrefix(l, line+" ")
		}
	}
	t.Fatalf("no metric %s in\n%s", line, b.String())
	return ""
}

func TestChecker(t *testing.T) {
	huge := append([]byte("ZBXD\x01"), 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0)
	cut := append([]byte("ZBXD\x01"), 100, 0, 0, 0, 0, 0, 0, 0)
	cut = append(cut, "0123456789"...)
	big := strings.Repeat("x", 2000)
	replies := map[string]agentsim.Reply{
		"agent.ping":       {Value: "1"},
		"unknown.key":      agentsim.NotSupported("Unsupported item key."),
		"bare.notsupp":     {Value: "ZBX_NOTSUPPORTED"},
		"agent.error":      {Value: "ZBX_ERROR\x00Cannot obtain data."},
		"garbage":          {Mode: agentsim.Raw, Bytes: []byte("HTTP/1.1 400 Bad Request\r\n\r\n")},
		"huge.length":      {Mode: agentsim.Raw, Bytes: huge},
		"cut.mid.frame":    {Mode: agentsim.Raw, Bytes: cut},
		"too.large":        {Value: big},
		"closed":           {Mode: agentsim.Close},
		"slow":             {Mode: agentsim.Slow, Bytes: []byte("123456789"), Delay: 400 * time.Millisecond},
		"silent":           {Mode: agentsim.Silent},
		"empty":            {Value: ""},
		"system.uname.utf": {Value: "Linux ünïcode"},
	}
	fleet, err := agentsim.Start(1, func(_ int, key string) agentsim.Reply { return replies[key] })
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	refusedAddr := dead.Addr().String()
	dead.Close()

	m := selfmon.NewRegistry()
	c := New(Options{MaxReplySize: 1024, Metrics: m})
	type want struct {
		status poll.Status
		value  string
		errHas string
	}
	cases := map[string]want{
		"agent.ping":       {poll.OK, "1", ""},
		"unknown.key":      {poll.NotSupported, "", "Unsupported item key."},
		"bare.notsupp":     {poll.NotSupported, "", "Not supported by Zabbix Agent"},
		"agent.error":      {poll.NotSupported, "", "Cannot obtain data."},
		"garbage":          {poll.NotSupported, "", "not a Zabbix protocol frame"},
		"huge.length":      {poll.NotSupported, "", "larger than 1024 bytes"},
		"cut.mid.frame":    {poll.NotSupported, "", "in the middle of its reply"},
		"too.large":        {poll.NotSupported, "", "larger than 1024 bytes"},
		"closed":           {poll.NetworkError, "", "closed the connection without a reply"},
		"slow":             {poll.NetworkError, "", "timeout while waiting for the reply"},
		"silent":           {poll.NetworkError, "", "timeout while waiting for the reply"},
		"empty":            {poll.OK, "", ""},
		"system.uname.utf": {poll.OK, "Linux ünïcode", ""},
		"refused":          {poll.NetworkError, "", "cannot connect to " + refusedAddr + ": connection refused"},
	}
	var batch []poll.Check
	keys := map[uint64]string{}
	for key := range cases {
		id := uint64(len(batch) + 1)
		addr := fleet.Addr(0)
		if key == "refused" {
			addr = refusedAddr
		}
		keys[id] = key
		batch = append(batch, poll.Check{ItemID: id, Key: key, Addr: addr, Timeout: time.Second, Due: time.Now()})
	}
	col := newCollect(len(batch))
	c.Check(context.Background(), batch, col.done)
	col.wait(t, len(batch))
	for id, r := range col.got {
		key := keys[id]
		w := cases[key]
		if r.Status != w.status || string(r.Value) != w.value || !strings.Contains(r.Error, w.errHas) || (w.errHas == "" && r.Error != "") {
			t.Errorf("%s: got status %v value %q error %q; want %v %q error containing %q", key, r.Status, r.Value, r.Error, w.status, w.value, w.errHas)
		}
		if r.Clock.IsZero() || r.ItemID != id || r.Key != key {
			t.Errorf("%s: result does not describe its check: %+v", key, r)
		}
	}
	for _, l := range []struct{ metric, want string }{
		{`peregrine_poll_agent_checks_total{result="ok"}`, "3"},
		{`peregrine_poll_agent_checks_total{result="not_supported"}`, "7"},
		{`peregrine_poll_agent_checks_total{result="network_error"}`, "4"},
		{`peregrine_poll_agent_errors_total{reason="garbage"}`, "1"},
		{`peregrine_poll_agent_errors_total{reason="too_large"}`, "2"},
		{`peregrine_poll_agent_errors_total{reason="truncated"}`, "1"},
		{`peregrine_poll_agent_errors_total{reason="timeout"}`, "2"},
		{`peregrine_poll_agent_errors_total{reason="closed"}`, "1"},
		{`peregrine_poll_agent_errors_total{reason="connect_failed"}`, "1"},
		{`peregrine_poll_agent_errors_total{reason="not_supported"}`, "3"},
		{`peregrine_poll_agent_in_flight`, "0"},
	} {
		if got := counter(t, m, l.metric); got != l.want {
			t.Errorf("%s = %s; want %s", l.metric, got, l.want)
		}
	}
}

// A silent agent holds its checks until their timeout, while the checks
// of a healthy agent handed over in the same batch complete: nobody waits
// for the slowest host.
func TestCheckerSilentHostHoldsNobody(t *testing.T) {
	fleet, err := agentsim.Start(2, func(agent int, _ string) agentsim.Reply {
		if agent == 0 {
			return agentsim.Reply{Mode: agentsim.Silent}
		}
		return agentsim.Reply{Value: "42"}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	c := New(Options{})
	var batch []poll.Check
	for i := 0; i < 200; i++ {
		batch = append(batch, poll.Check{ItemID: uint64(i), Key: "k", Addr: fleet.Addr(i % 2), Timeout: time.Minute})
	}
	col := newCollect(len(batch))
	ctx, cancel := context.WithCancel(context.Background())
	c.Check(ctx, batch, col.done)
	col.wait(t, 100) // every healthy result; the silent ones wait a minute
	col.mu.Lock()
	for id, r := range col.got {
		if id%2 != 1 || r.Status != poll.OK || string(r.Value) != "42" {
			t.Errorf("item %d: %v %q %s arrived before the silent host's checks timed out", id, r.Status, r.Value, r.Error)
		}
	}
	col.mu.Unlock()
	// Closing the silent agents ends their checks as network errors.
	fleet.Close()
	cancel()
	col.wait(t, 100)
	for id, r := range col.got {
		if id%2 == 0 && r.Status != poll.NetworkError {
			t.Errorf("silent item %d: %v %s", id, r.Status, r.Error)
		}
	}
}

// Running out of descriptors here is a local error: neither the item nor
// the interface is blamed.
func TestCheckerLocalError(t *testing.T) {
	m := selfmon.NewRegistry()
	c := New(Options{Metrics: m, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.EMFILE)}
	}})
	col := newCollect(1)
	c.Check(context.Background(), []poll.Check{{ItemID: 1, Key: "k", Addr: "127.0.0.1:1", Timeout: time.Second}}, col.done)
	col.wait(t, 1)
	r := col.got[1]
	if r.Status != poll.LocalError || !strings.Contains(r.Error, "too many open files") || !strings.Contains(r.Error, "poll.max_in_flight") {
		t.Fatalf("%v %q", r.Status, r.Error)
	}
	if got := counter(t, m, `peregrine_poll_agent_errors_total{reason="local_error"}`); got != "1" {
		t.Fatalf("local errors counted %s", got)
	}
}

// blackHole returns the address of a listening socket whose accept queue
// is full, so that the kernel drops further SYNs: a connect there never
// completes (a host behind a firewall that drops), on loopback.
func blackHole(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			return addr // this one's SYN was dropped: the queue is full
		}
		t.Cleanup(func() { c.Close() })
		if i == 8 {
			t.Skip("the kernel keeps accepting into a full queue; no black hole on loopback here")
		}
	}
}

// A connect that is never answered ends at the connect timeout (not the
// check's much longer timeout) as a network timeout; one pending when the
// server stops ends at once, abandoned. Both go through the dial by
// parsed IP with the deadline on the socket (Checker.connect).
func TestCheckerConnectTimeoutAndStop(t *testing.T) {
	addr := blackHole(t)
	m := selfmon.NewRegistry()
	c := New(Options{Metrics: m, ConnectTimeout: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	col := newCollect(1)
	c.Check(ctx, []poll.Check{{ItemID: 1, Key: "k", Addr: addr, Timeout: 10 * time.Minute}}, col.done)
	col.wait(t, 1)
	if r := col.got[1]; r.Status != poll.NetworkError || !strings.Contains(r.Error, "timed out") {
		t.Fatalf("unanswered connect: %v %q", r.Status, r.Error)
	}
	if got := counter(t, m, `peregrine_poll_agent_errors_total{reason="timeout"}`); got != "1" {
		t.Fatalf("timeouts counted %s", got)
	}

	slow := New(Options{Metrics: selfmon.NewRegistry(), ConnectTimeout: 10 * time.Minute})
	col = newCollect(1)
	slow.Check(ctx, []poll.Check{{ItemID: 2, Key: "k", Addr: addr, Timeout: 10 * time.Minute}}, col.done)
	cancel()
	col.wait(t, 1) // bounded by wait's own limit, far below the timeouts
	if r := col.got[2]; r.Status != poll.NetworkError {
		t.Fatalf("connect pending at stop: %v %q", r.Status, r.Error)
	}
}
