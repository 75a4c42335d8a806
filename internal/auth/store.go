package auth

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// schemaVersion is the version of the schema below. Open refuses a
// database with a newer version and migrates older ones (migrations).
const schemaVersion = 4

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
//   - User groups (version 2, usergroups.go): usrgrp, its members
//     (users_groups) and its permissions on host groups (rights).
//     rights.hostgroup_id is a catalog host group ID: another database,
//     so no foreign key; rights of deleted host groups are ignored by the
//     API, which reads the catalog. Deleting a user or a user group
//     deletes its memberships and rights (ON DELETE CASCADE).
//   - Roles (version 3, roles.go): Zabbix 6.0's user roles, their rules
//     as JSON; users.role_id names one (the column was the user type,
//     1..3, before: the default roles 1..3 have those types, so the
//     rename is the whole migration of existing users). Profile fields
//     of Zabbix's users table, Zabbix's config table (settings.go: the
//     members of settings, housekeeping and authentication that were
//     changed; the others read as their defaults) and
//     auth_meta.defaults, the version of the default objects
//     EnsureDefaults last added.
//   - Dashboards (version 4, dashboards.go): one row per dashboard with
//     its pages and widgets as JSON, shares with users and user groups
//     as rows (deleted with the user or group), page and widget ID
//     counters.
var schema = `
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
` + userGroupSchema + roleSchemaSQL + dashboardSchema

// userGroupSchema is what version 2 added: user groups.
const userGroupSchema = `
CREATE TABLE usrgrp (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	name         TEXT NOT NULL UNIQUE,
	gui_access   INTEGER NOT NULL DEFAULT 0,
	users_status INTEGER NOT NULL DEFAULT 0,
	debug_mode   INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE users_groups (
	usrgrp_id INTEGER NOT NULL REFERENCES usrgrp (id) ON DELETE CASCADE,
	user_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	PRIMARY KEY (usrgrp_id, user_id)
) WITHOUT ROWID;
CREATE INDEX users_groups_user ON users_groups (user_id);
CREATE TABLE rights (
	usrgrp_id    INTEGER NOT NULL REFERENCES usrgrp (id) ON DELETE CASCADE,
	hostgroup_id INTEGER NOT NULL,
	permission   INTEGER NOT NULL CHECK (permission IN (0, 2, 3)),
	PRIMARY KEY (usrgrp_id, hostgroup_id)
) WITHOUT ROWID;
`

// roleSchemaSQL is what version 3 added: roles, users' profile, the
// config table and the defaults marker.
var roleSchemaSQL = `
CREATE TABLE role (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	name     TEXT NOT NULL UNIQUE,
	type     INTEGER NOT NULL CHECK (type IN (1, 2, 3)),
	readonly INTEGER NOT NULL DEFAULT 0,
	rules    TEXT NOT NULL
);
` + roleRows() + `
ALTER TABLE users RENAME COLUMN role TO role_id;
ALTER TABLE users ADD COLUMN url TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN autologin INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN autologout TEXT NOT NULL DEFAULT '15m';
ALTER TABLE users ADD COLUMN lang TEXT NOT NULL DEFAULT 'default';
ALTER TABLE users ADD COLUMN refresh TEXT NOT NULL DEFAULT '30s';
ALTER TABLE users ADD COLUMN theme TEXT NOT NULL DEFAULT 'default';
ALTER TABLE users ADD COLUMN rows_per_page INTEGER NOT NULL DEFAULT 50;
ALTER TABLE users ADD COLUMN timezone TEXT NOT NULL DEFAULT 'default';
ALTER TABLE users ADD COLUMN attempt_ip TEXT NOT NULL DEFAULT '';
CREATE INDEX users_role ON users (role_id);
CREATE TABLE config (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
ALTER TABLE auth_meta ADD COLUMN defaults INTEGER NOT NULL DEFAULT 0;
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
	tx   sqlitedb.Begin // a write transaction: fenced first on PostgreSQL
	lock *os.File       // the SQLite file's lock; nil on PostgreSQL
	h    *hasher
	// readOnly: opened with sqlitedb.PG.ReadOnly (an HA standby). It
	// writes nothing: no pruning, no last-access times (the active node
	// keeps them); every change fails with sqlitedb.ErrReadOnly.
	readOnly bool
	// seen holds, on a read-only store, the last access this node saw of
	// each session it served, across Reload (mu guards it; reload.go).
	seen map[secretHash]int64

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
	// Lock order: ops, then fillMu, then mu, then rightsMu.
	mu        sync.RWMutex
	sessions  map[secretHash]*sessionEntry
	tokens    map[secretHash]*tokenEntry
	tokenByID map[uint64]secretHash

	// rightsMu guards rights and rightsGen: the cache of Rights per user
	// ID, and a counter bumped by every change to user groups, so that a
	// fill that read the database before a change does not store its
	// stale result after it. Taken after mu when both are held (never,
	// today).
	rightsMu  sync.Mutex
	rights    map[uint64]Rights
	rightsGen uint64

	// roles caches every role (roles.go): nil until read, dropped by
	// every change; rolesGen counts the changes.
	roles    atomic.Pointer[map[uint64]*UserRole]
	rolesGen atomic.Uint64

	// settings caches the config table (settings.go), as roles.
	settings    atomic.Pointer[map[string]string]
	settingsGen atomic.Uint64

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
	lock, db, tx, err := openStore(ctx, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{
		tx:        tx,
		opts:      opts,
		log:       opts.Logger,
		db:        db,
		lock:      lock,
		h:         newHasher(opts.HashParams, opts.MaxConcurrentHashes),
		sessions:  map[secretHash]*sessionEntry{},
		tokens:    map[secretHash]*tokenEntry{},
		tokenByID: map[uint64]secretHash{},
		rights:    map[uint64]Rights{},
		readOnly:  opts.Postgres != nil && opts.Postgres.ReadOnly,
	}
	now := s.opts.Now()
	s.lastPrune.Store(now.UnixMilli())
	if !s.readOnly { // a read-only store prunes nothing: the active node does
		if err := s.pruneSessions(ctx, now); err != nil {
			s.db.Close()
			lock.Close()
			return nil, err
		}
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

// openStore opens the SQLite file at opts.Path under its lock file, or
// the store in PostgreSQL (opts.Postgres): sqlitedb.OpenStore.
func openStore(ctx context.Context, opts Options) (*os.File, *sql.DB, sqlitedb.Begin, error) {
	return sqlitedb.OpenStore(ctx, opts.Postgres, opts.Path, "auth", ErrLocked, dbSchema)
}

// exec runs one write statement in a transaction of its own (fenced on
// PostgreSQL).
func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	tx, err := s.tx(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return res, tx.Commit()
}

// SQLSchema is the store's schema for sqlitedb (peregrine ha migrate
// copies a data directory's database into PostgreSQL with it).
func SQLSchema() sqlitedb.Schema { return dbSchema }

// dbSchema is how sqlitedb creates, checks and migrates the database.
var dbSchema = sqlitedb.Schema{
	Kind:       "auth database",
	Meta:       "auth_meta",
	Version:    schemaVersion,
	PGName:     "auth",
	Create:     schema,
	InsertMeta: "INSERT INTO auth_meta (id, schema_version) VALUES (1, ?)",
	// Migrations[0]: version 1 → 2 adds user groups; [1]: 2 → 3 roles,
	// profiles, settings; [2]: 3 → 4 dashboards (dashboards.go).
	Migrations: []string{userGroupSchema, roleSchemaSQL, dashboardSchema},
	Corrupt:    ErrCorrupt,
	// Small rows: SQLite's WAL kept at most 16 MiB.
	Pragmas: []string{"journal_size_limit(16777216)"},
}

// openDB opens the database (see sqlitedb.Open). One connection is plenty:
// the traffic is small (logins, cache misses, one last-access write per
// session per AccessWriteInterval).
func openDB(ctx context.Context, path string) (*sql.DB, error) {
	return sqlitedb.Open(ctx, path, dbSchema)
}
