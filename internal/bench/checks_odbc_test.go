//go:build cgo && !noodbc

package bench

import (
	"context"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// Database monitor items against a PostgreSQL the test starts: each
// value is its item's number; the server's and the database's CPU per
// check are measured.
func TestChecksODBCInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	tg, _ := startPeregrine(t)
	b := ChecksBench{Kind: "odbc", Mode: "sweep", Hosts: 2, ItemsPerHost: 5, Rounds: 2, Delay: time.Second, Timeout: time.Minute,
		ODBCConn: pg.ODBCConnString(t, "postgres"), ODBCUser: testutil.PostgresUser, ODBCPassword: testutil.PostgresPassword,
		DBPorts: []int{pg.Port},
		Server:  ZabbixInstance{Target: tg.APIURL, User: tg.User, Password: tg.Password, Settle: time.Second, Name: "peregrine"}}
	sec, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	for i := range c.Rows {
		if c.Get(i, "checks") != "10" || c.Get(i, "missing") != "0" || c.Get(i, "wrong") != "0" || c.Float(i, "db_cpu_ms_per_check") < 0 {
			t.Errorf("round %d: %v", i+1, c.Rows[i])
		}
	}
}
