package record

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// benchBatch returns 1000 realistic samples of type vt: items out of 100k,
// one clock second, random ns, gauges as random walks.
func benchBatch(vt history.ValueType) []history.Sample {
	r := rand.New(rand.NewPCG(42, 42))
	out := make([]history.Sample, 1000)
	v := 500.0
	for i := range out {
		v += r.NormFloat64()
		s := history.Sample{ItemID: 1 + r.Uint64N(100_000), Clock: 1_790_000_000, NS: r.Int32N(1e9), Type: vt}
		switch vt {
		case history.Float:
			s.F = v
		case history.Uint:
			s.U = uint64(r.Int64N(1 << 40))
		default:
			s.S = fmt.Sprintf("GET /api/v1/items/%d 200 %dms", r.IntN(1e6), r.IntN(1000))
		}
		out[i] = s
	}
	return out
}

var benchTypes = []struct {
	name string
	vt   history.ValueType
}{{"float", history.Float}, {"uint", history.Uint}, {"text", history.Text}}

// go test -run '^$' -bench 'Samples' -benchmem -count 6 ./internal/history/record/
func BenchmarkAppendSamples(b *testing.B) {
	for _, bt := range benchTypes {
		b.Run("vals="+bt.name, func(b *testing.B) {
			samples := benchBatch(bt.vt)
			buf := AppendSamples(nil, samples)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendSamples(buf[:0], samples)
			}
			b.ReportMetric(float64(len(samples))*float64(b.N)/b.Elapsed().Seconds(), "values/s")
			b.ReportMetric(float64(len(buf))/float64(len(samples)), "bytes/value")
		})
	}
}

func BenchmarkDecodeSamples(b *testing.B) {
	for _, bt := range benchTypes {
		b.Run("vals="+bt.name, func(b *testing.B) {
			samples := benchBatch(bt.vt)
			buf := AppendSamples(nil, samples)
			dst := make([]history.Sample, 0, len(samples))
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, err = DecodeSamples(dst[:0], buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(samples))*float64(b.N)/b.Elapsed().Seconds(), "values/s")
			b.ReportMetric(float64(len(buf))/float64(len(samples)), "bytes/value")
		})
	}
}
