package service

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/event"
)

// TestReopen: services, SLAs, statuses and status changes survive a
// restart; a problem resolved while the server was down is found at
// the start and recorded then, and a new problem at its clock.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "services.db")
	ctx := context.Background()
	now := time.Unix(1800000000, 0)
	clock := func() time.Time { return now }
	ev := &fakeEvents{open: []event.Event{{ID: 10, Value: event.ValueProblem, Severity: 3, Clock: 1799999000, Name: "p",
		Tags: []event.Tag{{Tag: "svc", Value: "web"}}}}}
	e, err := Open(ctx, Options{Path: path, Postgres: pgPlace(t, path), Events: ev, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Edit(ctx, func(c *Config) error {
		leaf := c.AddService(Service{Name: "web", Algorithm: 2, ProblemTags: []ProblemTag{{Tag: "svc", Value: "web"}}, Tags: []Tag{{Tag: "sla", Value: "gold"}}})
		c.AddService(Service{Name: "root", Algorithm: 2, Children: []uint64{leaf}})
		c.AddSLA(SLA{Name: "gold", Period: PeriodDaily, SLO: 99.9, Timezone: "UTC", Status: 1, ServiceTags: []SLATag{{Tag: "sla", Value: "gold"}}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := e.Statuses(); st[1] != 3 || st[2] != 3 {
		t.Fatalf("statuses %v, want 3 and 3", st)
	}
	e.Close()

	// The problem was resolved while Peregrine was down; another one
	// opened.
	ev.open = []event.Event{{ID: 11, Value: event.ValueProblem, Severity: 4, Clock: 1800000100, Name: "q",
		Tags: []event.Tag{{Tag: "svc", Value: "web"}}}}
	now = time.Unix(1800000200, 0)
	e, err = Open(ctx, Options{Path: path, Postgres: pgPlace(t, path), Events: ev, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cfg := e.Config()
	if len(cfg.Services) != 2 || len(cfg.SLAs) != 1 || cfg.Service(2).Children[0] != 1 || cfg.SLA(1).Name != "gold" {
		t.Fatalf("configuration after reopening: %+v", cfg)
	}
	if st := e.Statuses(); st[1] != 4 || st[2] != 4 {
		t.Fatalf("statuses %v, want 4 and 4", st)
	}
	tl, err := e.Timelines(ctx, []uint64{1, 2}, []Period{{From: 1799990000, To: 1800001000}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Alarm{{ServiceID: 1, Clock: 1799999000, Value: 3}, {ServiceID: 1, Clock: 1800000100, Value: 4}}
	if got := tl[1][0]; got.StartValue != StatusOK || !slices.Equal(got.Alarms, want) {
		t.Errorf("timeline of web: %+v, want start OK and %v", got, want)
	}
	if e.Config().NextServiceID != 3 {
		t.Errorf("next service ID %d, want 3 (never reused)", e.Config().NextServiceID)
	}
}

// TestEditRefused: an edit whose function fails changes nothing.
func TestEditRefused(t *testing.T) {
	e := openTest(t, nil, nil)
	boom := errors.New("boom")
	err := e.Edit(context.Background(), func(c *Config) error {
		c.AddService(Service{Name: "x"})
		return boom
	})
	if !errors.Is(err, boom) || len(e.Config().Services) != 0 || e.Config().NextServiceID > 1 {
		t.Fatalf("err %v, config %+v", err, e.Config())
	}
}

// TestQueueOverflow: past MaxQueue the changes are dropped and the
// statuses rebuilt from the event store's open problems.
func TestQueueOverflow(t *testing.T) {
	ev := &fakeEvents{}
	path := filepath.Join(t.TempDir(), "s.db")
	e, err := Open(context.Background(), Options{Path: path, Postgres: pgPlace(t, path), Events: ev, MaxQueue: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	setServices(t, e, []Service{{ID: 1, Name: "web", Algorithm: 2, ProblemTags: []ProblemTag{{Tag: "svc", Value: "web"}}}})
	tags := []event.Tag{{Tag: "svc", Value: "web"}}
	var b event.Batch
	for i := range 3 {
		b.Events = append(b.Events, event.Event{ID: uint64(i + 1), Value: event.ValueProblem, Severity: uint8(i + 1), Clock: 100, Tags: tags})
	}
	ev.open = b.Events[:2] // the store's truth: the third was resolved
	e.Notify(&b)
	if err := e.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := e.Statuses()[1]; st != 2 {
		t.Errorf("status %d, want 2 (rebuilt from the open problems)", st)
	}
}

// BenchmarkApplyProblems: a storm of problems over 1,000 services
// without children under 10 parents; each problem matches one service.
func BenchmarkApplyProblems(b *testing.B) {
	e, err := Open(context.Background(), Options{Path: filepath.Join(b.TempDir(), "s.db"), Events: &fakeEvents{}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	var ss []Service
	for i := range 1000 {
		ss = append(ss, Service{ID: uint64(i + 1), Algorithm: 2, ProblemTags: []ProblemTag{{Tag: "svc", Value: "s" + strconv.Itoa(i)}}})
	}
	for p := range 10 {
		parent := Service{ID: uint64(1001 + p), Algorithm: 2}
		for i := p * 100; i < (p+1)*100; i++ {
			parent.Children = append(parent.Children, uint64(i+1))
		}
		ss = append(ss, parent)
	}
	err = e.Edit(context.Background(), func(c *Config) error { c.Services, c.NextServiceID = ss, 1011; return nil })
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	id := uint64(0)
	for range b.N {
		var batch event.Batch
		for i := range 1000 {
			id++
			batch.Events = append(batch.Events, event.Event{ID: id, Value: event.ValueProblem, Severity: uint8(id % 6), Clock: int64(id),
				Tags: []event.Tag{{Tag: "host", Value: "h"}, {Tag: "svc", Value: "s" + strconv.Itoa(i)}}})
		}
		e.Notify(&batch)
		if err := e.Sync(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
