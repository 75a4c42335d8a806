package telnet

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
)

// TestContract holds the Telnet checker to poll.Checker's contract on
// loopback: a scripted server that answers, peers that never speak,
// a command that never answers, and peers that send without end (text
// before any prompt, a command's output, option negotiation).
func TestContract(t *testing.T) {
	srv := startFake(t, "zbx", "pw")
	silent := polltest.SilentTCP(t)
	flood := polltest.FloodTCP(t, []byte("Welcome\r\n"))
	const maxOutput = 64 << 10
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		its := items{}
		mk := func(id uint64, addr, cmd string) poll.Check {
			its[id] = telnetItem("zbx", "pw", cmd)
			return poll.Check{ItemID: id, HostID: 1, InterfaceID: 1, Key: key("c", addr), Addr: "127.0.0.1:10050", Timeout: 3 * time.Second, Due: time.Now()}
		}
		s := &polltest.Subject{
			Answer:   []poll.Check{mk(1, srv.Addr, "echo one"), mk(2, srv.Addr, "echo two")},
			Hang:     []poll.Check{mk(3, silent, "echo x"), mk(4, srv.Addr, "hang")},
			Expire:   []poll.Check{mk(5, silent, "echo x"), mk(6, srv.Addr, "hang")},
			Flood:    []poll.Check{mk(7, flood, "echo x"), mk(8, srv.Addr, "flood"), mk(9, srv.Addr, "iacflood")},
			MaxValue: maxOutput,
			Markers:  markers,
		}
		s.Checker = New(Options{Item: its.item, MaxOutput: maxOutput})
		return s
	})
}
