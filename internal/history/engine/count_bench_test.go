package engine

import (
	"context"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// go test -run '^$' -bench 'ReadManyItems' ./internal/history/engine/
//
// BenchmarkReadManyItems reads 300k items of 9 values each from the head,
// one Read per item, as history.get countOutput over many hosts does:
// the per-read overhead, not decoding, is what it measures.
func BenchmarkReadManyItems(b *testing.B) {
	const items, per = 300_000, 9
	s := open(b, b.TempDir(), 0)
	defer s.Close()
	batch := make([]history.Sample, 0, items)
	for v := 0; v < per; v++ {
		batch = batch[:0]
		for i := 1; i <= items; i++ {
			batch = append(batch, history.Sample{ItemID: uint64(i), Clock: 1_700_000_000 + int64(v), Type: history.Float, F: float64(v)})
		}
		if err := s.Write(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for i := 1; i <= items; i++ {
			s.Read(context.Background(), history.Query{ItemID: uint64(i), From: 0, Till: 1 << 40}, func(*history.Sample) bool { n++; return true })
		}
		if n != items*per {
			b.Fatalf("read %d", n)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/items, "ns/item")
}
