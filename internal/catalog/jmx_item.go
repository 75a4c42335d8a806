package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"unicode/utf8"
)

// DefaultJMXEndpoint is the JMX endpoint Zabbix 6.0 gives a JMX agent
// item created without one (recorded from 6.0.14): RMI through the
// JNDI registry at the item's interface address and port.
const DefaultJMXEndpoint = "service:jmx:rmi:///jndi/rmi://{HOST.CONN}:{HOST.PORT}/jmxrmi"

// Length limits of the JMX agent fields, from Zabbix 6.0's schema (its
// refusals, recorded from 6.0.14, name them: jmx_endpoint 255,
// username and password 64).
const (
	maxJMXEndpointLen = 255
	maxJMXUserLen     = 64
)

// JMXItem is what a JMX agent item (type 16) needs beyond its key:
// Zabbix 6.0's item fields jmx_endpoint, username and password (JSON
// names as in the API). Endpoint, Username and Password may hold user
// macros and Endpoint the {HOST.*} macros, resolved at check time
// (package poll/jmx). Password is a secret: the API never returns it
// and nothing logs it. It belongs to its snapshot and MUST NOT be
// modified.
type JMXItem struct {
	Endpoint string `json:"jmx_endpoint"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

func (a *JMXItem) equal(b *JMXItem) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// itemJMXSchema (schema version 23) holds the JMX settings of each JMX agent item: one row
// per item of type 16, its JMXItem as JSON, as item_http holds HTTP
// requests (the same reasons: three fields no other item carries, read
// once per snapshot load). IF NOT EXISTS: the migration tests of older
// versions downgrade other tables and leave this one.
const itemJMXSchema = `
CREATE TABLE IF NOT EXISTS item_jmx (
	item_id INTEGER PRIMARY KEY,
	config  TEXT NOT NULL
);
`

// migrateItemJMX is the migration to the version with JMX agent items,
// kept on its own so that schema changes made in parallel renumber
// cleanly. Items of an older database have no row: there were no JMX
// items to configure.
func migrateItemJMX() string { return itemJMXSchema }

// normJMX validates the JMX agent fields of an item of type typ and
// returns them with Zabbix's default endpoint applied: nil for other
// item types, whose JMX fields are ignored (as Zabbix clears them when
// the type changes). The username and password are the item's (the
// import format's and the API's username and password, which HTTP
// agent items use for their authentication).
func normJMX(endpoint string, hs *HTTPSpec, typ ItemType, ip string, el *errList) *JMXItem {
	if typ != JMX {
		return nil
	}
	j := &JMXItem{Endpoint: endpoint, Username: hs.Username, Password: hs.Password}
	if j.Endpoint == "" {
		j.Endpoint = DefaultJMXEndpoint
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"jmx_endpoint", j.Endpoint, maxJMXEndpointLen}, {"username", j.Username, maxJMXUserLen}, {"password", j.Password, maxJMXUserLen}} {
		if !utf8.ValidString(f.v) {
			el.addf(ip+"."+f.name, "is not valid UTF-8")
		} else if n := utf8.RuneCountInString(f.v); n > f.max {
			el.addf(ip+"."+f.name, "%d characters is longer than the limit of %d", n, f.max)
		}
	}
	return j
}

// encodeJMX is the item_jmx row's config: the item's JSON.
func encodeJMX(j *JMXItem) string {
	b, err := json.Marshal(j)
	if err != nil {
		panic("BUG: JMXItem does not marshal: " + err.Error())
	}
	return string(b)
}

// jmxSide is the item_jmx table.
var jmxSide = sideJSON{table: "item_jmx", what: "JMX settings", whose: "a JMX agent item", all: "JMX agent settings",
	uses: func(t ItemType) bool { return t == JMX }}

// loadJMX attaches the item_jmx rows to their items.
func loadJMX(ctx context.Context, tx *sql.Tx, items []Item) error {
	return loadSideJSON(ctx, tx, items, jmxSide, func(it *Item, j *JMXItem) { it.MutExt().JMX = j })
}

// writeJMX stores it.JMX (item_jmx), replacing the item's row if it
// had one.
func (e *Edit) writeJMX(it *Item, had bool) error {
	return e.writeSideJSON(it, jmxSide, had, it.Ext().JMX != nil, func() string { return encodeJMX(it.Ext().JMX) })
}
