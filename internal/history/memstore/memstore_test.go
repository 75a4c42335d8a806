package memstore

import (
	"context"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
)

func TestContract(t *testing.T) {
	historytest.Run(t, func(t *testing.T) history.Store { return New() })
}

// go test -run '^$' -bench . -count 6 ./internal/history/memstore/
func BenchmarkWrite(b *testing.B) {
	const batch = 4096
	s := New()
	v := make([]history.Sample, batch)
	b.ReportAllocs()
	clock := int64(0)
	for b.Loop() {
		clock++
		for i := range v {
			v[i] = history.Sample{ItemID: uint64(i), Clock: clock, Type: history.Float, F: float64(i)}
		}
		if err := s.Write(context.Background(), v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
}
