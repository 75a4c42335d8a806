package bench

import (
	"context"
	"testing"
	"time"
)

// A small snmp run against in-process devices: two steps, each with the
// ideal, OIDs done in GETs of many OIDs, and no errors.
func TestSNMPBench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a poller for a few seconds")
	}
	b := SNMPBench{Hosts: []int{5, 10}, ItemsPerHost: 8, Interval: time.Second, Warmup: 2 * time.Second, Window: 2 * time.Second, InProcessAgents: true}
	sec, err := b.Run(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := sec.CSV
	if c == nil || len(c.Rows) != 2 {
		t.Fatalf("rows: %+v", c)
	}
	for i, ideal := range []float64{40, 80} {
		if c.Float(i, "ideal_oids_per_s") != ideal {
			t.Fatalf("row %d ideal %g; want %g", i, c.Float(i, "ideal_oids_per_s"), ideal)
		}
		done, reqs := c.Float(i, "done_oids_per_s"), c.Float(i, "requests_per_s")
		if done <= 0 || done > 2*ideal {
			t.Fatalf("row %d: %g OIDs/s done of %g", i, done, ideal)
		}
		// Items of one device fall due in the same second: several OIDs
		// per request (the ratio is measured in the same run).
		if reqs <= 0 || done/reqs < 2 {
			t.Fatalf("row %d: %g OIDs/s in %g requests/s: no batching", i, done, reqs)
		}
		if c.Float(i, "errors") != 0 {
			t.Fatalf("row %d: %g errors", i, c.Float(i, "errors"))
		}
	}
}
