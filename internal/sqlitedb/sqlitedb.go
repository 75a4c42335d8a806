package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"syscall"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Schema describes one kind of database.
type Schema struct {
	// Kind names the database in errors: "catalog", "auth database".
	Kind string
	// Meta is the table holding exactly one row (id = 1) with the
	// schema_version column; its absence marks a new database.
	Meta string
	// Version is the schema version this binary writes.
	Version int64
	// Create is the DDL of a new database at Version, Meta included.
	Create string
	// InsertMeta inserts Meta's row; its one parameter is the version.
	InsertMeta string
	// Migrations[v-1] upgrades a database of version v to v+1; there are
	// Version-1 of them.
	Migrations []string
	// Corrupt is wrapped by errors about a Meta table that cannot be
	// read or holds a version below 1.
	Corrupt error
	// Pragmas are added to the common ones (see DSN): a cache size, a
	// journal_size_limit so that SQLite's own WAL is truncated after a
	// large transaction instead of staying at its peak size.
	Pragmas []string
	// PGName names the store in PostgreSQL (OpenPG): its row in the
	// state schema's schema_version and its schema, peregrine_PGName.
	PGName string
	// PGMigrations[v] upgrades a PostgreSQL store of version v to v+1.
	// A PostgreSQL store starts at the version of the binary that made
	// it, so only the steps after the first such version are needed.
	PGMigrations map[int64]string
}

// Lock takes an exclusive, non-blocking flock on path+".lock" and returns
// the open file, whose Close releases it. A database has one owner at a
// time: its owner keeps in-memory state (a snapshot, caches) that rows
// written behind its back would make stale. The kernel drops the lock when
// the process dies, so a crash never leaves the database locked. When
// another process holds it, the error wraps locked.
func Lock(path, kind string, locked error) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open lock file: %w", kind, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w (is `peregrine serve` running on this data directory? stop it first; live changes go through the API)", path, locked)
		}
		return nil, fmt.Errorf("%s: cannot lock %s.lock: %w", kind, path, err)
	}
	return f, nil
}

// DSN builds the modernc.org/sqlite data source name for path. The path
// goes into a file: URI, escaped, so that '?' or '#' in it cannot be taken
// for parameters. The pragmas run on every new connection:
//   - journal_mode WAL with synchronous FULL: a committed transaction
//     survives a crash or power loss (the WAL is fsynced on every commit),
//     which is the point of persisting this state;
//   - foreign_keys: rows cannot point at missing rows;
//   - busy_timeout: wait, rather than fail at once, if another process
//     (an operator's sqlite3 shell) holds a lock briefly;
//   - _txlock=immediate: a write transaction takes the write lock at
//     BEGIN, so it cannot fail half-way with SQLITE_BUSY, and a
//     read-then-write check (a name is free) cannot race another writer.
func DSN(path string, extra ...string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	q := url.Values{}
	for _, p := range append([]string{
		"busy_timeout(10000)",
		"journal_mode(WAL)",
		"synchronous(FULL)",
		"foreign_keys(1)",
	}, extra...) {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	// url.URL renders an absolute path as file:///path; SQLite accepts
	// that form of URI.
	return u.String() + "?" + q.Encode(), nil
}

// Open opens the database at path with one connection, checks that the
// journal mode is WAL, and creates the schema in a new file or checks and
// migrates an existing one. It does not take the lock (see Lock).
//
// One connection: SQLite has one writer anyway, the owners read from
// in-memory state rather than the database, and every statement then sees
// the connection's pragmas.
func Open(ctx context.Context, path string, s Schema) (*sql.DB, error) {
	if err := createOwnerOnly(path); err != nil {
		return nil, fmt.Errorf("%s: cannot create database %s: %w", s.Kind, path, err)
	}
	name, err := DSN(path, s.Pragmas...)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot resolve path %q: %w", s.Kind, path, err)
	}
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open database %s: %w", s.Kind, path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := initSchema(ctx, db, s); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: database %s: %w", s.Kind, path, err)
	}
	return db, nil
}

// createOwnerOnly creates path as an empty file of mode 0600 unless it
// exists. SQLite would create a new database 0644 (its default, whatever
// the umask lets through), and it gives the -wal and -shm files it creates
// later the database file's own mode; an empty file is a valid new
// database, so creating it first makes all three owner-only. The
// databases hold password hashes, sessions and the whole configuration.
func createOwnerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

func initSchema(ctx context.Context, db *sql.DB, s Schema) error {
	if int64(len(s.Migrations)) != s.Version-1 {
		return fmt.Errorf("schema version %d needs %d migrations, this binary has %d (a programming error)", s.Version, s.Version-1, len(s.Migrations))
	}
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("cannot read journal mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode is %q, not wal: put the %s on a local file system that supports SQLite WAL", mode, s.Kind)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", s.Meta).Scan(&n); err != nil {
		return fmt.Errorf("cannot read schema: %w", err)
	}
	if n == 0 {
		var tables int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'").Scan(&tables); err != nil {
			return fmt.Errorf("cannot read schema: %w", err)
		}
		if tables != 0 {
			return fmt.Errorf("the file is an SQLite database but not a Peregrine %s: give it a new file", s.Kind)
		}
		if _, err := tx.ExecContext(ctx, s.Create); err != nil {
			return fmt.Errorf("cannot create schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, s.InsertMeta, s.Version); err != nil {
			return fmt.Errorf("cannot create schema: %w", err)
		}
		return tx.Commit()
	}
	var ver int64
	if err := tx.QueryRowContext(ctx, "SELECT schema_version FROM "+s.Meta+" WHERE id = 1").Scan(&ver); err != nil {
		return fmt.Errorf("%w: cannot read %s: %v", s.Corrupt, s.Meta, err)
	}
	if ver > s.Version {
		return fmt.Errorf("schema version %d is newer than this binary supports (%d): run a newer Peregrine", ver, s.Version)
	}
	if ver < 1 {
		return fmt.Errorf("%w: schema version %d", s.Corrupt, ver)
	}
	if ver == s.Version {
		return tx.Commit()
	}
	for v := ver; v < s.Version; v++ {
		if _, err := tx.ExecContext(ctx, s.Migrations[v-1]); err != nil {
			return fmt.Errorf("cannot upgrade the schema from version %d to %d: %w", v, v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+s.Meta+" SET schema_version = ? WHERE id = 1", s.Version); err != nil {
		return fmt.Errorf("cannot upgrade the schema: %w", err)
	}
	return tx.Commit()
}

// OpenStore opens a store's database with schema s: in PostgreSQL when pg
// is set (OpenPG; the HA lease, not a lock file, makes one node the
// writer, and the returned lock is nil), else the SQLite file at path
// under its lock file (Lock, with lockKind and locked for its errors).
// The Begin starts the store's write transactions (fenced first on
// PostgreSQL).
func OpenStore(ctx context.Context, pg *PG, path, lockKind string, locked error, s Schema) (*os.File, *sql.DB, Begin, error) {
	if pg != nil {
		db, begin, err := OpenPG(ctx, *pg, s)
		return nil, db, begin, err
	}
	lock, err := Lock(path, lockKind, locked)
	if err != nil {
		return nil, nil, nil, err
	}
	db, err := Open(ctx, path, s)
	if err != nil {
		lock.Close()
		return nil, nil, nil, err
	}
	return lock, db, SQLiteBegin(db), nil
}
