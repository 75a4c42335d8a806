package preprocess

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// fanoutDoc builds a ~100 KB document shaped like zabbix_agent2's or an
// exporter's JSON (an array of objects with names, numbers and nested
// labels) from a fixed seed, and returns how many objects it has.
func fanoutDoc() (string, int) {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString(`{"data":[`)
	n := 0
	for ; b.Len() < 100<<10; n++ {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"metric_` + strconv.Itoa(n) + `","value":` + strconv.FormatFloat(r.Float64()*1000, 'f', 3, 64) +
			`,"labels":{"instance":"host-` + strconv.Itoa(r.IntN(50)) + `","state":"` + []string{"up", "down"}[r.IntN(2)] + `"}}`)
	}
	b.WriteString(`]}`)
	return b.String(), n
}

// BenchmarkFanout100K runs the common template pattern: one 100 KB JSON
// master value feeding 100 dependent items, each with its own JSONPath
// step (a different member each), with one Cache shared by the 100
// chains (as the pipeline does: one parse per master value) and without
// (a parse per dependent). values/s counts dependent values.
//
//	go test -run '^$' -bench Fanout100K -count 6 ./internal/preprocess/
func BenchmarkFanout100K(b *testing.B) {
	doc, n := fanoutDoc()
	const deps = 100
	chains := make([][]Step, deps)
	for i := range chains {
		s, err := ParseStep("12", `$.data[`+strconv.Itoa(i*n/deps)+`].value`, "0", "")
		if err != nil {
			b.Fatal(err)
		}
		chains[i] = []Step{s}
	}
	for _, cached := range []bool{true, false} {
		b.Run("cache="+strconv.FormatBool(cached), func(b *testing.B) {
			var c Cache
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				in := Input{Text: doc, Type: history.Float}
				if cached {
					c.Reset(doc)
					in.Cache = &c
				}
				for _, ch := range chains {
					if out, err := Run(ch, in, nil); err != nil || out.Text == "" {
						b.Fatalf("%+v, %v", out, err)
					}
				}
			}
			b.ReportMetric(float64(deps)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
	}
}
