package pipeline

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// go test -run '^$' -bench Dependents100K -count 6 ./internal/pipeline/
//
// BenchmarkDependents100K submits one ~100 KB JSON value (an array of
// objects, as zabbix_agent2's or an exporter's) per operation for a
// master item with 100 dependent items, each taking one member with a
// JSONPath step, through the shard into a discarding store: the
// template pattern the issue asks to be cheap. The master's document is
// parsed once per value for all 100 dependents (preprocess.Cache).
// values/s counts the dependents' values.
func BenchmarkDependents100K(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var doc strings.Builder
	doc.WriteString(`{"data":[`)
	n := 0
	for ; doc.Len() < 100<<10; n++ {
		if n > 0 {
			doc.WriteByte(',')
		}
		doc.WriteString(`{"name":"metric_` + strconv.Itoa(n) + `","value":` + strconv.FormatFloat(r.Float64()*1000, 'f', 3, 64) +
			`,"labels":{"instance":"host-` + strconv.Itoa(r.IntN(50)) + `"}}`)
	}
	doc.WriteString(`]}`)
	const deps = 100
	items := []catalog.ItemSpec{{Key: "master", ValueType: "text", Trends: "0", History: "0"}}
	for d := 0; d < deps; d++ {
		items = append(items, dep("dep["+strconv.Itoa(d)+"]", "master", "float", step("JSONPATH", "$.data["+strconv.Itoa(d*n/deps)+"].value")))
	}
	cat := catalogtest.Open(b, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: items}}})
	p := start(b, Options{Shards: 2, Store: discard{}, Catalog: cat.Snapshot})
	master := cat.Snapshot().Lookup("h", "master")
	raw := []byte(doc.String())
	before := p.committed.Load()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	tk := NewTicket()
	v := make([]history.Sample, 1)
	i := int64(0)
	for b.Loop() {
		if err := Prepare(master, raw, &v[0]); err != nil {
			b.Fatal(err)
		}
		v[0].Clock = 1700000000 + i
		i++
		if err := p.Submit(v, tk); err != nil {
			b.Fatal(err)
		}
	}
	if got := p.committed.Load() - before; got != uint64(b.N)*(deps+1) {
		b.Fatalf("committed %d values, want %d", got, uint64(b.N)*(deps+1))
	}
	b.ReportMetric(float64(deps)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
}
