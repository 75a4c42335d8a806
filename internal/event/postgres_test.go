package event

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// opener opens the store a test works on; the same dir reopens the
// same store.
type opener func(t *testing.T, dir string, c *clock) *Store

// eachBackend runs a behavioural test against the embedded store and
// against PostgreSQL (a real PostgreSQL 15, every write fenced by an
// active HA node's lease).
func eachBackend(t *testing.T, test func(*testing.T, opener)) {
	t.Run("embedded", func(t *testing.T) { test(t, open) })
	t.Run("postgres", func(t *testing.T) {
		pg := startPG(t)
		n := pg.node(t, "event-a", 10*time.Second)
		l := waitLease(t, n)
		schemas := map[string]string{}
		test(t, func(t *testing.T, dir string, c *clock) *Store {
			t.Helper()
			sc, ok := schemas[dir]
			if !ok {
				sc = fmt.Sprintf("ev%d", len(schemas))
				schemas[dir] = sc
			}
			s, err := Open(Options{Now: c.now, Retention: 2 * 24 * time.Hour,
				Postgres: &pglog.Options{Pool: n.Pool(), Write: l.Write, Schema: sc}})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

type testPG struct {
	dsn string
}

func startPG(t *testing.T) *testPG {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	return &testPG{dsn: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)}
}

type testNode struct {
	*ha.Node
	cancel context.CancelFunc
	done   chan struct{}
}

// node opens and runs an HA node; stop ends its loop without a clean
// stop (as a crash: no more heartbeats).
func (p *testPG) node(t *testing.T, name string, delay time.Duration) *testNode {
	t.Helper()
	n, err := ha.Open(context.Background(), ha.Options{DSN: p.dsn, Name: name, Address: "127.0.0.1", Port: 10051,
		FailoverDelay: delay, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tn := &testNode{Node: n, cancel: cancel, done: make(chan struct{})}
	go func() { defer close(tn.done); n.Run(ctx) }()
	t.Cleanup(func() {
		tn.stop()
		n.Close(context.Background())
	})
	return tn
}

func (n *testNode) stop() { n.cancel(); <-n.done }

func waitLease(t *testing.T, n *testNode) *ha.Lease {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for n.Lease() == nil || n.Lease().Context().Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the node never became active")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return n.Lease()
}

func countRows(t *testing.T, n *testNode, schema string) int {
	t.Helper()
	var c int
	if err := n.Pool().QueryRow(context.Background(), `SELECT count(*) FROM `+pgx.Identifier{schema, "event_log"}.Sanitize()).Scan(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPGFencedWriteRefused: once the cluster's epoch moved on (a
// takeover this node has not noticed, as after a pause), every commit
// of the old lease is refused by PostgreSQL, concurrent ones grouped
// in one transaction too, and nothing of them is stored or applied.
func TestPGFencedWriteRefused(t *testing.T) {
	pg := startPG(t)
	a := pg.node(t, "event-a", 10*time.Second)
	l := waitLease(t, a)
	c := &clock{time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s, err := Open(Options{Now: c.now, Postgres: &pglog.Options{Pool: a.Pool(), Write: l.Write}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	commit(t, s, Batch{Events: []Event{problem(1, 100, "before")}, Runtimes: []Runtime{{TriggerID: 1, Value: 1, LastChange: 100}}})
	before := stateOf(s)
	rows := countRows(t, a, pglog.DefaultSchema)
	if rows != 2 { // the day's carry record and the commit
		t.Fatalf("%d rows, want 2", rows)
	}

	if _, err := a.Pool().Exec(context.Background(), `UPDATE peregrine_ha.cluster SET epoch = epoch + 1`); err != nil {
		t.Fatal(err)
	}
	if l.Context().Err() != nil {
		t.Fatal("the lease ended locally already; the test needs the database's refusal")
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Commit(&Batch{Events: []Event{problem(uint64(10+i), 200, "after")}, Acks: []Ack{{EventID: 1, Action: ActionAcknowledge}}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !ha.IsFenced(err) {
			t.Errorf("commit %d after the epoch moved: %v, want ErrFenced", i, err)
		}
	}
	if got := countRows(t, a, pglog.DefaultSchema); got != rows {
		t.Fatalf("%d rows after refused commits, want %d", got, rows)
	}
	if d := cmp.Diff(before, stateOf(s)); d != "" {
		t.Fatalf("refused commits changed the state:\n%s", d)
	}
	if st := s.Stats(); st.CommitErrors != uint64(len(errs)) {
		t.Fatalf("stats %+v", st)
	}
}

// TestPGTakeoverResumes: the active node dies; a standby takes over,
// opens the store from PostgreSQL and finds every acknowledged event,
// the open problems still open, and the ID sequence continued; the old
// node's store can write nothing more.
func TestPGTakeoverResumes(t *testing.T) {
	pg := startPG(t)
	const delay = 2 * time.Second
	a := pg.node(t, "event-a", delay)
	la := waitLease(t, a)
	c := &clock{time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	sa, err := Open(Options{Now: c.now, Postgres: &pglog.Options{Pool: a.Pool(), Write: la.Write}})
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	b := commit(t, sa, Batch{Events: []Event{problem(1, 100, "open"), problem(2, 101, "closed")}})
	commit(t, sa, Batch{Events: []Event{{ObjectID: 2, Clock: 102, Resolves: []uint64{b.Events[1].ID}}}})
	commit(t, sa, Batch{Acks: []Ack{{EventID: b.Events[0].ID, Clock: 103, Action: ActionAcknowledge, Message: "seen"}}})
	want := stateOf(sa)

	nb := pg.node(t, "event-b", delay)
	a.stop() // a crash: no more heartbeats
	lb := waitLease(t, nb)
	if lb.Epoch() <= la.Epoch() {
		t.Fatalf("epoch %d after takeover, was %d", lb.Epoch(), la.Epoch())
	}
	if err := sa.Commit(&Batch{Events: []Event{problem(3, 200, "from the old node")}}); !ha.IsFenced(err) {
		t.Fatalf("the old node's commit after the takeover: %v, want ErrFenced", err)
	}
	sb, err := Open(Options{Now: c.now, Postgres: &pglog.Options{Pool: nb.Pool(), Write: lb.Write}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if d := cmp.Diff(want, stateOf(sb)); d != "" {
		t.Fatalf("the new active's state differs (-old +new):\n%s", d)
	}
	if id := commit(t, sb, Batch{Events: []Event{problem(3, 300, "new")}}).Events[0].ID; id != 4 {
		t.Fatalf("first ID on the new active %d, want 4", id)
	}
	ok := commit(t, sb, Batch{Events: []Event{{ObjectID: 1, Clock: 301, Value: ValueOK, Resolves: []uint64{b.Events[0].ID}}}})
	if e, _ := sb.Event(b.Events[0].ID); e.Open() || e.REventID != ok.Events[0].ID {
		t.Fatalf("the carried problem did not recover: %+v", e)
	}
}

// TestPGOpenRefusals: bad options and a schema from a newer Peregrine
// are refused with a clear error, and a closed store refuses commits.
func TestPGOpenRefusals(t *testing.T) {
	if _, err := Open(Options{Postgres: &pglog.Options{}}); err == nil {
		t.Fatal("Open without a pool and a fenced writer succeeded")
	}
	pg := startPG(t)
	a := pg.node(t, "event-a", 10*time.Second)
	l := waitLease(t, a)
	s, err := Open(Options{Postgres: &pglog.Options{Pool: a.Pool(), Write: l.Write}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.Commit(&Batch{Events: []Event{problem(1, 1, "x")}}); err != wal.ErrClosed {
		t.Fatalf("commit after close: %v", err)
	}
	if _, err := a.Pool().Exec(context.Background(), `UPDATE peregrine_state.schema_version SET version = 99 WHERE component = 'event_log'`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Postgres: &pglog.Options{Pool: a.Pool(), Write: l.Write}}); err == nil {
		t.Fatal("a schema from a newer Peregrine was accepted")
	} else {
		t.Log(err)
	}
}
