package snmp

import (
	"fmt"
	"os"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestMain fails the run if a test left checker or simulated
// agent goroutines behind (a check never reported, a fleet not closed).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := testutil.NoLeakedGoroutines("snmp.(*device)", "snmpsim.(*Fleet)"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}
