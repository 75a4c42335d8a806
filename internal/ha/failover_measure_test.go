package ha

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestIntegrationFailoverTimes measures kill-to-takeover times of the
// lease alone (no server around it) over N kills of the active node of
// two, and logs their distribution against the failover delay. It runs
// only when asked, on a quiet machine:
//
//	PEREGRINE_HA_FAILOVERS=20 PEREGRINE_HA_DELAY=10s go test -run TestIntegrationFailoverTimes -v ./internal/ha/
func TestIntegrationFailoverTimes(t *testing.T) {
	kills, _ := strconv.Atoi(os.Getenv("PEREGRINE_HA_FAILOVERS"))
	if kills <= 0 {
		t.Skip("set PEREGRINE_HA_FAILOVERS=N (and PEREGRINE_HA_DELAY, default 10s) to measure failover times")
	}
	delay := 10 * time.Second
	if d, err := time.ParseDuration(os.Getenv("PEREGRINE_HA_DELAY")); err == nil {
		delay = d
	}
	c := newTestCluster(t)
	nodes := map[string]*testNode{"node-a": c.start("node-a", delay)}
	waitFor(t, "node-a active", 10*time.Second, func() bool { return nodes["node-a"].Lease() != nil })
	nodes["node-b"] = c.start("node-b", delay)
	var times []time.Duration
	for range kills {
		var active, standby string
		for name, n := range nodes {
			if n.Lease() != nil {
				active = name
			} else {
				standby = name
			}
		}
		// A random phase against the heartbeat, as a real crash has.
		time.Sleep(time.Duration(time.Now().UnixNano() % int64(Heartbeat(delay))))
		killed := time.Now()
		nodes[active].kill()
		waitFor(t, standby+" takes over", 3*delay, func() bool { return nodes[standby].Lease() != nil })
		times = append(times, time.Since(killed))
		// The killed node comes back as standby (its row is
		// unavailable now, so its name is free).
		nodes[active] = c.start(active, delay)
	}
	slices.Sort(times)
	q := func(p float64) time.Duration { return times[int(p*float64(len(times)-1))].Round(time.Millisecond) }
	t.Logf("failover delay %s, heartbeat %s, %d kills: min %s p50 %s p90 %s max %s",
		delay, Heartbeat(delay), len(times), q(0), q(0.5), q(0.9), q(1))
}
