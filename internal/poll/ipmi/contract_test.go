package ipmi

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestContract holds the IPMI checker to poll.Checker's contract on
// loopback: sensors of the OpenIPMI simulator answer; a UDP peer that
// reads and never answers is the BMC that hangs or expires. IPMI has
// no flood case: a reply is one datagram of at most 4 KiB, read into
// the library's buffer.
func TestContract(t *testing.T) {
	if testing.Short() {
		t.Skip("needs ipmi_sim")
	}
	sim := testutil.StartIPMISim(t)
	silent := silentUDP(t)
	cat := &items{}
	creds := catalog.HostIPMI{AuthType: -1, Privilege: 2, Username: sim.User, Password: sim.Password}
	cat.add(1, "cpu.temp", "CPU Temp", creds)
	cat.add(2, "ps1", "PS1 Status", creds)
	cat.add(3, catalog.IPMIGetKey, "", creds)
	cat.add(4, "missing", "No Such", creds)
	cat.add(5, "hang", "CPU Temp", creds)
	cat.add(6, "hang.get", "", creds)
	cat.add(7, "expire", "CPU Temp", creds)
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		check := func(id uint64, key, addr string) poll.Check {
			return poll.Check{ItemID: id, HostID: 1, InterfaceID: 1, Key: key, Addr: addr, Timeout: 5 * time.Second, Due: time.Now()}
		}
		c := New(Options{Item: cat.get})
		return &polltest.Subject{
			Checker: c,
			Close:   c.Close,
			Answer:  []poll.Check{check(1, "cpu.temp", sim.Addr), check(2, "ps1", sim.Addr), check(3, catalog.IPMIGetKey, sim.Addr)},
			Hang:    []poll.Check{check(5, "hang", silent), check(6, catalog.IPMIGetKey, silent)},
			Expire:  []poll.Check{check(7, "expire", silent)},
			Markers: []string{"ipmi.(*Checker)", "bougou/go-ipmi"},
		}
	})
}
