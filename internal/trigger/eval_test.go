package trigger

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
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
	now  time.Time         // the timer's clock
	vc   *valuecache.Cache // nil without a value cache
	// reads counts the evaluator's history reads without a value cache.
	reads atomic.Int64
}

// countingReader counts reads of a history store.
type countingReader struct {
	history.Reader
	n *atomic.Int64
}

func (r countingReader) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	r.n.Add(1)
	return r.Reader.Read(ctx, q, fn)
}

const t0 = 1_700_000_000

func newEvalEnv(t *testing.T, maxPending int) *evalEnv { return newEvalEnvCache(t, maxPending, false) }

// newEvalEnvCache is newEvalEnv with, when cached, a value cache in
// front of the store, fed by commit before the evaluator.
func newEvalEnvCache(t *testing.T, maxPending int, cached bool) *evalEnv {
	return newEvalEnvShards(t, maxPending, cached, 1)
}

// newEvalEnvShards is newEvalEnvCache with shards evaluation shards.
func newEvalEnvShards(t *testing.T, maxPending int, cached bool, shards int) *evalEnv {
	e := &evalEnv{env: newEnv(t), hist: memstore.New(), now: time.Unix(t0, 0)}
	var values history.Reader = countingReader{e.hist, &e.reads}
	if cached {
		vc, err := valuecache.New(valuecache.Options{Store: e.hist})
		if err != nil {
			t.Fatal(err)
		}
		e.vc, values = vc, vc
	}
	ev, err := NewEvaluator(EvaluatorOptions{
		Machine: e.m, Snapshot: e.cat.Snapshot, Store: e.hist, Values: values, MaxPending: maxPending, Shards: shards,
		Location: time.UTC, Started: time.Unix(t0-3600, 0), Now: func() time.Time { return e.now },
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

// {ITEM.VALUE} in a problem's name and tags carries the item's units as
// the Zabbix 6.0 server writes them (recorded: internal/conformance, case
// grafana, "Low memory on CF Graf host 1 (1.4 GB left)"; tags: opdata.go).
func TestEventNameValueWithUnits(t *testing.T) {
	e := newEvalEnv(t, 0)
	id := e.trigger(catalog.TriggerFields{Description: "Low memory ({ITEM.VALUE} left)", Expression: "last(/h1/mem)<2000000000", Priority: 2,
		Tags: []catalog.Tag{{Tag: "left", Value: "{ITEM.VALUE}"}}})
	e.commit("mem", t0, 1500000000)
	e.ev.Drain(context.Background())
	open := e.open(id)
	if len(open) != 1 || open[0].Name != "Low memory (1.4 GB left)" {
		t.Fatalf("open problems: %+v", open)
	}
	if !slices.Contains(open[0].Tags, event.Tag{Tag: "left", Value: "1.4 GB"}) {
		t.Fatalf("tags %+v, want left:1.4 GB", open[0].Tags)
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
// pipeline shards commit them), evaluate each affected trigger once per
// distinct timestamp of its values, in order, in one pass: values with
// the same timestamp (a's first and b's) are one evaluation of a+b.
func TestEvaluatorOneEvaluationPerTimestamp(t *testing.T) {
	e := newEvalEnv(t, 0)
	ta := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>10"})
	tb := e.trigger(catalog.TriggerFields{Description: "b", Expression: "last(/h1/b)>10"})
	tab := e.trigger(catalog.TriggerFields{Description: "a+b", Expression: "last(/h1/a)+last(/h1/b)>30"})
	e.commit("a", t0, 1, 2, 20) // at t0 ns 0, 1, 2: three evaluations of a and of a+b
	e.commit("b", t0, 15)       // at t0 ns 0: b, and a+b's first time again
	e.commit("a", t0+1, 21)     // a new time of a and a+b
	if g := e.ev.pendingGauge.Load(); g != 10 {
		t.Fatalf("%d waiting in the queue, want 10 (one per value and trigger of its item)", g)
	}
	e.ev.Drain(context.Background())
	if q := e.ev.queued.Load(); q != 9 {
		t.Fatalf("%d evaluations due, want 9 (a and a+b at four times, b at one)", q)
	}
	// Rounds whose results are all OK on OK triggers send nothing: b's
	// problem (round 0), a's and a+b's at t0.2 (round 2), and both again
	// at t0+1 (round 3) make three.
	if n, p := e.ev.evaluated.Load(), e.ev.passes.Load(); n != 9 || p != 3 {
		t.Fatalf("%d evaluations in %d rounds sent, want 9 in 3", n, p)
	}
	for _, id := range []uint64{ta, tb, tab} {
		if rt := e.m.Runtime(id); rt.Value != event.ValueProblem {
			t.Fatalf("trigger %d: %+v, want PROBLEM", id, rt)
		}
	}
	// a+b became true with the 20 (t0 ns 2: 20+15), not before: 1+15 and
	// 2+15 were each evaluated on their own.
	if ev := e.open(tab); len(ev) != 1 || ev[0].Clock != t0 || ev[0].NS != 2 {
		t.Fatalf("a+b open problems %+v, want one at %d.2", ev, t0)
	}
	e.ev.Drain(context.Background()) // nothing queued: no pass
	if p := e.ev.passes.Load(); p != 3 {
		t.Fatalf("%d rounds after an empty drain, want 3", p)
	}
}

// Zabbix evaluates every value: a 1 followed by a 0 committed before a
// pass (in one batch or two) makes a problem and its recovery, in order,
// each at its value's time.
func TestEvaluatorEveryValueInOrder(t *testing.T) {
	e := newEvalEnv(t, 0)
	id := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>0"})
	aid := e.cat.Snapshot().Lookup("h1", "a").ID
	batch := []history.Sample{
		{ItemID: aid, Clock: t0, Type: history.Float, F: 1},
		{ItemID: aid, Clock: t0 + 1, Type: history.Float, F: 0},
	}
	if err := e.hist.Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	e.ev.Commit(0, batch)
	e.ev.Drain(context.Background())
	assertFlip(t, e, id, t0, t0+1)
}

// assertFlip checks that trigger id made exactly one problem at clock
// problem, resolved by an OK event at clock ok, and is OK again.
func assertFlip(t *testing.T, e *evalEnv, id uint64, problem, ok int64) {
	t.Helper()
	evs := e.store.Events(func(ev *event.Event) bool { return ev.ObjectID == id })
	if len(evs) != 2 {
		t.Fatalf("events %+v, want a problem and its recovery", evs)
	}
	p, r := evs[0], evs[1]
	if p.Value != event.ValueProblem || p.Clock != problem || r.Value != event.ValueOK || r.Clock != ok || p.REventID != r.ID || r.ID < p.ID {
		t.Fatalf("events %+v, want PROBLEM at %d resolved by OK at %d", evs, problem, ok)
	}
	if rt := e.m.Runtime(id); rt.Value != event.ValueOK {
		t.Fatalf("runtime %+v, want OK", rt)
	}
}

// blockingReader holds the first read until release is closed, so a test
// can commit values while a pass is running.
type blockingReader struct {
	history.Reader
	once    atomic.Bool
	reading chan struct{}
	release chan struct{}
}

func (r *blockingReader) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	if r.once.CompareAndSwap(false, true) {
		close(r.reading)
		<-r.release
	}
	return r.Reader.Read(ctx, q, fn)
}

// A 0 committed while the pass evaluating the 1 runs is evaluated by the
// next pass: the problem is made and then resolved, not skipped.
func TestEvaluatorValueDuringPass(t *testing.T) {
	e := newEvalEnv(t, 0)
	br := &blockingReader{Reader: e.hist, reading: make(chan struct{}), release: make(chan struct{})}
	ev, err := NewEvaluator(EvaluatorOptions{Machine: e.m, Snapshot: e.cat.Snapshot, Store: e.hist, Values: br, Shards: 1, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	e.ev = ev
	// min over a second, not last(): last() of the value that caused
	// the evaluation reads nothing (queuedEval.known), and this test
	// needs the pass to block in a read.
	id := e.trigger(catalog.TriggerFields{Description: "a", Expression: "min(/h1/a,1s)>0"})
	e.commit("a", t0, 1)
	done := make(chan struct{})
	go func() { defer close(done); ev.Drain(context.Background()) }()
	<-br.reading // the pass is evaluating the 1
	e.commit("a", t0+1, 0)
	close(br.release)
	<-done
	ev.Drain(context.Background())
	assertFlip(t, e, id, t0, t0+1)
	if n := ev.evaluated.Load(); n != 2 {
		t.Fatalf("%d evaluations, want 2", n)
	}
}

// A burst of values faster than evaluation (a backfill: all committed
// before one pass) is evaluated value by value, in time order, by every
// kind of function: a problem that opens and closes inside the burst is
// raised and resolved at its values' clocks. Before issue 30 a trigger
// kept 16 times waiting and merged the rest into the newest, so the 9s
// below were never evaluated on their own. Each case runs with room in
// the queue, with a queue so small that most of the burst is re-read
// from history (the backlog), and with the value cache.
func TestEvaluatorBurstEveryValue(t *testing.T) {
	type burst struct {
		name, expr string
		step       int64 // seconds between values
		vals       []float64
		problem    int // index of the value that raises the problem
		ok         int // index of the value that resolves it
	}
	spike := func(n, at, width int, v float64) []float64 {
		out := make([]float64, n)
		for i := at; i < at+width; i++ {
			out[i] = v
		}
		return out
	}
	cases := []burst{
		{"last", "last(/h1/a)>5", 1, spike(60, 37, 1, 9), 37, 38},
		{"avg #3", "avg(/h1/a,#3)>2", 1, spike(60, 30, 1, 9), 30, 33},
		{"min 5m", "min(/h1/a,5m)>5", 30, spike(60, 20, 12, 9), 29, 32},
		{"max 1m", "max(/h1/a,1m)>5", 10, spike(60, 40, 1, 9), 40, 46},
		{"count", "count(/h1/a,#4,\"gt\",5)>=2", 1, spike(60, 25, 2, 9), 26, 29},
		{"change", "change(/h1/a)>5", 1, spike(60, 45, 3, 9), 45, 46},
	}
	for _, tc := range cases {
		for _, mode := range []struct {
			name       string
			maxPending int
			cached     bool
		}{{"queue", 0, false}, {"backlog", 5, false}, {"backlog cached", 5, true}} {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				e := newEvalEnvCache(t, mode.maxPending, mode.cached)
				id := e.trigger(catalog.TriggerFields{Description: "a", Expression: tc.expr})
				for i, v := range tc.vals {
					e.commit("a", t0+int64(i)*tc.step, v)
				}
				e.ev.Drain(context.Background())
				assertFlip(t, e, id, t0+int64(tc.problem)*tc.step, t0+int64(tc.ok)*tc.step)
				if n := e.ev.evaluated.Load(); n != uint64(len(tc.vals)) {
					t.Fatalf("%d evaluations, want %d (one per value)", n, len(tc.vals))
				}
				if mode.maxPending > 0 {
					if b, r := e.ev.backlogged.Load(), e.ev.reread.Load(); b != uint64(len(tc.vals)-mode.maxPending) || r != b {
						t.Fatalf("backlogged %d re-read %d, want %d each", b, r, len(tc.vals)-mode.maxPending)
					}
				}
				if g, b := e.ev.pendingGauge.Load(), e.ev.backlogGauge.Load(); g != 0 || b != 0 {
					t.Fatalf("pending %d backlog %d after the drain", g, b)
				}
			})
		}
	}
}

// distinctTimes keeps one time per distinct timestamp, ascending,
// whatever the order values arrive in; a time that several values share
// carries none of them (the evaluation reads them).
func TestDistinctTimes(t *testing.T) {
	var seg []queuedEval
	for i, ts := range []int64{5e9 + 1, 5e9 + 7, 3e9 + 1, 4e9, 3e9 + 9, 6e9, 1e9, 3e9 + 9, 5e9 + 7} {
		seg = append(seg, queuedEval{trigger: 1, ts: ts, item: 7, bits: uint64(i), typ: history.Uint})
	}
	var got []int64
	var known []string
	for _, q := range distinctTimes(seg) {
		got = append(got, q.ts)
		var s history.Sample
		if q.known(&s) {
			known = append(known, fmt.Sprintf("%d@%d.%d", s.U, s.Clock, s.NS))
		} else {
			known = append(known, "-")
		}
	}
	want := []int64{1e9, 3e9 + 1, 3e9 + 9, 4e9, 5e9 + 1, 5e9 + 7, 6e9}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("times %v, want %v", got, want)
	}
	if w := "[6@1.0 2@3.1 - 3@4.0 0@5.1 - 5@6.0]"; fmt.Sprint(known) != w {
		t.Fatalf("values %v, want %s", known, w)
	}
}

// With several shards every trigger is evaluated once by its own shard,
// including a trigger over items whose values come from two commits
// (pipeline shards) in the same second.
func TestEvaluatorSharded(t *testing.T) {
	e := newEvalEnvShards(t, 0, false, 3)
	var ids []uint64
	for i := range 7 {
		ids = append(ids, e.trigger(catalog.TriggerFields{Description: fmt.Sprint("a", i), Expression: fmt.Sprintf("last(/h1/a)>%d", i)}))
	}
	tab := e.trigger(catalog.TriggerFields{Description: "a+b", Expression: "last(/h1/a)+last(/h1/b)>100"})
	e.commit("a", t0, 4)
	e.commit("b", t0, 99)
	e.ev.Drain(context.Background())
	if n := e.ev.evaluated.Load(); n != 8 {
		t.Fatalf("%d evaluations, want 8 (one per trigger)", n)
	}
	for i, id := range ids {
		want := uint8(event.ValueOK)
		if i < 4 {
			want = event.ValueProblem
		}
		if rt := e.m.Runtime(id); rt.Value != want {
			t.Fatalf("last(/h1/a)>%d at 4: %+v", i, rt)
		}
	}
	if rt := e.m.Runtime(tab); rt.Value != event.ValueProblem {
		t.Fatalf("a+b: %+v", rt)
	}
	if g := e.ev.pendingGauge.Load(); g != 0 {
		t.Fatalf("pending gauge %d after the drain", g)
	}
}

// A full queue neither waits nor drops: the commit that does not fit,
// and every one after it until a pass catches up, is kept as a span per
// trigger and re-read from the history store, after the queue, in
// order; then commits go to the queue again.
func TestEvaluatorFullQueueBacklogs(t *testing.T) {
	e := newEvalEnv(t, 2)
	ta := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>10"})
	tb := e.trigger(catalog.TriggerFields{Description: "b", Expression: "last(/h1/b)>10"})
	e.commit("a", t0, 42)
	e.commit("a", t0+1, 43)
	e.commit("b", t0, 42)   // no room: backlogged, and Commit returned without a drain
	e.commit("a", t0+2, 1)  // room, but the shard is backlogged: after b's, in order
	e.commit("a", t0+3, 44) // and again
	if b, g := e.ev.backlogged.Load(), e.ev.backlogGauge.Load(); b != 3 || g != 2 {
		t.Fatalf("backlogged %d (%d triggers), want 3 (2)", b, g)
	}
	e.ev.Drain(context.Background())
	if q, r, n := e.ev.queued.Load(), e.ev.reread.Load(), e.ev.evaluated.Load(); q != 2 || r != 3 || n != 5 {
		t.Fatalf("queued %d re-read %d evaluated %d, want 2, 3 and 5", q, r, n)
	}
	evs := e.store.Events(func(ev *event.Event) bool { return ev.ObjectID == ta })
	if len(evs) != 3 || evs[0].Clock != t0 || evs[1].Clock != t0+2 || evs[2].Clock != t0+3 || evs[2].Value != event.ValueProblem {
		t.Fatalf("a's events %+v, want PROBLEM at t0, OK at t0+2, PROBLEM at t0+3", evs)
	}
	if rt := e.m.Runtime(tb); rt.Value != event.ValueProblem || rt.LastChange != t0 {
		t.Fatalf("b: %+v, want PROBLEM since t0", rt)
	}
	// Caught up: commits go to the queue again.
	e.commit("b", t0+4, 1)
	if b := e.ev.backlogged.Load(); b != 3 {
		t.Fatalf("backlogged %d after the drain, want still 3", b)
	}
	e.ev.Drain(context.Background())
	if rt := e.m.Runtime(tb); rt.Value != event.ValueOK {
		t.Fatalf("b after the drain: %+v", rt)
	}
}

// A span whose values cannot be read back is counted and logged, and the
// shard goes on with the others.
func TestEvaluatorBacklogReadError(t *testing.T) {
	e := newEvalEnv(t, 1)
	ev, err := NewEvaluator(EvaluatorOptions{Machine: e.m, Snapshot: e.cat.Snapshot, Store: failingReader{e.hist}, Values: e.hist, MaxPending: 1, Shards: 1, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	e.ev = ev
	id := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>10"})
	e.commit("a", t0, 42)
	e.commit("a", t0+1, 1) // backlogged; its re-read fails
	ev.Drain(context.Background())
	if d := ev.dropped.Load(); d != 1 {
		t.Fatalf("dropped %d, want 1", d)
	}
	if rt := e.m.Runtime(id); rt.Value != event.ValueProblem {
		t.Fatalf("runtime %+v, want PROBLEM (the 42, queued)", rt)
	}
	e.commit("a", t0+2, 1) // out of backlog mode: queued and evaluated
	ev.Drain(context.Background())
	if rt := e.m.Runtime(id); rt.Value != event.ValueOK {
		t.Fatalf("runtime %+v, want OK", rt)
	}
}

// failingReader fails ascending reads: the backlog's re-reads.
type failingReader struct{ history.Reader }

func (r failingReader) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	if !q.Desc {
		return fmt.Errorf("disk on fire")
	}
	return r.Reader.Read(ctx, q, fn)
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
	first := e.ev.shards[0].cachedFor(id)
	e.commit("a", t0+1, 43)
	e.ev.Drain(context.Background())
	if e.ev.shards[0].cachedFor(id) != first {
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
	second := e.ev.shards[0].cachedFor(id)
	if c := second; c == nil || c == first || c.text != expr {
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
	for _, c := range e.ev.shards[0].compiledAt {
		if c == second {
			t.Fatal("a deleted trigger stays in the cache")
		}
	}
}

// cachedFor is the parse cache's entry for trigger id, or nil.
func (sh *evalShard) cachedFor(id uint64) *compiled {
	if sh.cacheSnap == nil {
		return nil
	}
	i, ok := sh.cacheSnap.TriggerIndex(id)
	if !ok {
		return nil
	}
	return sh.compiledAt[i]
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

// Values committed by two goroutines (pipeline shards) while Run
// evaluates, through a queue so small that the shards go in and out of
// backlog mode: every value, each a flip, makes its event, in order, at
// its clock (run it with -race).
func TestEvaluatorRunBacklogConcurrent(t *testing.T) {
	e := newEvalEnvShards(t, 8, true, 2)
	keys := []string{"a", "b"}
	var ids []uint64
	for _, k := range keys {
		ids = append(ids, e.trigger(catalog.TriggerFields{Description: k, Expression: "last(/h1/" + k + ")>5"}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.ev.Run(ctx) }()
	const n = 300
	var wg sync.WaitGroup
	for g, k := range keys {
		item := e.cat.Snapshot().Lookup("h1", k).ID
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; {
				var batch []history.Sample
				for j := 0; j <= (i+g)%3 && i < n; j++ {
					batch = append(batch, history.Sample{ItemID: item, Clock: t0 + int64(i), Type: history.Float, F: float64(9 * ((i + 1) % 2))})
					i++
				}
				if err := e.hist.Write(context.Background(), batch); err != nil {
					t.Error(err)
					return
				}
				e.vc.Add(g, batch)
				e.ev.Commit(g, batch)
			}
		}()
	}
	wg.Wait()
	// Drain waits for Run's passes (one per shard at a time) and
	// evaluates what they left; then Run stops with nothing waiting.
	e.ev.Drain(context.Background())
	cancel()
	<-done
	if e.ev.backlogged.Load() == 0 {
		t.Log("no commit found a full queue this time")
	}
	for _, id := range ids {
		evs := e.store.Events(func(ev *event.Event) bool { return ev.ObjectID == id })
		if len(evs) != n {
			t.Fatalf("trigger %d: %d events, want %d", id, len(evs), n)
		}
		for i, ev := range evs {
			if want := uint8(event.ValueProblem) - uint8(i%2); ev.Clock != t0+int64(i) || ev.Value != want {
				t.Fatalf("trigger %d event %d: %+v, want value %d at %d", id, i, ev, want, t0+int64(i))
			}
		}
	}
}

// Four shards draining at once give every trigger its own result: 4,096
// triggers last(/h1/a)>N on one item, one value, through the value cache
// (run it with -race).
func TestEvaluatorLargePassParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	e := newEvalEnvShards(t, 0, true, 4)
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
// With min() over a second each evaluation reads the history once; a
// result that may make an event names the item's value, which for the
// value that caused the evaluation needs no read (queuedEval.known).
// With last() nothing is read at all.
func TestEvaluatorItemValuesOnlyForEvents(t *testing.T) {
	for _, c := range []struct {
		fn    string
		reads [3]int64
	}{{"min(/h1/a,1s)", [3]int64{1, 2, 3}}, {"last(/h1/a)", [3]int64{0, 0, 0}}} {
		t.Run(c.fn, func(t *testing.T) {
			e := newEvalEnv(t, 0)
			id := e.trigger(catalog.TriggerFields{Description: "a is {ITEM.VALUE}", Expression: c.fn + ">10"})
			e.commit("a", t0, 1)
			e.ev.Drain(context.Background())
			if n := e.reads.Load(); n != c.reads[0] {
				t.Fatalf("OK on an OK trigger: %d reads, want %d", n, c.reads[0])
			}
			e.commit("a", t0+1, 42)
			e.ev.Drain(context.Background())
			if n := e.reads.Load(); n != c.reads[1] {
				t.Fatalf("PROBLEM: %d reads in all, want %d", n, c.reads[1])
			}
			if open := e.open(id); len(open) != 1 || open[0].Name != "a is 42" {
				t.Fatalf("open problems %+v", open)
			}
			e.commit("a", t0+2, 2)
			e.ev.Drain(context.Background())
			if n := e.reads.Load(); n != c.reads[2] {
				t.Fatalf("the recovery: %d reads in all, want %d", n, c.reads[2])
			}
		})
	}
}

// {ITEM.VALUE} is the value as of the evaluated second, not the item's
// newest: a pass that runs after 0, 42, 0 were committed names its
// problem after the 42 that raised it.
func TestEvaluatorItemValueAsOfEvaluation(t *testing.T) {
	e := newEvalEnv(t, 0)
	id := e.trigger(catalog.TriggerFields{Description: "a is {ITEM.VALUE}", Expression: "last(/h1/a)>10"})
	e.commit("a", t0, 0)
	e.commit("a", t0+1, 42)
	e.commit("a", t0+2, 0)
	e.ev.Drain(context.Background())
	evs := e.store.Events(func(ev *event.Event) bool { return ev.ObjectID == id && ev.Value == event.ValueProblem })
	if len(evs) != 1 || evs[0].Name != "a is 42" || evs[0].Clock != t0+1 {
		t.Fatalf("problem events %+v, want one named after 42 at %d", evs, t0+1)
	}
	assertFlip(t, e, id, t0+1, t0+2)
}

// An evaluation of a last()/comparison trigger through the value cache
// allocates nothing: the shard's source and its read buffer are reused.
func TestEvaluatorLastAllocatesNothing(t *testing.T) {
	e := newEvalEnvCache(t, 0, true)
	id := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>10 and avg(/h1/a,5m)<100"})
	e.commit("a", t0, 5)
	e.ev.Drain(context.Background()) // parsed, and the cache loaded
	snap := e.cat.Snapshot()
	now := time.Unix(t0, 0)
	allocs := testing.AllocsPerRun(100, func() {
		if r, ok := e.ev.evaluate(context.Background(), snap, id, now); !ok || r.Value != OK {
			t.Fatalf("result %+v", r)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per evaluation, want 0", allocs)
	}
}

// A trigger's resolved item queries are kept per snapshot: disabling the
// item makes the next evaluation unknown, enabling it again evaluates.
func TestEvaluatorItemMemoFollowsCatalog(t *testing.T) {
	e := newEvalEnv(t, 0)
	id := e.trigger(catalog.TriggerFields{Description: "a", Expression: "last(/h1/a)>10"})
	e.commit("a", t0, 42)
	e.ev.Drain(context.Background())
	if rt := e.m.Runtime(id); rt.Value != event.ValueProblem {
		t.Fatalf("runtime %+v", rt)
	}
	aid := e.cat.Snapshot().Lookup("h1", "a").ID
	setStatus := func(status string) {
		t.Helper()
		if _, err := e.cat.Edit(context.Background(), func(ed *catalog.Edit) error {
			return ed.UpdateItems([]catalog.ItemUpdate{{ID: aid, Status: &status}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	setStatus("disabled")
	r, _ := e.ev.evaluate(context.Background(), e.cat.Snapshot(), id, time.Unix(t0, 0))
	if r.Value != Unknown || !strings.Contains(r.Error, "disabled") {
		t.Fatalf("with the item disabled: %+v", r)
	}
	setStatus("enabled")
	if r, _ := e.ev.evaluate(context.Background(), e.cat.Snapshot(), id, time.Unix(t0, 0)); r.Value != Problem {
		t.Fatalf("with the item enabled again: %+v", r)
	}
}

// sortByTrigger orders by trigger ID and keeps commit order within a
// trigger, as a stable comparison sort does, for ID ranges needing one to
// several radix passes; seekTrigger finds every ID from any start before it.
func TestSortByTriggerAndSeek(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, span := range []uint64{1, 7, 2000, 1 << 20, 1 << 40, math.MaxUint64 - 5} {
		base := rng.Uint64N(math.MaxUint64 - span)
		q := make([]queuedEval, 3000)
		for i := range q {
			q[i] = queuedEval{trigger: base + rng.Uint64N(span), ts: int64(i)}
		}
		want := slices.Clone(q)
		slices.SortStableFunc(want, func(a, b queuedEval) int { return cmp.Compare(a.trigger, b.trigger) })
		got, spare := sortByTrigger(slices.Clone(q), nil)
		if !slices.Equal(got, want) {
			t.Fatalf("span %d: not the stable order", span)
		}
		if len(spare) != len(q) && len(spare) != 0 {
			t.Fatalf("span %d: spare of %d", span, len(spare))
		}
		// The snapshot side: unique sorted IDs, every third one present.
		var trigs []catalog.Trigger
		for i, e := range want {
			if (i == 0 || e.trigger != want[i-1].trigger) && i%3 == 0 {
				trigs = append(trigs, catalog.Trigger{ID: e.trigger})
			}
		}
		pos := 0
		for _, e := range want {
			pos = seekTrigger(trigs, pos, e.trigger)
			wantPos, found := slices.BinarySearchFunc(trigs, e.trigger, func(t catalog.Trigger, id uint64) int { return cmp.Compare(t.ID, id) })
			if pos != wantPos {
				t.Fatalf("span %d: seek %d at %d, want %d (found %v)", span, e.trigger, pos, wantPos, found)
			}
		}
	}
}

// TestEvaluatorEventName: a trigger with an event name names its events
// from it, macros expanded ({ITEM.VALUE} per event, {HOST.*} once per
// snapshot), while trigger names stay what {TRIGGER.NAME} shows.
func TestEvaluatorEventName(t *testing.T) {
	e := newEvalEnv(t, 0)
	perEvent := e.trigger(catalog.TriggerFields{Description: "a high", EventName: "a is {ITEM.VALUE} on {HOST.HOST} ({TRIGGER.NAME})", Expression: "last(/h1/a)>10"})
	constant := e.trigger(catalog.TriggerFields{Description: "b high", EventName: "b over 10 on {HOST.NAME}", Expression: "last(/h1/b)>10"})
	e.commit("a", t0, 42)
	e.commit("b", t0, 11)
	e.ev.Drain(context.Background())
	if open := e.open(perEvent); len(open) != 1 || open[0].Name != "a is 42 on h1 (a high)" {
		t.Fatalf("problem of %d: %+v", perEvent, open)
	}
	if open := e.open(constant); len(open) != 1 || open[0].Name != "b over 10 on Host one" {
		t.Fatalf("problem of %d: %+v", constant, open)
	}
	e.commit("b", t0+1, 1)
	e.ev.Drain(context.Background())
	evs := e.store.Events(func(ev *event.Event) bool { return ev.ObjectID == constant })
	if len(evs) != 2 || evs[1].Value != event.ValueOK || evs[1].Name != "b over 10 on Host one" {
		t.Fatalf("events of %d: %+v", constant, evs)
	}
}
