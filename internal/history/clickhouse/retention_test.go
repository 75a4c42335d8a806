package clickhouse

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestRetentionAndTrends: DropBefore drops whole day partitions and rolls
// numeric days up into trends first, so trends read the same before and
// after; DropTrendsBefore drops trend months. Hours are computed over the
// last write of each timestamp.
func TestRetentionAndTrends(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	s := openStore(t, ch, nil)
	ctx := context.Background()
	const day0 = 1704067200 // 2024-01-01 00:00 UTC
	var in []history.Sample
	for c := int64(day0); c < day0+3*86400; c += 600 {
		in = append(in, history.Sample{ItemID: 1, Clock: c, Type: history.Float, F: float64(c%7200) / 10})
		in = append(in, history.Sample{ItemID: 2, Clock: c, Type: history.Uint, U: uint64(c % 1000)})
		in = append(in, history.Sample{ItemID: 3, Clock: c, Type: history.Str, S: "x"})
	}
	if err := s.Write(ctx, in); err != nil {
		t.Fatal(err)
	}
	// A rewrite of one timestamp: the hour must count it once, with the
	// new value.
	if err := s.Write(ctx, []history.Sample{{ItemID: 1, Clock: day0, Type: history.Float, F: 1000}}); err != nil {
		t.Fatal(err)
	}
	in[0].F = 1000
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	want := map[uint64][]history.Trend{}
	for _, v := range in {
		if !v.Type.Numeric() {
			continue
		}
		f := v.F
		if v.Type == history.Uint {
			f = float64(v.U)
		}
		tr := want[v.ItemID]
		h := v.Clock / 3600 * 3600
		if n := len(tr); n > 0 && tr[n-1].Clock == h {
			tr[n-1].Num++
			tr[n-1].Min, tr[n-1].Max, tr[n-1].Sum = min(tr[n-1].Min, f), max(tr[n-1].Max, f), tr[n-1].Sum+f
		} else {
			tr = append(tr, history.Trend{Clock: h, Num: 1, Min: f, Max: f, Sum: f})
		}
		want[v.ItemID] = tr
	}
	check := func(stage string, from int64) {
		t.Helper()
		for _, id := range []uint64{1, 2} {
			got, err := s.ReadTrends(ctx, id, 0, day0+3*86400)
			if err != nil {
				t.Fatal(err)
			}
			var w []history.Trend
			for _, tr := range want[id] {
				if tr.Clock >= from {
					w = append(w, tr)
				}
			}
			if d := cmp.Diff(w, got); d != "" {
				t.Fatalf("%s: item %d trends (-want +got):\n%s", stage, id, d)
			}
		}
	}
	check("from history", 0)
	n, err := s.DropBefore(day0 + 2*86400)
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 { // two days of three tables
		t.Fatalf("dropped %d partitions, want 6", n)
	}
	var left int
	if err := s.Read(ctx, history.Query{ItemID: 3, From: 0, Till: maxClock}, func(v *history.Sample) bool {
		if v.Clock < day0+2*86400 {
			t.Fatalf("value at %d survived the drop", v.Clock)
		}
		left++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if left != 144 {
		t.Fatalf("item 3 keeps %d values, want the last day's 144", left)
	}
	check("rolled up", 0)
	if n, err := s.DropTrendsBefore(day0 + 31*86400); err != nil || n != 1 {
		t.Fatalf("DropTrendsBefore = %d, %v; want the one month", n, err)
	}
	check("trends dropped", day0+2*86400)
}

// TestSchemaVersion: a reopen applies nothing; a schema newer than this
// build is refused with a clear error.
func TestSchemaVersion(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	s := openStore(t, ch, nil)
	ctx := context.Background()
	v, err := s.c.queryString(ctx, "SELECT max(version) FROM "+s.db+".peregrine_schema")
	if err != nil || v != "2" {
		t.Fatalf("schema version %q, %v; want 2", v, err)
	}
	if s.Version().Major == 0 {
		t.Fatal("server version not detected")
	}
	s.Close()
	o := Options{URLs: []string{ch.URL}, Database: s.db, Dir: t.TempDir()}
	s2, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if err := s.c.exec(ctx, "INSERT INTO "+s.db+".peregrine_schema VALUES (99, now())"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, o); err == nil || !strings.Contains(err.Error(), "schema version 99, newer") {
		t.Fatalf("Open on a newer schema: %v", err)
	}
}

// TestTablesLookedUp: a store with an empty spool finds what an earlier
// run shipped, in every table an item used (a value type change), on the
// item's first read, for Read and ReadMany alike.
func TestTablesLookedUp(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	first := openStore(t, ch, nil)
	ctx := context.Background()
	in := []history.Sample{
		{ItemID: 7, Clock: 100, Type: history.Float, F: 1.5},
		{ItemID: 7, Clock: 200, Type: history.Str, S: "now a string"},
		{ItemID: 8, Clock: 150, Type: history.Log, S: "line", Log: &history.LogMeta{Source: "app", EventID: 3}},
	}
	if err := first.Write(ctx, in); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := first.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	first.Close()
	later := openStore(t, ch, func(o *Options) { o.Database = first.db })
	got := historytest.ReadAll(t, later, history.Query{ItemID: 7, From: 0, Till: 1000})
	if d := cmp.Diff(in[:2], got); d != "" {
		t.Fatalf("item 7 after a restart (-want +got):\n%s", d)
	}
	var many []history.Sample
	if err := later.ReadMany(ctx, []uint64{8, 7}, history.Query{From: 0, Till: 1000}, func(v *history.Sample) bool {
		c := *v
		if c.Log != nil {
			lm := *c.Log
			c.Log = &lm
		}
		many = append(many, c)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]history.Sample{in[2], in[0], in[1]}, many); d != "" {
		t.Fatalf("ReadMany after a restart (-want +got):\n%s", d)
	}
}

// TestNewestAcrossWindows: the newest values of an item are found
// whatever the gaps between them (newest reads growing windows back
// from till), merged with unshipped values, in order.
func TestNewestAcrossWindows(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	// Shipping only when Flush asks: the last write stays in the spool.
	s := openStore(t, ch, func(o *Options) { o.FlushInterval = time.Hour })
	ctx := context.Background()
	const till = 2_000_000_000
	var in []history.Sample
	for _, age := range []int64{5, 4000, 50_000, 3_000_000, 1_900_000_000} { // an hour, a day, a month, 60 years apart
		in = append(in, history.Sample{ItemID: 1, Clock: till - age, Type: history.Uint, U: uint64(age)})
	}
	if err := s.Write(ctx, in); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	// One more, not shipped, between the second and third.
	late := history.Sample{ItemID: 1, Clock: till - 10_000, Type: history.Uint, U: 10_000}
	if err := s.Write(ctx, []history.Sample{late}); err != nil {
		t.Fatal(err)
	}
	if s.Backlog() != 1 {
		t.Fatalf("backlog %d, want the one unshipped value", s.Backlog())
	}
	want := []history.Sample{in[0], in[1], late, in[2], in[3], in[4]}
	for limit := 1; limit <= 7; limit++ {
		got := historytest.ReadAll(t, s, history.Query{ItemID: 1, From: 0, Till: till + 100, Desc: true, Limit: limit})
		if d := cmp.Diff(want[:min(limit, len(want))], got); d != "" {
			t.Fatalf("newest %d (-want +got):\n%s", limit, d)
		}
	}
	if got := historytest.ReadAll(t, s, history.Query{ItemID: 1, From: till - 60_000, Till: till - 4500, Desc: true, Limit: 5}); !cmp.Equal(got, []history.Sample{late, in[2]}) {
		t.Fatalf("newest in a bounded range: %+v", got)
	}
}

// TestTablesLookedUpForManyItems: the lookup of which tables hold many
// items (long ids, more than one IN list's worth) stays within the
// server's max_query_size, and ReadMany finds every item after a restart.
func TestTablesLookedUpForManyItems(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	first := openStore(t, ch, nil)
	ctx := context.Background()
	const n = inChunk + 500
	items := make([]uint64, n)
	in := make([]history.Sample, n)
	for i := range items {
		items[i] = 1e18 + uint64(i)*7919 // 19 digits
		in[i] = history.Sample{ItemID: items[i], Clock: 1000, Type: history.Uint, U: uint64(i)}
	}
	if err := first.Write(ctx, in); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := first.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	first.Close()
	later := openStore(t, ch, func(o *Options) { o.Database = first.db })
	got := 0
	if err := later.ReadMany(ctx, items, history.Query{From: 0, Till: 2000}, func(v *history.Sample) bool {
		if v.ItemID != items[got] || v.U != uint64(got) {
			t.Fatalf("value %d: %+v, want item %d", got, *v, items[got])
		}
		got++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Fatalf("ReadMany of %d items after a restart gave %d values", n, got)
	}
}
