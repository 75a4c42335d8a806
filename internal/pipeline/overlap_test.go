package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// gatedFixture is a one-shard pipeline over preprocSpec whose store
// blocks every write until g.gate is closed.
func gatedFixture(t *testing.T) (*fixture, *gateStore) {
	t.Helper()
	cat := catalogtest.Open(t, preprocSpec())
	g := &gateStore{Store: memstore.New(), gate: make(chan struct{})}
	f := &fixture{store: g.Store, rt: itemstate.New(), snap: cat.Snapshot()}
	f.p = start(t, Options{Shards: 1, Store: g, Catalog: cat.Snapshot, ItemStates: f.rt})
	t.Cleanup(g.release) // registered last, so run first: Stop waits for the writes
	return f, g
}

// submitAsync submits one value of key at clock and returns a channel
// that delivers Submit's result.
func (f *fixture) submitAsync(t *testing.T, clock int64, key, value string) <-chan error {
	t.Helper()
	var s history.Sample
	if err := Prepare(f.snap.Lookup("h", key), []byte(value), &s); err != nil {
		t.Fatal(err)
	}
	s.Clock = clock
	res := make(chan error, 1)
	go func() { res <- f.p.Submit([]history.Sample{s}, nil) }()
	return res
}

// waitFor polls cond until it holds; the deadline only guards against a
// hang, it asserts nothing about speed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// The next batch is preprocessed while the previous one is still being
// written: the two stages overlap, and values are still written, and
// acknowledged, in order.
func TestPreprocessOverlapsWrite(t *testing.T) {
	f, g := gatedFixture(t)
	first := f.submitAsync(t, 1000, "num", "5")
	waitFor(t, "the first batch to reach the store", func() bool { return g.entered.Load() == 1 })
	// A value that fails its multiplier step: its item becomes not
	// supported during preprocessing, before any write.
	second := f.submitAsync(t, 1010, "rate", "x")
	waitFor(t, "the second batch's preprocessing", func() bool { return f.state("rate").NotSupported })
	// Both jobs are in flight now: this one waits in the queue.
	third := f.submitAsync(t, 1020, "num", "7")
	if n := g.writes.Load(); n != 0 {
		t.Fatalf("%d writes done while the store was stalled", n)
	}
	select {
	case err := <-first:
		t.Fatalf("first value acknowledged (%v) before its write", err)
	case err := <-second:
		t.Fatalf("second value acknowledged (%v) before the write ahead of it", err)
	default:
	}
	g.release()
	for _, c := range []<-chan error{first, second, third} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(f.values(t, "num"), " "); got != "10 14" {
		t.Fatalf("num stored %q, want \"10 14\"", got)
	}
}

// A failed write forgets the step state of its items, so that a value
// sent again after the failure is compared with the last stored value,
// not with its own unstored self (see forgetState).
func TestFailedWriteForgetsStepState(t *testing.T) {
	f, g := gatedFixture(t)
	g.release()
	f.send(t, 1000, "num", "5", "rate", "100")
	f.send(t, 1010, "rate", "200") // stored: 10/s
	g.fail.Store(true)
	for _, kv := range [][2]string{{"num", "6"}, {"rate", "300"}} {
		if err := <-f.submitAsync(t, 1020, kv[0], kv[1]); err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("%s: Submit = %v, want the store's error", kv[0], err)
		}
	}
	g.fail.Store(false)
	f.send(t, 1030, "num", "6", "rate", "400")
	f.send(t, 1040, "rate", "500")
	// The resent 6 is stored, not discarded as unchanged. The change
	// step's state is forgotten too: 400 is a first value again
	// (discarded), 500 gives 10/s.
	if got := strings.Join(f.values(t, "num"), " "); got != "10 12" {
		t.Fatalf("num stored %q, want \"10 12\"", got)
	}
	if got := strings.Join(f.values(t, "rate"), " "); got != "10 10" {
		t.Fatalf("rate stored %q, want \"10 10\"", got)
	}
}

// A batch preprocessed while the write ahead of it was under way, and
// failed, ran on state that is now forgotten: it is failed too, not
// acknowledged as discarded.
func TestBatchAfterFailedWriteFails(t *testing.T) {
	f, g := gatedFixture(t)
	g.fail.Store(false)
	first := f.submitAsync(t, 1000, "num", "5")
	waitFor(t, "the first batch to reach the store", func() bool { return g.entered.Load() == 1 })
	discarded := f.p.discarded.Load()
	// Unchanged from the first value, which is not written yet: its
	// preprocessing discards it.
	second := f.submitAsync(t, 1010, "num", "5")
	waitFor(t, "the second value to be discarded", func() bool { return f.p.discarded.Load() > discarded })
	g.fail.Store(true)
	g.release()
	if err := <-first; err == nil || err.Error() != "disk on fire" {
		t.Fatalf("first: Submit = %v, want the store's error", err)
	}
	err := <-second
	if err == nil || !strings.Contains(err.Error(), "preprocessed after values whose write failed") || err.Error() == "disk on fire" {
		t.Fatalf("second: Submit = %v, want it failed for following the failed write", err)
	}
	if cause := errors.Unwrap(err); cause == nil || cause.Error() != "disk on fire" {
		t.Fatalf("second: Submit = %v does not wrap the store's error", err)
	}
	g.fail.Store(false)
	f.send(t, 1020, "num", "5")
	if got := strings.Join(f.values(t, "num"), " "); got != "10" {
		t.Fatalf("num stored %q, want \"10\" (the value sent again)", got)
	}
}
