package pipeline

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// go test -run '^$' -bench ChainFrame -count 6 ./internal/pipeline/
//
// BenchmarkChainFrame submits frames of 1,000 float values, one per
// item, of full-precision random walks as text (loadgen's gauges),
// through the shard into a discarding store: steps=none converts them
// at Prepare; steps=mult+heartbeat runs the templates' typical chain
// (custom multiplier 8, discard unchanged with heartbeat 1h) on each in
// the shard. ns/value is the per-value cost of the stage.
func BenchmarkChainFrame(b *testing.B) {
	const items = 1000
	for _, chain := range []string{"none", "mult+heartbeat"} {
		b.Run("steps="+chain, func(b *testing.B) {
			var steps []catalog.PreprocSpec
			if chain != "none" {
				steps = []catalog.PreprocSpec{step("MULTIPLIER", "8"), step("DISCARD_UNCHANGED_HEARTBEAT", "1h")}
			}
			specs := make([]catalog.ItemSpec, items)
			for i := range specs {
				specs[i] = catalog.ItemSpec{Key: "k[" + strconv.Itoa(i) + "]", ValueType: "float", Preprocessing: steps}
			}
			cat := catalogtest.Open(b, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: specs}}})
			p := start(b, Options{Shards: 1, Store: discard{}, Catalog: cat.Snapshot})
			snap := cat.Snapshot()
			its := make([]*catalog.Item, items)
			for i := range its {
				its[i] = snap.Lookup("h", "k["+strconv.Itoa(i)+"]")
			}
			// 64 rounds of values, reused: each a random walk's step.
			r := rand.New(rand.NewPCG(1, 2))
			const rounds = 64
			texts := make([][][]byte, rounds)
			walk := make([]float64, items)
			for k := range texts {
				texts[k] = make([][]byte, items)
				for i := range walk {
					walk[i] += r.NormFloat64()
					texts[k][i] = strconv.AppendFloat(nil, 1000+walk[i], 'f', -1, 64)
				}
			}
			v := make([]history.Sample, items)
			tk := NewTicket()
			clock := int64(1_700_000_000)
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				round := texts[clock%rounds]
				for i := range v {
					if err := Prepare(its[i], round[i], &v[i]); err != nil {
						b.Fatal(err)
					}
					v[i].Clock = clock
				}
				clock++
				if err := p.Submit(v, tk); err != nil {
					b.Fatal(err)
				}
			}
			// The process's CPU per value, GC included: steadier than the
			// wall clock on a shared machine.
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*items), "cpu-ns/value")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*items), "ns/value")
		})
	}
}

// processCPU is the CPU time the process used so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
