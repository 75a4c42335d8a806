package poll

import (
	"context"
	"encoding/binary"
	"io"
	"os"
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

// LagMeter measures the process's scheduling lag the way a check's
// reply meets it: every lagPeriod it writes its clock into a pipe that
// another goroutine of it reads, and adds up how long each byte waited
// between the write and the read beyond lagSlack, plus how much later
// than asked its own sleep ended. The reader is woken by the runtime's
// network poller like a goroutine waiting for an agent's reply, and
// waits in the same run queue for a CPU (a timer's goroutine is not a
// fair probe: the runtime runs it next, ahead of everything queued, so
// a meter of sleeps alone saw a tenth of the wait checks had). One probe
// is in flight at a time, so the waits never overlap and their sum over
// a span is at most the span. The running total is kept once per probe
// for lagSpan, so Stalled can answer for any check still in flight
// (timeouts are at most 30 s in Zabbix).
type LagMeter struct {
	mu sync.Mutex
	// ring of samples: at time t (unix ns), cum ns of lag since start.
	t, cum []int64
	head   int // next slot
	full   bool
	total  int64
	// now is the clock (tests); sleep waits d (tests); probe returns
	// how long one byte waited in the pipe (tests replace it).
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) bool
	probe func() (time.Duration, error)
}

const (
	lagPeriod = 20 * time.Millisecond
	// lagSpan is how far back Stalled can answer: longer than the
	// longest timeout (30 s) with the check's wait for results.
	lagSpan = 2 * time.Minute
	// lagSlack is what every probe may take on an idle machine (timer
	// granularity, a wake-up): not counted.
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

// pipeProbe is one pipe and the goroutine that reads it.
type pipeProbe struct {
	r, w *os.File
	got  chan time.Duration
}

func newPipeProbe() (*pipeProbe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p := &pipeProbe{r: r, w: w, got: make(chan time.Duration, 1)}
	go p.read()
	return p, nil
}

// read receives each probe's write time and reports how long it waited.
func (p *pipeProbe) read() {
	defer close(p.got)
	var b [8]byte
	for {
		if _, err := io.ReadFull(p.r, b[:]); err != nil {
			return
		}
		sent := int64(binary.LittleEndian.Uint64(b[:]))
		p.got <- time.Duration(time.Now().UnixNano() - sent)
	}
}

// once sends one probe and waits for its wait.
func (p *pipeProbe) once() (time.Duration, error) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(time.Now().UnixNano()))
	if _, err := p.w.Write(b[:]); err != nil {
		return 0, err
	}
	d, ok := <-p.got
	if !ok {
		return 0, io.ErrClosedPipe
	}
	return d, nil
}

func (p *pipeProbe) close() {
	p.w.Close()
	for range p.got {
	}
	p.r.Close()
}

// Run measures until ctx ends. Without a pipe (out of descriptors) it
// measures its sleeps only.
func (m *LagMeter) Run(ctx context.Context) {
	if m.probe == nil {
		if p, err := newPipeProbe(); err == nil {
			defer p.close()
			m.probe = p.once
		}
	}
	last := m.now()
	m.record(last, 0)
	for m.sleep(ctx, lagPeriod) {
		now := m.now()
		over := max(now.Sub(last)-lagPeriod-lagSlack, 0)
		if m.probe != nil {
			if d, err := m.probe(); err == nil {
				over += max(d-lagSlack, 0)
				now = m.now()
			}
		}
		m.record(now, over)
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
