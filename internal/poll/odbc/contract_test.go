//go:build cgo && !noodbc

package odbc

import (
	"fmt"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestContract holds the database monitor checker to poll.Checker's
// contract against a PostgreSQL on loopback: queries that answer, ones
// that hang (pg_sleep, on data sources of their own so that they hold no
// connection the answering checks need), a database that accepts and
// never answers at login, and results far larger than a value may be.
func TestContract(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	silent := silentServer(t)
	drv := testutil.PsqlODBCDriver(t)
	u, p := testutil.PostgresUser, testutil.PostgresPassword
	const maxValue = 64 << 10
	polltest.Run(t, func(t *testing.T) *polltest.Subject {
		m := items{}
		check := func(key, query, user, pass string) poll.Check { return m.add(key, query, user, pass, 5*time.Second) }
		cs := pg.ODBCConnString(t, "postgres")
		hangCS := pg.ODBCConnString(t, "template1")
		c := New(Options{Item: m.get, MaxValueSize: maxValue})
		return &polltest.Subject{
			Checker: c,
			Close:   c.Close,
			Answer: []poll.Check{
				check("db.odbc.select[a,,"+cs+"]", "select 42", u, p),
				check("db.odbc.get[a,,"+cs+"]", "select g, 'x' as s from generate_series(1, 3) g", u, p),
				check("db.odbc.discovery[a,,"+cs+"]", "select datname from pg_database", u, p),
			},
			Hang: []poll.Check{
				check("db.odbc.select[h1,,"+hangCS+"]", "select pg_sleep(3600)", "postgres", ""),
				check("db.odbc.select[h2,,"+hangCS+"]", "select pg_sleep(3600)", "postgres", ""),
			},
			Expire: []poll.Check{
				check(fmt.Sprintf("db.odbc.select[e1,,Driver=%s;Server=127.0.0.1;Port=%d;Database=x]", drv, silent), "select 1", u, p),
				check("db.odbc.select[e2,,"+hangCS+"]", "select pg_sleep(3600)", "postgres", ""),
			},
			Flood: []poll.Check{
				check("db.odbc.select[f1,,"+cs+"]", "select repeat('x', 16*1024*1024)", u, p),
				check("db.odbc.get[f2,,"+cs+";UseDeclareFetch=1;Fetch=1000]", "select g, repeat('y', 100) from generate_series(1, 1000000) g", u, p),
			},
			MaxValue: maxValue,
			Markers:  []string{"odbc.(*Checker)"},
		}
	})
}
