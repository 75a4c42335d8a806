package ipmi

import (
	"fmt"
	"os"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestMain fails the run if a test left checker or IPMI library
// goroutines behind (a check never reported, a session not closed).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := testutil.NoLeakedGoroutines("ipmi.(*Checker)", "bougou/go-ipmi"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}
