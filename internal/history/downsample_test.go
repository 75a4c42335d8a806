package history_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

func TestNewGrid(t *testing.T) {
	f := func(from, till int64, n int, want history.Grid) {
		t.Helper()
		if got := history.NewGrid(from, till, n); got != want {
			t.Fatalf("NewGrid(%d, %d, %d) = %+v, want %+v", from, till, n, got, want)
		}
	}
	f(1000, 1999, 10, history.Grid{Start: 1000, Width: 100, N: 10, End: 2000})
	f(1000, 1999, 3, history.Grid{Start: 1000, Width: 334, N: 3, End: 2000}) // last bucket 332 s
	f(1000, 1999, 1000, history.Grid{Start: 1000, Width: 1, N: 1000, End: 2000})
	f(1000, 1999, 5000, history.Grid{Start: 1000, Width: 1, N: 1000, End: 2000}) // fewer than asked
	f(1000, 1000, 10, history.Grid{Start: 1000, Width: 1, N: 1, End: 1001})
	f(0, 999, 0, history.Grid{Start: 0, Width: 1000, N: 1, End: 1000}) // n clamped to 1
	f(0, 1<<33, 1<<30, history.Grid{Start: 0, Width: 85900, N: 100000, End: 1<<33 + 1})
	f(1999, 1000, 10, history.Grid{Start: 1999, Width: 1, N: 0, End: 1999}) // reversed: empty
	// ceil(1001/7) = 143, and 1001/143 = 7 exactly.
	f(0, 1000, 7, history.Grid{Start: 0, Width: 143, N: 7, End: 1001})
	// 1000 s over 7 buckets: width 143, 7 buckets (the last 142 s).
	f(0, 999, 7, history.Grid{Start: 0, Width: 143, N: 7, End: 1000})
	// Extreme bounds are clamped rather than overflowing.
	g := history.NewGrid(math.MinInt64, math.MaxInt64, 10)
	if g.N != 10 || g.Width <= 0 || g.End <= g.Start {
		t.Fatalf("extreme grid %+v", g)
	}
}

// checkGrid checks the grid invariants for one second sec: the grid has
// at most n buckets, they tile [from, till] without gaps, and sec falls
// in exactly the bucket whose bounds hold it.
func checkGrid(t *testing.T, from, till int64, n int, sec int64) {
	g := history.NewGrid(from, till, n)
	if g.N > max(min(n, history.MaxBuckets), 1) || g.N < 0 || g.Width < 1 {
		t.Fatalf("NewGrid(%d, %d, %d) = %+v: bad size", from, till, n, g)
	}
	if g.N == 0 {
		if g.Index(sec) != -1 {
			t.Fatalf("empty grid %+v places %d", g, sec)
		}
		return
	}
	if s, _ := g.Bounds(0); s != g.Start {
		t.Fatalf("%+v: first bucket starts at %d", g, s)
	}
	if _, e := g.Bounds(g.N - 1); e != g.End {
		t.Fatalf("%+v: last bucket ends at %d, want %d", g, e, g.End)
	}
	if s, _ := g.Bounds(g.N - 1); s >= g.End {
		t.Fatalf("%+v: last bucket is empty", g)
	}
	i := g.Index(sec)
	inside := sec >= g.Start && sec < g.End
	if inside != (i >= 0) {
		t.Fatalf("%+v: Index(%d) = %d, inside = %v", g, sec, i, inside)
	}
	if i >= 0 {
		if i >= g.N {
			t.Fatalf("%+v: Index(%d) = %d ≥ N", g, sec, i)
		}
		s, e := g.Bounds(i)
		if sec < s || sec >= e {
			t.Fatalf("%+v: Index(%d) = %d with bounds [%d, %d)", g, sec, i, s, e)
		}
	}
}

func TestGridProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := 0; k < 20000; k++ {
		from := r.Int64N(1<<32) - 1<<31
		till := from + r.Int64N(1<<(1+r.IntN(33))) - 10
		n := 1 + r.IntN(1<<(1+r.IntN(17)))
		sec := from + r.Int64N(till-from+30) - 10
		checkGrid(t, from, till, n, sec)
	}
}

// FuzzDownsampleGrid checks the grid invariants, and that an accumulator
// fed values at every bucket edge counts each exactly once.
func FuzzDownsampleGrid(f *testing.F) {
	f.Add(int64(1000), int64(1999), 10, int64(1099))
	f.Add(int64(0), int64(999), 7, int64(998))
	f.Add(int64(-5), int64(5), 3, int64(0))
	f.Add(int64(1), int64(1<<40), 100000, int64(1<<39))
	f.Fuzz(func(t *testing.T, from, till int64, n int, sec int64) {
		checkGrid(t, from, till, n, sec)
		g := history.NewGrid(from, till, n)
		if g.N == 0 || g.N > 2000 {
			return
		}
		a := history.NewAccumulator(g)
		var ts []int64
		var vs []float64
		for i := 0; i < g.N; i++ {
			s, e := g.Bounds(i)
			ts = append(ts, s*1e9, s*1e9+1, e*1e9-1)
			vs = append(vs, 1, 2, 3)
		}
		// Strictly ascending except where a bucket is one second wide and
		// the three points meet; keep only ascending ones.
		k := 0
		for i := range ts {
			if k == 0 || ts[i] > ts[k-1] {
				ts[k], vs[k] = ts[i], vs[i]
				k++
			}
		}
		ts, vs = ts[:k], vs[:k]
		a.AddFloats(ts, vs)
		a.AddFloat(g.Start*1e9-1, 100) // before the grid
		a.AddFloat(g.End*1e9, 100)     // after it
		b := a.Buckets()
		if len(b) != g.N {
			t.Fatalf("%+v: %d buckets, want %d", g, len(b), g.N)
		}
		total := int64(0)
		for i := range b {
			if s, _ := g.Bounds(i); b[i].Clock != s {
				t.Fatalf("%+v: bucket %d at %d, want %d", g, i, b[i].Clock, s)
			}
			if b[i].Max == 100 {
				t.Fatalf("%+v: a value outside the grid was counted", g)
			}
			total += b[i].Count
		}
		if total != int64(len(ts)) {
			t.Fatalf("%+v: %d values counted, %d added", g, total, len(ts))
		}
	})
}

// TestAccumulatorOrder feeds the same values in time order and shuffled
// (one value per call, the slow path) and through the batch methods: the
// buckets must agree.
func TestAccumulatorOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	g := history.NewGrid(1000, 4999, 37)
	const n = 5000
	ts := make([]int64, n)
	fs := make([]float64, n)
	fb := make([]uint64, n)
	us := make([]uint64, n)
	for i := range ts {
		ts[i] = 990e9 + int64(i)*811_000_000 // some before and after the grid
		fs[i] = math.Round(r.NormFloat64()*1e4) / 100
		fb[i] = math.Float64bits(fs[i])
		us[i] = r.Uint64()
	}
	batchF := history.NewAccumulator(g)
	batchF.AddFloats(ts[:n/2], fs[:n/2])
	batchF.AddFloats(ts[n/2:], fs[n/2:])
	bitsF := history.NewAccumulator(g)
	bitsF.AddFloatBits(ts, fb)
	batchU := history.NewAccumulator(g)
	batchU.AddUints(ts, us)
	oneF, oneU := history.NewAccumulator(g), history.NewAccumulator(g)
	for _, i := range r.Perm(n) {
		oneF.AddFloat(ts[i], fs[i])
		oneU.AddUint(ts[i], us[i])
	}
	approx := cmp.Comparer(func(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) })
	if d := cmp.Diff(batchF.Buckets(), bitsF.Buckets()); d != "" {
		t.Fatalf("AddFloats vs AddFloatBits (-+):\n%s", d)
	}
	if d := cmp.Diff(batchF.Buckets(), oneF.Buckets(), approx); d != "" {
		t.Fatalf("floats in order vs shuffled (-+):\n%s", d)
	}
	if d := cmp.Diff(batchU.Buckets(), oneU.Buckets()); d != "" {
		t.Fatalf("uints in order vs shuffled (-+):\n%s", d)
	}
	if got := len(batchF.Buckets()); got != 37 {
		t.Fatalf("%d buckets, want 37", got)
	}
}

func TestDataRange(t *testing.T) {
	s := memstore.New()
	ctx := context.Background()
	s.Write(ctx, []history.Sample{
		{ItemID: 1, Clock: 100, Type: history.Float}, {ItemID: 1, Clock: 150, Type: history.Float}, {ItemID: 1, Clock: 200, NS: 5, Type: history.Float},
	})
	f := func(from, till, first, last int64, ok bool) {
		t.Helper()
		a, z, found, err := history.DataRange(ctx, s, 1, from, till)
		if err != nil || found != ok || a != first || z != last {
			t.Fatalf("DataRange(%d, %d) = %d, %d, %v, %v; want %d, %d, %v", from, till, a, z, found, err, first, last, ok)
		}
	}
	f(0, 1<<31, 100, 200, true)
	f(101, 1<<31, 150, 200, true)
	f(0, 199, 100, 150, true)
	f(151, 199, 0, 0, false)
}

// readerOnly hides a store's Downsampler, so that Downsample falls back.
type readerOnly struct{ history.Reader }

func TestDownsampleFallsBackToRead(t *testing.T) {
	s := memstore.New()
	ctx := context.Background()
	var in []history.Sample
	for i := 0; i < 100; i++ {
		in = append(in, history.Sample{ItemID: 1, Clock: int64(i), Type: history.Float, F: float64(i)})
	}
	s.Write(ctx, in)
	q := history.DownsampleQuery{ItemID: 1, From: 0, Till: 99, Buckets: 4}
	want, err := s.Downsample(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := history.Downsample(ctx, readerOnly{s}, q)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-store +generic):\n%s", d)
	}
	if len(got) != 4 || got[1].Clock != 25 || got[1].Min != 25 || got[1].Max != 49 || got[1].Avg() != 37 {
		t.Fatalf("buckets %+v", got)
	}
}

// go test -run '^$' -bench 'Accumulator' -count 6 ./internal/history/
//
// BenchmarkAccumulator folds 1M ascending float values, one a second,
// into 1,000 buckets in calls of 2,048 values (a day block's chunk). The
// 16 MB input is not cache-resident, unlike a just-decoded chunk; with a
// hot chunk the fold runs at the latency of the float sum (one add per
// value, kept sequential so that results do not depend on how a store
// splits values into calls).
func BenchmarkAccumulator(b *testing.B) {
	const n, chunk = 1_000_000, 2048
	r := rand.New(rand.NewPCG(5, 6))
	ts := make([]int64, n)
	fs := make([]float64, n)
	level := 20.0
	for i := range ts {
		ts[i] = (1_600_000_000 + int64(i)) * 1e9
		level += (r.Float64() - 0.5) / 10
		fs[i] = math.Round(level*100) / 100
	}
	g := history.NewGrid(1_600_000_000, 1_600_000_000+n-1, 1000)
	b.ReportAllocs()
	b.SetBytes(16 * n)
	for b.Loop() {
		a := history.NewAccumulator(g)
		for i := 0; i < n; i += chunk {
			j := min(i+chunk, n)
			a.AddFloats(ts[i:j], fs[i:j])
		}
		if len(a.Buckets()) != 1000 {
			b.Fatal("buckets")
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/n, "ns/value")
}
