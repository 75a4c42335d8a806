package historytest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Flusher is implemented by stores that move data from memory into files
// (the engine). The downsample contract calls it between writes so that
// reads cross head, blocks and late values; for other stores it is
// skipped.
type Flusher interface{ Flush() error }

func flush(t *testing.T, s history.Store) {
	t.Helper()
	if f, ok := s.(Flusher); ok {
		if err := f.Flush(); err != nil {
			t.Fatalf("Flush: %v", err)
		}
	}
}

// model is what a store must hold after a sequence of writes: the last
// value written per (item, timestamp).
type model map[uint64]map[int64]history.Sample

func (m model) write(v []history.Sample) {
	for _, s := range v {
		if m[s.ItemID] == nil {
			m[s.ItemID] = map[int64]history.Sample{}
		}
		m[s.ItemID][s.Clock*1e9+int64(s.NS)] = s
	}
}

// refBucket is a reference bucket with its exact mean and the mean of
// the values' magnitudes, which scales the rounding error a float sum may
// have (a mean near 0 of large values has no small relative error).
type refBucket struct {
	history.Bucket
	avg, absAvg float64
}

// refBuckets is the naive reference for history.Downsample, written
// without history.Grid or history.Accumulator: whole-second buckets of
// width ceil((till-from+1)/n) from from, the last one cut at till, empty
// ones omitted, the mean from an exact (big) sum. vals may be in any
// order and hold other items' values, which are skipped.
func refBuckets(vals []history.Sample, item uint64, from, till int64, n int) []refBucket {
	if till < from {
		return nil
	}
	span := till - from + 1
	w := (span + int64(n) - 1) / int64(n)
	type agg struct {
		b      history.Bucket
		sum    *big.Float
		sumAbs float64
	}
	by := map[int64]*agg{}
	for _, v := range vals {
		if v.ItemID != item || v.Clock < from || v.Clock > till || !v.Type.Numeric() {
			continue
		}
		start := from + (v.Clock-from)/w*w
		a := by[start]
		if a == nil {
			a = &agg{b: history.Bucket{Clock: start, Type: v.Type}, sum: new(big.Float).SetPrec(256)}
			by[start] = a
		}
		f := v.F
		if v.Type == history.Uint {
			f = float64(v.U)
			if a.b.Count == 0 || v.U < a.b.MinU {
				a.b.MinU = v.U
			}
			if a.b.Count == 0 || v.U > a.b.MaxU {
				a.b.MaxU = v.U
			}
			a.sum.Add(a.sum, new(big.Float).SetUint64(v.U))
		} else {
			a.sum.Add(a.sum, big.NewFloat(f))
		}
		a.sumAbs += math.Abs(f)
		if a.b.Count == 0 || f < a.b.Min {
			a.b.Min = f
		}
		if a.b.Count == 0 || f > a.b.Max {
			a.b.Max = f
		}
		a.b.Count++
	}
	out := make([]refBucket, 0, len(by))
	for _, a := range by {
		avg, _ := new(big.Float).Quo(a.sum, new(big.Float).SetInt64(a.b.Count)).Float64()
		out = append(out, refBucket{Bucket: a.b, avg: avg, absAvg: a.sumAbs / float64(a.b.Count)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Clock < out[j].Clock })
	return out
}

// diffBuckets compares a result with the reference: clocks, counts,
// types, minima and maxima exactly, means to 1e-12 of the values'
// magnitude (a store sums in float64, the reference exactly).
func diffBuckets(want []refBucket, got []history.Bucket) string {
	if len(want) != len(got) {
		wc := make([]int64, len(want))
		for i := range want {
			wc[i] = want[i].Clock
		}
		return fmt.Sprintf("%d buckets, want %d\n got %v\nwant %v", len(got), len(want), clocks(got), wc)
	}
	for i := range want {
		w, g := &want[i], &got[i]
		if w.Clock != g.Clock || w.Count != g.Count || w.Type != g.Type {
			return fmt.Sprintf("bucket %d: clock %d count %d type %d, want clock %d count %d type %d", i, g.Clock, g.Count, g.Type, w.Clock, w.Count, w.Type)
		}
		if w.Min != g.Min || w.Max != g.Max || w.MinU != g.MinU || w.MaxU != g.MaxU {
			return fmt.Sprintf("bucket %d (clock %d): min/max %v/%v (%d/%d), want %v/%v (%d/%d)", i, w.Clock, g.Min, g.Max, g.MinU, g.MaxU, w.Min, w.Max, w.MinU, w.MaxU)
		}
		if ga := g.Avg(); math.Abs(w.avg-ga) > 1e-12*w.absAvg {
			return fmt.Sprintf("bucket %d (clock %d): avg %v, want %v", i, w.Clock, ga, w.avg)
		}
	}
	return ""
}

func clocks(b []history.Bucket) []int64 {
	out := make([]int64, len(b))
	for i := range b {
		out[i] = b[i].Clock
	}
	return out
}

func (m model) all() []history.Sample {
	var out []history.Sample
	for _, vs := range m {
		for _, v := range vs {
			out = append(out, v)
		}
	}
	return out
}

// checkDownsample compares the store's Downsample (through the
// history.Downsample dispatcher) and the generic fold of Read with the
// reference over m.
func checkDownsample(t *testing.T, s history.Store, m model, q history.DownsampleQuery) {
	t.Helper()
	want := refBuckets(m.all(), q.ItemID, q.From, q.Till, q.Buckets)
	got, err := history.Downsample(context.Background(), s, q)
	if err != nil {
		t.Fatalf("Downsample(%+v): %v", q, err)
	}
	if d := diffBuckets(want, got); d != "" {
		t.Fatalf("Downsample(%+v): %s", q, d)
	}
	got, err = history.DownsampleRead(context.Background(), s, q)
	if err != nil {
		t.Fatalf("DownsampleRead(%+v): %v", q, err)
	}
	if d := diffBuckets(want, got); d != "" {
		t.Fatalf("DownsampleRead(%+v): %s", q, d)
	}
}

func runDownsample(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Run("Grid", func(t *testing.T) {
		s := open(t)
		m := model{}
		var in []history.Sample
		for i := 0; i < 1000; i++ {
			in = append(in, history.Sample{ItemID: 1, Clock: 1000 + int64(i), NS: int32(i * 7919 % 1e9), Type: history.Float, F: math.Sin(float64(i)) * 100})
		}
		write(t, s, in)
		m.write(in)
		for _, n := range []int{1, 2, 3, 7, 10, 999, 1000, 1001, 2000, history.MaxBuckets} {
			checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 1, From: 1000, Till: 1999, Buckets: n})
		}
		// Ranges wider and narrower than the data, unaligned.
		checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 1, From: 0, Till: 1 << 31, Buckets: 1000})
		checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 1, From: 1333, Till: 1777, Buckets: 10})
		checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 1, From: 1500, Till: 1500, Buckets: 10})
		// 10 buckets of 100 s, every one full.
		got, err := history.Downsample(ctx, s, history.DownsampleQuery{ItemID: 1, From: 1000, Till: 1999, Buckets: 10})
		if err != nil || len(got) != 10 || got[9].Clock != 1900 || got[9].Count != 100 {
			t.Fatalf("10 buckets over 1000 s: %v %+v", err, got)
		}
		// Nothing: no data in range, unknown item, reversed range.
		for _, q := range []history.DownsampleQuery{
			{ItemID: 1, From: 5000, Till: 6000, Buckets: 10},
			{ItemID: 1, From: 0, Till: 999, Buckets: 10},
			{ItemID: 2, From: 0, Till: 1 << 31, Buckets: 10},
			{ItemID: 1, From: 1999, Till: 1000, Buckets: 10},
		} {
			got, err := history.Downsample(ctx, s, q)
			if err != nil || len(got) != 0 {
				t.Fatalf("%+v: %v %+v, want no buckets", q, err, got)
			}
		}
		// Out-of-range bucket counts.
		for _, n := range []int{0, -1, history.MaxBuckets + 1} {
			q := history.DownsampleQuery{ItemID: 1, From: 1000, Till: 1999, Buckets: n}
			if _, err := history.Downsample(ctx, s, q); !errors.Is(err, history.ErrBuckets) {
				t.Fatalf("%d buckets: %v, want ErrBuckets", n, err)
			}
			if _, err := history.DownsampleRead(ctx, s, q); !errors.Is(err, history.ErrBuckets) {
				t.Fatalf("generic, %d buckets: %v, want ErrBuckets", n, err)
			}
		}
	})

	t.Run("Boundaries", func(t *testing.T) {
		s := open(t)
		m := model{}
		in := []history.Sample{
			{ItemID: 3, Clock: 99, NS: 999999999, Type: history.Float, F: -100}, // before from
			{ItemID: 3, Clock: 100, Type: history.Float, F: 1},                  // exactly from
			{ItemID: 3, Clock: 109, NS: 999999999, Type: history.Float, F: 2},   // last ns of bucket 0
			{ItemID: 3, Clock: 110, Type: history.Float, F: 3},                  // first ns of bucket 1
			{ItemID: 3, Clock: 150, Type: history.Float, F: math.Copysign(0, -1)},
			{ItemID: 3, Clock: 150, NS: 1, Type: history.Float, F: 0},
			{ItemID: 3, Clock: 199, NS: 999999999, Type: history.Float, F: 4}, // exactly till, last ns
			{ItemID: 3, Clock: 200, Type: history.Float, F: 100},              // after till
		}
		write(t, s, in)
		m.write(in)
		checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 3, From: 100, Till: 199, Buckets: 10})
		got, _ := history.Downsample(ctx, s, history.DownsampleQuery{ItemID: 3, From: 100, Till: 199, Buckets: 10})
		want := []int64{100, 110, 150, 190}
		if fmt.Sprint(clocks(got)) != fmt.Sprint(want) || got[0].Count != 2 || got[3].Max != 4 {
			t.Fatalf("boundaries: %+v, want clocks %v", got, want)
		}
		// A range that is not a multiple of the width: the last bucket
		// is cut at till and still gets the value at till.
		checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 3, From: 100, Till: 199, Buckets: 3})
		checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 3, From: 100, Till: 199, Buckets: 7})
	})

	t.Run("Uint", func(t *testing.T) {
		s := open(t)
		m := model{}
		var in []history.Sample
		for i := 0; i < 500; i++ {
			u := uint64(math.MaxUint64 - uint64(i%3))
			if i%50 == 7 {
				u = uint64(i)
			}
			in = append(in, history.Sample{ItemID: 4, Clock: 10_000 + int64(i), Type: history.Uint, U: u})
		}
		write(t, s, in)
		m.write(in)
		for _, n := range []int{1, 5, 500} {
			checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 4, From: 10_000, Till: 10_499, Buckets: n})
		}
		flush(t, s)
		for _, n := range []int{1, 5, 500} {
			checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 4, From: 10_000, Till: 10_499, Buckets: n})
			checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 4, From: 10_123, Till: 10_321, Buckets: n})
		}
		got, _ := history.Downsample(ctx, s, history.DownsampleQuery{ItemID: 4, From: 10_000, Till: 10_499, Buckets: 1})
		if len(got) != 1 || got[0].MaxU != math.MaxUint64 || got[0].MinU != 7 || got[0].Type != history.Uint {
			t.Fatalf("uint extremes lost: %+v", got)
		}
		// A text item has no buckets.
		write(t, s, []history.Sample{{ItemID: 5, Clock: 10_000, Type: history.Text, S: "x"}})
		if got, err := history.Downsample(ctx, s, history.DownsampleQuery{ItemID: 5, From: 0, Till: 1 << 31, Buckets: 10}); err != nil || len(got) != 0 {
			t.Fatalf("text item: %v %+v", err, got)
		}
	})

	t.Run("HeadBlocksLate", func(t *testing.T) {
		s := open(t)
		m := model{}
		w := func(v []history.Sample) {
			write(t, s, v)
			m.write(v)
		}
		gen := func(from, to, step int64, f func(int64) float64) []history.Sample {
			var out []history.Sample
			for c := from; c < to; c += step {
				out = append(out, history.Sample{ItemID: 6, Clock: c, NS: int32(c % 1000), Type: history.Float, F: f(c)})
			}
			return out
		}
		check := func(stage string) {
			t.Helper()
			for _, q := range []history.DownsampleQuery{
				{ItemID: 6, From: 0, Till: 40_000, Buckets: 100},
				{ItemID: 6, From: 3_000, Till: 25_000, Buckets: 37},
				{ItemID: 6, From: 7_200, Till: 14_399, Buckets: 2},
				{ItemID: 6, From: 0, Till: 1 << 31, Buckets: 1},
			} {
				t.Run(stage, func(t *testing.T) { checkDownsample(t, s, m, q) })
			}
		}
		w(gen(0, 10_000, 3, func(c int64) float64 { return float64(c) / 10 }))
		check("head")
		flush(t, s)
		check("blocks")
		w(gen(20_000, 30_000, 7, func(c int64) float64 { return -float64(c) }))
		check("blocks+head")
		// Late values: into the range already flushed, some on existing
		// timestamps (last write wins), and older than the head's sealed
		// chunks.
		w(gen(3_000, 6_000, 9, func(c int64) float64 { return 1e6 + float64(c) }))
		w(gen(21_000, 22_000, 2, func(c int64) float64 { return 0.5 }))
		check("late")
		flush(t, s)
		check("late flushed")
		w(gen(30_000, 31_000, 1, func(c int64) float64 { return float64(c % 17) }))
		check("all")
	})

	t.Run("ConcurrentWithWritesAndFlushes", func(t *testing.T) {
		s := open(t)
		const writers, batches, batch = 2, 40, 250
		q := history.DownsampleQuery{ItemID: 9, From: 0, Till: 1 << 31, Buckets: 50}
		var wg sync.WaitGroup
		errc := make(chan error, writers+2)
		stop := make(chan struct{})
		wg.Add(1)
		go func() { // a reader: counts never shrink, buckets stay ordered
			defer wg.Done()
			prev := int64(0)
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := history.Downsample(ctx, s, q)
				if err != nil {
					errc <- err
					return
				}
				n := int64(0)
				for i := range got {
					if i > 0 && got[i].Clock <= got[i-1].Clock {
						errc <- fmt.Errorf("buckets out of order: %v", clocks(got))
						return
					}
					n += got[i].Count
				}
				if n < prev {
					errc <- fmt.Errorf("downsample counted %d values after %d", n, prev)
					return
				}
				prev = n
			}
		}()
		if _, ok := s.(Flusher); ok {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := s.(Flusher).Flush(); err != nil {
						errc <- err
						return
					}
				}
			}()
		}
		m := model{}
		var mu sync.Mutex
		var ww sync.WaitGroup
		for w := 0; w < writers; w++ {
			ww.Add(1)
			go func(w int) {
				defer ww.Done()
				for k := 0; k < batches; k++ {
					v := make([]history.Sample, batch)
					for i := range v {
						c := int64((k*batch + i) * writers)
						v[i] = history.Sample{ItemID: 9, Clock: c + int64(w), Type: history.Float, F: float64(c % 101)}
					}
					if err := s.Write(ctx, v); err != nil {
						errc <- err
						return
					}
					mu.Lock()
					m.write(v)
					mu.Unlock()
				}
			}(w)
		}
		ww.Wait()
		close(stop)
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		checkDownsample(t, s, m, q)
	})

	t.Run("RandomAgainstReference", func(t *testing.T) {
		s := open(t)
		m := model{}
		r := rand.New(rand.NewPCG(11, 12))
		for round := 0; round < 12; round++ {
			var in []history.Sample
			base := int64(r.IntN(20_000))
			for i := 0; i < 300; i++ {
				c := base + int64(r.IntN(3_000))
				in = append(in, history.Sample{ItemID: 8, Clock: c, NS: int32(r.IntN(3)) * 333_333_333, Type: history.Float, F: math.Round(r.NormFloat64()*1e4) / 100})
			}
			write(t, s, in)
			m.write(in)
			if r.IntN(3) == 0 {
				flush(t, s)
			}
			for k := 0; k < 8; k++ {
				from := int64(r.IntN(24_000)) - 1_000
				till := from + int64(r.IntN(10_000))
				checkDownsample(t, s, m, history.DownsampleQuery{ItemID: 8, From: from, Till: till, Buckets: 1 + r.IntN(300)})
			}
		}
	})
}
