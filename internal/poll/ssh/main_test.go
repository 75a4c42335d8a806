package ssh

import (
	"fmt"
	"os"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestMain fails the run if a test left checker, SSH client or simulated
// server goroutines behind.
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

// markers are the goroutines of the checker and of the SSH library's
// connections (the simulated servers' are sshsim's).
var markers = []string{"poll/ssh.(*Checker)", "golang.org/x/crypto/ssh.", "sshsim.(*Fleet)"}
