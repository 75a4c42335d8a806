//go:build !cgo || noodbc

package odbc

// Built is false in a build without unixODBC: every database monitor
// check is not supported, saying so.
const Built = false

// newDriver fails: this build has no ODBC.
func newDriver() (driver, error) { return nil, errNoDriver }
