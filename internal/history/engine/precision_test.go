package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// TestPrecision: timestamps are cut to the item's precision (its own or
// the store's) when written, the same in the head, after a flush and
// after a restart; values cut onto one timestamp keep the last; the
// caller's batch is not modified.
func TestPrecision(t *testing.T) {
	dir := t.TempDir()
	per := map[uint64]history.Precision{2: history.PrecisionMS, 3: history.PrecisionS, 4: history.PrecisionNS}
	opts := Options{Dir: dir, Sync: wal.SyncNever, ChunkValues: 16, Precision: history.PrecisionUS,
		ItemPrecision: func(id uint64) (history.Precision, bool) { p, ok := per[id]; return p, ok }}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	in := []history.Sample{
		{ItemID: 1, Clock: 100, NS: 123_456_789, Type: history.Float, F: 1}, // store default: us
		{ItemID: 2, Clock: 100, NS: 123_456_789, Type: history.Float, F: 2}, // ms
		{ItemID: 3, Clock: 100, NS: 123_456_789, Type: history.Float, F: 3}, // s
		{ItemID: 3, Clock: 100, NS: 999_999_999, Type: history.Float, F: 4}, // s: same second, later write wins
		{ItemID: 3, Clock: 101, NS: 5, Type: history.Float, F: 5},
		{ItemID: 4, Clock: 100, NS: 123_456_789, Type: history.Float, F: 6}, // ns: exact
	}
	orig := append([]history.Sample(nil), in...)
	if err := s.Write(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(orig, in); d != "" {
		t.Fatalf("Write modified the caller's batch (-before +after):\n%s", d)
	}
	want := map[uint64][]history.Sample{
		1: {{ItemID: 1, Clock: 100, NS: 123_456_000, Type: history.Float, F: 1}},
		2: {{ItemID: 2, Clock: 100, NS: 123_000_000, Type: history.Float, F: 2}},
		3: {{ItemID: 3, Clock: 100, Type: history.Float, F: 4}, {ItemID: 3, Clock: 101, Type: history.Float, F: 5}},
		4: {{ItemID: 4, Clock: 100, NS: 123_456_789, Type: history.Float, F: 6}},
	}
	check := func(what string) {
		t.Helper()
		for id, w := range want {
			got := historytest.ReadAll(t, s, history.Query{ItemID: id, From: 0, Till: 1000})
			if d := cmp.Diff(w, got); d != "" {
				t.Fatalf("%s: item %d (-want +got):\n%s", what, id, d)
			}
		}
	}
	check("head")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(opts); err != nil {
		t.Fatal(err)
	}
	check("after a restart (WAL replay)")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	check("after a flush")
	s.Close()
}

// TestPrecisionChange: changing an item's precision applies to values
// written afterwards; values already stored keep their timestamps, in
// blocks and through compaction.
func TestPrecisionChange(t *testing.T) {
	dir := t.TempDir()
	p := history.PrecisionNS
	opts := Options{Dir: dir, Sync: wal.SyncNever,
		ItemPrecision: func(uint64) (history.Precision, bool) { return p, true }}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	const day = historytest.RealisticStart
	write := func(clock int64, ns int32, v float64) {
		t.Helper()
		if err := s.Write(t.Context(), []history.Sample{{ItemID: 1, Clock: clock, NS: ns, Type: history.Float, F: v}}); err != nil {
			t.Fatal(err)
		}
	}
	write(day+10, 111_222_333, 1)
	write(day+20, 444_555_666, 2)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	p = history.PrecisionS // coarser
	write(day+30, 777_888_999, 3)
	write(day+40, 5, 4)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	p = history.PrecisionMS // finer again
	write(day+50, 123_456_789, 5)
	want := []history.Sample{
		{ItemID: 1, Clock: day + 10, NS: 111_222_333, Type: history.Float, F: 1},
		{ItemID: 1, Clock: day + 20, NS: 444_555_666, Type: history.Float, F: 2},
		{ItemID: 1, Clock: day + 30, Type: history.Float, F: 3},
		{ItemID: 1, Clock: day + 40, Type: history.Float, F: 4},
		{ItemID: 1, Clock: day + 50, NS: 123_000_000, Type: history.Float, F: 5},
	}
	got := historytest.ReadAll(t, s, history.Query{ItemID: 1, From: day, Till: day + 100})
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(t.Context(), time.Unix(day+3*86400, 0), nil); err != nil {
		t.Fatal(err)
	}
	got = historytest.ReadAll(t, s, history.Query{ItemID: 1, From: day, Till: day + 100})
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("after compaction (-want +got):\n%s", d)
	}
}

// TestRealisticAtPrecision: the realistic data set reads back equal at
// each precision, every timestamp cut to it, from the head and from
// blocks.
func TestRealisticAtPrecision(t *testing.T) {
	for _, p := range []history.Precision{history.PrecisionUS, history.PrecisionMS, history.PrecisionS} {
		t.Run(p.String(), func(t *testing.T) {
			s, err := Open(Options{Dir: t.TempDir(), Sync: wal.SyncNever, Precision: p})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			g := historytest.Realistic(21, 40, 3*time.Hour)
			var b []history.Sample
			for k := 1; ; k++ {
				var ok bool
				if b, ok = g.Next(b[:0], time.Minute); !ok {
					break
				}
				if err := s.Write(t.Context(), b); err != nil {
					t.Fatal(err)
				}
				if k == 100 {
					if err := s.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i, it := range g.Items {
				want := g.Series(i)
				for k := range want {
					want[k].NS = p.TruncateNS(want[k].NS)
				}
				got := historytest.ReadAll(t, s, history.Query{ItemID: it.ID, From: g.Start, Till: g.End})
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("item %d (-want +got):\n%s", it.ID, d)
				}
			}
		})
	}
}
