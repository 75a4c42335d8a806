package event

import (
	"testing"
	"time"
)

// TestSuppressionSurvivesReopenAndDays: a suppression change sets and
// clears a problem's flag, is replayed after a reopen and carried into
// a new day with the open problem.
func TestSuppressionSurvivesReopenAndDays(t *testing.T) {
	eachBackend(t, testSuppressionSurvivesReopenAndDays)
}

func testSuppressionSurvivesReopenAndDays(t *testing.T, open opener) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s := open(t, dir, c)
	b := commit(t, s, Batch{Events: []Event{problem(10, 100, "a"), problem(20, 101, "b")}})
	p1, p2 := b.Events[0].ID, b.Events[1].ID
	commit(t, s, Batch{Suppress: []Suppression{{EventID: p1, Suppressed: true}, {EventID: p2, Suppressed: true}}})
	commit(t, s, Batch{Suppress: []Suppression{{EventID: p2, Suppressed: false}}})
	check := func(s *Store, when string) {
		t.Helper()
		e1, _ := s.Event(p1)
		e2, _ := s.Event(p2)
		if !e1.Suppressed || e2.Suppressed {
			t.Fatalf("%s: suppressed %v %v, want true false", when, e1.Suppressed, e2.Suppressed)
		}
	}
	check(s, "after commit")
	s.Close()
	s = open(t, dir, c)
	check(s, "after reopen")
	// The next day starts with a carry record of the open problems.
	c.t = c.t.Add(24 * time.Hour)
	commit(t, s, Batch{Events: []Event{problem(30, 200, "c")}})
	s.Close()
	c.t = c.t.Add(48 * time.Hour) // the first day falls out of retention
	s = open(t, dir, c)
	if n, err := s.ApplyRetention(); err != nil || n == 0 {
		t.Fatalf("retention dropped %d days: %v", n, err)
	}
	s.Close()
	s = open(t, dir, c) // only the carry record knows the flags now
	defer s.Close()
	check(s, "after the first day's retention and a reopen")
}
