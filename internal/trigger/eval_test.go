package trigger

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/history/valuecache"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// evalEnv is env with a history store and an evaluator over it.
type evalEnv struct {
	*env
	hist *memstore.Store
	ev   *Evaluator
	now  time.Time // the timer's clock
	last map[uint64]history.Sample
	vc   *valuecache.Cache // nil without a value cache
	// lastCalls counts LastValue calls.
	lastCalls atomic.Int64
}

const t0 = 1_700_000_000

func newEvalEnv(t *testing.T, maxPending int) *evalEnv { return newEvalEnvCache(t, maxPending, false) }

// newEvalEnvCache is newEvalEnv with, when cached, a value cache in
// front of the store, fed by commit before the evaluator.
func newEvalEnvCache(t *testing.T, maxPending int, cached bool) *evalEnv {
	e := &evalEnv{env: newEnv(t), hist: memstore.New(), now: time.Unix(t0, 0), last: map[uint64]history.Sample{}}
	var values history.Reader
	if cached {
		vc, err := valuecache.New(valuecache.Options{Store: e.hist})
		if err != nil {
			t.Fatal(err)
		}
		e.vc, values = vc, vc
	}
	ev, err := NewEvaluator(EvaluatorOptions{
		Machine: e.m, Snapshot: e.cat.Snapshot, Store: e.hist, Values: values, MaxPending: maxPending,
		LastValue: func(id uint64) (history.Sample, bool) { e.lastCalls.Add(1); s, ok := e.last[id]; return s, ok },
		Location:  time.UTC, Started: time.Unix(t0-3600, 0), Now: func() time.Time { return e.now },
		Metrics: selfmon.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.ev = ev
	return e
}

// commit stores values of key on h1 as the pipeline would, then calls
// the commit hook with them.
func (e *evalEnv) commit(key string, clock int64, vals ...float64) {
	e.t.Helper()
	id := e.cat.Snapshot().Lookup("h1", key).ID
	var ss []history.Sample
	for i, v := range vals {
		ss = append(ss, history.Sample{ItemID: id, Clock: clock, NS: int32(i), Type: history.Float, F: v})
	}
	if err := e.hist.Write(context.Background(), ss); err != nil {
		e.t.Fatal(err)
	}
	e.last[id] = ss[len(ss)-1]
	if e.vc != nil {
		e.vc.Add(0, ss)
	}
	e.ev.Commit(0, ss)
}

func (e *evalEnv) open(trigger uint64) []event.Event { return e.store.OpenProblemsOf(trigger) }

func TestEvaluatorRaisesAndResolvesOnCommit(t *testing.T) {
	e := newEvalEnv(t, 0)
	id := e.trigger(catalog.TriggerFields{Description: "a is {ITEM.VALUE} on {HOST.HOST}", Expression: "last(/h1/a)>10", Priority: 4})
	e.commit("a", t0, 42)
	e.ev.Drain(context.Background())
	if rt := e.m.Runtime(id); rt.Value != event.ValueProblem || rt.LastChange != t0 {
		t.Fatalf("after 42: runtime %+v, want PROBLEM since %d (the value's time)", rt, t0)
	}
	open := e.open(id)
	if len(open) != 1 || open[0].Name != "a is 42 on h1" || open[0].Severity != 4 {
		t.Fatalf("open problems after 42: %+v", open)
	}
	e.commit("a", t0+5, 1)
	e.ev.Drain(context.Background())
	if rt := e.m.Runtime(id); rt.Value != event.ValueOK || rt.LastChange != t0+5 {
		t.Fatalf("after 1: runtime %+v, want OK since %d", rt, t0+5)
	}
	if open := e.open(id); len(open) != 0 {
		t.Fatalf("problems still open after recovery: %+v", open)
	}
	if n := e.ev.evaluated.Load(); n != 2 {
		t.Fatalf("%d evaluations, want 2", n)
	}
	if n := e.ev.passSeconds.Count(); n != 2 {
		t.Fatalf("%d pass durations observed, want 2 (one per value pass)", n)
	}
}

// Evaluation through the value cache gives the results evaluation
// against the store gives, value after value, for functions over counts
// and windows, and its reads hit the cache after the first.
func TestEvaluatorValueCacheMatchesStore(t *testing.T) {
	exprs := []string{"last(/h1/a)>10", "avg(/h1/a,5m)>10", "count(/h1/a,1m,\"gt\",5)>=3", "min(/h1/a,#3)<2 or max(/h1/b,30s)>50",
		"last(/h1/a,#2)>last(/h1/a)", "sum(/h1/b,2m)>100"}
	plain, cached := newEvalEnvCache(t, 0, false), newEvalEnvCache(t, 0, true)
	var ids [2][]uint64
	for i, e := range []*evalEnv{plain, cached} {
		for _, x := range exprs {
			ids[i] = append(ids[i], e.trigger(catalog.TriggerFields{Description: x, Expression: x}))
		}
	}
	clock := int64(t0)
	seen := make([]map[event.Runtime]bool, len(exprs))
	for step := range 400 {
		key := []string{"a", "b"}[step%2]
		v := float64((step * 37) % 61)
		clock += int64(step%7) * 3
		for _, e := range []*evalEnv{plain, cached} {
			e.commit(key, clock, v)
			e.ev.Drain(context.Background())
		}
		for i := range exprs {
			p, c := plain.m.Runtime(ids[0][i]), cached.m.Runtime(ids[1][i])
			if p.Value != c.Value || p.State != c.State || p.Error != c.Error {
				t.Fatalf("step %d, %s: with the value cache %+v, against the store %+v", step, exprs[i], c, p)
			}
			if seen[i] == nil {
				seen[i] = map[event.Runtime]bool{}
			}
			seen[i][event.Runtime{Value: p.Value}] = true
		}
	}
	for i, m := range seen {
		if len(m) != 2 {
			t.Errorf("%s never changed value: the comparison proves little", exprs[i])
		}
	}
	if s := cached.vc.Stats(); s.Hits < 100*s.Misses/10 || s.Misses == 0 || s.Bypass != 0 {
		t.Fatalf("value cache %+v: want mostly hits, no bypass", s)
	}
}

// Values of several items, in several committed batches (as different
// shards commit them), evaluate each affected trigger once per pass.
func TestEvaluatorCoalescesPerPass(t *testing.T) {
	e := newEvalEnv(t, 0)
	ta := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>10"})
	tb := e.trigger(catalog.TriggerFields{Description: "b", Expression: "last(/h1/b)>10"})
	tab := e.trigger(catalog.TriggerFields{Description: "a+b", Expression: "last(/h1/a)+last(/h1/b)>30"})
	e.commit("a", t0, 1, 2, 20)
	e.commit("b", t0, 15)
	e.commit("a", t0+1, 21)
	if q := e.ev.queued.Load(); q != 3 {
		t.Fatalf("%d triggers queued, want 3 (coalesced by trigger)", q)
	}
	e.ev.Drain(context.Background())
	if n, p := e.ev.evaluated.Load(), e.ev.passes.Load(); n != 3 || p != 1 {
		t.Fatalf("%d evaluations in %d passes, want 3 in 1", n, p)
	}
	for _, id := range []uint64{ta, tb, tab} {
		if rt := e.m.Runtime(id); rt.Value != event.ValueProblem {
			t.Fatalf("trigger %d: %+v, want PROBLEM", id, rt)
		}
	}
	// The trigger over a and b changed with a's newest value: its event
	// carries that value's time.
	if rt := e.m.Runtime(tab); rt.LastChange != t0+1 {
		t.Fatalf("a+b changed at %d, want %d", rt.LastChange, t0+1)
	}
	e.ev.Drain(context.Background()) // nothing queued: no pass
	if p := e.ev.passes.Load(); p != 1 {
		t.Fatalf("%d passes after an empty drain, want 1", p)
	}
}

// A full queue drops new triggers (counted) instead of waiting; triggers
// already queued still take new values.
func TestEvaluatorFullQueueDrops(t *testing.T) {
	e := newEvalEnv(t, 1)
	ta := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>10"})
	e.trigger(catalog.TriggerFields{Description: "b", Expression: "last(/h1/b)>10"})
	e.commit("a", t0, 42)
	e.commit("b", t0, 42) // no room: dropped, and Commit returned without a drain
	e.commit("a", t0+1, 43)
	if q, d := e.ev.queued.Load(), e.ev.dropped.Load(); q != 1 || d != 1 {
		t.Fatalf("queued %d dropped %d, want 1 and 1", q, d)
	}
	e.ev.Drain(context.Background())
	if n := e.ev.evaluated.Load(); n != 1 {
		t.Fatalf("%d evaluations, want 1", n)
	}
	if rt := e.m.Runtime(ta); rt.Value != event.ValueProblem || rt.LastChange != t0+1 {
		t.Fatalf("a: %+v", rt)
	}
	// Room again after the drain.
	e.commit("b", t0+2, 42)
	if q := e.ev.queued.Load(); q != 2 {
		t.Fatalf("queued %d after the drain, want 2", q)
	}
}

func TestEvaluatorRecoveryExpression(t *testing.T) {
	e := newEvalEnv(t, 0)
	id := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>10",
		RecoveryMode: catalog.RecoverRecoveryExpression, RecoveryExpression: "last(/h1/a)<5"})
	steps := []struct {
		v    float64
		want uint8
	}{{42, event.ValueProblem}, {7, event.ValueProblem}, {3, event.ValueOK}}
	for i, s := range steps {
		e.commit("a", t0+int64(i), s.v)
		e.ev.Drain(context.Background())
		if rt := e.m.Runtime(id); rt.Value != s.want {
			t.Fatalf("after %v: value %d, want %d", s.v, rt.Value, s.want)
		}
	}
	if open := e.open(id); len(open) != 0 {
		t.Fatalf("open after recovery: %+v", open)
	}
}

// Unknown results (no data) set the trigger's state and error, not its value.
func TestEvaluatorUnknown(t *testing.T) {
	e := newEvalEnv(t, 0)
	id := e.trigger(catalog.TriggerFields{Description: "a-b", Expression: "last(/h1/a)>last(/h1/b)"})
	e.commit("a", t0, 42)
	e.ev.Drain(context.Background())
	rt := e.m.Runtime(id)
	if rt.Value != event.ValueOK || rt.State != 1 || rt.Error == "" {
		t.Fatalf("runtime %+v, want OK, unknown state with an error", rt)
	}
	if e.ev.unknown.Load() != 1 {
		t.Fatalf("unknown count %d, want 1", e.ev.unknown.Load())
	}
}

// The parsed expression is cached per trigger and parsed again when the
// trigger's expression changes; deleted triggers leave the cache.
func TestEvaluatorCacheFollowsCatalog(t *testing.T) {
	e := newEvalEnv(t, 0)
	id := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>10"})
	e.commit("a", t0, 42)
	e.ev.Drain(context.Background())
	first := e.ev.cache[id]
	e.commit("a", t0+1, 43)
	e.ev.Drain(context.Background())
	if e.ev.cache[id] != first {
		t.Fatal("an unchanged trigger was parsed again")
	}
	if e.m.Runtime(id).Value != event.ValueProblem {
		t.Fatal("not PROBLEM at 43 > 10")
	}
	expr := "last(/h1/a)>100"
	if _, err := e.cat.Edit(context.Background(), func(ed *catalog.Edit) error {
		return ed.UpdateTriggers([]catalog.TriggerUpdate{{ID: id, Expression: &expr}})
	}); err != nil {
		t.Fatal(err)
	}
	e.commit("a", t0+2, 44)
	e.ev.Drain(context.Background())
	if c := e.ev.cache[id]; c == first || c.text != expr {
		t.Fatalf("cache not refreshed: %+v", c)
	}
	if e.m.Runtime(id).Value != event.ValueOK {
		t.Fatal("still PROBLEM at 44 under the new expression >100")
	}
	if _, err := e.cat.Edit(context.Background(), func(ed *catalog.Edit) error { return ed.DeleteTriggers([]uint64{id}) }); err != nil {
		t.Fatal(err)
	}
	// The next pass, for another trigger, drops it.
	e.trigger(catalog.TriggerFields{Description: "b", Expression: "last(/h1/b)>10"})
	e.commit("b", t0+3, 45)
	e.ev.Drain(context.Background())
	if _, ok := e.ev.cache[id]; ok {
		t.Fatal("a deleted trigger stays in the cache")
	}
}

// The timer evaluates time-based triggers only, at the clock's time.
func TestEvaluatorTimerPass(t *testing.T) {
	e := newEvalEnv(t, 0)
	nd := e.trigger(catalog.TriggerFields{Description: "no data", Expression: "nodata(/h1/a,30s)=1"})
	e.trigger(catalog.TriggerFields{Description: "plain", Expression: "last(/h1/a)>10"})
	e.commit("a", t0, 1)
	e.ev.Drain(context.Background()) // both evaluated: 2
	e.now = time.Unix(t0+10, 0)
	e.ev.TimerPass(context.Background())
	if rt := e.m.Runtime(nd); rt.Value != event.ValueOK {
		t.Fatalf("10 s after a value: %+v, want OK", rt)
	}
	e.now = time.Unix(t0+31, 0)
	e.ev.TimerPass(context.Background())
	rt := e.m.Runtime(nd)
	if rt.Value != event.ValueProblem || rt.LastChange != t0+31 {
		t.Fatalf("31 s after the last value: %+v, want PROBLEM since %d", rt, t0+31)
	}
	if n := e.ev.evaluated.Load(); n != 4 {
		t.Fatalf("%d evaluations, want 4 (2 on the value, 1 per timer pass)", n)
	}
	// A new value resolves it at once, without waiting for the timer.
	e.commit("a", t0+40, 1)
	e.ev.Drain(context.Background())
	if rt := e.m.Runtime(nd); rt.Value != event.ValueOK {
		t.Fatalf("after a new value: %+v, want OK", rt)
	}
}

// Run drains on its own goroutine when values are committed.
func TestEvaluatorRun(t *testing.T) {
	e := newEvalEnv(t, 0)
	id := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>10"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.ev.Run(ctx) }()
	defer func() { cancel(); <-done }()
	e.commit("a", t0, 42)
	for i := 0; e.m.Runtime(id).Value != event.ValueProblem; i++ {
		if i == 1000 {
			t.Fatal("not evaluated within 10 s of the commit")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if open := e.open(id); len(open) != 1 || !strings.HasPrefix(open[0].Name, "a") {
		t.Fatalf("open: %+v", open)
	}
}

// A pass large enough to be evaluated on several goroutines gives every
// trigger its own result: 4,096 triggers last(/h1/a)>N on one item, one
// value, through the value cache (run it with -race).
func TestEvaluatorLargePassParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	e := newEvalEnvCache(t, 0, true)
	const n = 4096
	fs := make([]catalog.TriggerFields, n)
	for i := range fs {
		fs[i] = catalog.TriggerFields{Description: fmt.Sprint("t", i), Expression: fmt.Sprintf("last(/h1/a)>%d", i), Enabled: true}
	}
	var ids []uint64
	if _, err := e.cat.Edit(context.Background(), func(ed *catalog.Edit) error {
		var err error
		ids, err = ed.CreateTriggers(fs)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.commit("a", t0, 2000)
	e.ev.Drain(context.Background())
	if got := e.ev.evaluated.Load(); got != n {
		t.Fatalf("%d evaluations, want %d", got, n)
	}
	for i, id := range ids {
		want := event.ValueOK
		if i < 2000 {
			want = event.ValueProblem
		}
		if rt := e.m.Runtime(id); rt.Value != uint8(want) {
			t.Fatalf("last(/h1/a)>%d with a = 2000: value %d, want %d", i, rt.Value, want)
		}
	}
}

// {ITEM.VALUE} is looked up only for results that may make an event:
// not for OK on an OK trigger, which is most evaluations under load.
func TestEvaluatorItemValuesOnlyForEvents(t *testing.T) {
	e := newEvalEnv(t, 0)
	id := e.trigger(catalog.TriggerFields{Description: "a is {ITEM.VALUE}", Expression: "last(/h1/a)>10"})
	e.commit("a", t0, 1)
	e.ev.Drain(context.Background())
	if n := e.lastCalls.Load(); n != 0 {
		t.Fatalf("OK on an OK trigger looked up %d item values", n)
	}
	e.commit("a", t0+1, 42)
	e.ev.Drain(context.Background())
	if n := e.lastCalls.Load(); n != 1 {
		t.Fatalf("PROBLEM looked up %d item values, want 1", n)
	}
	if open := e.open(id); len(open) != 1 || open[0].Name != "a is 42" {
		t.Fatalf("open problems %+v", open)
	}
	e.commit("a", t0+2, 2)
	e.ev.Drain(context.Background())
	if n := e.lastCalls.Load(); n != 2 {
		t.Fatalf("the recovery looked up %d item values in all, want 2", n)
	}
}
