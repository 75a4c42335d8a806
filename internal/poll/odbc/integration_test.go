//go:build cgo && !noodbc

package odbc

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationPostgres runs database monitor checks through unixODBC
// and psqlODBC against a PostgreSQL the test starts on loopback, by
// connection string and by a DSN of a temporary odbc.ini. Each value and
// message is the one the Zabbix 6.0.14 peer gave for the same item
// against the same server (recorded from 6.0.14), but where noted.
func TestIntegrationPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	cs := pg.ODBCConnString(t, "postgres")
	testutil.WriteODBCIni(t, map[string][][2]string{
		"pgtest": {{"Driver", testutil.PsqlODBCDriver(t)}, {"Servername", "127.0.0.1"}, {"Port", fmt.Sprint(pg.Port)}, {"Database", "postgres"}},
		"pgown": {{"Driver", testutil.PsqlODBCDriver(t)}, {"Servername", "127.0.0.1"}, {"Port", fmt.Sprint(pg.Port)}, {"Database", "postgres"},
			{"Username", "postgres"}},
	})
	refused := freePort(t)
	m := items{}
	u, p := testutil.PostgresUser, testutil.PostgresPassword
	type want struct {
		check poll.Check
		value string // OK with this value, else
		err   string // not supported with this message (prefix when it ends in "…")
	}
	var cases []want
	ok := func(key, q, value string) {
		cases = append(cases, want{check: m.add(key, q, u, p, 5*time.Second), value: value})
	}
	bad := func(key, q, user, pass, err string) {
		cases = append(cases, want{check: m.add(key, q, user, pass, 5*time.Second), err: err})
	}
	sel := func(name string) string { return "db.odbc.select[" + name + ",," + cs + "]" }
	get := func(name string) string { return "db.odbc.get[" + name + ",," + cs + "]" }
	disc := func(name string) string { return "db.odbc.discovery[" + name + ",," + cs + "]" }

	ok(sel("sel"), "select 42", "42")
	ok(sel("pad"), "select 'abc   '::char(6)", "abc")
	ok(sel("lead"), "select '  abc  '::text", "  abc")
	ok(sel("sp"), `select E'  x \t '`, "  x \t")
	ok(sel("multi"), "select 1; select 2", "1")
	ok(sel("long"), "select repeat('x', 70000)", strings.Repeat("x", 70000))
	ok(get("get"), `select 1 as a, 'x' as "B", null as c union all select 2, 'y"z', 'q'`, `[{"a":"1","B":"x","c":null},{"a":"2","B":"y\"z","c":"q"}]`)
	ok(get("getempty"), "select 1 as a where false", "[]")
	ok(get("types"), `select true as b, 1.50::numeric as n, 0.1::float8 as f, 1e20::float8 as big, 0.1::float4 as r, `+
		`timestamp '2024-01-02 03:04:05.5' as t, date '2024-01-02' as d, 'ü€' as u, '\x0102'::bytea as by, `+
		`12345678901234::bigint as i8, interval '1 day' as iv, '{1,2}'::int[] as arr, '{"a":1}'::json as j, `+
		`uuid 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' as uu`,
		`[{"b":"1","n":"1.50","f":"0.1","big":"1e+20","r":"0.1","t":"2024-01-02 03:04:05.5","d":"2024-01-02","u":"ü€","by":"0102",`+
			`"i8":"12345678901234","iv":"1 day","arr":"{1,2}","j":"{\"a\":1}","uu":"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"}]`)
	ok(get("esc"), `select '/a<b>&c\\d"e' as "x/y", E'tab\there\nnl\r' as z, chr(1)||chr(31)||chr(127) as ctl, 'é' as "É", '' as empty`,
		`[{"x/y":"/a<b>&c\\\\d\"e","z":"tab\there\nnl\r","ctl":"\u0001\u001f`+"\x7f"+`","É":"é","empty":""}]`)
	ok(disc("disc"), `select datname, 1 as "Num_1" from pg_database where datname='postgres'`, `[{"{#DATNAME}":"postgres","{#NUM_1}":"1"}]`)
	ok(disc("dots"), `select 1 as "a.b_c1"`, `[{"{#A.B_C1}":"1"}]`)
	ok(disc("discempty"), "select 1 as a where false", "[]")
	ok("db.odbc.select[dsn,pgtest]", "select current_user", u)
	ok("db.odbc.select[dsn,pgtest,]", "select 1", "1")
	// The DSN's own user, the item giving none.
	cases = append(cases, want{check: m.add("db.odbc.select[own,pgown]", "select current_user", "", "", 5*time.Second), value: "postgres"})
	// A connection string wins over the DSN.
	ok("db.odbc.select[both,nosuchdsn,"+cs+"]", "select 7", "7")

	bad(disc("discbad"), `select 1 as a, 2 as "b-c"`, u, p, "Cannot convert column #2 name to macro.")
	bad(disc("discdup"), `select 1 as a, 2 as "A"`, u, p, "Duplicate macro name: {#A}.")
	bad(disc("discnoname"), "select 1, 2", u, p, "Cannot convert column #1 name to macro.")
	bad(disc("discutf"), `select 1 as "é"`, u, p, "Cannot convert column #1 name to macro.")
	bad(sel("null"), "select null", u, p, "SQL query returned NULL value.")
	bad(sel("empty"), "select 1 where false", u, p, "SQL query returned empty result.")
	bad(sel("ddl"), "create temp table t(a int)", u, p, "SQL query returned empty result.")
	bad(sel("wrong"), "selec 1", u, p, `Cannot execute ODBC query: [SQL_ERROR]:[42601][1][ERROR: syntax error at or near "selec";`+"\n"+`Error while executing the query]`)
	bad(sel("nst"), "select * from nosuchtable", u, p, `Cannot execute ODBC query: [SQL_ERROR]:[42P01][1][ERROR: relation "nosuchtable" does not exist;`+"\n"+`Error while executing the query]`)
	bad(sel("badpw"), "select 1", u, "nope", fmt.Sprintf(`Cannot connect to ODBC DSN: [SQL_ERROR]:[08001][101][connection to server at "127.0.0.1", port %d failed: FATAL:  password authentication failed for user "mon"`+"\n]", pg.Port))
	bad("db.odbc.select[nodsn,nosuchdsn]", "select 1", "", "", "Cannot connect to ODBC DSN: [SQL_ERROR]:[IM002][0][[unixODBC][Driver Manager]Data source name not found and no default driver specified]")
	bad("db.odbc.select[nodriver,,Driver=NoSuch;Server=x]", "select 1", "", "", "Cannot connect to ODBC DSN: [SQL_ERROR]:[01000][0][[unixODBC][Driver Manager]Can't open lib 'NoSuch' : file not found]")
	// 6.0 cuts the message at 127 bytes, after "accepting TCP/IP".
	bad(fmt.Sprintf("db.odbc.select[refused,,Driver=%s;Server=127.0.0.1;Port=%d;Database=postgres]", testutil.PsqlODBCDriver(t), refused), "select 1", u, p,
		fmt.Sprintf(`Cannot connect to ODBC DSN: [SQL_ERROR]:[08001][101][connection to server at "127.0.0.1", port %d failed: Connection refused`+"\n\t"+`Is the server running on that host and accepting TCP/IP connections?`+"\n]", refused))
	bad(sel("emptyq"), "", u, p, "SQL query cannot be empty.")
	bad("db.odbc.select", "select 1", "", "", "Invalid number of parameters.")
	bad("db.odbc.select[a,b,c,d]", "select 1", "", "", "Invalid number of parameters.")
	bad("db.odbc.get[noconn,,]", "select 1", "", "", "Invalid database connection settings.")
	bad("db.odbc.foo[a,b]", "select 1", "", "", "Unsupported item key for this item type.")

	c := New(Options{Item: m.get})
	defer c.Close()
	batch := make([]poll.Check, len(cases))
	for i, w := range cases {
		batch[i] = w.check
	}
	res := run(t, c, batch, time.Minute)
	for _, w := range cases {
		r := res.of(w.check.ItemID)
		switch {
		case w.err == "" && (r.Status != poll.OK || string(r.Value) != w.value):
			t.Errorf("%s\n%s: %s %q %q, want the value %q", w.check.Key, m[w.check.ItemID].Ext().Params, r.Status, r.Value, r.Error, w.value)
		case w.err != "" && (r.Status != poll.NotSupported || r.Error != w.err):
			t.Errorf("%s\n%s: %s %q %q, want not supported %q", w.check.Key, m[w.check.ItemID].Ext().Params, r.Status, r.Value, r.Error, w.err)
		}
		if r.Clock.IsZero() || r.Check != w.check {
			t.Errorf("%s: clock %v, check %+v", w.check.Key, r.Clock, r.Check)
		}
	}
}

// freePort is a loopback port nothing listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// silentServer accepts connections and never answers: a database that
// hangs at login. It closes them when the test ends.
func silentServer(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().(*net.TCPAddr).Port
}

// TestIntegrationTimeouts: an unreachable database (one that accepts and
// never answers) and a slow query cost one timeout each, counted and
// logged once; checks of the same batch against a healthy database are
// not held by them; the slow query is cancelled on the server.
func TestIntegrationTimeouts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	cs := pg.ODBCConnString(t, "postgres")
	silent := silentServer(t)
	m := items{}
	u, p := testutil.PostgresUser, testutil.PostgresPassword
	slow := m.add("db.odbc.select[slow,,"+cs+"]", "select pg_sleep(60) /* peregrine slow */", u, p, 2*time.Second)
	dead := m.add(fmt.Sprintf("db.odbc.select[dead,,Driver=%s;Server=127.0.0.1;Port=%d;Database=x]", testutil.PsqlODBCDriver(t), silent), "select 1", u, p, 2*time.Second)
	batch := []poll.Check{slow, dead}
	for i := range 20 {
		batch = append(batch, m.add(fmt.Sprintf("db.odbc.select[fast%d,,%s]", i, cs), fmt.Sprintf("select %d", i), u, p, 2*time.Second))
	}
	var logs bytes.Buffer
	c := New(Options{Item: m.get, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer c.Close()
	start := time.Now()
	res := run(t, c, batch, 30*time.Second)
	first := res.of(slow.ItemID).Clock
	if d := res.of(dead.ItemID).Clock; d.Before(first) {
		first = d
	}
	for _, ch := range batch[2:] {
		r := res.of(ch.ItemID)
		if r.Status != poll.OK {
			t.Errorf("%s: %s %q", ch.Key, r.Status, r.Error)
		}
		// Not held by the slow query or the silent server: done before
		// either timed out.
		if !r.Clock.Before(first) {
			t.Errorf("%s answered at %v, after the first timeout (%v)", ch.Key, r.Clock.Sub(start), first.Sub(start))
		}
	}
	for _, w := range []struct {
		check poll.Check
		msg   string
	}{{slow, "Cannot execute ODBC query: timeout after 2s."}, {dead, "Cannot connect to ODBC DSN: timeout after 2s."}} {
		r := res.of(w.check.ItemID)
		if r.Status != poll.NotSupported || r.Error != w.msg {
			t.Errorf("%s: %s %q, want not supported %q", w.check.Key, r.Status, r.Error, w.msg)
		}
		if d := r.Clock.Sub(start); d < 2*time.Second {
			t.Errorf("%s reported after %v, before its timeout", w.check.Key, d)
		}
	}
	if n := c.failures[reasonTimeout].Load(); n != 2 {
		t.Errorf("%d timeouts counted, want 2", n)
	}
	if n := strings.Count(logs.String(), "reason=timeout"); n != 1 {
		t.Errorf("timeouts logged %d times, want once (then suppressed for a minute):\n%s", n, logs.String())
	}
	// The slow query was cancelled on the server (SQLCancel), not left
	// to run its minute.
	waitFor(t, 10*time.Second, "the slow query to end on the server", func() bool {
		return pg.Exec("select count(*) from pg_stat_activity where query like '%peregrine slow%' and pid <> pg_backend_pid()") == "0"
	})
	// And the calls have returned (the silent server's connect at the
	// driver's login timeout).
	waitFor(t, 10*time.Second, "the ODBC calls to return", func() bool { return c.overdue.Load() == 0 && c.busy.Load() == 0 })
}

// TestIntegrationPool: checks of one data source share at most
// MaxConnsPerSource connections, reused, closed once idle; after a
// server restart the dropped ones are replaced without a failed check.
func TestIntegrationPool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	cs := pg.ODBCConnString(t, "postgres")
	m := items{}
	var batch []poll.Check
	for i := range 40 {
		batch = append(batch, m.add(fmt.Sprintf("db.odbc.select[q%d,,%s]", i, cs), "select pg_sleep(0.01), 1", testutil.PostgresUser, testutil.PostgresPassword, 10*time.Second))
	}
	c := New(Options{Item: m.get, MaxConnsPerSource: 3, IdleTimeout: 2 * time.Second})
	defer c.Close()
	sessions := func() string {
		return pg.Exec("select count(*) from pg_stat_activity where usename = '" + testutil.PostgresUser + "'")
	}
	for round := range 3 {
		res := run(t, c, batch, 30*time.Second)
		for _, ch := range batch {
			if r := res.of(ch.ItemID); r.Status != poll.OK {
				t.Fatalf("round %d %s: %s %q", round, ch.Key, r.Status, r.Error)
			}
		}
		if n := c.opened.Load(); n > 3 {
			t.Fatalf("round %d: %d connections opened, want at most 3", round, n)
		}
		if s, _ := strconv.Atoi(sessions()); s > 3 {
			t.Errorf("round %d: %d sessions on the server, want at most 3", round, s)
		}
	}
	// A restart drops the idle connections; the next checks reconnect.
	pg.Stop()
	pg.Start()
	opened := c.opened.Load()
	res := run(t, c, batch[:5], 30*time.Second)
	for _, ch := range batch[:5] {
		if r := res.of(ch.ItemID); r.Status != poll.OK {
			t.Errorf("after a restart %s: %s %q", ch.Key, r.Status, r.Error)
		}
	}
	if c.opened.Load() == opened {
		t.Error("no connection opened after the restart")
	}
	// Idle ones are closed after IdleTimeout.
	waitFor(t, 15*time.Second, "the idle connections to close", func() bool { return c.conns.Load() == 0 && sessions() == "0" })
}

// TestIntegrationTooLarge: a value beyond MaxValueSize makes the item not
// supported after a bounded read, for one huge column and for many rows.
func TestIntegrationTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	cs := pg.ODBCConnString(t, "postgres")
	m := items{}
	u, p := testutil.PostgresUser, testutil.PostgresPassword
	big := m.add("db.odbc.select[big,,"+cs+"]", "select repeat('x', 4*1024*1024)", u, p, 10*time.Second)
	rows := m.add("db.odbc.get[rows,,"+cs+";UseDeclareFetch=1;Fetch=1000]", "select g, 'row' as r from generate_series(1, 1000000) g", u, p, 10*time.Second)
	fits := m.add("db.odbc.get[fits,,"+cs+"]", "select g from generate_series(1, 100) g", u, p, 10*time.Second)
	c := New(Options{Item: m.get, MaxValueSize: 64 << 10})
	defer c.Close()
	res := run(t, c, []poll.Check{big, rows, fits}, 30*time.Second)
	for _, ch := range []poll.Check{big, rows} {
		if r := res.of(ch.ItemID); r.Status != poll.NotSupported || !strings.HasPrefix(r.Error, "Result of the SQL query is larger than 65536 bytes") {
			t.Errorf("%s: %s %q", ch.Key, r.Status, r.Error)
		}
	}
	if r := res.of(fits.ItemID); r.Status != poll.OK || !strings.HasSuffix(string(r.Value), `{"g":"100"}]`) {
		t.Errorf("%s: %s %q", fits.Key, r.Status, r.Error)
	}
	if n := c.failures[reasonTooLarge].Load(); n != 2 {
		t.Errorf("%d too large counted, want 2", n)
	}
}
