package poll_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/agentsim"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
)

// TestIntegrationOverloadNoBlame starves this process of CPU (one P and
// a thousand spinning goroutines, so a runnable goroutine waits seconds
// for its turn; with 200 no check timed out) while the real agent checker polls healthy
// simulated agents with a 1 s timeout: checks time out because the
// server is behind, not because an agent is. No interface may become
// unreachable or unavailable; the checks are postponed and counted as
// such, and once the starvation ends every item gets values again.
// Without Scheduler.behind the same run makes healthy interfaces
// unreachable (tried: "h00055: cannot send the request ...: timed out"),
// and their checks then wait for probes: the done-rate collapse of
// issue 30.
func TestIntegrationOverloadNoBlame(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starves the process for 6 s")
	}
	if raceEnabled {
		t.Skip("the race detector's own slowness is not the starvation measured here")
	}
	const n = 200
	fleet, err := agentsim.Start(n, func(int, string) agentsim.Reply { return agentsim.Reply{Value: "1"} })
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	sys, cat := startSystem(t, n, map[string]string{"agent.ping": "unsigned"}, "1s", fleet.Addr, poll.Options{
		DefaultTimeout: time.Second, UnreachablePeriod: 3 * time.Second, UnreachableDelay: time.Second, UnavailableDelay: 2 * time.Second,
	})
	defer sys.stop()
	hosts := cat.Snapshot().Hosts()
	iface := func(h *catalog.Host) uint64 { return h.MainInterface(catalog.InterfaceAgent).ID }
	waitFor(t, 20*time.Second, "every interface available", func() bool {
		for _, h := range hosts {
			if a, _ := sys.rt.Availability(iface(h)); a.Available != 1 {
				return false
			}
		}
		return true
	})

	// A watcher that notes any interface in error, as often as it gets
	// a turn.
	var blamed atomic.Value
	stopWatch := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for _, h := range hosts {
				if a, _ := sys.rt.Availability(iface(h)); a.ErrorsFrom != 0 || a.Available == 2 {
					blamed.CompareAndSwap(nil, h.Host+": "+a.Error)
				}
			}
			select {
			case <-stopWatch:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()

	lagBefore := metric(t, sys.m, `peregrine_poll_checks_postponed_total{reason="server_behind"}`)
	prev := runtime.GOMAXPROCS(1)
	stopSpin := make(chan struct{})
	var spin sync.WaitGroup
	for i := 0; i < 1000; i++ {
		spin.Add(1)
		go func() {
			defer spin.Done()
			for x := 0; ; x++ {
				if x%1024 == 0 {
					select {
					case <-stopSpin:
						return
					default:
					}
				}
			}
		}()
	}
	time.Sleep(6 * time.Second)
	close(stopSpin)
	spin.Wait()
	runtime.GOMAXPROCS(prev)

	// Afterwards every item gets a value again within a few seconds.
	lens := func() []int {
		out := make([]int, len(hosts))
		for i, h := range hosts {
			out[i] = sys.store.Len(h.Item("agent.ping").ID)
		}
		return out
	}
	after := lens()
	waitFor(t, 15*time.Second, "a new value of every item after the starvation", func() bool {
		for i, l := range lens() {
			if l <= after[i] {
				return false
			}
		}
		return true
	})
	close(stopWatch)
	wg.Wait()
	postponed := metric(t, sys.m, `peregrine_poll_checks_postponed_total{reason="server_behind"}`) - lagBefore
	timeouts := metric(t, sys.m, `peregrine_poll_checks_total{result="network_error"}`)
	hits := metric(t, sys.m, `peregrine_poll_in_flight_limit_hits_total{reason="server_behind"}`)
	t.Logf("during 6 s of starvation: %g network errors, %g checks postponed, %g turns held by the in-flight limit", timeouts, postponed, hits)
	if b := blamed.Load(); b != nil {
		t.Fatalf("a healthy interface was blamed for the server's lateness: %v (%g network errors, %g postponed)", b, timeouts, postponed)
	}
	if u := metric(t, sys.m, "peregrine_poll_interfaces_unavailable_total"); u != 0 {
		t.Fatalf("%g interfaces became unavailable", u)
	}
	if timeouts == 0 {
		t.Skip("the starvation caused no timeout on this machine: nothing was tested")
	}
}
