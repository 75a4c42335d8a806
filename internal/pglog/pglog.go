package pglog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// DefaultSchema is the PostgreSQL schema of Peregrine's state.
const DefaultSchema = "peregrine_state"

// ErrClosed is returned by appends after Close.
var ErrClosed = errors.New("pglog: the log is closed")

// defaultTimeout bounds a statement or write transaction.
const defaultTimeout = 30 * time.Second

// Bounds of one group commit.
const (
	groupRecords = 1024
	groupBytes   = 4 << 20
)

// Options configures Open.
type Options struct {
	// Pool reads; it must be the database Write writes to.
	Pool *pgxpool.Pool
	// Write runs fn in a fenced transaction and commits only if the
	// fence and fn succeed: (*ha.Lease).Write.
	Write func(ctx context.Context, fn func(pgx.Tx) error) error
	// Schema holds the tables; default DefaultSchema.
	Schema string
	// Table is the store's table (event_log, alert_log). Required.
	Table string
	// Timeout bounds each statement or write transaction; default 30 s.
	Timeout time.Duration
}

// migrations are the steps of a log table, in order; the table's row
// in schema_version counts those applied. Append only. %[1]s is the
// quoted schema, %[2]s the quoted table, %[3]s the index name.
var migrations = []string{
	`CREATE TABLE %[1]s.%[2]s (
		seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		part text NOT NULL,
		rec bytea NOT NULL
	);
	CREATE INDEX %[3]s ON %[1]s.%[2]s (part, seq)`,
}

// Log is one store's record log. See the package documentation.
type Log struct {
	o     Options
	table string // quoted schema.table

	mu       sync.Mutex
	queue    []rec
	closed   bool
	readOnly bool // OpenReader: no writer runs
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

type rec struct {
	part string
	b    []byte
	p    *Pending
}

// Pending is one appended record's acknowledgement.
type Pending struct {
	done chan struct{}
	err  error
}

// Wait returns nil once the record is committed, or why it is not.
func (p *Pending) Wait() error { <-p.done; return p.err }

// Open creates or upgrades the log's table (fenced) and starts its
// writer.
func Open(o Options) (*Log, error) {
	if o.Pool == nil || o.Write == nil || o.Table == "" {
		return nil, errors.New("pglog: Options needs Pool, Write (the HA lease's) and Table")
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	l := &Log{o: o, table: pgx.Identifier{o.Schema, o.Table}.Sanitize(),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if err := migrate(o, migrations); err != nil {
		return nil, err
	}
	go l.run()
	return l, nil
}

func (l *Log) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), l.o.Timeout)
}

// migrate creates or upgrades table o.Table with steps, in one fenced
// transaction (sqlitedb.MigratePG); a version newer than steps is
// refused.
func migrate(o Options, steps []string) error {
	if err := sqlitedb.CheckPGSchema(o.Schema); err != nil {
		return fmt.Errorf("pglog: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	schema := pgx.Identifier{o.Schema}.Sanitize()
	step := func(tx pgx.Tx, m string) error {
		_, err := tx.Exec(ctx, fmt.Sprintf(m, schema, pgx.Identifier{o.Table}.Sanitize(), pgx.Identifier{o.Table + "_part"}.Sanitize()))
		return err
	}
	err := o.Write(ctx, func(tx pgx.Tx) error {
		return sqlitedb.MigratePG(ctx, pgxTx{tx}, o.Schema, o.Table, int64(len(steps)), func() error {
			for _, m := range steps {
				if err := step(tx, m); err != nil {
					return err
				}
			}
			return nil
		}, func(v int64) error { return step(tx, steps[v]) })
	})
	if err != nil {
		return fmt.Errorf("pglog: cannot prepare %s.%s in PostgreSQL: %w", o.Schema, o.Table, err)
	}
	return nil
}

// pgxTx adapts a pgx transaction to sqlitedb.PGTx.
type pgxTx struct{ tx pgx.Tx }

func (t pgxTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.Exec(ctx, q, args...)
	return err
}

func (t pgxTx) QueryInt(ctx context.Context, q string, args ...any) (int64, bool, error) {
	var v int64
	err := t.tx.QueryRow(ctx, q, args...).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return v, err == nil, err
}

// Parts lists the parts holding records, ascending.
func (l *Log) Parts() ([]string, error) {
	ctx, cancel := l.ctx()
	defer cancel()
	return l.PartsContext(ctx)
}

// PartsContext is Parts bounded by ctx instead of Options.Timeout.
func (l *Log) PartsContext(ctx context.Context) ([]string, error) {
	rows, err := l.o.Pool.Query(ctx, `SELECT DISTINCT part FROM `+l.table+` ORDER BY part`)
	if err != nil {
		return nil, fmt.Errorf("pglog: cannot list %s: %w", l.o.Table, err)
	}
	parts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pglog: cannot list %s: %w", l.o.Table, err)
	}
	return parts, nil
}

// Replay calls fn with each record of part in append order; fn's error
// stops it and is returned.
func (l *Log) Replay(part string, fn func(rec []byte) error) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := l.o.Pool.Query(ctx, `SELECT rec FROM `+l.table+` WHERE part = $1 ORDER BY seq`, part)
	if err != nil {
		return fmt.Errorf("pglog: cannot read %s: %w", l.o.Table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return fmt.Errorf("pglog: cannot read %s: %w", l.o.Table, err)
		}
		if err := fn(b); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pglog: cannot read %s: %w", l.o.Table, err)
	}
	return nil
}

// Mark is the seq of the newest stored record (0 when empty): every
// record acknowledged before the call is at or below it.
func (l *Log) Mark() (int64, error) {
	ctx, cancel := l.ctx()
	defer cancel()
	var m int64
	if err := l.o.Pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM `+l.table).Scan(&m); err != nil {
		return 0, fmt.Errorf("pglog: cannot read %s: %w", l.o.Table, err)
	}
	return m, nil
}

// DeletePart deletes every record of part (fenced).
func (l *Log) DeletePart(part string) error {
	return l.exec(`DELETE FROM `+l.table+` WHERE part = $1`, part)
}

// DeleteThrough deletes every record at or below mark (fenced).
func (l *Log) DeleteThrough(mark int64) error {
	return l.exec(`DELETE FROM `+l.table+` WHERE seq <= $1`, mark)
}

func (l *Log) exec(q string, arg any) error {
	if l.readOnly {
		return ErrClosed
	}
	ctx, cancel := l.ctx()
	defer cancel()
	err := l.o.Write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, q, arg)
		return err
	})
	if err != nil {
		return fmt.Errorf("pglog: cannot delete from %s: %w", l.o.Table, err)
	}
	return nil
}

// AppendAsync queues a copy of b in part and returns at once.
func (l *Log) AppendAsync(part string, b []byte) *Pending {
	p := &Pending{done: make(chan struct{})}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		p.err = ErrClosed
		close(p.done)
		return p
	}
	l.queue = append(l.queue, rec{part: part, b: append([]byte(nil), b...), p: p})
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return p
}

// Close writes what is queued and stops the writer. Later appends fail
// with ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed || l.readOnly {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	return nil
}

func (l *Log) run() {
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
func (l *Log) flush() bool {
	l.mu.Lock()
	n, size := 0, 0
	for n < len(l.queue) && n < groupRecords && (n == 0 || size+len(l.queue[n].b) <= groupBytes) {
		size += len(l.queue[n].b)
		n++
	}
	group := l.queue[:n:n]
	l.queue = l.queue[n:]
	l.mu.Unlock()
	if n == 0 {
		return false
	}
	ctx, cancel := l.ctx()
	err := l.o.Write(ctx, func(tx pgx.Tx) error {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{l.o.Schema, l.o.Table}, []string{"part", "rec"}, pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			return []any{group[i].part, group[i].b}, nil
		}))
		return err
	})
	cancel()
	if err != nil {
		err = fmt.Errorf("pglog: PostgreSQL refused the write to %s: %w", l.o.Table, err)
	}
	for _, r := range group {
		r.p.err = err
		close(r.p.done)
	}
	return true
}

// CopyTx appends recs to part inside the caller's transaction tx (one
// that the caller fences, e.g. in Options.Write), so that the records
// commit or vanish together with the caller's other writes: the
// migration from an embedded data directory records its progress in
// the same transaction (package hamigrate).
func (l *Log) CopyTx(ctx context.Context, tx pgx.Tx, part string, recs [][]byte) error {
	_, err := tx.CopyFrom(ctx, pgx.Identifier{l.o.Schema, l.o.Table}, []string{"part", "rec"}, pgx.CopyFromSlice(len(recs), func(i int) ([]any, error) {
		return []any{part, recs[i]}, nil
	}))
	return err
}
