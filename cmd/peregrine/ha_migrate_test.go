package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/server"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// `peregrine ha migrate` moves a data directory's catalog into
// PostgreSQL and its history into ClickHouse as the cluster's node; a
// second run finds it all done.
func TestIntegrationHAMigrateCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL and ClickHouse")
	}
	pg := testutil.StartPostgres(t)
	ch := testutil.StartClickHouse(t)
	dir := t.TempDir()
	st, err := engine.Open(engine.Options{Dir: server.HistoryPath(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write(context.Background(), []history.Sample{{ItemID: 5, Clock: 1_700_000_000, Type: history.Float, F: 1.5}, {ItemID: 6, Clock: 1_700_000_000, Type: history.Uint, U: 2}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	catalogtest.Write(t, server.CatalogPath(dir), catalog.Spec{Hosts: []catalog.HostSpec{{Host: "moved", Groups: []string{"G"}}}})
	cfg := filepath.Join(dir, "peregrine.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`data_dir: %s
state:
  store: postgres
  postgres:
    dsn: postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable
history:
  store: clickhouse
  clickhouse:
    urls: [%q]
    database: hamigrate
ha:
  node_name: node-a
  node_address: 127.0.0.1:10051
  failover_delay: 10s
`, dir, pg.Port, ch.URL)), 0o600)
	for i, want := range [][2]string{{"history: 2 items\n", "catalog: "}, {"history: already moved\n", "catalog: already moved\n"}} {
		var out, errb bytes.Buffer
		if code := run([]string{"ha", "-config", cfg, "migrate"}, &out, &errb); code != 0 || !strings.Contains(out.String(), want[0]) || !strings.Contains(out.String(), want[1]) || !strings.HasSuffix(out.String(), "migration complete\n") {
			t.Fatalf("run %d: exit %d\n%s%s", i+1, code, out.String(), errb.String())
		}
		t.Logf("run %d:\n%s", i+1, out.String())
	}
	var out, errb bytes.Buffer
	if code := run([]string{"ha", "-config", filepath.Join(dir, "missing.yaml"), "migrate"}, &out, &errb); code == 0 {
		t.Fatal("a missing configuration migrated")
	}
}
