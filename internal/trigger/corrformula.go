package trigger

import (
	"fmt"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// A correlation's filter as a tree over its conditions: built from the
// evaluation type (and/or, and, or) or parsed from the custom formula
// ("A and (B or not C)"), as Zabbix 6.0's server evaluates it.

type corrOp uint8

const (
	corrLeaf corrOp = iota
	corrAnd
	corrOr
	corrNot
)

type corrNode struct {
	op   corrOp
	cond int // corrLeaf: the index of the condition
	kids []*corrNode
}

// corrTree builds the filter of c as a tree over indexes into
// c.Conditions.
func corrTree(c *catalog.Correlation) (*corrNode, error) {
	if len(c.Conditions) == 0 {
		return nil, fmt.Errorf("correlation %d has no condition", c.ID)
	}
	leaf := func(i int) *corrNode { return &corrNode{op: corrLeaf, cond: i} }
	switch c.EvalType {
	case 1, 2:
		n := &corrNode{op: corrAnd}
		if c.EvalType == 2 {
			n.op = corrOr
		}
		for i := range c.Conditions {
			n.kids = append(n.kids, leaf(i))
		}
		return n, nil
	case 3:
		ids := map[string]int{}
		for i, x := range c.Conditions {
			ids[x.FormulaID] = i
		}
		p := &formulaTreeParser{s: c.Formula, ids: ids}
		n := p.or()
		p.space()
		if p.err == nil && p.pos < len(p.s) {
			p.fail("unexpected %q", p.s[p.pos:])
		}
		if p.err != nil {
			return nil, fmt.Errorf("correlation %d: formula %q: %w", c.ID, c.Formula, p.err)
		}
		return n, nil
	}
	// And/or: conditions of one type are alternatives, the types all
	// needed (Zabbix 6.0's rule, as for actions).
	n := &corrNode{op: corrAnd}
	byType := map[int]*corrNode{}
	for i, x := range c.Conditions {
		g := byType[x.Type]
		if g == nil {
			g = &corrNode{op: corrOr}
			byType[x.Type] = g
			n.kids = append(n.kids, g)
		}
		g.kids = append(g.kids, leaf(i))
	}
	return n, nil
}

// formulaTreeParser parses a custom formula: or-expressions of
// and-expressions of "not" factors, parentheses and formula IDs.
type formulaTreeParser struct {
	s   string
	pos int
	ids map[string]int
	err error
}

func (p *formulaTreeParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
}

func (p *formulaTreeParser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\r' || p.s[p.pos] == '\n') {
		p.pos++
	}
}

// word consumes the keyword w if it comes next as a whole word.
func (p *formulaTreeParser) word(w string) bool {
	p.space()
	if !strings.HasPrefix(p.s[p.pos:], w) {
		return false
	}
	if end := p.pos + len(w); end < len(p.s) && isWordByte(p.s[end]) {
		return false
	}
	p.pos += len(w)
	return true
}

func isWordByte(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

func (p *formulaTreeParser) or() *corrNode {
	n := p.and()
	for p.err == nil && p.word("or") {
		r := p.and()
		n = &corrNode{op: corrOr, kids: []*corrNode{n, r}}
	}
	return n
}

func (p *formulaTreeParser) and() *corrNode {
	n := p.unary()
	for p.err == nil && p.word("and") {
		r := p.unary()
		n = &corrNode{op: corrAnd, kids: []*corrNode{n, r}}
	}
	return n
}

func (p *formulaTreeParser) unary() *corrNode {
	if p.err != nil {
		return nil
	}
	if p.word("not") {
		return &corrNode{op: corrNot, kids: []*corrNode{p.unary()}}
	}
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '(' {
		p.pos++
		n := p.or()
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ')' {
			p.fail("missing )")
			return nil
		}
		p.pos++
		return n
	}
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= 'A' && p.s[p.pos] <= 'Z' {
		p.pos++
	}
	id := p.s[start:p.pos]
	i, ok := p.ids[id]
	if !ok {
		p.fail("no condition %q", id)
		return nil
	}
	return &corrNode{op: corrLeaf, cond: i}
}

// Three-valued results of matching a rule against the new event alone:
// the conditions on old events are unknown until old problems are
// looked at (Zabbix's "may match").
type tri uint8

const (
	triFalse tri = iota
	triTrue
	triUnknown
)

// eval3 evaluates n with leaf giving each condition's value: "and" is
// false if any part is, else unknown if any is; "or" the other way
// round; "not" keeps unknown.
func (n *corrNode) eval3(leaf func(int) tri) tri {
	switch n.op {
	case corrLeaf:
		return leaf(n.cond)
	case corrNot:
		switch v := n.kids[0].eval3(leaf); v {
		case triTrue:
			return triFalse
		case triFalse:
			return triTrue
		default:
			return v
		}
	}
	and := n.op == corrAnd
	unknown := false
	for _, k := range n.kids {
		switch k.eval3(leaf) {
		case triUnknown:
			unknown = true
		case triTrue:
			if !and {
				return triTrue
			}
		case triFalse:
			if and {
				return triFalse
			}
		}
	}
	switch {
	case unknown:
		return triUnknown
	case and:
		return triTrue
	}
	return triFalse
}

// idSet is a set of open problem IDs: ids (ascending, each once), or,
// when neg, every open problem except ids.
type idSet struct {
	neg bool
	ids []uint64
}

// evalSet evaluates n over sets of old problems: the problems for which
// the filter is true.
func (n *corrNode) evalSet(leaf func(int) idSet) idSet {
	switch n.op {
	case corrLeaf:
		return leaf(n.cond)
	case corrNot:
		v := n.kids[0].evalSet(leaf)
		v.neg = !v.neg
		return v
	}
	acc := n.kids[0].evalSet(leaf)
	for _, k := range n.kids[1:] {
		v := k.evalSet(leaf)
		if n.op == corrAnd {
			acc = setAnd(acc, v)
		} else {
			acc = setOr(acc, v)
		}
	}
	return acc
}

func setAnd(a, b idSet) idSet {
	switch {
	case !a.neg && !b.neg:
		return idSet{ids: intersect(a.ids, b.ids)}
	case !a.neg:
		return idSet{ids: minus(a.ids, b.ids)}
	case !b.neg:
		return idSet{ids: minus(b.ids, a.ids)}
	}
	return idSet{neg: true, ids: union(a.ids, b.ids)}
}

func setOr(a, b idSet) idSet {
	switch {
	case !a.neg && !b.neg:
		return idSet{ids: union(a.ids, b.ids)}
	case !a.neg:
		return idSet{neg: true, ids: minus(b.ids, a.ids)}
	case !b.neg:
		return idSet{neg: true, ids: minus(a.ids, b.ids)}
	}
	return idSet{neg: true, ids: intersect(a.ids, b.ids)}
}

// intersect, union and minus merge ascending slices into a new one.
func intersect(a, b []uint64) []uint64 {
	var out []uint64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

func union(a, b []uint64) []uint64 {
	out := make([]uint64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

func minus(a, b []uint64) []uint64 {
	var out []uint64
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			continue
		}
		out = append(out, x)
	}
	return out
}
