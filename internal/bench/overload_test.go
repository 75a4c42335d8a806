package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestIntegrationOverloadShort is the short version of `peregrine bench
// overload` (issue 30 item 2): the real server, small configured bounds,
// simulated senders, zabbix_sender (when installed) and simulated
// proxies at twice the measured capacity for 20 s. It fails when a value
// acknowledged is not stored or the server's peak RSS passes the bound
// its configuration sets, and when a stage's backlog is not on
// /metrics. Latency figures are logged, not asserted (no timed
// assertions).
func TestIntegrationOverloadShort(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds and runs the server for about 40 s")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's RSS from /proc")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "peregrine")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/peregrine").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("zabbix_sender"); err != nil {
		t.Log("zabbix_sender not in PATH (Debian: zabbix-sender): simulated senders and proxies only")
	}
	o := Overload{Bin: bin, Hosts: 10, ItemsPerHost: 50, PerRequest: 50, Proxies: 2, ProxyShare: 0.2, RealShare: 0.05,
		CapConns: 16, CapTime: 3 * time.Second, BaseTime: 3 * time.Second, Duration: 20 * time.Second, Recovery: 5 * time.Second,
		MaxOutstanding: 256, MaxBuffered: 8 << 20, MaxFrame: 1 << 20, MaxConns: 64, QueueValues: 2048, Shards: 2, MaxHeadValues: 20000,
		RequestTimeout: 10 * time.Second, Log: testLog{t}}
	sec, err := o.Run(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	r := o.Result
	for _, ph := range r.Phases {
		t.Logf("%s: %.0f s, offered %.0f/s, acked %.0f/s, failed %.0f/s, %d requests, %d unanswered, %d shed, p50 %v p99 %v max %v, RSS %d MiB, backlog %v",
			ph.Name, ph.Wall.Seconds(), ph.Offered, float64(ph.Acked)/ph.Wall.Seconds(), float64(ph.Failed)/ph.Wall.Seconds(), ph.Requests, ph.Unanswered, ph.Shed,
			ph.P50, ph.P99, ph.Max, ph.PeakRSS>>20, ph.Backlog)
	}
	t.Logf("notes: %q", sec.Notes)
	if r.Capacity <= 0 || r.Acked == 0 {
		t.Fatalf("nothing acknowledged: %+v", r)
	}
	if r.Lost != 0 {
		t.Fatalf("%d acknowledged values lost (%d acknowledged, %d stored)", r.Lost, r.Acked, r.Stored)
	}
	if r.PeakRSS > r.MemoryBound {
		t.Fatalf("peak RSS %d MiB over the configuration's bound %d MiB", r.PeakRSS>>20, r.MemoryBound>>20)
	}
	for _, g := range []string{"peregrine_trapper_buffered_bytes", "peregrine_trapper_connections_active", "peregrine_pipeline_queue_values"} {
		if !r.BacklogSeen[g] {
			t.Errorf("%s is not on /metrics", g)
		}
	}
	if err := (&Report{Title: "t", Sections: []Section{sec}}).Write(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
		t.Fatal(err)
	}
}

// testLog writes the bench's progress to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) { l.t.Log(string(p)); return len(p), nil }
