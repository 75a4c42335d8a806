package api

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The services and SLA methods are checked as Zabbix 6.0's API input
// validator checks them (CService, CSla): their params structs are read
// by the vocabulary's walker with the validator's rules (validatorRules),
// field by field in declaration order, which is the order of Zabbix's
// rules. This file adds what those methods need besides the
// vocabulary's readers, each a value that reads itself (paramValue):
//
//   - decodeRuled: an object whose members are refused when unknown,
//     then read field by field; a field absent that the struct lists as
//     required is "missing" at its place in that order (API_REQUIRED);
//   - zstr (API_STRING_UTF8 with in:"min:max": not empty when min is 1,
//     at most max characters), zfloat (API_FLOAT, in:"0:100"), zuuid
//     (API_UUID), zwords (API_STRINGS_UTF8 with "in": sortfield), zorder
//     (API_SORTORDER), zoutput (API_OUTPUT; in:"...,count" allows
//     "count") and zobjs (API_OBJECTS of a params struct; in:"notempty"
//     refuses an empty list), with the validator's texts;
//   - uniq, the validator's second pass over lists whose members must
//     be unique ("value (tag, value)=(a, b) already exists").

// requirer is a params struct with required members.
type requirer interface{ required() []string }

// afterFielder is a params struct that checks a member against the ones
// before it once it is read (API_MULTIPLE: status rules' limit_value
// depends on their type).
type afterFielder interface{ afterField(name string) error }

// decodeRuled reads the object raw (a JSON object, or a list as PHP
// sees one) at path into v, a pointer to a params struct.
func decodeRuled(raw []byte, path string, v any) error {
	ms, ok := validatorMembers(raw)
	if !ok {
		return problem(path, "an array is expected")
	}
	rv := reflect.ValueOf(v).Elem()
	si := structInfoOf(rv.Type())
	for _, m := range ms {
		if si.lookup(m.name, false) < 0 {
			return problem(path, `unexpected parameter "`+m.name+`"`)
		}
	}
	var req []string
	if r, ok := v.(requirer); ok {
		req = r.required()
	}
	after, _ := v.(afterFielder)
	for k := range si.fields {
		f := &si.fields[k]
		if f.index == nil {
			continue
		}
		last := -1
		for i := range ms {
			if ms[i].name == f.rule.name {
				last = i
			}
		}
		if last < 0 {
			if slices.Contains(req, f.rule.name) {
				return problem(path, `the parameter "`+f.rule.name+`" is missing`)
			}
			continue
		}
		if err := decodeMembers(ms[last:last+1], path, v, &validatorRules); err != nil {
			return err
		}
		if after != nil {
			if err := after.afterField(f.rule.name); err != nil {
				return problem(subpath(path, f.rule.name), err.Error())
			}
		}
	}
	return nil
}

// decodeRuledParams reads the params of a get-like method: an object.
func decodeRuledParams(raw json.RawMessage, v any) error {
	return apiError(decodeRuled(bytes.TrimSpace(raw), "/", v))
}

// decodeRuledObjects reads the params of a create or update: a list of
// objects, or one object (API_NORMALIZE), not empty.
func decodeRuledObjects[T any](raw json.RawMessage, out *[]T) error {
	raw = bytes.TrimSpace(raw)
	var elems [][]byte
	switch jsonKindOf(raw) {
	case 'o':
		if ms, ok := objectMembers(raw); !ok || len(ms) > 0 {
			elems = [][]byte{raw} // {} is PHP's empty array, as [] is
		}
	case 'a':
		elems, _ = arrayElems(raw)
	default:
		return invalid("/", "an array is expected")
	}
	if len(elems) == 0 {
		return invalid("/", "cannot be empty")
	}
	*out = make([]T, len(elems))
	for i, el := range elems {
		if err := decodeRuled(el, "/"+strconv.Itoa(i+1), &(*out)[i]); err != nil {
			return apiError(err)
		}
	}
	return nil
}

// ruleBounds is the first range of a rule's "in" (0, 0 when none).
func ruleBounds(r *fieldRule) (lo, hi int64, ok bool) {
	if len(r.ranges) == 0 {
		return 0, 0, false
	}
	return r.ranges[0][0], r.ranges[0][1], true
}

// zstr is a character string (API_STRING_UTF8).
type zstr string

func (s *zstr) decodeParam(raw []byte, c *fieldCtx) error {
	if jsonKindOf(raw) == 'n' && c.rule.null {
		return nil // not given (API_ALLOW_NULL)
	}
	if jsonKindOf(raw) != 's' {
		return &valueError{msg: "a character string is expected"}
	}
	v, ok := strValue(raw)
	if !ok {
		return &valueError{msg: "a character string is expected"}
	}
	if !utf8.ValidString(v) {
		return &valueError{msg: "invalid byte sequence in UTF-8"}
	}
	if lo, hi, ok := ruleBounds(c.rule); ok {
		if lo > 0 && v == "" {
			return &valueError{msg: "cannot be empty"}
		}
		if int64(utf8.RuneCountInString(v)) > hi {
			return &valueError{msg: "value is too long"}
		}
	}
	*s = zstr(v)
	return nil
}

// zfloat is a floating point number (API_FLOAT): a number, or a string
// of one.
type zfloat float64

func (f *zfloat) decodeParam(raw []byte, c *fieldCtx) error {
	var v float64
	var err error
	switch jsonKindOf(raw) {
	case 'i', 'f':
		v, err = strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	case 's':
		s, _ := strValue(raw)
		v, err = parseNumber(s)
	default:
		return &valueError{msg: "a floating point value is expected"}
	}
	if err != nil {
		return &valueError{msg: "a floating point value is expected"}
	}
	if lo, hi, ok := ruleBounds(c.rule); ok && (v < float64(lo) || v > float64(hi)) {
		return &valueError{msg: "value must be within the range of " + c.rule.inText}
	}
	*f = zfloat(v)
	return nil
}

// parseNumber reads a decimal number as Zabbix's number parser does:
// an optional minus, digits with an optional fraction, an optional
// exponent; no spaces, no hexadecimal, no "inf".
func parseNumber(s string) (float64, error) {
	t := strings.TrimPrefix(s, "-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(t), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := func(d string) bool { return strings.Trim(d, "0123456789") == "" }
	if intPart+frac == "" || !digits(intPart) || !digits(frac) {
		return 0, strconv.ErrSyntax
	}
	if hasExp {
		e := strings.TrimLeft(exp, "+-")
		if e == "" || !digits(e) {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseFloat(s, 64)
}

// zuuid is a UUID version 4 in 32 hexadecimal digits (API_UUID).
type zuuid string

func (u *zuuid) decodeParam(raw []byte, _ *fieldCtx) error {
	v, ok := strValue(raw)
	switch {
	case jsonKindOf(raw) != 's' || !ok:
		return &valueError{msg: "a character string is expected"}
	case v == "":
		return &valueError{msg: "cannot be empty"}
	case utf8.RuneCountInString(v) != 32:
		return &valueError{msg: "must be 32 characters long"}
	}
	b, err := hex.DecodeString(v)
	if err != nil || b[6]&0xf0 != 0x40 || b[8]&0xc0 != 0x80 {
		return &valueError{msg: "UUIDv4 is expected"}
	}
	*u = zuuid(strings.ToLower(v))
	return nil
}

// quoted words a list of values as the validator does: "a", "b".
func quoted(in []string) string { return `"` + strings.Join(in, `", "`) + `"` }

// oneOfText is the validator's text for a string not in the list.
func oneOfText(in []string) string {
	if len(in) == 1 {
		return "value must be " + quoted(in)
	}
	return "value must be one of " + quoted(in)
}

// zwords is a list of strings, each one of the rule's "in", no two
// alike; one string stands for a list of one (sortfield).
type zwords []string

func (w *zwords) decodeParam(raw []byte, c *fieldCtx) error {
	elems := [][]byte{raw}
	switch jsonKindOf(raw) {
	case 's':
	case 'a':
		elems, _ = arrayElems(raw)
	default:
		return &valueError{msg: "an array is expected"}
	}
	out := make([]string, 0, len(elems))
	for i, e := range elems {
		sub := strconv.Itoa(i + 1)
		s, ok := strValue(e)
		if jsonKindOf(e) != 's' || !ok {
			return &valueError{sub: sub, msg: "a character string is expected"}
		}
		if len(c.rule.in) > 0 && !slices.Contains(c.rule.in, s) {
			return &valueError{sub: sub, msg: oneOfText(c.rule.in)}
		}
		if slices.Contains(out, s) {
			return &valueError{sub: sub, msg: "value (" + s + ") already exists"}
		}
		out = append(out, s)
	}
	*w = out
	return nil
}

// zorder is ASC or DESC, or a list of them (API_SORTORDER).
type zorder []string

func (o *zorder) decodeParam(raw []byte, _ *fieldCtx) error {
	in := []string{"ASC", "DESC"}
	switch jsonKindOf(raw) {
	case 's':
		s, _ := strValue(raw)
		if !slices.Contains(in, s) {
			return &valueError{msg: oneOfText(in)}
		}
		*o = zorder{s}
		return nil
	case 'a', 'o':
		ms, _ := validatorMembers(raw)
		out := zorder{}
		for i, m := range ms {
			s, ok := strValue(m.raw)
			if jsonKindOf(m.raw) != 's' || !ok {
				return &valueError{sub: strconv.Itoa(i + 1), msg: "a character string is expected"}
			}
			if !slices.Contains(in, s) {
				return &valueError{sub: strconv.Itoa(i + 1), msg: oneOfText(in)}
			}
			out = append(out, s)
		}
		*o = out
		return nil
	}
	return &valueError{msg: "an array or a character string is expected"}
}

// at is the order of the i-th sort field: its own, the one order given
// for all, or ASC.
func (o zorder) at(i int) bool {
	switch {
	case len(o) == 1:
		return o[0] == "DESC"
	case i < len(o):
		return o[i] == "DESC"
	}
	return false
}

// zoutput is an output (API_OUTPUT): "extend", a list of the rule's
// field names, or, when the rule's "in" has "count", "count". null is
// absent when the field is declared zbx:"null".
type zoutput struct {
	count  bool
	fields []string // nil: every field
}

func (o *zoutput) decodeParam(raw []byte, c *fieldCtx) error {
	allowCount := slices.Contains(c.rule.in, "count")
	fields := slices.DeleteFunc(slices.Clone(c.rule.in), func(s string) bool { return s == "count" })
	switch jsonKindOf(raw) {
	case 'n':
		if c.rule.null {
			return nil
		}
	case 's':
		s, _ := strValue(raw)
		switch {
		case s == "extend":
			*o = zoutput{}
		case s == "count" && allowCount:
			*o = zoutput{count: true}
		case allowCount:
			return &valueError{msg: oneOfText([]string{"extend", "count"})}
		default:
			return &valueError{msg: oneOfText([]string{"extend"})}
		}
		return nil
	case 'a', 'o':
		ms, _ := validatorMembers(raw)
		out := make([]string, 0, len(ms))
		for i, m := range ms {
			sub := strconv.Itoa(i + 1)
			s, ok := strValue(m.raw)
			if jsonKindOf(m.raw) != 's' || !ok {
				return &valueError{sub: sub, msg: "a character string is expected"}
			}
			if !slices.Contains(fields, s) {
				return &valueError{sub: sub, msg: oneOfText(fields)}
			}
			if slices.Contains(out, s) {
				return &valueError{sub: sub, msg: "value (" + s + ") already exists"}
			}
			out = append(out, s)
		}
		*o = zoutput{fields: out}
		return nil
	}
	return &valueError{msg: "an array or a character string is expected"}
}

// has reports whether field f is output.
func (o *zoutput) has(f string) bool { return o.fields == nil || slices.Contains(o.fields, f) }

// zobjs is a list of objects (API_OBJECTS), each a params struct T read
// by decodeRuled; a JSON object stands for the list of its values, as
// PHP sees it.
type zobjs[T any] []T

func (l *zobjs[T]) decodeParam(raw []byte, c *fieldCtx) error {
	if jsonKindOf(raw) == 'n' && c.rule.null {
		return nil
	}
	ms, ok := validatorMembers(raw)
	if !ok {
		return &valueError{msg: "an array is expected"}
	}
	if len(ms) == 0 && slices.Contains(c.rule.in, "notempty") {
		return &valueError{msg: "cannot be empty"}
	}
	out := make(zobjs[T], len(ms))
	for i, m := range ms {
		sub := strconv.Itoa(i + 1)
		if err := decodeRuled(m.raw, sub, &out[i]); err != nil {
			if pe, ok := err.(*pathError); ok {
				return &valueError{sub: pe.path, msg: pe.msg}
			}
			return err
		}
	}
	*l = out
	return nil
}

// uniq finds the first element of a list (n long) whose key (the
// values named by names, from key(i)) an earlier one has, and words it
// as the validator does at path ("/1/tags").
func uniq(path string, n int, names []string, key func(i int) []string) error {
	seen := map[string]bool{}
	for i := range n {
		vals := key(i)
		if vals == nil {
			continue
		}
		k := strings.Join(vals, "\x00")
		if seen[k] {
			return invalid(subpath(path, strconv.Itoa(i+1)), "value ("+strings.Join(names, ", ")+")=("+strings.Join(vals, ", ")+") already exists")
		}
		seen[k] = true
	}
	return nil
}

// uniqGiven is uniq over one member an object may leave out (an
// update): the objects without it are not compared.
func uniqGiven(path string, n int, name string, get func(i int) opt[zstr]) error {
	return uniq(path, n, []string{name}, func(i int) []string {
		if v := get(i); v.Set {
			return []string{string(v.Value)}
		}
		return nil
	})
}

// i64s is strconv.FormatInt for the validator's texts.
func i64s(v int64) string { return strconv.FormatInt(v, 10) }
