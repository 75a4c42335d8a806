package engine

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
)

func TestChunkWindow(t *testing.T) {
	day := int64(24 * time.Hour)
	f := func(interval time.Duration, want time.Duration) {
		t.Helper()
		n := int(day / int64(interval))
		if got := chunkWindow(n, day); got != int64(want) {
			t.Errorf("one value every %v (%d a day): window %v, want %v", interval, n, time.Duration(got), want)
		}
	}
	f(time.Second, time.Hour)
	f(10*time.Second, time.Hour)
	f(30*time.Second, time.Hour)
	f(time.Minute, 2*time.Hour)
	f(5*time.Minute, 12*time.Hour)
	f(time.Hour, 24*time.Hour)
	// An item faster than the value bound per hour gets no window: the
	// bound cuts it (a one-second item: 2,048-value chunks, not 2,048 +
	// 1,552 an hour); one just below it gets hours.
	perSecond := &buf{ts: make([]int64, 86400)}
	if w := ownWindow(perSecond, day, 2048); w != 0 {
		t.Errorf("one value a second, bound 2048: window %v, want none", time.Duration(w))
	}
	if w := ownWindow(perSecond, day, 3601); w != int64(time.Hour) {
		t.Errorf("one value a second, bound 3601: window %v, want 1h", time.Duration(w))
	}
	// A burst of values in a few seconds: the rate is taken over at least
	// an hour, not extrapolated from the burst.
	if got := chunkWindow(3, int64(time.Second)); got != int64(24*time.Hour) {
		t.Errorf("3 values in 1 s: window %v, want a day", time.Duration(got))
	}
}

// TestCutChunks: chunks stay inside their aligned window and under the
// value bound, and together hold exactly the input.
func TestCutChunks(t *testing.T) {
	g := historytest.Realistic(3, 30, 26*time.Hour)
	for i, it := range g.Items {
		if it.Type != history.Float && it.Type != history.Uint {
			continue
		}
		all := &buf{}
		for _, s := range g.Series(i) {
			all.insert(it.Type, s.Clock*1e9+int64(s.NS), &s)
		}
		win := ownWindow(all, int64(DayPartition), 300)
		got := &buf{}
		r := reader{vt: it.Type, lo: -1 << 63, hi: 1<<63 - 1, collect: got, late: &buf{}}
		cutChunks(it.Type, all, win, 300, func(c chunk) {
			if c.n > 300 {
				t.Fatalf("item %d: chunk of %d values, bound 300", it.ID, c.n)
			}
			if win > 0 && floorDiv(c.minT, win) != floorDiv(c.maxT, win) {
				t.Fatalf("item %d (every %d s): chunk %v..%v crosses a %v window", it.ID, it.Interval, time.Unix(0, c.minT).UTC(), time.Unix(0, c.maxT).UTC(), time.Duration(win))
			}
			if _, err := r.piece(&piece{lower: c.minT - 1, upper: c.maxT, data: c.data}, false); err != nil {
				t.Fatal(err)
			}
		})
		if d := cmp.Diff(all.ts, got.ts); d != "" {
			t.Fatalf("item %d: timestamps after cutting (-in +out):\n%s", it.ID, d)
		}
		if d := cmp.Diff(all.num, got.num); d != "" {
			t.Fatalf("item %d: values after cutting (-in +out):\n%s", it.ID, d)
		}
	}
}

// TestShortReadDecodesItsWindow: after compaction, a one-minute item's
// day is in two-hour chunks, so an hour's read touches at most two of
// them, and reads back what was written.
func TestShortReadDecodesItsWindow(t *testing.T) {
	s := open(t, t.TempDir(), 0)
	defer s.Close()
	const start = historytest.RealisticStart
	var in []history.Sample
	for i := int64(0); i < 1440; i++ {
		in = append(in, history.Sample{ItemID: 5, Clock: start + 60*i, NS: int32(i * 7919), Type: history.Float, F: float64(i) / 4})
	}
	if err := s.Write(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Compact(context.Background(), time.Unix(start+3*86400, 0), nil); err != nil || n != 1 {
		t.Fatalf("Compact: %d days, %v", n, err)
	}
	blocks, _ := s.acquireBlocks(5, -1<<63, 1<<63-1)
	defer func() {
		for _, b := range blocks {
			b.release()
		}
	}()
	if len(blocks) != 1 {
		t.Fatalf("%d blocks after compaction, want one day block", len(blocks))
	}
	chunks := blocks[0].index[5].chunks
	if len(chunks) != 12 {
		t.Fatalf("a day of one-minute values in %d chunks, want 12 two-hour ones", len(chunks))
	}
	lo, hi := nanos(start+5*3600+1800), nanos(start+6*3600+1800)
	touched := 0
	for _, c := range chunks {
		if c.maxT >= lo && c.minT < hi {
			touched++
		}
	}
	if touched > 2 {
		t.Fatalf("an hour's read touches %d chunks", touched)
	}
	got := historytest.ReadAll(t, s, history.Query{ItemID: 5, From: start + 5*3600 + 1800, Till: start + 6*3600 + 1800 - 1})
	if d := cmp.Diff(in[330:390], got); d != "" {
		t.Fatalf("hour read (-want +got):\n%s", d)
	}
}
