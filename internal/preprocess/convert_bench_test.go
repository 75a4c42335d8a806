package preprocess

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// go test -run '^$' -bench Convert -count 6 ./internal/preprocess/
//
// BenchmarkConvert converts a batch of 1,000 generated values of one
// value type per operation, as a sender's request would carry them.
func BenchmarkConvert(b *testing.B) {
	const n = 1000
	rng := rand.New(rand.NewPCG(1, 2))
	gen := map[string]func() string{
		"float": func() string { return strconv.FormatFloat(rng.NormFloat64()*1000, 'f', 3, 64) },
		"uint":  func() string { return strconv.FormatUint(rng.Uint64N(1<<40), 10) },
		"str":   func() string { return "status " + strconv.Itoa(rng.IntN(1000)) },
	}
	types := map[string]history.ValueType{"float": history.Float, "uint": history.Uint, "str": history.Str}
	for _, name := range []string{"float", "uint", "str"} {
		vals := make([][]byte, n)
		size := 0
		for i := range vals {
			vals[i] = []byte(gen[name]())
			size += len(vals[i])
		}
		vt := types[name]
		b.Run("vt="+name, func(b *testing.B) {
			var s history.Sample
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, v := range vals {
					if err := Convert(vt, v, &s); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/value")
		})
	}
}
