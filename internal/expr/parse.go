package expr

import (
	"errors"
	"strconv"
	"strings"
)

// MaxLength bounds the text Parse accepts, as the 64 KiB expression
// column of Zabbix's trigger table does; longer input is refused before
// any work.
const MaxLength = 65535

// maxDepth bounds nesting (parentheses, unary operators, calls) so that
// a hostile "((((..." cannot exhaust the stack of the recursive parser.
const maxDepth = 200

// Parse parses a Zabbix 6.0 trigger or calculated-item expression. The
// error, when there is one, is a *ParseError with the byte position.
func Parse(s string) (*Expr, error) {
	if len(s) > MaxLength {
		return nil, &ParseError{Expr: s, Pos: MaxLength, Msg: "expression longer than 65535 bytes", start: MaxLength}
	}
	p := &parser{lex: lexer{src: s}}
	root, err := p.parseExpr(1)
	if err != nil {
		return nil, err
	}
	tok, err := p.next()
	if err != nil {
		return nil, err
	}
	if tok.kind != tokEOF {
		return nil, p.lex.errf(tok.pos, "unexpected %q", tok.text)
	}
	if p.sem != nil {
		return nil, p.sem
	}
	if err := checkForeach(root, nil, 0); err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			return nil, p.lex.errf(pe.pos, "%s", pe.msg)
		}
		return nil, err
	}
	e := &Expr{src: s, root: root}
	e.last = lastComparison(root)
	seen := map[ItemRef]bool{}
	walk(root, func(n Node) {
		switch n := n.(type) {
		case *Query:
			r := ItemRef{Host: n.Host, Key: n.Key}
			if !seen[r] {
				seen[r] = true
				e.refs = append(e.refs, r)
			}
		case *Call:
			e.timeBased = e.timeBased || timeFuncs[n.Name]
			e.aggregate = e.aggregate || (n.fn != nil && n.fn.aggregate)
		}
	})
	return e, nil
}

type parser struct {
	lex    lexer
	peeked *token
	depth  int
	// sem is the first (by position) problem Zabbix 6.0's validator
	// would find once the expression parses: reported only when nothing
	// else is wrong, as 6.0 reports it (semantic).
	sem *ParseError
}

// semantic records a problem of a call Zabbix 6.0 finds only once the
// whole expression parses (its validator's: zabbix is its reason). The
// parse goes on; the problem at the smallest position is reported if no
// syntax error is found, as 6.0 validates the calls in their order.
func (p *parser) semantic(pos int, zabbix, msg string) {
	if p.sem == nil || pos < p.sem.Pos {
		p.sem = p.lex.errf(pos, "%s", msg)
		p.sem.zabbix = zabbix
	}
}

func (p *parser) next() (token, error) {
	if p.peeked != nil {
		t := *p.peeked
		p.peeked = nil
		return t, nil
	}
	return p.lex.next()
}

func (p *parser) peek() (token, error) {
	if p.peeked == nil {
		t, err := p.lex.next()
		if err != nil {
			return t, err
		}
		p.peeked = &t
	}
	return *p.peeked, nil
}

// binPrec is the binding strength of each binary operator, Zabbix's
// table from the loosest (or) to the tightest (* /); unary - and not bind
// tighter still.
var binPrec = map[string]int{
	"or": 1, "and": 2,
	"=": 3, "<>": 3,
	"<": 4, "<=": 4, ">": 4, ">=": 4,
	"+": 5, "-": 5,
	"*": 6, "/": 6,
}

// parseExpr is precedence climbing: every operator is left associative.
func (p *parser) parseExpr(minPrec int) (Node, error) {
	left, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for {
		tok, err := p.peek()
		if err != nil {
			return nil, err
		}
		prec, ok := binPrec[tok.text]
		if tok.kind != tokOp || !ok || prec < minPrec {
			return left, nil
		}
		p.peeked = nil
		right, err := p.parseExpr(prec + 1)
		if err != nil {
			return nil, err
		}
		left = &Binary{P: tok.pos, Op: tok.text, L: left, R: right}
	}
}

func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > maxDepth {
		return p.lex.errf(pos, "expression nested deeper than %d levels", maxDepth)
	}
	return nil
}

func (p *parser) parseUnary() (Node, error) {
	tok, err := p.next()
	if err != nil {
		return nil, err
	}
	if err := p.enter(tok.pos); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	switch tok.kind {
	case tokOp:
		if tok.text != "-" && tok.text != "not" {
			return nil, p.lex.errf(tok.pos, "unexpected operator %q", tok.text)
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return &Unary{P: tok.pos, Op: tok.text, X: x}, nil
	case tokNumber:
		v, err := parseNumber(tok.text)
		if err != nil {
			return nil, p.lex.errf(tok.pos, "%s", err)
		}
		return &Number{P: tok.pos, Raw: tok.text, Val: v}, nil
	case tokString:
		return &String{P: tok.pos, Val: unquote(tok.text)}, nil
	case tokMacro:
		return &Macro{P: tok.pos, Raw: tok.text}, nil
	case tokLParen:
		x, err := p.parseExpr(1)
		if err != nil {
			return nil, err
		}
		if err := p.expect(tokRParen, ")"); err != nil {
			return nil, err
		}
		return &Paren{P: tok.pos, X: x}, nil
	case tokIdent:
		return p.parseCall(tok)
	case tokEOF:
		return nil, p.lex.errf(tok.pos, "unexpected end of expression")
	}
	return nil, p.lex.errf(tok.pos, "unexpected %q", tok.text)
}

func (p *parser) expect(kind tokKind, text string) error {
	tok, err := p.next()
	if err != nil {
		return err
	}
	if tok.kind != kind {
		if tok.kind == tokEOF {
			return p.lex.errf(tok.pos, "expected %q", text)
		}
		return p.lex.errf(tok.pos, "expected %q, found %q", text, tok.text)
	}
	return nil
}

// parseCall parses name( ... ). The lexer stands on the '('. A call whose
// first parameter starts with '/' is a history function: its query and
// its period are read raw here, because "/host/key[a,b]" and "1h:now-1d"
// are not made of expression tokens.
func (p *parser) parseCall(name token) (_ Node, err error) {
	defer func() {
		// Zabbix 6.0 reports a call that does not parse from its start;
		// the outermost call's defer runs last.
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.start = name.pos
		}
	}()
	l := &p.lex
	l.pos++ // '('
	l.skipSpace()
	call := &Call{P: name.pos, Name: name.text}
	if l.pos < len(l.src) && l.src[l.pos] == '/' {
		q, err := p.parseQuery()
		if err != nil {
			return nil, err
		}
		call.Query = q
		for {
			l.skipSpace()
			if l.pos >= len(l.src) {
				return nil, l.errf(l.pos, "expected \")\"")
			}
			if l.src[l.pos] == ')' {
				l.pos++
				break
			}
			if l.src[l.pos] != ',' {
				return nil, l.errf(l.pos, "expected \",\" or \")\" after function parameter")
			}
			l.pos++
			l.skipSpace()
			var arg Node
			switch {
			case len(call.Args) == 0 && takesPeriod(call.Name):
				per, err := p.parsePeriod(call.Name)
				if err != nil {
					return nil, err
				}
				arg = per
			case l.pos < len(l.src) && (l.src[l.pos] == ',' || l.src[l.pos] == ')'):
				arg = &Empty{P: l.pos}
			default:
				x, err := p.parseExpr(1)
				if err != nil {
					return nil, err
				}
				if p.peeked != nil {
					// The raw reader resumes where the
					// peeked token started.
					l.pos = p.peeked.pos
					p.peeked = nil
				}
				arg = x
			}
			call.Args = append(call.Args, arg)
		}
	} else if l.pos < len(l.src) && l.src[l.pos] == ')' {
		l.pos++
	} else {
		for {
			x, err := p.parseExpr(1)
			if err != nil {
				return nil, err
			}
			call.Args = append(call.Args, x)
			tok, err := p.next()
			if err != nil {
				return nil, err
			}
			if tok.kind == tokRParen {
				break
			}
			if tok.kind != tokComma {
				if tok.kind == tokEOF {
					return nil, l.errf(tok.pos, "expected \")\"")
				}
				return nil, l.errf(tok.pos, "expected \",\" or \")\", found %q", tok.text)
			}
		}
	}
	if err := checkCall(call); err != nil {
		var ce *checkError
		if errors.As(err, &ce) && ce.zabbix != "" {
			p.semantic(call.P, ce.zabbix, ce.msg)
			return call, nil
		}
		return nil, l.errf(call.P, "%s", err)
	}
	return call, nil
}

// parseQuery reads /host/key[params]?[filter] at the lexer's position.
func (p *parser) parseQuery() (*Query, error) {
	l := &p.lex
	start := l.pos
	l.pos++ // first '/'
	hostStart := l.pos
	if l.pos < len(l.src) && l.src[l.pos] == '{' {
		end, err := scanMacro(l.src, l.pos)
		if err != nil {
			return nil, l.errf(l.pos, "host: %s", err)
		}
		l.pos = end
	} else {
		for l.pos < len(l.src) && isHostChar(l.src[l.pos]) {
			l.pos++
		}
	}
	host := l.src[hostStart:l.pos]
	if l.pos >= len(l.src) || l.src[l.pos] != '/' {
		return nil, l.errf(l.pos, "invalid host name in item query")
	}
	if host != "*" && strings.Contains(host, "*") {
		return nil, l.errf(hostStart, "invalid host name %q", host)
	}
	l.pos++
	keyStart := l.pos
	end, err := scanKey(l.src, l.pos)
	if err != nil {
		return nil, l.errf(keyStart, "item key: %s", err)
	}
	l.pos = end
	q := &Query{P: start, Host: host, Key: l.src[keyStart:end]}
	if strings.HasPrefix(l.src[l.pos:], "?[") {
		fstart := l.pos + 2
		fend, err := scanFilter(l.src, fstart)
		if err != nil {
			return nil, l.errf(l.pos, "item filter: %s", err)
		}
		q.Filter = l.src[fstart:fend]
		if _, err := ParseItemFilter(q.Filter); err != nil {
			return nil, l.errf(fstart, "%s", err)
		}
		l.pos = fend + 1
	}
	return q, nil
}

// isHostChar is a character of a technical host name (letters, digits,
// space, dot, underscore, dash) or the "*" wildcard of aggregate queries.
func isHostChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == ' ' || c == '.' || c == '_' || c == '-' || c == '*'
}

func isKeyChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '.' || c == '_' || c == '-'
}

// scanKey reads an item key: a name ([0-9A-Za-z._-] or "*") and an
// optional bracketed parameter list where a parameter is quoted ("..."
// with \" escapes), unquoted (anything but , and ]) or an array [a,b].
// It returns the offset just after the key.
func scanKey(s string, i int) (int, error) {
	start := i
	if i < len(s) && s[i] == '*' {
		i++
	} else {
		for i < len(s) && isKeyChar(s[i]) {
			i++
		}
	}
	if i == start {
		return i, errString("empty item key")
	}
	if i >= len(s) || s[i] != '[' {
		return i, nil
	}
	i++
	end, err := scanKeyParams(s, i, 0)
	return end, err
}

// scanKeyParams reads parameters after '[' up to and including the
// matching ']'.
func scanKeyParams(s string, i, depth int) (int, error) {
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return i, errString("unterminated key parameters")
		}
		switch {
		case s[i] == '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) && s[i+1] == '"' {
					i++
				}
				i++
			}
			if i >= len(s) {
				return i, errString("unterminated quoted key parameter")
			}
			i++
			for i < len(s) && s[i] == ' ' {
				i++
			}
		case s[i] == '[' && depth == 0:
			end, err := scanKeyParams(s, i+1, 1)
			if err != nil {
				return end, err
			}
			i = end
			for i < len(s) && s[i] == ' ' {
				i++
			}
		default:
			for i < len(s) && s[i] != ',' && s[i] != ']' {
				if s[i] == '[' {
					return i, errString("unexpected \"[\" in unquoted key parameter")
				}
				i++
			}
		}
		if i >= len(s) {
			return i, errString("unterminated key parameters")
		}
		switch s[i] {
		case ',':
			i++
		case ']':
			return i + 1, nil
		default:
			return i, errString("expected \",\" or \"]\" in key parameters")
		}
	}
}

// scanFilter reads an item filter after "?[" and returns the offset of
// its closing ']', skipping brackets and quoted strings inside.
func scanFilter(s string, i int) (int, error) {
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '"':
			end, err := scanString(s, i)
			if err != nil {
				return end, err
			}
			i = end
			continue
		case '[':
			depth++
		case ']':
			if depth == 0 {
				return i, nil
			}
			depth--
		}
		i++
	}
	return i, errString("unterminated item filter")
}

// parsePeriod reads the raw period parameter of function fn up to ','
// or ')'. A period of no values or no time (#0, 0s) is a problem of
// the call to Zabbix 6.0's validator, not of the syntax (semantic).
func (p *parser) parsePeriod(fn string) (Node, error) {
	l := &p.lex
	start := l.pos
	i := l.pos
	for i < len(l.src) && l.src[i] != ',' && l.src[i] != ')' {
		if l.src[i] == '{' {
			end, err := scanMacro(l.src, i)
			if err != nil {
				return nil, l.errf(i, "%s", err)
			}
			i = end
			continue
		}
		i++
	}
	raw := strings.TrimRight(l.src[start:i], " \t\r\n")
	l.pos = i
	if raw == "" {
		return &Empty{P: start}, nil
	}
	per := &Period{P: start, Raw: raw}
	if !strings.Contains(raw, "{") {
		ps, err := parsePeriodSpec(raw)
		var zero errZeroPeriod
		switch {
		case errors.As(err, &zero):
			p.semantic(start, `invalid second parameter in function "`+fn+`"`, err.Error())
			return per, nil
		case err != nil:
			return nil, l.errf(start, "%s", err)
		}
		per.spec = &ps
	}
	return per, nil
}

type errString string

func (e errString) Error() string { return string(e) }

// errZeroPeriod is a period of no values or no time (#0, 0s).
type errZeroPeriod string

func (e errZeroPeriod) Error() string { return string(e) }

// parseNumber converts a numeric token with its optional suffix.
func parseNumber(tok string) (float64, error) {
	mult := 1.0
	if n := len(tok); n > 0 {
		if m, ok := suffixMultiplier(tok[n-1]); ok {
			mult = m
			tok = tok[:n-1]
		}
	}
	v, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		return 0, errString("invalid number " + strconv.Quote(tok))
	}
	return v * mult, nil
}

func suffixMultiplier(c byte) (float64, bool) {
	switch c {
	case 'K':
		return 1024, true
	case 'M':
		return 1024 * 1024, true
	case 'G':
		return 1024 * 1024 * 1024, true
	case 'T':
		return 1024 * 1024 * 1024 * 1024, true
	case 's':
		return 1, true
	case 'm':
		return 60, true
	case 'h':
		return 3600, true
	case 'd':
		return 86400, true
	case 'w':
		return 7 * 86400, true
	}
	return 0, false
}
