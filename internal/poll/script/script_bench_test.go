package script

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
)

// BenchmarkCheck is the checker's hot path: b.N checks of script items
// (a parameter parsed, a little arithmetic, a value returned) handed
// over in one batch, as a scheduler's round, and run in the pool's
// worker processes. checks/s is the throughput through the pool with
// workers processes; ns/op is the wall time per check. The compiled
// script is cached per worker, so this is the steady state. Run e.g.
//
//	go test -run '^$' -bench 'Check$' -benchtime 20000x -count 6 ./internal/poll/script/
func BenchmarkCheck(b *testing.B) {
	const items = 64
	specs := make([]catalog.ItemSpec, items)
	for i := range specs {
		specs[i] = catalog.ItemSpec{Key: fmt.Sprintf("s[%d]", i), ValueType: "unsigned",
			Params:     "var p = JSON.parse(value); return parseInt(p.n) * 2 + p.host.length;",
			Parameters: []catalog.ItemParam{{Name: "n", Value: fmt.Sprint(i)}, {Name: "host", Value: "{HOST.HOST}"}}}
	}
	f := newFixture(b, specs...)
	checks := make([]poll.Check, items)
	for i := range checks {
		checks[i] = f.check(b, specs[i].Key, 10*time.Second)
	}
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			c := New(Options{Item: f.item, JS: newPool(b, workers)})
			defer c.Close()
			results := make(chan *poll.Result, b.N)
			cb := func(r *poll.Result) { results <- r }
			// Start the workers before timing.
			c.Check(context.Background(), checks[:workers], cb)
			for range workers {
				<-results
			}
			batch := make([]poll.Check, b.N)
			for i := range batch {
				batch[i] = checks[i%items]
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			c.Check(context.Background(), batch, cb)
			for range b.N {
				if r := <-results; r.Status != poll.OK {
					b.Fatalf("%s: %v %q", r.Key, r.Status, r.Error)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "checks/s")
		})
	}
}
