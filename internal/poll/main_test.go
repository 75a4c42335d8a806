package poll_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestMain fails the run if a test left scheduler, checker or simulated
// agent goroutines behind (a Run not stopped, a check never reported).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := testutil.NoLeakedGoroutines("poll.(*Scheduler)", "agent.(*Checker)", "agentsim.(*Fleet)"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}
