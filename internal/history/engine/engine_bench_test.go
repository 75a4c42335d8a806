package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// gaugeBatches makes realistic batches: items of slowly varying gauges
// (two decimals), one value per item per minute, batches as the pipeline
// writes them (MaxBatch-sized pieces of many items).
func gaugeBatches(items, rounds, batch int) [][]history.Sample {
	r := rand.New(rand.NewPCG(1, 2))
	level := make([]float64, items)
	for i := range level {
		level[i] = 20 + r.Float64()*10
	}
	var out [][]history.Sample
	var cur []history.Sample
	for round := 0; round < rounds; round++ {
		for i := 0; i < items; i++ {
			level[i] += (r.Float64() - 0.5) / 10
			cur = append(cur, history.Sample{ItemID: uint64(i + 1), Clock: 1_700_000_000 + int64(round*60), Type: history.Float, F: math.Round(level[i]*100) / 100})
			if len(cur) == batch {
				out = append(out, cur)
				cur = nil
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// go test -run '^$' -bench 'Write' -benchtime 3x -count 6 ./internal/history/engine/
//
// BenchmarkWrite appends with the WAL on (fsync per group commit) from
// `writers` goroutines, as the pipeline's shards do.
func BenchmarkWrite(b *testing.B) {
	for _, mode := range []struct {
		name string
		sync wal.SyncMode
	}{{"batch", wal.SyncBatch}, {"interval", wal.SyncInterval}} {
		for _, writers := range []int{1, 2, 8} {
			b.Run("sync="+mode.name+"/writers="+strconv.Itoa(writers), func(b *testing.B) {
				batches := gaugeBatches(2000, 1000, 16384) // 2M values, 1000 per item
				values := 0
				for _, bt := range batches {
					values += len(bt)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for n := 0; n < b.N; n++ {
					b.StopTimer()
					s, err := Open(Options{Dir: b.TempDir(), Sync: mode.sync})
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					var wg sync.WaitGroup
					next := make(chan []history.Sample)
					for w := 0; w < writers; w++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for bt := range next {
								if err := s.Write(context.Background(), bt); err != nil {
									b.Error(err)
								}
							}
						}()
					}
					for _, bt := range batches {
						next <- bt
					}
					close(next)
					wg.Wait()
					b.StopTimer()
					if n == 0 {
						st := s.Stats()
						b.ReportMetric(float64(st.ChunkBytes)/float64(st.Chunks*DefaultChunkValues), "chunk-bytes/value")
						b.ReportMetric(float64(st.HeadBytes)/float64(st.Items), "head-bytes/item")
					}
					s.Close()
					b.StartTimer()
				}
				b.ReportMetric(float64(values)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
			})
		}
	}
}

// BenchmarkReadItem reads one item's 1M points in order, from the head's
// sealed chunks and, after a flush and compaction, from day block files.
func BenchmarkReadItem(b *testing.B) {
	for _, from := range []string{"head", "blocks"} {
		b.Run("from="+from, func(b *testing.B) { benchmarkReadItem(b, from == "blocks") })
	}
}

func benchmarkReadItem(b *testing.B, blocks bool) {
	const n = 1_000_000
	s := oneItem(b, n, blocks)
	b.ReportAllocs()
	for b.Loop() {
		got := 0
		s.Read(context.Background(), history.Query{ItemID: 42, From: 0, Till: 1 << 40}, func(*history.Sample) bool { got++; return true })
		if got != n {
			b.Fatalf("read %d", got)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/1M-read")
}

// go test -run '^$' -bench 'Downsample' -count 6 ./internal/history/engine/
//
// BenchmarkDownsample folds one float item's 1M points (one a second,
// 11.6 days) into 1,000 buckets, from the head's sealed chunks and from
// compacted day blocks: the store side of history.get's "downsample".
func BenchmarkDownsample(b *testing.B) {
	const n = 1_000_000
	for _, from := range []string{"head", "blocks"} {
		b.Run("from="+from+"/points=1M/buckets=1000", func(b *testing.B) {
			s := oneItem(b, n, from == "blocks")
			q := history.DownsampleQuery{ItemID: 42, From: 1_600_000_000, Till: 1_600_000_000 + n - 1, Buckets: 1000}
			b.ReportAllocs()
			for b.Loop() {
				got, err := s.Downsample(context.Background(), q)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) != 1000 || got[999].Count != n/1000 {
					b.Fatalf("%d buckets", len(got))
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/op")
		})
	}
}

// oneItem returns a store holding item 42's n points, one a second from
// 1,600,000,000, a slowly varying gauge with two decimals; in the head's
// sealed chunks, or flushed and compacted into day blocks.
func oneItem(b *testing.B, n int, blocks bool) *Store {
	s, err := Open(Options{Dir: b.TempDir(), Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	v := make([]history.Sample, 0, 10000)
	level := 20.0
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < n; i++ {
		level += (r.Float64() - 0.5) / 10
		v = append(v, history.Sample{ItemID: 42, Clock: 1_600_000_000 + int64(i), Type: history.Float, F: math.Round(level*100) / 100})
		if len(v) == cap(v) {
			if err := s.Write(context.Background(), v); err != nil {
				b.Fatal(err)
			}
			v = v[:0]
		}
	}
	if blocks {
		if err := s.Flush(); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Compact(context.Background(), time.Unix(int64(1_600_000_000+n+3*86400), 0), nil); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// shapes are realistic data: slowly varying gauges (two decimals),
// monotonically increasing counters (float and unsigned), constants and
// short strings, one value per item per minute.
func shape(name string, items, rounds int) [][]history.Sample {
	r := rand.New(rand.NewPCG(5, 6))
	level := make([]float64, items)
	count := make([]uint64, items)
	for i := range level {
		level[i] = 20 + r.Float64()*10
		count[i] = uint64(r.IntN(1 << 30))
	}
	states := []string{"ok", "degraded", "up", "down"}
	var out [][]history.Sample
	cur := make([]history.Sample, 0, 16384)
	for round := 0; round < rounds; round++ {
		for i := 0; i < items; i++ {
			v := history.Sample{ItemID: uint64(i + 1), Clock: 1_700_000_000 + int64(round*60)}
			switch name {
			case "gauge":
				level[i] += (r.Float64() - 0.5) / 10
				v.Type, v.F = history.Float, math.Round(level[i]*100)/100
			case "counter":
				// A steady rate with ±5 % noise, e.g. requests or bytes
				// per minute of a busy service.
				count[i] += 1000 + uint64(r.IntN(101)) - 50
				v.Type, v.U = history.Uint, count[i]
			case "counter-random":
				// Increments uniformly random in 0..4999: ~12 bits of
				// entropy per value, so no encoding gets below ~1.5 bytes.
				count[i] += uint64(r.IntN(5000))
				v.Type, v.U = history.Uint, count[i]
			case "float-counter":
				count[i] += 1000 + uint64(r.IntN(101)) - 50
				v.Type, v.F = history.Float, float64(count[i])
			case "constant":
				v.Type, v.F = history.Float, 1
			case "string":
				st := states[0]
				if r.IntN(50) == 0 {
					st = states[r.IntN(len(states))]
				}
				v.Type, v.S = history.Str, st
			}
			cur = append(cur, v)
			if len(cur) == cap(cur) {
				out = append(out, cur)
				cur = make([]history.Sample, 0, 16384)
			}
		}
	}
	return append(out, cur)
}

func dirSize(t testing.TB, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// go test -run '^$' -bench DiskBytes -benchtime 1x ./internal/history/engine/
//
// BenchmarkDiskBytes writes 1,000 items × 1,440 values (one day at one
// per minute), flushes, and reports the block files' total size over the
// value count: the bytes on disk per stored value.
func BenchmarkDiskBytes(b *testing.B) {
	for _, name := range []string{"gauge", "counter", "float-counter", "counter-random", "constant", "string"} {
		b.Run("vals="+name, func(b *testing.B) {
			batches := shape(name, 1000, 1440)
			values := 0
			for _, bt := range batches {
				values += len(bt)
			}
			for b.Loop() {
				dir := b.TempDir()
				s, err := Open(Options{Dir: dir, Sync: wal.SyncNever})
				if err != nil {
					b.Fatal(err)
				}
				for _, bt := range batches {
					if err := s.Write(context.Background(), bt); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Flush(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(dirSize(b, filepath.Join(dir, "blocks")))/float64(values), "2h-blocks-bytes/value")
				if _, err := s.Compact(context.Background(), time.Unix(1_700_000_000+3*86400, 0), nil); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(dirSize(b, filepath.Join(dir, "blocks")))/float64(values), "disk-bytes/value")
				b.ReportMetric(float64(dirSize(b, filepath.Join(dir, "wal"))), "wal-bytes-after-flush")
				s.Close()
			}
			b.ReportMetric(float64(values)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
	}
}

// BenchmarkReplay measures Open with 10M values in the WAL (no blocks).
func BenchmarkReplay(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(Options{Dir: dir, Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	const n = 10_000_000
	for _, bt := range gaugeBatches(10000, n/10000, 16384) {
		if err := s.Write(context.Background(), bt); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	for b.Loop() {
		s, err := Open(Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if s.Replayed() != n {
			b.Fatalf("replayed %d", s.Replayed())
		}
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/10000, "heap-bytes/item")
		s.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/10M-replay")
}

// go test -run '^$' -bench RetentionDip -benchtime 1x ./internal/history/engine/
//
// BenchmarkRetentionDip writes the same load twice into an engine that
// holds 48 old 2-hour partitions: once alone, once while retention drops
// those partitions one by one. It reports both rates and their ratio
// (the rate alone is the mean of a run before and a run after, after a
// warm-up run, so that order does not favour either).
func BenchmarkRetentionDip(b *testing.B) {
	for b.Loop() {
		dir := b.TempDir()
		s, err := Open(Options{Dir: dir, Sync: wal.SyncBatch})
		if err != nil {
			b.Fatal(err)
		}
		// Old data: 4 days of 2000 items, one value per minute, in blocks.
		old := gaugeBatches(2000, 4*1440, 16384)
		for _, bt := range old {
			if err := s.Write(context.Background(), bt); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Flush(); err != nil {
			b.Fatal(err)
		}
		partitions := s.BlockCount()
		load := shape("gauge", 2000, 1000)
		for i := range load {
			for j := range load[i] {
				load[i][j].Clock += 30 * 86400 // newer than the old data
			}
		}
		rate := func(drop bool) float64 {
			for i := range load { // every run writes new values
				for j := range load[i] {
					load[i][j].Clock += 7 * 86400
				}
			}
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				if !drop {
					return
				}
				base := int64(1_700_000_000)
				for cut := base; ; cut += 7200 {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.DropBefore(cut); err != nil {
						b.Error(err)
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
			start := time.Now()
			n := 0
			var wg sync.WaitGroup
			next := make(chan []history.Sample)
			for w := 0; w < 2; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for bt := range next {
						if err := s.Write(context.Background(), bt); err != nil {
							b.Error(err)
						}
					}
				}()
			}
			for _, bt := range load {
				next <- bt
				n += len(bt)
			}
			close(next)
			wg.Wait()
			el := time.Since(start)
			close(stop)
			<-done
			return float64(n) / el.Seconds()
		}
		rate(false) // warm-up: creates the series
		before := rate(false)
		withDrops := rate(true)
		after := rate(false)
		base := (before + after) / 2
		b.ReportMetric(base, "values/s-alone")
		b.ReportMetric(withDrops, "values/s-while-dropping")
		b.ReportMetric(withDrops/base, "ratio")
		b.ReportMetric(float64(partitions-s.BlockCount()), "partitions-dropped")
		s.Close()
	}
}
