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

// queueGauge publishes the loop's queue to other goroutines.
type queueGauge struct {
	buckets [len(QueueBuckets)]atomic.Int64
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
	add := func(due int64) {
		if ms-due <= QueueBuckets[0].From*1000 {
			return
		}
		late := (ms - due) / 1000
		for i := len(QueueBuckets) - 1; i >= 0; i-- {
			if late >= QueueBuckets[i].From {
				counts[i]++
				return
			}
		}
	}
	for _, l := range s.lanes {
		l.heap.overdue(ms-QueueBuckets[0].From*1000, func(e *entry) { add(e.next) })
	}
	if s.inFlight > 0 {
		for _, e := range s.items {
			if e.inFlight {
				add(e.next)
			}
		}
	}
	for i := range counts {
		s.queue.buckets[i].Store(counts[i])
	}
}
