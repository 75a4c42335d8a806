package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

var errCorrupt = errors.New("test database is corrupt")

func schemaV(v int64) Schema {
	s := Schema{
		Kind:       "test database",
		Meta:       "meta",
		Version:    1,
		Create:     "CREATE TABLE meta (id INTEGER PRIMARY KEY, schema_version INTEGER NOT NULL); CREATE TABLE a (x TEXT);",
		InsertMeta: "INSERT INTO meta (id, schema_version) VALUES (1, ?)",
		Corrupt:    errCorrupt,
		Pragmas:    []string{"cache_size(-1024)"},
	}
	if v >= 2 {
		s.Version = 2
		s.Create += "CREATE TABLE b (y TEXT);"
		s.Migrations = []string{"CREATE TABLE b (y TEXT);"}
	}
	return s
}

func open(t *testing.T, path string, s Schema) (*sql.DB, error) {
	t.Helper()
	db, err := Open(context.Background(), path, s)
	if err == nil {
		t.Cleanup(func() { db.Close() })
	}
	return db, err
}

func version(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var v int64
	if err := db.QueryRow("SELECT schema_version FROM meta WHERE id = 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCreateReopenMigrate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := open(t, path, schemaV(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO a VALUES ('kept')"); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q, %v", mode, err)
	}
	var fk int
	if err := db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign_keys %d, %v", fk, err)
	}
	var cache int
	if err := db.QueryRow("PRAGMA cache_size").Scan(&cache); err != nil || cache != -1024 {
		t.Fatalf("the schema's own pragma: cache_size %d, %v", cache, err)
	}
	db.Close()

	// Reopened by a binary with schema 2: migrated, data kept.
	db, err = open(t, path, schemaV(2))
	if err != nil {
		t.Fatal(err)
	}
	if v := version(t, db); v != 2 {
		t.Fatalf("version after migration %d", v)
	}
	if _, err := db.Exec("INSERT INTO b VALUES ('new')"); err != nil {
		t.Fatalf("migrated table: %v", err)
	}
	var x string
	if err := db.QueryRow("SELECT x FROM a").Scan(&x); err != nil || x != "kept" {
		t.Fatalf("row after migration: %q, %v", x, err)
	}
	db.Close()

	// An older binary refuses the newer schema.
	if _, err := open(t, path, schemaV(1)); err == nil || !strings.Contains(err.Error(), "newer than this binary supports") {
		t.Fatalf("old binary on new schema: %v", err)
	}
}

func TestRefusesForeignAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE other (z)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := open(t, foreign, schemaV(1)); err == nil || !strings.Contains(err.Error(), "not a Peregrine test database") {
		t.Fatalf("foreign database: %v", err)
	}

	bad := filepath.Join(dir, "bad.db")
	db, err = open(t, bad, schemaV(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE meta SET schema_version = 0"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := open(t, bad, schemaV(1)); !errors.Is(err, errCorrupt) {
		t.Fatalf("version 0: %v", err)
	}
}

func TestMigrationCountChecked(t *testing.T) {
	s := schemaV(2)
	s.Migrations = nil
	if _, err := open(t, filepath.Join(t.TempDir(), "x.db"), s); err == nil || !strings.Contains(err.Error(), "migrations") {
		t.Fatalf("schema 2 without its migration: %v", err)
	}
}

func TestLock(t *testing.T) {
	errLocked := errors.New("held")
	path := filepath.Join(t.TempDir(), "x.db")
	f, err := Lock(path, "test", errLocked)
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file description: a second open in this process
	// conflicts like another process would.
	if _, err := Lock(path, "test", errLocked); !errors.Is(err, errLocked) || !strings.Contains(err.Error(), "peregrine serve") {
		t.Fatalf("second lock: %v", err)
	}
	f.Close()
	g, err := Lock(path, "test", errLocked)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	g.Close()
}

func TestDSNEscapesPath(t *testing.T) {
	dsn, err := DSN("/tmp/a?b#c.db", "cache_size(-1)")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(dsn, "file:///tmp/a%3Fb%23c.db?") || !strings.Contains(dsn, "cache_size") || !strings.Contains(dsn, "_txlock=immediate") {
		t.Fatalf("DSN %s", dsn)
	}
}

// TestFilesOwnerOnly opens a new database under a umask of 0 and checks
// that the database, its -wal and -shm files and the lock file are 0600.
func TestFilesOwnerOnly(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	path := filepath.Join(t.TempDir(), "x.db")
	lock, err := Lock(path, "test database", errors.New("locked"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	db, err := open(t, path, schemaV(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO a VALUES ('x')"); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm", ".lock"} {
		st, err := os.Stat(path + suffix)
		if err != nil {
			t.Errorf("%s: %v", suffix, err)
			continue
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("x.db%s: mode %v, want 0600", suffix, st.Mode().Perm())
		}
	}
}
