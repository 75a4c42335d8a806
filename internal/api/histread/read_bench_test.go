package histread

import (
	"bufio"
	"context"
	"io"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// The read engine alone, without HTTP and JSON-RPC: internal/api's
// BenchmarkHistoryGet* measure the same reads through the whole API.

// benchStart is the clock of the first value of the one-item benchmarks.
const benchStart = 1_600_000_000

// oneItemStore returns an embedded engine holding one float item (id 1)
// with n values, a slowly varying gauge with two decimals, one a second,
// compacted into day blocks.
func oneItemStore(b *testing.B, n int) history.Reader {
	eng := openEngine(b)
	historytest.FillGauge(b, eng, 1, benchStart, n)
	return eng
}

// manyItemsStore returns an embedded engine holding a day of the first
// n gauges of the realistic data set (historytest.Realistic, seed 1),
// flushed every two hours of data and compacted into a day block, with
// their ids ascending.
func manyItemsStore(b *testing.B, n int) (history.Reader, []uint64, *historytest.Gen) {
	g := historytest.Realistic(1, n*3, 24*time.Hour) // gauges are 45 % of the set
	ids := g.Gauges(n)
	if len(ids) < n {
		b.Fatalf("the set has %d gauges, want %d", len(ids), n)
	}
	as := map[uint64]uint64{}
	for _, id := range ids {
		as[id] = id
	}
	eng := openEngine(b)
	historytest.FillItems(b, eng, g, as)
	slices.Sort(ids)
	return eng, ids, g
}

// openEngine opens an embedded engine in a temporary directory, closed
// when the benchmark ends.
func openEngine(b *testing.B) *engine.Store {
	eng, err := engine.Open(engine.Options{Dir: b.TempDir(), Sync: wal.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	return eng
}

// benchRead plans and runs req once per iteration, writing the answer
// through a response-sized buffer to io.Discard, and reports the time
// per row. B/op must not grow with the rows.
func benchRead(b *testing.B, r *Reader, req Request) {
	w := bufio.NewWriterSize(io.Discard, 256<<10)
	cw := &countWriter{}
	rows := 0
	b.ReportAllocs()
	for b.Loop() {
		run, err := r.Plan(req).Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		cw.n = 0
		w.Reset(cw)
		if err := run(w); err != nil {
			b.Fatal(err)
		}
		w.Flush()
		rows = cw.rows
		cw.rows = 0
	}
	if rows == 0 {
		b.Fatal("no rows")
	}
	b.SetBytes(int64(cw.n))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
}

// countWriter counts the bytes and rows ('{') written.
type countWriter struct{ n, rows int }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	for _, x := range p {
		if x == '{' {
			c.rows++
		}
	}
	return len(p), nil
}

// go test -run '^$' -bench 'Read' -benchmem -count 6 ./internal/api/histread/
//
// BenchmarkReadOneItem reads one float item's 1M values from day blocks:
// all of them ascending (no limit, so through the prefetch buffer, as
// Grafana asks for raw history), and the newest 500k (sortorder DESC
// with a limit, streamed, as Zabbix's pages ask).
func BenchmarkReadOneItem(b *testing.B) {
	const n = 1_000_000
	r := New(Options{Store: oneItemStore(b, n), MaxRows: 10_000_000, PrefetchRows: 4 << 20})
	b.Run("rows=1000000/prefetch", func(b *testing.B) {
		benchRead(b, r, Request{Items: []uint64{1}, Type: history.Float, Fields: AllFields, ByClock: true})
	})
	b.Run("rows=500000/newest", func(b *testing.B) {
		benchRead(b, r, Request{Items: []uint64{1}, Type: history.Float, Fields: AllFields, ByClock: true, Desc: true, Limit: 500_000})
	})
}

// go test -run '^$' -bench 'ReadManyItems' -benchmem -count 6 ./internal/api/histread/
//
// BenchmarkReadManyItems is the dashboard pattern: one read of 5,000
// float items over an hour of compacted day blocks of the realistic
// data set, item by item (read in parts at once) and merged by clock
// (Grafana's Zabbix plugin).
func BenchmarkReadManyItems(b *testing.B) {
	st, ids, g := manyItemsStore(b, 5000)
	r := New(Options{Store: st, MaxRows: 10_000_000, PrefetchRows: 4 << 20})
	from := g.Start + 12*3600 + 17
	for _, byClock := range []bool{false, true} {
		b.Run("items=5000/range=3600s/byclock="+strconv.FormatBool(byClock), func(b *testing.B) {
			benchRead(b, r, Request{Items: ids, Type: history.Float, Fields: AllFields, From: from, Till: from + 3599, HasFrom: true, HasTill: true, ByClock: byClock})
		})
	}
}
