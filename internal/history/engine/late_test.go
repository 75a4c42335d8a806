package engine

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// lateModel is the reference: the last value written per timestamp.
type lateModel map[int64]uint64

func (m lateModel) in(lo, hi int64) (ts []int64, vals []uint64) {
	for t := range m {
		if t >= lo && t < hi {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	for _, t := range ts {
		vals = append(vals, m[t])
	}
	return ts, vals
}

func (m lateModel) clone() lateModel {
	c := lateModel{}
	for k, v := range m {
		c[k] = v
	}
	return c
}

func checkLate(t *testing.T, what string, l *lateBuf, m lateModel, lo, hi int64) {
	t.Helper()
	got := l.collect(history.Uint, lo, hi)
	ts, vals := m.in(lo, hi)
	if got.len() != len(ts) {
		t.Fatalf("%s [%d, %d): %d values, want %d", what, lo, hi, got.len(), len(ts))
	}
	for k := range ts {
		if got.ts[k] != ts[k] || got.num[k] != vals[k] {
			t.Fatalf("%s [%d, %d) at %d: (%d, %d), want (%d, %d)", what, lo, hi, k, got.ts[k], got.num[k], ts[k], vals[k])
		}
	}
}

// TestLateBufMatchesModel: random-order writes with repeated timestamps
// (a later write wins) read back right over random ranges, the number of
// runs stays logarithmic, and a snapshot taken in the middle keeps
// reading what was there when it was taken while writes go on and merge
// runs.
func TestLateBufMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 20))
	var l lateBuf
	m := lateModel{}
	const n = 40_000
	var snap lateBuf
	var snapModel lateModel
	for i := 0; i < n; i++ {
		ts := r.Int64N(30_000) // about a quarter of the writes repeat a timestamp
		v := history.Sample{Type: history.Uint, U: uint64(i)}
		l.add(history.Uint, ts, &v)
		m[ts] = uint64(i)
		if i == n/2+77 { // mid-tail, with runs of several sizes
			snap, snapModel = l.snapshot(history.Uint, 1000, 20_000), m.clone()
			// The snapshot refers to the runs; it copies only the tail.
			if len(snap.runs) == 0 || snap.tail.len() > lateTail {
				t.Fatalf("snapshot of %d runs and a tail of %d", len(snap.runs), snap.tail.len())
			}
			for _, r := range snap.runs {
				if !slices.Contains(l.runs, r) {
					t.Fatal("the snapshot copied a run")
				}
			}
		}
		if limit := bits.Len(uint(l.len()/lateTail)) + 2; len(l.runs) > limit {
			t.Fatalf("after %d writes: %d runs, more than %d", i+1, len(l.runs), limit)
		}
	}
	checkLate(t, "all", &l, m, math.MinInt64, math.MaxInt64)
	for k := 0; k < 50; k++ {
		lo := r.Int64N(31_000) - 500
		checkLate(t, "range", &l, m, lo, lo+r.Int64N(3000))
	}
	checkLate(t, "snapshot", &snap, snapModel, 1000, 20_000)
	checkLate(t, "snapshot part", &snap, snapModel, 5000, 6000)
}

// TestLateWritesThroughStore: values older than the item's sealed chunks
// arrive in random order, some rewritten, and read back through Read,
// before and after a flush, as the model says.
func TestLateWritesThroughStore(t *testing.T) {
	s := open(t, t.TempDir(), 64)
	defer s.Close()
	const item = 7
	r := rand.New(rand.NewPCG(1, 1))
	m := lateModel{}
	write := func(ts int64, v uint64) {
		t.Helper()
		err := s.Write(t.Context(), []history.Sample{{ItemID: item, Clock: ts, Type: history.Uint, U: v}})
		if err != nil {
			t.Fatal(err)
		}
		m[ts*1e9] = v
	}
	for i := int64(0); i < 200; i++ { // in order: sealed chunks up to 10,199
		write(10_000+i, uint64(i))
	}
	batch := make([]history.Sample, 0, 100)
	for i := 0; i < 5000; i++ { // late, random order, in batches
		ts := r.Int64N(10_150)
		batch = append(batch, history.Sample{ItemID: item, Clock: ts, Type: history.Uint, U: uint64(1e6 + i)})
		if len(batch) == cap(batch) {
			if err := s.Write(t.Context(), batch); err != nil {
				t.Fatal(err)
			}
			for _, b := range batch {
				m[b.Clock*1e9] = b.U
			}
			batch = batch[:0]
		}
	}
	check := func(what string) {
		t.Helper()
		for _, rg := range [][2]int64{{0, 20_000}, {9_990, 10_010}, {3_000, 3_100}} {
			got := readAllUints(t, s, item, rg[0], rg[1])
			ts, vals := m.in(rg[0]*1e9, (rg[1]+1)*1e9)
			if len(got) != len(ts) {
				t.Fatalf("%s %v: %d values, want %d", what, rg, len(got), len(ts))
			}
			for k := range ts {
				if got[k].Clock*1e9 != ts[k] || got[k].U != vals[k] {
					t.Fatalf("%s %v at %d: %+v, want ts %d value %d", what, rg, k, got[k], ts[k], vals[k])
				}
			}
		}
	}
	check("head")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	check("blocks")
}

func readAllUints(t *testing.T, s *Store, item uint64, from, till int64) []history.Sample {
	t.Helper()
	var out []history.Sample
	err := s.Read(t.Context(), history.Query{ItemID: item, From: from, Till: till}, func(v *history.Sample) bool {
		out = append(out, *v)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// go test -run '^$' -bench 'Backfill' -benchtime 3x -count 6 ./internal/history/engine/
//
// BenchmarkBackfill writes 1M values of 100 items (10,000 ten-second
// slots each) in batches of 1,000: order=time in time order; order=random
// shuffled (a backfill, or a proxy's buffer after an outage); and
// order=random-behind-flush, where the newest tenth was written and
// flushed first so that the rest arrives older than everything in the
// head (outside the head window). The WAL does not fsync: this measures
// the engine. Compare values/s across orders.
func BenchmarkBackfill(b *testing.B) { benchmarkBackfill(b, 100, 10_000) }

// go test -run '^$' -bench 'Backfill10M' -benchtime 1x ./internal/history/engine/
//
// BenchmarkBackfill10M is BenchmarkBackfill at the scale: 10M
// values of 1,000 items (needs about 3 GB of memory for the inputs).
func BenchmarkBackfill10M(b *testing.B) { benchmarkBackfill(b, 1000, 10_000) }

func benchmarkBackfill(b *testing.B, items, slots int) {
	const batch = 1000
	var in []history.Sample
	for k := 0; k < slots; k++ {
		for it := 1; it <= items; it++ {
			in = append(in, history.Sample{ItemID: uint64(it), Clock: 1_700_000_000 + int64(k)*10, NS: int32(k*7919) % 1e9, Type: history.Float, F: float64(k%1000) / 100})
		}
	}
	shuffled := append([]history.Sample(nil), in...)
	rand.New(rand.NewPCG(4, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	newest := len(in) / 10
	behind := append([]history.Sample(nil), in[:len(in)-newest]...)
	rand.New(rand.NewPCG(4, 3)).Shuffle(len(behind), func(i, j int) { behind[i], behind[j] = behind[j], behind[i] })
	for _, c := range []struct {
		name        string
		first, rest []history.Sample
	}{
		{"time", nil, in},
		{"random", nil, shuffled},
		{"random-behind-flush", in[len(in)-newest:], behind},
	} {
		b.Run("order="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				s, err := Open(Options{Dir: b.TempDir(), Sync: wal.SyncNever})
				if err != nil {
					b.Fatal(err)
				}
				if c.first != nil {
					if err := s.Write(context.Background(), c.first); err != nil {
						b.Fatal(err)
					}
					if err := s.Flush(); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				for i := 0; i < len(c.rest); i += batch {
					if err := s.Write(context.Background(), c.rest[i:min(i+batch, len(c.rest))]); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(len(c.rest))*float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
	}
}
