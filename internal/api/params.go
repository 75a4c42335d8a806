package api

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The params vocabulary. Every method declares its parameters once, as
// a params struct next to the method: one field per parameter, whose
// json tag is the parameter's name, whose type and "as" tag say how its
// value is read, and whose "in", "zbx" and "default" tags give the rest
// of Zabbix's rule for it:
//
//	type trendGetParams struct {
//		ItemIDs opt[ids]   `json:"itemids"`
//		Limit   opt[int64] `json:"limit" in:"1:2147483647" zbx:"null"`
//	}
//
// A field is an opt[T]: it knows whether its member was absent (Set
// false), JSON null (Null) or given (Value, empty or not); Given says
// set and not null. How a T is read (decodeAs):
//
//   - uint64: one ID, a JSON number or a string of digits ("10084" as
//     pyzabbix sends it, 10084 as Grafana does);
//   - ids ([]uint64): a list of IDs, or one ID for a list of one;
//   - int64: an integer, a number or a numeric string; as:"limit" a
//     legacy get's limit (a positive integer, anything else none);
//   - string: a JSON string; as:"timeunit" also a bare number ("30s",
//     30);
//   - []string: a string or a list of strings; as:"output" "extend" or
//     field names, as:"sortorder" ASC/DESC or a list of them;
//   - bool: true or false; as:"flag" a Zabbix flag (any value but null
//     and false is true); in a legacy get, PHP's truth, or with
//     as:"isset" any value but null;
//   - map[string][]string, as:"filter": field name to values (filter,
//     search), the names limited by "in";
//   - a params struct, as:"object", or a slice of them, as:"objects":
//     a nested object or a list of them, read by the walker as
//     encoding/json read them (params_nested.go);
//   - anything else, or as:"json": encoding/json (select parameters);
//   - a type with a decodeParam method reads itself (a host's "groups",
//     "tags", "interfaces").
//
// "in" lists the values a field may take in Zabbix's syntax: integers
// and ranges ("0,1,2,3,4", "1:2147483647") or words ("itemid,clock");
// zbx:"null" takes null as absent (API_ALLOW_NULL); "key" names the ID
// member of a list of references (refs); zbx:"normalize"
// takes one value for a list of one (API_NORMALIZE), zbx:"uniq" refuses
// a list naming a value twice (a validated "output" always does so);
// "default" is the
// value (as JSON) of a field not given. Rules that depend on another
// parameter are in the struct's adjustRule method (ruleHook).
//
// The entry points (decode.go) take a method's params whole: decodeGet
// (a legacy get's object, read as Zabbix 6.0 reads it: unknown members
// ignored, values as PHP takes them, params_legacy.go), decodeGetStrict
// (a get 6.0 checks with its validator: unknown members refused),
// decodeObjects (create and update: an array of objects or one object;
// decodeValidatorObjects and decodeLegacyObjects read them as the 6.0
// methods that check them with the API input validator and with their
// own code do), decodeIDs (delete: an array of IDs, or an object of
// them), decodeValidated (an object
// checked as Zabbix's API input validator checks it), decodeStrictObject
// (an object only), decodeLenient (unknown members ignored, as
// user.login always has), and for the notification families
// alertObjects with decodeAlert (their former decoder's dialect,
// params_alert.go). All but decodeGet, decodeLenient and
// decodeLegacyObjects refuse a member
// no field declares with Zabbix's `Invalid parameter "/": unexpected
// parameter "xyz".`, and each names the member of any other problem
// ("/1/status", "/itemids/2").

// opt is one parameter: whether it was given, null, and its value.
type opt[T any] struct {
	// Set: the member was sent, null included.
	Set bool
	// Null: the member was JSON null.
	Null bool
	// Value is the member's value; the default (or zero) when it was
	// absent or null.
	Value T
}

// given is a parameter given v.
func given[T any](v T) opt[T] { return opt[T]{Set: true, Value: v} }

// Given reports a member sent with a value other than null.
func (o opt[T]) Given() bool { return o.Set && !o.Null }

// ptr is the value given, or nil: a patch's "keep the current value".
func (o *opt[T]) ptr() *T {
	if o.Given() {
		return &o.Value
	}
	return nil
}

func (o *opt[T]) decodeParam(raw []byte, c *fieldCtx) error {
	null := isNull(raw)
	if c.rules.dialect == dialectLegacy && (c.rule.limit || null && c.rule.kind != kindOutput) {
		// A legacy get takes null as absent ("output" excepted: null is
		// no field), and a limit that is not a positive integer too.
		var zero T
		o.Set, o.Null, o.Value = true, true, zero
		if n, ok := legacyLimit(raw); ok && c.rule.limit {
			o.Null = false
			if p, ok := any(&o.Value).(*int64); ok {
				*p = n
			}
		}
		return nil
	}
	if null && c.rules.dialect != dialectValidator {
		switch {
		case c.rule.null:
			// Absent, whatever an earlier member of the same name gave
			// (the former pointer fields were set to nil).
			var zero T
			o.Set, o.Null, o.Value = true, true, zero
			return nil
		case c.rule.nullKeeps:
			// Absent, but a repeated member's earlier value stays, as
			// encoding/json left such a field.
			if !o.Set {
				o.Set, o.Null = true, true
			}
			return nil
		}
	}
	// Set only once the value reads: a member refused is not given.
	if err := decodeValue(raw, &o.Value, c); err != nil {
		return err
	}
	o.Set, o.Null = true, null
	return nil
}

func (o *opt[T]) valueType() reflect.Type { return reflect.TypeFor[T]() }
func (o *opt[T]) isSet() bool             { return o.Set }
func (o *opt[T]) valuePtr() any           { return &o.Value }

// decodeAs reads raw into p, a pointer to a value of kind k, per the
// field's rule and the entry point's dialect.
func decodeAs(k valueKind, raw []byte, p any, c *fieldCtx) error {
	raw = bytes.TrimSpace(raw)
	switch c.rules.dialect {
	case dialectAlert:
		return alertValue(k, raw, p, c)
	case dialectLegacy:
		return legacyValue(k, raw, p, c)
	}
	v := c.rules.dialect == dialectValidator
	r := c.rule
	if r.null && !v && string(raw) == "null" {
		return nil // absent (the validator's kinds each decide)
	}
	switch k {
	case kindID:
		if v {
			if jsonKindOf(raw) == 'n' && r.null {
				return nil
			}
			id, reason := oneIDParam(raw)
			if reason != "" {
				return &valueError{msg: reason}
			}
			*p.(*uint64) = id
			return nil
		}
		id, ok := parseID(raw)
		if !ok {
			return kindError{kind: reflect.Uint64}
		}
		*p.(*uint64) = id
		return nil
	case kindIDs:
		var out []uint64
		var err error
		if v {
			out, err = idsParam(raw)
		} else {
			out, err = idsValue(raw)
		}
		if err != nil {
			return err
		}
		switch q := p.(type) {
		case *ids:
			*q = out
		case *[]uint64:
			*q = out
		}
		return nil
	case kindInt:
		if v {
			return int32Param(raw, r, p.(*int64))
		}
		if jsonKindOf(raw) == 'n' {
			return nil
		}
		n, err := strconv.ParseInt(unquote(raw), 10, 64)
		if err != nil {
			return kindError{kind: reflect.Int64}
		}
		*p.(*int64) = n
		return nil
	case kindStr:
		if v && r.null && jsonKindOf(raw) == 'n' {
			return nil
		}
		s, ok := strValue(raw)
		if !ok {
			return kindError{kind: reflect.String}
		}
		*p.(*string) = s
		return nil
	case kindTimeUnit:
		if len(raw) > 0 && raw[0] >= '0' && raw[0] <= '9' {
			if _, err := strconv.ParseUint(string(raw), 10, 63); err != nil {
				return kindError{kind: reflect.String}
			}
			*p.(*string) = string(raw)
			return nil
		}
		s, ok := strValue(raw)
		if !ok {
			return kindError{kind: reflect.String}
		}
		*p.(*string) = s
		return nil
	case kindStrings, kindOutput, kindSortOrder:
		var out []string
		var err error
		switch {
		case !v:
			out, err = stringsValue(raw)
		case k == kindOutput:
			out, err = outputParam(raw, r.in, false)
		case k == kindSortOrder:
			out, err = sortOrderParam(raw)
		default:
			out, err = stringsParam(raw, r.in, r.normalize, r.uniq)
		}
		if err != nil {
			return err
		}
		*p.(*[]string) = out
		return nil
	case kindBool:
		if v {
			switch string(raw) {
			case "true":
				*p.(*bool) = true
				return nil
			case "false":
				*p.(*bool) = false
				return nil
			}
			return &valueError{msg: "a boolean is expected"}
		}
		return decodeJSON(raw, p, c.rules)
	case kindFlag:
		*p.(*bool) = string(raw) != "false" && string(raw) != "null"
		return nil
	case kindIsset:
		*p.(*bool) = string(raw) != "null"
		return nil
	case kindFilter:
		m, err := filterParam(raw, r.in)
		if err != nil {
			return err
		}
		*p.(*map[string][]string) = m
		return nil
	case kindCustom:
		return p.(paramValue).decodeParam(raw, c)
	case kindObject:
		return decodeObjectValue(raw, p, c.rules)
	case kindObjects:
		return decodeObjectList(raw, p, c.rules)
	}
	return decodeJSON(raw, p, c.rules)
}

// parseID reads an ID from a JSON number or string.
func parseID(b []byte) (uint64, bool) {
	v, err := strconv.ParseUint(unquote(b), 10, 64)
	return v, err == nil
}

// unquote returns b without white space and without the quotes of a
// JSON string. Numeric values never contain escapes, so none are
// decoded: a string with one fails to parse as a number.
func unquote(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	return string(b)
}

// idsValue reads a list of IDs or one ID; null is none.
func idsValue(b []byte) ([]uint64, error) {
	if len(b) > 0 && b[0] == '[' {
		elems, ok := arrayElems(b)
		if !ok {
			return nil, kindError{kind: reflect.Uint64}
		}
		out := make([]uint64, 0, len(elems))
		for _, r := range elems {
			id, ok := parseID(r)
			if !ok {
				return nil, kindError{kind: reflect.Uint64}
			}
			out = append(out, id)
		}
		return out, nil
	}
	if string(b) == "null" {
		return nil, nil
	}
	id, ok := parseID(b)
	if !ok {
		return nil, kindError{kind: reflect.Uint64}
	}
	return []uint64{id}, nil
}

// strValue reads a JSON string. Without escapes the bytes between the
// quotes are the value: invalid UTF-8 is kept (and refused by the
// catalog), not replaced.
func strValue(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b[1 : len(b)-1]), true
	}
	var s string
	return s, json.Unmarshal(b, &s) == nil
}

// stringsValue reads a string or a list of strings. null reads as a
// list of one empty string, which "output" takes as no field.
func stringsValue(b []byte) ([]string, error) {
	if len(b) > 0 && b[0] == '[' {
		var v []string
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, kindError{kind: reflect.String}
		}
		return v, nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, kindError{kind: reflect.String}
	}
	return []string{s}, nil
}

// The values as Zabbix's API input validator reads them
// (dialectValidator): its kinds of JSON value and its texts.

// jsonKindOf classifies a JSON value by its first byte, as PHP's
// json_decode types it: 'n' null, 'b' boolean, 's' string, 'a' array,
// 'o' object, 'i' integer, 'f' float (a fraction, an exponent, or an
// integer beyond int64, which PHP decodes as a float).
func jsonKindOf(v []byte) byte {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return 'n'
	}
	switch v[0] {
	case 'n':
		return 'n'
	case 't', 'f':
		return 'b'
	case '"':
		return 's'
	case '[':
		return 'a'
	case '{':
		return 'o'
	}
	if bytes.ContainsAny(v, ".eE") {
		return 'f'
	}
	if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
		return 'f'
	}
	return 'i'
}

func invalid(path, reason string) *Error {
	return errParams(`Invalid parameter "%s": %s.`, path, reason)
}

// subpath is path/name as Zabbix builds it ("/" + "limit" = "/limit").
func subpath(path, name string) string {
	if path == "/" {
		return "/" + name
	}
	return path + "/" + name
}

// validatorMembers reads a value that must be an object (or, as PHP
// sees a JSON list, a list whose keys are "0", "1", ...) into its
// members in order.
func validatorMembers(raw []byte) ([]member, bool) {
	switch jsonKindOf(raw) {
	case 'o':
		return objectMembers(raw)
	case 'a':
		elems, ok := arrayElems(raw)
		if !ok {
			return nil, false
		}
		out := make([]member, len(elems))
		for i, e := range elems {
			out[i] = member{name: strconv.Itoa(i), raw: e}
		}
		return out, true
	}
	return nil, false
}

// int32Param reads an integer (a JSON integer or a string of one)
// within the rule's ranges; null leaves it unset when the rule allows.
func int32Param(v []byte, r *fieldRule, p *int64) error {
	k := jsonKindOf(v)
	if k == 'n' && r.null {
		return nil
	}
	var text string
	switch k {
	case 'i':
		text = string(v)
	case 's':
		json.Unmarshal(v, &text)
		if !isInteger(text) {
			return &valueError{msg: "an integer is expected"}
		}
	default:
		return &valueError{msg: "an integer is expected"}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
		return &valueError{msg: "a number is too large"}
	}
	if !r.inRange(n) {
		return &valueError{msg: mustBe(r.inText, len(r.ranges) > 1 || len(r.ranges) == 1 && r.ranges[0][0] != r.ranges[0][1])}
	}
	*p = n
	return nil
}

// mustBe is the validator's text for a value not in its list: "value
// must be 5" for one value, "value must be one of 0, 2" for several.
func mustBe(list string, several bool) string {
	if several {
		return "value must be one of " + list
	}
	return "value must be " + list
}

// quotedList is words as the validator lists them: "a", "b".
func quotedList(words []string) string {
	return `"` + strings.Join(words, `", "`) + `"`
}

// isInteger reports whether s is an optional minus and decimal digits.
func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// idsParam reads ids: one id or a list of them, each a JSON integer or a
// string of digits; null selects no filter.
func idsParam(v []byte) ([]uint64, error) {
	k := jsonKindOf(v)
	if k == 'n' {
		return nil, nil
	}
	if k != 'a' && k != 'o' {
		if id, reason := oneIDParam(v); reason == "" {
			return []uint64{id}, nil
		}
		return nil, &valueError{msg: "an array is expected"}
	}
	// An object is a PHP array too: its values are the list.
	elems := listValues(v)
	list := make([]uint64, 0, len(elems))
	for i, e := range elems {
		id, reason := oneIDParam(e)
		if reason != "" {
			return nil, &valueError{sub: strconv.Itoa(i + 1), msg: reason}
		}
		list = append(list, id)
	}
	return list, nil
}

// oneIDParam reads one id: digits as a JSON integer or string, at most
// 2^63-1 (Zabbix's largest id). It returns why not otherwise.
func oneIDParam(v []byte) (uint64, string) {
	var text string
	switch jsonKindOf(v) {
	case 'i':
		text = string(bytes.TrimSpace(v))
	case 's':
		json.Unmarshal(v, &text)
	default:
		return 0, "a number is expected"
	}
	if text == "" || strings.Trim(text, "0123456789") != "" {
		return 0, "a number is expected"
	}
	id, err := strconv.ParseUint(text, 10, 64)
	if err != nil || id > math.MaxInt64 {
		return 0, "a number is too large"
	}
	return id, ""
}

// stringsParam reads a string (with normalize) or a list of strings,
// each one of in and, with uniq, none twice.
func stringsParam(v []byte, in []string, normalize, uniq bool) ([]string, error) {
	var elems [][]byte
	switch k := jsonKindOf(v); {
	case k == 's' && normalize:
		elems = [][]byte{v}
	case k == 'a', k == 'o': // an object is a PHP array too
		elems = listValues(v)
	default:
		return nil, &valueError{msg: "an array is expected"}
	}
	out := make([]string, 0, len(elems))
	for i, e := range elems {
		sub := strconv.Itoa(i + 1)
		var s string
		if jsonKindOf(e) != 's' || json.Unmarshal(e, &s) != nil {
			return nil, &valueError{sub: sub, msg: "a character string is expected"}
		}
		if !slices.Contains(in, s) {
			return nil, &valueError{sub: sub, msg: mustBe(quotedList(in), len(in) > 1)}
		}
		if uniq && slices.Contains(out, s) {
			return nil, &valueError{sub: sub, msg: "value (" + s + ") already exists"}
		}
		out = append(out, s)
	}
	return out, nil
}

// outputParam reads "output" or a select: "extend" (or, withCount,
// "count") or a list of field names from in, none twice.
func outputParam(v []byte, in []string, withCount bool) ([]string, error) {
	switch jsonKindOf(v) {
	case 's':
		var s string
		json.Unmarshal(v, &s)
		switch {
		case s == "extend", withCount && s == "count":
			return []string{s}, nil
		case withCount:
			return nil, &valueError{msg: `value must be one of "extend", "count"`}
		}
		return nil, &valueError{msg: `value must be "extend"`}
	case 'a', 'o':
		return stringsParam(v, in, false, true)
	}
	return nil, &valueError{msg: "an array or a character string is expected"}
}

// sortOrderParam reads "sortorder": ASC or DESC, or a list of them (an
// object's values count as a list).
func sortOrderParam(v []byte) ([]string, error) {
	switch jsonKindOf(v) {
	case 's':
		var s string
		json.Unmarshal(v, &s)
		if s != "ASC" && s != "DESC" {
			return nil, &valueError{msg: `value must be one of "ASC", "DESC"`}
		}
		return []string{s}, nil
	case 'a', 'o':
		return stringsParam(v, []string{"ASC", "DESC"}, false, false)
	}
	return nil, &valueError{msg: "an array or a character string is expected"}
}

// filterParam reads "filter" or "search": an object of field name to one
// value or a list of values (strings or numbers), the names limited to
// fields; null, or a null field, filters nothing.
func filterParam(v []byte, fields []string) (map[string][]string, error) {
	k := jsonKindOf(v)
	if k == 'n' {
		return nil, nil
	}
	if k == 'a' {
		// An empty JSON list is an empty PHP array: no condition.
		if l, ok := arrayElems(v); ok && len(l) == 0 {
			return nil, nil
		}
	}
	ms, ok := validatorMembers(v)
	if !ok {
		return nil, &valueError{msg: "an array is expected"}
	}
	if len(fields) == 0 {
		// No field may be searched (numeric history): Zabbix's words for
		// an object whose rules list no fields.
		if len(ms) > 0 {
			return nil, &valueError{msg: "should be empty"}
		}
		return nil, nil
	}
	byName := make(map[string][]byte, len(ms))
	for _, m := range ms {
		if !slices.Contains(fields, m.name) {
			return nil, &valueError{msg: `unexpected parameter "` + m.name + `"`}
		}
		byName[m.name] = m.raw // a repeated name keeps its last value
	}
	out := map[string][]string{}
	for _, f := range fields { // Zabbix's order, so the first error is its first
		raw, ok := byName[f]
		if !ok || jsonKindOf(raw) == 'n' {
			continue
		}
		elems := [][]byte{raw}
		switch jsonKindOf(raw) {
		case 'a', 'o': // an object is a PHP array too
			elems = listValues(raw)
		case 'b':
			return nil, &valueError{sub: f, msg: "an array is expected"}
		}
		vals := make([]string, 0, len(elems))
		for i, e := range elems {
			switch jsonKindOf(e) {
			case 's':
				var s string
				json.Unmarshal(e, &s)
				vals = append(vals, s)
			case 'i', 'f':
				vals = append(vals, string(bytes.TrimSpace(e)))
			default:
				return nil, &valueError{sub: f + "/" + strconv.Itoa(i+1), msg: "a character string, integer or floating point value is expected"}
			}
		}
		out[f] = vals
	}
	return out, nil
}

// output is the "output" parameter: "extend" (or absent) means every
// field; a list selects fields.
type output struct {
	all    bool
	fields map[string]bool
}

func parseOutput(l []string, defaultAll bool) output {
	if len(l) == 0 {
		return output{all: defaultAll}
	}
	if len(l) == 1 && (l[0] == "extend" || l[0] == "") {
		return output{all: l[0] == "extend"}
	}
	o := output{fields: map[string]bool{}}
	for _, f := range l {
		o.fields[f] = true
	}
	return o
}

func (o output) has(f string) bool {
	if o.all {
		return !extensionFields[f]
	}
	return o.fields[f]
}

// extensionFields are the fields Peregrine adds to Zabbix 6.0's objects
// (docs/api.md, "Soft and hard states" and "Timestamp precision"). They
// come back only when an output list names them, never for "extend":
// a client written for Zabbix sees exactly 6.0's fields.
var extensionFields = map[string]bool{
	"attempt": true, "state_type": true, "max_check_attempts": true, "retry_delay": true, "timestamp_precision": true,
}

// dropExtensions removes the extension fields from an object shaped
// for "extend".
func dropExtensions(o object) {
	for f := range extensionFields {
		delete(o, f)
	}
}

// ignored is a member Peregrine accepts, whatever its value, and does
// not store. It takes no room, so a batch of 10,000 objects stays small.
type ignored struct{}

func (*ignored) decodeParam([]byte, *fieldCtx) error { return nil }

// listLen is a member that is an array (or, as Zabbix allows, one
// object) of elements Peregrine accepts but does not store: it keeps
// how many there are (an empty object counts none).
type listLen int

func (l *listLen) decodeParam(b []byte, _ *fieldCtx) error {
	switch {
	case len(b) > 0 && b[0] == '{':
		*l = 0
		if string(bytes.Join(bytes.Fields(b), nil)) != "{}" {
			*l = 1
		}
		return nil
	case len(b) > 0 && b[0] == '[':
		elems, ok := arrayElems(b)
		if !ok {
			return kindError{kind: reflect.Slice}
		}
		*l = listLen(len(elems))
		return nil
	}
	return kindError{kind: reflect.Slice}
}

// ids is a list of IDs (an opt[ids] reads one ID as a list of one).
type ids []uint64

// decodeIDs decodes the params of a *.delete method: an array of IDs
// or, as PHP decodes a JSON object to an array too, an object whose
// values are the IDs in order (recorded from 6.0.14:
// hostgroup.delete {"groupid": "5"} deletes group 5, {} is empty).
func decodeIDs(params json.RawMessage) ([]uint64, error) {
	raw := bytes.TrimSpace(params)
	var elems [][]byte
	switch jsonKindOf(raw) {
	case 'a', 'o':
		if _, ok := validatorMembers(raw); !ok {
			return nil, errParams(`Invalid parameter "/": an array is expected.`)
		}
		elems = listValues(raw)
	default:
		return nil, errParams(`Invalid parameter "/": an array is expected.`)
	}
	if len(elems) == 0 {
		return nil, errParams(`Invalid parameter "/": cannot be empty.`)
	}
	out := make([]uint64, len(elems))
	seen := make(map[uint64]bool, len(elems))
	for i, el := range elems {
		id, ok := parseID(el)
		if !ok {
			return nil, errParams(`Invalid parameter "/%d": a number is expected.`, i+1)
		}
		if seen[id] {
			return nil, errParams(`Invalid parameter "/%d": value (%d) already exists.`, i+1, id)
		}
		seen[id] = true
		out[i] = id
	}
	return out, nil
}

// The errors of the write methods' own checks, in Zabbix's words; i is
// the object's index (0-based).

func missing(i int, name string) error {
	return errParams(`Invalid parameter "/%d": the parameter "%s" is missing.`, i+1, name)
}

func empty(i int, name string) error {
	return errParams(`Invalid parameter "/%d/%s": cannot be empty.`, i+1, name)
}

// tooLong refuses a text member longer than its column in 6.0's schema
// (max characters), in 6.0.14's words; nil when it fits.
func tooLong(i int, name, v string, max int) error {
	if utf8.RuneCountInString(v) > max {
		return errParams(`Invalid parameter "/%d/%s": value is too long.`, i+1, name)
	}
	return nil
}

func oneOf(i int, name, values string) error {
	return errParams(`Invalid parameter "/%d/%s": value must be one of %s.`, i+1, name, values)
}

func unsupported(i int, name, what string) error {
	return errParams(`Invalid parameter "/%d/%s": %s are not supported by Peregrine.`, i+1, name, what)
}

// idResult is the result of a write method: {"itemids": ["1", ...]}.
func idResult(name string, ids []uint64) any {
	s := make([]string, len(ids))
	for i, v := range ids {
		s[i] = id(v)
	}
	return object{name: s}
}
