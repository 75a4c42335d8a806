package service

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// testFollower (run on PostgreSQL by TestPostgresBehaviour): a follower
// opened beside the writer reads the writer's services, SLAs, statuses,
// the problems behind them and the status changes, writes nothing at
// open or after, refuses edits, and sees the writer's later changes at
// its next Follow.
func testFollower(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "services.db")
	pg := pgPlace(t, path)
	if pg == nil {
		t.Skip("a follower reads PostgreSQL")
	}
	now := time.Unix(1800000000, 0)
	clock := func() time.Time { return now }
	tags := []event.Tag{{Tag: "svc", Value: "web"}}
	ev := &fakeEvents{}
	w, err := Open(ctx, Options{Path: path, Postgres: pg, Events: ev, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	err = w.Edit(ctx, func(c *Config) error {
		leaf := c.AddService(Service{Name: "web", Algorithm: 2, ProblemTags: []ProblemTag{{Tag: "svc", Value: "web"}}})
		c.AddService(Service{Name: "root", Algorithm: 2, Children: []uint64{leaf}})
		c.AddSLA(SLA{Name: "gold", Period: PeriodDaily, SLO: 99.9, Timezone: "UTC", Status: 1})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p := event.Event{ID: 7, Value: event.ValueProblem, Severity: 4, Clock: 1799999000, Name: "web down", Tags: tags}
	ev.open = []event.Event{p}
	w.Notify(&event.Batch{Events: []event.Event{p}})
	if err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	ro := *pg
	ro.Fence, ro.ReadOnly = nil, true
	f, err := OpenFollower(ctx, Options{Postgres: &ro, Events: ev, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	same := func(when string) {
		t.Helper()
		if !reflect.DeepEqual(f.Config(), w.Config()) {
			t.Fatalf("%s: the follower's configuration %+v, the writer's %+v", when, f.Config(), w.Config())
		}
		if fs, ws := f.Statuses(), w.Statuses(); !maps.Equal(fs, ws) {
			t.Fatalf("%s: the follower's statuses %v, the writer's %v", when, fs, ws)
		}
		ids := []uint64{1, 2}
		if fp, wp := f.ProblemEvents(ids), w.ProblemEvents(ids); !reflect.DeepEqual(fp, wp) {
			t.Fatalf("%s: the follower's problems %v, the writer's %v", when, fp, wp)
		}
		periods := []Period{{From: 1799990000, To: 1800001000}}
		ft, err := f.Timelines(ctx, ids, periods)
		if err != nil {
			t.Fatal(err)
		}
		wt, _ := w.Timelines(ctx, ids, periods)
		if !reflect.DeepEqual(ft, wt) {
			t.Fatalf("%s: the follower's timelines %+v, the writer's %+v", when, ft, wt)
		}
	}
	same("at open")
	if st := f.Statuses(); st[1] != 4 || st[2] != 4 {
		t.Fatalf("the follower's statuses %v, want 4 and 4", st)
	}
	if err := f.Edit(ctx, func(c *Config) error { c.AddService(Service{Name: "x"}); return nil }); !errors.Is(err, sqlitedb.ErrReadOnly) {
		t.Fatalf("a follower's Edit: %v, want ErrReadOnly", err)
	}
	f.Notify(&event.Batch{Events: []event.Event{{ID: 8, Value: event.ValueProblem, Severity: 5, Clock: 1799999500, Tags: tags}}})
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if st := f.Statuses(); st[1] != 4 {
		t.Fatalf("a follower applied a notified problem: %v", st)
	}

	// The writer resolves the problem and adds a service.
	now = now.Add(time.Minute)
	ev.open = nil
	w.Notify(&event.Batch{Events: []event.Event{{ID: 9, Value: event.ValueOK, Clock: 1800000060, Resolves: []uint64{7}}}})
	if err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Edit(ctx, func(c *Config) error { c.AddService(Service{Name: "db", Algorithm: 2}); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := f.Follow(ctx); err != nil {
		t.Fatal(err)
	}
	same("after Follow")
	if st := f.Statuses(); st[1] != StatusOK || st[2] != StatusOK || len(f.Config().Services) != 3 {
		t.Fatalf("after Follow: statuses %v, %d services", st, len(f.Config().Services))
	}
	if err := (&Engine{}).Follow(ctx); err == nil {
		t.Fatal("Follow on an engine opened with Open worked")
	}
}
