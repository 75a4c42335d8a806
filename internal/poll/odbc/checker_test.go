package odbc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// fakeDriver stands for unixODBC in the checker's unit tests. Queries
// say what the connection does: "select N" answers N; "hang" blocks
// until cancelled; "stuck" blocks until release is closed, whatever
// cancel does; "broken" fails as a lost connection. A data source whose
// connection string contains "slowconnect" takes connectDelay to open.
type fakeDriver struct {
	connectDelay time.Duration
	release      chan struct{}

	mu       sync.Mutex
	opened   int
	live     map[string]int // connections open per source
	maxLive  map[string]int
	queries  int // running now
	maxQuery int
	closed   int
	// brokenOnce: the next query on a connection opened before it was
	// set fails as lost (a server restart).
	restartAt int
}

func newFakeDriver() *fakeDriver {
	return &fakeDriver{release: make(chan struct{}), live: map[string]int{}, maxLive: map[string]int{}, restartAt: -1}
}

func (d *fakeDriver) open(src string, loginTimeout time.Duration) (dbConn, error) {
	if strings.Contains(src, "slowconnect") {
		time.Sleep(d.connectDelay)
	}
	if strings.Contains(src, "refused") {
		return nil, &dbError{stage: stageConnect, diag: "[SQL_ERROR]:[08001][101][refused]"}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.opened++
	d.live[src]++
	d.maxLive[src] = max(d.maxLive[src], d.live[src])
	return &fakeConn{d: d, src: src, serial: d.opened, cancelled: make(chan struct{})}, nil
}

func (d *fakeDriver) close() {}

func (d *fakeDriver) stat(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f()
}

type fakeConn struct {
	d          *fakeDriver
	src        string
	serial     int
	cancelOnce sync.Once
	cancelled  chan struct{}
}

func (c *fakeConn) query(ctx context.Context, q string, s *shaper) error {
	d := c.d
	d.mu.Lock()
	d.queries++
	d.maxQuery = max(d.maxQuery, d.queries)
	lost := d.restartAt >= 0 && c.serial <= d.restartAt
	d.mu.Unlock()
	defer d.stat(func() { d.queries-- })
	if lost {
		return &dbError{stage: stageExecute, diag: "[SQL_ERROR]:[08S01][35][connection lost]", broken: true}
	}
	switch {
	case q == "hang":
		<-c.cancelled
		return &dbError{stage: stageExecute, diag: "[SQL_ERROR]:[57014][1][canceling statement]"}
	case q == "stuck":
		<-d.release
		return nil
	case q == "broken":
		return &dbError{stage: stageExecute, diag: "[SQL_ERROR]:[08S01][35][connection lost]", broken: true}
	case strings.HasPrefix(q, "sleep "):
		var ms int
		fmt.Sscan(q[len("sleep "):], &ms)
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	if err := s.setLabels(s.columns(1), func(int) (string, error) { return "c", nil }); err != nil {
		return err
	}
	s.beginRow()
	if err := s.value([]byte(strings.TrimPrefix(q, "select ")), false); err != nil {
		return err
	}
	s.endRow()
	return nil
}

func (c *fakeConn) cancel() { c.cancelOnce.Do(func() { close(c.cancelled) }) }

func (c *fakeConn) close() {
	c.d.stat(func() {
		c.d.live[c.src]--
		c.d.closed++
	})
}

func newFake(t *testing.T, opts Options) (*Checker, *fakeDriver, items) {
	d := newFakeDriver()
	m := items{}
	opts.Item, opts.driver = m.get, d
	c := New(opts)
	t.Cleanup(func() {
		select {
		case <-d.release:
		default:
			close(d.release)
		}
		c.Close()
	})
	return c, d, m
}

func TestCheckerValues(t *testing.T) {
	c, _, m := newFake(t, Options{})
	a := m.add("db.odbc.select[a,dsn]", "select 42", "u", "p", time.Second)
	g := m.add("db.odbc.get[a,dsn]", "select 7", "", "", time.Second)
	empty := m.add("db.odbc.select[a,dsn]", "", "", "", time.Second)
	badKey := m.add("db.odbc.select[a]", "select 1", "", "", time.Second)
	refused := m.add("db.odbc.select[a,,Driver=refused]", "select 1", "", "", time.Second)
	res := run(t, c, []poll.Check{a, g, empty, badKey, refused}, 10*time.Second)
	for _, w := range []struct {
		ch            poll.Check
		status        poll.Status
		value, errMsg string
	}{
		{a, poll.OK, "42", ""},
		{g, poll.OK, `[{"c":"7"}]`, ""},
		{empty, poll.NotSupported, "", "SQL query cannot be empty."},
		{badKey, poll.NotSupported, "", "Invalid number of parameters."},
		{refused, poll.NotSupported, "", "Cannot connect to ODBC DSN: [SQL_ERROR]:[08001][101][refused]"},
	} {
		r := res.of(w.ch.ItemID)
		if r.Status != w.status || string(r.Value) != w.value || r.Error != w.errMsg {
			t.Errorf("%s %q: %s %q %q, want %s %q %q", w.ch.Key, m[w.ch.ItemID].Ext().Params, r.Status, r.Value, r.Error, w.status, w.value, w.errMsg)
		}
	}
	if n := c.failures[reasonConnect].Load(); n != 1 {
		t.Errorf("%d connect failures counted, want 1", n)
	}
	// An item gone or changed type meanwhile.
	delete(m, a.ItemID)
	if r := run(t, c, []poll.Check{a}, 10*time.Second).of(a.ItemID); r.Status != poll.NotSupported {
		t.Errorf("a deleted item: %s %q", r.Status, r.Error)
	}
}

// TestCheckerBounds: connections per source and ODBC calls at once stay
// within their bounds, and connections are reused.
func TestCheckerBounds(t *testing.T) {
	c, d, m := newFake(t, Options{MaxConnsPerSource: 2, Workers: 3})
	var batch []poll.Check
	for i := range 30 {
		batch = append(batch, m.add(fmt.Sprintf("db.odbc.select[q%d,dsn%d]", i, i%3), "sleep 5", "", "", 10*time.Second))
	}
	res := run(t, c, batch, 30*time.Second)
	for _, ch := range batch {
		if r := res.of(ch.ItemID); r.Status != poll.OK {
			t.Fatalf("%s: %s %q", ch.Key, r.Status, r.Error)
		}
	}
	d.stat(func() {
		for src, n := range d.maxLive {
			if n > 2 {
				t.Errorf("%d connections to %s at once, want at most 2", n, src)
			}
		}
		if d.maxQuery > 3 {
			t.Errorf("%d queries at once, want at most 3 (the workers)", d.maxQuery)
		}
		if d.opened > 6 {
			t.Errorf("%d connections opened for 30 checks of 3 sources, want at most 6 (reused)", d.opened)
		}
	})
}

// TestCheckerTimeouts: a check times out in each phase with its own
// message, counted; a query is cancelled and its connection closed, not
// reused.
func TestCheckerTimeouts(t *testing.T) {
	c, d, m := newFake(t, Options{MaxConnsPerSource: 1, Workers: 8})
	d.connectDelay = time.Second
	hang := m.add("db.odbc.select[h,dsn]", "hang", "", "", 300*time.Millisecond)
	// Waits for the one connection hang holds.
	wait := m.add("db.odbc.select[w,dsn]", "select 1", "", "", 200*time.Millisecond)
	slow := m.add("db.odbc.select[s,,slowconnect]", "select 1", "", "", 200*time.Millisecond)
	first := newResults()
	c.Check(context.Background(), []poll.Check{hang}, first.done)
	waitFor(t, 10*time.Second, "hang to hold the connection", func() bool { return c.busy.Load() == 1 })
	res := run(t, c, []poll.Check{wait, slow}, 10*time.Second)
	<-first.n
	res.got[hang.ItemID] = first.of(hang.ItemID)
	for _, w := range []struct {
		ch  poll.Check
		msg string
	}{
		{hang, "Cannot execute ODBC query: timeout after 300ms."},
		{wait, "Timeout after 200ms waiting for a connection to the data source: at most odbc.max_conns_per_source (1) are open to one, and odbc.workers (8) calls run at once."},
		{slow, "Cannot connect to ODBC DSN: timeout after 200ms."},
	} {
		if r := res.of(w.ch.ItemID); r.Status != poll.NotSupported || r.Error != w.msg {
			t.Errorf("%s: %s %q, want %q", w.ch.Key, r.Status, r.Error, w.msg)
		}
	}
	if n := c.failures[reasonTimeout].Load(); n != 3 {
		t.Errorf("%d timeouts counted, want 3", n)
	}
	waitFor(t, 10*time.Second, "the slow connect to return", func() bool { return c.busy.Load() == 0 && c.overdue.Load() == 0 })
	// The cancelled connection was closed; the next check opens another.
	d.stat(func() {
		if d.closed != 1 {
			t.Errorf("%d connections closed, want the cancelled one", d.closed)
		}
	})
	ok := m.add("db.odbc.select[o,dsn]", "select 1", "", "", time.Second)
	if r := run(t, c, []poll.Check{ok}, 10*time.Second).of(ok.ItemID); r.Status != poll.OK {
		t.Errorf("after the timeout: %s %q", r.Status, r.Error)
	}
}

// TestCheckerOverdue: a driver that ignores cancel keeps its call (and
// worker) past the check's report, which the overdue gauge shows until
// the call returns.
func TestCheckerOverdue(t *testing.T) {
	c, d, m := newFake(t, Options{})
	// The deadline must pass while the call is stuck, not while the
	// check still waits for its connection: with 100 ms a loaded CI
	// machine had not reached the query yet (overdue 0, a timeout
	// "waiting for a connection"); 2 s leaves room for that.
	stuck := m.add("db.odbc.select[s,dsn]", "stuck", "", "", 2*time.Second)
	if r := run(t, c, []poll.Check{stuck}, 10*time.Second).of(stuck.ItemID); r.Status != poll.NotSupported {
		t.Fatalf("%s %q", r.Status, r.Error)
	}
	if n := c.overdue.Load(); n != 1 {
		t.Errorf("overdue %d, want 1", n)
	}
	close(d.release)
	waitFor(t, 10*time.Second, "the stuck call to return", func() bool { return c.overdue.Load() == 0 && c.busy.Load() == 0 })
}

// TestCheckerAbandon: checks running when ctx ends are reported
// abandoned at once; those handed over after are too.
func TestCheckerAbandon(t *testing.T) {
	c, _, m := newFake(t, Options{})
	h1 := m.add("db.odbc.select[h1,dsn]", "hang", "", "", time.Hour)
	h2 := m.add("db.odbc.select[h2,dsn2]", "hang", "", "", time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	r := newResults()
	c.Check(ctx, []poll.Check{h1, h2}, r.done)
	waitFor(t, 10*time.Second, "the queries to start", func() bool { return c.busy.Load() == 2 })
	cancel()
	for range 2 {
		select {
		case <-r.n:
		case <-time.After(10 * time.Second):
			t.Fatal("not reported once ctx ended")
		}
	}
	for _, ch := range []poll.Check{h1, h2} {
		if res := r.of(ch.ItemID); res.Status != poll.NetworkError {
			t.Errorf("%s: %s %q, want abandoned", ch.Key, res.Status, res.Error)
		}
	}
	r2 := newResults()
	c.Check(ctx, []poll.Check{h1}, r2.done)
	<-r2.n
	if res := r2.of(h1.ItemID); res.Status != poll.NetworkError {
		t.Errorf("handed over after ctx ended: %s", res.Status)
	}
}

// TestCheckerRetry: a reused connection that turns out lost is closed
// with the other idle ones, and the query runs once more on a new one.
func TestCheckerRetry(t *testing.T) {
	c, d, m := newFake(t, Options{})
	var batch []poll.Check
	for i := range 4 {
		batch = append(batch, m.add(fmt.Sprintf("db.odbc.select[q%d,dsn]", i), "sleep 20", "", "", 5*time.Second))
	}
	run(t, c, batch, 10*time.Second)
	d.stat(func() { d.restartAt = d.opened })
	res := run(t, c, batch, 10*time.Second)
	for _, ch := range batch {
		if r := res.of(ch.ItemID); r.Status != poll.OK {
			t.Errorf("%s after a restart: %s %q", ch.Key, r.Status, r.Error)
		}
	}
	// A fresh connection that fails is not retried.
	broken := m.add("db.odbc.select[b,dsn3]", "broken", "", "", time.Second)
	if r := run(t, c, []poll.Check{broken}, 10*time.Second).of(broken.ItemID); r.Status != poll.NotSupported || !strings.Contains(r.Error, "connection lost") {
		t.Errorf("broken: %s %q", r.Status, r.Error)
	}
}

// TestCheckerIdle: idle connections close after IdleTimeout, and unused
// pools go.
func TestCheckerIdle(t *testing.T) {
	c, d, m := newFake(t, Options{IdleTimeout: 200 * time.Millisecond})
	ch := m.add("db.odbc.select[a,dsn]", "select 1", "", "", time.Second)
	run(t, c, []poll.Check{ch}, 10*time.Second)
	if c.conns.Load() != 1 {
		t.Fatalf("%d connections open after a check, want 1 kept", c.conns.Load())
	}
	waitFor(t, 10*time.Second, "the idle connection to close", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.conns.Load() == 0 && len(c.pools) == 0
	})
	d.stat(func() {
		if d.closed != 1 {
			t.Errorf("%d closed", d.closed)
		}
	})
}

func TestCheckerNoDriver(t *testing.T) {
	m := items{}
	c := New(Options{Item: m.get, driver: newFakeDriver()})
	c.drvErr = errNoDriver
	defer c.Close()
	ch := m.add("db.odbc.select[a,dsn]", "select 1", "", "", time.Second)
	r := run(t, c, []poll.Check{ch}, 10*time.Second).of(ch.ItemID)
	if r.Status != poll.NotSupported || r.Error != errNoDriver.Error() || c.failures[reasonNoDriver].Load() != 1 {
		t.Errorf("%s %q", r.Status, r.Error)
	}
}
