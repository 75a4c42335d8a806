package ingest

import (
	"sync"
	"time"
)

// byteBudget is a FIFO weighted semaphore over payload bytes: the bound on
// memory that all connections' frames may hold at once.
type byteBudget struct {
	mu      sync.Mutex
	max     int64
	used    int64
	peak    int64 // high-water mark of used, for tests and metrics
	waiters []*budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

func newByteBudget(max int64) *byteBudget { return &byteBudget{max: max} }

// acquire takes n bytes, waiting until deadline for room. A request larger
// than the whole budget is clamped to it, so it waits for an empty budget
// instead of forever.
func (b *byteBudget) acquire(n int64, deadline time.Time) (int64, bool) {
	n = min(n, b.max)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.max {
		b.used += n
		b.peak = max(b.peak, b.used)
		b.mu.Unlock()
		return n, true
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-w.ready:
		return n, true
	case <-t.C:
		b.mu.Lock()
		for i, x := range b.waiters {
			if x == w {
				b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
				b.mu.Unlock()
				return 0, false
			}
		}
		b.mu.Unlock()
		// Granted while timing out: keep it.
		return n, true
	}
}

func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.max {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.used += w.n
		b.peak = max(b.peak, b.used)
		close(w.ready)
	}
	b.mu.Unlock()
}

func (b *byteBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
