package server

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/clickhouse"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// What the ClickHouse backend offers the server: trends, retention,
// server-side downsampling and batched reads; no head to flush and no
// compaction (ClickHouse merges by itself).
var (
	_ history.TrendReader = (*clickhouse.Store)(nil)
	_ history.Dropper     = (*clickhouse.Store)(nil)
	_ history.Downsampler = (*clickhouse.Store)(nil)
	_ history.BatchReader = (*clickhouse.Store)(nil)
	_ history.Counter     = (*clickhouse.Store)(nil)
)

// TestIntegrationClickHouseStore: history.store: clickhouse opens the
// ClickHouse backend; a value sent by the real zabbix_sender is
// acknowledged, readable at once and shipped, and the backlog is on
// /metrics.
func TestIntegrationClickHouseStore(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts clickhouse-server and runs zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	ch := testutil.StartClickHouse(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Trapper.Listen = "127.0.0.1:0"
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.History.Store = "clickhouse"
	cfg.History.ClickHouse.URLs = []string{ch.URL}
	cfg.History.ClickHouse.FlushInterval = config.Duration(50 * time.Millisecond)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	catalogtest.Write(t, CatalogPath(cfg.DataDir), integrationSpec())
	s, err := New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server stopped with %v", err)
		}
	}()
	cs, ok := s.Store.(*clickhouse.Store)
	if !ok {
		t.Fatalf("history.store: clickhouse opened %T", s.Store)
	}
	r := testutil.RunSender(t, s.TrapperAddr().String(), "-s", "peregrine-test", "-k", "trap.float", "-o", "2.5")
	if r.Processed != 1 {
		t.Fatalf("%+v", r)
	}
	if got := s.readItem(t, "peregrine-test", "trap.float"); len(got) != 1 || got[0].F != 2.5 {
		t.Fatalf("read %+v right after the acknowledgement", got)
	}
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	defer fcancel()
	if err := cs.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	var m strings.Builder
	s.Metrics.WriteText(&m)
	if !strings.Contains(m.String(), "peregrine_clickhouse_spool_values 0") || !strings.Contains(m.String(), "peregrine_clickhouse_shipped_values_total 1") {
		t.Fatalf("metrics after shipping:\n%s", m.String())
	}
	// A restart restores the item's last value from ClickHouse (the
	// spool is empty) through the batched newest read.
	id := s.Catalog.Snapshot().Lookup("peregrine-test", "trap.float").ID
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("server stopped with %v", err)
	}
	done <- nil // for the deferred stop
	s2, stop2 := runServer(t, cfg)
	defer stop2()
	if last, _, ok := s2.Pipeline.Last(id); !ok || last.F != 2.5 || last.Type != history.Float {
		t.Fatalf("last value after a restart: %+v, %v; want 2.5", last, ok)
	}
}
