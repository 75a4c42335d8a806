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
// These rules keep the trapper moving:
//
//   - Small frames pass. A frame whose header announces at most small/4
//     bytes of payload (a few thousand values) may, while it holds at
//     most small bytes, use the whole budget, the reserve included, and
//     does not queue behind big frames. Connections stalled halfway
//     through big frames therefore never hold up small senders.
//   - Older big frames first. A frame gets an age at its first take. A
//     big frame's request is served only if it leaves every older big
//     frame in progress room to grow to what it claims, and not while
//     an older big frame waits (for room or for a collection). A frame
//     whose body is still arriving claims up to claimFactor times what
//     it holds; once its whole body has been read from the connection
//     (for a compressed one, its last compressed byte, usually before
//     most of its inflating and decoding), it claims all its header says
//     it may need.
//     So the oldest frames finish first instead of all of them stalling
//     halfway, a frame that announces much but sends little (or
//     nothing) holds, and claims, little, and a frame the client has
//     sent whole is never refused because the server is slow to decode
//     it. Claims by what is held alone were not enough: under CPU
//     starvation dozens of 4 MiB frames all started while the oldest
//     held a few KiB, each took a few MiB, and the deadlock rule below
//     had to refuse the youngest of them although every frame would
//     have fitted one after the other.
//   - Bounded shares. A connection holds at most share bytes (max minus a
//     reserve of max/8); a frame that would need more is refused at once
//     (memory_share) rather than left to wait for room that cannot come.
//   - No deadlock. When every byte held belongs to a waiting request
//     and none can be served, not even after a collection, the youngest
//     waiting frame that holds memory is refused (memory_busy) so that
//     the older ones can finish. A request also gives up at its frame's
//     deadline (memory_busy).
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
	used       int64 // bytes taken and not given back
	garbage    int64 // released bytes the collector may not have freed yet
	waitHeld   int64 // bytes held by the connections of waiters
	peak       int64 // high-water mark of used+garbage, for tests
	nextAge    uint64
	waiters    []*budgetWaiter // oldest frame first
	frames     []*frameAcct    // big frames in progress, oldest first
	collecting bool
	gcDone     chan struct{} // closed when the running collection ends

	collections atomic.Uint64
	preempted   atomic.Uint64
}

type budgetWaiter struct {
	n, held, limit int64
	f              *frameAcct
	small          bool
	ready          chan struct{}
	refused        bool // set with ready closed: preempted, not granted
}

// frameAcct is what the budget knows of one connection and its current
// frame. The budget updates it under its lock.
type frameAcct struct {
	held   int64  // bytes the connection holds: allocated, or taken as credit
	age    uint64 // of the frame in progress; 0 between frames
	est    int64  // what a big frame may need, from its header; 0: a small frame
	listed bool   // in byteBudget.frames
	// arrived: the frame's body has been read whole, so it no longer
	// waits for its client and claims all of est (see claim).
	arrived bool
}

// claimFactor bounds what a big frame claims by what it holds: a frame
// claims what its header says it may need only as its bytes arrive, so
// one that announces much and sends little keeps little from others.
const claimFactor = 8

// claim is the room an older big frame keeps from younger ones: the rest
// of its estimate once its body has arrived, before that up to
// claimFactor times what it holds and no more than its estimate.
func (f *frameAcct) claim() int64 {
	if f.arrived {
		return max(f.est-f.held, 0)
	}
	return max(min(f.est-f.held, claimFactor*f.held), 0)
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

// quantum is the least a lease takes from the budget at a time.
func (b *byteBudget) quantum() int64 { return min(64<<10, b.small) }

// take takes n bytes for the connection of f, waiting until deadline for
// room.
func (b *byteBudget) take(n int64, f *frameAcct, deadline time.Time) error {
	if f.held+n > b.share {
		return fmt.Errorf("decoding needs %d more bytes on top of the %d this connection holds, beyond the %d one connection may hold (7/8 of trapper.max_buffered_bytes); send smaller frames or raise trapper.max_buffered_bytes: %w", n, f.held, b.share, errShare)
	}
	small := f.est == 0 && f.held+n <= b.small
	limit := b.share
	if small {
		limit = b.max
	}
	b.mu.Lock()
	if f.age == 0 {
		b.nextAge++
		f.age = b.nextAge
	}
	if !small && !f.listed {
		if f.est == 0 {
			f.est = b.share // announced small, decodes big: no estimate
		}
		b.listFrame(f)
	}
	w := &budgetWaiter{n: n, held: f.held, limit: limit, f: f, small: small}
	if b.fits(w) && (small || !b.olderWaiting(w)) {
		b.grant(w)
		b.mu.Unlock()
		return nil
	}
	// A request waits in the queue even when a collection may make room:
	// the collection's end serves the queue oldest first. (Waiting for
	// the collection outside the queue let younger frames that came back
	// first take the room, and an older frame that held nothing yet
	// claimed none of it.)
	w.ready = make(chan struct{})
	b.enqueue(w)
	if b.garbage > 0 && b.used+n <= limit {
		b.startCollect()
	} else {
		b.breakDeadlock()
	}
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

// fits reports whether w can be served now; b.mu is held.
func (b *byteBudget) fits(w *budgetWaiter) bool {
	need := b.used + b.garbage + w.n
	if need > w.limit {
		return false
	}
	if !w.small {
		for _, g := range b.frames {
			if g.age >= w.f.age {
				break
			}
			if need += g.claim(); need > w.limit {
				return false
			}
		}
	}
	return true
}

// olderWaiting reports whether an older big frame's request waits: then
// w, a big one, must not take the room it waits for.
func (b *byteBudget) olderWaiting(w *budgetWaiter) bool {
	for _, x := range b.waiters {
		if x.f.age >= w.f.age {
			return false
		}
		if !x.small {
			return true
		}
	}
	return false
}

// grant serves w; b.mu is held.
func (b *byteBudget) grant(w *budgetWaiter) {
	b.used += w.n
	w.f.held += w.n
	b.peak = max(b.peak, b.used+b.garbage)
}

// release gives back n bytes of f's that were allocated and dropped;
// they count as garbage until the next collection.
func (b *byteBudget) release(n int64, f *frameAcct) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.garbage += n
	f.held -= n
	if b.used < 0 || f.held < 0 {
		b.mu.Unlock()
		panic("BUG: trapper byte budget released more than was taken")
	}
	b.grantWaiters()
	b.mu.Unlock()
}

// endFrame gives back f's unused credit (not garbage: it was never
// allocated) and ends its frame: the next one is younger than every
// frame in progress.
func (b *byteBudget) endFrame(f *frameAcct, credit int64) {
	b.mu.Lock()
	b.used -= credit
	f.held -= credit
	if b.used < 0 || f.held < 0 {
		b.mu.Unlock()
		panic("BUG: trapper byte budget released more than was taken")
	}
	if f.listed {
		for i, g := range b.frames {
			if g == f {
				b.frames = append(b.frames[:i], b.frames[i+1:]...)
				break
			}
		}
	}
	f.age, f.est, f.listed, f.arrived = 0, 0, false, false
	b.grantWaiters()
	b.mu.Unlock()
}

// listFrame adds f to the big frames in progress, in age order; b.mu is
// held.
func (b *byteBudget) listFrame(f *frameAcct) {
	i := len(b.frames)
	for i > 0 && b.frames[i-1].age > f.age {
		i--
	}
	b.frames = append(b.frames, nil)
	copy(b.frames[i+1:], b.frames[i:])
	b.frames[i] = f
	f.listed = true
}

// enqueue inserts w in age order; b.mu is held.
func (b *byteBudget) enqueue(w *budgetWaiter) {
	i := len(b.waiters)
	for i > 0 && b.waiters[i-1].f.age > w.f.age {
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
		if (blocked && !w.small) || !b.fits(w) {
			collect = collect || (b.garbage > 0 && b.used+w.n <= w.limit)
			// Younger big requests wait behind an older one that does
			// not fit, or they would take its room piece by piece.
			blocked = blocked || !w.small
			i++
			continue
		}
		b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
		b.waitHeld -= w.held
		b.grant(w)
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
// can be served, not even after a collection: nothing would be released
// otherwise until the deadlines. b.mu is held.
func (b *byteBudget) breakDeadlock() {
	if len(b.waiters) == 0 || b.used == 0 || b.waitHeld != b.used || b.collecting {
		return
	}
	for _, w := range b.waiters {
		if b.garbage > 0 && b.used+w.n <= w.limit {
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
	// Its bytes come back when its connection closes; release then
	// serves the others.
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
// waits. Unused credit goes back at the end of each frame.
type lease struct {
	b        *byteBudget
	f        frameAcct
	held     int64     // bytes allocated (f.held is held + credit)
	credit   int64     // bytes taken from the budget, not allocated yet
	deadline time.Time // of the frame being read: how long a take may wait
}

// startFrame tells the budget what a frame's header announces: payload
// is its size (inflated if compressed). The announcement is never taken
// or reserved, only used to tell small frames from big ones and to cap
// what a big one claims (see byteBudget).
func (l *lease) startFrame(payload uint64, deadline time.Time) {
	l.deadline = deadline
	if payload > uint64(l.b.small/4) {
		// Payload, rows (up to about twice the payload for typical
		// rows), samples, string copies and one doubling in flight.
		l.f.est = int64(min(payload, uint64(l.b.share)))*6 + l.b.quantum()
	}
}

// Alloc takes n bytes before they are allocated.
func (l *lease) Alloc(n int) error {
	need := int64(n)
	if l.credit < need {
		take := max(need-l.credit, l.b.quantum())
		// Within the share, a quantum shrinks to what is left of it.
		take = max(min(take, l.b.share-l.f.held), need-l.credit)
		if err := l.b.take(take, &l.f, l.deadline); err != nil {
			return err
		}
		l.credit += take
	}
	l.credit -= need
	l.held += need
	return nil
}

// Arrived marks the frame's body as read whole from the connection
// (zbx.ArrivalWatcher): from now on it claims all of its estimate.
func (l *lease) Arrived() { l.b.arrived(&l.f) }

// arrived marks f's body as read whole.
func (b *byteBudget) arrived(f *frameAcct) {
	b.mu.Lock()
	f.arrived = true
	b.mu.Unlock()
}

// Free gives back n bytes after their buffer was dropped.
func (l *lease) Free(n int) {
	l.held -= int64(n)
	l.b.release(int64(n), &l.f)
}

// endFrame marks the end of a frame: unused credit goes back, and the
// next frame is younger than every frame in progress.
func (l *lease) endFrame() {
	l.b.endFrame(&l.f, l.credit)
	l.credit = 0
}
