package ipmi

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// BenchmarkCheck is the checker path against the OpenIPMI simulator on
// loopback, sessions kept (the steady state): one check after another
// (conc=1) and 8 at a time (conc=8, over the pool of 2 sessions), for a
// threshold sensor and for ipmi.get. checks/s is per wall second; the
// simulator shares the machine, so the figure bounds the checker's cost
// from above.
//
//	go test -run '^$' -bench BenchmarkCheck -benchtime 2000x -count 6 ./internal/poll/ipmi/
func BenchmarkCheck(b *testing.B) {
	sim := testutil.StartIPMISim(b)
	cat := &items{}
	creds := catalog.HostIPMI{AuthType: -1, Privilege: 2, Username: sim.User, Password: sim.Password}
	cat.add(1, "cpu.temp", "CPU Temp", creds)
	cat.add(2, catalog.IPMIGetKey, "", creds)
	for _, bc := range []struct {
		name string
		id   uint64
		key  string
		conc int
	}{
		{"key=sensor/conc=1", 1, "cpu.temp", 1},
		{"key=sensor/conc=8", 1, "cpu.temp", 8},
		{"key=ipmi.get/conc=1", 2, catalog.IPMIGetKey, 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := New(Options{Item: cat.get})
			defer c.Close()
			ch := poll.Check{ItemID: bc.id, Key: bc.key, Addr: sim.Addr, Timeout: 5 * time.Second}
			run := func(n int) {
				var wg sync.WaitGroup
				batch := make([]poll.Check, n)
				for i := range batch {
					batch[i] = ch
				}
				wg.Add(n)
				c.Check(context.Background(), batch, func(r *poll.Result) {
					if r.Status != poll.OK {
						b.Errorf("%s: %s %q", r.Key, r.Status, r.Error)
					}
					wg.Done()
				})
				wg.Wait()
			}
			run(1) // open the session and read the repository
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for done := 0; done < b.N; done += bc.conc {
				run(min(bc.conc, b.N-done))
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "checks/s")
		})
	}
}
