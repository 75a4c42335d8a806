package pipeline

import (
	"strconv"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// go test -run '^$' -bench 'JSStep' -count 6 ./internal/pipeline/
//
// BenchmarkJSStep submits a batch of one value for each of 100 items
// with a JavaScript step (JSON in, a number out, then a multiplier), the
// shape of the templates' scripts, per operation, and waits for it to
// be stored: the lanes' path, with the scripts in this process
// (runner=local) or in worker processes (runner=pool, as the server
// runs them). values/s counts the items' values.
func BenchmarkJSStep(b *testing.B) {
	const items = 100
	var specs []catalog.ItemSpec
	for i := range items {
		specs = append(specs, catalog.ItemSpec{Key: "js[" + strconv.Itoa(i) + "]", Preprocessing: []catalog.PreprocSpec{
			step("JAVASCRIPT", "var o = JSON.parse(value); return o.used / o.total;"), step("MULTIPLIER", "100")}})
	}
	cat := catalogtest.Open(b, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: specs}}})
	snap := cat.Snapshot()
	raw := []byte(`{"used":1234567,"total":8000000,"name":"/var"}`)
	for _, name := range []string{"local", "pool"} {
		b.Run("runner="+name, func(b *testing.B) {
			var js jsvm.Runner = &jsvm.Local{}
			if name == "pool" {
				pool, err := jsvm.NewPool(jsvm.PoolOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { pool.Close() })
				js = pool
			}
			p := start(b, Options{Shards: 2, Store: discard{}, Catalog: cat.Snapshot, JS: js})
			v := make([]history.Sample, items)
			tk := NewTicket()
			before := p.committed.Load()
			clock := int64(1700000000)
			b.ReportAllocs()
			for b.Loop() {
				for i := range v {
					if err := Prepare(snap.Lookup("h", "js["+strconv.Itoa(i)+"]"), raw, &v[i]); err != nil {
						b.Fatal(err)
					}
					v[i].Clock = clock
				}
				clock++
				if err := p.Submit(v, tk); err != nil {
					b.Fatal(err)
				}
			}
			if got := p.committed.Load() - before; got != uint64(b.N)*items {
				b.Fatalf("committed %d values, want %d", got, uint64(b.N)*items)
			}
			b.ReportMetric(float64(b.N)*items/b.Elapsed().Seconds(), "values/s")
		})
	}
}
