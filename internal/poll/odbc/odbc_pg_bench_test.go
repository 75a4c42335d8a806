//go:build cgo && !noodbc

package odbc

import (
	"fmt"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// BenchmarkCheckerPostgres: db.odbc.select and db.odbc.get checks through
// the checker, unixODBC and psqlODBC against a PostgreSQL on loopback
// (started by the benchmark), with pooled connections: what one check
// costs end to end, the database's work included (on the same machine).
//
//	go test -run '^$' -bench CheckerPostgres -count 6 ./internal/poll/odbc/
func BenchmarkCheckerPostgres(b *testing.B) {
	pg := testutil.StartPostgres(b)
	cs := pg.ODBCConnString(b, "postgres")
	for _, tc := range []struct{ name, key, query string }{
		{"select", "db.odbc.select", "select %d"},
		{"get", "db.odbc.get", "select g, 'name ' || g as name from generate_series(%d, %[1]d + 9) g"},
	} {
		for _, inFlight := range []int{1, 16} {
			b.Run(fmt.Sprintf("kind=%s/in_flight=%d", tc.name, inFlight), func(b *testing.B) {
				m := items{}
				var batch []poll.Check
				for i := range 100 {
					batch = append(batch, m.add(fmt.Sprintf("%s[q%d,,%s]", tc.key, i, cs), fmt.Sprintf(tc.query, i),
						testutil.PostgresUser, testutil.PostgresPassword, 10*time.Second))
				}
				c := New(Options{Item: m.get})
				defer c.Close()
				benchChecks(b, c, batch, inFlight)
			})
		}
	}
}
