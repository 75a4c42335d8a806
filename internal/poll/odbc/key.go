package odbc

import (
	"regexp"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// keyKind is what a key asks of the query's result.
type keyKind uint8

const (
	kindSelect    keyKind = iota // db.odbc.select: the first column of the first row
	kindGet                      // db.odbc.get: every row as a JSON object
	kindDiscovery                // db.odbc.discovery: LLD rows, {#COLUMN} macros
)

// target is what a key names: the kind of result, and the data source
// by DSN or connection string.
type target struct {
	kind keyKind
	// desc is the key's first parameter: a description that only tells
	// items of one data source apart (for logs).
	desc string
	dsn  string
	conn string
}

// parseKey reads db.odbc.select|get|discovery[<description>,<dsn>,<connection string>]
// as Zabbix 6.0 does, answering its messages (recorded from 6.0.14) for
// the keys it refuses: another name, fewer than two or more than three
// parameters, neither a DSN nor a connection string.
func parseKey(key string) (target, string) {
	k, err := itemkey.Parse(key)
	if err != nil {
		return target{}, "Invalid item key format."
	}
	var t target
	switch k.Name {
	case "db.odbc.select":
		t.kind = kindSelect
	case "db.odbc.get":
		t.kind = kindGet
	case "db.odbc.discovery":
		t.kind = kindDiscovery
	default:
		return target{}, "Unsupported item key for this item type."
	}
	if len(k.Params) < 2 || len(k.Params) > 3 {
		return target{}, "Invalid number of parameters."
	}
	// An array parameter has no value of its own, as in Zabbix.
	t.desc, t.dsn = k.Params[0].Value, k.Params[1].Value
	if len(k.Params) == 3 {
		t.conn = k.Params[2].Value
	}
	if t.dsn == "" && t.conn == "" {
		return target{}, "Invalid database connection settings."
	}
	return t, ""
}

// connString is the connection string handed to SQLDriverConnect: the
// key's own (which wins over its DSN, as in Zabbix), else DSN=<dsn>;
// with the item's user name and password appended as UID and PWD when
// set (else the data source's own apply). It holds the password: never
// log it.
//
// Zabbix appends a password as it is, so one with ';' breaks its
// connection string; here a value that needs it is braced, as the ODBC
// grammar allows ({a;b}, a '}' doubled).
func connString(t target, user, pass string) string {
	var b strings.Builder
	if t.conn != "" {
		b.WriteString(t.conn)
	} else {
		appendAttr(&b, "DSN", t.dsn)
	}
	if user != "" {
		appendAttr(&b, "UID", user)
	}
	if pass != "" {
		appendAttr(&b, "PWD", pass)
	}
	return b.String()
}

// appendAttr appends name=value to a connection string, after a ';'
// when the string so far does not end in one.
func appendAttr(b *strings.Builder, name, value string) {
	if s := b.String(); s != "" && !strings.HasSuffix(s, ";") {
		b.WriteByte(';')
	}
	b.WriteString(name)
	b.WriteByte('=')
	if !needsBraces(value) {
		b.WriteString(value)
		return
	}
	b.WriteByte('{')
	b.WriteString(strings.ReplaceAll(value, "}", "}}"))
	b.WriteByte('}')
}

// needsBraces reports whether an attribute value must be braced to
// stay one value: it holds a separator or a brace, or begins or ends
// with white space.
func needsBraces(v string) bool {
	if v == "" {
		return false
	}
	return strings.ContainsAny(v, ";{}") || v[0] == ' ' || v[len(v)-1] == ' '
}

// pwdAttr matches a password attribute of a connection string in a
// key, braced or not.
var pwdAttr = regexp.MustCompile(`(?i)\b(pwd|password)(\s*=\s*)(\{(?:[^}]|\}\})*\}|[^;\],]*)`)

// redactKey is a key fit for the log: the value of any PWD or Password
// attribute in its connection string masked (a key may carry one, which
// is configuration the API shows, but logs are read by more people).
func redactKey(key string) string {
	if !strings.Contains(strings.ToLower(key), "pw") && !strings.Contains(strings.ToLower(key), "password") {
		return key
	}
	return pwdAttr.ReplaceAllString(key, "${1}${2}******")
}
