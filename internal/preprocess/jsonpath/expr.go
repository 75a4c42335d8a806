package jsonpath

import (
	"regexp"
	"strconv"
	"strings"
)

// val is the value of a filter operand or expression.
type val struct {
	kind  kind
	node  *node // a path operand's match; nil for literals and results
	str   string
	num   float64
	b     bool
	found bool // false: a path that matched nothing
}

type expr interface {
	eval(cur, root *node) val
}

type (
	lit    struct{ v val }
	pathOp struct {
		segs []segment
		root bool // $-absolute; else @-relative
	}
	notOp  struct{ e expr }
	binary struct {
		op   string
		l, r expr
		re   *regexp.Regexp // =~ with a literal pattern
	}
)

func (l lit) eval(*node, *node) val { return l.v }

func (p pathOp) eval(cur, root *node) val {
	start := cur
	if p.root {
		start = root
	}
	nodes := eval(p.segs, start, root)
	if len(nodes) == 0 {
		return val{}
	}
	n := nodes[0]
	v := val{kind: n.kind, node: n, found: true, str: n.str, num: n.num, b: n.b}
	if n.kind == kArray || n.kind == kObject {
		v.str = n.raw
	}
	return v
}

func (n notOp) eval(cur, root *node) val {
	return boolVal(!truthy(n.e.eval(cur, root)))
}

func boolVal(b bool) val { return val{kind: kBool, b: b, found: true} }

// truthy is a filter's verdict: a path operand alone tests that the path
// exists (and is not false), as in Zabbix.
func truthy(v val) bool {
	if !v.found {
		return false
	}
	return v.kind != kBool || v.b
}

func (b binary) eval(cur, root *node) val {
	switch b.op {
	case "&&":
		return boolVal(truthy(b.l.eval(cur, root)) && truthy(b.r.eval(cur, root)))
	case "||":
		return boolVal(truthy(b.l.eval(cur, root)) || truthy(b.r.eval(cur, root)))
	}
	l, r := b.l.eval(cur, root), b.r.eval(cur, root)
	if !l.found || !r.found {
		return boolVal(b.op == "!=" && l.found != r.found)
	}
	if b.op == "=~" {
		if l.kind != kString || r.kind != kString {
			return boolVal(false)
		}
		re := b.re
		if re == nil {
			var err error
			if re, err = regexp.Compile(r.str); err != nil {
				return boolVal(false)
			}
		}
		return boolVal(re.MatchString(l.str))
	}
	var c int
	switch {
	case l.kind == kNumber && r.kind == kNumber:
		c = cmpFloat(l.num, r.num)
	case l.kind == kString && r.kind == kString:
		c = strings.Compare(l.str, r.str)
	case l.kind == r.kind && (l.kind == kBool || l.kind == kNull):
		if l.b != r.b {
			c = 1
		}
		if b.op != "==" && b.op != "!=" {
			return boolVal(false)
		}
	case l.kind == r.kind && (l.kind == kArray || l.kind == kObject):
		c = strings.Compare(l.str, r.str)
		if b.op != "==" && b.op != "!=" {
			return boolVal(false)
		}
	default:
		// Different types are never equal and never ordered.
		return boolVal(b.op == "!=")
	}
	switch b.op {
	case "==":
		return boolVal(c == 0)
	case "!=":
		return boolVal(c != 0)
	case "<":
		return boolVal(c < 0)
	case "<=":
		return boolVal(c <= 0)
	case ">":
		return boolVal(c > 0)
	}
	return boolVal(c >= 0) // ">="
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// maxExprDepth bounds the nesting of parentheses and '!' in a filter so
// that a hostile path cannot exhaust the stack.
const maxExprDepth = 64

// or parses a filter expression: or := and ('||' and)*.
func (p *pathParser) or() (expr, error) { return p.orDepth(0) }

func (p *pathParser) orDepth(d int) (expr, error) {
	if d > maxExprDepth {
		return nil, p.fail()
	}
	l, err := p.and(d)
	if err != nil {
		return nil, err
	}
	for p.space(); strings.HasPrefix(p.s[p.pos:], "||"); p.space() {
		p.pos += 2
		r, err := p.and(d)
		if err != nil {
			return nil, err
		}
		l = binary{op: "||", l: l, r: r}
	}
	return l, nil
}

func (p *pathParser) and(d int) (expr, error) {
	l, err := p.cmp(d)
	if err != nil {
		return nil, err
	}
	for p.space(); strings.HasPrefix(p.s[p.pos:], "&&"); p.space() {
		p.pos += 2
		r, err := p.cmp(d)
		if err != nil {
			return nil, err
		}
		l = binary{op: "&&", l: l, r: r}
	}
	return l, nil
}

var cmpOps = []string{"==", "!=", "<=", ">=", "=~", "<", ">"}

func (p *pathParser) cmp(d int) (expr, error) {
	l, err := p.unary(d)
	if err != nil {
		return nil, err
	}
	p.space()
	for _, op := range cmpOps {
		if strings.HasPrefix(p.s[p.pos:], op) {
			p.pos += len(op)
			p.space()
			r, err := p.unary(d)
			if err != nil {
				return nil, err
			}
			b := binary{op: op, l: l, r: r}
			if rl, ok := r.(lit); ok && op == "=~" {
				if b.re, err = regexp.Compile(rl.v.str); err != nil {
					return nil, err
				}
			}
			return b, nil
		}
	}
	return l, nil
}

func (p *pathParser) unary(d int) (expr, error) {
	p.space()
	if p.pos >= len(p.s) {
		return nil, p.fail()
	}
	switch c := p.s[p.pos]; {
	case c == '!' && !strings.HasPrefix(p.s[p.pos:], "!="):
		p.pos++
		e, err := p.unary(d + 1)
		if err != nil || d > maxExprDepth {
			return nil, p.fail()
		}
		return notOp{e}, nil
	case c == '(':
		p.pos++
		e, err := p.orDepth(d + 1)
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ')' {
			return nil, p.fail()
		}
		p.pos++
		return e, nil
	case c == '@' || c == '$':
		segs, err := p.segments(false)
		if err != nil {
			return nil, err
		}
		return pathOp{segs: segs, root: c == '$'}, nil
	case c == '\'' || c == '"':
		s, err := p.quoted()
		if err != nil {
			return nil, err
		}
		return lit{val{kind: kString, str: s, found: true}}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.pos
		for p.pos < len(p.s) && strings.IndexByte("+-0123456789.eE", p.s[p.pos]) >= 0 {
			p.pos++
		}
		f, err := strconv.ParseFloat(p.s[start:p.pos], 64)
		if err != nil {
			p.pos = start
			return nil, p.fail()
		}
		return lit{val{kind: kNumber, num: f, found: true}}, nil
	}
	for _, w := range [...]string{"true", "false", "null"} {
		if strings.HasPrefix(p.s[p.pos:], w) {
			p.pos += len(w)
			if w == "null" {
				return lit{val{kind: kNull, found: true}}, nil
			}
			return lit{val{kind: kBool, b: w == "true", found: true}}, nil
		}
	}
	return nil, p.fail()
}
