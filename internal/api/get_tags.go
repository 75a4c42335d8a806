package api

import (
	"bytes"
	"strings"
)

// Tag filters: the "tags" and "evaltype" parameters of host.get,
// item.get, trigger.get, problem.get and event.get, which Zabbix 6.0
// applies the same way to each object's tags (recorded from 6.0.14,
// get_tags_test.go has its answers):
//
//   - a condition is a tag name, a value ("" when absent) and an operator
//     (0 when absent): 0 contains the value (case-insensitive), 1 equals
//     it, 2 does not contain it, 3 does not equal it, 4 the tag exists,
//     5 it does not; 0 with "" is 4, 2 with "" is 5;
//   - the conditions on one tag name are gathered: those asking for a
//     tag (0, 1, 4) are or-ed into "some tag of that name matches one
//     of them", those asking for its absence (2, 3, 5) into "no tag of
//     that name matches any of them"; 4 makes the first plain "the tag
//     exists" and drops the second, 5 the reverse; when both remain,
//     either may hold;
//   - the names are and-ed (evaltype 0, and/or) or or-ed (evaltype 2);
//   - an operator outside 0-5 adds nothing, and a filter left with no
//     condition at all matches nothing; "tags" null or empty filters
//     nothing.

// tagCond is one condition of "tags".
type tagCond struct {
	tag, value string
	op         int64
}

// tagConds is a "tags" parameter as the legacy gets read it: a list of
// objects (an object's values count as a list), each member read as PHP
// reads it; anything else is no filter.
type tagConds []tagCond

func (t *tagConds) decodeParam(raw []byte, _ *fieldCtx) error {
	*t = nil
	raw = bytes.TrimSpace(raw)
	if k := jsonKindOf(raw); k != 'a' && k != 'o' {
		return nil
	}
	for _, e := range listValues(raw) {
		c := tagCond{}
		if ms, ok := validatorMembers(e); ok {
			for _, m := range ms {
				switch m.name {
				case "tag":
					c.tag, _ = legacyText(m.raw)
				case "value":
					c.value, _ = legacyText(m.raw)
				case "operator":
					if n, ok := legacyInt(m.raw); ok {
						c.op = n
					} else if !isNull(m.raw) {
						c.op = -1
					}
				}
			}
		}
		*t = append(*t, c)
	}
	return nil
}

// tagQuery is a compiled tag filter.
type tagQuery struct {
	or    bool
	names []tagName
	none  bool // no condition at all: nothing matches
}

// tagName is the conditions on one tag name.
type tagName struct {
	name string
	// has, when set, asks for a tag of the name matching one of
	// hasValues (any value when hasAny); lacks asks for no tag of the
	// name matching one of lacksValues (none at all when lacksAny).
	has, lacks           bool
	hasAny, lacksAny     bool
	hasValues, lackValue []tagValue
}

// tagValue is one value condition: contains (case-insensitive) or
// equals.
type tagValue struct {
	v     string
	equal bool
}

func (v tagValue) match(s string) bool {
	if v.equal {
		return s == v.v
	}
	return strings.Contains(strings.ToUpper(s), strings.ToUpper(v.v))
}

// compileTags compiles conds with evaltype; nil when conds filter
// nothing.
func compileTags(conds tagConds, evaltype int64) *tagQuery {
	if len(conds) == 0 {
		return nil
	}
	q := &tagQuery{or: evaltype == 2}
	idx := map[string]int{}
	for _, c := range conds {
		op := c.op
		switch {
		case op == 2 && c.value == "":
			op = 5
		case op == 0 && c.value == "":
			op = 4
		}
		k, ok := idx[c.tag]
		if !ok {
			k = len(q.names)
			idx[c.tag] = k
			q.names = append(q.names, tagName{name: c.tag})
		}
		n := &q.names[k]
		switch op {
		case 0, 1, 4:
			if n.hasAny {
				continue
			}
			n.has = true
			if op == 4 {
				n.hasAny, n.hasValues = true, nil
			} else {
				n.hasValues = append(n.hasValues, tagValue{v: c.value, equal: op == 1})
			}
		case 2, 3, 5:
			if n.lacksAny {
				continue
			}
			n.lacks = true
			if op == 5 {
				n.lacksAny, n.lackValue = true, nil
			} else {
				n.lackValue = append(n.lackValue, tagValue{v: c.value, equal: op == 3})
			}
		}
	}
	kept := q.names[:0]
	for _, n := range q.names {
		switch {
		case n.hasAny:
			n.lacks = false
		case n.lacksAny:
			n.has = false
		}
		if n.has || n.lacks {
			kept = append(kept, n)
		}
	}
	q.names = kept
	q.none = len(kept) == 0
	return q
}

// match reports whether an object with tags passes the filter; tag and
// value read the i-th of n tags.
func (q *tagQuery) match(n int, tag func(i int) (string, string)) bool {
	if q == nil {
		return true
	}
	if q.none {
		return false
	}
	for _, c := range q.names {
		if c.matches(n, tag) == q.or {
			return q.or
		}
	}
	return !q.or
}

func (c *tagName) matches(n int, tag func(i int) (string, string)) bool {
	found := func(any bool, values []tagValue) bool {
		for i := 0; i < n; i++ {
			name, v := tag(i)
			if name != c.name {
				continue
			}
			if any {
				return true
			}
			for _, want := range values {
				if want.match(v) {
					return true
				}
			}
		}
		return false
	}
	if c.has && found(c.hasAny, c.hasValues) {
		return true
	}
	return c.lacks && !found(c.lacksAny, c.lackValue)
}
