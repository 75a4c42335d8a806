package alert

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

// pgBackends maps a running test to the PostgreSQL options newHarness
// uses for a directory (each directory its own schema), while
// eachBackend runs it against PostgreSQL.
var pgBackends sync.Map // *testing.T → func(dir string) *pglog.Options

// eachBackend runs a behavioural test against the embedded alert log
// and against PostgreSQL (a real PostgreSQL 15, every write fenced by
// an active HA node's lease).
func eachBackend(t *testing.T, test func(*testing.T)) {
	t.Run("embedded", test)
	t.Run("postgres", func(t *testing.T) {
		n, l := activeNode(t)
		var mu sync.Mutex
		schemas := map[string]string{}
		pgBackends.Store(t, func(dir string) *pglog.Options {
			mu.Lock()
			defer mu.Unlock()
			sc, ok := schemas[dir]
			if !ok {
				sc = fmt.Sprintf("al%d", len(schemas))
				schemas[dir] = sc
			}
			return &pglog.Options{Pool: n.Pool(), Write: l.Write, Schema: sc}
		})
		defer pgBackends.Delete(t)
		test(t)
	})
}

// activeNode starts PostgreSQL and an HA node, and waits until it is
// active.
func activeNode(t *testing.T) (*ha.Node, *ha.Lease) {
	t.Helper()
	c := hatest.Start(t, "alert-a")
	n := c.Node
	return n, n.Lease()
}

func alertRows(t *testing.T, n *ha.Node) int {
	t.Helper()
	var c int
	if err := n.Pool().QueryRow(context.Background(), `SELECT count(*) FROM peregrine_state.alert_log`).Scan(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPGCheckpointAndFence: the log's checkpoint at open replaces the
// records it made redundant (upserts of one alert) and replays to the
// same state; once the cluster's epoch moved on (a takeover this node
// has not noticed), a write is refused by PostgreSQL and nothing of it
// is stored or applied, a group of records included.
func TestPGCheckpointAndFence(t *testing.T) {
	n, l := activeNode(t)
	o := pglog.Options{Pool: n.Pool(), Write: l.Write}
	s, err := openPGLog(o, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		a := Alert{ID: 1, ActionID: 1, EventID: 1, UserID: 1, MediaTypeID: 1, Status: StatusNotSent, Retries: i}
		if err := s.write([]record{{Alert: &a, Events: uint64(i + 1)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.write([]record{{Escalation: &Escalation{ID: 1, ActionID: 1, EventID: 1, Step: 2}}}); err != nil {
		t.Fatal(err)
	}
	want := s.Alerts(all)
	s.close()
	if got := alertRows(t, n); got < 51 {
		t.Fatalf("%d rows before the checkpoint", got)
	}
	s, err = openPGLog(o, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if got := alertRows(t, n); got != 3 { // watermark, the alert, the escalation
		t.Fatalf("%d rows after the checkpoint, want 3", got)
	}
	if got := s.Alerts(all); len(got) != 1 || got[0].Retries != want[0].Retries {
		t.Fatalf("alerts after reopen %+v, want %+v", got, want)
	}
	if ev, _ := s.marks(); ev != 50 {
		t.Fatalf("watermark %d after reopen, want 50", ev)
	}

	if _, err := n.Pool().Exec(context.Background(), `UPDATE peregrine_ha.cluster SET epoch = epoch + 1`); err != nil {
		t.Fatal(err)
	}
	rows := alertRows(t, n)
	err = s.write([]record{{Group: []record{
		{Alert: &Alert{ID: 2, ActionID: 1, EventID: 2, UserID: 1, MediaTypeID: 1, Status: StatusNew}},
		{Escalation: &Escalation{ID: 2, ActionID: 1, EventID: 2, Step: 2}},
	}}, {Events: 60}})
	if !ha.IsFenced(err) {
		t.Fatalf("write after the epoch moved: %v, want ErrFenced", err)
	}
	if got := alertRows(t, n); got != rows {
		t.Fatalf("%d rows after a refused write, want %d", got, rows)
	}
	if got := s.Alerts(all); len(got) != 1 {
		t.Fatalf("a refused write was applied: %+v", got)
	}
	if x := s.escalations(); len(x) != 1 {
		t.Fatalf("a refused write was applied: %+v", x)
	}
	if ev, _ := s.marks(); ev != 50 {
		t.Fatalf("watermark %d after a refused write, want 50", ev)
	}
}
