package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// schemaVersion is the version of the schema below. Open refuses a
// database with a newer version and migrates older ones (none exist yet).
const schemaVersion = 1

// schema is the SQLite schema. Notes:
//   - IDs are AUTOINCREMENT so that an ID is never reused: a recycled user
//     ID would hand a deleted user's audit trail to a new one.
//   - users.passwd is a PHC string (see hash.go), never a password.
//   - attempt_failed counts consecutive failed logins and attempt_ms is
//     the time of the last one, as in Zabbix's users table, so a block
//     survives a restart.
//   - sessions.id_hash and tokens.token_hash are lowercase hex SHA-256 of
//     the secret: a copy of this file does not give anyone a live
//     session or token. Session and token secrets carry 128 and 256
//     random bits, so an unsalted fast hash is enough.
//   - Times ending in _ms are Unix milliseconds; token times are Unix
//     seconds, as in the Zabbix API.
//   - Deleting a user deletes its sessions and tokens (ON DELETE CASCADE;
//     the connection enables foreign_keys).
const schema = `
CREATE TABLE auth_meta (
	id             INTEGER PRIMARY KEY CHECK (id = 1),
	schema_version INTEGER NOT NULL
);
CREATE TABLE users (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	username       TEXT NOT NULL UNIQUE,
	name           TEXT NOT NULL DEFAULT '',
	surname        TEXT NOT NULL DEFAULT '',
	role           INTEGER NOT NULL,
	passwd         TEXT NOT NULL,
	attempt_failed INTEGER NOT NULL DEFAULT 0,
	attempt_ms     INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE sessions (
	id_hash        TEXT PRIMARY KEY,
	user_id        INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_ms     INTEGER NOT NULL,
	last_access_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_last_access ON sessions (last_access_ms);
CREATE TABLE tokens (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	name        TEXT NOT NULL,
	description TEXT NOT NULL,
	token_hash  TEXT UNIQUE,
	status      INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	created_at  INTEGER NOT NULL,
	last_access INTEGER NOT NULL,
	UNIQUE (user_id, name)
);
`

// expiredSessionRetention is how long an expired session's row is kept.
// While it exists, Authenticate answers ErrSessionExpired ("Session
// terminated, re-login, please.") rather than ErrNotAuthorized, which is
// what Zabbix users see until its housekeeper removes the session.
const expiredSessionRetention = 24 * time.Hour

// pruneEvery is the least time between two prunes of expired sessions.
const pruneEvery = time.Minute

// Store holds users, sessions and API tokens. It is safe for concurrent
// use; see the package documentation.
type Store struct {
	opts Options
	log  *slog.Logger
	db   *sql.DB
	lock *os.File
	h    *hasher

	// ops is held for reading by every method for its whole duration and
	// for writing by Close, so that Close waits for running calls and the
	// database is never closed under one. No method calls another
	// exported method while holding it.
	ops    sync.RWMutex
	closed bool

	// fillMu serialises the moves between the database and the caches:
	// filling a cache entry from a row, and deleting or changing rows
	// that may be cached. Without it, a cache fill that read a session
	// row just before a Logout deleted it could put the session back in
	// memory after the Logout, alive. It is never held on the path of a
	// cache hit.
	fillMu sync.Mutex

	// ensureMu serialises EnsureAdmin calls.
	ensureMu sync.Mutex

	// mu guards the maps below (not the entries' atomic fields).
	// Lock order: ops, then fillMu, then mu.
	mu        sync.RWMutex
	sessions  map[secretHash]*sessionEntry
	tokens    map[secretHash]*tokenEntry
	tokenByID map[uint64]secretHash

	// lastPrune is the (injected-clock) time of the last prune, in Unix
	// milliseconds.
	lastPrune atomic.Int64
}

// Open opens or creates the database at opts.Path. Only one Store may use
// a database file at a time, enforced with a lock file: the session and
// token caches trust that nobody else deletes rows behind their back.
func Open(ctx context.Context, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	lock, err := lockFile(opts.Path)
	if err != nil {
		return nil, err
	}
	db, err := openDB(ctx, opts.Path)
	if err != nil {
		lock.Close()
		return nil, err
	}
	s := &Store{
		opts:      opts,
		log:       opts.Logger,
		db:        db,
		lock:      lock,
		h:         newHasher(opts.HashParams, opts.MaxConcurrentHashes),
		sessions:  map[secretHash]*sessionEntry{},
		tokens:    map[secretHash]*tokenEntry{},
		tokenByID: map[uint64]secretHash{},
	}
	now := s.opts.Now()
	s.lastPrune.Store(now.UnixMilli())
	if err := s.pruneSessions(ctx, now); err != nil {
		s.db.Close()
		lock.Close()
		return nil, err
	}
	var users, sessions int
	err = db.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM sessions)").Scan(&users, &sessions)
	if err != nil {
		s.db.Close()
		lock.Close()
		return nil, fmt.Errorf("auth: cannot read %s: %w", opts.Path, err)
	}
	s.log.Info("auth store opened", "path", opts.Path, "users", users, "sessions", sessions)
	return s, nil
}

// begin marks the start of a method call; it fails after Close. Every
// successful begin is paired with end.
func (s *Store) begin() error {
	s.ops.RLock()
	if s.closed {
		s.ops.RUnlock()
		return ErrClosed
	}
	return nil
}

func (s *Store) end() { s.ops.RUnlock() }

// Close waits for running calls, writes the last-access times that the
// caches hold but the database does not yet, and closes the database.
// Further calls return ErrClosed. Closing twice is a no-op.
func (s *Store) Close() error {
	s.ops.Lock()
	defer s.ops.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	ferr := s.flushAccess(context.Background())
	err := s.db.Close()
	s.lock.Close() // releases the flock, after the database is closed
	if err != nil {
		return fmt.Errorf("auth: cannot close %s: %w", s.opts.Path, err)
	}
	if ferr != nil {
		return fmt.Errorf("auth: cannot save last-access times to %s: %w", s.opts.Path, ferr)
	}
	return nil
}

// lockFile takes an exclusive, non-blocking flock on path+".lock". The
// kernel drops it when the process dies, so a crash never leaves the
// database locked.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("auth: cannot open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w (is `peregrine serve` running on this data directory? stop it first; live changes go through the API)", path, ErrLocked)
		}
		return nil, fmt.Errorf("auth: cannot lock %s.lock: %w", path, err)
	}
	return f, nil
}

// dsn builds the modernc.org/sqlite data source name for path, with the
// same pragmas as the catalog: WAL with synchronous FULL (a created user,
// session or token survives a crash once the call returned), foreign keys
// on, a busy timeout for an operator's sqlite3 shell, and _txlock
// immediate so that a write transaction takes the write lock at BEGIN and
// a read-then-write check (a user name is free, the account is not
// blocked) cannot race another writer.
func dsn(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	q := url.Values{}
	for _, p := range []string{
		"busy_timeout(10000)",
		"journal_mode(WAL)",
		"synchronous(FULL)",
		"foreign_keys(1)",
		"journal_size_limit(16777216)",
	} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	return u.String() + "?" + q.Encode(), nil
}

// openDB opens the database, checks the journal mode and creates or
// checks the schema.
func openDB(ctx context.Context, path string) (*sql.DB, error) {
	name, err := dsn(path)
	if err != nil {
		return nil, fmt.Errorf("auth: cannot resolve Options.Path %q: %w", path, err)
	}
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, fmt.Errorf("auth: cannot open database %s: %w", path, err)
	}
	// One connection: the traffic is small (logins, cache misses, one
	// last-access write per session per AccessWriteInterval), SQLite has
	// one writer anyway, and every statement sees the pragmas.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := initSchema(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("auth: database %s: %w", path, err)
	}
	return db, nil
}

// initSchema creates the schema in a new database or checks the version
// of an existing one.
func initSchema(ctx context.Context, db *sql.DB) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("cannot read journal mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode is %q, not wal: put the auth database on a local file system that supports SQLite WAL", mode)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'auth_meta'").Scan(&n); err != nil {
		return fmt.Errorf("cannot read schema: %w", err)
	}
	if n == 0 {
		var tables int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'").Scan(&tables); err != nil {
			return fmt.Errorf("cannot read schema: %w", err)
		}
		if tables != 0 {
			return errors.New("the file is an SQLite database but not a Peregrine auth database: give Options.Path a new file")
		}
		if _, err := tx.ExecContext(ctx, schema); err != nil {
			return fmt.Errorf("cannot create schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO auth_meta (id, schema_version) VALUES (1, ?)", schemaVersion); err != nil {
			return fmt.Errorf("cannot create schema: %w", err)
		}
		return tx.Commit()
	}
	var ver int64
	if err := tx.QueryRowContext(ctx, "SELECT schema_version FROM auth_meta WHERE id = 1").Scan(&ver); err != nil {
		return fmt.Errorf("%w: cannot read auth_meta: %v", ErrCorrupt, err)
	}
	if ver > schemaVersion {
		return fmt.Errorf("schema version %d is newer than this binary supports (%d): run a newer Peregrine", ver, schemaVersion)
	}
	if ver < 1 {
		return fmt.Errorf("%w: schema version %d", ErrCorrupt, ver)
	}
	// Migrations from older versions go here.
	return tx.Commit()
}
