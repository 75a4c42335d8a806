package api

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// The legacy get dialect (dialectLegacy, decodeGet): how the get methods
// Zabbix 6.0 kept from before its API input validator read their
// parameters. Those methods merge the request over their defaults and
// test each option where they use it, so a parameter is never refused
// for its type: a member no method knows is ignored, and a value of
// another type than expected is read as PHP reads it (recorded from
// Zabbix 6.0.14; the conformance case legacy_gets has the answers):
//
//   - IDs (hostids, groupids, ...): one ID or a list (an object's
//     values count as a list); null is no condition, and a list that
//     selects nothing (empty, or holding a string that is not digits, or
//     starting with a boolean) matches nothing. Numbers count (a float
//     without its fraction), strings of digits count (white space
//     around them allowed), null and booleans after the first element
//     are skipped.
//   - flags: by default PHP's truth ("0", "", 0, false, [] and null are
//     false, "false" is true); as:"isset" any value but null is true,
//     false included, since those methods test that the option is set.
//   - limit (as:"limit"): a positive integer, as a number or a string of
//     digits; anything else is no limit.
//   - other integers: a number or a numeric string; anything else makes
//     the condition it sets match nothing (the database refuses it).
//   - output: "extend" (or true) is every field, a list (or an object's
//     values) the fields named plus the object's ID, anything else (null,
//     another string, a number) the ID only; absent is the method's
//     default.
//   - sortfield: a name or a list; "", [] and null sort nothing.
//     sortorder: "DESC" exactly is descending, anything else ascending;
//     a list gives each sort field its own.
//   - filter and search: an object (or a list) of field to value(s);
//     anything else filters nothing.
//   - select*: sel (below).
//   - tags: tagConds (get_tags.go).
//
// A field tagged zbx:"strict" is one such a method checks with the API
// input validator all the same (item.get's evaltype, host.get's
// severities): it is read with the validator's rules and texts.

// decodeGet decodes the params of a legacy get method (params_legacy.go):
// an object, or a list read as PHP reads one (its members "0", "1",
// ...); members no field declares are ignored and values are read as
// Zabbix 6.0 reads them. A value that makes the answer empty (errNoRows)
// marks v (noRowser) rather than failing; only a field the method checks
// with the API input validator (zbx:"strict") can be refused.
func decodeGet(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	ms, ok := validatorMembers(raw)
	if !ok {
		return errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	err := decodeMembers(ms, "/", v, &getRules)
	if err == errNoRows {
		if n, ok := v.(noRowser); ok {
			n.markNoRows()
		}
		return nil
	}
	return apiError(err)
}

// errNoRows is a legacy value that makes the answer empty: Zabbix puts it
// in its query and the database selects nothing (a time that is not a
// number). decodeMembers goes on reading and decodeGet marks the params
// (noRows) instead of failing.
var errNoRows = &valueError{msg: "selects nothing"}

// noRowser is what decodeGet marks when a value selects nothing
// (*getParams and the params structs that embed it).
type noRowser interface{ markNoRows() }

// phpTruth is PHP's truth of a JSON value as json_decode reads it.
func phpTruth(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	switch jsonKindOf(raw) {
	case 'n':
		return false
	case 'b':
		return string(raw) == "true"
	case 'i', 'f':
		f, err := strconv.ParseFloat(string(raw), 64)
		return err != nil || f != 0
	case 's':
		s, _ := strValue(raw)
		return s != "" && s != "0"
	case 'a':
		l, _ := arrayElems(raw)
		return len(l) > 0
	case 'o':
		ms, _ := objectMembers(raw)
		return len(ms) > 0
	}
	return true
}

// listValues is a value as PHP's (array) cast and zbx_value2array see
// it: a list's elements, an object's values, or the value alone.
func listValues(raw []byte) [][]byte {
	switch jsonKindOf(raw) {
	case 'a':
		l, _ := arrayElems(raw)
		return l
	case 'o':
		ms, _ := objectMembers(raw)
		out := make([][]byte, len(ms))
		for i, m := range ms {
			out[i] = m.raw
		}
		return out
	}
	return [][]byte{raw}
}

// legacyIDs reads a list of IDs as the legacy gets do (see above); the
// list is empty, not nil, when it selects nothing.
func legacyIDs(raw []byte) []uint64 {
	elems := listValues(raw)
	out := make([]uint64, 0, len(elems))
	for i, e := range elems {
		switch jsonKindOf(e) {
		case 'i':
			if id, err := strconv.ParseUint(string(bytes.TrimSpace(e)), 10, 64); err == nil {
				out = append(out, id)
			}
		case 'f':
			if f, err := strconv.ParseFloat(string(bytes.TrimSpace(e)), 64); err == nil && f >= 0 && f < math.MaxUint64 {
				out = append(out, uint64(f))
			}
		case 's':
			s, _ := strValue(e)
			s = strings.TrimSpace(s)
			id, err := strconv.ParseUint(s, 10, 64)
			if err != nil || strings.Trim(s, "0123456789") != "" {
				return []uint64{}
			}
			out = append(out, id)
		case 'b':
			if i == 0 {
				return []uint64{}
			}
		}
	}
	return out
}

// legacyInt reads an integer: a number (without its fraction) or a
// string of one; ok is false for anything else.
func legacyInt(raw []byte) (int64, bool) {
	var text string
	switch jsonKindOf(raw) {
	case 'i':
		text = string(bytes.TrimSpace(raw))
	case 'f':
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
		if err != nil || f < math.MinInt64 || f > math.MaxInt64 {
			return 0, false
		}
		return int64(f), true
	case 's':
		s, _ := strValue(raw)
		text = strings.TrimSpace(s)
	default:
		return 0, false
	}
	n, err := strconv.ParseInt(text, 10, 64)
	return n, err == nil
}

// legacyLimit reads "limit" and "limitSelects": a positive integer as a
// number or a string of digits (PHP's ctype_digit of its string form);
// ok is false for no limit.
func legacyLimit(raw []byte) (int64, bool) {
	var text string
	switch jsonKindOf(raw) {
	case 'i':
		text = string(bytes.TrimSpace(raw))
	case 'f':
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
		if err != nil || f != math.Trunc(f) || f < 1 || f > math.MaxInt64 {
			return 0, false
		}
		return int64(f), true
	case 's':
		text, _ = strValue(raw)
	case 'b':
		return 1, string(bytes.TrimSpace(raw)) == "true"
	default:
		return 0, false
	}
	if text == "" || strings.Trim(text, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		n = math.MaxInt64
	}
	return n, n > 0
}

// legacyText is a scalar as PHP makes it a string: a string, a number's
// text, "1" or "" for a boolean; ok is false for null, a list or an
// object.
func legacyText(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	switch jsonKindOf(raw) {
	case 's':
		return strValue(raw)
	case 'i', 'f':
		return string(raw), true
	case 'b':
		if string(raw) == "true" {
			return "1", true
		}
		return "", true
	}
	return "", false
}

// legacyTexts reads a name or a list of names (sortfield, output's
// fields): the scalars of the list as text, others skipped.
func legacyTexts(raw []byte) []string {
	elems := listValues(raw)
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		if s, ok := legacyText(e); ok {
			out = append(out, s)
		}
	}
	return out
}

// legacyValue reads raw, a member's value, into p, a pointer to a value
// of kind k, in the legacy dialect. It never refuses a value: it returns
// errNoRows for one that selects nothing, and otherwise leaves a value
// it cannot use as it was (absent).
func legacyValue(k valueKind, raw []byte, p any, c *fieldCtx) error {
	raw = bytes.TrimSpace(raw)
	switch k {
	case kindIDs:
		out := legacyIDs(raw)
		switch q := p.(type) {
		case *ids:
			*q = out
		case *[]uint64:
			*q = out
		}
		return nil
	case kindID, kindInt:
		if c.rule.limit {
			return nil // decodeParam reads limits
		}
		n, ok := legacyInt(raw)
		if !ok {
			return errNoRows
		}
		switch q := p.(type) {
		case *int64:
			*q = n
		case *uint64:
			if n < 0 {
				return errNoRows
			}
			*q = uint64(n)
		}
		return nil
	case kindStr, kindTimeUnit:
		s, ok := legacyText(raw)
		if !ok {
			return errNoRows
		}
		*p.(*string) = s
		return nil
	case kindStrings, kindSortOrder:
		*p.(*[]string) = legacyTexts(raw)
		return nil
	case kindOutput:
		*p.(*[]string) = legacyOutput(raw)
		return nil
	case kindBool:
		*p.(*bool) = phpTruth(raw)
		return nil
	case kindFlag, kindIsset:
		*p.(*bool) = true // null was taken as absent
		return nil
	case kindCustom:
		return p.(paramValue).decodeParam(raw, c)
	}
	// Anything else (select parameters as JSON, nested objects) is
	// read by encoding/json when it can be, and left absent otherwise.
	if err := json.Unmarshal(raw, p); err != nil {
		return nil
	}
	return nil
}

// legacyOutput reads "output" (see above): ["extend"] for every field,
// the names of a list, or none (the ID only).
func legacyOutput(raw []byte) []string {
	switch jsonKindOf(raw) {
	case 'a', 'o':
		l := legacyTexts(raw)
		if len(l) == 1 && l[0] == "extend" {
			// A list naming "extend" is a field of that name, which no
			// object has: the ID only.
			l = append(l, "")
		}
		return l
	case 'b':
		if string(bytes.TrimSpace(raw)) == "true" {
			return []string{"extend"}
		}
	case 's':
		if s, _ := strValue(raw); s == "extend" {
			return []string{"extend"}
		}
	}
	return []string{}
}

// sel is a select* parameter of a legacy get: not given (null or
// absent), "extend" (every field), "count" (or true: PHP takes true for
// any string), or a list of fields (anything else: none, the ID only
// where the select adds it).
type sel struct {
	Set    bool
	All    bool
	Count  bool
	Fields []string
}

func (s *sel) decodeParam(raw []byte, c *fieldCtx) error {
	*s = sel{}
	raw = bytes.TrimSpace(raw)
	if c != nil && c.rules.dialect == dialectValidator {
		return s.validated(raw, c.rule)
	}
	switch jsonKindOf(raw) {
	case 'n':
		return nil
	case 'b':
		s.Count = string(raw) == "true"
	case 's':
		v, _ := strValue(raw)
		s.All, s.Count = v == "extend", v == "count"
	case 'a', 'o':
		s.Fields = legacyTexts(raw)
	}
	s.Set = true
	return nil
}

// validated reads a select as the API input validator checks one (a
// validated get's): "extend", "count" or a list of the fields of r's
// "in", none twice; null is not given when r allows it.
func (s *sel) validated(raw []byte, r *fieldRule) error {
	k := jsonKindOf(raw)
	if k == 'n' && r.null {
		return nil
	}
	l, err := outputParam(raw, r.in, true)
	if err != nil {
		return err
	}
	s.Set = true
	switch {
	case k != 's':
		s.Fields = l
	case l[0] == "count":
		s.Count = true
	default:
		s.All = true
	}
	return nil
}

// has reports whether the select asks for field f.
func (s *sel) has(f string) bool {
	if s.All {
		return !extensionFields[f]
	}
	for _, x := range s.Fields {
		if x == f {
			return true
		}
	}
	return false
}

// list reports whether the select asks for objects (not a count).
func (s *sel) list() bool { return s.Set && !s.Count }

// shape returns objs with the fields the select asks for, plus idField
// when it is not "" (the selects that add their objects' ID to a list of
// fields); objs are changed in place.
func (s *sel) shape(objs []object, idField string) []object {
	if s.All {
		for _, o := range objs {
			dropExtensions(o)
		}
		return objs
	}
	for i, o := range objs {
		shaped := object{}
		for k, v := range o {
			if k == idField || s.has(k) {
				shaped[k] = v
			}
		}
		objs[i] = shaped
	}
	return objs
}

// countOf is a count as a select returns it: a JSON string.
func countOf(n int) rawJSON {
	return rawJSON(`"` + strconv.Itoa(n) + `"`)
}

// sortOrders is "sortorder": one order for every sort field (a string)
// or one per field (a list).
type sortOrders struct {
	isList bool
	v      []string
}

func (o *sortOrders) decodeParam(raw []byte, c *fieldCtx) error {
	raw = bytes.TrimSpace(raw)
	if c.rules.dialect == dialectValidator {
		l, err := sortOrderParam(raw)
		if err != nil {
			return err
		}
		k := jsonKindOf(raw)
		*o = sortOrders{isList: k == 'a' || k == 'o', v: l}
		return nil
	}
	if c.rules.dialect != dialectLegacy {
		// The strict gets' reading: a string or a list of them.
		l, err := stringsValue(raw)
		if err != nil {
			return err
		}
		*o = sortOrders{isList: jsonKindOf(raw) == 'a', v: l}
		return nil
	}
	switch jsonKindOf(raw) {
	case 'a', 'o':
		*o = sortOrders{isList: true, v: legacyTexts(raw)}
	default:
		s, _ := legacyText(raw)
		*o = sortOrders{v: []string{s}}
	}
	return nil
}

// desc reports whether sort field i is sorted in descending order.
func (o sortOrders) desc(i int) bool {
	if !o.isList {
		return len(o.v) > 0 && o.v[0] == "DESC"
	}
	return i < len(o.v) && o.v[i] == "DESC"
}

// fieldMap is "filter" or "search": field name to its raw value.
type fieldMap map[string]json.RawMessage

func (m *fieldMap) decodeParam(raw []byte, c *fieldCtx) error {
	raw = bytes.TrimSpace(raw)
	if c.rules.dialect == dialectValidator {
		// Checked as the validator checks it (the fields of the rule's
		// "in", each a value or a list of strings and numbers), then
		// kept as given for filterConds and searchConds.
		if _, err := filterParam(raw, c.rule.in); err != nil {
			return err
		}
		ms, _ := validatorMembers(raw)
		*m = make(fieldMap, len(ms))
		for _, x := range ms {
			(*m)[x.name] = json.RawMessage(x.raw)
		}
		return nil
	}
	var ms []member
	switch jsonKindOf(raw) {
	case 'o':
		ms, _ = objectMembers(raw)
	case 'a':
		if c.rules.dialect != dialectLegacy {
			return kindError{kind: reflect.Map}
		}
		ms, _ = validatorMembers(raw)
	case 'n':
		*m = nil
		return nil
	default:
		if c.rules.dialect == dialectLegacy {
			*m = nil // not a list of fields: no condition
			return nil
		}
		return kindError{kind: reflect.Map}
	}
	out := make(fieldMap, len(ms))
	for _, x := range ms {
		out[x.name] = json.RawMessage(x.raw)
	}
	*m = out
	return nil
}

// phpEquals reports whether a JSON value equals the integer n as PHP 8's
// == sees it: a number of that value, a numeric string of it, true for
// any n but 0, false and null for 0.
func phpEquals(raw []byte, n int64) bool {
	raw = bytes.TrimSpace(raw)
	switch jsonKindOf(raw) {
	case 'b':
		return (string(raw) == "true") == (n != 0)
	case 'n':
		return n == 0
	case 'i', 'f':
		f, err := strconv.ParseFloat(string(raw), 64)
		return err == nil && f == float64(n)
	case 's':
		s, _ := strValue(raw)
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return err == nil && f == float64(n)
	}
	return false
}

// evalType is a legacy get's "evaltype": 2 (as PHP compares) joins the
// tag conditions with OR, anything else with AND/OR.
type evalType struct{ or bool }

func (e *evalType) decodeParam(raw []byte, _ *fieldCtx) error {
	e.or = phpEquals(raw, 2)
	return nil
}

// value is the evaltype compileTags takes.
func (e evalType) value() int64 {
	if e.or {
		return 2
	}
	return 0
}
