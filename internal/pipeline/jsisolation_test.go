package pipeline

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// hostileScript loops for the value "loop", allocates without end for
// "alloc", and returns any other value as it is.
const hostileScript = `if (value == 'loop') { while (true) {} }
if (value == 'alloc') { var a = []; for (var i = 0; i < 1e8; i++) { a.push('x'.repeat(1 << 16) + i); } }
return value;`

// isolationSpec: item "js" with hostileScript, and n plain items of the
// same host, whose values are spread over the shards.
func isolationSpec(n int) catalog.Spec {
	items := []catalog.ItemSpec{{Key: "js", ValueType: "text", Preprocessing: []catalog.PreprocSpec{step("JAVASCRIPT", hostileScript)}}}
	for i := range n {
		items = append(items, catalog.ItemSpec{Key: "other[" + strconv.Itoa(i) + "]"})
	}
	return catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: items}}}
}

// p99 returns the 99th percentile of d.
func p99(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[(len(d)*99+99)/100-1]
}

// othersLatency runs one sender per other item, each meant to submit
// one value every 20 ms, until stop is closed, and returns each value's
// time from when it was due to when its Submit returned: a sender held
// up for a second counts the hundred values it could not send then
// (open loop, so that a stalled shard is not hidden by the senders of
// the other shard sending more often meanwhile).
func othersLatency(t *testing.T, f *fixture, n int, clock *atomic.Int64, stop <-chan struct{}) []time.Duration {
	const every = 20 * time.Millisecond
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	for i := range n {
		it := f.snap.Lookup("h", "other["+strconv.Itoa(i)+"]")
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk := NewTicket()
			v := make([]history.Sample, 1)
			var mine []time.Duration
			due := time.Now().Add(time.Duration(i) * every / time.Duration(n))
			for {
				select {
				case <-stop:
					mu.Lock()
					all = append(all, mine...)
					mu.Unlock()
					return
				default:
				}
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
				if err := Prepare(it, []byte("1"), &v[0]); err != nil {
					t.Error(err)
					return
				}
				v[0].Clock = clock.Add(1)
				if err := f.p.Submit(v, tk); err != nil {
					t.Error(err)
					return
				}
				done := time.Now()
				for ; !due.After(done); due = due.Add(every) {
					mine = append(mine, done.Sub(due))
				}
			}
		}()
	}
	wg.Wait()
	return all
}

// TestJSIsolation is issue 25's first fault: one item whose JavaScript
// step loops (for its whole 10 s limit), then allocates without end,
// while 100 other items' senders keep submitting through the same
// shards. Their p99 Submit time beside it must stay within 50 ms of
// their p99 without it, measured in the same run just before and just
// after (what a loaded machine adds to every submit is in both); the
// hostile item's values must fail its own step with the reasons. On a
// machine loaded by other work a measurement may still be off by more
// than 50 ms: an attempt that misses is repeated, up to three, and the
// test fails only if all miss. Before the fix every attempt misses by
// seconds (the shard waited for the script: p99 9.7 s).
func TestJSIsolation(t *testing.T) {
	const others = 100
	cat := catalogtest.Open(t, isolationSpec(others))
	f := newIsolationFixture(t, cat)
	var clock atomic.Int64
	clock.Store(1_000_000)
	measure := func(d time.Duration) time.Duration {
		stop := make(chan struct{})
		time.AfterFunc(d, func() { close(stop) })
		return p99(othersLatency(t, f, others, &clock, stop))
	}
	var report []string
	for attempt := 1; attempt <= 3; attempt++ {
		before := measure(time.Second)
		// The hostile sender: "loop", then "alloc", then a good value;
		// each Submit waits for its own value only.
		stop := make(chan struct{})
		hostileDone := make(chan error, 1)
		go func() {
			defer close(stop)
			for _, v := range []string{"loop", "alloc", "fine"} {
				if err := submitText(f, "js", v, clock.Add(1)); err != nil {
					hostileDone <- err
					return
				}
				if v == "loop" {
					assertJSState(t, f, "cannot execute script: execution timeout")
				}
				if v == "alloc" {
					// Stopped by its memory bound, or by its time limit
					// when a loaded machine allocates slowly (CI has
					// seen both): either way stopped, and made not
					// supported. Package jsvm's own test holds the exact
					// memory bound.
					assertJSState(t, f, "cannot execute script: memory limit exceeded (64 MiB)", "cannot execute script: execution timeout")
				}
			}
			hostileDone <- nil
		}()
		time.Sleep(50 * time.Millisecond) // the loop has started
		beside := p99(othersLatency(t, f, others, &clock, stop))
		if err := <-hostileDone; err != nil {
			t.Fatalf("hostile item's Submit: %v", err)
		}
		after := measure(time.Second)
		report = append(report, "others' p99 "+beside.String()+" beside the hostile item, "+before.String()+" before, "+after.String()+" after")
		t.Log(report[len(report)-1])
		if st := f.state("js"); st.NotSupported {
			t.Fatalf("js after a good value: %+v", st)
		}
		if got := f.values(t, "js"); len(got) != attempt || got[attempt-1] != "fine" {
			t.Fatalf("js stored %q, want only the good values", got)
		}
		if beside <= max(before, after)+50*time.Millisecond {
			return
		}
	}
	t.Errorf("others' p99 more than 50 ms worse beside a looping and an allocating script in every attempt:\n%s", strings.Join(report, "\n"))
}

func submitText(f *fixture, key, text string, clock int64) error {
	it := f.snap.Lookup("h", key)
	var s history.Sample
	if err := Prepare(it, []byte(text), &s); err != nil {
		return err
	}
	s.Clock = clock
	return f.p.Submit([]history.Sample{s}, nil)
}

func assertJSState(t *testing.T, f *fixture, want ...string) {
	t.Helper()
	st := f.state("js")
	if st.NotSupported && slices.ContainsFunc(want, func(w string) bool { return strings.Contains(st.Error, w) }) {
		return
	}
	t.Errorf("js state %+v, want not supported with one of %q", st, want)
}

// newIsolationFixture is a pipeline of two shards whose scripts run as
// the server's do: in a pool of worker processes (this test binary,
// which package jsvm turns into workers), with a 64 MiB memory limit.
func newIsolationFixture(t *testing.T, cat *catalog.Catalog) *fixture {
	pool, err := jsvm.NewPool(jsvm.PoolOptions{MemLimit: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	f := &fixture{store: memstore.New(), rt: itemstate.New(), snap: cat.Snapshot()}
	f.p = start(t, Options{Shards: 2, Store: f.store, Catalog: cat.Snapshot, ItemStates: f.rt, JS: pool})
	return f
}
