package hamigrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/autoreg"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/daylog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/service"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// Sources are the embedded stores of a data directory (the server's
// paths: server.EventsPath and the others). An empty or missing one is
// skipped.
type Sources struct {
	Events, Audit, Alerts string // log directories
	PreprocessState       string // file
	AgentState            string // agent-state.db
	AutoregState          string // autoreg.db
	History               string // the embedded engine's directory
	// The SQL stores: catalog.db, auth.db, services.db.
	Catalog, Auth, Services string
}

// Options configures Run.
type Options struct {
	Sources Sources
	// Pool is the state database; Write runs a fenced transaction on it
	// and WriteSQL one on a database/sql handle of it: the HA lease's
	// Write and WriteSQL.
	Pool     *pgxpool.Pool
	Write    func(ctx context.Context, fn func(pgx.Tx) error) error
	WriteSQL func(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error
	// FenceSQL checks the lease as a database/sql transaction's first
	// statement (the lease's FenceSQL): the catalog, auth and services
	// steps' stores are opened with it (sqlitedb.PG).
	FenceSQL func(ctx context.Context, tx *sql.Tx) error
	// Schema holds the state tables; default pglog.DefaultSchema.
	Schema string
	// History receives the embedded history: a ClickHouse store that
	// acknowledges once inserted. Nil: the history step fails.
	History history.Writer
	// HistoryBatch is the most values per History.Write (default
	// 50,000); HistoryItems the items per progress mark (default 100).
	HistoryBatch, HistoryItems int
	// Out gets the progress lines; nil discards them.
	Out io.Writer
}

// Step is one store's part of the migration.
type Step struct {
	Name string
	Run  func(m *Migration, ctx context.Context) error
}

// Steps are the stores migrated, in order.
var Steps = []Step{
	{"catalog", func(m *Migration, ctx context.Context) error {
		return m.sqlStore(ctx, "catalog", m.o.Sources.Catalog, catalog.SQLSchema())
	}},
	{"auth", func(m *Migration, ctx context.Context) error {
		return m.sqlStore(ctx, "auth", m.o.Sources.Auth, auth.SQLSchema())
	}},
	{"services", func(m *Migration, ctx context.Context) error {
		return m.sqlStore(ctx, "services", m.o.Sources.Services, service.SQLSchema())
	}},
	{"events", func(m *Migration, ctx context.Context) error {
		return m.dayLog(ctx, "events", "event", "event_log", m.o.Sources.Events)
	}},
	{"audit", func(m *Migration, ctx context.Context) error {
		return m.dayLog(ctx, "audit", "audit", "audit_log", m.o.Sources.Audit)
	}},
	{"alerts", (*Migration).alerts},
	{"preprocess_state", (*Migration).preprocessState},
	{"log_positions", (*Migration).logPositions},
	{"autoreg", (*Migration).autoreg},
	{"history", (*Migration).history},
}

// Migration is one run of the steps.
type Migration struct {
	o     Options
	table string // quoted progress table
}

// Run runs every step in order and stops at the first error; a later
// Run resumes where it stopped.
func Run(ctx context.Context, o Options) error {
	if o.Pool == nil || o.Write == nil || o.WriteSQL == nil || o.FenceSQL == nil {
		return errors.New("hamigrate: Options needs Pool, Write, WriteSQL and FenceSQL (the HA lease's)")
	}
	if o.Schema == "" {
		o.Schema = pglog.DefaultSchema
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.HistoryBatch <= 0 {
		o.HistoryBatch = 50_000
	}
	if o.HistoryItems <= 0 {
		o.HistoryItems = 100
	}
	m := &Migration{o: o, table: pgx.Identifier{o.Schema, "migrate_progress"}.Sanitize()}
	if err := m.prepare(ctx); err != nil {
		return err
	}
	for _, st := range Steps {
		start := time.Now()
		if err := st.Run(m, ctx); err != nil {
			return fmt.Errorf("migrating %s: %w", st.Name, err)
		}
		fmt.Fprintf(o.Out, "%s: done (%s)\n", st.Name, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// prepare creates the progress table (fenced).
func (m *Migration) prepare(ctx context.Context) error {
	schema := pgx.Identifier{m.o.Schema}.Sanitize()
	return m.o.Write(ctx, func(tx pgx.Tx) error {
		for _, q := range []string{
			`SELECT pg_advisory_xact_lock(hashtext('peregrine_state:' || '` + strings.ReplaceAll(m.o.Schema, "'", "") + `'))`,
			`CREATE SCHEMA IF NOT EXISTS ` + schema,
			`CREATE TABLE IF NOT EXISTS ` + m.table + ` (
				store text NOT NULL, part text NOT NULL, done bigint NOT NULL, finished boolean NOT NULL,
				updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (store, part))`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("hamigrate: cannot prepare the progress table: %w", err)
			}
		}
		return nil
	})
}

// progress is a part's row: records (or the last item) done, finished.
func (m *Migration) progress(ctx context.Context, store, part string) (int64, bool, error) {
	var done int64
	var fin bool
	err := m.o.Pool.QueryRow(ctx, `SELECT done, finished FROM `+m.table+` WHERE store = $1 AND part = $2`, store, part).Scan(&done, &fin)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return done, fin, err
}

// mark sets a part's row inside tx.
func (m *Migration) mark(ctx context.Context, tx pgx.Tx, store, part string, done int64, fin bool) error {
	_, err := tx.Exec(ctx, `INSERT INTO `+m.table+` (store, part, done, finished) VALUES ($1, $2, $3, $4)
		ON CONFLICT (store, part) DO UPDATE SET done = EXCLUDED.done, finished = EXCLUDED.finished, updated_at = now()`, store, part, done, fin)
	return err
}

// markFinished sets a part finished in its own fenced transaction.
func (m *Migration) markFinished(ctx context.Context, store, part string, done int64) error {
	return m.o.Write(ctx, func(tx pgx.Tx) error { return m.mark(ctx, tx, store, part, done, true) })
}

// missing reports (and prints) a source that is not there.
func (m *Migration) missing(name, path string) bool {
	if path == "" {
		fmt.Fprintf(m.o.Out, "%s: no source given, skipped\n", name)
		return true
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(m.o.Out, "%s: %s does not exist, nothing to move\n", name, path)
		return true
	}
	return false
}

// Bounds of one chunk of log records (one transaction).
const (
	chunkRecords = 1024
	chunkBytes   = 4 << 20
)

// copyLog copies the records replay gives for each part into table
// (a pglog table), resuming each part after the records counted done.
func (m *Migration) copyLog(ctx context.Context, store, table string, parts []string, replay func(part string, fn func([]byte) error) error) error {
	l, err := pglog.Open(pglog.Options{Pool: m.o.Pool, Write: m.o.Write, Schema: m.o.Schema, Table: table})
	if err != nil {
		return err
	}
	defer l.Close()
	for _, part := range parts {
		done, fin, err := m.progress(ctx, store, part)
		if err != nil {
			return err
		}
		name := part
		if name == "" {
			name = "log"
		}
		if fin {
			fmt.Fprintf(m.o.Out, "%s %s: %d records, already moved\n", store, name, done)
			continue
		}
		var chunk [][]byte
		size := 0
		n := done
		flush := func(last bool) error {
			err := m.o.Write(ctx, func(tx pgx.Tx) error {
				if len(chunk) > 0 {
					if err := l.CopyTx(ctx, tx, part, chunk); err != nil {
						return err
					}
				}
				return m.mark(ctx, tx, store, part, n+int64(len(chunk)), last)
			})
			if err != nil {
				return fmt.Errorf("%s %s: writing records %d to %d: %w", store, name, n+1, n+int64(len(chunk)), err)
			}
			n += int64(len(chunk))
			chunk, size = chunk[:0], 0
			return nil
		}
		var i int64
		err = replay(part, func(rec []byte) error {
			if i++; i <= done {
				return nil
			}
			chunk = append(chunk, slices.Clone(rec))
			size += len(rec)
			if len(chunk) >= chunkRecords || size >= chunkBytes {
				if err := flush(false); err != nil {
					return err
				}
			}
			return ctx.Err()
		})
		if err == nil {
			err = flush(true)
		}
		if err != nil {
			return err
		}
		resumed := ""
		if done > 0 {
			resumed = fmt.Sprintf(" (resumed after %d)", done)
		}
		fmt.Fprintf(m.o.Out, "%s %s: %d records%s\n", store, name, n, resumed)
	}
	return nil
}

// dayLog moves a store kept by day (events, audit).
func (m *Migration) dayLog(ctx context.Context, store, name, table, dir string) error {
	if m.missing(store, dir) {
		return nil
	}
	b, err := daylog.Files(daylog.FileOptions{Name: name, Dir: dir})
	if err != nil {
		return err
	}
	defer b.Close()
	days, err := b.Days()
	if err != nil {
		return err
	}
	return m.copyLog(ctx, store, table, days, func(day string, fn func([]byte) error) error {
		_, err := b.Replay(day, false, fn)
		return err
	})
}

// alerts moves the alert log (one WAL, one part).
func (m *Migration) alerts(ctx context.Context) error {
	dir := m.o.Sources.Alerts
	if m.missing("alerts", dir) {
		return nil
	}
	return m.copyLog(ctx, "alerts", "alert_log", []string{""}, func(_ string, fn func([]byte) error) error {
		w, err := wal.Open(wal.Options{Dir: dir})
		if err != nil {
			return err
		}
		defer w.Close()
		return w.Replay(fn)
	})
}

// preprocessState moves the preprocessing state file into its blob.
func (m *Migration) preprocessState(ctx context.Context) error {
	path := m.o.Sources.PreprocessState
	if m.missing("preprocess_state", path) {
		return nil
	}
	if _, fin, err := m.progress(ctx, "preprocess_state", ""); err != nil || fin {
		if fin {
			fmt.Fprintln(m.o.Out, "preprocess_state: already moved")
		}
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b, err := pglog.OpenBlob(pglog.Options{Pool: m.o.Pool, Write: m.o.Write, Schema: m.o.Schema, Table: pipeline.StateTable}, pipeline.StateName)
	if err != nil {
		return err
	}
	if err := b.Save(data); err != nil {
		return err
	}
	fmt.Fprintf(m.o.Out, "preprocess_state: %d bytes\n", len(data))
	return m.markFinished(ctx, "preprocess_state", "", int64(len(data)))
}

// sqlWrite is WriteSQL bound to db.
func (m *Migration) sqlWrite(db *sql.DB) func(ctx context.Context, fn func(*sql.Tx) error) error {
	return func(ctx context.Context, fn func(*sql.Tx) error) error { return m.o.WriteSQL(ctx, db, fn) }
}

// logPositions moves the active agents' log positions.
func (m *Migration) logPositions(ctx context.Context) error {
	path := m.o.Sources.AgentState
	if m.missing("log_positions", path) {
		return nil
	}
	if _, fin, err := m.progress(ctx, "log_positions", ""); err != nil || fin {
		if fin {
			fmt.Fprintln(m.o.Out, "log_positions: already moved")
		}
		return err
	}
	src, err := ingest.OpenLogPositions(ctx, path, nil)
	if err != nil {
		return err
	}
	items, pos := src.All()
	src.Close()
	db := stdlib.OpenDBFromPool(m.o.Pool)
	dst, err := ingest.OpenLogPositionsPG(ctx, db, m.sqlWrite(db), m.o.Schema, nil)
	if err != nil {
		db.Close()
		return err
	}
	if len(items) > 0 {
		err = dst.Save(items, pos)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(m.o.Out, "log_positions: %d items\n", len(items))
	return m.markFinished(ctx, "log_positions", "", int64(len(items)))
}

// autoreg moves the auto-registered hosts.
func (m *Migration) autoreg(ctx context.Context) error {
	path := m.o.Sources.AutoregState
	if m.missing("autoreg", path) {
		return nil
	}
	if _, fin, err := m.progress(ctx, "autoreg", ""); err != nil || fin {
		if fin {
			fmt.Fprintln(m.o.Out, "autoreg: already moved")
		}
		return err
	}
	src, err := autoreg.OpenStore(ctx, path)
	if err != nil {
		return err
	}
	hosts, err := src.Load(ctx)
	src.Close()
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(m.o.Pool)
	defer db.Close()
	dst, err := autoreg.OpenStorePG(ctx, db, m.sqlWrite(db), m.o.Schema)
	if err != nil {
		return err
	}
	if len(hosts) > 0 {
		err = dst.Save(ctx, hosts, nil)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(m.o.Out, "autoreg: %d hosts\n", len(hosts))
	return m.markFinished(ctx, "autoreg", "", int64(len(hosts)))
}

// sqlStore moves an SQL store (catalog, auth, services) whole: the
// SQLite file migrated to this binary's schema (as a start of the
// server would), the PostgreSQL store opened (made at the same
// version), then every row replaced by the file's and the progress row
// set in one fenced transaction: all or nothing, so a rerun after a
// failure starts it again, and after success skips it.
func (m *Migration) sqlStore(ctx context.Context, name, path string, schema sqlitedb.Schema) error {
	if m.missing(name, path) {
		return nil
	}
	if _, fin, err := m.progress(ctx, name, ""); err != nil || fin {
		if fin {
			fmt.Fprintf(m.o.Out, "%s: already moved\n", name)
		}
		return err
	}
	lock, err := sqlitedb.Lock(path, schema.Kind, fmt.Errorf("%s %s is in use by a running server: stop it first", schema.Kind, path))
	if err != nil {
		return err
	}
	defer lock.Close()
	src, err := sqlitedb.Open(ctx, path, schema)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, begin, err := sqlitedb.OpenPG(ctx, sqlitedb.PG{Pool: m.o.Pool, Fence: m.o.FenceSQL}, schema)
	if err != nil {
		return err
	}
	defer dst.Close()
	tx, err := begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := sqlitedb.CopyToPG(ctx, src, tx); err != nil {
		return err
	}
	var tables int64
	if err := src.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").Scan(&tables); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+m.table+` (store, part, done, finished) VALUES (?, '', ?, true)
		ON CONFLICT (store, part) DO UPDATE SET done = EXCLUDED.done, finished = true, updated_at = now()`, name, tables); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(m.o.Out, "%s: %d tables\n", name, tables)
	return nil
}

// historyTill is past any clock ClickHouse holds (DateTime ends in 2106)
// and small enough for the engine's nanosecond arithmetic.
const historyTill = 1 << 33

// history moves the embedded engine's values into Options.History, item
// by item in ascending id order; the progress row holds the last item
// of the last chunk done.
func (m *Migration) history(ctx context.Context) error {
	dir := m.o.Sources.History
	if m.missing("history", dir) {
		return nil
	}
	if m.o.History == nil {
		return errors.New("no ClickHouse store to move the history into")
	}
	last, fin, err := m.progress(ctx, "history", "")
	if err != nil {
		return err
	}
	if fin {
		fmt.Fprintln(m.o.Out, "history: already moved")
		return nil
	}
	st, err := engine.Open(engine.Options{Dir: dir})
	if err != nil {
		return err
	}
	defer st.Close()
	items := st.Items()
	slices.Sort(items)
	todo := items[:0:0]
	for _, id := range items {
		if last == 0 || id > uint64(last) {
			todo = append(todo, id)
		}
	}
	if last > 0 {
		fmt.Fprintf(m.o.Out, "history: %d items, %d done before, resuming after item %d\n", len(items), len(items)-len(todo), last)
	} else {
		fmt.Fprintf(m.o.Out, "history: %d items\n", len(items))
	}
	var values, printed int64
	buf := make([]history.Sample, 0, m.o.HistoryBatch)
	write := func() error {
		if len(buf) == 0 {
			return nil
		}
		if err := m.o.History.Write(ctx, buf); err != nil {
			return err
		}
		values += int64(len(buf))
		buf = buf[:0]
		if values-printed >= 100_000 {
			printed = values
			fmt.Fprintf(m.o.Out, "history: %d values\n", values)
		}
		return nil
	}
	for start := 0; start < len(todo); start += m.o.HistoryItems {
		chunk := todo[start:min(start+m.o.HistoryItems, len(todo))]
		for _, id := range chunk {
			var werr error
			err := st.Read(ctx, history.Query{ItemID: id, From: 0, Till: historyTill}, func(v *history.Sample) bool {
				s := *v
				s.S = strings.Clone(s.S)
				if s.Log != nil {
					lm := *s.Log
					lm.Source = strings.Clone(lm.Source)
					s.Log = &lm
				}
				buf = append(buf, s)
				if len(buf) >= m.o.HistoryBatch {
					werr = write()
				}
				return werr == nil
			})
			if err == nil {
				err = werr
			}
			if err != nil {
				return fmt.Errorf("item %d: %w", id, err)
			}
		}
		if err := write(); err != nil {
			return err
		}
		lastID := int64(chunk[len(chunk)-1])
		if err := m.o.Write(ctx, func(tx pgx.Tx) error { return m.mark(ctx, tx, "history", "", lastID, false) }); err != nil {
			return err
		}
		fmt.Fprintf(m.o.Out, "history: %d of %d items, %d values\n", start+len(chunk), len(todo), values)
	}
	var lastID int64
	if len(items) > 0 {
		lastID = int64(items[len(items)-1])
	}
	return m.markFinished(ctx, "history", "", lastID)
}
