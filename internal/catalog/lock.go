package catalog

import (
	"context"
	"database/sql"
	"errors"
	"os"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// ErrLocked is returned by Open when another process holds the catalog.
var ErrLocked = errors.New("catalog is in use by another process")

// lockFile takes the catalog's lock file (sqlitedb.Lock). The single-owner
// rule (see Open) is enforced rather than documented only: `peregrine
// import` run beside a live server would otherwise write rows the server's
// snapshot never sees, and the server's next Apply would diff against
// stale state.
func lockFile(path string) (*os.File, error) {
	return sqlitedb.Lock(path, "catalog", ErrLocked)
}

// openStore opens the catalog's database: the SQLite file at
// opts.Path under its lock file, or PostgreSQL (opts.Postgres), where
// the HA lease rather than a lock file makes one node the writer.
func openStore(ctx context.Context, opts Options) (*os.File, *sql.DB, sqlitedb.Begin, error) {
	if opts.Postgres != nil {
		db, begin, err := sqlitedb.OpenPG(ctx, *opts.Postgres, dbSchema)
		return nil, db, begin, err
	}
	lock, err := lockFile(opts.Path)
	if err != nil {
		return nil, nil, nil, err
	}
	db, err := openDB(ctx, opts.Path)
	if err != nil {
		lock.Close()
		return nil, nil, nil, err
	}
	return lock, db, sqlitedb.SQLiteBegin(db), nil
}
