package poll

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// BenchmarkSchedulerRound measures the scheduler's own cost per check:
// handing out a second's due checks, taking their results back through
// conversion and a (discarding) Submit, and rescheduling them, with a
// fake checker and clock (no network). One op is one check; cpu-ns/check
// is the process's CPU per check, steadier than the wall time on a
// shared machine.
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
			cpu0 := processCPU()
			done := 0
			for done < b.N {
				sec++
				cs := h.at(sec)
				h.complete(cs, OK, "1", "")
				done += len(cs)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(done), "ns/check")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(done), "cpu-ns/check")
		})
	}
}

// processCPU is this process's user+system CPU: on a shared machine the
// wall time per check is noisy, the CPU per check much less so.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
