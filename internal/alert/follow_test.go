package alert

import (
	"context"
	"reflect"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/pglog"
)

// TestPGFollower: a follower of the alert log (an HA standby's alert.get)
// reads the writer's alerts, then what the writer committed since at
// each Follow; when a checkpoint deleted records it had not read (here
// an escalation's deletion), it reads the log again and ends with the
// writer's state.
func TestPGFollower(t *testing.T) {
	ctx := context.Background()
	n, l := activeNode(t)
	s, err := openPGLog(pglog.Options{Pool: n.Pool(), Write: l.Write}, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	put := func(recs ...record) {
		t.Helper()
		if err := s.write(recs); err != nil {
			t.Fatal(err)
		}
	}
	all := func(*Alert) bool { return true }
	put(record{Alert: &Alert{ID: 1, ActionID: 1, EventID: 5, UserID: 1, MediaTypeID: 1, Status: StatusSent, SendTo: "a@example.com"}},
		record{Escalation: &Escalation{ID: 1, ActionID: 1, EventID: 5, Step: 2}})
	f, err := OpenFollower(ctx, pglog.Options{Pool: n.Pool()}, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	same := func(when string) {
		t.Helper()
		if got, want := f.Alerts(all), s.Alerts(all); !reflect.DeepEqual(got, want) || len(got) == 0 {
			t.Fatalf("%s: the follower's alerts %+v, the writer's %+v", when, got, want)
		}
		f.cur.Lock()
		st := f.st
		f.cur.Unlock()
		if got, want := st.escalations(), s.escalations(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the follower's escalations %+v, the writer's %+v", when, got, want)
		}
	}
	same("at open")

	// New alerts and an upsert: read at the next Follow.
	put(record{Alert: &Alert{ID: 2, ActionID: 1, EventID: 6, UserID: 1, MediaTypeID: 1, Status: StatusNotSent}})
	put(record{Alert: &Alert{ID: 2, ActionID: 1, EventID: 6, UserID: 1, MediaTypeID: 1, Status: StatusFailed, Error: "no route", Retries: 3}})
	if k, err := f.Follow(ctx); err != nil || k != 2 {
		t.Fatalf("Follow: %d records, %v; want 2", k, err)
	}
	same("after Follow")

	// The escalation ends and a checkpoint deletes the records before
	// it, the deletion among them, before the follower read them.
	put(record{DeleteEsc: 1}, record{Alert: &Alert{ID: 3, ActionID: 1, EventID: 7, UserID: 1, MediaTypeID: 1, Status: StatusSent}})
	s.wmu.Lock()
	s.mu.Lock()
	err = s.checkpoint()
	s.mu.Unlock()
	s.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Follow(ctx); err != nil {
		t.Fatal(err)
	}
	same("after a checkpoint")
	if len(s.escalations()) != 0 {
		t.Fatal("the writer kept the ended escalation")
	}
	if k, err := f.Follow(ctx); err != nil || k != 0 {
		t.Fatalf("Follow with nothing new: %d, %v", k, err)
	}
}
