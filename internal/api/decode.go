package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The decoder of the params vocabulary (params.go has the vocabulary):
// one walker over the members of a params object, driven by the
// method's params struct. Each field of the struct declares one
// parameter: its name (json tag), how its value is read (the Go type
// and the "as" tag), the values it may take ("in"), whether null is
// accepted ("zbx": "null") and its default ("default"). The walker
// refuses the members no field declares (the first in the request's
// order; the legacy gets' and lenient entry points ignore them), then
// hands each member's raw value to its field. The rules of each entry
// point (decodeRules) are those of the Zabbix 6.0 methods it serves
// (getRules, validatorRules) or, where not yet aligned, the wording
// their methods had (strictGetRules, writeRules, lenientRules).

// dialect is how type errors are worded.
type dialect uint8

const (
	// dialectGet: the get methods' former decoder: `a number is
	// expected`, `a boolean value is expected`, by the Go kind.
	dialectGet dialect = iota
	// dialectWrite: create and update objects: `an integer is
	// expected`, `a boolean is expected`.
	dialectWrite
	// dialectValidator: the Zabbix API input validator's texts, which
	// each kind of value words itself (history.get, auditlog.get,
	// token.get, valuemap.get).
	dialectValidator
	// dialectAlert: the notification families' objects as their former
	// decoder read them (params_alert.go): numbers as JSON numbers,
	// strings as encoding/json decoded them, the get methods' words
	// for a wrong type and the write methods' paths ("/1/MediaType/name").
	dialectAlert
	// dialectLegacy: the get methods Zabbix 6.0 kept from before its
	// API input validator (params_legacy.go): no value is refused for
	// its type, each is read as PHP reads it.
	dialectLegacy
)

// decodeRules are the rules of one entry point of the decoder.
type decodeRules struct {
	dialect dialect
	// fold: a member also matches a field whose name differs only in
	// case, as encoding/json matches them (the exact name first).
	fold bool
	// lenient: members no field declares are ignored, not refused.
	lenient bool
	// ruleOrder: fields are decoded in their declaration order (the
	// order of Zabbix's rules, so the first error is Zabbix's first),
	// not in the request's.
	ruleOrder bool
	// strictNested: members of nested objects (as:"object",
	// as:"objects", or a value encoding/json decodes) are refused when
	// unknown, at the object the params name.
	strictNested bool
	// unknownLater: an unknown member is a problem in its place in the
	// request (decodeMembers), not refused before any value is read.
	unknownLater bool
	// jsonOrder: of several problems, the one reported is the one
	// encoding/json reported for the former decoders (decodeMembers);
	// without it, the first met.
	jsonOrder bool
	// sorted: members are read in the byte order of their names, a
	// repeated one's last value only (patchOrder), as a former decoder
	// that went through a JSON map read them.
	sorted bool
}

var (
	// getRules are the legacy gets' (decodeGet): unknown members are
	// ignored, values read as PHP reads them, the fields a method checks
	// with the validator (zbx:"strict") in the order of the struct.
	getRules = decodeRules{dialect: dialectLegacy, lenient: true, ruleOrder: true}
	// strictGetRules are those of decodeGetStrict (queue.get) and of
	// preprocessing.test: unknown members are
	// refused. Their type errors keep the wording of Peregrine's former
	// get decoder; the gets 6.0 checks with its API input validator
	// are read with validatorRules (decodeValidated, get_valid.go).
	strictGetRules = decodeRules{dialect: dialectGet, jsonOrder: true}
	lenientRules   = decodeRules{dialect: dialectGet, fold: true, lenient: true, jsonOrder: true}
	writeRules     = decodeRules{dialect: dialectWrite, fold: true, strictNested: true, unknownLater: true, jsonOrder: true}
	// legacyWriteRules are those of the create and update methods 6.0
	// checks with their own code rather than its API input validator
	// (host, item, hostinterface: decodeLegacyObjects): members of the
	// objects no field declares are ignored (recorded from 6.0.14:
	// host.create {"xyz": 1, ...} creates the host), those of nested
	// objects still refused.
	legacyWriteRules = decodeRules{dialect: dialectWrite, fold: true, lenient: true, strictNested: true, unknownLater: true, jsonOrder: true}
	validatorRules   = decodeRules{dialect: dialectValidator, ruleOrder: true}
)

// valueKind is how a field's value is read. The Go type gives the
// default; the "as" tag chooses another.
type valueKind uint8

const (
	kindJSON      valueKind = iota // encoding/json (plain Go types, nested structs, custom types)
	kindID                         // uint64: one ID, a number or a string of digits
	kindIDs                        // []uint64: a list of IDs, or one
	kindInt                        // int64: a number or a numeric string
	kindStr                        // string: JSON strings only
	kindTimeUnit                   // string: "30s", or a bare number of seconds (as:"timeunit")
	kindStrings                    // []string: a string or a list of strings
	kindBool                       // bool
	kindFlag                       // bool: a Zabbix flag, any non-null value is true (as:"flag")
	kindIsset                      // bool: legacy gets' "is set", any value but null is true, false included (as:"isset")
	kindOutput                     // []string: "extend" or a list of field names (as:"output")
	kindSortOrder                  // []string: ASC, DESC or a list of them (as:"sortorder")
	kindFilter                     // map[string][]string: field to values (as:"filter")
	kindCustom                     // the type decodes itself (paramValue)
	kindObject                     // a params struct: a nested object (as:"object", params_nested.go)
	kindObjects                    // a slice of params structs: a list of objects (as:"objects")
)

// fieldRule is one field's declaration.
type fieldRule struct {
	name string
	kind valueKind
	// in lists the values the field may take: ranges of integers
	// ("0,1,2,3,4", "1:2147483647") or words ("ASC,DESC"), in Zabbix's
	// syntax; inText is how an error words them ("0, 1, 2, 3, 4",
	// "1-2147483647").
	in     []string
	ranges [][2]int64
	inText string
	// null: JSON null is taken as absent (Zabbix's API_ALLOW_NULL).
	null bool
	// normalize: one value stands for a list of one (API_NORMALIZE).
	normalize bool
	// deflt is the value of a field not given, as JSON.
	deflt string
	// key is the ID member of the objects of a list of references
	// (refs: "templateid").
	key string
	// errname, when set, is the name errors give the member: the
	// former decoders named templates_clear's problems "templates".
	errname string
	// nullKeeps: null is absent and leaves the value a repeated member
	// gave before it (an integer, a boolean, a plain Go scalar), where
	// other kinds take null as a value (or refuse it).
	nullKeeps bool
	// limit: a legacy get's "limit" or "limitSelects" (as:"limit"): a
	// positive integer, anything else no limit (legacyLimit).
	limit bool
	// strict: a legacy get's parameter the method checks with the API
	// input validator (zbx:"strict"): read with the validator's rules.
	strict bool
	// uniq: the validator refuses a list naming a value twice
	// (zbx:"uniq", sortfield; "output" always).
	uniq bool
}

// inRange reports whether n is one of the rule's ranges (any n when the
// rule has none).
func (r *fieldRule) inRange(n int64) bool {
	if len(r.ranges) == 0 {
		return true
	}
	for _, rg := range r.ranges {
		if n >= rg[0] && n <= rg[1] {
			return true
		}
	}
	return false
}

// setIn sets the rule's "in" from Zabbix's syntax.
func (r *fieldRule) setIn(in string) {
	r.in, r.ranges, r.inText = nil, nil, ""
	if in == "" {
		return
	}
	var words []string
	for _, part := range strings.Split(in, ",") {
		lo, hi, isRange := strings.Cut(part, ":")
		if isRange {
			a, err1 := strconv.ParseInt(lo, 10, 64)
			b, err2 := strconv.ParseInt(hi, 10, 64)
			if err1 == nil && err2 == nil {
				r.ranges = append(r.ranges, [2]int64{a, b})
			}
			words = append(words, lo+"-"+hi)
			continue
		}
		r.in = append(r.in, part)
		if n, err := strconv.ParseInt(part, 10, 64); err == nil {
			r.ranges = append(r.ranges, [2]int64{n, n})
		}
		words = append(words, part)
	}
	r.inText = strings.Join(words, ", ")
}

// fieldInfo is one field of a params struct.
type fieldInfo struct {
	index []int
	rule  fieldRule
	// selfDecoding: the field's value (an opt's) has its own
	// UnmarshalJSON, whose errors encoding/json reported at once
	// (decodeRules.jsonOrder).
	selfDecoding bool
	// embed is the Go names of the embedded structs the field is
	// promoted from, each followed by a dot ("getParams."): the former
	// decoders named a mistyped promoted field so ("/getParams.limit"),
	// and kind errors still do until the conformance work drops it.
	embed string
}

// structInfo is a params struct's fields in declaration order.
type structInfo struct {
	fields []fieldInfo
	byName map[string]int
}

var structInfos sync.Map // reflect.Type → *structInfo

// structInfoOf reads (once per type) the fields of the params struct t.
func structInfoOf(t reflect.Type) *structInfo {
	if si, ok := structInfos.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{byName: map[string]int{}}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if k, ok := si.byName[name]; ok {
			// The shallower field wins, as in encoding/json.
			if len(si.fields[k].index) <= len(f.Index) {
				continue
			}
			si.fields[k] = fieldInfo{}
		}
		r := fieldRule{name: name, kind: kindOf(f.Type, f.Tag.Get("as")), deflt: f.Tag.Get("default"), key: f.Tag.Get("key"), errname: f.Tag.Get("errname"), limit: f.Tag.Get("as") == "limit"}
		r.setIn(f.Tag.Get("in"))
		r.nullKeeps = nullKeeps(f.Type, r.kind)
		for _, flag := range strings.Split(f.Tag.Get("zbx"), ",") {
			switch flag {
			case "null":
				r.null = true
			case "normalize":
				r.normalize = true
			case "strict":
				r.strict = true
			case "uniq":
				r.uniq = true
			}
		}
		fi := fieldInfo{index: f.Index, rule: r, selfDecoding: selfDecoding(f.Type)}
		for k := 1; k < len(f.Index); k++ {
			// An embedded struct is named by its Go name or, where the
			// former decoder's path named another, its errname tag.
			e := t.FieldByIndex(f.Index[:k])
			name := e.Name
			if n := e.Tag.Get("errname"); n != "" {
				name = n
			}
			fi.embed += name + "."
		}
		if k, ok := si.byName[name]; ok {
			si.fields[k] = fi
			continue
		}
		si.byName[name] = len(si.fields)
		si.fields = append(si.fields, fi)
	}
	got, _ := structInfos.LoadOrStore(t, si)
	return got.(*structInfo)
}

// kindOf is how the value of a field of Go type t is read, given its
// "as" tag: for an opt, by its value type; a field of another type
// decodes itself (paramValue) or is read by encoding/json, as the former
// decoders read every field.
func kindOf(t reflect.Type, as string) valueKind {
	o, isOpt := reflect.New(t).Interface().(optional)
	if isOpt {
		t = o.valueType()
	}
	switch as {
	case "timeunit":
		return kindTimeUnit
	case "flag":
		return kindFlag
	case "isset":
		return kindIsset
	case "limit":
		return kindInt
	case "output":
		return kindOutput
	case "sortorder":
		return kindSortOrder
	case "filter":
		return kindFilter
	case "json":
		return kindJSON
	case "object":
		return kindObject
	case "objects":
		return kindObjects
	}
	if _, ok := reflect.New(t).Interface().(paramValue); ok {
		return kindCustom
	}
	if !isOpt {
		return kindJSON
	}
	switch t {
	case reflect.TypeFor[uint64]():
		return kindID
	case reflect.TypeFor[[]uint64](), reflect.TypeFor[ids]():
		return kindIDs
	case reflect.TypeFor[int64]():
		return kindInt
	case reflect.TypeFor[string]():
		return kindStr
	case reflect.TypeFor[[]string]():
		return kindStrings
	case reflect.TypeFor[bool]():
		return kindBool
	}
	return kindJSON
}

// nullKeeps reports whether a null member leaves a field of type t (an
// opt's value type, for an opt) read as kind k unchanged, as encoding/json
// leaves a scalar or a struct and the former integer type did.
func nullKeeps(t reflect.Type, k valueKind) bool {
	if o, ok := reflect.New(t).Interface().(optional); ok {
		t = o.valueType()
	}
	switch k {
	case kindInt, kindBool, kindObject:
		return true
	case kindJSON:
		if _, ok := reflect.New(t).Interface().(json.Unmarshaler); ok {
			return false
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			return false
		}
		return true
	}
	return false
}

// selfDecoding reports whether a field of type t (an opt's value type,
// for an opt) decodes itself with its own UnmarshalJSON.
func selfDecoding(t reflect.Type) bool {
	if o, ok := reflect.New(t).Interface().(optional); ok {
		t = o.valueType()
	}
	_, ok := reflect.New(t).Interface().(json.Unmarshaler)
	return ok
}

// lookup returns the field that takes member name, or -1.
func (si *structInfo) lookup(name string, fold bool) int {
	if k, ok := si.byName[name]; ok {
		return k
	}
	if fold {
		for k := range si.fields {
			if f := &si.fields[k]; f.index != nil && strings.EqualFold(f.rule.name, name) {
				return k
			}
		}
	}
	return -1
}

// member is one member of a JSON object.
type member struct {
	name string
	raw  []byte
}

// objectMembers splits a JSON object into its members, in order. It
// takes valid JSON (the envelope decoder checked the request) and
// reports false for anything else.
func objectMembers(raw []byte) ([]member, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return nil, false
	}
	var out []member
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == '}' {
		return out, true
	}
	for i < len(raw) {
		end := skipValue(raw, i)
		if end < 0 || raw[i] != '"' {
			return nil, false
		}
		name, ok := jsonStringText(raw[i:end])
		if !ok {
			return nil, false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		vend := skipValue(raw, i)
		if vend < 0 {
			return nil, false
		}
		out = append(out, member{name: name, raw: raw[i:vend]})
		i = skipSpace(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
			continue
		}
		if i < len(raw) && raw[i] == '}' {
			return out, true
		}
		return nil, false
	}
	return nil, false
}

// arrayElems splits a JSON array into its elements.
func arrayElems(raw []byte) ([][]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '[' {
		return nil, false
	}
	out := [][]byte{}
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == ']' {
		return out, true
	}
	for i < len(raw) {
		end := skipValue(raw, i)
		if end < 0 {
			return nil, false
		}
		out = append(out, raw[i:end])
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
			continue
		}
		if i < len(raw) && raw[i] == ']' {
			return out, true
		}
		return nil, false
	}
	return nil, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := skipValue(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// jsonStringText is the text of the JSON string s (with its quotes).
func jsonStringText(s []byte) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s[1 : len(s)-1]), true
	}
	var out string
	err := json.Unmarshal(s, &out)
	return out, err == nil
}

func isNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// fieldCtx is what a field's decoding knows besides its raw value.
type fieldCtx struct {
	rules *decodeRules
	rule  *fieldRule
}

// paramValue is a value that decodes itself from its member's raw JSON.
// It reports a problem with a *valueError (worded by itself), a
// kindError (worded by the dialect), or any other error (worded as
// "<path>: <error>.").
type paramValue interface {
	decodeParam(raw []byte, c *fieldCtx) error
}

// optional is what the walker needs of an opt.
type optional interface {
	paramValue
	valueType() reflect.Type
	isSet() bool
	valuePtr() any
}

// ruleHook is implemented by params structs whose rules depend on other
// parameters (history.get's "filter" fields depend on "history"): it
// adjusts rule, a copy of the declared one, before its field is
// decoded. given tells whether a member is present and not null.
type ruleHook interface {
	adjustRule(rule *fieldRule, given func(name string) bool)
}

// pathError is a problem found in a params object: path is where
// (absolute, "/1/status", at the top; relative, "2/tag", inside a
// member's value), msg what. The entry points make it the API's error.
type pathError struct{ path, msg string }

func (e *pathError) Error() string { return e.path + ": " + e.msg }

func problem(path, msg string) *pathError { return &pathError{path, msg} }

// apiError makes a decoding problem the API's error.
func apiError(err error) error {
	var pe *pathError
	if errors.As(err, &pe) {
		return invalid(pe.path, pe.msg)
	}
	return err
}

// decodeElement decodes el, an object inside a member's value (an
// element of a list: sub is its path below the member, "2"), into v per
// r; a problem is a *valueError for the member's own decoder to report.
func decodeElement(el []byte, sub string, v any, r *decodeRules) error {
	ms, ok := objectMembers(el)
	if !ok {
		return &valueError{sub: sub, msg: r.kindText(reflect.Struct)}
	}
	if err := decodeMembers(ms, sub, v, r); err != nil {
		var pe *pathError
		if errors.As(err, &pe) {
			return &valueError{sub: pe.path, msg: pe.msg}
		}
		return err
	}
	return nil
}

// valueError is a problem with a value, worded: path is below the
// member ("" for the member itself, "2" for its second element).
type valueError struct {
	sub, msg string
}

func (e *valueError) Error() string { return e.msg }

// kindError is a value of the wrong JSON type, worded by the dialect;
// field is where below the member, in a nested object ("type",
// "conditions/value").
type kindError struct {
	kind  reflect.Kind
	field string
}

func (e kindError) Error() string { return "a " + e.kind.String() + " is expected" }

// decodeObject decodes the params object raw (members already known to
// be an object) into v, a pointer to a params struct, per r. path is
// the object's own path ("/", "/1").
func decodeObject(raw []byte, path string, v any, r *decodeRules) error {
	ms, ok := objectMembers(raw)
	if !ok {
		return problem(path, "an object is expected")
	}
	return decodeMembers(ms, path, v, r)
}

// decodeMembers decodes the members ms of a params object into v.
func decodeMembers(ms []member, path string, v any, r *decodeRules) error {
	rv := reflect.ValueOf(v).Elem()
	si := structInfoOf(rv.Type())
	if r.sorted {
		ms = patchOrder(ms)
	}
	unknown := func(name string) error {
		if r.dialect == dialectAlert {
			return problem(path, "unexpected parameter "+strconv.Quote(name))
		}
		return problem(path, `unexpected parameter "`+name+`"`)
	}
	field := make([]int, len(ms))
	for i, m := range ms {
		if r.dialect == dialectAlert {
			field[i] = si.lookupJSON(m.name)
		} else {
			field[i] = si.lookup(m.name, r.fold)
		}
		if field[i] < 0 && !r.lenient && !r.unknownLater {
			return unknown(m.name)
		}
	}
	// Defaults first: a member given overwrites its field's, and a null
	// one (when the field takes null as absent) leaves it.
	applyDefaults(rv, si, r)
	hook, _ := v.(ruleHook)
	given := func(name string) bool {
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i].name == name {
				return !isNull(ms[i].raw)
			}
		}
		return false
	}
	noRows := false
	decode := func(k int, raw []byte) (error, bool) {
		f := &si.fields[k]
		rule := &f.rule
		if hook != nil {
			cp := *rule
			hook.adjustRule(&cp, given)
			rule = &cp
		}
		fr := r
		if rule.strict && r.dialect == dialectLegacy {
			fr = &validatorRules
		}
		c := &fieldCtx{rules: fr, rule: rule}
		if err := decodeValue(raw, rv.FieldByIndex(f.index).Addr().Interface(), c); err != nil {
			if err == errNoRows {
				noRows = true
				return nil, false
			}
			name := rule.name
			if rule.errname != "" {
				name = rule.errname
			}
			return fr.word(path, name, f.embed, err), !f.selfDecoding && jsonSaved(err)
		}
		return nil, false
	}
	if r.ruleOrder {
		for k := range si.fields {
			if si.fields[k].index == nil {
				continue
			}
			// A repeated member keeps its last value, as PHP's
			// json_decode does.
			last := -1
			for i := range ms {
				if field[i] == k {
					last = i
				}
			}
			if last >= 0 {
				if err, _ := decode(k, ms[last].raw); err != nil {
					return err
				}
			}
		}
		if noRows {
			return errNoRows
		}
		return nil
	}
	// Request order. With jsonOrder, as encoding/json decoded for the
	// former decoders: an unknown member or a value of the wrong JSON
	// type for a plain Go type is kept while decoding goes on, the
	// first one kept is reported at the end, and any other problem
	// (found by a value that reads itself) is reported at once.
	var saved error
	for i, m := range ms {
		if field[i] < 0 {
			switch {
			case r.lenient:
			case !r.jsonOrder:
				return unknown(m.name)
			case saved == nil:
				saved = unknown(m.name)
			}
			continue
		}
		err, keep := decode(field[i], m.raw)
		switch {
		case err == nil:
		case !r.jsonOrder || !keep:
			return err
		case saved == nil:
			saved = err
		}
	}
	return saved
}

// jsonSaved reports whether err is one encoding/json keeps while it
// goes on decoding (decodeRules.jsonOrder): a type mismatch it found
// itself (its UnmarshalTypeError names a JSON kind, where the former
// types named the value they refused) or an unknown member of a nested
// object.
func jsonSaved(err error) bool {
	var ke *keptError
	var u *unknownMember
	if errors.As(err, &ke) || errors.As(err, &u) {
		return true
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		switch v := ute.Value; {
		case v == "string", v == "bool", v == "array", v == "object", v == "number", strings.HasPrefix(v, "number "):
			return true
		}
		return false
	}
	return strings.HasPrefix(err.Error(), "json: unknown field ")
}

// applyDefaults gives the fields not set their declared default.
func applyDefaults(rv reflect.Value, si *structInfo, r *decodeRules) {
	for k := range si.fields {
		f := &si.fields[k]
		if f.rule.deflt == "" || f.index == nil {
			continue
		}
		o, ok := rv.FieldByIndex(f.index).Addr().Interface().(optional)
		if !ok || o.isSet() {
			continue
		}
		c := &fieldCtx{rules: r, rule: &f.rule}
		if err := decodeAs(f.rule.kind, []byte(f.rule.deflt), o.valuePtr(), c); err != nil {
			panic("BUG: the default of " + f.rule.name + " does not decode: " + err.Error())
		}
	}
}

// decodeValue decodes raw into p, a pointer to a field.
func decodeValue(raw []byte, p any, c *fieldCtx) error {
	if pv, ok := p.(paramValue); ok {
		return pv.decodeParam(raw, c)
	}
	return decodeAs(c.rule.kind, raw, p, c)
}

// decodeJSON decodes raw into p with encoding/json, refusing unknown
// members of nested objects when the rules say so.
func decodeJSON(raw []byte, p any, r *decodeRules) error {
	if !r.strictNested {
		return json.Unmarshal(raw, p)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(p)
}

// word turns the error decoding member name of the object at path into
// the API's error; embed is the field's (fieldInfo).
func (r *decodeRules) word(path, name, embed string, err error) error {
	p := subpath(path, name)
	kindPath := p
	if embed != "" && r.dialect != dialectValidator {
		if r.dialect == dialectGet {
			kindPath = subpath(path, embed+name)
		} else {
			kindPath = subpath(path, strings.ReplaceAll(embed, ".", "/")+name)
		}
	}
	var ve *valueError
	var ke kindError
	var um *unknownMember
	var ute *json.UnmarshalTypeError
	switch {
	case errors.As(err, &ve):
		if ve.sub != "" {
			p += "/" + ve.sub
		}
		return problem(p, ve.msg)
	case errors.As(err, &ke):
		if ke.field != "" {
			if r.dialect == dialectGet {
				kindPath += "." + strings.ReplaceAll(ke.field, "/", ".")
			} else {
				kindPath += "/" + ke.field
			}
		}
		return problem(kindPath, r.kindText(ke.kind))
	case errors.As(err, &um):
		// An unknown member of a nested object: the object's own.
		return problem(path, um.Error())
	case errors.As(err, &ute):
		p = kindPath
		if ute.Field != "" {
			if r.dialect == dialectGet {
				p += "." + ute.Field
			} else {
				p += "/" + strings.ReplaceAll(ute.Field, ".", "/")
			}
		}
		return problem(p, r.kindText(ute.Type.Kind()))
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return problem(path, "unexpected parameter "+f)
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return problem(p, err.Error())
}

// kindText words a value of the wrong type.
func (r *decodeRules) kindText(k reflect.Kind) string {
	if r.dialect == dialectWrite {
		switch k {
		case reflect.String:
			return "a character string is expected"
		case reflect.Int, reflect.Int32, reflect.Int64:
			return "an integer is expected"
		case reflect.Uint64:
			return "a number is expected"
		case reflect.Slice:
			return "an array is expected"
		case reflect.Bool:
			return "a boolean is expected"
		}
		return "an object is expected"
	}
	return "a " + jsonKind(k.String()) + " is expected"
}

// decodeValidated decodes the params of a method checked as Zabbix's API
// input validator checks them: an object (or, as PHP sees a JSON list,
// one whose members are "0", "1", ...), its members refused when
// unknown, then read in the order of the struct's fields, with the
// validator's texts.
func decodeValidated(raw json.RawMessage, v any) error {
	ms, ok := validatorMembers(raw)
	if !ok {
		return invalid("/", "an array is expected")
	}
	return apiError(decodeMembers(withoutNoPermissions(ms), "/", v, &validatorRules))
}

// withoutNoPermissions drops "nopermissions", which Zabbix's API removes
// from every call's params before the method sees them (an internal
// flag; recorded from 6.0.14: accepted whatever its value, and
// ignored).
func withoutNoPermissions(ms []member) []member {
	return slices.DeleteFunc(ms, func(m member) bool { return m.name == "nopermissions" })
}

// decodeGetStrict decodes the params of a get method Zabbix 6.0 checks
// with its API input validator: an object, whose members no field
// declares are refused (the first in the request's order); an empty
// array stands for an empty object, as PHP decodes both alike.
func decodeGetStrict(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "[]" {
		rv := reflect.ValueOf(v).Elem()
		applyDefaults(rv, structInfoOf(rv.Type()), &strictGetRules)
		return nil
	}
	ms, ok := objectMembers(raw)
	if !ok {
		return errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	return apiError(decodeMembers(withoutNoPermissions(ms), "/", v, &strictGetRules))
}

// decodeLenient decodes the params of a method that ignores members it
// does not know (user.login, user.checkAuthentication): an object.
func decodeLenient(raw json.RawMessage, v any) error {
	if jsonKindOf(raw) != 'o' {
		return invalid("/", "a object is expected")
	}
	return apiError(decodeObject(raw, "/", v, &lenientRules))
}

// decodeStrictObject decodes params that must be an object (an array,
// even an empty one, is refused), as decodeGet decodes a get's
// (preprocessing.test).
func decodeStrictObject(raw json.RawMessage, v any) error {
	if jsonKindOf(raw) != 'o' {
		return invalid("/", "an object is expected")
	}
	return apiError(decodeObject(raw, "/", v, &strictGetRules))
}

// patchOrder is the members of an update object as the former merge of
// the current object and the patch read them: a repeated member's last
// value only, in the order of the names.
func patchOrder(ms []member) []member {
	last := map[string]int{}
	for i, m := range ms {
		last[m.name] = i
	}
	out := make([]member, 0, len(last))
	for i, m := range ms {
		if last[m.name] == i {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b member) int { return strings.Compare(a.name, b.name) })
	return out
}
