package external

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// The figures for plugins: check_dummy at 1,000 executions/s or
// more with a p99 latency under 1 s, and 10,000 checks in 10 s or less.
// Run with a fixed count, e.g.
//
//	go test -run '^$' -bench CheckDummy -benchtime 10000x ./internal/poll/external/

// BenchmarkCheckDummyBurst hands b.N check_dummy checks, all due now, to
// the checker in one batch (a scheduler's worst round) and waits for
// them all: checks/s is the pool's throughput, and with -benchtime
// 10000x the run's time is the "10,000 checks" figure. p99-latency-s is
// Nagios's latency (scheduled time to process start, from the
// checker's histogram, bucketed), p99-done-s the time until each result.
func BenchmarkCheckDummyBurst(b *testing.B) {
	dir := pluginDir(b)
	for _, procs := range []int{4, 8, DefaultMaxProcesses} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) { benchBurst(b, dir, procs) })
	}
}

func benchBurst(b *testing.B, dir string, procs int) {
	c := New(Options{Dirs: []string{dir}, MaxProcesses: procs})
	batch := make([]poll.Check, b.N)
	b.ResetTimer()
	now := time.Now()
	for i := range batch {
		batch[i] = poll.Check{ItemID: uint64(i), Key: `check_dummy[0,ok]`, Timeout: 60 * time.Second, Due: now}
	}
	done := collect(b, c, batch)
	elapsed := time.Since(now)
	b.StopTimer()
	report(b, c, done, elapsed)
}

// BenchmarkCheckDummyPaced runs b.N check_dummy checks due at 1,000/s,
// each handed over at its due time in 10 ms rounds (as the scheduler
// does), and reports the latencies against the schedule: the figure for
// "1,000 executions/s with p99 latency < 1 s".
func BenchmarkCheckDummyPaced(b *testing.B) {
	const rate = 1000
	dir := pluginDir(b)
	c := New(Options{Dirs: []string{dir}, MaxProcesses: DefaultMaxProcesses})
	results := make(chan *poll.Result, b.N)
	cb := func(r *poll.Result) { results <- r }
	b.ResetTimer()
	start := time.Now()
	for sent := 0; sent < b.N; {
		// Every check due by now goes out in this round.
		due := min(int(time.Since(start).Seconds()*rate)+1, b.N)
		if due > sent {
			batch := make([]poll.Check, due-sent)
			for i := range batch {
				k := sent + i
				batch[i] = poll.Check{ItemID: uint64(k), Key: `check_dummy[0,ok]`, Timeout: 60 * time.Second,
					Due: start.Add(time.Duration(k) * time.Second / rate)}
			}
			c.Check(context.Background(), batch, cb)
			sent = due
		}
		time.Sleep(10 * time.Millisecond)
	}
	done := make([]time.Duration, 0, b.N)
	for range b.N {
		r := <-results
		if r.Status != poll.OK {
			b.Fatalf("check_dummy: %v %q", r.Status, r.Error)
		}
		done = append(done, r.Clock.Sub(r.Due))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	report(b, c, done, elapsed)
}

// collect runs batch and returns each check's time from due to result.
func collect(b *testing.B, c *Checker, batch []poll.Check) []time.Duration {
	results := make(chan *poll.Result, len(batch))
	c.Check(context.Background(), batch, func(r *poll.Result) { results <- r })
	done := make([]time.Duration, 0, len(batch))
	for range batch {
		r := <-results
		if r.Status != poll.OK {
			b.Fatalf("check_dummy: %v %q", r.Status, r.Error)
		}
		done = append(done, r.Clock.Sub(r.Due))
	}
	return done
}

func report(b *testing.B, c *Checker, done []time.Duration, elapsed time.Duration) {
	slices.Sort(done)
	b.ReportMetric(float64(len(done))/elapsed.Seconds(), "checks/s")
	b.ReportMetric(done[len(done)*99/100].Seconds(), "p99-done-s")
	b.ReportMetric(c.latency.Quantile(0.99), "p99-latency-s")
	b.ReportMetric(c.exec.Sum()/float64(c.exec.Count()), "mean-exec-s")
	b.ReportMetric(elapsed.Seconds(), "total-s")
}
