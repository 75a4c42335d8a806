//go:build cgo && !noodbc

package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationODBC polls database monitor items through unixODBC
// with a whole server, against a PostgreSQL the test starts: a DSN of
// the odbc.ini the odbc.ini setting names, with the item's login, a
// connection string, get and discovery; a wrong query and a slow one
// make their items not supported with the driver's words and the
// timeout's.
func TestIntegrationODBC(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	pg.Exec("CREATE TABLE queue (name text, depth int); INSERT INTO queue VALUES ('mail', 3), ('sms', 0)")
	pg.Exec("GRANT SELECT ON queue TO " + testutil.PostgresUser)
	ini := filepath.Join(t.TempDir(), "odbc.ini")
	dsn := fmt.Sprintf("[pg]\nDriver = %s\nServername = 127.0.0.1\nPort = %d\nDatabase = postgres\n", testutil.PsqlODBCDriver(t), pg.Port)
	if err := os.WriteFile(ini, []byte(dsn), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ODBCINI", os.Getenv("ODBCINI")) // restored after the server sets it
	cs := pg.ODBCConnString(t, "postgres")
	login := catalog.HTTPSpec{Username: testutil.PostgresUser, Password: testutil.PostgresPassword}
	items := []catalog.ItemSpec{
		{Key: "db.odbc.select[depth,pg]", Type: "odbc", ValueType: "unsigned", Delay: "1s", Params: "select depth from queue where name = 'mail'", HTTPSpec: login},
		{Key: "db.odbc.get[all,," + cs + "]", Type: "odbc", ValueType: "text", Delay: "1s", Params: "select name, depth from queue order by name", HTTPSpec: login},
		{Key: "db.odbc.discovery[queues,pg]", Type: "odbc", ValueType: "text", Delay: "1s", Params: "select name from queue order by name", HTTPSpec: login},
		{Key: "db.odbc.select[wrong,pg]", Type: "odbc", ValueType: "unsigned", Delay: "1s", Params: "selec 1", HTTPSpec: login},
		{Key: "db.odbc.select[slow,pg]", Type: "odbc", ValueType: "unsigned", Delay: "1s", Timeout: "2s", Params: "select pg_sleep(30)", HTTPSpec: login},
	}
	s := startServerTraps(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "db", Groups: []string{"Databases"}, Items: items}}},
		func(c *config.Config) {
			c.SNMP.TrapListen = ""
			c.ODBC.Ini = ini
		})
	snap := s.Catalog.Snapshot()
	wrong, slow := snap.Lookup("db", items[3].Key).ID, snap.Lookup("db", items[4].Key).ID
	end := time.Now().Add(60 * time.Second)
	for {
		w, _ := s.ItemStates.ItemState(wrong)
		sl, _ := s.ItemStates.ItemState(slow)
		if len(s.readItem(t, "db", items[0].Key)) > 0 && len(s.readItem(t, "db", items[1].Key)) > 0 &&
			len(s.readItem(t, "db", items[2].Key)) > 0 && w.NotSupported && sl.NotSupported {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after 60 s: values %d %d %d, %+v %+v", len(s.readItem(t, "db", items[0].Key)),
				len(s.readItem(t, "db", items[1].Key)), len(s.readItem(t, "db", items[2].Key)), w, sl)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := s.readItem(t, "db", items[0].Key)[0].U; v != 3 {
		t.Errorf("depth %d, want 3", v)
	}
	if v := s.readItem(t, "db", items[1].Key)[0].S; v != `[{"name":"mail","depth":"3"},{"name":"sms","depth":"0"}]` {
		t.Errorf("get %s", v)
	}
	if v := s.readItem(t, "db", items[2].Key)[0].S; v != `[{"{#NAME}":"mail"},{"{#NAME}":"sms"}]` {
		t.Errorf("discovery %s", v)
	}
	if w, _ := s.ItemStates.ItemState(wrong); !strings.HasPrefix(w.Error, `Cannot execute ODBC query: [SQL_ERROR]:[42601][1][ERROR: syntax error at or near "selec"`) {
		t.Errorf("wrong query: %+v", w)
	}
	if sl, _ := s.ItemStates.ItemState(slow); sl.Error != "Cannot execute ODBC query: timeout after 2s." {
		t.Errorf("slow query: %+v", sl)
	}
}
