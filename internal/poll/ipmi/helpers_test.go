package ipmi

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
)

// silentUDP starts a UDP peer on 127.0.0.1 that reads and never
// answers: a BMC that is down or filtered. It stops with the test.
func silentUDP(t testing.TB) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 2048)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { c.Close(); wg.Wait() })
	return c.LocalAddr().String()
}

// items is a fake catalog: items by ID on hosts with IPMI settings.
type items struct {
	mu sync.Mutex
	m  map[uint64]*catalog.Item
}

func (s *items) add(id uint64, key, sensor string, ipmi catalog.HostIPMI) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[uint64]*catalog.Item{}
	}
	s.m[id] = &catalog.Item{ID: id, Key: key, Type: catalog.IPMI, Host: &catalog.Host{ID: 1, Host: "bmc", Extra: &catalog.HostExtra{IPMI: ipmi}}, Extra: &catalog.ItemExtra{IPMISensor: sensor}}
}

func (s *items) get(id uint64) *catalog.Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

// runChecks runs batch and returns the results by item ID once all
// reported (or fails the test after bound).
func runChecks(t *testing.T, c *Checker, batch []poll.Check, bound time.Duration) map[uint64]*poll.Result {
	t.Helper()
	got := map[uint64]*poll.Result{}
	var mu sync.Mutex
	all := make(chan struct{})
	c.Check(context.Background(), batch, func(r *poll.Result) {
		mu.Lock()
		defer mu.Unlock()
		got[r.ItemID] = r
		if len(got) == len(batch) {
			close(all)
		}
	})
	select {
	case <-all:
	case <-time.After(bound):
		t.Fatalf("checks not reported within %v", bound)
	}
	return got
}
