package icmp

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// TestContract holds the ICMP checker to poll.Checker's contract in a
// network namespace of its own (nothing leaves it): the loopback and an
// address on it answer; 10.3/16 is routed into the loopback, where its
// packets vanish, and 10.2/16 is blackholed. A check runs by its key's
// packets, interval and timeout, not the Check's Timeout, so a check
// that hangs is one whose packets are an hour apart, and one that
// expires has a short timeout in its key. Replies are bounded by the
// socket's buffer: there is no flood.
func TestContract(t *testing.T) {
	if !inNetns(t, deadRoutes) {
		return
	}
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		c := newChecker(t, Options{Metrics: selfmon.NewRegistry()})
		check := func(id uint64, key string) poll.Check {
			return poll.Check{ItemID: id, HostID: 1, InterfaceID: 1, Key: key, Addr: "127.0.0.1:10050", Timeout: 3 * time.Second, Due: time.Now()}
		}
		return &polltest.Subject{
			Checker: c,
			Close:   func() { c.Close() },
			Answer: []poll.Check{check(1, "icmpping[,2,20]"), check(2, "icmppingloss[10.1.0.1,2,20]"),
				check(3, "icmppingsec[,2,20,,,max]")},
			Hang: []poll.Check{check(4, "icmpping[,100,3600000]"), check(5, "icmppingloss[10.3.0.5,10000,1000,,10000]"),
				check(6, "icmppingsec[10.2.0.5,10000,3600000]")},
			Expire:  []poll.Check{check(7, "icmpping[10.3.0.6,2,20,,200]"), check(8, "icmppingloss[10.2.0.6,2,20,,200]")},
			Markers: []string{"icmp.(*Checker)"},
		}
	})
}
