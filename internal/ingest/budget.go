package ingest

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// byteBudget bounds the memory that all trapper connections hold
// together (MaxBufferedBytes): frame buffers, inflated payloads, zlib
// state, decoded rows, samples and the copies of string values.
//
// Bytes are taken as they are needed (a frame buffer grows as its bytes
// arrive), never for the size a client announces: an earlier version
// reserved the announced size up front, so four connections announcing
// 128 MiB and sending nothing held the whole budget until they timed out.
//
// Taking memory bit by bit while holding some invites deadlock: many
// frames each holding part of the budget and each waiting for more.
// Three rules keep the trapper moving:
//
//   - Older frames first. A frame gets an age at its first take; waiting
//     requests are served oldest first, so frames in progress finish
//     before new ones start, and any that fits is served (a big request
//     does not block smaller ones behind it).
//   - Bounded shares. A connection holds at most share bytes (max minus a
//     reserve of max/8); a frame that would need more is refused at once
//     (memory_share) rather than left to wait for room that cannot come.
//     Only connections holding little (at most small bytes: a frame of a
//     few thousand values) may use the reserve, so connections stalled
//     halfway through big frames hold at most share and small senders
//     keep going.
//   - No deadlock. When every byte held belongs to a waiting request
//     and none can be served, the youngest waiting frame that holds
//     memory is refused (memory_busy) so that the older ones can finish.
//     A request also gives up at its frame's deadline.
//
// Released bytes are garbage until the Go collector frees them, and the
// budget counts them as held until then (used+garbage <= max): without
// that, the heap of a busy trapper grows to about twice the budget
// (GOGC=100) before the runtime collects. When a request finds no room
// but garbage would make it, the budget runs one collection (runtime.GC,
// one at a time) instead of waiting for the runtime's own. With steady
// small frames, whose buffers are reused, this never happens; with big
// frames it costs one collection per budget's worth of released memory.
type byteBudget struct {
	max, share, small int64
	// collect frees unreachable memory: runtime.GC, replaced in tests.
	collect func()

	mu         sync.Mutex
	used       int64 // bytes taken and not released
	garbage    int64 // released bytes the collector may not have freed yet
	waitHeld   int64 // bytes held by the connections of waiters
	peak       int64 // high-water mark of used+garbage, for tests
	nextAge    uint64
	waiters    []*budgetWaiter // oldest frame first
	collecting bool
	gcDone     chan struct{} // closed when the running collection ends

	collections atomic.Uint64
	preempted   atomic.Uint64
}

type budgetWaiter struct {
	n, held, limit int64
	age            uint64
	ready          chan struct{}
	refused        bool // set with ready closed: preempted, not granted
}

// Errors of take; they wrap errBusy or errShare, which the trapper counts
// under memory_busy and memory_share.
var (
	errBusy  = errors.New("no room in trapper.max_buffered_bytes")
	errShare = errors.New("a frame needs more than one connection may hold")
)

func newByteBudget(limit int64) *byteBudget {
	reserve := limit / 8
	return &byteBudget{
		max: limit, share: limit - reserve,
		// Small: up to 64 KiB (a 1,000-value frame) however small the
		// budget, never more than half the reserve.
		small:   min(max(limit/64, 64<<10), reserve/2),
		collect: runtime.GC,
	}
}

// take takes n bytes for a connection that holds held and whose frame
// has age *age (0: none yet; take assigns one), waiting until deadline
// for room.
func (b *byteBudget) take(n, held int64, age *uint64, deadline time.Time) error {
	if held+n > b.share {
		return fmt.Errorf("decoding needs %d more bytes on top of the %d this connection holds, beyond the %d one connection may hold (7/8 of trapper.max_buffered_bytes); send smaller frames or raise trapper.max_buffered_bytes: %w", n, held, b.share, errShare)
	}
	limit := b.share
	if held+n <= b.small {
		limit = b.max
	}
	b.mu.Lock()
	if *age == 0 {
		b.nextAge++
		*age = b.nextAge
	}
	w := &budgetWaiter{n: n, held: held, limit: limit, age: *age}
	for {
		if b.fits(w) && (limit == b.max || !b.olderWaiting(w)) {
			b.grant(n)
			b.mu.Unlock()
			return nil
		}
		if b.garbage == 0 || b.used+n > limit {
			break
		}
		// The room is there once the collector frees what connections
		// let go of.
		done := b.startCollect()
		b.mu.Unlock()
		<-done
		if !time.Now().Before(deadline) {
			return fmt.Errorf("waited for %d bytes until the frame's deadline: %w", n, errBusy)
		}
		b.mu.Lock()
	}
	w.ready = make(chan struct{})
	b.enqueue(w)
	b.breakDeadlock()
	b.mu.Unlock()

	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-w.ready:
	case <-t.C:
		b.mu.Lock()
		if b.dequeue(w) {
			b.grantWaiters() // a request behind this one may fit now
			b.mu.Unlock()
			return fmt.Errorf("waited for %d bytes until the frame's deadline: %w", n, errBusy)
		}
		b.mu.Unlock()
	}
	if w.refused {
		return fmt.Errorf("refused %d more bytes to the youngest of frames that together hold all of it and wait for more: %w", n, errBusy)
	}
	return nil
}

func (b *byteBudget) fits(w *budgetWaiter) bool { return b.used+b.garbage+w.n <= w.limit }

// olderWaiting reports whether an older frame's request, not a small
// one, is waiting: then w must not take the room it waits for. Small
// requests pass: they may use the reserve, which older big ones cannot.
func (b *byteBudget) olderWaiting(w *budgetWaiter) bool {
	for _, x := range b.waiters {
		if x.age >= w.age {
			return false
		}
		if x.limit != b.max {
			return true
		}
	}
	return false
}

// release gives back n bytes taken earlier; they count as garbage until
// the next collection.
func (b *byteBudget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.garbage += n
	if b.used < 0 {
		b.mu.Unlock()
		panic("BUG: trapper byte budget released more than was taken")
	}
	b.grantWaiters()
	b.mu.Unlock()
}

// unreserve gives back n bytes taken but never allocated: unlike
// release, they are not garbage.
func (b *byteBudget) unreserve(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	if b.used < 0 {
		b.mu.Unlock()
		panic("BUG: trapper byte budget released more than was taken")
	}
	b.grantWaiters()
	b.mu.Unlock()
}

// grant counts n bytes as used; b.mu is held.
func (b *byteBudget) grant(n int64) {
	b.used += n
	b.peak = max(b.peak, b.used+b.garbage)
}

// enqueue inserts w in age order; b.mu is held.
func (b *byteBudget) enqueue(w *budgetWaiter) {
	i := len(b.waiters)
	for i > 0 && b.waiters[i-1].age > w.age {
		i--
	}
	b.waiters = append(b.waiters, nil)
	copy(b.waiters[i+1:], b.waiters[i:])
	b.waiters[i] = w
	b.waitHeld += w.held
}

// dequeue removes w if it is still waiting; b.mu is held.
func (b *byteBudget) dequeue(w *budgetWaiter) bool {
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			b.waitHeld -= w.held
			return true
		}
	}
	return false
}

// grantWaiters serves waiters oldest first, up to the first big one that
// does not fit (small ones beyond it too), then starts a collection or
// breaks a deadlock if that is what it takes; b.mu is held.
func (b *byteBudget) grantWaiters() {
	collect, blocked := false, false
	for i := 0; i < len(b.waiters); {
		w := b.waiters[i]
		if !b.fits(w) || (blocked && w.limit != b.max) {
			collect = collect || (b.garbage > 0 && b.used+w.n <= w.limit)
			// Younger big requests wait behind an older one that does
			// not fit, or they would take its room piece by piece.
			blocked = blocked || w.limit != b.max
			i++
			continue
		}
		b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
		b.waitHeld -= w.held
		b.grant(w.n)
		close(w.ready)
	}
	if collect {
		b.startCollect()
		return
	}
	b.breakDeadlock()
}

// breakDeadlock refuses the youngest waiting frame that holds memory
// when all the memory held belongs to waiting frames and none of them
// can be served, not even after a collection: nothing would ever be
// released otherwise (until the deadlines). b.mu is held.
func (b *byteBudget) breakDeadlock() {
	for len(b.waiters) > 0 && b.used > 0 && b.waitHeld == b.used && !b.collecting {
		for _, w := range b.waiters {
			if b.used+w.n <= w.limit && b.garbage > 0 {
				b.startCollect()
				return
			}
		}
		var victim *budgetWaiter
		for _, w := range b.waiters {
			if w.held > 0 {
				victim = w // the last one holding memory is the youngest
			}
		}
		if victim == nil {
			return
		}
		b.dequeue(victim)
		victim.refused = true
		close(victim.ready)
		b.preempted.Add(1)
		// Its bytes come back when its connection closes; then the
		// others are served by release.
		return
	}
}

// startCollect starts a collection unless one is running and returns a
// channel closed when it has ended; b.mu is held. Only the garbage
// released before the collection started is known to be freed by it.
func (b *byteBudget) startCollect() <-chan struct{} {
	if !b.collecting {
		b.collecting = true
		b.gcDone = make(chan struct{})
		freed := b.garbage
		go func() {
			b.collect()
			b.collections.Add(1)
			b.mu.Lock()
			b.garbage -= freed
			b.collecting = false
			close(b.gcDone)
			b.grantWaiters()
			b.mu.Unlock()
		}()
	}
	return b.gcDone
}

func (b *byteBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// lease is one connection's account with the budget; it implements
// zbx.Memory for the connection's Reader and its decoding. A lease
// belongs to its connection's goroutine.
//
// It takes from the budget in quanta (at least b.quantum() bytes at a
// time) and hands them out as credit, so that a frame of a few hundred
// values takes once: a frame that takes once never holds memory while it
// waits, which is what makes deadlocks rare (see byteBudget). Unused
// credit goes back at the end of each frame.
type lease struct {
	b        *byteBudget
	held     int64     // bytes allocated
	credit   int64     // bytes taken from the budget, not allocated yet
	age      uint64    // of the frame being read; 0 between frames
	deadline time.Time // of the frame being read: how long a take may wait
}

// quantum is the least a lease takes from the budget at a time.
func (b *byteBudget) quantum() int64 { return min(64<<10, b.small) }

// Alloc takes n bytes before they are allocated.
func (l *lease) Alloc(n int) error {
	need := int64(n)
	if l.credit < need {
		take := max(need-l.credit, l.b.quantum())
		// Within the share, a quantum shrinks to what is left of it.
		take = max(min(take, l.b.share-l.held-l.credit), need-l.credit)
		if err := l.b.take(take, l.held+l.credit, &l.age, l.deadline); err != nil {
			return err
		}
		l.credit += take
	}
	l.credit -= need
	l.held += need
	return nil
}

// Free gives back n bytes after their buffer was dropped.
func (l *lease) Free(n int) {
	l.held -= int64(n)
	l.b.release(int64(n))
}

// endFrame marks the end of a frame: unused credit goes back, and the
// next frame is younger than every frame in progress.
func (l *lease) endFrame() {
	l.b.unreserve(l.credit)
	l.credit, l.age = 0, 0
}
