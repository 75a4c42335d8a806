package bench

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A small poll run against in-process agents: two steps, each row with
// the ideal, checks done, latency quantiles and CPU per check, and the
// report written.
func TestPollBench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a poller for a few seconds")
	}
	dir := t.TempDir()
	b := PollBench{Hosts: []int{5, 10}, ItemsPerHost: 4, Interval: time.Second, Warmup: 2 * time.Second, Window: 2 * time.Second, InProcessAgents: true}
	sec, err := b.Run(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	c := sec.CSV
	if c == nil || len(c.Rows) != 2 {
		t.Fatalf("rows: %+v", c)
	}
	for i, ideal := range []float64{20, 40} {
		if c.Float(i, "ideal_cps") != ideal {
			t.Fatalf("row %d ideal %g; want %g", i, c.Float(i, "ideal_cps"), ideal)
		}
		done := c.Float(i, "done_cps")
		if done <= 0 || done > 2*ideal {
			t.Fatalf("row %d: %g checks/s done of %g", i, done, ideal)
		}
		if p99 := c.Float(i, "p99_s"); math.IsNaN(p99) || p99 <= 0 || c.Float(i, "p50_s") > p99 {
			t.Fatalf("row %d latency p50 %g p99 %g", i, c.Float(i, "p50_s"), p99)
		}
		if c.Float(i, "poller_cpu_us_per_check") <= 0 || c.Float(i, "in_flight_peak") < 1 {
			t.Fatalf("row %d: %v", i, c.Rows[i])
		}
	}
	rep := &Report{Title: "t", Sections: []Section{sec}}
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "done checks/s") {
		t.Fatalf("report:\n%s", md)
	}
}

func TestLatencyQuantile(t *testing.T) {
	m0 := map[string]float64{`peregrine_poll_check_latency_seconds_bucket{le="0.1"}`: 10, `peregrine_poll_check_latency_seconds_bucket{le="1"}`: 10, `peregrine_poll_check_latency_seconds_bucket{le="+Inf"}`: 10}
	m1 := map[string]float64{`peregrine_poll_check_latency_seconds_bucket{le="0.1"}`: 108, `peregrine_poll_check_latency_seconds_bucket{le="1"}`: 109, `peregrine_poll_check_latency_seconds_bucket{le="+Inf"}`: 110}
	if q := latencyQuantile(m0, m1, 0.5); q != 0.1 {
		t.Fatalf("p50 %g", q)
	}
	if q := latencyQuantile(m0, m1, 0.99); q != 1 {
		t.Fatalf("p99 %g", q)
	}
	if q := latencyQuantile(m0, m1, 1); !math.IsInf(q, 1) {
		t.Fatalf("p100 %g", q)
	}
}
