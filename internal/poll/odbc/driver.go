package odbc

import (
	"context"
	"errors"
	"time"
)

// driver opens connections to data sources. The cgo build's is
// unixODBC's (unixodbc.go); without cgo (or with the noodbc tag) every
// open fails saying so (nodriver.go); tests give fakes.
type driver interface {
	// open connects to the data source of connection string src (a
	// secret: it may hold a password), giving up after loginTimeout: an
	// ODBC connect cannot be interrupted, only bounded by the driver's
	// login timeout. The error is a *dbError.
	open(src string, loginTimeout time.Duration) (dbConn, error)
	// close releases what the driver holds (its environment); no
	// connection may be open.
	close()
}

// dbConn is one open connection, used by one check at a time.
type dbConn interface {
	// query runs q and feeds its result set to s until s says it has
	// enough; the error is a *dbError (the driver's diagnostics) or one
	// of s's. No statement is left open when it returns.
	// query stops between rows once ctx ends (cancel interrupts a
	// statement the driver is still running).
	query(ctx context.Context, q string, s *shaper) error
	// cancel asks the driver to stop the statement query is running
	// (SQLCancel), from any goroutine; nothing when none runs. It may
	// block while the driver reaches the server.
	cancel()
	// close disconnects and frees the connection.
	close()
}

// Stages of a call, for dbError.
const (
	stageEnv     = iota // allocating the environment
	stageConnect        // SQLDriverConnect and the login timeout
	stageExecute        // SQLExecDirect
	stageColumns        // the result's columns
	stageFetch          // SQLFetch, SQLGetData
)

// dbError is a failed ODBC call: its stage and the driver's diagnostics
// in Zabbix's form ("[SQL_ERROR]:[08001][101][message]|[...]").
type dbError struct {
	stage int
	diag  string
	// broken: the connection cannot be used again (a communication
	// error, SQLSTATE class 08, or an invalid handle).
	broken bool
}

func (e *dbError) Error() string {
	switch e.stage {
	case stageEnv:
		return "Cannot create ODBC environment handle: " + e.diag
	case stageConnect:
		return "Cannot connect to ODBC DSN: " + e.diag
	case stageColumns:
		return "Cannot get number of columns in ODBC result: " + e.diag
	case stageFetch:
		return "Cannot fetch row: " + e.diag
	}
	return "Cannot execute ODBC query: " + e.diag
}

// errNoDriver is what every check says in a build without unixODBC.
var errNoDriver = errors.New("this Peregrine was built without ODBC support (no cgo, or the noodbc tag): database monitor items need a build with CGO_ENABLED=1 and unixODBC's headers (Debian: unixodbc-dev)")
