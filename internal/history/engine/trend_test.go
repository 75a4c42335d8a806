package engine

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
)

// expectTrends is the reference: hourly aggregates of all values written.
func expectTrends(vals map[int64]float64) []Trend {
	by := map[int64]*Trend{}
	for ts, v := range vals {
		h := ts / 3600 * 3600
		if by[h] == nil {
			by[h] = &Trend{Clock: h, Min: math.Inf(1), Max: math.Inf(-1)}
		}
		t := by[h]
		t.Num++
		t.Sum += v
		t.Min, t.Max = math.Min(t.Min, v), math.Max(t.Max, v)
	}
	out := make([]Trend, 0, len(by))
	for _, t := range by {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Clock < out[j].Clock })
	return out
}

func TestTrendsAcrossHeadFlushesAndRestarts(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 16)
	vals := map[int64]float64{}
	write := func(from, to int64) {
		var batch []history.Sample
		for c := from; c < to; c += 60 {
			v := float64(c%977) / 10
			vals[c] = v
			batch = append(batch, history.Sample{ItemID: 7, Clock: c, Type: history.Float, F: v})
		}
		if err := s.Write(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	check := func(stage string) {
		t.Helper()
		got, err := s.ReadTrends(context.Background(), 7, 0, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		want := expectTrends(vals)
		if d := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); d != "" {
			t.Fatalf("%s: trends (-want +got):\n%s", stage, d)
		}
	}
	base := int64(1_699_999_200)  // an hour boundary
	write(base, base+3*3600+1800) // 3.5 hours
	check("head only")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	check("after flush")
	write(base+3*3600+1800, base+5*3600) // completes the half hour, 1.5 more hours
	check("flushed partial hour plus head")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, dir, 16)
	defer s.Close()
	check("after restart")
	// Range selection and a non-numeric item.
	got, _ := s.ReadTrends(context.Background(), 7, base+3600, base+2*3600)
	if len(got) != 2 || got[0].Clock != base+3600 {
		t.Fatalf("range: %+v", got)
	}
	if n, err := s.DropTrendsBefore(base + 86400*2); err != nil || n == 0 {
		t.Fatalf("DropTrendsBefore = %d, %v", n, err)
	}
	if got, _ := s.ReadTrends(context.Background(), 7, 0, 1<<40); len(got) != 0 {
		t.Fatalf("trends after dropping their day: %+v", got)
	}
	// History is independent of trend retention.
	if n := len(historytest.ReadAll(t, s, history.Query{ItemID: 7, From: 0, Till: 1 << 40})); n != len(vals) {
		t.Fatalf("history has %d values, want %d", n, len(vals))
	}
}

func TestFailedFlushKeepsEverythingReadable(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 8)
	defer s.Close()
	var batch []history.Sample
	for i := 0; i < 100; i++ {
		batch = append(batch, history.Sample{ItemID: uint64(i%4 + 1), Clock: 1_700_000_000 + int64(i), Type: history.Uint, U: uint64(i)})
	}
	if err := s.Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	// A file where the blocks directory should be makes the flush fail.
	if err := os.WriteFile(filepath.Join(dir, "blocks"), []byte("in the way"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err == nil {
		t.Fatal("flush succeeded with its directory blocked")
	}
	if err := s.Write(context.Background(), []history.Sample{{ItemID: 1, Clock: 1_700_000_000, Type: history.Uint, U: 999}}); err != nil {
		t.Fatal(err)
	}
	got := historytest.ReadAll(t, s, history.Query{ItemID: 1, From: 0, Till: 1 << 40})
	if len(got) != 25 || got[0].U != 999 {
		t.Fatalf("after a failed flush item 1 reads %d values, first %+v; want 25 with the newer write first", len(got), got[0])
	}
	os.Remove(filepath.Join(dir, "blocks"))
	if err := s.Flush(); err != nil {
		t.Fatalf("flush after the obstacle is gone: %v", err)
	}
	if got := historytest.ReadAll(t, s, history.Query{ItemID: 1, From: 0, Till: 1 << 40}); len(got) != 25 || got[0].U != 999 {
		t.Fatalf("after the retried flush: %d values", len(got))
	}
}
