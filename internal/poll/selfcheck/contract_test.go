package selfcheck

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
)

// TestContract holds the internal item checker to poll.Checker's
// contract. Its figures are this process's own: nothing it reads can
// hang, time out or flood, so only the answered and cancelled clauses
// apply; a batch is answered in order on one goroutine.
func TestContract(t *testing.T) {
	f := newFixture(t)
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		c := New(f.c.opts) // a checker of its own per subtest, over the same figures
		check := func(id uint64, key string) poll.Check {
			return poll.Check{ItemID: id, HostID: 1, Key: key, Timeout: 3 * time.Second, Due: time.Now()}
		}
		return &polltest.Subject{
			Checker: c,
			Answer: []poll.Check{check(1, "zabbix[uptime]"), check(2, "zabbix[version]"), check(3, "zabbix[hosts]"),
				check(4, "zabbix[queue]"), check(5, "zabbix[process,poller,avg,busy]")},
			InOrder: true,
			Markers: []string{"selfcheck.(*Checker)"},
		}
	})
}
