package engine

import (
	"context"
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// realisticStore fills a store in dir with the realistic data set
// (historytest.Realistic: seed, items, span), written in one-minute
// batches as a server receives them, flushed every two hours of data as
// the housekeeping stage would, and compacted into day blocks when
// compact is set. It returns the store and the number of values.
func realisticStore(tb testing.TB, dir string, seed uint64, items int, span time.Duration, compact bool) (*Store, *historytest.Gen, int) {
	return realisticStoreAt(tb, dir, seed, items, span, compact, history.PrecisionNS)
}

// realisticStoreAt is realisticStore with the store's timestamp precision.
func realisticStoreAt(tb testing.TB, dir string, seed uint64, items int, span time.Duration, compact bool, prec history.Precision) (*Store, *historytest.Gen, int) {
	tb.Helper()
	s, err := Open(Options{Dir: dir, Sync: wal.SyncNever, Precision: prec})
	if err != nil {
		tb.Fatal(err)
	}
	g := historytest.Realistic(seed, items, span)
	var buf []history.Sample
	n, sinceFlush := 0, 0
	for {
		var ok bool
		buf, ok = g.Next(buf[:0], time.Minute)
		if !ok {
			break
		}
		if len(buf) > 0 {
			if err := s.Write(context.Background(), buf); err != nil {
				tb.Fatal(err)
			}
		}
		n += len(buf)
		if sinceFlush += 1; sinceFlush == 120 {
			if err := s.Flush(); err != nil {
				tb.Fatal(err)
			}
			sinceFlush = 0
		}
	}
	if err := s.Flush(); err != nil {
		tb.Fatal(err)
	}
	if compact {
		if _, err := s.Compact(context.Background(), time.Unix(g.End+2*86400, 0), nil); err != nil {
			tb.Fatal(err)
		}
	}
	return s, g, n
}

// go test -run '^$' -bench 'ReadMany' -benchtime 20x -count 6 ./internal/history/engine/
//
// BenchmarkReadMany reads a short range of many items, the dashboard
// pattern, from compacted day blocks of the realistic data set (one day
// of 5,000 items): via=Read with one Read per item (history.ReadEach, as
// history.get did before the batched read), via=ReadMany with the
// engine's BatchReader, via=CountMany counting the same values without
// reading them (history.get's counting pass).
func BenchmarkReadMany(b *testing.B) {
	s, g, total := realisticStore(b, b.TempDir(), 1, 5000, 24*time.Hour, true)
	defer s.Close()
	for _, c := range []struct {
		items int
		rng   int64
	}{{5000, 3600}, {2000, 60}} {
		for _, via := range []string{"Read", "ReadMany", "CountMany"} {
			b.Run("items="+strconv.Itoa(c.items)+"/range="+strconv.FormatInt(c.rng, 10)+"s/via="+via, func(b *testing.B) {
				from := g.Start + 12*3600 + 17 // mid-day, not on a chunk boundary
				q := history.Query{From: from, Till: from + c.rng - 1}
				ids := make([]uint64, c.items)
				for i := range ids {
					ids[i] = uint64(i + 1)
				}
				values := 0
				count := func(*history.Sample) bool { values++; return true }
				b.ReportAllocs()
				for b.Loop() {
					values = 0
					var err error
					switch via {
					case "Read":
						err = history.ReadEach(context.Background(), s, ids, q, count)
					case "ReadMany":
						err = s.ReadMany(context.Background(), ids, q, count)
					default:
						values, err = s.CountMany(context.Background(), ids, q, 0)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/read")
				b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N)/float64(c.items), "µs/item")
				b.ReportMetric(float64(values), "values/read")
				b.ReportMetric(diskBytes(b, s)/float64(total), "disk-B/value")
			})
		}
	}
}

// diskBytes is the size of the store's history block files.
func diskBytes(tb testing.TB, s *Store) float64 {
	var n int64
	err := filepath.WalkDir(s.blocksDir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return float64(n)
}

// go test -run '^$' -bench 'DiskBytesRealistic' -benchtime 1x ./internal/history/engine/
//
// BenchmarkDiskBytesRealistic is the size on disk of a day of 1,000 items
// of the realistic data set (historytest.Realistic seed 1) in compacted
// day blocks, per value, at each timestamp precision. Trend files are not
// counted (they do not depend on the precision).
func BenchmarkDiskBytesRealistic(b *testing.B) {
	for _, p := range []history.Precision{history.PrecisionNS, history.PrecisionUS, history.PrecisionMS, history.PrecisionS} {
		b.Run("prec="+p.String(), func(b *testing.B) {
			var perValue float64
			for b.Loop() {
				s, _, n := realisticStoreAt(b, b.TempDir(), 1, 1000, 24*time.Hour, true, p)
				perValue = diskBytes(b, s) / float64(n)
				s.Close()
			}
			b.ReportMetric(perValue, "disk-B/value")
		})
	}
}

// TestDiskBytesTargets holds issue 10's size targets on the data of
// BenchmarkDiskBytesRealistic (a day of 1,000 realistic items in a
// compacted day block): at most 2.5 bytes per value at millisecond
// precision and 1.4 at whole seconds. The data are seeded, so the sizes
// are exact; a change in an encoder or the block format that costs bytes
// shows here. Skipped with -short (it writes 2.85M values twice).
func TestDiskBytesTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a day of 1,000 items twice")
	}
	if raceEnabled {
		// One goroutine encoding corpora: 11 minutes under the detector,
		// nothing for it to find; .ci/run runs it plainly.
		t.Skip("run without -race (see .ci/run)")
	}
	for _, c := range []struct {
		p      history.Precision
		target float64
	}{{history.PrecisionMS, 2.5}, {history.PrecisionS, 1.4}} {
		s, _, n := realisticStoreAt(t, t.TempDir(), 1, 1000, 24*time.Hour, true, c.p)
		got := diskBytes(t, s) / float64(n)
		s.Close()
		if got > c.target {
			t.Errorf("precision %v: %.3f bytes per value, target %.1f", c.p, got, c.target)
		}
		t.Logf("precision %v: %.3f bytes per value (target %.1f)", c.p, got, c.target)
	}
}
