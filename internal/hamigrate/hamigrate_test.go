package hamigrate

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/autoreg"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/daylog"
	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/clickhouse"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/service"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

func stdlibDB(n *ha.Node) *sql.DB { return stdlib.OpenDBFromPool(n.Pool()) }

// dataDir builds an embedded data directory: events over two days and
// audit records over one (their day WALs), an alert log, the
// preprocessing state, log positions, an auto-registration, and history
// of items in the embedded engine. It returns the sources and the
// records each log holds, by part.
func dataDir(t *testing.T) (Sources, map[string]map[string][]string) {
	t.Helper()
	dir := t.TempDir()
	src := Sources{Events: filepath.Join(dir, "events"), Audit: filepath.Join(dir, "audit"), Alerts: filepath.Join(dir, "alerts"),
		PreprocessState: filepath.Join(dir, "preprocess.state"), AgentState: filepath.Join(dir, "agent-state.db"),
		AutoregState: filepath.Join(dir, "autoreg.db"), History: filepath.Join(dir, "history"),
		Catalog: filepath.Join(dir, "catalog.db"), Auth: filepath.Join(dir, "auth.db"), Services: filepath.Join(dir, "services.db")}
	want := map[string]map[string][]string{"events": {}, "audit": {}, "alerts": {}}
	day := func(store, name, d string, n int) {
		b, err := daylog.Files(daylog.FileOptions{Name: name, Dir: map[string]string{"events": src.Events, "audit": src.Audit}[store]})
		if err != nil {
			t.Fatal(err)
		}
		w, err := b.Create(d)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			r := fmt.Sprintf("%s %s record %d", store, d, i)
			if err := w.Append([]byte(r)); err != nil {
				t.Fatal(err)
			}
			want[store][d] = append(want[store][d], r)
		}
		w.Close()
	}
	day("events", "event", "20261127", 2500)
	day("events", "event", "20261128", 1100)
	day("audit", "audit", "20261128", 700)
	w, err := wal.Open(wal.Options{Dir: src.Alerts})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Replay(func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range 1500 {
		r := fmt.Sprintf(`{"alert":%d}`, i)
		if err := w.Append([]byte(r)); err != nil {
			t.Fatal(err)
		}
		want["alerts"][""] = append(want["alerts"][""], r)
	}
	w.Close()
	if err := os.WriteFile(src.PreprocessState, []byte("preprocessing state bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lp, err := ingest.OpenLogPositions(ctx, src.AgentState, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.Save([]uint64{7, 8}, []ingest.LogPos{{LastLogSize: 100, Mtime: 5}, {LastLogSize: 200, Mtime: 6}}); err != nil {
		t.Fatal(err)
	}
	lp.Close()
	ar, err := autoreg.OpenStore(ctx, src.AutoregState)
	if err != nil {
		t.Fatal(err)
	}
	if err := ar.Save(ctx, []autoreg.Host{{ID: 42, Request: autoreg.Request{Host: "migrated-agent", IP: "192.0.2.1", Port: 10050, Clock: time.Unix(1_700_000_000, 0)}}}, nil); err != nil {
		t.Fatal(err)
	}
	ar.Close()
	catalogtest.Write(t, src.Catalog, migratedSpec)
	as, err := auth.Open(ctx, auth.Options{Path: src.Auth})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := as.EnsureAdmin(ctx, filepath.Join(dir, "admin-password")); err != nil {
		t.Fatal(err)
	}
	if _, err := as.CreateUser(ctx, "migrated-user", "migrated-password-1", auth.RoleUser); err != nil {
		t.Fatal(err)
	}
	as.Close()
	sdb, err := sqlitedb.Open(ctx, src.Services, service.SQLSchema())
	if err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	st, err := engine.Open(engine.Options{Dir: src.History})
	if err != nil {
		t.Fatal(err)
	}
	var v []history.Sample
	for item := uint64(1); item <= histItems; item++ {
		for i := range histValues {
			s := history.Sample{ItemID: item, Clock: 1_700_000_000 + int64(i)*60, NS: int32(item), Type: history.Float, F: float64(i)}
			if item%3 == 0 {
				s.Type, s.S = history.Str, fmt.Sprintf("text %d", i)
			}
			v = append(v, s)
		}
	}
	if err := st.Write(ctx, v); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(); err != nil { // some in blocks, some in the head
		t.Fatal(err)
	}
	if err := st.Write(ctx, []history.Sample{{ItemID: histItems + 1, Clock: 1_700_000_000, Type: history.Uint, U: 9}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return src, want
}

const histItems, histValues = 250, 40

var migratedSpec = catalog.Spec{Hosts: []catalog.HostSpec{{Host: "migrated-host", Groups: []string{"Migrated"}, Items: []catalog.ItemSpec{
	{Key: "f1", ValueType: "float"}, {Key: "s1", ValueType: "character"},
}}}}

// A migration killed in the middle of a transaction again and again
// (each run one fenced write further than the last) and rerun until it
// finishes: every log record is in PostgreSQL once, in order, every
// value in ClickHouse once, and a last rerun changes nothing.
func TestIntegrationMigrateResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and ClickHouse")
	}
	pg := testutil.StartPostgres(t)
	ch := testutil.StartClickHouse(t)
	src, want := dataDir(t)
	ctx := context.Background()
	n, err := ha.Open(ctx, ha.Options{DSN: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port),
		Name: "migrate", Address: "127.0.0.1", Port: 10051, FailoverDelay: 10 * time.Second, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	nctx, ncancel := context.WithCancel(ctx)
	ndone := make(chan struct{})
	go func() { defer close(ndone); n.Run(nctx) }()
	defer func() { ncancel(); <-ndone; n.Close(ctx) }()
	for n.Lease() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	lease := n.Lease()
	chs, err := clickhouse.Open(ctx, clickhouse.Options{URLs: []string{ch.URL}, Database: "migrated", Ack: clickhouse.AckInserted})
	if err != nil {
		t.Fatal(err)
	}
	defer chs.Close()

	var runs int
	killedInHistory := false
	for k := 1; ; k++ {
		if k > 200 {
			t.Fatal("the migration did not finish in 200 runs")
		}
		calls := 0
		killed := errKilled
		var out bytes.Buffer
		rctx, cancel := context.WithCancel(ctx)
		hist := killWriter{w: chs, kill: func() bool { calls++; return calls >= k }, cancel: cancel}
		err := Run(rctx, Options{Sources: src, Pool: n.Pool(), History: hist, HistoryBatch: 3000, HistoryItems: 100, Out: &out,
			Write: func(ctx context.Context, fn func(pgx.Tx) error) error {
				calls++
				if calls < k {
					return lease.Write(ctx, fn)
				}
				// The k-th fenced write of this run dies before its commit.
				return lease.Write(ctx, func(tx pgx.Tx) error {
					if err := fn(tx); err != nil {
						return err
					}
					cancel()
					return killed
				})
			},
			WriteSQL: lease.WriteSQL,
			FenceSQL: func(ctx context.Context, tx *sql.Tx) error {
				calls++
				if calls < k {
					return lease.FenceSQL(ctx, tx)
				}
				// The k-th fenced write dies: its transaction never commits.
				cancel()
				return killed
			}})
		cancel()
		runs++
		if err == nil {
			t.Logf("finished on run %d; its output:\n%s", runs, out.String())
			break
		}
		if !errors.Is(err, killed) && !errors.Is(err, context.Canceled) {
			t.Fatalf("run %d: %v\n%s", runs, err, out.String())
		}
		killedInHistory = killedInHistory || strings.Contains(out.String(), "history: 100 of 251 items") || strings.Contains(out.String(), "history: 251 items")
	}
	if !killedInHistory {
		t.Fatal("no run was killed after inserting history and before marking it")
	}
	// Once more: nothing left to do, nothing written twice.
	var out bytes.Buffer
	if err := Run(ctx, Options{Sources: src, Pool: n.Pool(), History: chs, Out: &out, Write: lease.Write, WriteSQL: lease.WriteSQL, FenceSQL: lease.FenceSQL}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "catalog: already moved") || !strings.Contains(out.String(), "auth: already moved") || !strings.Contains(out.String(), "services: already moved") {
		t.Fatalf("a rerun after the end:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "history: already moved") || !strings.Contains(out.String(), "events 20261127: 2500 records, already moved") {
		t.Fatalf("a rerun after the end:\n%s", out.String())
	}

	for store, table := range map[string]string{"events": "event_log", "audit": "audit_log", "alerts": "alert_log"} {
		rows, err := n.Pool().Query(ctx, `SELECT part, rec FROM peregrine_state.`+table+` ORDER BY seq`)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]string{}
		for rows.Next() {
			var part string
			var rec []byte
			if err := rows.Scan(&part, &rec); err != nil {
				t.Fatal(err)
			}
			got[part] = append(got[part], string(rec))
		}
		rows.Close()
		for part, recs := range want[store] {
			if len(got[part]) != len(recs) {
				t.Fatalf("%s %q: %d records in PostgreSQL, want %d", store, part, len(got[part]), len(recs))
			}
			for i := range recs {
				if got[part][i] != recs[i] {
					t.Fatalf("%s %q record %d: %q, want %q", store, part, i, got[part][i], recs[i])
				}
			}
		}
		if len(got) != len(want[store]) {
			t.Fatalf("%s: parts %d, want %d", store, len(got), len(want[store]))
		}
	}
	var state []byte
	if err := n.Pool().QueryRow(ctx, `SELECT data FROM peregrine_state.preprocess_state WHERE name = 'state'`).Scan(&state); err != nil || string(state) != "preprocessing state bytes" {
		t.Fatalf("preprocessing state %q, %v", state, err)
	}
	db, lpw := sqlDB(t, n, lease)
	lp, err := ingest.OpenLogPositionsPG(ctx, db, lpw, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := lp.Get(8); !ok || p.LastLogSize != 200 || lp.Len() != 2 {
		t.Fatalf("log positions: %+v %v, %d", p, ok, lp.Len())
	}
	lp.Close()
	db, arw := sqlDB(t, n, lease)
	ar, err := autoreg.OpenStorePG(ctx, db, arw, "")
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := ar.Load(ctx)
	if err != nil || len(hosts) != 1 || hosts[0].Host != "migrated-agent" || hosts[0].ID != 42 {
		t.Fatalf("auto-registrations %+v, %v", hosts, err)
	}
	ar.Close()

	// The catalog and users, as the server opens them on a cluster node.
	wantCat := catalogtest.Open(t, migratedSpec).Snapshot()
	pgs := &sqlitedb.PG{Pool: n.Pool(), Fence: lease.FenceSQL}
	cat, err := catalog.Open(ctx, catalog.Options{Postgres: pgs})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"f1", "s1"} {
		got, w := cat.Snapshot().Lookup("migrated-host", key), wantCat.Lookup("migrated-host", key)
		if got == nil || got.ID != w.ID {
			t.Fatalf("item %s in the migrated catalog: %+v, want ID %d", key, got, w.ID)
		}
	}
	if _, err := cat.Apply(ctx, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "after-migration", Groups: []string{"Migrated"},
		Items: []catalog.ItemSpec{{Key: "f", ValueType: "float"}}}}}); err != nil {
		t.Fatal(err)
	}
	if id := cat.Snapshot().Lookup("after-migration", "f").ID; id <= wantCat.Lookup("migrated-host", "s1").ID {
		t.Fatalf("an item made after the migration has ID %d: IDs reused", id)
	}
	cat.Close()
	as, err := auth.Open(ctx, auth.Options{Postgres: pgs})
	if err != nil {
		t.Fatal(err)
	}
	users, err := as.Users(ctx)
	as.Close()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, u := range users {
		names[u.Username] = true
	}
	if !names["Admin"] || !names["migrated-user"] {
		t.Fatalf("users in PostgreSQL: %v", names)
	}

	for item := uint64(1); item <= histItems+1; item++ {
		var got []history.Sample
		err := chs.Read(ctx, history.Query{ItemID: item, From: 0, Till: 1<<32 - 1}, func(v *history.Sample) bool { got = append(got, *v); return true })
		if err != nil {
			t.Fatal(err)
		}
		wantN := histValues
		if item == histItems+1 {
			wantN = 1
		}
		if len(got) != wantN {
			t.Fatalf("item %d: %d values in ClickHouse, want %d", item, len(got), wantN)
		}
		if item%3 == 0 && item <= histItems && got[5].S != "text 5" {
			t.Fatalf("item %d: value %+v", item, got[5])
		}
	}
	t.Logf("%d runs, each killed one write later", runs)
}

func sqlDB(t *testing.T, n *ha.Node, l *ha.Lease) (*sql.DB, func(context.Context, func(*sql.Tx) error) error) {
	t.Helper()
	db := stdlibDB(n)
	t.Cleanup(func() { db.Close() })
	return db, func(ctx context.Context, fn func(*sql.Tx) error) error { return l.WriteSQL(ctx, db, fn) }
}

// killWriter is the history target of a run that dies at its k-th
// write: the insert lands, then the process "dies" before it counts it.
type killWriter struct {
	w      history.Writer
	kill   func() bool
	cancel context.CancelFunc
}

func (k killWriter) Write(ctx context.Context, v []history.Sample) error {
	if err := k.w.Write(ctx, v); err != nil {
		return err
	}
	if k.kill() {
		k.cancel()
		return errKilled
	}
	return nil
}

var errKilled = errors.New("killed")
