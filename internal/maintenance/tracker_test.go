package maintenance

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/trigger"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// fixture: a catalog with two hosts and a trigger each, an event store,
// a trigger machine asking a Tracker, all on one injected clock.
type fixture struct {
	t     *testing.T
	cat   *catalog.Catalog
	store *event.Store
	m     *trigger.Machine
	tr    *Tracker
	now   time.Time
	trigs map[string]uint64
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, now: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), trigs: map[string]uint64{}}
	dir := t.TempDir()
	var err error
	f.cat, err = catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "c.db"),
		ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.cat.Close() })
	spec := catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "db", Groups: []string{"Databases"}, Items: []catalog.ItemSpec{{Key: "k"}},
			Triggers: []catalog.TriggerSpec{{Name: "db down", Expression: "last(/db/k)>0", Tags: []catalog.TagSpec{{Tag: "service", Value: "mysql"}}}}},
		{Host: "web", Groups: []string{"Web"}, Items: []catalog.ItemSpec{{Key: "k"}},
			Triggers: []catalog.TriggerSpec{{Name: "web down", Expression: "last(/web/k)>0"}}},
	}}
	if _, err := f.cat.Apply(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	for _, tg := range f.cat.Snapshot().Triggers() {
		f.trigs[tg.Description] = tg.ID
	}
	f.store, err = event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncNever, Now: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.store.Close() })
	f.tr, err = New(Options{Catalog: f.cat, Events: f.store, Location: time.UTC, Now: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	f.m, err = trigger.New(trigger.Options{Store: f.store, Suppress: f.tr.Covers})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) clock() time.Time { return f.now }

// raise makes a problem of the named trigger at the current time.
func (f *fixture) raise(name string) uint64 {
	f.t.Helper()
	id := f.trigs[name]
	if _, err := f.m.Process(f.cat.Snapshot(), []trigger.Result{{TriggerID: id, Value: trigger.Problem, Clock: f.now.Unix()}}); err != nil {
		f.t.Fatal(err)
	}
	open := f.store.OpenProblemsOf(id)
	return open[len(open)-1].ID
}

func (f *fixture) suppressed(ids ...uint64) []bool {
	out := make([]bool, len(ids))
	for i, id := range ids {
		out[i] = f.tr.Suppressed(id)
	}
	return out
}

func (f *fixture) pass() int {
	f.t.Helper()
	n, err := f.tr.Pass()
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// TestTrackerSuppression follows a one-hour maintenance of the group
// Databases, with a tag condition, on an injected clock: a problem open
// before it is suppressed when it starts, one raised during it is
// suppressed at once, another host's is not, and both are unsuppressed
// when it ends; a deleted maintenance unsuppresses at the next pass.
func TestTrackerSuppression(t *testing.T) {
	f := newFixture(t)
	snap := f.cat.Snapshot()
	before := f.raise("db down")
	start := f.now.Add(10 * time.Minute)
	var mid []uint64
	if _, err := f.cat.Edit(context.Background(), func(e *catalog.Edit) (err error) {
		mid, err = e.CreateMaintenances([]catalog.Maintenance{{Name: "db upgrade",
			ActiveSince: f.now.Unix(), ActiveTill: f.now.Add(24 * time.Hour).Unix(),
			GroupIDs: []uint64{snap.Group("Databases").ID},
			Periods:  []catalog.MaintenancePeriod{{Type: catalog.PeriodOnce, StartDate: start.Unix(), Period: 3600}},
			Tags:     []catalog.MaintenanceTag{{Tag: "service", Operator: 2, Value: "sql"}}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := f.pass(); n != 0 {
		t.Fatalf("%d changes before the period starts", n)
	}
	f.now = start.Add(-time.Second)
	if n := f.pass(); n != 0 || f.tr.Suppressed(before) {
		t.Fatalf("one second early: %d changes", n)
	}
	f.now = start
	if n := f.pass(); n != 1 || !f.tr.Suppressed(before) {
		t.Fatalf("at the start: %d changes, suppressed %v", n, f.tr.Suppressed(before))
	}
	f.now = start.Add(5 * time.Minute)
	webP := f.raise("web down")
	f.m.Process(f.cat.Snapshot(), []trigger.Result{{TriggerID: f.trigs["db down"], Value: trigger.OK, Clock: f.now.Unix()}})
	during := f.raise("db down")
	if got := f.suppressed(during, webP); !got[0] || got[1] {
		t.Fatalf("raised during the period: db %v, web %v; want true, false", got[0], got[1])
	}
	if e, _ := f.store.Event(before); e.Open() {
		t.Fatal("the first problem should have been resolved by the OK result")
	}
	f.now = start.Add(time.Hour)
	if n := f.pass(); n != 1 || f.tr.Suppressed(during) {
		t.Fatalf("at the end: %d changes, still suppressed %v", n, f.tr.Suppressed(during))
	}
	// A maintenance deleted while in effect unsuppresses at the next pass.
	f.now = start.Add(10 * time.Minute)
	f.pass()
	if !f.tr.Suppressed(during) {
		t.Fatal("back inside the period: not suppressed")
	}
	if _, err := f.cat.Edit(context.Background(), func(e *catalog.Edit) error { return e.DeleteMaintenances(mid) }); err != nil {
		t.Fatal(err)
	}
	if n := f.pass(); n != 1 || f.tr.Suppressed(during) {
		t.Fatalf("after deletion: %d changes, suppressed %v", n, f.tr.Suppressed(during))
	}
}

// TestTrackerRunFollowsCatalog: Run makes a pass when the catalog
// changes, so a maintenance created in effect suppresses at once, and
// stops with its context.
func TestTrackerRunFollowsCatalog(t *testing.T) {
	f := newFixture(t)
	p := f.raise("web down")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.tr.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if _, err := f.cat.Edit(context.Background(), func(e *catalog.Edit) error {
		_, err := e.CreateMaintenances([]catalog.Maintenance{{Name: "now", ActiveSince: f.now.Unix(), ActiveTill: f.now.Add(time.Hour).Unix(),
			HostIDs: []uint64{f.cat.Snapshot().Host("web").ID},
			Periods: []catalog.MaintenancePeriod{{Type: catalog.PeriodOnce, StartDate: f.now.Unix(), Period: 3600}}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Bounded wait for the pass the change triggers.
	for i := 0; i < 500 && !f.tr.Suppressed(p); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !f.tr.Suppressed(p) {
		t.Fatal("the problem was not suppressed after the maintenance was created")
	}
}
