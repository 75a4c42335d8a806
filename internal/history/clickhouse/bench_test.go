package clickhouse

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// Benchmarks against a private clickhouse-server (Debian's 18.16). The
// figures the issue asks for:
//
//	go test -run '^$' -bench 'Ingest|Read1M' -benchtime 2000000x ./internal/history/clickhouse/   (ingest: b.N values)
//	go test -run '^$' -bench Read1M -benchtime 5x ./internal/history/clickhouse/
//
// BenchmarkIngest reports values/s persisted (Write until Flush says
// everything is in ClickHouse) and the table's compressed bytes per value
// from system.parts; BenchmarkRead1M the time of one history.get-shaped
// read (history.ReadMany of one item) of 1,000,000 values.

// realistic returns about n values of historytest.Realistic's agent-like
// data, in one-minute batches as the pipeline would write them.
func realistic(n int) []history.Sample {
	g := historytest.Realistic(7, 10_000, 24*time.Hour)
	var out []history.Sample
	var b []history.Sample
	for len(out) < n {
		var ok bool
		if b, ok = g.Next(b[:0], time.Minute); !ok {
			break
		}
		out = append(out, b...)
	}
	return out[:min(n, len(out))]
}

func bytesPerValue(b *testing.B, s *Store, table string) float64 {
	ctx := context.Background()
	// Merged parts are what stays on disk; the benchmark's many small
	// inserts would otherwise be measured before their merges.
	if err := s.c.exec(ctx, "OPTIMIZE TABLE "+s.db+"."+table+" FINAL"); err != nil {
		b.Fatal(err)
	}
	v, err := s.c.queryString(ctx, "SELECT sum(data_compressed_bytes), sum(rows) FROM system.parts WHERE active AND database = '"+s.db+"' AND table = '"+table+"'")
	if err != nil {
		b.Fatal(err)
	}
	var by, rows float64
	fmt.Sscan(v, &by, &rows)
	if rows == 0 {
		return 0
	}
	return by / rows
}

func BenchmarkIngest(b *testing.B) {
	ch := testutil.StartClickHouse(b)
	data := realistic(min(b.N, 2_000_000))
	s, err := Open(context.Background(), Options{URLs: []string{ch.URL}, Database: "bench_ingest", Dir: b.TempDir(),
		Sync: wal.SyncBatch, FlushInterval: 500 * time.Millisecond, BatchSize: 200_000})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const batch = 10_000
	b.ResetTimer()
	start := time.Now()
	buf := make([]history.Sample, 0, batch)
	for i := 0; i < b.N; {
		buf = buf[:0]
		for ; len(buf) < batch && i < b.N; i++ {
			v := data[i%len(data)]
			v.Clock += int64(i/len(data)) * 86400 // a later day for each pass over the data
			buf = append(buf, v)
		}
		if err := s.Write(ctx, buf); err != nil {
			b.Fatal(err)
		}
	}
	fctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := s.Flush(fctx); err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "values/s")
	if b.N >= 100_000 {
		b.ReportMetric(bytesPerValue(b, s, "history")+0, "B/float")
	}
}

func BenchmarkRead1M(b *testing.B) {
	ch := testutil.StartClickHouse(b)
	s, err := Open(context.Background(), Options{URLs: []string{ch.URL}, Database: "bench_read", Dir: b.TempDir(), Sync: wal.SyncNever, BatchSize: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const n = 1_000_000
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]history.Sample, 0, 100_000)
	start := int64(1_700_000_000)
	for i := 0; i < n; i++ {
		buf = append(buf, history.Sample{ItemID: 1, Clock: start + int64(i), NS: int32(r.IntN(1e9)), Type: history.Float, F: float64(r.IntN(10000)) / 100})
		if len(buf) == cap(buf) {
			if err := s.Write(ctx, buf); err != nil {
				b.Fatal(err)
			}
			buf = buf[:0]
		}
	}
	fctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := s.Flush(fctx); err != nil {
		b.Fatal(err)
	}
	if err := s.c.exec(ctx, "OPTIMIZE TABLE "+s.db+".history FINAL"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got := 0
		if err := history.ReadMany(ctx, s, []uint64{1}, history.Query{From: start, Till: start + n}, func(*history.Sample) bool { got++; return true }); err != nil {
			b.Fatal(err)
		}
		if got != n {
			b.Fatalf("read %d values, want %d", got, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
}

// BenchmarkIngestCluster: b.N values into a 2-shard cluster, written to
// the shards directly and through the Distributed table; reports
// values/s persisted and each shard's share of the rows.
//
//	go test -run '^$' -bench IngestCluster -benchtime 2000000x ./internal/history/clickhouse/
func BenchmarkIngestCluster(b *testing.B) {
	chs := testutil.StartClickHouseCluster(b, 2)
	for _, direct := range []bool{true, false} {
		name := "distributed"
		if direct {
			name = "direct"
		}
		b.Run(name, func(b *testing.B) {
			data := realistic(min(b.N, 2_000_000))
			s, err := Open(context.Background(), Options{URLs: []string{chs[0].URL, chs[1].URL}, Cluster: testutil.ClusterName, DirectWrites: direct,
				Database: fmt.Sprintf("bench_%s_%d", name, b.N), Dir: b.TempDir(), Sync: wal.SyncBatch, FlushInterval: 500 * time.Millisecond, BatchSize: 200_000})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			const batch = 10_000
			buf := make([]history.Sample, 0, batch)
			start := time.Now()
			for i := 0; i < b.N; {
				buf = buf[:0]
				for ; len(buf) < batch && i < b.N; i++ {
					v := data[i%len(data)]
					v.Clock += int64(i/len(data)) * 86400
					buf = append(buf, v)
				}
				if err := s.Write(ctx, buf); err != nil {
					b.Fatal(err)
				}
			}
			fctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
			defer cancel()
			if err := s.Flush(fctx); err != nil {
				b.Fatal(err)
			}
			el := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/el.Seconds(), "values/s")
			for i, sc := range s.shards {
				var total int64
				for _, t := range tables {
					v, err := sc.queryString(ctx, "SELECT count() FROM "+s.db+"."+t.name)
					if err != nil {
						b.Fatal(err)
					}
					var n int64
					fmt.Sscan(v, &n)
					total += n
				}
				b.ReportMetric(float64(total)/float64(b.N)*100, fmt.Sprintf("%%shard%d", i))
			}
		})
	}
}
