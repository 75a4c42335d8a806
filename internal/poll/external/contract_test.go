package external

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
)

// TestContract holds the external check and nagios[] checker to
// poll.Checker's contract with scripts: ones that print a value, ones
// that hang (with a child in the background, as plugins have), and ones
// that write without end.
func TestContract(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "answer.sh", `echo "${1:-42}"`)
	writeScript(t, dir, "plugin.sh", `echo "OK - fine | load=0.5;1;2"`)
	writeScript(t, dir, "hang.sh", `sleep 3600 & sleep 3600`)
	writeScript(t, dir, "flood.sh", `exec yes flood`)
	const maxOutput = MinMaxOutput
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		check := func(id uint64, key string) poll.Check {
			return poll.Check{ItemID: id, HostID: 1, InterfaceID: 1, Key: key, Addr: "127.0.0.1:10050", Timeout: 3 * time.Second, Due: time.Now()}
		}
		return &polltest.Subject{
			// More process slots than hanging scripts: a full pool
			// holds the other checks by design.
			Checker:  New(Options{Dirs: []string{dir}, MaxProcesses: 8, MaxOutput: maxOutput}),
			Answer:   []poll.Check{check(1, "answer.sh"), check(2, "answer.sh[{HOST.CONN}]"), check(3, "nagios[plugin.sh]")},
			Hang:     []poll.Check{check(4, "hang.sh"), check(5, "nagios[hang.sh]")},
			Expire:   []poll.Check{check(6, "hang.sh"), check(7, "nagios[hang.sh,-t,1]")},
			Flood:    []poll.Check{check(8, "flood.sh"), check(9, "nagios[flood.sh]")},
			MaxValue: maxOutput,
			Markers:  []string{"external.(*Checker)"},
		}
	})
}
