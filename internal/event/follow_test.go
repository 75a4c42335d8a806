package event

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/pglog"
)

// TestPGFollower: an HA standby's follower (OpenFollower) shows what
// the active node's store commits after each Follow, over a day
// rollover and the active node's retention, writes nothing and refuses
// commits (a real PostgreSQL 15).
func TestPGFollower(t *testing.T) {
	pg := startPG(t)
	a := pg.node(t, "event-a", 10*time.Second)
	la := waitLease(t, a)
	c := &clock{time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC)}
	w, err := Open(Options{Now: c.now, Retention: 2 * 24 * time.Hour, Postgres: &pglog.Options{Pool: a.Pool(), Write: la.Write}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	b := commit(t, w, Batch{Events: []Event{problem(1, 10, "stays open"), problem(2, 11, "closed")}, Runtimes: []Runtime{{TriggerID: 1, Value: 1, LastChange: 10}}})
	openID, closedID := b.Events[0].ID, b.Events[1].ID

	ctx := context.Background()
	rows := countRows(t, a, pglog.DefaultSchema)
	f, err := OpenFollower(ctx, Options{Now: c.now, Postgres: &pglog.Options{Pool: a.Pool()}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := countRows(t, a, pglog.DefaultSchema); got != rows {
		t.Fatalf("opening the follower wrote: %d rows, were %d", got, rows)
	}
	same := func(when string) {
		t.Helper()
		if d := cmp.Diff(stateOf(w), stateOf(f)); d != "" {
			t.Fatalf("%s: the follower differs (-active +follower):\n%s", when, d)
		}
	}
	same("at open")
	commit(t, w, Batch{Events: []Event{{ObjectID: 2, Clock: 12, Resolves: []uint64{closedID}}}})
	commit(t, w, Batch{Acks: []Ack{{EventID: openID, Clock: 13, Action: ActionAcknowledge}}})
	c.t = c.t.Add(2 * time.Hour) // 21 Nov: a carry record starts the day
	commit(t, w, Batch{Events: []Event{problem(3, 20, "day two")}})
	if n, err := f.Follow(ctx); err != nil || n != 4 {
		t.Fatalf("Follow applied %d records (%v), want 4 (resolve, ack, carry, problem)", n, err)
	}
	same("after Follow")
	if n, err := f.Follow(ctx); err != nil || n != 0 {
		t.Fatalf("a Follow with nothing new applied %d (%v)", n, err)
	}

	c.t = time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)
	if n, err := w.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("retention dropped %d days (%v), want 1", n, err)
	}
	f.followParts = time.Time{} // the once-a-minute listing of days, now
	if _, err := f.Follow(ctx); err != nil {
		t.Fatal(err)
	}
	same("after the active node's retention")
	if _, ok := f.Event(closedID); ok {
		t.Errorf("the follower keeps a closed event of a deleted day")
	}

	rows = countRows(t, a, pglog.DefaultSchema)
	if err := f.Commit(&Batch{Events: []Event{problem(4, 30, "on a standby")}}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("a follower's commit: %v, want ErrReadOnly", err)
	}
	if n, err := f.ApplyRetention(); err != nil || n != 0 {
		t.Fatalf("a follower's retention: %d, %v", n, err)
	}
	if got := countRows(t, a, pglog.DefaultSchema); got != rows {
		t.Fatalf("the follower wrote: %d rows, were %d", got, rows)
	}
}
