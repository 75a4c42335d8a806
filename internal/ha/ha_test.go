package ha

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

func TestMain(m *testing.M) {
	if os.Getenv("PEREGRINE_HA_CHILD") != "" {
		os.Exit(childNode())
	}
	code := m.Run()
	if err := testutil.NoLeakedGoroutines("ha.(*Node).Run"); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// cluster of tests: a private PostgreSQL and the nodes started on it.
type testCluster struct {
	t   *testing.T
	pg  *testutil.Postgres
	dsn string
}

func newTestCluster(t *testing.T) *testCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	return &testCluster{t: t, pg: pg, dsn: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)}
}

// testNode is a node whose Run goroutine the test can stop without a
// clean stop (kill): Close is not called then.
type testNode struct {
	*Node
	cancel context.CancelFunc
	done   chan error
}

func (c *testCluster) open(name string, delay time.Duration) (*Node, error) {
	return Open(context.Background(), Options{DSN: c.dsn, Name: name, Address: "127.0.0.1", Port: 10051,
		FailoverDelay: delay, Version: "test"})
}

// start opens and runs a node; the test's end kills it.
func (c *testCluster) start(name string, delay time.Duration) *testNode {
	c.t.Helper()
	n, err := c.open(name, delay)
	if err != nil {
		c.t.Fatalf("open node %s: %v", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tn := &testNode{Node: n, cancel: cancel, done: make(chan error, 1)}
	go func() { tn.done <- n.Run(ctx) }()
	c.t.Cleanup(func() {
		tn.kill()
		n.endLease(errors.New("test over"))
		n.pool.Close()
	})
	return tn
}

// kill stops the node's loop as a crash or a pause would: no renewal,
// no clean stop.
func (tn *testNode) kill() {
	tn.cancel()
	<-tn.done
	tn.done <- context.Canceled // for a second kill
}

// waitFor polls cond up to limit (a generous bound, not an assertion
// on speed).
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *testCluster) registry() *Cluster {
	c.t.Helper()
	a, err := OpenAdmin(context.Background(), c.dsn)
	if err != nil {
		c.t.Fatal(err)
	}
	defer a.Close()
	cl, err := a.Cluster(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

func statusOf(cl *Cluster, name string) Status {
	for _, n := range cl.Nodes {
		if n.Name == name {
			return n.Status
		}
	}
	return -1
}

// Three nodes: one active; kill it; one standby takes over within the
// failover delay (plus a heartbeat), after the old active's lease ended;
// the old active's lease is fenced in the database.
func TestIntegrationFailoverThreeNodes(t *testing.T) {
	c := newTestCluster(t)
	const delay = 2 * time.Second
	a := c.start("node-a", delay)
	waitFor(t, "node-a active", 10*time.Second, func() bool { return a.Lease() != nil })
	b, cn := c.start("node-b", delay), c.start("node-c", delay)
	la := a.Lease()
	if la.Epoch() != 1 {
		t.Fatalf("first lease's epoch %d, want 1", la.Epoch())
	}
	// Several heartbeats: still one active, the others standby.
	time.Sleep(3 * Heartbeat(delay))
	cl := c.registry()
	if statusOf(cl, "node-a") != StatusActive || statusOf(cl, "node-b") != StatusStandby || statusOf(cl, "node-c") != StatusStandby {
		t.Fatalf("registry %+v: want a active, b and c standby", cl.Nodes)
	}
	if b.Lease() != nil || cn.Lease() != nil {
		t.Fatal("a standby holds a lease")
	}

	var mu sync.Mutex
	var aEnded time.Time
	go func() {
		<-la.Done()
		mu.Lock()
		aEnded = time.Now()
		mu.Unlock()
	}()
	killed := time.Now()
	a.kill()
	var winner *testNode
	waitFor(t, "a standby takes over", 10*delay, func() bool {
		for _, n := range []*testNode{b, cn} {
			if n.Lease() != nil {
				winner = n
				return true
			}
		}
		return false
	})
	took := time.Now()
	// Generous: the failover delay, a heartbeat to notice, and slack
	// for a loaded machine.
	if d := took.Sub(killed); d > delay+Heartbeat(delay)+3*time.Second {
		t.Errorf("takeover %s after the kill; failover delay %s", d, delay)
	}
	mu.Lock()
	ended := aEnded
	mu.Unlock()
	if ended.IsZero() || !ended.Before(took) {
		t.Errorf("old active's lease ended at %v, takeover seen at %v: it must stop first", ended, took)
	}
	lw := winner.Lease()
	if lw.Epoch() != 2 {
		t.Errorf("new lease's epoch %d, want 2", lw.Epoch())
	}
	time.Sleep(2 * Heartbeat(delay))
	other := b
	if winner == b {
		other = cn
	}
	if other.Lease() != nil {
		t.Fatal("two standbys took over")
	}
	cl = c.registry()
	if statusOf(cl, "node-a") != StatusUnavailable || statusOf(cl, winner.opts.Name) != StatusActive || statusOf(cl, other.opts.Name) != StatusStandby || cl.Epoch != 2 {
		t.Fatalf("registry after failover %+v epoch %d: want a unavailable, %s active, %s standby, epoch 2", cl.Nodes, cl.Epoch, winner.opts.Name, other.opts.Name)
	}

	// The old active's lease is refused, by its own clock and by the
	// database; the new one writes.
	ctx := context.Background()
	if _, err := winner.pool.Exec(ctx, `CREATE TABLE t (v text)`); err != nil {
		t.Fatal(err)
	}
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error { return la.Fence(ctx, tx) })
	if !IsFenced(err) {
		t.Errorf("old lease's Fence: %v, want ErrFenced", err)
	}
	err = pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error { return la.fenceDB(ctx, tx) })
	if !IsFenced(err) || !strings.Contains(err.Error(), "epoch 2") {
		t.Errorf("old lease's database check: %v, want ErrFenced at epoch 2", err)
	}
	if err := lw.Write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES ('new active')`)
		return err
	}); err != nil {
		t.Fatalf("new active's fenced write: %v", err)
	}

	// A clean stop of the active: the standby takes over at its next
	// heartbeat, without waiting the failover delay.
	winner.kill()
	stopped := time.Now()
	if err := winner.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the other standby takes over after a clean stop", 10*delay, func() bool { return other.Lease() != nil })
	if d := time.Since(stopped); d > delay {
		t.Errorf("takeover after a clean stop took %s, more than the failover delay %s", d, delay)
	}
	if e := other.Lease().Epoch(); e != 3 {
		t.Errorf("epoch after the clean stop %d, want 3", e)
	}
	if st := statusOf(c.registry(), winner.opts.Name); st != StatusStopped {
		t.Errorf("cleanly stopped node's status %s, want stopped", st)
	}
}

// A paused active ("old active") with a transaction open after a
// successful Fence, and a second one begun after the takeover: neither
// commits, though the node's own timers never ran.
func TestIntegrationPausedActiveCannotWrite(t *testing.T) {
	c := newTestCluster(t)
	const delay = 2 * time.Second
	ctx := context.Background()
	a := c.start("old-active", delay)
	waitFor(t, "old-active active", 10*time.Second, func() bool { return a.Lease() != nil })
	la := a.Lease()
	if _, err := a.pool.Exec(ctx, `CREATE TABLE t (v text)`); err != nil {
		t.Fatal(err)
	}
	b := c.start("standby", delay)

	tx, err := a.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := la.Fence(ctx, tx); err != nil {
		t.Fatalf("Fence while active: %v", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO t VALUES ('paused write')`); err != nil {
		t.Fatal(err)
	}
	// Pause: no more heartbeats; the transaction stays open.
	a.kill()
	waitFor(t, "the standby takes over", 20*delay, func() bool { return b.Lease() != nil })
	// PostgreSQL ended the idle transaction (idle_in_transaction_
	// session_timeout) before the standby could take over.
	if err := tx.Commit(ctx); err == nil {
		t.Fatal("the paused active's transaction committed after the takeover")
	} else {
		t.Logf("paused transaction's commit: %v", err)
	}

	// Resumed, it writes again: the database refuses the stale token.
	err = pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		if err := la.fenceDB(ctx, tx); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES ('resumed write')`)
		return err
	})
	if !IsFenced(err) {
		t.Fatalf("resumed old active's write: %v, want ErrFenced", err)
	}
	if err := b.Lease().Write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES ('new active')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	rows, _ := b.pool.Query(ctx, `SELECT v FROM t ORDER BY v`)
	got, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "new active" {
		t.Fatalf("table holds %q, want only the new active's row", got)
	}
}

// PostgreSQL goes away: the active node stops processing (its lease's
// context ends) before the failover delay has passed, so before any
// standby could take over; when PostgreSQL is back, one node is active
// again with a new epoch.
func TestIntegrationPartitionStopsActive(t *testing.T) {
	c := newTestCluster(t)
	const delay = 3 * time.Second
	a := c.start("node-a", delay)
	waitFor(t, "node-a active", 10*time.Second, func() bool { return a.Lease() != nil })
	b := c.start("node-b", delay)
	time.Sleep(2 * Heartbeat(delay))
	la := a.Lease()
	// The last renewal before the outage started no later than now.
	lost := time.Now()
	c.pg.Stop()
	select {
	case <-la.Done():
	case <-time.After(10 * delay):
		t.Fatal("the active node kept its lease with PostgreSQL gone")
	}
	if d := time.Since(lost); d >= delay {
		t.Errorf("active stopped %s after losing PostgreSQL; must be before the failover delay %s", d, delay)
	}
	if !IsFenced(context.Cause(la.Context())) {
		t.Errorf("lease's cause %v, want ErrFenced", context.Cause(la.Context()))
	}
	waitFor(t, "node-a standby", 5*time.Second, func() bool { return a.Status() == StatusStandby })
	c.pg.Start()
	waitFor(t, "an active node after PostgreSQL returns", 20*delay, func() bool { return a.Lease() != nil || b.Lease() != nil })
	time.Sleep(2 * Heartbeat(delay))
	if (a.Lease() != nil) == (b.Lease() != nil) {
		t.Fatalf("after the outage: a active %v, b active %v; want exactly one", a.Lease() != nil, b.Lease() != nil)
	}
	cl := c.registry()
	if cl.Epoch != 2 {
		t.Errorf("epoch after the outage %d, want 2", cl.Epoch)
	}
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error { return la.fenceDB(ctx, tx) })
	if !IsFenced(err) {
		t.Errorf("the lease from before the outage: %v, want ErrFenced", err)
	}
}

// Refused starts write nothing: a running node's name, PostgreSQL out
// of reach, a schema from a newer Peregrine.
func TestIntegrationBadStarts(t *testing.T) {
	c := newTestCluster(t)
	const delay = 2 * time.Second
	a := c.start("node-a", delay)
	waitFor(t, "node-a active", 10*time.Second, func() bool { return a.Lease() != nil })
	before := c.registry()

	_, err := c.open("node-a", delay)
	if !errors.Is(err, ErrNameInUse) || !strings.Contains(err.Error(), `node "node-a" (active)`) {
		t.Fatalf("second node-a: %v, want ErrNameInUse naming it", err)
	}
	if after := c.registry(); len(after.Nodes) != len(before.Nodes) || after.Nodes[0].Status != StatusActive {
		t.Fatalf("registry changed by a refused start: %+v", after.Nodes)
	}

	// Nothing listens on the port: a clear error, without the password.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	_, err = Open(context.Background(), Options{DSN: fmt.Sprintf("postgres://mon:hunter2secret@127.0.0.1:%d/x?sslmode=disable&connect_timeout=2", port),
		Name: "node-x", Address: "127.0.0.1", Port: 10051, FailoverDelay: delay})
	if err == nil || !strings.Contains(err.Error(), "cannot reach PostgreSQL at 127.0.0.1") || strings.Contains(err.Error(), "hunter2secret") {
		t.Fatalf("unreachable PostgreSQL: %v", err)
	}
	_, err = Open(context.Background(), Options{DSN: "postgres://mon:hunter2secret@127.0.0.1:%zz/x", Name: "node-x", Address: "127.0.0.1", Port: 10051, FailoverDelay: delay})
	if err == nil || strings.Contains(err.Error(), "hunter2secret") {
		t.Fatalf("unparsable DSN: %v", err)
	}

	// A newer schema: refused, and the registry is as it was.
	c.pg.Exec(`UPDATE peregrine_ha.schema_version SET version = 99`)
	_, err = c.open("node-b", delay)
	if !errors.Is(err, ErrSchemaNewer) {
		t.Fatalf("newer schema: %v, want ErrSchemaNewer", err)
	}
	if n := c.pg.Exec(`SELECT count(*) FROM peregrine_ha.node`); n != "1" {
		t.Fatalf("%s nodes after a refused start, want 1", n)
	}
	c.pg.Exec(`UPDATE peregrine_ha.schema_version SET version = 1`)

	// A running node of another major.minor version: refused, nothing
	// written; one of another patch release joins.
	c.pg.Exec(`UPDATE peregrine_ha.node SET version = '9.9.1' WHERE name = 'node-a'`)
	_, err = c.open("node-b", delay)
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), `node "node-a" runs Peregrine 9.9.1, this one is test`) {
		t.Fatalf("another version: %v, want ErrVersion", err)
	}
	if n := c.pg.Exec(`SELECT count(*) FROM peregrine_ha.node`); n != "1" {
		t.Fatalf("%s nodes after a refused start, want 1", n)
	}
	c.pg.Exec(`UPDATE peregrine_ha.node SET version = 'test' WHERE name = 'node-a'`)

	// Only running nodes count, as 6.0's check before a database upgrade
	// skips stopped and unavailable nodes and those not seen for the
	// failover delay: a stopped node and a silent standby of another
	// version do not keep node-b out.
	c.pg.Exec(`INSERT INTO peregrine_ha.node VALUES ('old-stopped', 'node-old1', '127.0.0.1', 10051, clock_timestamp(), 1, 's1', '9.9.1'),
		('old-silent', 'node-old2', '127.0.0.1', 10051, clock_timestamp() - interval '1 hour', 0, 's2', '9.9.1')`)
	b, err := c.open("node-b", delay)
	if err != nil {
		t.Fatalf("node-b beside a stopped and a silent node of another version: %v", err)
	}
	b.pool.Close()

	// Stopped cleanly, the name can start again and keeps its ID.
	id := a.ID()
	a.kill()
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, err := c.open("node-a", delay)
	if err != nil {
		t.Fatalf("node-a after a clean stop: %v", err)
	}
	defer again.pool.Close()
	if again.ID() != id {
		t.Errorf("node-a's ID %s after a restart, was %s", again.ID(), id)
	}
}

// ha_status, ha_remove_node and ha_set_failover_delay's equivalents;
// a removed node that comes back stops.
func TestIntegrationRuntimeCommands(t *testing.T) {
	c := newTestCluster(t)
	const delay = 2 * time.Second
	ctx := context.Background()
	a := c.start("node-a", delay)
	waitFor(t, "node-a active", 10*time.Second, func() bool { return a.Lease() != nil })
	b := c.start("node-b", delay)
	adm, err := OpenAdmin(ctx, c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()

	if _, err := adm.RemoveNode(ctx, "node-b"); err == nil || !strings.Contains(err.Error(), `node "node-b" is standby`) {
		t.Fatalf("removing a running standby: %v", err)
	}
	if _, err := adm.RemoveNode(ctx, a.ID()); err == nil || !strings.Contains(err.Error(), "is active") {
		t.Fatalf("removing the active node by ID: %v", err)
	}
	if _, err := adm.RemoveNode(ctx, "nosuch"); err == nil || !strings.Contains(err.Error(), `cannot remove HA node: unknown node "nosuch"`) {
		t.Fatalf("removing an unknown node: %v", err)
	}

	// b pauses; the active marks it unavailable; it is removed; when it
	// resumes it stops with ErrRemoved.
	b.kill()
	waitFor(t, "node-b unavailable", 20*delay, func() bool { return statusOf(c.registry(), "node-b") == StatusUnavailable })
	if n, err := adm.RemoveNode(ctx, "node-b"); err != nil || n.Name != "node-b" {
		t.Fatalf("removing an unavailable node: %+v, %v", n, err)
	}
	if err := b.Run(ctx); !errors.Is(err, ErrRemoved) {
		t.Fatalf("a removed node's Run: %v, want ErrRemoved", err)
	}

	// The failover delay at run time: bounds as 6.0's, picked up by the
	// nodes at their next heartbeat.
	for _, d := range []time.Duration{9 * time.Second, 16 * time.Minute, 10500 * time.Millisecond} {
		if err := adm.SetFailoverDelay(ctx, d); err == nil {
			t.Errorf("failover delay %s accepted", d)
		}
	}
	if err := adm.SetFailoverDelay(ctx, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node-a uses the new delay", 10*time.Second, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.delay == 15*time.Second
	})
	if l := a.Lease(); l == nil || time.Until(l.Deadline()) < delay {
		t.Errorf("lease deadline not extended with the longer delay")
	}

	cl, err := adm.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	WriteStatus(&out, cl)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	// Recorded from 6.0.14 (zabbix_server -R ha_status): these three
	// lines, then one per node.
	want := []string{"Failover delay: 15 seconds", "Cluster status:",
		"   #  ID                        Name                      Address                        Status      Last Access"}
	if len(lines) != 4 || lines[0] != want[0] || lines[1] != want[1] || lines[2] != want[2] {
		t.Fatalf("ha status:\n%s", out.String())
	}
	row := fmt.Sprintf("   1. %-25s %-25s %-30s %-11s ", a.ID(), "node-a", "127.0.0.1:10051", "active")
	if !strings.HasPrefix(lines[3], row) || !strings.HasSuffix(lines[3], "s") {
		t.Fatalf("ha status row %q, want prefix %q", lines[3], row)
	}
	js := string(NodesJSON(cl))
	if !strings.HasPrefix(js, `[{"id":"`+a.ID()+`","name":"node-a","status":3,"lastaccess":`) || !strings.Contains(js, `"address":"127.0.0.1:10051","db_timestamp":`) {
		t.Fatalf("zabbix[cluster,discovery,nodes] = %s", js)
	}
}

func TestTakeoverDelayAfterChange(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := cluster{delay: 10 * time.Second, prevDelay: time.Minute, changedAt: t0}
	f := func(now time.Time, want time.Duration) {
		t.Helper()
		c.now = now
		if got := c.takeoverDelay(); got != want {
			t.Errorf("at change+%s: takeover delay %s, want %s", now.Sub(t0), got, want)
		}
	}
	f(t0, time.Minute)                                // shorter: the old one binds standbys...
	f(t0.Add(59*time.Second), time.Minute)            // ...until it has passed
	f(t0.Add(time.Minute), 10*time.Second)            // then the new one
	c.delay, c.prevDelay = 2*time.Minute, time.Minute // longer: at once
	f(t0, 2*time.Minute)
}

func TestTimings(t *testing.T) {
	for _, x := range []struct{ d, m, h time.Duration }{
		{time.Minute, 5 * time.Second, 5 * time.Second},
		{10 * time.Second, 5 * time.Second, 5 * time.Second / 3},
		{15 * time.Minute, 5 * time.Second, 5 * time.Second},
		{2 * time.Second, time.Second, time.Second / 3},
	} {
		if m, h := Margin(x.d), Heartbeat(x.d); m != x.m || h != x.h || 3*h+m > x.d {
			t.Errorf("delay %s: margin %s heartbeat %s, want %s %s", x.d, m, h, x.m, x.h)
		}
	}
}

func TestCompatibleVersions(t *testing.T) {
	for _, x := range []struct {
		a, b string
		ok   bool
	}{{"0.1.0-dev", "0.1.3", true}, {"v1.2.0", "1.2.9", true}, {"0.1.0", "0.2.0", false}, {"1.0.0", "2.0.0", false}, {"test", "test", true}} {
		if compatible(x.a, x.b) != x.ok {
			t.Errorf("compatible(%q, %q) = %v", x.a, x.b, !x.ok)
		}
	}
}

func TestFormatAgeAndParseDelay(t *testing.T) {
	for s, want := range map[int64]string{0: "0s", 5: "5s", 65: "1m 5s", 7203: "2h 0m 3s", 86400: "1d 0h 0m 0s", -3: "0s"} {
		if got := formatAge(s); got != want {
			t.Errorf("formatAge(%d) = %q, want %q", s, got, want)
		}
	}
	for in, want := range map[string]time.Duration{"30": 30 * time.Second, "10s": 10 * time.Second, "5m": 5 * time.Minute, "1h": time.Hour} {
		if got, err := ParseDelay(in); err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "m", "1d", "-5", "1.5m"} {
		if _, err := ParseDelay(in); err == nil {
			t.Errorf("ParseDelay(%q) accepted", in)
		}
	}
	if s := string(NodesJSON(&Cluster{})); s != "[]" {
		t.Errorf("no nodes: %s, want [] (a standalone 6.0.14's value)", s)
	}
}
