package odbc

import "testing"

func TestParseKey(t *testing.T) {
	f := func(key string, want target, wantErr string) {
		t.Helper()
		got, err := parseKey(key)
		if err != wantErr || got != want {
			t.Errorf("parseKey(%q) = %+v, %q; want %+v, %q", key, got, err, want, wantErr)
		}
	}
	f("db.odbc.select[a,dsn]", target{kind: kindSelect, desc: "a", dsn: "dsn"}, "")
	f("db.odbc.get[a,,Driver=x;Server=y]", target{kind: kindGet, desc: "a", conn: "Driver=x;Server=y"}, "")
	f(`db.odbc.discovery[a,dsn,"Driver=x,y"]`, target{kind: kindDiscovery, desc: "a", dsn: "dsn", conn: "Driver=x,y"}, "")
	f("db.odbc.select[,dsn]", target{kind: kindSelect, dsn: "dsn"}, "")
	// Zabbix 6.0's refusals (recorded from 6.0.14).
	f("db.odbc.select", target{}, "Invalid number of parameters.")
	f("db.odbc.select[a]", target{}, "Invalid number of parameters.")
	f("db.odbc.select[a,b,c,d]", target{}, "Invalid number of parameters.")
	f("db.odbc.get[e,,]", target{}, "Invalid database connection settings.")
	f("db.odbc.foo[a,b]", target{}, "Unsupported item key for this item type.")
	f("foo.bar[a,dsn]", target{}, "Unsupported item key for this item type.")
	f("db.odbc.select[a", target{}, "Invalid item key format.")
}

func TestConnString(t *testing.T) {
	f := func(tg target, user, pass, want string) {
		t.Helper()
		if got := connString(tg, user, pass); got != want {
			t.Errorf("connString(%+v, %q, %q) = %q, want %q", tg, user, pass, got, want)
		}
	}
	f(target{dsn: "pg"}, "", "", "DSN=pg")
	f(target{dsn: "pg"}, "mon", "", "DSN=pg;UID=mon")
	f(target{dsn: "pg"}, "mon", "pw", "DSN=pg;UID=mon;PWD=pw")
	f(target{dsn: "pg", conn: "Driver=x"}, "", "pw", "Driver=x;PWD=pw")
	f(target{conn: "Driver=x;"}, "mon", "", "Driver=x;UID=mon")
	// Values that would break the string are braced.
	f(target{dsn: "pg"}, "mon", "a;b", "DSN=pg;UID=mon;PWD={a;b}")
	f(target{dsn: "pg"}, "mon", "a}b{", "DSN=pg;UID=mon;PWD={a}}b{}")
	f(target{dsn: "pg"}, " mon", "", "DSN=pg;UID={ mon}")
}

func TestRedactKey(t *testing.T) {
	f := func(key, want string) {
		t.Helper()
		if got := redactKey(key); got != want {
			t.Errorf("redactKey(%q) = %q, want %q", key, got, want)
		}
	}
	f("db.odbc.select[a,dsn]", "db.odbc.select[a,dsn]")
	f("db.odbc.select[a,,Driver=x;UID=u;PWD=secret;Port=1]", "db.odbc.select[a,,Driver=x;UID=u;PWD=******;Port=1]")
	f("db.odbc.select[a,,Driver=x;pwd = secret]", "db.odbc.select[a,,Driver=x;pwd = ******]")
	f(`db.odbc.get[a,,"Driver=x;Password={se;c}}ret};Port=1"]`, `db.odbc.get[a,,"Driver=x;Password=******;Port=1"]`)
}
