package snmp

import (
	"fmt"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/snmpsim"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
)

// TestContract holds the SNMP checker to poll.Checker's contract
// against simulated SNMPv2c devices on loopback: one answering, one
// that drops every request (a dead device or a wrong community), and a
// table far longer than the checker walks.
func TestContract(t *testing.T) {
	const flood = ".1.3.6.1.4.1.9999.5.1"
	table := simTable()
	for i := 1; i <= 20_000; i++ {
		table = append(table, gosnmp.SnmpPDU{Name: fmt.Sprintf("%s.%d", flood, i), Type: gosnmp.OctetString, Value: []byte("row of a long table")})
	}
	f := startSim(t, snmpsim.Options{Agents: 2, Table: table, Hook: func(agent int, _ *gosnmp.SnmpPacket) ([]byte, bool) {
		return nil, agent == 1 // device 1 never answers
	}})
	const maxValue = 64 << 10
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		e := newEnv(t, []catalog.HostSpec{
			snmpHost(t, "up", f.Addr(0), v2, "name=sysName.0", "descr=1.3.6.1.2.1.1.1.0", "walk=discovery[{#ROW},"+flood+"]"),
			snmpHost(t, "down", f.Addr(1), v2, "name=sysName.0", "uptime=sysUpTime.0"),
			// A second dead device for the timeout, so that its check
			// does not queue behind the hanging ones (one request at a
			// time per device).
			snmpHost(t, "down2", f.Addr(1), map[string]string{"version": "2", "community": "other"}, "name=sysName.0"),
		}, Options{MaxWalkValues: 500, MaxValueSize: maxValue, IdleClose: time.Minute})
		return &polltest.Subject{
			Checker:  e.c,
			Answer:   e.checks(t, "up", 3*time.Second, "name", "descr"),
			Hang:     e.checks(t, "down", 3*time.Second, "name", "uptime"),
			Expire:   e.checks(t, "down2", 3*time.Second, "name"),
			Flood:    e.checks(t, "up", 3*time.Second, "walk"),
			MaxValue: maxValue,
			Markers:  []string{"snmp.(*device)", "poll/snmp.(*Checker)"},
		}
	})
}
