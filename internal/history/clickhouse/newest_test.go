package clickhouse

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// TestReadNewest: the newest values of many items, each found in the
// window its age falls in (minutes, a month, decades back, and past the
// present up to DateTime's end), across a value type change and merged
// with unshipped values, are what a newest-first Read per item gives;
// also after a restart, with the spool empty.
func TestReadNewest(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	s := openStore(t, ch, func(o *Options) { o.FlushInterval = time.Hour })
	ctx := context.Background()
	now := time.Now().Unix()
	in := []history.Sample{
		{ItemID: 1, Clock: now - 30, Type: history.Float, F: 1},
		{ItemID: 1, Clock: now - 90, Type: history.Float, F: 2},
		{ItemID: 1, Clock: now - 200, Type: history.Float, F: 3},
		{ItemID: 2, Clock: now - 40*86400, Type: history.Uint, U: 4}, // a month back
		{ItemID: 2, Clock: now - 30*365*86400, Type: history.Uint, U: 5},
		{ItemID: 3, Clock: maxClock, NS: 7, Type: history.Float, F: 6}, // the future
		{ItemID: 3, Clock: 10, Type: history.Float, F: 7},
		{ItemID: 4, Clock: now - 5000, Type: history.Float, F: 8}, // then a string
		{ItemID: 4, Clock: now - 4000, Type: history.Str, S: "text"},
		{ItemID: 6, Clock: now - 100, Type: history.Log, S: "line", Log: &history.LogMeta{Source: "app", Severity: 2, EventID: 9}},
	}
	if err := s.Write(ctx, in); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	// Unshipped: a newer value of 1, a rewrite of 2's newest (the spool
	// wins), a value of 5 only in the spool.
	late := []history.Sample{
		{ItemID: 1, Clock: now - 10, Type: history.Float, F: 10},
		{ItemID: 2, Clock: now - 40*86400, Type: history.Uint, U: 40},
		{ItemID: 5, Clock: now - 1, Type: history.Float, F: 11},
	}
	if err := s.Write(ctx, late); err != nil {
		t.Fatal(err)
	}
	items := []uint64{7, 6, 5, 4, 3, 2, 1, 4} // 7 has no values; 4 twice
	check := func(s *Store, stage string) {
		t.Helper()
		for _, n := range []int{1, 2, 3} {
			want := map[uint64][]history.Sample{}
			for _, id := range items {
				if v := historytest.ReadAll(t, s, history.Query{ItemID: id, From: math.MinInt64, Till: math.MaxInt64 - 1, Desc: true, Limit: n}); len(v) > 0 {
					want[id] = v
				}
			}
			got := map[uint64][]history.Sample{}
			err := s.ReadNewest(ctx, items, n, func(v []history.Sample) bool {
				for _, x := range v {
					if x.Log != nil {
						lm := *x.Log
						x.Log = &lm
					}
					got[v[0].ItemID] = append(got[v[0].ItemID], x)
				}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%s: newest %d (-read per item +ReadNewest):\n%s", stage, n, d)
			}
			if len(got) != 6 || got[1][0].F != 10 || (n >= 2 && got[2][0].U != 40) || got[3][0].Clock != maxClock {
				t.Fatalf("%s: newest %d: %+v", stage, n, got)
			}
		}
	}
	check(s, "spool and ClickHouse")
	if err := s.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	check(openStore(t, ch, func(o *Options) { o.Database = s.db }), "after a restart")
}

// readerOnly hides a store's optional interfaces: the pipeline then
// seeds with one Read per item, as it did before NewestReader.
type readerOnly struct{ history.Reader }

// BenchmarkSeed: the pipeline's start-up restore of last values for
// 10k and 100k items with two values each (an hour apart, the newest a minute
// old), per item (one newest-first Read each, the old way) and batched
// (ReadNewest). Reports ns/item.
//
//	go test -run '^$' -bench 'Seed' -benchtime 1x ./internal/history/clickhouse/
func BenchmarkSeed(b *testing.B) {
	for _, items := range []int{10_000, 100_000} {
		for _, mode := range []string{"per-item", "batched"} {
			b.Run("items="+strconv.Itoa(items)+"/mode="+mode, func(b *testing.B) { benchSeed(b, items, mode) })
		}
	}
}

func benchSeed(b *testing.B, items int, mode string) {
	ch := testutil.StartClickHouse(b)
	ctx := context.Background()
	s, err := Open(ctx, Options{URLs: []string{ch.URL}, Database: "bench_seed", Dir: b.TempDir(), Sync: wal.SyncNever, BatchSize: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now().Unix()
	ids := make([]uint64, items)
	var vals []history.Sample
	for i := range ids {
		ids[i] = uint64(i + 1)
		vals = append(vals,
			history.Sample{ItemID: ids[i], Clock: now - 3660, Type: history.Float, F: 1},
			history.Sample{ItemID: ids[i], Clock: now - 60, Type: history.Float, F: 2})
	}
	if err := s.Write(ctx, vals); err != nil {
		b.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := s.Flush(fctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A fresh store each time: the table lookups of the per-item
		// reads are cached per store, as after a start.
		b.StopTimer()
		st, err := Open(ctx, Options{URLs: []string{ch.URL}, Database: "bench_seed", Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		p, err := pipeline.New(pipeline.Options{Shards: 2, Store: st})
		if err != nil {
			b.Fatal(err)
		}
		var r history.Reader = st
		if mode == "per-item" {
			r = readerOnly{st}
		}
		b.StartTimer()
		n, err := p.Seed(ctx, r, ids)
		b.StopTimer()
		st.Close()
		if err != nil || n != items {
			b.Fatalf("Seed = %d, %v; want %d", n, err, items)
		}
		b.StartTimer()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/float64(items)*1e9, "ns/item")
}
