package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// `peregrine ha`: usage and configuration errors without a database.
func TestHACommandErrors(t *testing.T) {
	dir := t.TempDir()
	embedded := filepath.Join(dir, "embedded.yaml")
	os.WriteFile(embedded, []byte("data_dir: "+dir+"\n"), 0o600)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ha"}, 2, "usage: peregrine ha"},
		{[]string{"ha", "status", "x"}, 2, "usage: peregrine ha"},
		{[]string{"ha", "remove-node"}, 2, "usage: peregrine ha"},
		{[]string{"ha", "-config", embedded, "status"}, 2, "state.store: postgres"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}

// `peregrine ha status|remove-node|set-failover-delay` against a
// cluster of one running node on a private PostgreSQL.
func TestIntegrationHACommand(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "peregrine.yaml")
	os.WriteFile(cfg, []byte("data_dir: "+dir+"\nstate:\n  store: postgres\n  postgres:\n    dsn: "+dsn+"\n"), 0o600)
	cmd := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"ha", "-config", cfg}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, e := cmd("status"); code != 1 || !strings.Contains(e, "no cluster in this database") {
		t.Fatalf("status before any node: %d %q", code, e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n, err := ha.Open(ctx, ha.Options{DSN: dsn, Name: "node-a", Address: "192.0.2.7", Port: 10051, FailoverDelay: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		n.Close(context.Background())
	}()
	deadline := time.Now().Add(10 * time.Second)
	for n.Lease() == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	code, out, e := cmd("status")
	if code != 0 || !strings.HasPrefix(out, "Failover delay: 60 seconds\nCluster status:\n") ||
		!strings.Contains(out, fmt.Sprintf("   1. %-25s %-25s %-30s %-11s ", n.ID(), "node-a", "192.0.2.7:10051", "active")) {
		t.Fatalf("status: %d\n%s%s", code, out, e)
	}
	if code, out, e := cmd("set-failover-delay", "5m"); code != 0 || out != "HA failover delay set to 300 seconds\n" {
		t.Fatalf("set-failover-delay 5m: %d %q %q", code, out, e)
	}
	if code, _, e := cmd("set-failover-delay", "5s"); code != 1 || !strings.Contains(e, "failover delay must be in range from 10s to 15m") {
		t.Fatalf("set-failover-delay 5s: %d %q", code, e)
	}
	if code, _, e := cmd("set-failover-delay", "soon"); code != 2 || !strings.Contains(e, `"soon" is not a delay`) {
		t.Fatalf("set-failover-delay soon: %d %q", code, e)
	}
	if code, _, e := cmd("remove-node", "node-a"); code != 1 || !strings.Contains(e, `node "node-a" is active`) {
		t.Fatalf("remove-node of the running active: %d %q", code, e)
	}
	if code, out, _ := cmd("status"); code != 0 || !strings.HasPrefix(out, "Failover delay: 300 seconds\n") {
		t.Fatalf("status after the change:\n%s", out)
	}
}
