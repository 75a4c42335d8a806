package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// LogPos is where an active agent is in a log item's file: the byte
// offset after the last line it sent (lastlogsize) and, for logrt items,
// the modification time of the file it was reading (mtime).
type LogPos struct {
	LastLogSize uint64
	Mtime       int64
}

// ErrLogPositionsLocked is wrapped when another process owns the file.
var ErrLogPositionsLocked = errors.New("the active-agent state file is in use by another process")

// ErrLogPositionsCorrupt is wrapped when the file's meta row is unusable.
var ErrLogPositionsCorrupt = errors.New("the active-agent state file is corrupt")

// errLogPositionsClosed is returned by Save after Close.
var errLogPositionsClosed = errors.New("log positions: closed")

const logPosSchemaVersion = 1

var logPosSchema = sqlitedb.Schema{
	Kind: "active-agent state",
	Meta: "agent_state_meta",
	Create: `
CREATE TABLE agent_state_meta (id INTEGER PRIMARY KEY CHECK (id = 1), schema_version INTEGER NOT NULL);
CREATE TABLE log_position (
	itemid      INTEGER PRIMARY KEY,
	lastlogsize INTEGER NOT NULL,
	mtime       INTEGER NOT NULL
);`,
	Version:    logPosSchemaVersion,
	InsertMeta: "INSERT INTO agent_state_meta (id, schema_version) VALUES (1, ?)",
	Corrupt:    ErrLogPositionsCorrupt,
	// One small row per log item: SQLite's own WAL kept at most 4 MiB.
	Pragmas: []string{"journal_size_limit(4194304)"},
}

// LogPositions keeps the lastlogsize and mtime of active log items in a
// small owner-only SQLite file, so that an agent that restarts (and
// asks the server where to resume) and a server that restarts both
// resume where the last stored value left off.
//
// Save is called once the values of a request are durable in the
// history store, and returns once the positions are committed too: the
// agent's reply waits for both, so a position on disk never runs ahead
// of the values it follows, and an acknowledged line is not read again
// by a restarted agent. Concurrent Saves are grouped into one
// transaction (one fsync) by a single writer goroutine.
//
// Get reads an in-memory copy of what is committed; it is what "active
// checks" replies carry.
//
// Positions of deleted items stay in the file until Prune removes them
// (the server prunes at start against the catalog); they are a few bytes
// each.
type LogPositions struct {
	db   *sql.DB
	lock *os.File // nil in PostgreSQL
	log  *slog.Logger
	// write runs fn in a transaction and commits if it succeeds: plain
	// in SQLite, fenced by the HA lease in PostgreSQL (logpos_pg.go).
	write func(ctx context.Context, fn func(*sql.Tx) error) error
	// upsert and del are the statements in the database's dialect.
	upsert, del string

	mu  sync.RWMutex
	pos map[uint64]LogPos // committed; guarded by mu

	wmu     sync.Mutex
	pending map[uint64]LogPos // guarded by wmu
	gen     *posGen           // the commit pending will go into; guarded by wmu
	closed  bool              // guarded by wmu
	kick    chan struct{}
	stopped chan struct{}
}

// posGen is one group commit: Saves that joined it wait on done and read
// err after.
type posGen struct {
	done chan struct{}
	err  error
}

// OpenLogPositions opens (creating if needed) the state file at path,
// takes its lock and loads every position.
func OpenLogPositions(ctx context.Context, path string, logger *slog.Logger) (*LogPositions, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	lock, err := sqlitedb.Lock(path, "active-agent state", ErrLogPositionsLocked)
	if err != nil {
		return nil, err
	}
	db, err := sqlitedb.Open(ctx, path, logPosSchema)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return newLogPositions(ctx, db, lock, logger, plainTx(db), sqliteUpsert, sqliteDelete, path)
}

// SQLite's statements.
const (
	sqliteUpsert = "INSERT INTO log_position (itemid, lastlogsize, mtime) VALUES (?, ?, ?) ON CONFLICT (itemid) DO UPDATE SET lastlogsize = excluded.lastlogsize, mtime = excluded.mtime"
	sqliteDelete = "DELETE FROM log_position WHERE itemid = ?"
)

// plainTx runs fn in a transaction of db.
func plainTx(db *sql.DB) func(ctx context.Context, fn func(*sql.Tx) error) error {
	return func(ctx context.Context, fn func(*sql.Tx) error) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit()
	}
}

// newLogPositions loads every position from table (log_position in its
// schema) and starts the writer.
func newLogPositions(ctx context.Context, db *sql.DB, lock *os.File, logger *slog.Logger,
	write func(ctx context.Context, fn func(*sql.Tx) error) error, upsert, del, path string) (*LogPositions, error) {
	return loadLogPositions(ctx, &LogPositions{
		db: db, lock: lock, log: logger, write: write, upsert: upsert, del: del,
		pos:     map[uint64]LogPos{},
		pending: map[uint64]LogPos{},
		gen:     &posGen{done: make(chan struct{})},
		kick:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
	}, path, "log_position")
}

func loadLogPositions(ctx context.Context, p *LogPositions, path, table string) (*LogPositions, error) {
	rows, err := p.db.QueryContext(ctx, "SELECT itemid, lastlogsize, mtime FROM "+table)
	if err != nil {
		p.closeFiles()
		return nil, fmt.Errorf("active-agent state %s: cannot read log positions: %w", path, err)
	}
	for rows.Next() {
		var id, size, mtime int64
		if err := rows.Scan(&id, &size, &mtime); err != nil {
			rows.Close()
			p.closeFiles()
			return nil, fmt.Errorf("active-agent state %s: cannot read log positions: %w", path, err)
		}
		p.pos[uint64(id)] = LogPos{LastLogSize: uint64(size), Mtime: mtime}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		p.closeFiles()
		return nil, fmt.Errorf("active-agent state %s: cannot read log positions: %w", path, err)
	}
	rows.Close()
	go p.writer()
	return p, nil
}

// Get returns the committed position of a log item.
func (p *LogPositions) Get(item uint64) (LogPos, bool) {
	p.mu.RLock()
	lp, ok := p.pos[item]
	p.mu.RUnlock()
	return lp, ok
}

// All returns every committed position (the migration to PostgreSQL
// copies them).
func (p *LogPositions) All() (items []uint64, pos []LogPos) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for id, lp := range p.pos {
		items, pos = append(items, id), append(pos, lp)
	}
	return items, pos
}

// Len returns the number of positions kept.
func (p *LogPositions) Len() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.pos)
}

// Save commits the positions (item → position; a later entry for the
// same item wins) and returns once they are durable.
func (p *LogPositions) Save(items []uint64, pos []LogPos) error {
	p.wmu.Lock()
	if p.closed {
		p.wmu.Unlock()
		return errLogPositionsClosed
	}
	for i, id := range items {
		p.pending[id] = pos[i]
	}
	g := p.gen
	p.wmu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default: // the writer is already due to run
	}
	<-g.done
	return g.err
}

// writer commits pending positions, one transaction per round, until
// Close.
func (p *LogPositions) writer() {
	defer close(p.stopped)
	for range p.kick {
		p.wmu.Lock()
		batch, g, closed := p.pending, p.gen, p.closed
		p.pending = map[uint64]LogPos{}
		p.gen = &posGen{done: make(chan struct{})}
		p.wmu.Unlock()
		if len(batch) > 0 {
			g.err = p.commit(batch)
		}
		close(g.done)
		if closed {
			return
		}
	}
}

func (p *LogPositions) commit(batch map[uint64]LogPos) error {
	// The context is not the request's: a commit serves several requests,
	// and one giving up must not roll back the others' positions.
	ctx := context.Background()
	err := p.write(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, p.upsert)
		if err != nil {
			return err
		}
		defer st.Close()
		for id, lp := range batch {
			// SQLite's and PostgreSQL's integers are signed 64-bit; no log
			// file reaches 2^63 bytes, so the conversion is exact in practice.
			if _, err := st.ExecContext(ctx, int64(id), int64(lp.LastLogSize), lp.Mtime); err != nil {
				return fmt.Errorf("item %d: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot save log positions: %w", err)
	}
	p.mu.Lock()
	for id, lp := range batch {
		p.pos[id] = lp
	}
	p.mu.Unlock()
	return nil
}

// Prune removes the positions of items keep says no longer exist.
func (p *LogPositions) Prune(ctx context.Context, keep func(item uint64) bool) (int, error) {
	p.mu.RLock()
	var drop []uint64
	for id := range p.pos {
		if !keep(id) {
			drop = append(drop, id)
		}
	}
	p.mu.RUnlock()
	if len(drop) == 0 {
		return 0, nil
	}
	err := p.write(ctx, func(tx *sql.Tx) error {
		for _, id := range drop {
			if _, err := tx.ExecContext(ctx, p.del, int64(id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cannot prune log positions: %w", err)
	}
	p.mu.Lock()
	for _, id := range drop {
		delete(p.pos, id)
	}
	p.mu.Unlock()
	return len(drop), nil
}

// Close commits what is pending, stops the writer and closes the file.
// Saves after Close fail.
func (p *LogPositions) Close() error {
	p.wmu.Lock()
	if p.closed {
		p.wmu.Unlock()
		return nil
	}
	p.closed = true
	p.wmu.Unlock()
	// The writer's next round sees closed, commits what is pending and
	// returns. A kick already buffered starts that round as well.
	select {
	case p.kick <- struct{}{}:
	default:
	}
	<-p.stopped
	return p.closeFiles()
}

func (p *LogPositions) closeFiles() error {
	err := p.db.Close()
	if p.lock == nil {
		return err
	}
	if cerr := p.lock.Close(); err == nil {
		err = cerr
	}
	return err
}
