package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// SSH authentication methods: Zabbix 6.0's authtype of SSH items.
const (
	SSHAuthPassword  = 0
	SSHAuthPublicKey = 1
)

// LoginItem is how an SSH (type 13) or Telnet (type 14) item logs in to
// its target: Zabbix 6.0's item fields of the same names (JSON names as
// in the API). The command the item runs is its Params. It belongs to
// its snapshot and MUST NOT be modified.
//
// AuthType is SSHAuthPassword or SSHAuthPublicKey for SSH items and
// always 0 for Telnet items, which log in with a user name and password.
// With public-key authentication, PublicKey and PrivateKey are file
// names in the server's key directory (poll.ssh_key_location, Zabbix's
// SSHKeyLocation) and Password is the private key's passphrase.
// Password is a secret: the API never returns it and nothing logs it.
type LoginItem struct {
	AuthType   uint8  `json:"authtype"`
	Username   string `json:"username,omitempty"`
	Password   string `json:"password,omitempty"`
	PublicKey  string `json:"publickey,omitempty"`
	PrivateKey string `json:"privatekey,omitempty"`
}

// usesLogin reports whether items of type t keep a LoginItem.
func usesLogin(t ItemType) bool { return t == SSHAgent || t == TelnetAgent }

func (a *LoginItem) equal(b *LoginItem) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Expand returns l with the user macros of sc resolved in its user
// name, password and key file names, as Zabbix resolves them; l itself
// when none holds a macro.
func (l *LoginItem) Expand(sc *usermacro.Scope) *LoginItem {
	has := func(s string) bool { return strings.Contains(s, "{$") }
	if !has(l.Username) && !has(l.Password) && !has(l.PublicKey) && !has(l.PrivateKey) {
		return l
	}
	c := *l
	c.Username, c.Password = sc.Expand(l.Username), sc.Expand(l.Password)
	c.PublicKey, c.PrivateKey = sc.Expand(l.PublicKey), sc.Expand(l.PrivateKey)
	return &c
}

// Length limits of the login fields: Zabbix 6.0's columns (recorded from
// 6.0.14: 65 characters are refused, 64 taken, for each).
const maxLoginFieldLen = 64

var sshAuthTypes = map[string]uint8{"PASSWORD": SSHAuthPassword, "PUBLIC_KEY": SSHAuthPublicKey}

// normLogin validates the login fields of an item of type typ (the
// shared authtype, username and password of HTTPSpec, and publickey and
// privatekey) and returns them: nil for item types that keep none.
func normLogin(is *ItemSpec, typ ItemType, ip string, el *errList) *LoginItem {
	if !usesLogin(typ) {
		return nil
	}
	l := &LoginItem{Username: is.Username, Password: is.Password}
	for _, f := range []struct{ name, v string }{
		{"username", is.Username}, {"password", is.Password}, {"publickey", is.PublicKey}, {"privatekey", is.PrivateKey},
	} {
		if n := len([]rune(f.v)); n > maxLoginFieldLen {
			el.addf(ip+"."+f.name, "longer than %d characters (%d)", maxLoginFieldLen, n)
		}
	}
	if typ != SSHAgent {
		// Telnet logs in with a user name and password only (6.0 stores
		// whatever authtype it is given and never reads it).
		return l
	}
	l.AuthType = enumField(is.AuthType, SSHAuthPassword, sshAuthTypes, "authtype", ip, el)
	l.PublicKey, l.PrivateKey = is.PublicKey, is.PrivateKey
	if l.AuthType == SSHAuthPublicKey {
		for _, f := range []struct{ name, v string }{{"publickey", l.PublicKey}, {"privatekey", l.PrivateKey}} {
			switch {
			case f.v == "":
				el.addf(ip+"."+f.name, "cannot be empty for public key authentication: the name of a key file in poll.ssh_key_location")
			case !strings.Contains(f.v, "{$") && !localKeyName(f.v):
				el.addf(ip+"."+f.name, "%q must name a file inside poll.ssh_key_location: no absolute path, no '..'", f.v)
			}
		}
	}
	return l
}

// localKeyName reports whether a key file name stays inside the key
// directory once joined to it.
func localKeyName(name string) bool {
	return !filepath.IsAbs(name) && filepath.IsLocal(name)
}

// loginSpecOf puts l's fields into is (numbers as strings), for
// revalidation on update.
func loginSpecOf(l *LoginItem, is *ItemSpec) {
	if l == nil {
		return
	}
	is.AuthType = strconv.Itoa(int(l.AuthType))
	is.Username, is.Password = l.Username, l.Password
	is.PublicKey, is.PrivateKey = l.PublicKey, l.PrivateKey
}

// itemLoginSchema holds how SSH and Telnet items log in (schema version
// 22): one row per item of type 13 or 14, its LoginItem as JSON with
// Zabbix's field names; a table of its own, as item_http, rather than
// columns every other item would carry empty. Items of an older database
// have none (those types could not be stored before).
const itemLoginSchema = `
CREATE TABLE IF NOT EXISTS item_login (
	item_id INTEGER PRIMARY KEY,
	config  TEXT NOT NULL
);
`

// migrateItemLogin is the migration 21 → 22 (SSH and Telnet logins),
// kept on its own so that schema changes made in parallel renumber
// cleanly.
func migrateItemLogin() string { return itemLoginSchema }

func encodeLogin(l *LoginItem) string {
	b, err := json.Marshal(l)
	if err != nil {
		panic("BUG: LoginItem does not marshal: " + err.Error())
	}
	return string(b)
}

// writeLogin stores it.Login (item_login), replacing the item's row if
// it had one.
func (e *Edit) writeLogin(it *Item, had bool) error {
	return e.writeSideJSON(it, loginSide, had, it.Ext().Login != nil, func() string { return encodeLogin(it.Ext().Login) })
}

// loginSide is the item_login table.
var loginSide = sideJSON{table: "item_login", what: "login", whose: "an SSH or Telnet item", all: "SSH and Telnet logins", uses: usesLogin}

// loadLogin attaches the item_login rows to their items.
func loadLogin(ctx context.Context, tx *sql.Tx, items []Item) error {
	return loadSideJSON(ctx, tx, items, loginSide, func(it *Item, l *LoginItem) { it.MutExt().Login = l })
}
