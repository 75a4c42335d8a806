package server

import (
	"context"
	"log/slog"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// runServer starts a server on cfg (an existing data directory or a new
// one) and returns it with a function that stops it and waits.
func runServer(t *testing.T, cfg config.Config) (*Server, func()) {
	t.Helper()
	return runServerLog(t, cfg, slog.New(slog.DiscardHandler))
}

func runServerLog(t *testing.T, cfg config.Config, log *slog.Logger) (*Server, func()) {
	t.Helper()
	s, err := New(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server stopped with %v", err)
		}
	}
	t.Cleanup(stop)
	return s, stop
}

func testConfig(t *testing.T, spec catalog.Spec) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Trapper.Listen = "127.0.0.1:0"
	cfg.HTTP.Listen = "127.0.0.1:0"
	catalogtest.Write(t, CatalogPath(cfg.DataDir), spec)
	return cfg
}

// TestLastValuesSurviveRestart pushes values, stops the server and starts
// it again on the same data directory: item.get's lastvalue, prevvalue and
// lastclock are the stored ones, whether the values were flushed into
// blocks before the stop or come back from the WAL.
func TestLastValuesSurviveRestart(t *testing.T) {
	cfg := testConfig(t, integrationSpec())
	s, stop := runServer(t, cfg)
	snap := s.Catalog.Snapshot()
	ids := map[string]uint64{}
	for _, key := range []string{"trap.float", "trap.uint", "trap.str", "trap.text"} {
		ids[key] = snap.Lookup("peregrine-test", key).ID
	}
	admin := adminLogin(t, s)
	push := func(vals ...map[string]any) {
		t.Helper()
		var res struct{ Response string }
		admin.ok("history.push", vals, &res)
		if res.Response != "success" {
			t.Fatalf("history.push: %+v", res)
		}
	}
	// trap.uint goes into blocks (flushed), the others stay in the WAL.
	push(map[string]any{"itemid": ids["trap.uint"], "value": 7, "clock": 1700000000, "ns": 0},
		map[string]any{"itemid": ids["trap.uint"], "value": 8, "clock": 1700000060, "ns": 5})
	if err := s.Store.(history.Flusher).Flush(); err != nil {
		t.Fatal(err)
	}
	push(map[string]any{"itemid": ids["trap.float"], "value": 1.25, "clock": 1700000100, "ns": 0},
		map[string]any{"itemid": ids["trap.float"], "value": 2.5, "clock": 1700000200, "ns": 0},
		map[string]any{"itemid": ids["trap.float"], "value": 3.75, "clock": 1700000300, "ns": 9},
		map[string]any{"itemid": ids["trap.str"], "value": "only one", "clock": 1700000400, "ns": 0})
	type row struct {
		Key       string `json:"key_"`
		LastValue string
		PrevValue string
		LastClock string
		LastNS    string
	}
	read := func(c *apiClient) map[string]row {
		t.Helper()
		var rows []row
		c.ok("item.get", map[string]any{
			"itemids": []uint64{ids["trap.float"], ids["trap.uint"], ids["trap.str"], ids["trap.text"]},
			"output":  []string{"key_", "lastvalue", "prevvalue", "lastclock", "lastns"},
		}, &rows)
		out := map[string]row{}
		for _, r := range rows {
			out[r.Key] = r
		}
		return out
	}
	before := read(admin)
	stop()

	s2, _ := runServer(t, cfg)
	after := read(adminLogin(t, s2))
	want := map[string]row{
		"trap.float": {"trap.float", "3.75", "2.5", "1700000300", "9"},
		"trap.uint":  {"trap.uint", "8", "7", "1700000060", "5"},
		// No value: "" for text, "0" for numbers (recorded from 6.0.14).
		"trap.str":  {"trap.str", "only one", "", "1700000400", "0"},
		"trap.text": {"trap.text", "", "", "0", "0"},
	}
	for key, w := range want {
		if before[key] != after[key] {
			t.Errorf("%s before the restart %+v, after %+v", key, before[key], after[key])
		}
		if after[key] != w {
			t.Errorf("%s after the restart %+v, want %+v", key, after[key], w)
		}
	}
}
