package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIntegrationBenchHA runs `peregrine bench ha --quick` (issue 31):
// the real binary served with the embedded default, then as a cluster
// node on a private PostgreSQL 15 and clickhouse-server the command
// starts itself; write-scaling, history-read and storm at small sizes
// against both, one side-by-side report. It checks the report's shape
// and that every value sent was acknowledged and written on both, not
// any figure (no timed assertions).
func TestIntegrationBenchHA(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds the binary, starts PostgreSQL, ClickHouse and two servers")
	}
	missing := ""
	if _, err := postgresBinDir(); err != nil {
		missing = "postgresql-15"
	} else if _, err := exec.LookPath("clickhouse-server"); err != nil {
		missing = "clickhouse-server"
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed under CI: .ci/run must install it", missing)
		}
		t.Skipf("%s not installed (apt-get install %s)", missing, missing)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "peregrine")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/peregrine").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	report := filepath.Join(dir, "report")
	var stdout, stderr bytes.Buffer
	code := haMain(context.Background(), []string{"--quick", "--bin", bin, "--report", report}, &stdout, &stderr, "test")
	t.Logf("stdout:\n%s\nstderr (tail):\n%s", stdout.String(), tailBytes(stderr.Bytes(), 3000))
	if code != 0 {
		for _, m := range haModes {
			b, _ := os.ReadFile(filepath.Join(report, m+"-server.log"))
			t.Logf("%s server log (tail):\n%s", m, tailBytes(b, 3000))
		}
		t.Fatalf("bench ha exited %d", code)
	}
	md, err := os.ReadFile(filepath.Join(report, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"write-scaling side by side", "history-read", "storm", "embedded ack p50 / p99", "ha ack p50 / p99",
		"state.store postgres", "PostgreSQL) 15"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	for _, m := range haModes {
		c, err := ReadCSV(filepath.Join(report, m, "write-scaling.csv"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.Rows {
			if c.Float(i, "after_drain") < c.Float(i, "ideal") || c.Float(i, "failed") != 0 || !(c.Float(i, "ack_p99_s") > 0) {
				t.Errorf("%s write-scaling row %d: not every value written, or no acknowledge latency: %v", m, i, c.Rows[i])
			}
		}
		s, err := ReadCSV(filepath.Join(report, m, "storm.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if s.Get(0, "fire_reached") != "true" || s.Get(0, "recover_reached") != "true" {
			t.Errorf("%s storm: not every problem shown and resolved: %v", m, s.Rows)
		}
	}
}

// `peregrine bench ha`'s command-line errors, before anything starts.
func TestBenchHAUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "usage: peregrine bench ha"},
		{[]string{"--target", "http://x/api_jsonrpc.php"}, 2, "--target is not used"},
		{[]string{"--modes", "embedded,zabbix"}, 2, `--modes: "zabbix" is neither embedded nor ha`},
		{[]string{"--scenarios", "write-scaling,nope"}, 2, `unknown scenario "nope"`},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"ha"}, tc.args...), &stdout, &stderr, "test")
		if code != tc.code || !strings.Contains(stderr.String()+stdout.String(), tc.want) {
			t.Errorf("%q: exit %d, %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
