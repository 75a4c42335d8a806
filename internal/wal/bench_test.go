package wal

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/record"
)

const benchValuesPerRecord = 1000

// benchRecords returns n distinct records, each record.AppendSamples of
// 1000 float samples: items out of 100k, clocks one second apart per
// record, random ns, gauges as random walks. Fixed seed.
func benchRecords(n int) [][]byte {
	r := rand.New(rand.NewPCG(1, 1))
	out := make([][]byte, n)
	samples := make([]history.Sample, benchValuesPerRecord)
	v := 100.0
	for i := range out {
		for j := range samples {
			v += r.NormFloat64()
			samples[j] = history.Sample{ItemID: 1 + r.Uint64N(100_000), Clock: 1_790_000_000 + int64(i), NS: r.Int32N(1e9), Type: history.Float, F: v}
		}
		out[i] = record.AppendSamples(nil, samples)
	}
	return out
}

// BenchmarkAppend measures Append on the real filesystem (b.TempDir())
// with `writers` goroutines appending pre-encoded 1000-value records at
// once. values/s counts values whose Append returned; fsyncs/s shows how
// group commit amortises fsyncs. The async variant is one goroutine that
// keeps up to 8 AppendAsync calls in flight.
//
//	go test -run '^$' -bench 'Append' -benchtime 3s -count 6 ./internal/wal/
func BenchmarkAppend(b *testing.B) {
	recs := benchRecords(64)
	cases := []struct {
		mode    SyncMode
		writers int
		async   bool
	}{
		{SyncBatch, 1, false},
		{SyncBatch, 8, false},
		{SyncBatch, 64, false},
		{SyncBatch, 1, true},
		{SyncInterval, 1, false},
		{SyncInterval, 8, false},
		{SyncNever, 8, false},
	}
	for _, c := range cases {
		name := fmt.Sprintf("sync=%s/writers=%d", c.mode, c.writers)
		if c.async {
			name += "/async"
		}
		b.Run(name, func(b *testing.B) {
			w, err := Open(Options{Dir: b.TempDir(), Sync: c.mode})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			b.SetBytes(int64(len(recs[0])))
			b.ReportAllocs()
			syncs0 := w.Stats().Syncs
			b.ResetTimer()
			if c.async {
				appendAsync(b, w, recs, 8)
			} else {
				appendConcurrently(b, w, recs, c.writers)
			}
			b.StopTimer()
			sec := b.Elapsed().Seconds()
			syncs := w.Stats().Syncs - syncs0
			b.ReportMetric(float64(b.N)*benchValuesPerRecord/sec, "values/s")
			b.ReportMetric(float64(syncs)/sec, "fsyncs/s")
		})
	}
}

func appendConcurrently(b *testing.B, w *WAL, recs [][]byte, writers int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if err := w.Append(recs[i%int64(len(recs))]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func appendAsync(b *testing.B, w *WAL, recs [][]byte, depth int) {
	inflight := make([]Pending, 0, depth)
	for i := range b.N {
		if len(inflight) == depth {
			if err := inflight[0].Wait(); err != nil {
				b.Fatal(err)
			}
			inflight = append(inflight[:0], inflight[1:]...)
		}
		inflight = append(inflight, w.AppendAsync(recs[i%len(recs)]))
	}
	for _, p := range inflight {
		if err := p.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplay replays a WAL of 1M float values (1000 records of 1000,
// about 18 MB, in the page cache), with and without decoding the records
// into samples.
//
//	go test -run '^$' -bench 'Replay' -count 6 ./internal/wal/
func BenchmarkReplay(b *testing.B) {
	const nrec = 1000
	dir := b.TempDir()
	w, err := Open(Options{Dir: dir, Sync: SyncNever, SegmentSize: 8 << 20})
	if err != nil {
		b.Fatal(err)
	}
	recs := benchRecords(64)
	var size int64
	for i := range nrec {
		if err := w.Append(recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
		size += int64(len(recs[i%len(recs)]))
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	for _, decode := range []bool{false, true} {
		b.Run(fmt.Sprintf("decode=%v", decode), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			samples := make([]history.Sample, 0, benchValuesPerRecord)
			for b.Loop() {
				w, err := Open(Options{Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				err = w.Replay(func(rec []byte) error {
					if !decode {
						n++
						return nil
					}
					var err error
					samples, err = record.DecodeSamples(samples[:0], rec)
					n++
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				if n != nrec {
					b.Fatalf("replayed %d records; want %d", n, nrec)
				}
				// Drop the empty segment Replay started, so that every
				// iteration reads the same files.
				_, last, err := w.Segments()
				if err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				if err := os.Remove(filepath.Join(dir, segmentName(last))); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*nrec*benchValuesPerRecord/b.Elapsed().Seconds(), "values/s")
		})
	}
}
