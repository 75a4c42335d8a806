package odbc

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// Benchmarks of the checker path. Compare with benchstat:
//
//	go test -run '^$' -bench 'Checker|Shaper' -count 6 ./internal/poll/odbc/ > new.txt
//
// BenchmarkCheckerPostgres (odbc_pg_bench_test.go) runs the same path
// against a real PostgreSQL through unixODBC and psqlODBC.

// benchChecks runs b.N checks of batch's items through c, inFlight at a
// time (the scheduler's way: Check returns at once, results arrive on
// done), and reports checks/s from ns/op.
func benchChecks(b *testing.B, c *Checker, batch []poll.Check, inFlight int) {
	b.Helper()
	b.ReportAllocs()
	slots := make(chan struct{}, inFlight)
	failed := make(chan string, 1)
	done := func(r *poll.Result) {
		if r.Status != poll.OK {
			select {
			case failed <- fmt.Sprintf("%s: %s %q", r.Key, r.Status, r.Error):
			default:
			}
		}
		<-slots
	}
	ctx := context.Background()
	one := make([]poll.Check, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		slots <- struct{}{}
		one[0] = batch[i%len(batch)]
		c.Check(ctx, one, done)
	}
	for range inFlight {
		slots <- struct{}{}
	}
	b.StopTimer()
	select {
	case msg := <-failed:
		b.Fatal(msg)
	default:
	}
	b.ReportMetric(1e9/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "checks/s")
}

// BenchmarkCheckerFake: the checker's own cost per check (goroutine,
// pool, worker, shaping, reporting) over a driver that answers at once.
func BenchmarkCheckerFake(b *testing.B) {
	for _, kind := range []string{"select", "get"} {
		b.Run("kind="+kind, func(b *testing.B) {
			m := items{}
			var batch []poll.Check
			for i := range 100 {
				batch = append(batch, m.add(fmt.Sprintf("db.odbc.%s[q%d,dsn%d]", kind, i, i%4), "select "+strconv.Itoa(i), "u", "p", time.Minute))
			}
			c := New(Options{Item: m.get, driver: newFakeDriver()})
			defer c.Close()
			benchChecks(b, c, batch, 64)
		})
	}
}

// BenchmarkShaper: shaping one result set of rows×cols short values.
func BenchmarkShaper(b *testing.B) {
	for _, tc := range []struct {
		kind       keyKind
		name       string
		rows, cols int
	}{{kindSelect, "select", 1, 1}, {kindGet, "get", 100, 5}, {kindDiscovery, "discovery", 100, 2}} {
		b.Run(fmt.Sprintf("kind=%s/rows=%d/cols=%d", tc.name, tc.rows, tc.cols), func(b *testing.B) {
			labels := make([]string, tc.cols)
			for i := range labels {
				labels[i] = "column_" + strconv.Itoa(i)
			}
			val := []byte("value 12345   ")
			b.ReportAllocs()
			b.SetBytes(int64(tc.rows * tc.cols * len(val)))
			for b.Loop() {
				s := newShaper(tc.kind, 1<<20)
				n := s.columns(tc.cols)
				if err := s.setLabels(n, func(i int) (string, error) { return labels[i], nil }); err != nil {
					b.Fatal(err)
				}
				for range tc.rows {
					s.beginRow()
					for range n {
						if err := s.value(val, false); err != nil {
							b.Fatal(err)
						}
					}
					if !s.endRow() {
						break
					}
				}
				if _, err := s.result(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
