package testutil

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// NoLeakedGoroutines waits up to 5 s for every goroutine whose stack
// mentions one of markers (e.g. "agent.(*Checker)") to end, and returns
// an error with all stacks if one is still there: a TestMain calls it
// after m.Run to fail a package whose tests left a checker, scheduler or
// simulated fleet running.
func NoLeakedGoroutines(markers ...string) error {
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
