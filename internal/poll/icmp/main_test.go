package icmp

import (
	"fmt"
	"os"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestMain fails the run if a test left the sender, a receiver or a
// resolver goroutine behind (a checker not closed, a check never
// reported).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := testutil.NoLeakedGoroutines("icmp.(*Checker)"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}
