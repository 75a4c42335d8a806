package preprocess

import (
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// BenchmarkRunChain runs the typical two-step chain of the templates
// (custom multiplier, then discard unchanged with heartbeat) on changing
// values, one State per item as the pipeline will keep it.
//
//	go test -run '^$' -bench RunChain -count 6 ./internal/preprocess/
func BenchmarkRunChain(b *testing.B) {
	chain := []Step{}
	for _, p := range [][2]string{{"1", "8"}, {"20", "1h"}} {
		s, err := ParseStep(p[0], p[1], "0", "")
		if err != nil {
			b.Fatal(err)
		}
		chain = append(chain, s)
	}
	const items = 1024
	states := make([]State, items)
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = strconv.Itoa(i * 1000)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		in := Input{Text: texts[i%len(texts)], Time: t0.Add(time.Duration(i) * time.Second), Type: history.Uint}
		if _, err := Run(chain, in, &states[i%items]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "values/s")
}
