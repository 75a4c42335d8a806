package event

import (
	"cmp"
	"slices"
)

// OpenProblems returns copies of the open problems, ascending by ID. It
// costs O(open problems), whatever the number of events retained.
func (s *Store) OpenProblems() []Event {
	s.mu.RLock()
	defer s.mu.RUnlock()
	open := s.sortedOpenLocked()
	out := make([]Event, len(open))
	for i, e := range open {
		out[i] = *e
	}
	return out
}

func (s *Store) sortedOpenLocked() []*Event {
	out := make([]*Event, 0, len(s.open))
	for _, e := range s.order {
		if e.REventID == 0 {
			out = append(out, e)
		}
	}
	return out
}

// ScanOpen calls fn with each open problem in ID order (newest first
// when desc) until fn returns false. It copies nothing: problem.get
// with a limit stops after the problems it returns instead of copying
// and sorting every open one. fn runs under the store's read lock: it
// must not call the Store, modify the event or keep the pointer.
func (s *Store) ScanOpen(desc bool, fn func(*Event) bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if desc {
		for i := len(s.order) - 1; i >= 0; i-- {
			if e := s.order[i]; e.REventID == 0 && !fn(e) {
				return
			}
		}
		return
	}
	for _, e := range s.order {
		if e.REventID == 0 && !fn(e) {
			return
		}
	}
}

// ScanOpenOf calls fn with the open problems of the triggers, in no
// particular order, until fn returns false: problem.get's index by
// host, through the triggers of the hosts' items, when they hold a few
// of the open problems. The rules of ScanOpen's fn apply.
func (s *Store) ScanOpenOf(triggers []uint64, fn func(*Event) bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, t := range triggers {
		for _, id := range s.byTrig[t] {
			if !fn(s.open[id]) {
				return
			}
		}
	}
}

// OpenCountOf is the number of open problems of the triggers.
func (s *Store) OpenCountOf(triggers []uint64) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, t := range triggers {
		n += len(s.byTrig[t])
	}
	return n
}

// OpenCount is the number of open problems.
func (s *Store) OpenCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.open)
}

// OpenProblemsOf returns copies of trigger's open problems, ascending by
// ID.
func (s *Store) OpenProblemsOf(trigger uint64) []Event {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := s.byTrig[trigger]
	out := make([]Event, 0, len(ids))
	for _, id := range ids {
		out = append(out, *s.open[id])
	}
	return out
}

// OpenTriggers appends the IDs of the triggers with open problems, in no
// particular order, to dst: O(such triggers), nothing else copied.
func (s *Store) OpenTriggers(dst []uint64) []uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for t := range s.byTrig {
		dst = append(dst, t)
	}
	return dst
}

// OpenIDsOf appends the IDs of trigger's open problems, ascending, to
// dst: what resolving them needs, without copying the problems.
func (s *Store) OpenIDsOf(trigger uint64, dst []uint64) []uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append(dst, s.byTrig[trigger]...)
}

// Recent returns copies of the problems resolved at or after since (a
// Unix time), ascending by ID, for problem.get's "recent". Problems
// resolved more than RecentWindow before the newest are forgotten here
// (they stay in Events).
func (s *Store) Recent(since int64) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	keep := s.recent[:0]
	var newest int64
	for _, id := range s.recent {
		if e := s.events[id]; e != nil {
			newest = max(newest, e.RClock)
		}
	}
	for _, id := range s.recent {
		e := s.events[id]
		if e == nil || e.RClock < newest-int64(RecentWindow.Seconds()) {
			continue
		}
		keep = append(keep, id)
		if e.RClock >= since {
			out = append(out, *e)
		}
	}
	s.recent = keep
	slices.SortFunc(out, func(a, b Event) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Event returns a copy of the event with the ID.
func (s *Store) Event(id uint64) (Event, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.events[id]; e != nil {
		return *e, true
	}
	return Event{}, false
}

// Events returns copies of the retained events that keep accepts,
// ascending by ID. It scans every retained event (event.get); keep is
// called with the lock held and must not call the Store.
func (s *Store) Events(keep func(*Event) bool) []Event {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Event
	for _, e := range s.events {
		if keep(e) {
			out = append(out, *e)
		}
	}
	slices.SortFunc(out, func(a, b Event) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// ScanEventsDesc calls fn with each retained event, newest (highest ID)
// first, until fn returns false. Event IDs are assigned one by one, so
// it walks the IDs down from the last one assigned and stops once it
// has met every retained event: event.get's "the newest event" (the web
// UI's watermark, every few seconds) costs a few lookups instead of
// copying and sorting every retained event, and a walk that matches
// nothing costs one lookup per ID still retained. The rules of
// ScanOpen's fn apply.
func (s *Store) ScanEventsDesc(fn func(*Event) bool) {
	// The write side's counter, read before the lock (never both held):
	// IDs assigned but not yet applied are simply not met.
	s.wmu.Lock()
	next := s.nextEvent
	s.wmu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	left := len(s.events)
	for id := next - 1; id > 0 && left > 0; id-- {
		if e := s.events[id]; e != nil {
			left--
			if !fn(e) {
				return
			}
		}
	}
}

// Acks returns the acknowledge actions of an event, oldest first. The
// slice is a copy.
func (s *Store) Acks(eventID uint64) []Ack {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.acks[eventID])
}

// AcksAfter returns the retained acknowledge actions with an ID above
// id, ascending by ID: what a consumer that decided acks up to id has
// not seen (the alert engine's catch-up after a crash). It scans every
// retained ack; it is meant for start-up, not for each request.
func (s *Store) AcksAfter(id uint64) []Ack {
	s.mu.RLock()
	var out []Ack
	for _, as := range s.acks {
		for _, a := range as {
			if a.ID > id {
				out = append(out, a)
			}
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b Ack) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Runtime returns a trigger's runtime; ok is false for a trigger that
// never changed (value OK, state normal).
func (s *Store) Runtime(trigger uint64) (Runtime, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.rts[trigger]
	return r, ok
}

// Runtimes returns every trigger runtime stored.
func (s *Store) Runtimes() map[uint64]Runtime {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[uint64]Runtime, len(s.rts))
	for k, v := range s.rts {
		out[k] = v
	}
	return out
}

// LastEvent returns a copy of trigger's newest retained event.
func (s *Store) LastEvent(trigger uint64) (Event, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.events[s.last[trigger]]; e != nil {
		return *e, true
	}
	return Event{}, false
}

// Stats are the store's figures for self-monitoring.
type Stats struct {
	Events       int    // retained events
	OpenProblems int    // open problems
	Commits      uint64 // Commit calls that wrote something, since Open
	CommitErrors uint64 // of those, the ones that failed
}

// Stats returns the current figures.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	st := Stats{Events: len(s.events), OpenProblems: len(s.open)}
	s.mu.RUnlock()
	st.Commits, st.CommitErrors = s.commits.Load(), s.commitErrs.Load()
	return st
}
