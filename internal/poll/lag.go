package poll

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Lag tells how long this process was behind during a span of time: the
// time its goroutines waited for a CPU beyond what they asked to sleep.
// A check whose timeout ran out while the process was that far behind
// says nothing about its target: the reply may have sat in the socket
// while the goroutine that would have read it waited its turn.
type Lag interface {
	Stalled(from, to time.Time) time.Duration
}

// LagMeter measures the process's scheduling lag with one goroutine
// that sleeps lagPeriod at a time and adds up how much later than asked
// it woke (a runnable goroutine waits for a CPU like every other: the
// overshoot is what a socket's reader would have waited too). It keeps
// the running total once per wake-up for lagSpan, so Stalled can answer
// for any check still in flight (timeouts are at most 30 s in Zabbix).
type LagMeter struct {
	mu sync.Mutex
	// ring of samples: at time t (unix ns), cum ns of lag since start.
	t, cum []int64
	head   int // next slot
	full   bool
	total  int64
	// now is the clock (tests); sleep waits d (tests).
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) bool
}

const (
	lagPeriod = 20 * time.Millisecond
	// lagSpan is how far back Stalled can answer: longer than the
	// longest timeout (30 s) with the check's wait for results.
	lagSpan = 2 * time.Minute
	// lagSlack is overshoot every wake-up may have on an idle machine
	// (timer granularity): not counted.
	lagSlack = 2 * time.Millisecond
)

// NewLagMeter returns a meter; Run drives it.
func NewLagMeter() *LagMeter {
	n := int(lagSpan / lagPeriod)
	return &LagMeter{t: make([]int64, n), cum: make([]int64, n), now: time.Now, sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Run measures until ctx ends.
func (m *LagMeter) Run(ctx context.Context) {
	last := m.now()
	m.record(last, 0)
	for m.sleep(ctx, lagPeriod) {
		now := m.now()
		over := now.Sub(last) - lagPeriod - lagSlack
		m.record(now, max(over, 0))
		last = now
	}
}

// record adds one wake-up at t that came over late.
func (m *LagMeter) record(t time.Time, over time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total += int64(over)
	m.t[m.head], m.cum[m.head] = t.UnixNano(), m.total
	m.head++
	if m.head == len(m.t) {
		m.head, m.full = 0, true
	}
}

// Total is all the lag measured since the start.
func (m *LagMeter) Total() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return time.Duration(m.total)
}

// Stalled is the lag measured between from and to: the running total at
// the first wake-up at or after to (a late wake-up that ends after to
// covers lag inside the span too) less the total at the last wake-up at
// or before from. A span older than the meter remembers counts from its
// oldest sample.
func (m *LagMeter) Stalled(from, to time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, start := m.head, 0
	if m.full {
		n, start = len(m.t), m.head
	}
	if n == 0 || !to.After(from) {
		return 0
	}
	at := func(i int) int { return (start + i) % len(m.t) }
	f, tt := from.UnixNano(), to.UnixNano()
	// First sample after from, and first at or after to.
	i := sort.Search(n, func(i int) bool { return m.t[at(i)] > f })
	j := sort.Search(n, func(i int) bool { return m.t[at(i)] >= tt })
	var lo, hi int64
	if i > 0 {
		lo = m.cum[at(i-1)]
	} else {
		lo = m.cum[at(0)]
	}
	if j < n {
		hi = m.cum[at(j)]
	} else {
		// to is after the last wake-up: the meter itself may be the one
		// waiting for a CPU now, late by what it has overslept so far.
		last := m.t[at(n-1)]
		hi = m.total + max(0, m.now().UnixNano()-last-int64(lagPeriod+lagSlack))
	}
	return time.Duration(hi - lo)
}
