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

// openStore opens the catalog's database: the SQLite file at opts.Path
// under its lock file, or PostgreSQL (opts.Postgres), where the HA lease
// rather than a lock file makes one node the writer (sqlitedb.OpenStore).
// The single-owner rule (see Open) is enforced rather than documented
// only: `peregrine import` run beside a live server would otherwise write
// rows the server's snapshot never sees, and the server's next Apply would
// diff against stale state.
func openStore(ctx context.Context, opts Options) (*os.File, *sql.DB, sqlitedb.Begin, error) {
	return sqlitedb.OpenStore(ctx, opts.Postgres, opts.Path, "catalog", ErrLocked, dbSchema)
}
