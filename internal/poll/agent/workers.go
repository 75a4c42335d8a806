package agent

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// workerIdle is how long a check's goroutine waits for the next check
// before it ends. The scheduler spreads checks over every second, so
// under a steady load a goroutine that finished one takes another
// within milliseconds and reuses its grown stack instead of a new
// goroutine starting per check; after a lull the pool shrinks back.
const workerIdle = 2 * time.Second

// job is one check handed to a worker goroutine.
type job struct {
	ctx  context.Context
	ch   *poll.Check
	done func(*poll.Result)
	g    *batchGuard
	slot int
}

// start runs j on an idle worker, or on a new one if none is idle.
func (c *Checker) start(j job) {
	select {
	case c.idle <- j:
	default:
		go c.worker(j)
	}
}

// worker runs checks until it has waited workerIdle for one, or the
// context of its last check ended (a stopping server keeps no idle
// goroutine).
func (c *Checker) worker(j job) {
	var t *time.Timer
	for {
		c.run(j)
		ctx := j.ctx
		if t == nil {
			t = time.NewTimer(workerIdle)
		} else {
			t.Reset(workerIdle)
		}
		select {
		case j = <-c.idle:
		case <-t.C:
			return
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

func (c *Checker) run(j job) {
	r := c.check(j.ctx, j.ch, j.g, j.slot)
	j.g.finish()
	c.inFlight.Add(-1)
	c.results[r.Status].Inc()
	j.done(r)
}

// batchGuard closes the connections of one batch's checks when their
// context ends (a stopping server abandons its checks at once rather
// than after their timeout), with one registration on the context per
// batch instead of one per check: the server's context is shared by
// every check, and each registration takes its lock and allocates.
type batchGuard struct {
	slots []guardSlot
	left  atomic.Int32 // checks not finished
	stop  func() bool  // the registration, undone by the last check
}

// guardSlot is one check's connection while it is open.
type guardSlot struct {
	mu      sync.Mutex
	conn    net.Conn
	stopped bool // the context ended: close at once
}

func newBatchGuard(ctx context.Context, n int) *batchGuard {
	g := &batchGuard{slots: make([]guardSlot, n)}
	g.left.Store(int32(n))
	g.stop = context.AfterFunc(ctx, g.closeAll)
	return g
}

// closeAll closes every open connection of the batch, and any opened
// later.
func (g *batchGuard) closeAll() {
	for i := range g.slots {
		s := &g.slots[i]
		s.mu.Lock()
		s.stopped = true
		if s.conn != nil {
			s.conn.Close()
		}
		s.mu.Unlock()
	}
}

// set records check i's open connection (nil: closed); a connection
// opened after the context ended is closed at once.
func (g *batchGuard) set(i int, conn net.Conn) {
	s := &g.slots[i]
	s.mu.Lock()
	s.conn = conn
	if s.stopped && conn != nil {
		conn.Close()
	}
	s.mu.Unlock()
}

// finish marks one check done; the last one undoes the registration.
func (g *batchGuard) finish() {
	if g.left.Add(-1) == 0 {
		g.stop()
	}
}
