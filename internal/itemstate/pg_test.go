package itemstate

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

// TestIntegrationStatesInPostgres: an active node's Writer stores only
// what changed (a real PostgreSQL 15, every write fenced by the node's
// lease); a Follower's registry becomes what was stored, items back to
// normal and forgotten interfaces included; a new Writer (a node taking
// over) starts from the rows; once the epoch moved on a Flush is
// refused and nothing of it is stored, and the next Flush writes it.
func TestIntegrationStatesInPostgres(t *testing.T) {
	c := hatest.Start(t, "itemstate-a")
	n := c.Node
	lease := n.Lease()
	ctx := context.Background()
	db := stdlib.OpenDBFromPool(n.Pool())
	t.Cleanup(func() { _ = db.Close() })
	write := func(ctx context.Context, fn func(*sql.Tx) error) error { return lease.WriteSQL(ctx, db, fn) }

	active := New()
	w, err := OpenWriter(ctx, db, write, "", active)
	if err != nil {
		t.Fatal(err)
	}
	standby := New()
	f, err := NewFollower(db, "", standby)
	if err != nil {
		t.Fatal(err)
	}
	follow := func(wantRead bool) {
		t.Helper()
		read, err := f.Follow(ctx)
		if err != nil || read != wantRead {
			t.Fatalf("Follow: read %v, %v; want read %v", read, err, wantRead)
		}
	}
	flush := func(want int) {
		t.Helper()
		if k, err := w.Flush(ctx); err != nil || k != want {
			t.Fatalf("Flush wrote %d rows (%v), want %d", k, err, want)
		}
	}
	follow(true) // empty tables
	if len(standby.Items()) != 0 || len(standby.Availabilities()) != 0 {
		t.Fatal("a follower of empty tables has states")
	}

	bad := Item{NotSupported: true, Error: `Value "abc" of type "string" is not suitable for value type "Numeric (unsigned)"`, Clock: 100}
	active.SetItemState(7, bad)
	active.SetItemState(8, Item{NotSupported: true, Error: "other", Clock: 100})
	down := Availability{Available: 2, Error: "Get value from agent failed: cannot connect to [[127.0.0.9]:10050]: [111] Connection refused", ErrorsFrom: 90, DisableUntil: 160}
	active.SetAvailability(3, down)
	active.SetAvailability(4, Availability{Available: 1})
	flush(4)
	follow(true)
	if s, ok := standby.ItemState(7); !ok || s != bad {
		t.Fatalf("item 7 on the follower: %+v %v, want %+v", s, ok, bad)
	}
	if a, ok := standby.Availability(3); !ok || a != down {
		t.Fatalf("interface 3 on the follower: %+v %v, want %+v", a, ok, down)
	}
	if a, _ := standby.Availability(4); a.Available != 1 {
		t.Fatalf("interface 4 on the follower: %+v", a)
	}
	follow(false) // nothing changed: not read again
	flush(0)

	// Another failed check with the same error writes nothing; a new
	// error, an item back to normal and a forgotten interface do.
	active.SetItemState(7, Item{NotSupported: true, Error: bad.Error, Clock: 200})
	flush(0)
	active.SetItemState(8, Item{})
	active.SetItemState(9, Item{NotSupported: true, Error: "new", Clock: 200})
	active.Forget(nil, []uint64{4})
	flush(3)
	follow(true)
	if _, ok := standby.ItemState(8); ok {
		t.Fatal("item 8, normal again on the active node, is not supported on the follower")
	}
	if s, _ := standby.ItemState(9); !s.NotSupported || s.Error != "new" {
		t.Fatalf("item 9 on the follower: %+v", s)
	}
	if _, ok := standby.Availability(4); ok {
		t.Fatal("forgotten interface 4 is on the follower")
	}
	// A delete alone (the same row count is not a mark) is seen too.
	active.SetItemState(9, Item{})
	flush(1)
	follow(true)
	if len(standby.Items()) != 1 {
		t.Fatalf("follower items %v, want item 7 only", standby.Items())
	}
	var rows int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM peregrine_state.item_state`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d item rows (%v), want 1: one row per item not supported", rows, err)
	}

	// A node taking over starts from the rows; what it found itself
	// stays.
	next := New()
	next.SetAvailability(3, Availability{Available: 1})
	if _, err := OpenWriter(ctx, db, write, "", next); err != nil {
		t.Fatal(err)
	}
	if s, ok := next.ItemState(7); !ok || s.Error != bad.Error {
		t.Fatalf("item 7 after taking over: %+v %v", s, ok)
	}
	if a, _ := next.Availability(3); a.Available != 1 {
		t.Fatalf("interface 3 after taking over: %+v, want its own check's 1", a)
	}
	if next.NotSupportedTotal() != 0 {
		t.Fatal("restored states counted as checks")
	}

	// Fenced: once the epoch moved on nothing is stored, and the change
	// is written by the next Flush that may.
	if _, err := n.Pool().Exec(ctx, `UPDATE peregrine_ha.cluster SET epoch = epoch + 1`); err != nil {
		t.Fatal(err)
	}
	active.SetItemState(7, Item{})
	if _, err := w.Flush(ctx); !ha.IsFenced(err) {
		t.Fatalf("flush after the epoch moved: %v, want ErrFenced", err)
	}
	follow(false)
	if _, ok := standby.ItemState(7); !ok {
		t.Fatal("a refused flush reached the follower")
	}
	if _, err := n.Pool().Exec(ctx, `UPDATE peregrine_ha.cluster SET epoch = epoch - 1`); err != nil {
		t.Fatal(err)
	}
	flush(1)
	follow(true)
	if len(standby.Items()) != 0 {
		t.Fatalf("follower items %v after the retried flush, want none", standby.Items())
	}
}
