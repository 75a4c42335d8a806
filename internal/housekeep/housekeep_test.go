package housekeep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := checkNoLoops(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkNoLoops fails if a test left a housekeeping loop running.
func checkNoLoops() error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		if !strings.Contains(string(buf), "housekeep.(*Housekeeper)") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("leaked housekeeping goroutines (a Run was not stopped):\n%s", buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fakeStore records the housekeeping calls made on it.
type fakeStore struct {
	*memstore.Store
	mu      sync.Mutex // the two loops call concurrently in Run
	head    int64
	calls   []string
	failing map[string]bool // call name -> fail it
	retains chan struct{}   // if set, signalled after each Compact
}

func (f *fakeStore) record(call string) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
}

func (f *fakeStore) fail(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing[name] {
		return errors.New(name + " failed: disk full")
	}
	return nil
}

func (f *fakeStore) Flush() error {
	f.record("flush")
	if err := f.fail("flush"); err != nil {
		return err
	}
	f.mu.Lock()
	f.head = 0
	f.mu.Unlock()
	return nil
}

func (f *fakeStore) HeadValues() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.head
}

func (f *fakeStore) DropBefore(cutoff int64) (int, error) {
	f.record(fmt.Sprint("history<", cutoff))
	return 2, f.fail("history")
}

func (f *fakeStore) DropTrendsBefore(cutoff int64) (int, error) {
	f.record(fmt.Sprint("trends<", cutoff))
	return 1, f.fail("trends")
}

func (f *fakeStore) Compact(_ context.Context, _ time.Time, retention history.RetentionFunc) (int, error) {
	s, ok := int64(-1), false
	if retention != nil {
		s, ok = retention(7)
	}
	f.record(fmt.Sprint("compact item7=", s, ok))
	if f.retains != nil {
		f.retains <- struct{}{}
	}
	return 3, f.fail("compact")
}

func newFake(t *testing.T, opts Options) (*Housekeeper, *fakeStore) {
	t.Helper()
	f := &fakeStore{Store: memstore.New(), failing: map[string]bool{}}
	opts.Store = f
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return h, f
}

func TestFlushIfDue(t *testing.T) {
	h, f := newFake(t, Options{FlushInterval: time.Minute, MaxHeadValues: 100, Retention: func() Retention { return Retention{} }})
	t0 := h.lastFlush
	step := func(at time.Duration, head int64, want bool) {
		t.Helper()
		f.head = head
		if got := h.flushIfDue(t0.Add(at)); got != want {
			t.Fatalf("at +%v with %d head values: flushed=%v, want %v", at, head, got, want)
		}
	}
	step(10*time.Second, 99, false)   // neither due
	step(20*time.Second, 100, true)   // head full
	step(30*time.Second, 5, false)    // interval restarts at the flush
	step(80*time.Second, 5, true)     // interval since +20s
	f.failing["flush"] = true         //
	step(140*time.Second, 5, true)    // due, fails
	step(141*time.Second, 5, false)   // a failure is not retried at once
	step(141*time.Second, 1000, true) // unless the head is full
	if n, e := h.flushes.Load(), h.flushErrors.Load(); n != 2 || e != 2 {
		t.Fatalf("flushes=%d errors=%d, want 2 and 2", n, e)
	}
	if len(f.calls) != 4 {
		t.Fatalf("store saw %v, want 4 flushes", f.calls)
	}
}

func TestRetainOrderAndCutoffs(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	f := func(r Retention, failing []string, want []string, wantErrs uint64) {
		t.Helper()
		h, st := newFake(t, Options{Retention: func() Retention { return r }})
		for _, name := range failing {
			st.failing[name] = true
		}
		h.retain(context.Background(), now)
		if d := cmp.Diff(want, st.calls); d != "" {
			t.Fatalf("retention %+v, failing %v: calls (-want +got):\n%s", r, failing, d)
		}
		if got := h.retentionErrors.Load(); got != wantErrs {
			t.Fatalf("retention %+v, failing %v: %d errors counted, want %d", r, failing, got, wantErrs)
		}
	}
	item := func(id uint64) (int64, bool) { return int64(id) * 3600, true }
	// Trends and history partitions are dropped before compaction, so that
	// compaction never rewrites a day that is about to go.
	f(Retention{History: 86400, Trends: 365 * 86400, Item: item}, nil,
		[]string{fmt.Sprint("trends<", now.Unix()-365*86400), fmt.Sprint("history<", now.Unix()-86400), "compact item7=25200 true"}, 0)
	// No retention known: nothing is dropped, compaction still runs.
	f(Retention{}, nil, []string{"compact item7=-1 false"}, 0)
	// A failed step is counted and does not stop the others.
	f(Retention{History: 10, Trends: 20}, []string{"trends", "compact"},
		[]string{fmt.Sprint("trends<", now.Unix()-20), fmt.Sprint("history<", now.Unix()-10), "compact item7=-1 false"}, 2)
}

func TestRetentionRequiredForDroppingStore(t *testing.T) {
	if _, err := New(Options{Store: &fakeStore{Store: memstore.New()}}); err == nil {
		t.Fatal("New accepted a dropping store without Retention")
	}
	if _, err := New(Options{}); err == nil {
		t.Fatal("New accepted no Store")
	}
}

// Run makes the first retention pass at start and returns once its
// context ends, its loops stopped (TestMain checks none is left).
func TestRunRetainsAtStartAndStops(t *testing.T) {
	f := &fakeStore{Store: memstore.New(), failing: map[string]bool{}, retains: make(chan struct{}, 1)}
	h, err := New(Options{Store: f, FlushInterval: time.Hour, CheckInterval: time.Hour, Retention: func() Retention { return Retention{History: 60} }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	<-f.retains // the pass at start, not after CheckInterval
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) != 2 || !strings.HasPrefix(f.calls[0], "history<") || !strings.HasPrefix(f.calls[1], "compact") {
		t.Fatalf("calls %v, want one retention pass", f.calls)
	}
}

// The memory store has nothing to flush, drop or compact: Run idles until
// stopped.
func TestMemstoreRunStops(t *testing.T) {
	h, err := New(Options{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	if h.flusher != nil || h.dropper != nil || h.compactor != nil {
		t.Fatal("memstore reported a housekeeping interface")
	}
	done := make(chan error, 1)
	go func() { done <- h.Run(context.Background()) }()
	h.Stop()
	h.Stop() // twice is fine
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestEngineRetention runs the passes on the real engine: values older
// than the longest retention go with their partitions, an item with a
// shorter retention loses its older values at compaction, the rest stays.
func TestEngineRetention(t *testing.T) {
	st, err := engine.Open(engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const day = 86400
	now := time.Unix(1_700_000_000/day*day+12*3600, 0) // noon
	var vals []history.Sample
	for d := int64(1); d <= 10; d++ { // one value per item per day, 1 to 10 days ago
		for _, item := range []uint64{1, 2} {
			vals = append(vals, history.Sample{ItemID: item, Clock: now.Unix() - d*day, Type: history.Float, F: float64(d)})
		}
	}
	if err := st.Write(context.Background(), vals); err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Store: st, MaxHeadValues: 1, Retention: func() Retention {
		return Retention{History: 5 * day, Trends: 8 * day, Item: func(id uint64) (int64, bool) {
			if id == 2 {
				return 3 * day, true
			}
			return 5 * day, true
		}}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !h.flushIfDue(time.Now()) || h.flushes.Load() != 1 || st.HeadValues() != 0 {
		t.Fatalf("flush of a full head: flushes=%d head=%d", h.flushes.Load(), st.HeadValues())
	}
	h.retain(context.Background(), now)
	if h.retentionErrors.Load() != 0 || h.droppedHistory.Load() == 0 || h.droppedTr.Load() == 0 || h.compacted.Load() == 0 {
		t.Fatalf("errors=%d dropped history=%d trends=%d compacted=%d", h.retentionErrors.Load(), h.droppedHistory.Load(), h.droppedTr.Load(), h.compacted.Load())
	}
	ages := func(item uint64) []int64 {
		var out []int64
		for _, v := range historytest.ReadAll(t, st, history.Query{ItemID: item, From: 0, Till: now.Unix()}) {
			out = append(out, (now.Unix()-v.Clock)/day)
		}
		return out
	}
	// A value exactly as old as its retention stays (as in Zabbix, which
	// deletes clock < now - period); older ones go, with their partition
	// (item 1) or at compaction (item 2).
	if d := cmp.Diff([]int64{5, 4, 3, 2, 1}, ages(1)); d != "" {
		t.Errorf("item 1 (5 days) kept days ago (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int64{3, 2, 1}, ages(2)); d != "" {
		t.Errorf("item 2 (3 days) kept days ago (-want +got):\n%s", d)
	}
	trends, err := st.ReadTrends(context.Background(), 1, 0, now.Unix())
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trends {
		if tr.Clock < now.Unix()-8*day {
			t.Errorf("trend of %s outlived the 8-day trends retention", time.Unix(tr.Clock, 0).UTC())
		}
	}
	if len(trends) != 8 { // days 1 to 8 ago, one hour each
		t.Errorf("%d trend hours left, want the 8 within retention", len(trends))
	}
}
