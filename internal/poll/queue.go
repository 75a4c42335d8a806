package poll

import (
	"sync/atomic"
)

// QueueBuckets are the overdue ranges of Zabbix's queue: checks late by
// more than 5 s up to 10 s, 10-30 s, 30 s-1 m, 1-5 m, 5-10 m and 10 m or
// more.
var QueueBuckets = [...]struct {
	Name    string // metric label and API name
	From    int64  // seconds late, inclusive
	Through int64  // exclusive; 0 = no bound
}{
	{"5s", 5, 10}, {"10s", 10, 30}, {"30s", 30, 60}, {"1m", 60, 300}, {"5m", 300, 600}, {"10m", 600, 0},
}

// Queue is Zabbix's queue: the polled checks overdue by more than 5 s
// (waiting to be handed out, or in flight) when it was last computed
// (once a second).
type Queue struct {
	// ByDelay counts the overdue checks per QueueBuckets range.
	ByDelay [len(QueueBuckets)]int
	// Total is the sum of ByDelay (zabbix[queue]).
	Total int
}

// Over returns the overdue checks of the buckets that start at secs or
// later (zabbix[queue,10m] is Over(600)).
func (q Queue) Over(secs int64) int {
	n := 0
	for i, b := range QueueBuckets {
		if b.From >= secs {
			n += q.ByDelay[i]
		}
	}
	return n
}

// OverdueCheck is one check of the queue: more than 5 s late when the
// queue was last computed.
type OverdueCheck struct {
	ItemID uint64
	// Late is how late the check was then, in milliseconds.
	Late int64
}

// queueGauge publishes the loop's queue to other goroutines.
type queueGauge struct {
	// checks lists the overdue checks (nil when none), for queue.get's
	// per-host view and permissions; a new slice each second there are
	// any, never modified once published.
	checks  atomic.Pointer[[]OverdueCheck]
	buckets [len(QueueBuckets)]atomic.Int64
	// late counts the same checks by how late they are, finer (see
	// lateIndex), for Zabbix's zabbix[queue,<from>,<to>] with any bounds.
	late [lateSlots]atomic.Int64
}

// The fine queue: one slot per whole second late up to an hour, one per
// minute up to a day, one for a day or more. Bounds of
// zabbix[queue,<from>,<to>] are exact to the second below an hour and to
// the minute below a day; ~5k counters rewritten once a second cost
// microseconds.
const (
	lateSecSlots = 3600
	lateMinSlots = (86400 - 3600) / 60
	lateSlots    = lateSecSlots + lateMinSlots + 1
)

// lateIndex is the slot of a check late by secs (whole seconds, rounded
// up: Zabbix counts in whole seconds, and a check 5.2 s late is "more
// than 5 s" late, as Zabbix's 6 s).
func lateIndex(secs int64) int {
	switch {
	case secs < lateSecSlots:
		return int(secs)
	case secs < 86400:
		return lateSecSlots + int((secs-lateSecSlots)/60)
	}
	return lateSlots - 1
}

// lateFrom is the first second of slot i.
func lateFrom(i int) int64 {
	switch {
	case i < lateSecSlots:
		return int64(i)
	case i < lateSlots-1:
		return lateSecSlots + int64(i-lateSecSlots)*60
	}
	return 86400
}

// Overdue returns the checks of the queue as last computed (at most a
// second ago), in no particular order. The slice is shared: callers MUST
// NOT modify it. Safe for concurrent use.
func (s *Scheduler) Overdue() []OverdueCheck {
	if p := s.queue.checks.Load(); p != nil {
		return *p
	}
	return nil
}

// QueueRange returns the checks in the queue late by at least from
// seconds and less than to seconds (to <= 0: no bound), as Zabbix's
// zabbix[queue,<from>,<to>]: whole seconds, a check 5.2 s late counts as
// 6 s. The queue holds only checks more than 5 s late, so a from below
// 6 counts as 6. Above an hour the slots are minutes, and checks a day
// or more late share one slot; a slot counts if its first second is
// within the range (so a from above a day counts nothing). Safe for
// concurrent use, like Queue.
func (s *Scheduler) QueueRange(from, to int64) int {
	n := int64(0)
	for i := lateIndex(max(from, 0)); i < lateSlots; i++ {
		if f := lateFrom(i); to > 0 && f >= to {
			break
		} else if f < from && i >= lateSecSlots {
			continue // a coarse slot that starts before from
		}
		n += s.queue.late[i].Load()
	}
	return int(n)
}

// Queue returns the queue as the loop last computed it (at most a second
// old). Safe for concurrent use; it does not disturb the loop.
func (s *Scheduler) Queue() Queue {
	var q Queue
	for i := range q.ByDelay {
		q.ByDelay[i] = int(s.queue.buckets[i].Load())
		q.Total += q.ByDelay[i]
	}
	return q
}

// computeQueue counts the overdue checks at unix millisecond ms (more
// than 5 s late): waiting in
// the heaps (only their overdue part is visited) and in flight.
func (s *Scheduler) computeQueue(ms int64) {
	var counts [len(QueueBuckets)]int64
	if s.lateScratch == nil {
		s.lateScratch = make([]int64, lateSlots)
	}
	fine := s.lateScratch
	clear(fine)
	var checks []OverdueCheck
	add := func(id uint64, due int64) {
		if ms-due <= QueueBuckets[0].From*1000 {
			return
		}
		checks = append(checks, OverdueCheck{ItemID: id, Late: ms - due})
		fine[lateIndex((ms-due+999)/1000)]++
		late := (ms - due) / 1000
		for i := len(QueueBuckets) - 1; i >= 0; i-- {
			if late >= QueueBuckets[i].From {
				counts[i]++
				return
			}
		}
	}
	for _, l := range s.lanes {
		l.heap.overdue(ms-QueueBuckets[0].From*1000, func(e *entry) { add(e.t.id, e.next) })
	}
	if s.inFlight > 0 {
		for _, e := range s.items {
			if e.inFlight {
				add(e.t.id, e.next)
			}
		}
	}
	for i := range counts {
		s.queue.buckets[i].Store(counts[i])
	}
	for i, n := range fine {
		s.queue.late[i].Store(n)
	}
	if checks == nil {
		s.queue.checks.Store(nil)
	} else {
		s.queue.checks.Store(&checks)
	}
}
