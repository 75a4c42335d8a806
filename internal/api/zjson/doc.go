// Package zjson writes the scalars of Zabbix API answers: JSON strings
// (AppendString, escaped as encoding/json escapes them), floats as the
// Zabbix database prints them (AppendFloat: the shortest decimal that
// reads back exactly, with no exponent for ordinary magnitudes), and
// Unix times and nanosecond parts in decimal (AppendClock, AppendNS).
//
// Every function appends to a caller-owned buffer and returns it, and
// none allocates beyond growing that buffer: they are on the hot path of
// history.get (package histread formats millions of rows a call with
// them), and item.get, trend.get and the API's result encoder use the
// same ones, so that a value is written the same way in every answer.
// Each fast path is checked against the standard library (strconv,
// encoding/json) by a test and a fuzz target.
//
// It owns no state; every function is safe for concurrent use.
package zjson
