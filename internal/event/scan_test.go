package event

import (
	"slices"
	"testing"
	"time"
)

// TestScanEventsDesc: the walk from the newest event meets every
// retained event once, newest first, stops when fn says so, and still
// does after old days are dropped (a gap at the low end, an old open
// problem carried) and after a reopen (the ID counter replayed).
func TestScanEventsDesc(t *testing.T) { eachBackend(t, testScanEventsDesc) }

func testScanEventsDesc(t *testing.T, open opener) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC)}
	s := open(t, dir, c)
	b := commit(t, s, Batch{Events: []Event{problem(1, 10, "stays open"), problem(2, 11, "closed")}})
	commit(t, s, Batch{Events: []Event{{ObjectID: 2, Clock: 12, Resolves: []uint64{b.Events[1].ID}}}})
	c.t = c.t.Add(2 * time.Hour)
	for i := range 5 {
		commit(t, s, Batch{Events: []Event{problem(uint64(10+i), int64(20+i), "day two")}})
	}
	check := func(s *Store, when string) {
		t.Helper()
		var want []uint64
		for _, e := range s.Events(func(*Event) bool { return true }) {
			want = append(want, e.ID)
		}
		slices.Reverse(want)
		var got []uint64
		s.ScanEventsDesc(func(e *Event) bool { got = append(got, e.ID); return true })
		if !slices.Equal(got, want) {
			t.Errorf("%s: walk %v, want %v", when, got, want)
		}
		got = got[:0]
		s.ScanEventsDesc(func(e *Event) bool { got = append(got, e.ID); return len(got) < 2 })
		if !slices.Equal(got, want[:2]) {
			t.Errorf("%s: walk stopped after two: %v, want %v", when, got, want[:2])
		}
	}
	check(s, "two days")
	c.t = time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)
	if n, err := s.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("retention dropped %d days (%v), want 1", n, err)
	}
	check(s, "after retention")
	s.Close()
	s = open(t, dir, c)
	defer s.Close()
	check(s, "after reopen")
}
