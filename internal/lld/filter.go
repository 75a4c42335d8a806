package lld

import (
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// matcher tests a value against a filter condition's expression: a
// regular expression, or a global one named "@name".
type matcher struct {
	snap  *catalog.Snapshot
	cache map[string]*regexp.Regexp
}

func (m *matcher) match(expr, v string) bool {
	if name, ok := strings.CutPrefix(expr, "@"); ok {
		if g := m.snap.RegexpByName(name); g != nil {
			return g.Match(v)
		}
		return false
	}
	re, ok := m.cache[expr]
	if !ok {
		re = compiled(expr)
		if m.cache == nil {
			m.cache = map[string]*regexp.Regexp{}
		}
		m.cache[expr] = re
	}
	return re != nil && re.MatchString(v)
}

// regexps caches compiled filter expressions across results (the same
// few expressions of the same template's rules on every host), up to
// maxRegexps of them; beyond that an expression is compiled per result.
var (
	regexps   sync.Map // string → *regexp.Regexp (nil: invalid)
	nRegexps  atomic.Int64
	maxRegexp = int64(4096)
)

// compiled returns expr compiled, nil if it is invalid (an invalid
// expression matches nothing).
func compiled(expr string) *regexp.Regexp {
	if v, ok := regexps.Load(expr); ok {
		return v.(*regexp.Regexp)
	}
	re, _ := regexp.Compile(expr)
	if nRegexps.Load() < maxRegexp {
		if _, loaded := regexps.LoadOrStore(expr, re); !loaded {
			nRegexps.Add(1)
		}
	}
	return re
}

// expand resolves user macros in a condition's value.
type expander func(string) string

// pass reports whether row passes filter f.
func (m *matcher) pass(f *catalog.LLDFilter, row *Row, exp expander) bool {
	if len(f.Conditions) == 0 {
		return true
	}
	res := make(map[string]bool, len(f.Conditions))
	for i := range f.Conditions {
		c := &f.Conditions[i]
		v, ok := row.Macros[c.Macro]
		var r bool
		switch c.Operator {
		case catalog.OpExists:
			r = ok
		case catalog.OpNotExists:
			r = !ok
		case catalog.OpNotMatches:
			r = ok && !m.match(exp(c.Value), v)
		default:
			r = ok && m.match(exp(c.Value), v)
		}
		res[c.FormulaID] = r
	}
	switch f.EvalType {
	case catalog.EvalAnd:
		for _, c := range f.Conditions {
			if !res[c.FormulaID] {
				return false
			}
		}
		return true
	case catalog.EvalOr:
		for _, c := range f.Conditions {
			if res[c.FormulaID] {
				return true
			}
		}
		return false
	case catalog.EvalCustom:
		return evalFormula(f.Formula, res)
	}
	// And/or: conditions on the same macro or-ed, the groups and-ed.
	groups := map[string]bool{}
	for _, c := range f.Conditions {
		groups[c.Macro] = groups[c.Macro] || res[c.FormulaID]
	}
	for _, ok := range groups {
		if !ok {
			return false
		}
	}
	return true
}

// evalFormula evaluates a custom filter formula ("A and (B or not C)")
// over the conditions' results; a malformed formula is false.
func evalFormula(s string, res map[string]bool) bool {
	toks := strings.Fields(strings.NewReplacer("(", " ( ", ")", " ) ").Replace(s))
	p := &formula{toks: toks, res: res, ok: true}
	v := p.or()
	return v && p.ok && p.pos == len(toks)
}

type formula struct {
	toks []string
	pos  int
	res  map[string]bool
	ok   bool
}

func (p *formula) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *formula) or() bool {
	v := p.and()
	for p.peek() == "or" {
		p.pos++
		w := p.and()
		v = v || w
	}
	return v
}

func (p *formula) and() bool {
	v := p.unary()
	for p.peek() == "and" {
		p.pos++
		w := p.unary()
		v = v && w
	}
	return v
}

func (p *formula) unary() bool {
	switch t := p.peek(); t {
	case "not":
		p.pos++
		return !p.unary()
	case "(":
		p.pos++
		v := p.or()
		if p.peek() != ")" {
			p.ok = false
			return false
		}
		p.pos++
		return v
	case "":
		p.ok = false
		return false
	default:
		p.pos++
		v, known := p.res[t]
		if !known {
			p.ok = false
		}
		return v
	}
}
