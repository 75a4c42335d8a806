package jsonpath

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// doc100k builds a ~100 KB document shaped like zabbix_agent2's or an
// exporter's JSON: an array of objects with names, numbers and nested
// labels, from a fixed seed.
func doc100k() string {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := 0; b.Len() < 100<<10; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"metric_` + strconv.Itoa(i) + `","value":` + strconv.FormatFloat(r.Float64()*1000, 'f', 3, 64) +
			`,"labels":{"instance":"host-` + strconv.Itoa(r.IntN(50)) + `","state":"` + []string{"up", "down"}[r.IntN(2)] + `"}}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkQuery100K runs one JSONPath on a 100 KB value, the common
// template pattern (one master value, many dependent items).
//
//	go test -run '^$' -bench Query100K -benchtime 200x -count 6 ./internal/preprocess/jsonpath/
func BenchmarkQuery100K(b *testing.B) {
	doc := doc100k()
	for _, path := range []string{`$.data[10].value`, `$.data[?(@.name == "metric_500")].value.first()`, `$..value.sum()`} {
		b.Run("path="+path, func(b *testing.B) {
			p, err := Compile(path)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := p.Query(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
