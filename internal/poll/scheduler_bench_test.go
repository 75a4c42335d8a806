package poll

import (
	"fmt"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// BenchmarkSchedulerRound measures the scheduler's own cost per check:
// handing out a second's due checks, taking their results back through
// conversion and a (discarding) Submit, and rescheduling them, with a
// fake checker and clock (no network). One op is one check.
//
//	go test -run '^$' -bench SchedulerRound -benchmem -count 6 ./internal/poll/
func BenchmarkSchedulerRound(b *testing.B) {
	for _, items := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("items=%d/delay=1s", items), func(b *testing.B) {
			h := newHarness(b, items/100, 100, "1s", Options{MaxInFlight: 1 << 20})
			h.s.opts.Submit = func([]history.Sample) error { return nil }
			sec := 0
			h.at(sec)
			b.ReportAllocs()
			b.ResetTimer()
			done := 0
			for done < b.N {
				sec++
				cs := h.at(sec)
				h.complete(cs, OK, "1", "")
				done += len(cs)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(done), "ns/check")
		})
	}
}
