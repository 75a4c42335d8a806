package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// getParams are the parameters every Zabbix *.get method shares; each
// get method's params struct embeds them. The legacy gets (decodeGet)
// read them as Zabbix 6.0's do (params_legacy.go), the strict ones
// (decodeGetStrict) refuse what they do not know.
type getParams struct {
	Output      opt[[]string] `json:"output" as:"output"`
	Filter      opt[fieldMap] `json:"filter"`
	Search      opt[fieldMap] `json:"search"`
	SearchByAny opt[anyFlag]  `json:"searchByAny"`
	StartSearch opt[bool]     `json:"startSearch"`
	// ExcludeSearch is accepted and, as by Zabbix 6.0's gets, ignored:
	// its search never reads it (recorded from 6.0.14).
	ExcludeSearch   opt[bool]       `json:"excludeSearch"`
	SearchWildcards opt[bool]       `json:"searchWildcardsEnabled"`
	SortField       opt[[]string]   `json:"sortfield"`
	SortOrder       opt[sortOrders] `json:"sortorder"`
	Limit           opt[int64]      `json:"limit" as:"limit"`
	CountOutput     opt[bool]       `json:"countOutput"`
	PreserveKeys    opt[bool]       `json:"preservekeys"`
	// Editable keeps only objects the caller may change (read-write on
	// the host groups concerned); for a super admin that is all.
	Editable opt[bool] `json:"editable"`
	// LimitSelects bounds the length of each selectX list.
	LimitSelects opt[int64] `json:"limitSelects" as:"limit"`

	// noRows: a parameter's value selects nothing (errNoRows).
	noRows bool
}

func (p *getParams) markNoRows() { p.noRows = true }

// anyFlag is "searchByAny", which Zabbix 6.0 reads twice: search joins
// its conditions with OR when it is true as PHP sees truth, filter when
// it is anything but null and false ("0" included).
type anyFlag struct{ truth, notFalse bool }

func (a *anyFlag) decodeParam(raw []byte, c *fieldCtx) error {
	raw = bytes.TrimSpace(raw)
	if c.rules.dialect == dialectValidator {
		// A boolean, as the validator checks one: true or false only.
		if b := string(raw); b == "true" || b == "false" {
			*a = anyFlag{truth: b == "true", notFalse: b == "true"}
			return nil
		}
		return &valueError{msg: "a boolean is expected"}
	}
	if c.rules.dialect != dialectLegacy {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return kindError{kind: reflect.Bool}
		}
		*a = anyFlag{truth: b, notFalse: b}
		return nil
	}
	*a = anyFlag{truth: phpTruth(raw), notFalse: string(raw) != "false" && string(raw) != "null"}
	return nil
}

// schema is what Zabbix 6.0's table of an object family says of its
// fields, which filter and search read: 'n' a number (filter compares
// numbers; search skips it), 'c' a character field, 't' a text field
// (filter skips it, search reads it). A field the schema does not have
// is ignored by both. A nil types map takes every field the objects
// have as a character field.
type schema struct {
	id    string
	types map[string]byte
	// rows, when set, gives the rows filter and search test an object
	// by (host.get: one per interface); the object passes when one does.
	rows func(o object) []object
	// sortValue, when set, gives the value of a sort field that is not
	// one of the object's (trigger.get's hostname); ok false for the
	// object's own fields.
	sortValue func(o object, f string) (v string, ok bool)
	// named: an output list gives the fields it names and not the ID
	// too, as the gets 6.0 checks with its validator answer (recorded
	// from 6.0.14: token.get and valuemap.get); preservekeys still keys
	// the objects by their ID.
	named bool
}

// fieldTypes turns "name:n other:c ..." into a schema's types.
func fieldTypes(s string) map[string]byte {
	m := map[string]byte{}
	for _, f := range strings.Fields(s) {
		name, t, _ := strings.Cut(f, ":")
		m[name] = t[0]
	}
	return m
}

// typeOf is field f's type, 0 when the schema does not have it.
func (s *schema) typeOf(f string, objs []object) byte {
	if s.types != nil {
		return s.types[f]
	}
	for _, o := range objs {
		if _, ok := o[f].(string); ok {
			return 'c'
		}
	}
	return 0
}

// searchMatch reports whether value v matches pattern w as Zabbix's
// search does: case-insensitive, anywhere in v (at its start with
// startSearch); with searchWildcardsEnabled w matches the whole of v and
// "*" stands for any run of characters.
func (p *getParams) searchMatch(v, w string) bool {
	lv, lw := strings.ToUpper(v), strings.ToUpper(w)
	switch {
	case p.SearchWildcards.Value:
		return globMatch(lw, lv)
	case p.StartSearch.Value:
		return strings.HasPrefix(lv, lw)
	}
	return strings.Contains(lv, lw)
}

// globMatch matches s against pattern, in which "*" matches any run of
// bytes (also none) and every other byte itself.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return s == pattern
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// limitSelect cuts a selectX list to limitSelects.
func (p *getParams) limitSelect(l []object) []object {
	if p.LimitSelects.Given() && p.LimitSelects.Value >= 0 && int(p.LimitSelects.Value) < len(l) {
		return l[:p.LimitSelects.Value]
	}
	return l
}

// object is one API object: field name to string value (Zabbix returns
// every scalar as a string), plus nested selections (any other type).
// A field whose value is not a string is wrapped in field, so that
// output shapes it as the field it is.
type object map[string]any

// field is a field of an object whose value is not a string (a
// problem's "urls", an item's "parameters"): output lists it like any
// field, where other non-string values are selects.
type field struct{ v any }

// filterCond is one field of "filter": the values it may take (numbers
// for a numeric field).
type filterCond struct {
	name    string
	numeric bool
	texts   []string
	nums    []int64
}

// filterConds reads "filter" as Zabbix 6.0's dbFilter does: a field the
// schema does not have, a text field and an empty value (null, "", [])
// are skipped; a numeric field keeps the values that are integers (as
// numbers or strings), a character field every value as text.
func (p *getParams) filterConds(sch *schema, objs []object) []filterCond {
	names := make([]string, 0, len(p.Filter.Value))
	for f := range p.Filter.Value {
		names = append(names, f)
	}
	sort.Strings(names)
	var out []filterCond
	for _, f := range names {
		raw := bytes.TrimSpace(p.Filter.Value[f])
		t := sch.typeOf(f, objs)
		if t == 0 || t == 't' || !phpSet(raw) {
			continue
		}
		c := filterCond{name: f, numeric: t == 'n'}
		for _, e := range listValues(raw) {
			if c.numeric {
				if k := jsonKindOf(e); k == 'i' || k == 's' {
					if n, ok := legacyInt(e); ok && (k == 'i' || isInteger(unquote(e))) {
						c.nums = append(c.nums, n)
					}
				}
				continue
			}
			s, _ := legacyText(e)
			c.texts = append(c.texts, s)
		}
		out = append(out, c)
	}
	return out
}

// phpSet reports whether a filter value is not empty as zbx_empty sees
// it (null, "" and an empty list or object are).
func phpSet(raw []byte) bool {
	switch jsonKindOf(raw) {
	case 'n':
		return false
	case 's':
		s, _ := strValue(raw)
		return s != ""
	case 'a', 'o':
		return len(listValues(raw)) > 0
	}
	return true
}

// match reports whether value v (an object's field, "" when absent)
// passes the condition.
func (c *filterCond) match(v []byte) bool {
	if c.numeric {
		n, ok := parseIntBytes(v)
		return ok && slices.Contains(c.nums, n)
	}
	for _, t := range c.texts {
		if string(v) == t {
			return true
		}
	}
	return false
}

// parseIntBytes parses a decimal integer without allocating.
func parseIntBytes(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		n, err := strconv.ParseInt(string(b), 10, 64)
		if neg {
			n = -n
		}
		return n, err == nil && len(b) > 0
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// searchCond is one field of "search": its patterns.
type searchCond struct {
	name     string
	patterns []string
}

// searchConds reads "search" as Zabbix 6.0's does: a field the schema
// does not have or that is numeric is skipped, and so are empty
// patterns and a field left with none.
func (p *getParams) searchConds(sch *schema, objs []object) []searchCond {
	names := make([]string, 0, len(p.Search.Value))
	for f := range p.Search.Value {
		names = append(names, f)
	}
	sort.Strings(names)
	var out []searchCond
	for _, f := range names {
		raw := bytes.TrimSpace(p.Search.Value[f])
		if t := sch.typeOf(f, objs); t == 0 || t == 'n' || jsonKindOf(raw) == 'n' {
			continue
		}
		c := searchCond{name: f}
		for _, e := range listValues(raw) {
			if s, ok := legacyText(e); ok && s != "" {
				c.patterns = append(c.patterns, s)
			}
		}
		if len(c.patterns) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// searchHit reports whether an object passes the search conditions: by
// default every pattern of every field must match, with searchByAny one
// pattern of one field is enough. match tells whether the object's
// field of c matches pattern w.
func (p *getParams) searchHit(ss []searchCond, match func(c *searchCond, w string) bool) bool {
	byAny := p.SearchByAny.Value.truth
	for i := range ss {
		for _, w := range ss[i].patterns {
			if match(&ss[i], w) == byAny {
				return byAny
			}
		}
	}
	return !byAny
}

// filterHit reports whether an object passes the filter conditions:
// all of them, or one when searchByAny is given and not false. match
// tells whether the object passes condition c.
func (p *getParams) filterHit(fs []filterCond, match func(c *filterCond) bool) bool {
	byAny := p.SearchByAny.Value.notFalse && len(fs) > 1
	for i := range fs {
		if match(&fs[i]) == byAny {
			return byAny
		}
	}
	return !byAny
}

// errSortField is Zabbix's error for a sortfield a method does not sort
// by.
func errSortField(f string) error {
	return errApp("Sorting by field %q not allowed.", f)
}

// sortFields returns the distinct sort fields, each with its index in
// the request (for its sortorder), or Zabbix's error for the first one
// the method does not sort by.
func (p *getParams) sortFields(sortable []string) ([]string, []int, error) {
	var fields []string
	var idx []int
	for i, f := range p.SortField.Value {
		if slices.Contains(fields, f) {
			continue
		}
		if f == "" && len(p.SortField.Value) == 1 {
			return nil, nil, nil // "": no sort
		}
		if !slices.Contains(sortable, f) {
			return nil, nil, errSortField(f)
		}
		fields, idx = append(fields, f), append(idx, i)
	}
	return fields, idx, nil
}

// lessValues compares two field values as the database orders them:
// numbers by value, other text by its bytes.
func lessValues(a, b string, numeric bool) int {
	if numeric {
		x, err1 := strconv.ParseInt(a, 10, 64)
		y, err2 := strconv.ParseInt(b, 10, 64)
		if err1 == nil && err2 == nil {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	return strings.Compare(a, b)
}

// outputFields is "output" as a field set: all for "extend" (or when
// absent), else the fields named (an empty set for the ID only).
func (p *getParams) outputFields() output {
	if !p.Output.Set {
		return output{all: true}
	}
	l := p.Output.Value
	if len(l) == 1 && l[0] == "extend" {
		return output{all: true}
	}
	o := output{fields: map[string]bool{}}
	for _, f := range l {
		o.fields[f] = true
	}
	return o
}

// apply filters, searches, sorts, limits and shapes objs per p. idField
// names the object's ID (returned with any output list, the key of
// preservekeys); sortable lists the fields sortfield may name. Filter
// and search take every field the objects have as a character field
// (applySchema has the types).
func (p *getParams) apply(objs []object, idField string, sortable ...string) (any, error) {
	return p.applySchema(objs, &schema{id: idField}, sortable...)
}

// applySchema is apply with the field types of the object family.
func (p *getParams) applySchema(objs []object, sch *schema, sortable ...string) (any, error) {
	if p.noRows {
		objs = nil
	}
	str := func(o object, f string) string {
		switch v := o[f].(type) {
		case string:
			return v
		case field:
			s, _ := v.v.(string)
			return s
		}
		return ""
	}
	rows := func(o object) []object {
		if sch.rows != nil {
			return sch.rows(o)
		}
		return []object{o}
	}
	if fs := p.filterConds(sch, objs); len(fs) > 0 {
		kept := objs[:0]
		for _, o := range objs {
			if slices.ContainsFunc(rows(o), func(r object) bool {
				return p.filterHit(fs, func(c *filterCond) bool { return c.match([]byte(str(r, c.name))) })
			}) {
				kept = append(kept, o)
			}
		}
		objs = kept
	}
	if ss := p.searchConds(sch, objs); len(ss) > 0 {
		kept := objs[:0]
		for _, o := range objs {
			if slices.ContainsFunc(rows(o), func(r object) bool {
				return p.searchHit(ss, func(c *searchCond, w string) bool { return p.searchMatch(str(r, c.name), w) })
			}) {
				kept = append(kept, o)
			}
		}
		objs = kept
	}
	fields, idx, err := p.sortFields(sortable)
	if err != nil {
		return nil, err
	}
	if len(fields) > 0 {
		key := func(o object, f string) string {
			if sch.sortValue != nil {
				if v, ok := sch.sortValue(o, f); ok {
					return v
				}
			}
			return str(o, f)
		}
		sort.SliceStable(objs, func(i, j int) bool {
			for k, f := range fields {
				c := lessValues(key(objs[i], f), key(objs[j], f), sch.types == nil || sch.types[f] == 'n')
				if c == 0 {
					continue
				}
				return c < 0 != p.SortOrder.Value.desc(idx[k])
			}
			return false
		})
	}
	if p.CountOutput.Value {
		return strconv.Itoa(len(objs)), nil
	}
	if p.Limit.Given() && p.Limit.Value >= 0 && int(p.Limit.Value) < len(objs) {
		objs = objs[:p.Limit.Value]
	}
	var keys []string
	if p.PreserveKeys.Value {
		keys = make([]string, len(objs))
		for i, o := range objs {
			keys[i] = str(o, sch.id)
		}
	}
	if out := p.outputFields(); out.all {
		for _, o := range objs {
			dropExtensions(o)
		}
	} else {
		for i, o := range objs {
			shaped := object{}
			for k, v := range o {
				switch v.(type) {
				case string, field:
					if out.has(k) || k == sch.id && !sch.named {
						shaped[k] = v
					}
				default:
					shaped[k] = v // selectX results are always returned
				}
			}
			objs[i] = shaped
		}
	}
	if p.PreserveKeys.Value {
		m := make(map[string]object, len(objs))
		for i, o := range objs {
			m[keys[i]] = o
		}
		return m, nil
	}
	if objs == nil {
		objs = []object{}
	}
	return objs, nil
}

// idsPass reports whether an object with ID v passes an IDs parameter:
// not given, or naming v (a given empty list matches nothing).
func idsPass(o opt[ids], v uint64) bool {
	return !o.Given() || containsID(o.Value, v)
}

// idsAny reports whether any of have passes an IDs parameter.
func idsAny(o opt[ids], have []uint64) bool {
	return !o.Given() || slices.ContainsFunc(have, func(v uint64) bool { return containsID(o.Value, v) })
}

func id(v uint64) string { return strconv.FormatUint(v, 10) }

func status(enabled bool) string {
	if enabled {
		return "0"
	}
	return "1"
}

func nonNil(l []object) []object {
	if l == nil {
		return []object{}
	}
	return l
}
