package trigger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/history/valuecache"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// BenchmarkProcessStorm: one batch of results turns 10,000 triggers to
// PROBLEM, the next back to OK, alternately: each op is one such batch
// (10,000 events made with macro-expanded names and tags, one commit with
// an fsync under SyncBatch). events/s is per op.
//
//	go test -run '^$' -bench BenchmarkProcessStorm -benchtime 20x -count 6 ./internal/trigger/
func BenchmarkProcessStorm(b *testing.B) {
	const n = 10_000
	dir := b.TempDir()
	cat := benchCatalog(b, dir, 10, n/10, "", func(h, i int) catalog.TriggerSpec {
		return catalog.TriggerSpec{Name: fmt.Sprintf("Value %d too high on {HOST.NAME}: {ITEM.VALUE}", i),
			Expression: fmt.Sprintf("last(/host-%d/k[%d])>1", h, i), Priority: "HIGH",
			Tags: []catalog.TagSpec{{Tag: "host", Value: "{HOST.HOST}"}}}
	})
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncBatch})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := New(Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	snap := cat.Snapshot()
	trigs := snap.Triggers()
	rs := make([]Result, len(trigs))
	vals := []string{"7"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		v := Problem
		if i%2 == 1 {
			v = OK
		}
		for j := range trigs {
			rs[j] = Result{TriggerID: trigs[j].ID, Value: v, Clock: int64(i), ItemValues: vals}
		}
		out, err := m.Process(snap, rs)
		if err != nil {
			b.Fatal(err)
		}
		if out.Problems+out.Resolved != n {
			b.Fatalf("%+v", out)
		}
	}
	b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "events/s")
}

// BenchmarkEvaluateStorm: one committed batch of 100,000 values, one per
// item, touches 100,000 triggers (last(/h/k[i])>10); each op is the commit
// hooks (the value cache's Add, the evaluator's queueing) plus one pass
// that evaluates all of them through the value cache (in front of
// memstore, as the server wires it; warm from the first op on) and hands
// the results to Process: alternately
// every trigger turns PROBLEM and back to OK, so each op also makes
// 100,000 events in one commit (fsync under SyncBatch). evals/s is per op.
//
//	go test -run '^$' -bench BenchmarkEvaluateStorm -benchtime 4x ./internal/trigger/
func BenchmarkEvaluateStorm(b *testing.B) {
	const n, hosts = 100_000, 10
	dir := b.TempDir()
	cat := benchCatalog(b, dir, hosts, n/hosts, "float", func(h, i int) catalog.TriggerSpec {
		return catalog.TriggerSpec{Name: fmt.Sprintf("Value %d too high on {HOST.NAME}", i),
			Expression: fmt.Sprintf("last(/host-%d/k[%d])>10", h, i), Priority: "HIGH"}
	})
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncBatch})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := New(Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	hist := memstore.New()
	vc, err := valuecache.New(valuecache.Options{Store: hist})
	if err != nil {
		b.Fatal(err)
	}
	ev, err := NewEvaluator(EvaluatorOptions{Machine: m, Snapshot: cat.Snapshot, Store: hist, Values: vc, Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	snap := cat.Snapshot()
	var batch []history.Sample
	for _, h := range snap.Hosts() {
		for _, it := range h.Items() {
			batch = append(batch, history.Sample{ItemID: it.ID, Type: history.Float})
		}
	}
	if len(batch) != n || len(snap.Triggers()) != n {
		b.Fatalf("%d items, %d triggers", len(batch), len(snap.Triggers()))
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		v := 42.0
		if i%2 == 1 {
			v = 1
		}
		for j := range batch {
			batch[j].Clock, batch[j].F = 1_700_000_000+int64(i), v
		}
		b.StopTimer()
		if err := hist.Write(ctx, batch); err != nil { // the pipeline's write, not measured
			b.Fatal(err)
		}
		before := st.Stats().Events
		b.StartTimer()
		vc.Add(0, batch)
		ev.Commit(0, batch)
		ev.Drain(ctx)
		b.StopTimer()
		if got := st.Stats().Events - before; got != n {
			b.Fatalf("op %d made %d events, want %d", i, got, n)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "evals/s")
}

// BenchmarkFunctionRead evaluates one trigger per op, `last(/h/k)>0` or
// `avg(/h/k,5m)>0`, over 100 items with 10 minutes of values at one a
// second in the embedded history engine: reading the store for every
// evaluation (source=store, how evaluation read before the value cache)
// against reading through the value cache (source=cache, warm: every
// item read once before timing).
//
//	go test -run '^$' -bench BenchmarkFunctionRead -benchtime 20000x ./internal/trigger/
func BenchmarkFunctionRead(b *testing.B) {
	const items, span = 100, 600
	dir := b.TempDir()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: ItemRefs})
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	hs := catalog.HostSpec{Host: "h", Groups: []string{"G"}}
	for i := range items {
		hs.Items = append(hs.Items, catalog.ItemSpec{Key: fmt.Sprintf("k[%d]", i), ValueType: "float"})
		hs.Triggers = append(hs.Triggers,
			catalog.TriggerSpec{Name: fmt.Sprintf("last %d", i), Expression: fmt.Sprintf("last(/h/k[%d])>0", i)},
			catalog.TriggerSpec{Name: fmt.Sprintf("avg %d", i), Expression: fmt.Sprintf("avg(/h/k[%d],5m)>0", i)})
	}
	if _, err := cat.Apply(context.Background(), catalog.Spec{Hosts: []catalog.HostSpec{hs}}); err != nil {
		b.Fatal(err)
	}
	store, err := engine.Open(engine.Options{Dir: filepath.Join(dir, "history"), Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	snap := cat.Snapshot()
	const t0 = 1_700_000_000
	for s := range int64(span) {
		var batch []history.Sample
		for _, it := range snap.Host("h").Items() {
			batch = append(batch, history.Sample{ItemID: it.ID, Clock: t0 + s, Type: history.Float, F: float64(s)})
		}
		if err := store.Write(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	byFn := map[string][]uint64{}
	for _, t := range snap.Triggers() {
		fn := t.Expression[:strings.IndexByte(t.Expression, '(')]
		byFn[fn] = append(byFn[fn], t.ID)
	}
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := New(Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Unix(t0+span-1, 0)
	ctx := context.Background()
	for _, fn := range []string{"last", "avg"} {
		for _, source := range []string{"store", "cache"} {
			b.Run("fn="+fn+"/source="+source, func(b *testing.B) {
				opts := EvaluatorOptions{Machine: m, Snapshot: cat.Snapshot, Store: store, Location: time.UTC}
				var vc *valuecache.Cache
				if source == "cache" {
					if vc, err = valuecache.New(valuecache.Options{Store: store}); err != nil {
						b.Fatal(err)
					}
					opts.Values = vc
				}
				ev, err := NewEvaluator(opts)
				if err != nil {
					b.Fatal(err)
				}
				ids := byFn[fn]
				for _, id := range ids { // warm: parsed, and cached when cached
					if r, _ := ev.evaluate(ctx, snap, id, now); r.Value != Problem {
						b.Fatalf("trigger %d: %+v", id, r)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					if r, _ := ev.evaluate(ctx, snap, ids[i%len(ids)], now); r.Value != Problem {
						b.Fatalf("trigger %d: %+v", ids[i%len(ids)], r)
					}
				}
				b.StopTimer()
				if vc != nil {
					if s := vc.Stats(); s.Misses != uint64(len(ids)) || s.Hits < uint64(b.N) {
						b.Fatalf("value cache %+v: want %d misses (the warm-up) and every timed read a hit", s, len(ids))
					}
				}
			})
		}
	}
}

// BenchmarkReconcile: the check the server makes after every catalog
// change, with 100,000 open problems (10,000 "multiple" triggers with 10
// each) and no trigger deleted, during a storm.
//
//	go test -run '^$' -bench BenchmarkReconcile -benchtime 20x ./internal/trigger/
func BenchmarkReconcile(b *testing.B) {
	const n, per = 10_000, 10
	dir := b.TempDir()
	cat := benchCatalog(b, dir, 10, n/10, "", func(h, i int) catalog.TriggerSpec {
		return catalog.TriggerSpec{Name: fmt.Sprintf("t %d", i),
			Expression: fmt.Sprintf("last(/host-%d/k[%d])>1", h, i), Type: "MULTIPLE"}
	})
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := New(Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	snap := cat.Snapshot()
	trigs := snap.Triggers()
	rs := make([]Result, len(trigs))
	for round := range per {
		for j := range trigs {
			rs[j] = Result{TriggerID: trigs[j].ID, Value: Problem, Clock: int64(round)}
		}
		if _, err := m.Process(snap, rs); err != nil {
			b.Fatal(err)
		}
	}
	if got := st.OpenCount(); got != n*per {
		b.Fatalf("%d open problems, want %d", got, n*per)
	}
	b.ReportAllocs()
	for b.Loop() {
		if k, err := m.Reconcile(snap); err != nil || k != 0 {
			b.Fatalf("resolved %d (%v), want 0", k, err)
		}
	}
}

// BenchmarkEvaluatePass is the steady-state value pass: PEREGRINE_BENCH_TRIGGERS
// triggers `last(/host-H/k[i])>10` (1,000,000 by default; hosts of 1,000
// items), one value of each item committed per op, every value 0 so no
// trigger changes (most evaluations under load) and Process stores
// nothing. shards=N is the evaluator's shard count with GOMAXPROCS=N:
// evals/s/core is evaluations per second divided by N.
//
//	go test -run '^$' -bench BenchmarkEvaluatePass -benchtime 3x ./internal/trigger/
func BenchmarkEvaluatePass(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("PEREGRINE_BENCH_TRIGGERS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 || n%1000 != 0 {
			b.Fatalf("PEREGRINE_BENCH_TRIGGERS=%q: want a multiple of 1000", v)
		}
	}
	const perHost = 1000
	dir := b.TempDir()
	cat := benchCatalog(b, dir, n/perHost, perHost, "float", func(h, i int) catalog.TriggerSpec {
		return catalog.TriggerSpec{Name: fmt.Sprintf("Value %d too high", i), Expression: fmt.Sprintf("last(/host-%d/k[%d])>10", h, i)}
	})
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncBatch})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := New(Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	hist := memstore.New()
	vc, err := valuecache.New(valuecache.Options{Store: hist, MaxBytes: 4 << 30})
	if err != nil {
		b.Fatal(err)
	}
	snap := cat.Snapshot()
	var batch []history.Sample
	for _, h := range snap.Hosts() {
		for _, it := range h.Items() {
			batch = append(batch, history.Sample{ItemID: it.ID, Type: history.Float})
		}
	}
	if len(batch) != n {
		b.Fatalf("%d items", len(batch))
	}
	ctx := context.Background()
	clock := int64(1_700_000_000)
	commit := func(ev *Evaluator) {
		clock++
		for j := range batch {
			batch[j].Clock = clock
		}
		if err := hist.Write(ctx, batch); err != nil {
			b.Fatal(err)
		}
		vc.Add(0, batch)
		ev.Commit(0, batch)
	}
	for _, shards := range []int{1, 2} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(shards))
			ev, err := NewEvaluator(EvaluatorOptions{Machine: m, Snapshot: cat.Snapshot, Store: hist, Values: vc, Location: time.UTC, Shards: shards})
			if err != nil {
				b.Fatal(err)
			}
			commit(ev) // warm: parsed, the value cache filled
			ev.Drain(ctx)
			before := ev.evaluated.Load()
			var d, cpu time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				commit(ev) // the pipeline's write and hooks, not measured
				b.StartTimer()
				t, c := time.Now(), processCPU()
				ev.Drain(ctx)
				d += time.Since(t)
				cpu += processCPU() - c
			}
			b.StopTimer()
			if got := ev.evaluated.Load() - before; got != uint64(n*b.N) {
				b.Fatalf("%d evaluations, want %d", got, n*b.N)
			}
			// The process's CPU time per evaluation (GC included): on a
			// shared machine less noisy than the wall clock.
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*b.N), "cpu-ns/eval")
			b.ReportMetric(float64(n*b.N)/d.Seconds(), "evals/s")
			b.ReportMetric(float64(n*b.N)/d.Seconds()/float64(shards), "evals/s/core")
		})
	}
}

// BenchmarkEvaluateBackfill is a backfill (a proxy catching up): 10,000
// triggers `last(/host-H/k[i])>10` (PEREGRINE_BENCH_TRIGGERS), and per op
// 64 values of each item, one per second, committed before one Drain, as
// when values arrive faster than evaluation. Every value is evaluated
// (before issue 30 a trigger kept 16 times and merged the rest, so the
// evaluations counted were 16 per item and op). queue: the queue holds
// the burst; backlog: max_pending 1024, so nearly all of it is re-read
// from the history store (eval_backlog.go). values/s counts committed
// values per second of Drain.
//
//	go test -run '^$' -bench BenchmarkEvaluateBackfill -benchtime 3x ./internal/trigger/
func BenchmarkEvaluateBackfill(b *testing.B) {
	n := 10_000
	if v := os.Getenv("PEREGRINE_BENCH_TRIGGERS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 || n%1000 != 0 {
			b.Fatalf("PEREGRINE_BENCH_TRIGGERS=%q: want a multiple of 1000", v)
		}
	}
	const perHost, burst = 1000, 64
	dir := b.TempDir()
	cat := benchCatalog(b, dir, n/perHost, perHost, "float", func(h, i int) catalog.TriggerSpec {
		return catalog.TriggerSpec{Name: fmt.Sprintf("Value %d too high", i), Expression: fmt.Sprintf("last(/host-%d/k[%d])>10", h, i)}
	})
	st, err := event.Open(event.Options{Dir: filepath.Join(dir, "events"), Sync: wal.SyncBatch})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := New(Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	snap := cat.Snapshot()
	var items []uint64
	for _, h := range snap.Hosts() {
		for _, it := range h.Items() {
			items = append(items, it.ID)
		}
	}
	ctx := context.Background()
	for _, mode := range []struct {
		name       string
		maxPending int
	}{{"queue", 0}, {"backlog", 1024}} {
		b.Run(mode.name, func(b *testing.B) {
			hist := memstore.New()
			vc, err := valuecache.New(valuecache.Options{Store: hist, MaxBytes: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			ev, err := NewEvaluator(EvaluatorOptions{Machine: m, Snapshot: cat.Snapshot, Store: hist, Values: vc, Location: time.UTC, Shards: 1, MaxPending: mode.maxPending})
			if err != nil {
				b.Fatal(err)
			}
			clock := int64(1_700_000_000)
			batch := make([]history.Sample, 0, 1000)
			commit := func() {
				// Pipeline-sized batches, item by item as a proxy sends
				// its backlog.
				for _, id := range items {
					for k := range burst {
						batch = append(batch, history.Sample{ItemID: id, Clock: clock + int64(k), Type: history.Float})
						if len(batch) == cap(batch) {
							if err := hist.Write(ctx, batch); err != nil {
								b.Fatal(err)
							}
							vc.Add(0, batch)
							ev.Commit(0, batch)
							batch = batch[:0]
						}
					}
				}
				clock += burst
			}
			commit() // warm: parsed, the value cache filled
			ev.Drain(ctx)
			var d time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				commit()
				b.StartTimer()
				t := time.Now()
				ev.Drain(ctx)
				d += time.Since(t)
			}
			b.StopTimer()
			b.ReportMetric(float64(n*burst*b.N)/d.Seconds(), "values/s")
		})
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCatalog opens a catalog in dir with hosts "host-0".. of perHost
// items "k[0]".. of valueType ("": the default), item i of host h
// carrying the trigger trig(h, i). Hosts are applied 100 at a time: one
// spec of a million items needs several GB. The catalog is closed when
// the benchmark ends.
func benchCatalog(b *testing.B, dir string, hosts, perHost int, valueType string, trig func(h, i int) catalog.TriggerSpec) *catalog.Catalog {
	b.Helper()
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: ItemRefs})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cat.Close() })
	for lo := 0; lo < hosts; lo += 100 {
		spec := catalog.Spec{}
		for h := lo; h < min(lo+100, hosts); h++ {
			hs := catalog.HostSpec{Host: fmt.Sprintf("host-%d", h), Groups: []string{"G"}}
			for i := range perHost {
				hs.Items = append(hs.Items, catalog.ItemSpec{Key: fmt.Sprintf("k[%d]", i), ValueType: valueType})
				hs.Triggers = append(hs.Triggers, trig(h, i))
			}
			spec.Hosts = append(spec.Hosts, hs)
		}
		if _, err := cat.Apply(context.Background(), spec); err != nil {
			b.Fatal(err)
		}
	}
	return cat
}
