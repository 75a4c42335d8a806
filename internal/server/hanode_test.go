package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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

// fakeClickHouse answers /ping as ClickHouse does: a node's start checks
// only that.
func fakeClickHouse(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			io.WriteString(w, "Ok.\n")
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// TestHANodeBadStartNoServices: ClickHouse not answering and PostgreSQL
// out of reach each stop a node's start with a clear error (no password
// in it), before the data directory is made.
func TestHANodeBadStartNoServices(t *testing.T) {
	addrs := freeAddrs(t, 3)
	dir := filepath.Join(t.TempDir(), "data")
	dsn := "postgres://mon:hunter2secret@" + addrs[0] + "/x?sslmode=disable&connect_timeout=2"
	cfg := haNodeConfig(dsn, "http://"+addrs[1]+"/", dir, "node-1", addrs[2], "127.0.0.1:0", 10*time.Second)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	_, err := New(context.Background(), cfg, log)
	if err == nil || !strings.Contains(err.Error(), "ClickHouse does not answer at history.clickhouse.urls") {
		t.Fatalf("ClickHouse missing: %v", err)
	}
	cfg.History.ClickHouse.URLs = []string{fakeClickHouse(t)}
	_, err = New(context.Background(), cfg, log)
	if err == nil || !strings.Contains(err.Error(), `cannot join the HA cluster as node "node-1"`) || !strings.Contains(err.Error(), "cannot reach PostgreSQL") || strings.Contains(err.Error(), "hunter2secret") {
		t.Fatalf("PostgreSQL unreachable: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a refused start made the data directory (%v)", err)
	}
}

// TestIntegrationHANodeBadStart: ClickHouse not answering while
// PostgreSQL is up, a running node of the same name, and one of another
// major.minor version, refuse a node's start: clear errors (no
// password), nothing written in PostgreSQL (no schema made, the
// registry as it was), no data directory.
func TestIntegrationHANodeBadStart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)
	ctx := context.Background()
	const delay = 10 * time.Second
	running := func(name, version string) (stop func()) {
		n, err := ha.Open(ctx, ha.Options{DSN: dsn, Name: name, Address: "127.0.0.1", Port: 10051, FailoverDelay: delay, Version: version})
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- n.Run(rctx) }()
		// Active before the registry is compared: its row changes then.
		for t0 := time.Now(); n.Lease() == nil; time.Sleep(20 * time.Millisecond) {
			if time.Since(t0) > time.Minute {
				t.Fatalf("%s never became active", name)
			}
		}
		return func() { cancel(); <-done; n.Close(ctx) }
	}
	rows := func() string {
		return pg.Exec(`SELECT string_agg(name || ':' || status, ',' ORDER BY name) FROM peregrine_ha.node`)
	}
	// Every schema and table outside PostgreSQL's own.
	tables := func() string {
		return pg.Exec(`SELECT coalesce(string_agg(n.nspname || '.' || coalesce(c.relname, ''), ',' ORDER BY n.nspname, c.relname), '')
			FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind = 'r'
			WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname NOT IN ('information_schema', 'public')`)
	}
	addrs := freeAddrs(t, 2)
	dir := filepath.Join(t.TempDir(), "data")

	// ClickHouse does not answer (nothing listens at its URL, which
	// carries a password): refused before PostgreSQL is touched.
	cfg := haNodeConfig(dsn, "http://default:ch5ecret@"+addrs[1]+"/", dir, "node-2", addrs[0], "127.0.0.1:0", delay)
	_, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "ClickHouse does not answer at history.clickhouse.urls") || strings.Contains(err.Error(), "ch5ecret") {
		t.Fatalf("ClickHouse missing: %v", err)
	}
	if got := tables(); got != "" {
		t.Fatalf("a start refused for ClickHouse wrote into PostgreSQL: %s", got)
	}
	cfg.History.ClickHouse.URLs = []string{fakeClickHouse(t)}

	stop := running("node-old", "0.0.1")
	before, beforeTables := rows(), tables()
	_, err = New(ctx, cfg, slog.New(slog.DiscardHandler))
	if !errors.Is(err, ha.ErrVersion) || !strings.Contains(err.Error(), `node "node-old" runs Peregrine 0.0.1`) {
		t.Fatalf("node-2 beside a running node of version 0.0: %v", err)
	}
	if after := rows(); after != before {
		t.Fatalf("the registry changed: %s, was %s", after, before)
	}
	if after := tables(); after != beforeTables {
		t.Fatalf("a refused start made tables: %s, was %s", after, beforeTables)
	}
	stop()

	defer running("node-1", Version)()
	before = rows()
	cfg.HA.NodeName = "node-1"
	_, err = New(ctx, cfg, slog.New(slog.DiscardHandler))
	if !errors.Is(err, ha.ErrNameInUse) || !strings.Contains(err.Error(), `as node "node-1"`) {
		t.Fatalf("a second node-1: %v", err)
	}
	if after := rows(); after != before {
		t.Fatalf("the registry changed: %s, was %s", after, before)
	}
	if after := tables(); after != beforeTables {
		t.Fatalf("a refused start made tables: %s, was %s", after, beforeTables)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a refused start made the data directory (%v)", err)
	}
}

// TestIntegrationHANodeLosesPostgres: an active node whose PostgreSQL
// stops loses its lease before the failover delay is over, stops its
// active server (the trapper port closes) and is standby; when
// PostgreSQL is back it is active again, with a new server.
func TestIntegrationHANodeLosesPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL and ClickHouse")
	}
	pg := testutil.StartPostgres(t)
	ch := testutil.StartClickHouse(t)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", pg.Port)
	const delay = 10 * time.Second
	addrs := freeAddrs(t, 1)
	dir := filepath.Join(t.TempDir(), "data")
	cfg := haNodeConfig(dsn, ch.URL, dir, "node-1", addrs[0], "127.0.0.1:0", delay)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	wait := func(what string, within time.Duration, ok func() bool) time.Duration {
		t.Helper()
		t0 := time.Now()
		for !ok() {
			if time.Since(t0) > within {
				t.Fatalf("%s: not within %s", what, within)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return time.Since(t0)
	}
	wait("active", time.Minute, func() bool { return s.Active() != nil })
	first := s.Active()
	if got := standbyCall(t, s.HTTPAddr().String(), "apiinfo.version"); !strings.Contains(got, `"result":"6.0.14"`) {
		t.Fatalf("the active node's API: %s", got)
	}
	pg.Stop()
	took := wait("standby after PostgreSQL stopped", delay, func() bool { return s.Active() == nil })
	t.Logf("PostgreSQL stopped: the active server stopped after %s (failover delay %s)", took.Round(100*time.Millisecond), delay)
	if c, err := net.DialTimeout("tcp", addrs[0], time.Second); err == nil {
		c.Close()
		t.Fatal("the trapper port is open on a node without the lease")
	}
	if got := standbyCall(t, s.HTTPAddr().String(), "host.create"); !strings.Contains(got, "standby node") {
		t.Fatalf("the standby's API: %s", got)
	}
	pg.Start()
	wait("active again", 2*time.Minute, func() bool { a := s.Active(); return a != nil && a != first })
}
