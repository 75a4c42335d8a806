package historytest

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// writeRealistic writes g's whole set in one-minute batches, flushing
// (for stores that flush) every flushEvery batches, and returns the
// number of values.
func writeRealistic(t *testing.T, s history.Store, g *Gen, flushEvery int) int {
	t.Helper()
	var b []history.Sample
	n := 0
	for k := 1; ; k++ {
		var ok bool
		if b, ok = g.Next(b[:0], time.Minute); !ok {
			return n
		}
		if len(b) > 0 {
			write(t, s, b)
		}
		n += len(b)
		if flushEvery > 0 && k%flushEvery == 0 {
			flush(t, s)
		}
	}
}

// runRealistic: the realistic data set reads back equal, value for value
// and timestamp for timestamp, from wherever the store keeps it.
func runRealistic(t *testing.T, open Opener) {
	s := open(t)
	g := Realistic(11, 60, 5*time.Hour)
	if n := writeRealistic(t, s, g, 97); n != g.Count() {
		t.Fatalf("wrote %d values, the set has %d", n, g.Count())
	}
	for i, it := range g.Items {
		want := g.Series(i)
		got := ReadAll(t, s, history.Query{ItemID: it.ID, From: g.Start, Till: g.End})
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("item %d (%v every %d s) (-written +read):\n%s", it.ID, it.Kind, it.Interval, d)
		}
	}
}

// runReadMany: history.ReadMany (the store's BatchReader or the generic
// one) gives exactly one Read per item, concatenated, for every range,
// order and limit, and stops when the callback says so; history.CountMany
// counts exactly that many (or, with a max, stops past it).
func runReadMany(t *testing.T, open Opener) {
	s := open(t)
	g := Realistic(5, 40, 4*time.Hour)
	writeRealistic(t, s, g, 61)
	// Late values into an already flushed range, and a type change, so
	// that reads also merge sources.
	late := g.Series(0)[10:20]
	for i := range late {
		late[i].NS = (late[i].NS + 1) % 1e9
	}
	write(t, s, late)
	write(t, s, []history.Sample{{ItemID: 3, Clock: g.Start + 3600, Type: history.Str, S: "now text"}})

	items := []uint64{4, 1, 2, 3, 999, 2}
	for i := range g.Items {
		items = append(items, g.Items[i].ID)
	}
	type rng struct{ from, till int64 }
	for _, r := range []rng{{g.Start, g.End}, {g.Start + 3600 + 17, g.Start + 7200 + 16}, {g.Start + 5000, g.Start + 5059}, {g.End + 10, g.End + 20}, {g.Start + 10, g.Start + 9}} {
		for _, desc := range []bool{false, true} {
			for _, limit := range []int{0, 1, 7} {
				q := history.Query{From: r.from, Till: r.till, Desc: desc, Limit: limit}
				name := fmt.Sprintf("from=%d till=%d desc=%v limit=%d", r.from-g.Start, r.till-g.Start, desc, limit)
				var want []history.Sample
				for _, id := range items {
					q.ItemID = id
					want = append(want, ReadAll(t, s, q)...)
				}
				got := readMany(t, s, items, q, -1)
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("%s: ReadMany differs from one Read per item (-read +readmany):\n%s", name, d)
				}
				n, err := history.CountMany(context.Background(), s, items, q, 0)
				if err != nil || n != len(want) {
					t.Fatalf("%s: CountMany = %d, %v; ReadMany gives %d", name, n, err, len(want))
				}
				if n, err := history.CountMany(context.Background(), s, items, q, 3); err != nil || (len(want) <= 3 && n != len(want)) || (len(want) > 3 && n <= 3) {
					t.Fatalf("%s: CountMany with max 3 = %d, %v; ReadMany gives %d", name, n, err, len(want))
				}
				if len(want) > 5 {
					if got := readMany(t, s, items, q, 5); !cmp.Equal(want[:5], got) {
						t.Fatalf("%s: stopping after 5 samples gave %d: %+v", name, len(got), got)
					}
				}
			}
		}
	}
	if nr, ok := s.(history.NewestReader); ok {
		checkNewest(t, s, nr, items)
	}
}

// checkNewest: a NewestReader gives each item with values once, with
// what a newest-first Read over all time limited to n gives, and stops
// when told.
func checkNewest(t *testing.T, s history.Store, nr history.NewestReader, items []uint64) {
	t.Helper()
	for _, n := range []int{1, 2, 7} {
		want := map[uint64][]history.Sample{}
		for _, id := range items {
			if v := ReadAll(t, s, history.Query{ItemID: id, From: math.MinInt64, Till: math.MaxInt64 - 1, Desc: true, Limit: n}); len(v) > 0 {
				want[id] = v
			}
		}
		got := map[uint64][]history.Sample{}
		calls := 0
		err := nr.ReadNewest(context.Background(), items, n, func(v []history.Sample) bool {
			calls++
			if len(v) == 0 {
				t.Errorf("newest %d: an empty slice", n)
				return true
			}
			if _, dup := got[v[0].ItemID]; dup {
				t.Errorf("newest %d: item %d given twice", n, v[0].ItemID)
			}
			for i := range v {
				c := v[i]
				if c.Log != nil {
					lm := *c.Log
					c.Log = &lm
				}
				got[v[0].ItemID] = append(got[v[0].ItemID], c)
			}
			return true
		})
		if err != nil {
			t.Fatalf("ReadNewest(%d): %v", n, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("ReadNewest(%d) differs from a newest-first Read per item (-read +newest):\n%s", n, d)
		}
		calls = 0
		if err := nr.ReadNewest(context.Background(), items, n, func([]history.Sample) bool { calls++; return calls < 2 }); err != nil || (len(want) >= 2 && calls != 2) {
			t.Fatalf("ReadNewest(%d) told to stop after 2 items: %d calls, %v", n, calls, err)
		}
	}
}

// readMany collects history.ReadMany's samples, stopping after stop
// samples when stop ≥ 0.
func readMany(t *testing.T, s history.Store, items []uint64, q history.Query, stop int) []history.Sample {
	t.Helper()
	var out []history.Sample
	err := history.ReadMany(context.Background(), s, items, q, func(v *history.Sample) bool {
		c := *v
		if c.Log != nil {
			lm := *c.Log
			c.Log = &lm
		}
		out = append(out, c)
		return stop < 0 || len(out) < stop
	})
	if err != nil {
		t.Fatalf("ReadMany(%v, %+v): %v", items, q, err)
	}
	return out
}
