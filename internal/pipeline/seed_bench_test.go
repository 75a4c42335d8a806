package pipeline

import (
	"context"
	"strconv"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
)

// BenchmarkSeed restores last/prev for every item of an engine store whose
// values are half in blocks (flushed) and half in the head: the cost a
// restart adds before the server listens.
//
// go test -run '^$' -bench Seed -benchtime 3x -count 6 ./internal/pipeline/
func BenchmarkSeed(b *testing.B) {
	for _, items := range []int{10_000, 100_000} {
		b.Run("items="+strconv.Itoa(items), func(b *testing.B) {
			st, err := engine.Open(engine.Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ids := make([]uint64, items)
			vals := make([]history.Sample, 0, items)
			for round := int64(0); round < 8; round++ {
				vals = vals[:0]
				for i := range ids {
					ids[i] = uint64(i + 1)
					vals = append(vals, history.Sample{ItemID: ids[i], Clock: 1_700_000_000 + round*60, Type: history.Float, F: float64(round)})
				}
				if err := st.Write(context.Background(), vals); err != nil {
					b.Fatal(err)
				}
				if round == 3 {
					if err := st.Flush(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p, err := New(Options{Shards: 2, Store: discard{}})
				if err != nil {
					b.Fatal(err)
				}
				n, err := p.Seed(context.Background(), st, ids)
				if err != nil || n != items {
					b.Fatalf("Seed = %d, %v", n, err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/float64(items)*1e9, "ns/item")
		})
	}
}
