package server

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/config"
)

// TestStatePostgresRefused: the state in PostgreSQL is written by the
// active node of a cluster (every write fenced by its lease), so a
// server with state.store: postgres and no ha.node_name refuses to
// start, saying so, before it writes anything into its data directory.
func TestStatePostgresRefused(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.Trapper.Listen, cfg.HTTP.Listen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.State = config.StateConfig{Store: "postgres", Postgres: config.StatePostgresConfig{DSN: "postgres://peregrine@127.0.0.1:1/x"}}
	cfg.History.Store = "clickhouse"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		s.closeAll()
		t.Fatal("a server with state.store: postgres started")
	}
	if !strings.Contains(err.Error(), `state.store: "postgres" needs ha.node_name`) {
		t.Fatalf("error %q", err)
	}
	if _, err := os.Stat(cfg.DataDir); !os.IsNotExist(err) {
		t.Fatalf("the data directory was created (%v)", err)
	}
}
