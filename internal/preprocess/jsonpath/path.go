package jsonpath

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// ErrNoMatch is a query that matched nothing.
var ErrNoMatch = errors.New("no data matches the specified path")

type selKind uint8

const (
	selNames selKind = iota
	selIndexes
	selWildcard
	selSlice
	selFilter
)

// segment is one step of a path: a selector applied to every current
// node's children, or with descent to every node below them too.
type segment struct {
	descent bool
	kind    selKind
	names   []string
	indexes []int
	slice   [3]*int // start, end, step; nil: absent
	filter  expr
}

// Path is a compiled JSONPath.
type Path struct {
	segs     []segment
	fn       string // "", "length", "min", "max", "avg", "sum" or "first"
	definite bool
}

var functions = []string{"length", "min", "max", "avg", "sum", "first"}

// Compile parses a path in Zabbix's dialect. The error quotes where the
// path stops making sense, as Zabbix does.
func Compile(path string) (*Path, error) {
	p := &pathParser{s: path}
	segs, err := p.segments(true)
	if err != nil {
		return nil, err
	}
	out := &Path{segs: segs, fn: p.fn, definite: true}
	for _, s := range segs {
		if s.descent || s.kind == selWildcard || s.kind == selSlice || s.kind == selFilter ||
			len(s.names) > 1 || len(s.indexes) > 1 {
			out.definite = false
		}
	}
	return out, nil
}

type pathParser struct {
	s   string
	pos int
	fn  string
}

func (p *pathParser) fail() error {
	return errors.New(`unsupported construct in jsonpath starting with: "` + p.s[p.pos:] + `"`)
}

// segments parses from '$' (or '@' in a filter when root is false) up to
// the end, or, in a filter, up to the first character that cannot
// continue a path.
func (p *pathParser) segments(root bool) ([]segment, error) {
	if p.pos >= len(p.s) || (p.s[p.pos] != '$' && p.s[p.pos] != '@') || (root && p.s[p.pos] != '$') {
		return nil, p.fail()
	}
	p.pos++
	var segs []segment
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		var seg segment
		switch {
		case c == '.' && strings.HasPrefix(p.s[p.pos:], ".."):
			seg.descent = true
			p.pos += 2
			if p.pos < len(p.s) && p.s[p.pos] == '[' {
				if err := p.bracket(&seg); err != nil {
					return nil, err
				}
			} else if err := p.dotName(&seg); err != nil {
				return nil, err
			}
		case c == '.':
			p.pos++
			if root {
				for _, f := range functions {
					if p.s[p.pos:] == f+"()" {
						p.fn = f
						p.pos = len(p.s)
						return segs, nil
					}
				}
			}
			if err := p.dotName(&seg); err != nil {
				return nil, err
			}
		case c == '[':
			if err := p.bracket(&seg); err != nil {
				return nil, err
			}
		default:
			if root {
				return nil, p.fail()
			}
			return segs, nil
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

func (p *pathParser) dotName(seg *segment) error {
	if p.pos < len(p.s) && p.s[p.pos] == '*' {
		p.pos++
		seg.kind = selWildcard
		return nil
	}
	start := p.pos
	for p.pos < len(p.s) && strings.IndexByte(".[]()=!<>&|~ \t\"'$@,", p.s[p.pos]) < 0 {
		p.pos++
	}
	if p.pos == start {
		return p.fail()
	}
	seg.kind, seg.names = selNames, []string{p.s[start:p.pos]}
	return nil
}

func (p *pathParser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

func (p *pathParser) bracket(seg *segment) error {
	open := p.pos
	p.pos++ // '['
	p.space()
	if p.pos >= len(p.s) {
		p.pos = open
		return p.fail()
	}
	switch c := p.s[p.pos]; {
	case c == '*':
		p.pos++
		seg.kind = selWildcard
	case c == '?':
		p.pos++
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != '(' {
			return p.fail()
		}
		p.pos++
		e, err := p.or()
		if err != nil {
			return err
		}
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ')' {
			return p.fail()
		}
		p.pos++
		seg.kind, seg.filter = selFilter, e
	case c == '\'' || c == '"':
		seg.kind = selNames
		for {
			s, err := p.quoted()
			if err != nil {
				return err
			}
			seg.names = append(seg.names, s)
			p.space()
			if p.pos < len(p.s) && p.s[p.pos] == ',' {
				p.pos++
				p.space()
				continue
			}
			break
		}
	default:
		if err := p.indexes(seg); err != nil {
			return err
		}
	}
	p.space()
	if p.pos >= len(p.s) || p.s[p.pos] != ']' {
		return p.fail()
	}
	p.pos++
	return nil
}

func (p *pathParser) quoted() (string, error) {
	if p.pos >= len(p.s) || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
		return "", p.fail()
	}
	q := p.s[p.pos]
	start := p.pos
	p.pos++
	var b strings.Builder
	for p.pos < len(p.s) && p.s[p.pos] != q {
		if p.s[p.pos] == '\\' && p.pos+1 < len(p.s) {
			p.pos++
		}
		b.WriteByte(p.s[p.pos])
		p.pos++
	}
	if p.pos >= len(p.s) {
		p.pos = start
		return "", p.fail()
	}
	p.pos++
	return b.String(), nil
}

func (p *pathParser) int() (*int, bool) {
	start := p.pos
	if p.pos < len(p.s) && p.s[p.pos] == '-' {
		p.pos++
	}
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == start {
		return nil, true
	}
	v, err := strconv.Atoi(p.s[start:p.pos])
	if err != nil {
		p.pos = start
		return nil, false
	}
	return &v, true
}

// indexes parses [1], [1,2,-1] or a slice [start:end:step].
func (p *pathParser) indexes(seg *segment) error {
	first, ok := p.int()
	if !ok {
		return p.fail()
	}
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == ':' {
		seg.kind = selSlice
		seg.slice[0] = first
		for i := 1; i < 3 && p.pos < len(p.s) && p.s[p.pos] == ':'; i++ {
			p.pos++
			p.space()
			v, ok := p.int()
			if !ok {
				return p.fail()
			}
			seg.slice[i] = v
			p.space()
		}
		if seg.slice[2] != nil && *seg.slice[2] <= 0 {
			return p.fail()
		}
		return nil
	}
	if first == nil {
		return p.fail()
	}
	seg.kind, seg.indexes = selIndexes, []int{*first}
	for p.pos < len(p.s) && p.s[p.pos] == ',' {
		p.pos++
		p.space()
		v, ok := p.int()
		if !ok || v == nil {
			return p.fail()
		}
		seg.indexes = append(seg.indexes, *v)
		p.space()
	}
	return nil
}

// Query runs the path on doc, a JSON text, and formats the result as
// Zabbix does (see the package doc).
func (p *Path) Query(doc string) (string, error) {
	root, err := parseJSON(doc)
	if err != nil {
		return "", err
	}
	return p.query(root)
}

// Find is Query for "Check for error in JSON": found is false when doc
// is not JSON or the path matches nothing.
func (p *Path) Find(doc string) (result string, found bool) {
	root, err := parseJSON(doc)
	if err != nil {
		return "", false
	}
	r, err := p.query(root)
	return r, err == nil
}

// Doc is a JSON text parsed once so that many paths can run on it: the
// dependent items of one master value, each with its own JSONPath step,
// parse the master's document once instead of once each. A Doc is
// immutable after Parse and safe for concurrent use.
type Doc struct {
	root *node
	err  error
}

// Parse parses text for QueryDoc and FindDoc. A text that is not JSON
// gives a Doc that carries the error: QueryDoc returns it, as Query
// would.
func Parse(text string) *Doc {
	root, err := parseJSON(text)
	return &Doc{root: root, err: err}
}

// QueryDoc is Query on a parsed document.
func (p *Path) QueryDoc(d *Doc) (string, error) {
	if d.err != nil {
		return "", d.err
	}
	return p.query(d.root)
}

// FindDoc is Find on a parsed document.
func (p *Path) FindDoc(d *Doc) (result string, found bool) {
	if d.err != nil {
		return "", false
	}
	r, err := p.query(d.root)
	return r, err == nil
}

func (p *Path) query(root *node) (string, error) {
	nodes := eval(p.segs, root, root)
	if p.fn != "" {
		return p.function(nodes)
	}
	if len(nodes) == 0 {
		return "", ErrNoMatch
	}
	if p.definite {
		return text(nodes[0]), nil
	}
	return array(nodes), nil
}

func text(n *node) string {
	if n.kind == kString {
		return n.str
	}
	return n.raw
}

func array(nodes []*node) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, n := range nodes {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n.raw)
	}
	b.WriteByte(']')
	return b.String()
}

// function applies the trailing function. On a definite path that
// matched an array, it works on that array's elements, as Zabbix does
// ($.list.length() counts the list).
func (p *Path) function(nodes []*node) (string, error) {
	if p.definite && len(nodes) == 1 && nodes[0].kind == kArray {
		nodes = nodes[0].elems
	}
	switch p.fn {
	case "length":
		if len(nodes) == 0 && p.definite {
			return "", ErrNoMatch
		}
		return strconv.Itoa(len(nodes)), nil
	case "first":
		if len(nodes) == 0 {
			return "", ErrNoMatch
		}
		return text(nodes[0]), nil
	}
	if len(nodes) == 0 {
		return "", ErrNoMatch
	}
	acc := 0.0
	for i, n := range nodes {
		v, ok := number(n)
		if !ok {
			return "", errors.New("cannot apply function " + p.fn + "() to a non-numeric value")
		}
		switch {
		case i == 0 && (p.fn == "min" || p.fn == "max"):
			acc = v
		case p.fn == "min":
			acc = math.Min(acc, v)
		case p.fn == "max":
			acc = math.Max(acc, v)
		default:
			acc += v
		}
	}
	if p.fn == "avg" {
		acc /= float64(len(nodes))
	}
	return formatFloat(acc), nil
}

// number reads a node as a number: a JSON number, or a string holding one
// (Zabbix's functions accept both).
func number(n *node) (float64, bool) {
	switch n.kind {
	case kNumber:
		return n.num, true
	case kString:
		f, err := strconv.ParseFloat(strings.TrimSpace(n.str), 64)
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return 0, false
}

func formatFloat(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// eval applies segs to start; root is the document, for $ in filters.
func eval(segs []segment, start, root *node) []*node {
	cur := []*node{start}
	for i := range segs {
		s := &segs[i]
		var next []*node
		for _, n := range cur {
			if s.descent {
				walk(n, func(d *node) { next = s.apply(d, root, next) })
			} else {
				next = s.apply(n, root, next)
			}
		}
		cur = next
		if len(cur) == 0 {
			break
		}
	}
	return cur
}

// walk calls f on n and every value below it, in document order.
func walk(n *node, f func(*node)) {
	f(n)
	for _, e := range n.elems {
		walk(e, f)
	}
}

func (s *segment) apply(n *node, root *node, out []*node) []*node {
	switch s.kind {
	case selNames:
		if n.kind == kObject {
			for _, name := range s.names {
				if m := n.member(name); m != nil {
					out = append(out, m)
				}
			}
		}
	case selIndexes:
		if n.kind == kArray {
			for _, i := range s.indexes {
				if i < 0 {
					i += len(n.elems)
				}
				if i >= 0 && i < len(n.elems) {
					out = append(out, n.elems[i])
				}
			}
		}
	case selWildcard:
		if n.kind == kArray || n.kind == kObject {
			out = append(out, n.elems...)
		}
	case selSlice:
		if n.kind == kArray {
			l := len(n.elems)
			lo, hi, step := 0, l, 1
			if s.slice[0] != nil {
				lo = clampIndex(*s.slice[0], l)
			}
			if s.slice[1] != nil {
				hi = clampIndex(*s.slice[1], l)
			}
			if s.slice[2] != nil {
				step = *s.slice[2]
			}
			for i := lo; i < hi; i += step {
				out = append(out, n.elems[i])
			}
		}
	case selFilter:
		if n.kind == kArray || n.kind == kObject {
			for _, e := range n.elems {
				if truthy(s.filter.eval(e, root)) {
					out = append(out, e)
				}
			}
		}
	}
	return out
}

func clampIndex(i, l int) int {
	if i < 0 {
		i += l
	}
	return min(max(i, 0), l)
}
