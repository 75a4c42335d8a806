package event

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/peregrine-mon/peregrine/internal/wal"
)

// Postgres keeps the store's records in PostgreSQL (state.store:
// postgres): table event_log of Schema holds the same records as the
// embedded day WALs (docs/format/events.md), one row each, with their
// day; retention deletes a day's rows. Every write, the schema's
// migrations included, runs in a transaction of Write, which checks
// the HA lease first ((*ha.Lease).Write): a node that lost its lease
// commits nothing, and a refused batch leaves no row.
type Postgres struct {
	// Pool reads (the replay at Open). It must be the database Write
	// writes to.
	Pool *pgxpool.Pool
	// Write runs fn in a fenced transaction and commits only if the
	// fence and fn succeed: (*ha.Lease).Write.
	Write func(ctx context.Context, fn func(pgx.Tx) error) error
	// Schema holds the tables; default DefaultPGSchema.
	Schema string
	// Timeout bounds each write transaction; default 30 s.
	Timeout time.Duration
}

// DefaultPGSchema is the PostgreSQL schema of Peregrine's state.
const DefaultPGSchema = "peregrine_state"

// Bounds of one group commit: the records queued while the previous
// transaction ran, up to these.
const (
	pgGroupRecords = 1024
	pgGroupBytes   = 4 << 20
)

// pgMigrations are the steps of the event store's part of the schema,
// in order; schema_version's row "event" counts those applied. Append
// only.
var pgMigrations = []string{
	`CREATE TABLE %[1]s.event_log (
		seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		day text NOT NULL CHECK (day ~ '^[0-9]{8}$'),
		rec bytea NOT NULL
	);
	CREATE INDEX event_log_day ON %[1]s.event_log (day, seq)`,
}

// pgLog is the PostgreSQL backend. Appends are queued and written by
// one goroutine, a group of records per fenced transaction (COPY), in
// the order they were appended.
type pgLog struct {
	p      Postgres
	schema string // quoted
	table  pgx.Identifier
	log    *slog.Logger

	mu     sync.Mutex
	queue  []pgRec
	closed bool
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

type pgRec struct {
	day string
	rec []byte
	p   *pgPending
}

// pgPending is one appended record's acknowledgement.
type pgPending struct {
	done chan struct{}
	err  error
}

func (p *pgPending) Wait() error { <-p.done; return p.err }

func openPG(p *Postgres, log *slog.Logger) (*pgLog, error) {
	if p.Pool == nil || p.Write == nil {
		return nil, errors.New("event: Options.Postgres needs Pool and Write (the HA lease's)")
	}
	o := *p
	if o.Schema == "" {
		o.Schema = DefaultPGSchema
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	l := &pgLog{p: o, schema: pgx.Identifier{o.Schema}.Sanitize(), table: pgx.Identifier{o.Schema, "event_log"}, log: log,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if err := l.migrate(); err != nil {
		return nil, err
	}
	go l.run()
	return l, nil
}

func (l *pgLog) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), l.p.Timeout)
}

// migrate creates or upgrades the schema in one fenced transaction,
// behind an advisory lock; a schema newer than this binary is refused.
func (l *pgLog) migrate() error {
	ctx, cancel := l.ctx()
	defer cancel()
	err := l.p.Write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('peregrine_state:' || $1))`, l.p.Schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+l.schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+l.schema+`.schema_version (
			component text PRIMARY KEY, version integer NOT NULL)`); err != nil {
			return err
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM `+l.schema+`.schema_version WHERE component = 'event' FOR UPDATE`).Scan(&v)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if v > len(pgMigrations) {
			return fmt.Errorf("the event tables are at version %d, newer than this Peregrine's %d: run the newer Peregrine", v, len(pgMigrations))
		}
		for _, m := range pgMigrations[v:] {
			if _, err := tx.Exec(ctx, fmt.Sprintf(m, l.schema)); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO `+l.schema+`.schema_version VALUES ('event', $1)
			ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version`, len(pgMigrations))
		return err
	})
	if err != nil {
		return fmt.Errorf("event: cannot prepare the PostgreSQL schema %s: %w", l.p.Schema, err)
	}
	return nil
}

func (l *pgLog) days() ([]string, error) {
	ctx, cancel := l.ctx()
	defer cancel()
	rows, err := l.p.Pool.Query(ctx, `SELECT DISTINCT day FROM `+l.table.Sanitize()+` ORDER BY day`)
	if err != nil {
		return nil, fmt.Errorf("event: cannot list the days in PostgreSQL: %w", err)
	}
	days, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("event: cannot list the days in PostgreSQL: %w", err)
	}
	return days, nil
}

func (l *pgLog) replay(day string, keep bool, fn func([]byte) error) (dayWriter, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := l.p.Pool.Query(ctx, `SELECT rec FROM `+l.table.Sanitize()+` WHERE day = $1 ORDER BY seq`, day)
	if err != nil {
		return nil, fmt.Errorf("event: cannot replay day %s from PostgreSQL: %w", day, err)
	}
	defer rows.Close()
	for rows.Next() {
		var rec []byte
		if err := rows.Scan(&rec); err != nil {
			return nil, fmt.Errorf("event: cannot replay day %s from PostgreSQL: %w", day, err)
		}
		if err := fn(rec); err != nil {
			return nil, fmt.Errorf("event: cannot replay day %s: %w", day, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("event: cannot replay day %s from PostgreSQL: %w", day, err)
	}
	if !keep {
		return nil, nil
	}
	return &pgDay{l: l, day: day}, nil
}

// create returns a writer: the day exists once its first record (the
// carry record) is stored.
func (l *pgLog) create(day string) (dayWriter, error) { return &pgDay{l: l, day: day}, nil }

func (l *pgLog) drop(day string) error {
	ctx, cancel := l.ctx()
	defer cancel()
	err := l.p.Write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM `+l.table.Sanitize()+` WHERE day = $1`, day)
		return err
	})
	if err != nil {
		return fmt.Errorf("event: cannot delete day %s in PostgreSQL: %w", day, err)
	}
	return nil
}

func (l *pgLog) dropped() error { return nil }

// close writes what is queued and stops the writer goroutine.
func (l *pgLog) close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	return nil
}

func (l *pgLog) enqueue(day string, rec []byte) *pgPending {
	p := &pgPending{done: make(chan struct{})}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		p.err = wal.ErrClosed
		close(p.done)
		return p
	}
	l.queue = append(l.queue, pgRec{day: day, rec: append([]byte(nil), rec...), p: p})
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return p
}

func (l *pgLog) run() {
	defer close(l.done)
	for {
		select {
		case <-l.wake:
		case <-l.stop:
			for l.flush() {
			}
			return
		}
		for l.flush() {
		}
	}
}

// flush writes one group of queued records; it reports whether there
// was one.
func (l *pgLog) flush() bool {
	l.mu.Lock()
	n, size := 0, 0
	for n < len(l.queue) && n < pgGroupRecords && (n == 0 || size+len(l.queue[n].rec) <= pgGroupBytes) {
		size += len(l.queue[n].rec)
		n++
	}
	group := l.queue[:n:n]
	l.queue = l.queue[n:]
	l.mu.Unlock()
	if n == 0 {
		return false
	}
	ctx, cancel := l.ctx()
	err := l.p.Write(ctx, func(tx pgx.Tx) error {
		_, err := tx.CopyFrom(ctx, l.table, []string{"day", "rec"}, pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			return []any{group[i].day, group[i].rec}, nil
		}))
		return err
	})
	cancel()
	if err != nil {
		err = fmt.Errorf("PostgreSQL refused the write: %w", err)
	}
	for _, r := range group {
		r.p.err = err
		close(r.p.done)
	}
	return true
}

// pgDay is the writer of one day.
type pgDay struct {
	l   *pgLog
	day string

	mu   sync.Mutex
	last *pgPending
}

func (d *pgDay) AppendAsync(rec []byte) waiter {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.l.enqueue(d.day, rec)
	d.last = p
	return p
}

func (d *pgDay) Append(rec []byte) error { return d.AppendAsync(rec).Wait() }

// Close waits until the day's queued records are written; their
// errors went to their own waiters.
func (d *pgDay) Close() error {
	d.mu.Lock()
	p := d.last
	d.mu.Unlock()
	if p != nil {
		p.Wait()
	}
	return nil
}
