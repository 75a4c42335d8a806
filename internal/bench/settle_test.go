package bench

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// settle against real processes: an idle one is idle at the first
// sample, a spinning one is still busy when the limit passes, and an
// in-process server is not waited for.
func TestSettle(t *testing.T) {
	start := func(script string) int {
		cmd := exec.Command("sh", "-c", script)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process.Pid
	}
	idle := start("sleep 30")
	busy := start("while :; do :; done")
	for _, tc := range []struct {
		name string
		cpu  ServerCPU
		want string
	}{
		{"idle", ServerCPU{PIDs: []int{idle}}, "The server then idled (0 % of a core"},
		{"busy", ServerCPU{PIDs: []int{busy}}, "The server was still busy"},
		{"in process", ServerCPU{PIDs: []int{idle}, Self: true}, "cannot be observed"},
		{"none", ServerCPU{}, "cannot be observed"},
	} {
		env := &Env{Target: &Target{ServerCPU: tc.cpu}, settleSample: 500 * time.Millisecond, settleMax: time.Second,
			// 1 % of a core: a sleeping shell is charged no clock tick at
			// all, a spinning one at least a tick (10 ms, 2 %) in half a
			// second even when the machine is saturated (a CI run with
			// -race gave it 3 % over 300 ms, under the 5 % this was).
			settleIdle: 0.01}
		if got := env.settle(context.Background()); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
