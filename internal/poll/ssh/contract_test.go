package ssh

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/sshsim"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
)

// TestContract holds the SSH checker to poll.Checker's contract on
// loopback: simulated servers that answer, a peer that accepts and never
// speaks, a server that takes the command and never answers it, a peer
// that floods the handshake and a command that prints without end.
func TestContract(t *testing.T) {
	sim := startSim(t, 1, sshsim.Options{})
	addr := sim.Addr(0)
	silent := polltest.SilentTCP(t)
	flood := polltest.FloodTCP(t, []byte("SSH-2.0-flood\r\n"))
	const maxOutput = 64 << 10
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		its := items{1: pwItem("zbx", "secret", "echo one"), 2: pwItem("zbx", "secret", "echo two"),
			3: pwItem("zbx", "secret", "echo x"), 4: pwItem("zbx", "secret", "hang"),
			5: pwItem("zbx", "secret", "echo x"), 6: pwItem("zbx", "secret", "hang"),
			7: pwItem("zbx", "secret", "echo x"), 8: pwItem("zbx", "secret", "flood")}
		c := newChecker(t, Options{Item: its.item, MaxOutput: maxOutput})
		mk := func(id uint64, k string) poll.Check {
			return poll.Check{ItemID: id, HostID: 1, InterfaceID: 1, Key: k, Addr: "127.0.0.1:10050", Timeout: 3 * time.Second, Due: time.Now()}
		}
		return &polltest.Subject{
			Checker:  c,
			Answer:   []poll.Check{mk(1, key("a", addr)), mk(2, key("b", addr))},
			Hang:     []poll.Check{mk(3, key("c", silent)), mk(4, key("d", addr))},
			Expire:   []poll.Check{mk(5, key("e", silent)), mk(6, key("f", addr))},
			Flood:    []poll.Check{mk(7, key("g", flood)), mk(8, key("h", addr))},
			MaxValue: maxOutput,
			Markers:  markers[:2],
		}
	})
}
