package audit

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/pglog"
)

// TestPGFollower: a follower of the audit log (an HA standby's
// auditlog.get) reads the writer's records in the writer's order, then
// what the writer appended since at each Follow; it refuses appends,
// and forgets the days the writer's retention deleted.
func TestPGFollower(t *testing.T) {
	ctx := context.Background()
	pool, fw := activeNode(t)
	c := &clock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	w, err := Open(Options{Now: c.now, Retention: 48 * time.Hour, Postgres: &pglog.Options{Pool: pool, Write: fw.Write}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := func(id string) Record {
		return Record{ID: id, UserID: 1, Username: "Admin", Clock: c.now().Unix(), Action: 0, ResourceType: 4, ResourceID: 7, RecordSetID: id}
	}
	if err := w.Append([]Record{rec("a1"), rec("a2")}); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFollower(ctx, Options{Now: c.now, Retention: 48 * time.Hour, Postgres: &pglog.Options{Pool: pool}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ids := func(l *Log) []string {
		var out []string
		l.Walk(true, func(r *Record) bool { out = append(out, r.ID); return true })
		return out
	}
	same := func(when string, want ...string) {
		t.Helper()
		if got, wr := ids(f), ids(w); !slices.Equal(got, wr) || !slices.Equal(got, want) {
			t.Fatalf("%s: the follower's records %v, the writer's %v, want %v", when, got, wr, want)
		}
	}
	same("at open", "a2", "a1")
	if err := f.Append([]Record{rec("x")}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("a follower's Append: %v", err)
	}

	// Two days later: a new record; the writer's retention deletes the
	// first day, and the follower forgets it too.
	c.t = c.t.Add(50 * time.Hour)
	if err := w.Append([]Record{rec("b1")}); err != nil {
		t.Fatal(err)
	}
	if n, err := w.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("the writer's retention: %d days, %v", n, err)
	}
	if n, err := f.Follow(ctx); err != nil || n != 1 {
		t.Fatalf("Follow: %d, %v; want 1 record", n, err)
	}
	same("after the retention", "b1")
	if _, err := (&Log{}).Follow(ctx); err == nil {
		t.Fatal("Follow on a log opened with Open worked")
	}
}
