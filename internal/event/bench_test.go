package event

import (
	"fmt"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/wal"
)

// BenchmarkCommit measures event append throughput under each fsync
// policy, with batches of 1 and 100 problem events and 8 concurrent
// producers (concurrent commits share the WAL's group commit). events/s
// is the throughput: all events committed over the elapsed time.
//
//	go test -run '^$' -bench BenchmarkCommit -benchtime 2s -count 6 ./internal/event/
func BenchmarkCommit(b *testing.B) {
	for _, sync := range []wal.SyncMode{wal.SyncBatch, wal.SyncInterval} {
		for _, batch := range []int{1, 100} {
			b.Run(fmt.Sprintf("sync=%s/batch=%d", sync, batch), func(b *testing.B) {
				s, err := Open(Options{Dir: b.TempDir(), Sync: sync})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				b.SetParallelism(8)
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					evs := make([]Event, batch)
					n := 0
					for pb.Next() {
						for i := range evs {
							evs[i] = Event{ObjectID: uint64(n*batch + i), Clock: 1700000000, Value: ValueProblem, Severity: 4,
								Name: "High load on web-01", Tags: []Tag{{Tag: "service", Value: "web"}}}
						}
						if err := s.Commit(&Batch{Events: evs}); err != nil {
							b.Error(err)
							return
						}
						n++
					}
				})
				b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}
