// Package odbc is the database monitor checker (item type 11): for each
// check it runs the item's SQL query (Item.Params) on the data source
// its key names, through the unixODBC driver manager and the database's
// ODBC driver, as Zabbix 6.0 does.
//
// Keys (Zabbix 6.0's, with its messages for the keys it refuses,
// recorded from 6.0.14): db.odbc.select[<description>,<dsn>,<connection
// string>] is the first column of the first row; db.odbc.get[...] every
// row as a JSON array of objects named by the column labels, values as
// strings and NULL as null; db.odbc.discovery[...] the same as LLD JSON,
// each label made a macro ({#COLUMN}: letters upper-cased, only A-Z,
// 0-9, '_' and '.'). The description only tells items apart. A
// connection string, when given, wins over the DSN. The item's username
// and password, when set, are appended as UID and PWD (else the DSN's or
// the connection string's own apply); user macros of the host resolve in
// the query, username and password. Values are the driver's text of each
// column (read as SQL_C_WCHAR, as Zabbix reads SQL_C_CHAR: 1 for true,
// 1.50 for a numeric), trailing spaces removed (result.go).
//
// Failures make the item not supported with Zabbix's words around the
// driver's diagnostics: "Cannot connect to ODBC DSN: [SQL_ERROR]:[08001]
// [101][connection to server ... failed: ...]", "Cannot execute ODBC
// query: [SQL_ERROR]:[42601][1][ERROR: syntax error ...]", "SQL query
// returned empty result.", "SQL query returned NULL value.", "SQL query
// cannot be empty.". Database monitor items keep no availability (they
// have no interface). Differences from 6.0, on purpose: a driver message
// is kept whole (Zabbix cuts each at 127 bytes); an error while fetching
// rows is reported ("Cannot fetch row: ...") where Zabbix takes it for
// the end of the rows; a login value with ';' or braces is braced in the
// connection string (Zabbix appends it as it is, which breaks the
// string); the query is bounded by the check's timeout (below), where
// 6.0 lets it run as long as the database takes.
//
// Timeouts. A check's timeout (the item's, else the default) bounds it
// whole: waiting for a connection, connecting (the driver's login
// timeout, SQL_ATTR_LOGIN_TIMEOUT, in whole seconds rounded up plus
// one, so that the check's deadline reports first: a connect cannot be
// interrupted otherwise), and the query. At the
// deadline the check is reported not supported ("Cannot execute ODBC
// query: timeout after 3s."), counted (peregrine_poll_odbc_errors_total
// {reason="timeout"}) and logged at most once a minute, and its
// statement is cancelled (SQLCancel: psqlODBC sends the server a cancel
// request); the connection is then closed, never reused. The ODBC call
// itself returns when the driver lets it; until then it keeps its worker
// and its connection slot (peregrine_poll_odbc_overdue_calls). When the
// Check call's context ends (the server stopping) the checks still
// running are reported abandoned (a network error) the same way.
//
// Bounds. ODBC calls block a thread in C, so they run on a bounded set
// of workers (Options.Workers, odbc.workers, Zabbix's
// StartODBCPollers): a check takes a connection first, then a worker,
// and waits for each within its timeout, so a slow data source holds
// its own connections and never more workers than those. Connections
// are pooled per data source (connection string with its login): at
// most Options.MaxConnsPerSource open or opening, idle ones reused and
// closed after Options.IdleTimeout; a reused connection that the server
// dropped fails with a connection error (SQLSTATE 08) before any row,
// and the query runs once more on a new one. A value is at most
// Options.MaxValueSize bytes: reading stops there, the item is not
// supported, and the rest of the result is discarded with the
// statement. The driver may still hold a whole result in memory of its
// own (psqlODBC does unless the data source sets UseDeclareFetch=1):
// select what the item needs.
//
// Binding. unixodbc.go (built with cgo, unless the noodbc tag is set)
// calls unixODBC through github.com/alexbrainman/odbc's api package,
// the maintained Go binding's generated calls, plus two calls it lacks
// (SQLExecDirectW, SQLColAttributeW) in a few lines of cgo. The
// binding's database/sql driver is not used: it converts columns to Go
// types (a NUMERIC to a float64, a UUID to bytes) and refuses types it
// does not know, where Zabbix takes the driver's text of any column, and
// its connect has no login timeout. Without cgo (or with noodbc), Built
// is false and every check is not supported, saying why (nodriver.go).
// The data sources are unixODBC's: odbc.ini as ODBCINI and ODBCSYSINI
// name it (the server sets them from odbc.ini and odbc.sys_ini_dir),
// drivers from odbcinst.ini.
//
// Concurrency: Check starts a goroutine per check and returns; the
// scheduler bounds how many are in flight. A janitor goroutine closes
// idle connections until Close, which waits (up to 15 s) for the ODBC
// calls still running and closes the idle connections. Safe for
// concurrent use.
package odbc
