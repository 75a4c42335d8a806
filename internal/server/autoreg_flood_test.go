package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// activeChecks sends one "active checks" request on a new loopback
// connection and returns the reply's JSON.
func activeChecks(addr, host, meta string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	body := fmt.Sprintf(`{"request":"active checks","host":%q,"host_metadata":%q,"ip":"127.0.0.1","port":10050}`, host, meta)
	frame := append([]byte("ZBXD\x01"), make([]byte, 8)...)
	binary.LittleEndian.PutUint32(frame[5:], uint32(len(body)))
	if _, err := c.Write(append(frame, body...)); err != nil {
		return "", err
	}
	hdr := make([]byte, 13)
	if _, err := io.ReadFull(c, hdr); err != nil {
		return "", err
	}
	out := make([]byte, binary.LittleEndian.Uint32(hdr[5:]))
	_, err = io.ReadFull(c, out)
	return string(out), err
}

// TestAutoregFlood: 10,000 new agents registering at once (simulated
// active agents on loopback, 64 connections at a time, bounded to 10,000
// requests and 2 minutes) while 20 known agents keep asking for their
// checks. Every known agent's request is answered with its items, the
// registrations are queued (bounded, counted) and all hosts are created.
// It logs the registration rate and the known agents' latencies; it
// asserts no time. PEREGRINE_AUTOREG_FLOOD sets the number of agents.
func TestAutoregFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("flood test: not with -short")
	}
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("PEREGRINE_AUTOREG_FLOOD")); err == nil && v > 0 {
		n = v
	}
	var spec catalog.Spec
	for i := range 20 {
		spec.Hosts = append(spec.Hosts, catalog.HostSpec{Host: fmt.Sprintf("known-%d", i), Groups: []string{"Known"},
			Items: []catalog.ItemSpec{{Key: "agent.ping", Type: "zabbix_agent_active", ValueType: "unsigned", Delay: "1m"}}})
	}
	s := startServer(t, spec)
	c := adminLogin(t, s)
	c.ok("action.create", map[string]any{"name": "flood", "eventsource": 2,
		"filter":     map[string]any{"evaltype": 0, "conditions": []any{map[string]any{"conditiontype": 24, "operator": 2, "value": "flood"}}},
		"operations": []any{map[string]any{"operationtype": 2}}}, nil)
	addr := s.Trapper.Addr().String()

	stop := make(chan struct{})
	var lat []time.Duration
	var knownFail atomic.Int64
	var kwg sync.WaitGroup
	var lmu sync.Mutex
	for i := range 4 {
		kwg.Add(1)
		go func() {
			defer kwg.Done()
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				r, err := activeChecks(addr, fmt.Sprintf("known-%d", (i*5+j)%20), "known")
				d := time.Since(t0)
				if err != nil || !strings.Contains(r, `"key":"agent.ping"`) {
					knownFail.Add(1)
				}
				lmu.Lock()
				lat = append(lat, d)
				lmu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	var next atomic.Int64
	var sendFail atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if _, err := activeChecks(addr, fmt.Sprintf("flood-%05d", i), "flood linux"); err != nil {
					sendFail.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	sent := time.Since(start)
	for s.Autoreg.QueueLen() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	created := 0
	for time.Now().Before(deadline.Add(time.Minute)) {
		created = 0
		for _, h := range s.Catalog.Snapshot().Hosts() {
			if strings.HasPrefix(h.Host, "flood-") {
				created++
			}
		}
		if created >= n {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	all := time.Since(start)
	close(stop)
	kwg.Wait()
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	t.Logf("%d agents: requests sent in %v (%.0f/s), %d hosts created in %v (%.0f registrations/s); dropped (queue full) %s, coalesced %s",
		n, sent.Round(time.Millisecond), float64(n)/sent.Seconds(), created, all.Round(time.Millisecond), float64(created)/all.Seconds(),
		s.metricValue(t, `peregrine_autoreg_requests_total{result="queue_full"}`), s.metricValue(t, `peregrine_autoreg_requests_total{result="coalesced"}`))
	t.Logf("known agents during the flood: %d requests, p50 %v p99 %v max %v, %d failed",
		len(lat), q(0.5).Round(time.Microsecond), q(0.99).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond), knownFail.Load())
	if knownFail.Load() > 0 {
		t.Errorf("%d known agents' requests failed during the flood", knownFail.Load())
	}
	if sendFail.Load() > 0 {
		t.Errorf("%d flood requests got no answer", sendFail.Load())
	}
	dropped, _ := strconv.Atoi(s.metricValue(t, `peregrine_autoreg_requests_total{result="queue_full"}`))
	if created+dropped < n {
		t.Errorf("%d of %d hosts created, %d dropped (queue full): the rest is lost", created, n, dropped)
	}
}
