package jsonpath

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// MaxDepth bounds the nesting of arrays and objects in a document.
const MaxDepth = 256

type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

// node is one parsed JSON value.
type node struct {
	kind  kind
	raw   string  // the value's text in the document
	str   string  // kString: the unescaped string
	num   float64 // kNumber
	b     bool    // kBool
	elems []*node // kArray: elements; kObject: member values
	keys  []string
}

func (n *node) member(name string) *node {
	for i, k := range n.keys {
		if k == name {
			return n.elems[i]
		}
	}
	return nil
}

// errJSON is a document that is not JSON.
var errJSON = errors.New("cannot parse as a valid JSON object")

type parser struct {
	s   string
	pos int
	// arena hands out nodes from chunks: one allocation per 256 nodes
	// instead of one per node, which is most of a large document's cost.
	arena []node
}

func (p *parser) newNode(k kind) *node {
	if len(p.arena) == cap(p.arena) {
		p.arena = make([]node, 0, 256)
	}
	p.arena = append(p.arena, node{kind: k})
	return &p.arena[len(p.arena)-1]
}

func parseJSON(s string) (*node, error) {
	p := parser{s: s}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.s) {
		return nil, p.fail("unexpected text after the value")
	}
	return n, nil
}

func (p *parser) fail(what string) error {
	p.pos = min(p.pos, len(p.s)) // a trailing backslash steps past the end
	end := p.pos + 32
	if end > len(p.s) {
		end = len(p.s)
	}
	return errors.New(errJSON.Error() + ": " + what + " at: '" + p.s[p.pos:end] + "'")
}

func (p *parser) space() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*node, error) {
	if depth > MaxDepth {
		return nil, p.fail("nesting too deep")
	}
	if p.pos >= len(p.s) {
		return nil, p.fail("unexpected end of data")
	}
	start := p.pos
	switch c := p.s[p.pos]; {
	case c == '{' || c == '[':
		n := p.newNode(kArray)
		closing := byte(']')
		if c == '{' {
			n.kind, closing = kObject, '}'
		}
		p.pos++
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == closing {
			p.pos++
			n.raw = p.s[start:p.pos]
			return n, nil
		}
		for {
			p.space()
			if n.kind == kObject {
				if p.pos >= len(p.s) || p.s[p.pos] != '"' {
					return nil, p.fail("expected a member name")
				}
				k, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				p.space()
				if p.pos >= len(p.s) || p.s[p.pos] != ':' {
					return nil, p.fail("expected ':'")
				}
				p.pos++
				p.space()
				n.keys = append(n.keys, k.str)
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			p.space()
			if p.pos < len(p.s) && p.s[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.s) && p.s[p.pos] == closing {
				p.pos++
				n.raw = p.s[start:p.pos]
				return n, nil
			}
			return nil, p.fail("expected ',' or '" + string(closing) + "'")
		}
	case c == '"':
		p.pos++
		escaped := false
		for p.pos < len(p.s) && p.s[p.pos] != '"' {
			if p.s[p.pos] == '\\' {
				escaped = true
				p.pos++
			} else if p.s[p.pos] < 0x20 {
				return nil, p.fail("control character in a string")
			}
			p.pos++
		}
		if p.pos >= len(p.s) {
			return nil, p.fail("unterminated string")
		}
		p.pos++
		n := p.newNode(kString)
		n.raw = p.s[start:p.pos]
		n.str = n.raw[1 : len(n.raw)-1]
		if escaped {
			if err := json.Unmarshal([]byte(n.raw), &n.str); err != nil {
				p.pos = start
				return nil, p.fail("invalid string escape")
			}
		}
		return n, nil
	case c == '-' || (c >= '0' && c <= '9'):
		for p.pos < len(p.s) && strings.IndexByte("+-0123456789.eE", p.s[p.pos]) >= 0 {
			p.pos++
		}
		raw := p.s[start:p.pos]
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || !validNumber(raw) {
			p.pos = start
			return nil, p.fail("invalid number")
		}
		n := p.newNode(kNumber)
		n.raw, n.num = raw, f
		return n, nil
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if strings.HasPrefix(p.s[p.pos:], lit) {
				p.pos += len(lit)
				n := p.newNode(kBool)
				n.raw, n.b = lit, lit == "true"
				if lit == "null" {
					n.kind = kNull
				}
				return n, nil
			}
		}
		return nil, p.fail("unexpected character")
	}
}

// validNumber checks JSON's number grammar, stricter than ParseFloat's:
// no leading zeros, no leading '+', digits on both sides of the point.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
