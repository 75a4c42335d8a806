package config

import (
	"os"
	"path/filepath"
	"time"
)

// ODBCConfig configures database monitor items (type 11, package
// poll/odbc): where unixODBC finds its data sources, and the checker's
// bounds (Zabbix's StartODBCPollers is Workers). Restart to change.
type ODBCConfig struct {
	// Ini is the odbc.ini of data sources unixODBC reads as the user's
	// (it becomes ODBCINI in the server's environment); "" leaves the
	// environment's, else ~/.odbc.ini of the server's user.
	Ini string `yaml:"ini"`
	// SysIniDir is the directory of the system odbc.ini and
	// odbcinst.ini (ODBCSYSINI); "" leaves the environment's, else
	// unixODBC's own (/etc on Debian).
	SysIniDir string `yaml:"sys_ini_dir"`
	// Workers bounds the ODBC calls in progress at once (connecting,
	// querying: each holds a thread in C).
	Workers int `yaml:"workers"`
	// MaxConnsPerSource bounds the connections to one data source (a
	// connection string with its login), pooled and reused.
	MaxConnsPerSource int `yaml:"max_conns_per_source"`
	// IdleTimeout closes a pooled connection unused this long.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// MaxValueSize bounds one check's value; a larger one makes the item
	// not supported.
	MaxValueSize ByteSize `yaml:"max_value_size"`
	// MaxInFlight bounds database monitor checks in flight; 0 leaves
	// only poll.max_in_flight.
	MaxInFlight int `yaml:"max_in_flight"`
}

func defaultODBC() ODBCConfig {
	return ODBCConfig{Workers: 16, MaxConnsPerSource: 4, IdleTimeout: Duration(time.Minute), MaxValueSize: 1 << 20}
}

func (o *ODBCConfig) validate(poll *PollConfig) error {
	if o.Ini != "" {
		if !filepath.IsAbs(o.Ini) {
			return fieldErr("odbc.ini", "%q must be an absolute path", o.Ini)
		}
		if fi, err := os.Stat(o.Ini); err != nil || fi.IsDir() {
			return fieldErr("odbc.ini", "%q must be a readable odbc.ini file (%v)", o.Ini, err)
		}
	}
	if o.SysIniDir != "" {
		if !filepath.IsAbs(o.SysIniDir) {
			return fieldErr("odbc.sys_ini_dir", "%q must be an absolute path", o.SysIniDir)
		}
		if fi, err := os.Stat(o.SysIniDir); err != nil || !fi.IsDir() {
			return fieldErr("odbc.sys_ini_dir", "%q must be the directory of odbc.ini and odbcinst.ini (%v)", o.SysIniDir, err)
		}
	}
	if o.Workers < 1 || o.Workers > 1000 {
		return fieldErr("odbc.workers", "must be between 1 and 1000 (Zabbix's StartODBCPollers range), not %d", o.Workers)
	}
	if o.MaxConnsPerSource < 1 || o.MaxConnsPerSource > 1000 {
		return fieldErr("odbc.max_conns_per_source", "must be between 1 and 1000, not %d", o.MaxConnsPerSource)
	}
	if o.IdleTimeout < Duration(time.Second) || o.IdleTimeout > Duration(time.Hour) {
		return fieldErr("odbc.idle_timeout", "must be between 1s and 1h, not %s", o.IdleTimeout)
	}
	if o.MaxValueSize < 1024 || o.MaxValueSize > 64<<20 {
		return fieldErr("odbc.max_value_size", "must be between 1KiB and 64MiB, not %d bytes", o.MaxValueSize)
	}
	if o.MaxInFlight < 0 || o.MaxInFlight > poll.MaxInFlight {
		return fieldErr("odbc.max_in_flight", "must be between 0 (no own bound) and poll.max_in_flight (%d), not %d", poll.MaxInFlight, o.MaxInFlight)
	}
	return nil
}
