package telnet

import (
	"fmt"
	"os"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestMain fails the run if a test left checker goroutines behind.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := testutil.NoLeakedGoroutines(markers...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

var markers = []string{"poll/telnet.(*Checker)"}
