package expr

import (
	"fmt"
	"strings"
)

// ItemFilter is the filter of an aggregate item query, the text between
// "?[" and "]": conditions group="name" and tag="name" or
// tag="name:value", each with = or <>, combined with and, or, not and
// parentheses, as in ?[group="Linux servers" and not tag="env:test"].
type ItemFilter struct {
	root filterNode
	tags bool
}

// FilterTag is one tag of an item, for ItemFilter.Match.
type FilterTag struct{ Name, Value string }

type filterNode interface {
	match(groups []string, tags []FilterTag) bool
}

type filterCond struct {
	group bool // else tag
	neg   bool // <>
	name  string
	value string
	hasV  bool // tag="name:value"
}

type filterNot struct{ x filterNode }

type filterBin struct {
	and  bool
	l, r filterNode
}

func (c filterCond) match(groups []string, tags []FilterTag) bool {
	found := false
	if c.group {
		for _, g := range groups {
			if g == c.name {
				found = true
				break
			}
		}
	} else {
		for _, t := range tags {
			if t.Name == c.name && (!c.hasV || t.Value == c.value) {
				found = true
				break
			}
		}
	}
	return found != c.neg
}

func (n filterNot) match(g []string, t []FilterTag) bool { return !n.x.match(g, t) }

func (n filterBin) match(g []string, t []FilterTag) bool {
	if n.and {
		return n.l.match(g, t) && n.r.match(g, t)
	}
	return n.l.match(g, t) || n.r.match(g, t)
}

// Match reports whether an item whose host is in groups (names) and
// which has tags passes the filter.
func (f *ItemFilter) Match(groups []string, tags []FilterTag) bool {
	return f.root.match(groups, tags)
}

// UsesTags reports whether the filter tests tags (a source whose items
// have no tags refuses such a filter rather than answering wrongly).
func (f *ItemFilter) UsesTags() bool { return f.tags }

// ParseItemFilter parses the text of an item filter.
func ParseItemFilter(s string) (*ItemFilter, error) {
	p := &filterParser{s: s}
	f := &ItemFilter{}
	root, err := p.or(f)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("item filter: unexpected %q at position %d", p.s[p.i:], p.i)
	}
	f.root = root
	return f, nil
}

type filterParser struct {
	s     string
	i     int
	depth int
}

func (p *filterParser) space() {
	for p.i < len(p.s) && isSpace(p.s[p.i]) {
		p.i++
	}
}

// word consumes keyword w when it stands alone at the cursor.
func (p *filterParser) word(w string) bool {
	p.space()
	if !strings.HasPrefix(p.s[p.i:], w) {
		return false
	}
	j := p.i + len(w)
	if j < len(p.s) && (isAlpha(p.s[j]) || isDigit(p.s[j]) || p.s[j] == '_') {
		return false
	}
	p.i = j
	return true
}

func (p *filterParser) or(f *ItemFilter) (filterNode, error) {
	l, err := p.and(f)
	if err != nil {
		return nil, err
	}
	for p.word("or") {
		r, err := p.and(f)
		if err != nil {
			return nil, err
		}
		l = filterBin{and: false, l: l, r: r}
	}
	return l, nil
}

func (p *filterParser) and(f *ItemFilter) (filterNode, error) {
	l, err := p.unary(f)
	if err != nil {
		return nil, err
	}
	for p.word("and") {
		r, err := p.unary(f)
		if err != nil {
			return nil, err
		}
		l = filterBin{and: true, l: l, r: r}
	}
	return l, nil
}

func (p *filterParser) unary(f *ItemFilter) (filterNode, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, fmt.Errorf("item filter nested deeper than %d levels", maxDepth)
	}
	if p.word("not") {
		x, err := p.unary(f)
		if err != nil {
			return nil, err
		}
		return filterNot{x}, nil
	}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		x, err := p.or(f)
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, fmt.Errorf("item filter: expected \")\" at position %d", p.i)
		}
		p.i++
		return x, nil
	}
	var c filterCond
	switch {
	case p.word("group"):
		c.group = true
	case p.word("tag"):
		f.tags = true
	default:
		return nil, fmt.Errorf("item filter: expected group, tag, not or \"(\" at position %d", p.i)
	}
	p.space()
	switch {
	case strings.HasPrefix(p.s[p.i:], "<>"):
		c.neg = true
		p.i += 2
	case strings.HasPrefix(p.s[p.i:], "="):
		p.i++
	default:
		return nil, fmt.Errorf("item filter: expected = or <> at position %d", p.i)
	}
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return nil, fmt.Errorf("item filter: expected a quoted string at position %d", p.i)
	}
	end, err := scanString(p.s, p.i)
	if err != nil {
		return nil, fmt.Errorf("item filter: %w", err)
	}
	val := unquote(p.s[p.i:end])
	p.i = end
	if c.group {
		c.name = val
	} else {
		c.name, c.value, c.hasV = strings.Cut(val, ":")
	}
	return c, nil
}
