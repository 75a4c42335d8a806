package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// ODBCItem is how a database monitor item (type 11) logs in to its data
// source: Zabbix 6.0's item fields username and password (JSON names as
// in the API). The data source is named by the item's key
// (db.odbc.select[<description>,<dsn>,<connection string>]) and the SQL
// query is its Params. Either field may be empty: the DSN's own (or the
// connection string's) then apply, as in Zabbix. Password is a secret:
// the API never returns it and nothing logs it. It belongs to its
// snapshot and MUST NOT be modified.
type ODBCItem struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

func (a *ODBCItem) equal(b *ODBCItem) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Expand returns o with the user macros of sc resolved in its user name
// and password, as Zabbix resolves them there; o itself when neither
// holds one.
func (o *ODBCItem) Expand(sc *usermacro.Scope) *ODBCItem {
	if !strings.Contains(o.Username, "{$") && !strings.Contains(o.Password, "{$") {
		return o
	}
	return &ODBCItem{Username: sc.Expand(o.Username), Password: sc.Expand(o.Password)}
}

// maxODBCLoginLen is the length limit of a database monitor item's user
// name and password: Zabbix 6.0's columns (recorded from 6.0.14: 65
// characters are refused, 64 taken).
const maxODBCLoginLen = 64

// normODBC validates the login of an item of type typ and returns it:
// nil for other item types, whose login fields are not theirs (Zabbix
// shares the username and password fields among HTTP agent, SSH,
// Telnet, JMX and database monitor items). The user name and password
// are the import format's and the API's username and password
// (HTTPSpec's fields).
func normODBC(hs *HTTPSpec, typ ItemType, ip string, el *errList) *ODBCItem {
	if typ != ODBC {
		return nil
	}
	o := &ODBCItem{Username: hs.Username, Password: hs.Password}
	for _, f := range []struct{ name, v string }{{"username", o.Username}, {"password", o.Password}} {
		if !utf8.ValidString(f.v) {
			el.addf(ip+"."+f.name, "is not valid UTF-8")
		} else if n := utf8.RuneCountInString(f.v); n > maxODBCLoginLen {
			el.addf(ip+"."+f.name, "%d characters is longer than the limit of %d", n, maxODBCLoginLen)
		}
	}
	return o
}

// itemODBCSchema (schema version 24) holds the login of each database monitor item: one row
// per item of type 11 (with a user name or password or not), its
// ODBCItem as JSON, as item_http holds HTTP requests (the same reasons:
// fields no other item carries, read once per snapshot load). IF NOT
// EXISTS: the migration tests of older versions downgrade other tables
// and leave this one.
const itemODBCSchema = `
CREATE TABLE IF NOT EXISTS item_odbc (
	item_id INTEGER PRIMARY KEY,
	config  TEXT NOT NULL
);
`

// migrateItemODBC is the migration to the version with database monitor
// items, kept on its own so that schema changes made in parallel
// renumber cleanly. Items of an older database have no row: there were
// no database monitor items to configure.
func migrateItemODBC() string { return itemODBCSchema }

// encodeODBC is the item_odbc row's config: the item's JSON.
func encodeODBC(o *ODBCItem) string {
	b, err := json.Marshal(o)
	if err != nil {
		panic("BUG: ODBCItem does not marshal: " + err.Error())
	}
	return string(b)
}

// odbcSide is the item_odbc table.
var odbcSide = sideJSON{table: "item_odbc", what: "database monitor login", whose: "a database monitor item", all: "database monitor logins",
	uses: func(t ItemType) bool { return t == ODBC }}

// loadODBC attaches the item_odbc rows to their items.
func loadODBC(ctx context.Context, tx *sql.Tx, items []Item) error {
	return loadSideJSON(ctx, tx, items, odbcSide, func(it *Item, o *ODBCItem) { it.MutExt().ODBC = o })
}

// writeODBC stores it.ODBC (item_odbc), replacing the item's row if
// it had one.
func (e *Edit) writeODBC(it *Item, had bool) error {
	return e.writeSideJSON(it, odbcSide, had, it.Ext().ODBC != nil, func() string { return encodeODBC(it.Ext().ODBC) })
}
