package ingest

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// testBudget is a budget whose collections are counted instead of run.
func testBudget(max int64) (*byteBudget, *atomic.Int64) {
	b := newByteBudget(max)
	var n atomic.Int64
	b.collect = func() { n.Add(1) }
	return b, &n
}

func far() time.Time { return time.Now().Add(time.Minute) }

// takeAsync starts a take and returns the channel its result arrives on.
func takeAsync(b *byteBudget, n int64, f *frameAcct, deadline time.Time) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- b.take(n, f, deadline) }()
	return ch
}

// waitWaiters waits until the budget has n waiters.
func waitWaiters(t *testing.T, b *byteBudget, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		got := len(b.waiters)
		b.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// queued is the number of requests waiting in b's queue.
func queued(b *byteBudget) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}

func pending(ch <-chan error) bool {
	select {
	case err := <-ch:
		panic(err)
	default:
		return true
	}
}

func TestBudgetShareAndSmall(t *testing.T) {
	b, _ := testBudget(64 << 20)
	if b.share != 56<<20 || b.small != 1<<20 || b.quantum() != 64<<10 {
		t.Fatalf("share %d small %d quantum %d", b.share, b.small, b.quantum())
	}
	// More than one connection may hold is refused at once, not waited for.
	if err := b.take(b.share+1, &frameAcct{}, far()); !errors.Is(err, errShare) {
		t.Fatalf("take beyond the share: %v", err)
	}
	f := &frameAcct{}
	if err := b.take(b.share-1<<20, f, far()); err != nil {
		t.Fatal(err)
	}
	if err := b.take(1<<20+1, f, far()); !errors.Is(err, errShare) {
		t.Fatalf("take crossing the share: %v", err)
	}
	if b.inUse() != b.share-1<<20 || f.held != b.inUse() {
		t.Fatalf("in use %d, frame holds %d", b.inUse(), f.held)
	}
	// A tiny budget still lets small frames through whole.
	tiny, _ := testBudget(256 << 10)
	if tiny.small != 16<<10 || tiny.quantum() != 16<<10 {
		t.Fatalf("256 KiB budget: small %d quantum %d", tiny.small, tiny.quantum())
	}
}

// TestBudgetGarbageIsCollected: released bytes count until a collection,
// which the budget runs itself when they stand in the way.
func TestBudgetGarbageIsCollected(t *testing.T) {
	b, gcs := testBudget(1 << 20)
	f1, f2, f3 := &frameAcct{}, &frameAcct{}, &frameAcct{}
	if err := b.take(800<<10, f1, far()); err != nil {
		t.Fatal(err)
	}
	b.release(800<<10, f1)
	if b.inUse() != 0 || b.garbage != 800<<10 || f1.held != 0 {
		t.Fatalf("after release: used %d garbage %d held %d", b.inUse(), b.garbage, f1.held)
	}
	if err := b.take(800<<10, f2, far()); err != nil {
		t.Fatal(err)
	}
	if gcs.Load() != 1 || b.collections.Load() != 1 || b.garbage != 0 {
		t.Fatalf("collections %d (%d counted), garbage %d; want one collection that freed all", gcs.Load(), b.collections.Load(), b.garbage)
	}
	if b.peak > b.max {
		t.Fatalf("peak %d over %d", b.peak, b.max)
	}
	// Room that does not need the garbage takes no collection.
	b.release(800<<10, f2)
	if err := b.take(50<<10, f3, far()); err != nil || gcs.Load() != 1 {
		t.Fatalf("take %v, %d collections", err, gcs.Load())
	}
}

// TestBudgetClaims: a younger big frame leaves an older one room to
// grow to claimFactor times what it holds, up to its estimate.
func TestBudgetClaims(t *testing.T) {
	b, _ := testBudget(64 << 20) // share 56 MiB
	old := &frameAcct{est: 20 << 20}
	if err := b.take(10<<20, old, far()); err != nil {
		t.Fatal(err)
	}
	young := &frameAcct{est: 100 << 20}
	ch := takeAsync(b, 40<<20, young, far()) // 10 held + 10 claimed + 40 > 56
	waitWaiters(t, b, 1)
	if !pending(ch) {
		t.Fatal("unreachable")
	}
	// The older frame doubles into the room it claimed.
	if err := b.take(10<<20, old, far()); err != nil {
		t.Fatal(err)
	}
	// Done: its estimate no longer claims anything; it ends its frame.
	b.release(20<<20, old)
	b.endFrame(old, 0)
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
	// A frame claims what it holds, up to its estimate.
	// Once its body has arrived, all of its estimate.
	for _, c := range []struct {
		est, held, claim int64
		arrived          bool
	}{{100, 10, 80, false}, {100, 60, 40, false}, {8, 8, 0, false}, {8, 10, 0, false}, {8, 0, 0, false},
		{100, 0, 100, true}, {100, 10, 90, true}, {8, 10, 0, true}, {0, 10, 0, true}} {
		if got := (&frameAcct{est: c.est, held: c.held, arrived: c.arrived}).claim(); got != c.claim {
			t.Fatalf("est %d held %d arrived %v: claim %d, want %d", c.est, c.held, c.arrived, got, c.claim)
		}
	}
}

// TestBudgetArrivedFrameClaimsItsEstimate: a younger big frame may take
// the room an older one will need while the older one's body is still
// arriving (it may never come), but not once that body is all in: then
// the older frame grows to its whole estimate without waiting, and the
// younger one is served after it. Claims by what was held alone let
// dozens of slowly decoded 4 MiB frames each take a few MiB, all wait,
// and the youngest be refused (TestIntegrationInflateMemory under CPU
// starvation).
func TestBudgetArrivedFrameClaimsItsEstimate(t *testing.T) {
	b, _ := testBudget(64 << 20) // share 56 MiB
	const est = 24 << 20
	old := &frameAcct{est: est}
	if err := b.take(64<<10, old, far()); err != nil {
		t.Fatal(err)
	}
	// Still arriving: the old frame claims 8 x 64 KiB, the young one
	// gets its 33 MiB at once.
	young := &frameAcct{est: 40 << 20}
	if err := b.take(33<<20, young, far()); err != nil {
		t.Fatalf("young frame beside an old one still arriving: %v", err)
	}
	b.release(33<<20, young)
	b.endFrame(young, 0)

	b.arrived(old)
	young = &frameAcct{est: 40 << 20}
	ch := takeAsync(b, 33<<20, young, far()) // 64 KiB + the other 24 MiB - 64 KiB + 33 MiB > 56 MiB
	waitWaiters(t, b, 1)
	for n := int64(64 << 10); old.held < est; n *= 2 {
		if err := b.take(min(n, est-old.held), old, far()); err != nil {
			t.Fatalf("old frame growing from %d bytes: %v", old.held, err)
		}
		if n := queued(b); n != 1 {
			t.Fatalf("%d waiters while the old frame grows to %d bytes, want the young one", n, old.held)
		}
	}
	b.release(est, old)
	b.endFrame(old, 0)
	if err := <-ch; err != nil {
		t.Fatalf("young frame after the old one ended: %v", err)
	}
	if b.preempted.Load() != 0 {
		t.Fatalf("%d frames refused to break a deadlock", b.preempted.Load())
	}
}

// TestBudgetCollectionKeepsAgeOrder: requests that wait for a collection
// wait in the queue, so the collection's end serves the oldest first; a
// younger request cannot take the room while the older one, holding
// nothing yet, claims none.
func TestBudgetCollectionKeepsAgeOrder(t *testing.T) {
	b := newByteBudget(64 << 20) // share 56 MiB
	gc := make(chan struct{})
	b.collect = func() { <-gc }
	holder := &frameAcct{est: 50 << 20}
	if err := b.take(50<<20, holder, far()); err != nil {
		t.Fatal(err)
	}
	b.release(50<<20, holder)
	b.endFrame(holder, 0)
	old, young := &frameAcct{est: 40 << 20}, &frameAcct{est: 40 << 20}
	oldCh := takeAsync(b, 40<<20, old, far()) // starts a collection
	waitWaiters(t, b, 1)
	youngCh := takeAsync(b, 30<<20, young, far())
	waitWaiters(t, b, 2) // both wait in the queue for the collection
	close(gc)
	if err := <-oldCh; err != nil {
		t.Fatal(err)
	}
	if n := queued(b); n != 1 { // 40 + 30 MiB > 56 MiB
		t.Fatalf("%d waiters after the old frame was served, want the young one", n)
	}
	b.release(40<<20, old)
	b.endFrame(old, 0)
	if err := <-youngCh; err != nil {
		t.Fatal(err)
	}
	if !(old.age < young.age) || b.collections.Load() < 2 {
		t.Fatalf("ages old %d young %d, %d collections", old.age, young.age, b.collections.Load())
	}
}

// TestBudgetOlderFramesFirst: a release serves the oldest waiting frame,
// and a younger big request does not take the room an older one waits
// for; a small one may pass.
func TestBudgetOlderFramesFirst(t *testing.T) {
	b, _ := testBudget(64 << 20) // share 56 MiB, small 1 MiB
	holder := &frameAcct{est: 50 << 20}
	if err := b.take(50<<20, holder, far()); err != nil {
		t.Fatal(err)
	}
	old, young := &frameAcct{est: 8 << 20}, &frameAcct{est: 4 << 20}
	oldCh := takeAsync(b, 8<<20, old, far())
	waitWaiters(t, b, 1)
	youngCh := takeAsync(b, 4<<20, young, far())
	waitWaiters(t, b, 2)
	// 6 MiB are free under the share: enough for the young request,
	// but it waits behind the older one.
	if !pending(youngCh) || !pending(oldCh) {
		t.Fatal("unreachable")
	}
	if err := b.take(512<<10, &frameAcct{}, far()); err != nil {
		t.Fatalf("small take behind big waiters: %v", err)
	}
	b.release(50<<20, holder) // garbage now; a collection frees it
	if err := <-oldCh; err != nil {
		t.Fatal(err)
	}
	if err := <-youngCh; err != nil {
		t.Fatal(err)
	}
	if !(old.age < young.age) {
		t.Fatalf("ages old %d young %d", old.age, young.age)
	}
}

// TestBudgetBreaksDeadlock: two frames each hold part of the budget and
// wait for more than is left; the younger is refused, the older served.
func TestBudgetBreaksDeadlock(t *testing.T) {
	b, _ := testBudget(64 << 20)
	f1, f2 := &frameAcct{est: 30 << 20}, &frameAcct{est: 26 << 20}
	if err := b.take(30<<20, f1, far()); err != nil {
		t.Fatal(err)
	}
	if err := b.take(26<<20, f2, far()); err != nil {
		t.Fatal(err)
	}
	olderCh := takeAsync(b, 20<<20, f1, far())
	waitWaiters(t, b, 1)
	youngerCh := takeAsync(b, 20<<20, f2, far())
	err := <-youngerCh
	if !errors.Is(err, errBusy) {
		t.Fatalf("younger frame: %v, want refused as busy", err)
	}
	if b.preempted.Load() != 1 || !pending(olderCh) {
		t.Fatalf("preempted %d", b.preempted.Load())
	}
	b.release(26<<20, f2) // the refused frame's connection closes
	if err := <-olderCh; err != nil {
		t.Fatalf("older frame: %v", err)
	}
}

// TestBudgetDeadline: a take that finds no room before its deadline
// gives up, and a waiter behind it that fits is served.
func TestBudgetDeadline(t *testing.T) {
	b, _ := testBudget(1 << 20)
	stalled := &frameAcct{est: 700 << 10}
	if err := b.take(700<<10, stalled, far()); err != nil {
		t.Fatal(err)
	}
	// A waiting frame that holds nothing is not a deadlock: the stalled
	// holder is not waiting and gives its bytes back at its own deadline.
	if err := b.take(600<<10, &frameAcct{}, time.Now().Add(20*time.Millisecond)); !errors.Is(err, errBusy) {
		t.Fatalf("got %v, want errBusy at the deadline", err)
	}
	if err := b.take(50<<10, &frameAcct{}, far()); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) != 0 || b.waitHeld != 0 {
		t.Fatalf("%d waiters, %d waiting bytes left", len(b.waiters), b.waitHeld)
	}
}

// TestLeaseQuanta: a lease takes in quanta, hands them out as credit,
// returns unused credit at the end of a frame (not as garbage) and
// freed bytes as garbage.
func TestLeaseQuanta(t *testing.T) {
	b, _ := testBudget(64 << 20)
	l := &lease{b: b}
	l.startFrame(10<<10, far())
	for i := 0; i < 10; i++ {
		if err := l.Alloc(1000); err != nil {
			t.Fatal(err)
		}
	}
	if l.held != 10000 || b.inUse() != 64<<10 || l.credit != 64<<10-10000 || l.f.est != 0 {
		t.Fatalf("held %d credit %d in use %d est %d; want one 64 KiB quantum of a small frame", l.held, l.credit, b.inUse(), l.f.est)
	}
	if err := l.Alloc(100 << 10); err != nil {
		t.Fatal(err)
	}
	if b.inUse() != l.held+l.credit || b.inUse() != 128<<10 {
		t.Fatalf("big alloc: held %d credit %d in use %d", l.held, l.credit, b.inUse())
	}
	l.Free(10000)
	l.endFrame()
	if b.inUse() != l.held || b.garbage != 10000 || l.f.age != 0 || len(b.frames) != 0 {
		t.Fatalf("after the frame: held %d in use %d garbage %d age %d frames %d", l.held, b.inUse(), b.garbage, l.f.age, len(b.frames))
	}
	// A big frame's estimate comes from its header.
	l.startFrame(16<<20, far())
	if l.f.est != 96<<20+64<<10 {
		t.Fatalf("estimate %d for a 16 MiB frame", l.f.est)
	}
	l.endFrame()

	// Near the share, a quantum shrinks to what is left of it; beyond
	// it, an allocation is refused.
	b2, _ := testBudget(64 << 20)
	l2 := &lease{b: b2, deadline: far()}
	if err := l2.Alloc(int(b2.share - 10<<10)); err != nil {
		t.Fatal(err)
	}
	if err := l2.Alloc(1000); err != nil {
		t.Fatal(err)
	}
	if l2.f.held != b2.share {
		t.Fatalf("held %d + credit %d, share %d", l2.held, l2.credit, b2.share)
	}
	if err := l2.Alloc(20 << 10); !errors.Is(err, errShare) {
		t.Fatalf("beyond the share: %v", err)
	}
}
