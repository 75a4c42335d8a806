package agent

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/agentsim"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
)

// TestContract holds the passive agent checker to poll.Checker's
// contract against simulated agents on loopback: one answering, one
// that reads the request and never replies (a hung agent), and peers
// that send without end, framed and not.
func TestContract(t *testing.T) {
	replies := map[string]agentsim.Reply{
		"agent.ping":   {Value: "1"},
		"system.uname": {Value: "Linux sim 6.1.0 x86_64"},
		"hung":         {Mode: agentsim.Silent},
	}
	fleet, err := agentsim.Start(1, func(_ int, key string) agentsim.Reply { return replies[key] })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleet.Close)
	const maxReply = 4096
	// A frame announcing 3,000 bytes followed by endless bytes: the
	// checker reads the frame and no more.
	hdr := append([]byte("ZBXD\x01"), make([]byte, 8)...)
	binary.LittleEndian.PutUint32(hdr[5:], 3000)
	framed := polltest.FloodTCP(t, hdr)
	garbage := polltest.FloodTCP(t, nil)
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		check := func(id uint64, key, addr string) poll.Check {
			return poll.Check{ItemID: id, HostID: 1, InterfaceID: 1, Key: key, Addr: addr, Timeout: 3 * time.Second, Due: time.Now()}
		}
		return &polltest.Subject{
			Checker:  New(Options{MaxReplySize: maxReply}),
			Answer:   []poll.Check{check(1, "agent.ping", fleet.Addr(0)), check(2, "system.uname", fleet.Addr(0))},
			Hang:     []poll.Check{check(3, "hung", fleet.Addr(0)), check(4, "agent.ping", polltest.SilentTCP(t))},
			Expire:   []poll.Check{check(5, "hung", fleet.Addr(0))},
			Flood:    []poll.Check{check(6, "agent.ping", framed), check(7, "agent.ping", garbage)},
			MaxValue: maxReply,
			Markers:  []string{"poll/agent.(*Checker)"},
		}
	})
}
