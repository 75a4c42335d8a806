package icmp

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if a test left the sender, a receiver or a
// resolver goroutine behind (a checker not closed, a check never
// reported).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := checkNoLeaks("icmp.(*Checker)"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func checkNoLeaks(markers ...string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		leaked := ""
		for _, mk := range markers {
			if strings.Contains(string(buf), mk) {
				leaked = mk
			}
		}
		if leaked == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("leaked goroutines (%s):\n%s", leaked, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
