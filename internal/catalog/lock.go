package catalog

import (
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
