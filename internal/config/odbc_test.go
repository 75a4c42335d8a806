package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestODBCIniPaths(t *testing.T) {
	dir := t.TempDir()
	ini := filepath.Join(dir, "odbc.ini")
	if err := os.WriteFile(ini, []byte("[pg]\nDriver = PostgreSQL Unicode\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := func(o ODBCConfig, want string) {
		t.Helper()
		poll := Default().Poll
		err := o.validate(&poll)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%+v: %v, want %q", o, err, want)
		}
	}
	good := defaultODBC()
	good.Ini, good.SysIniDir = ini, dir
	f(good, "")
	bad := good
	bad.Ini = filepath.Join(dir, "none.ini")
	f(bad, "odbc.ini: ")
	bad = good
	bad.Ini = dir
	f(bad, "must be a readable odbc.ini file")
	bad = good
	bad.SysIniDir = ini
	f(bad, "odbc.sys_ini_dir: ")
	bad = good
	bad.IdleTimeout = 0
	f(bad, "odbc.idle_timeout")
	bad = good
	bad.MaxValueSize = 100
	f(bad, "odbc.max_value_size")
	bad = good
	bad.MaxInFlight = 1 << 30
	f(bad, "odbc.max_in_flight")
}
