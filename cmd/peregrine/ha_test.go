package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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

// `peregrine serve` as a cluster node that cannot start (issue 31's
// bad configurations, without a database): ClickHouse not answering,
// PostgreSQL out of reach, and the embedded history in HA mode each
// exit 1 with the reason on stderr, no password in it, and no data
// directory made.
func TestServeHABadStart(t *testing.T) {
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}
	ch := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "Ok.\n") }))
	defer ch.Close()
	pgAddr, chAddr := free(), free()
	for _, tc := range []struct {
		name, history string
		code          int
		want          string
	}{
		{"ClickHouse missing", "store: clickhouse\n  clickhouse:\n    urls: ['http://default:ch5ecret@" + chAddr + "/']\n", 1,
			"ClickHouse does not answer at history.clickhouse.urls"},
		{"PostgreSQL unreachable", "store: clickhouse\n  clickhouse:\n    urls: ['" + ch.URL + "/']\n", 1,
			"cannot reach PostgreSQL at 127.0.0.1"},
		{"embedded history", "store: engine\n", 2, "ha.node_name: needs history.store: clickhouse"},
	} {
		dir := t.TempDir()
		data := filepath.Join(dir, "data")
		cfg := fmt.Sprintf("data_dir: %s\ntrapper:\n  listen: %s\nhttp:\n  listen: 127.0.0.1:0\nstate:\n  store: postgres\n  postgres:\n"+
			"    dsn: 'postgres://mon:pg5ecret@%s/x?sslmode=disable&connect_timeout=2'\nhistory:\n  %sha:\n  node_name: node-1\n  node_address: 127.0.0.1\n",
			data, free(), pgAddr, tc.history)
		path := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run([]string{"serve", "-config", path}, &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tc.name, code, errb.String(), tc.code, tc.want)
		}
		if strings.Contains(errb.String(), "5ecret") {
			t.Errorf("%s: a password in the error: %s", tc.name, errb.String())
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%s: the data directory was made (%v)", tc.name, err)
		}
	}
}
