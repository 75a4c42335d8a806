package historytest

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// The read benchmarks' data sets (internal/api's history.get benchmarks
// through HTTP, internal/api/histread's of the read engine alone), written
// once here so that both measure reads of the same data.

// FillGauge writes n values of item id to w, one a second from start: a
// slowly varying gauge with two decimals, in writes of 16,384. A store
// that is a history.Flusher and a history.Compactor is then flushed and
// compacted as of three days after the last value, so the values are
// read from day blocks, as a server leaves data older than a day.
func FillGauge(tb testing.TB, w history.Writer, id uint64, start int64, n int) {
	tb.Helper()
	level := 20.0
	batch := make([]history.Sample, 0, 16384)
	for i := range n {
		level += math.Sin(float64(i)/50) / 20
		batch = append(batch, history.Sample{ItemID: id, Clock: start + int64(i), Type: history.Float, F: math.Round(level*100) / 100})
		if len(batch) == cap(batch) || i == n-1 {
			if err := w.Write(context.Background(), batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	compact(tb, w, time.Unix(start+int64(n)+3*86400, 0))
}

// Gauges returns the IDs of the first n gauges of g's items (fewer if it
// has fewer), in g.Items' order.
func (g *Gen) Gauges(n int) []uint64 {
	var ids []uint64
	for _, it := range g.Items {
		if it.Kind == Gauge && len(ids) < n {
			ids = append(ids, it.ID)
		}
	}
	return ids
}

// FillItems writes g's values of the items in as (generator ID → the ID
// to store them under) to w, a minute of data per write, and, when w is
// a history.Flusher, flushes it after every two hours of data; a store
// that is also a history.Compactor is then compacted as of two days after
// g.End. Other items' values are left out.
func FillItems(tb testing.TB, w history.Writer, g *Gen, as map[uint64]uint64) {
	tb.Helper()
	f, _ := w.(history.Flusher)
	var buf, out []history.Sample
	for k := 1; ; k++ {
		var ok bool
		if buf, ok = g.Next(buf[:0], time.Minute); !ok {
			break
		}
		out = out[:0]
		for _, s := range buf {
			if id, ok := as[s.ItemID]; ok {
				s.ItemID = id
				out = append(out, s)
			}
		}
		if err := w.Write(context.Background(), out); err != nil {
			tb.Fatal(err)
		}
		if f != nil && k%120 == 0 {
			if err := f.Flush(); err != nil {
				tb.Fatal(err)
			}
		}
	}
	compact(tb, w, time.Unix(g.End+2*86400, 0))
}

// compact flushes w and compacts it as of now, as far as w can.
func compact(tb testing.TB, w history.Writer, now time.Time) {
	tb.Helper()
	if f, ok := w.(history.Flusher); ok {
		if err := f.Flush(); err != nil {
			tb.Fatal(err)
		}
	}
	if c, ok := w.(history.Compactor); ok {
		if _, err := c.Compact(context.Background(), now, nil); err != nil {
			tb.Fatal(err)
		}
	}
}
