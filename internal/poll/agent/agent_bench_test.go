package agent

import (
	"context"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil/agentsim"
)

// BenchmarkCheck runs passive checks against simulated agents on
// loopback, 64 in flight; one op is one check (connect, ask, read,
// close), the agents' side included in the CPU.
//
//	go test -run '^$' -bench Check -benchmem -count 6 ./internal/poll/agent/
func BenchmarkCheck(b *testing.B) {
	fleet, err := agentsim.Start(16, func(int, string) agentsim.Reply { return agentsim.Reply{Value: "1"} })
	if err != nil {
		b.Fatal(err)
	}
	defer fleet.Close()
	c := New(Options{})
	const inFlight = 64
	slots := make(chan struct{}, inFlight)
	done := func(r *poll.Result) {
		if r.Status != poll.OK {
			b.Errorf("check failed: %s", r.Error)
		}
		<-slots
	}
	batch := make([][]poll.Check, 16)
	for i := range batch {
		batch[i] = []poll.Check{{ItemID: uint64(i), Key: "agent.ping", Addr: fleet.Addr(i), Timeout: 5 * time.Second}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		slots <- struct{}{}
		c.Check(context.Background(), batch[i%len(batch)], done)
	}
	for i := 0; i < inFlight; i++ {
		slots <- struct{}{}
	}
}
