package expr

import (
	"fmt"
	"strings"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tokEOF tokKind = iota
	tokNumber
	tokString
	tokMacro // {$USER}, {#LLD}, {HOST.HOST}, {{#LLD}.regsub(...)}
	tokIdent // function name, always followed by '('
	tokLParen
	tokRParen
	tokComma
	tokOp // + - * / = <> < <= > >= and or not
)

// token is one lexical token: its kind, its text as written and the byte
// offset where it starts (for error positions).
type token struct {
	kind tokKind
	text string
	pos  int
}

// ParseError is a syntax error with the byte offset it was found at. Its
// message starts as Zabbix's does ("incorrect expression starting from
// ...") so that API clients written for Zabbix recognise it; Zabbix
// gives Zabbix 6.0's exact text.
type ParseError struct {
	Expr string // the whole expression
	Pos  int    // byte offset of the offending text
	Msg  string // what is wrong there
	// start is where Zabbix 6.0's parser stops: Pos, but the start of
	// the outermost function call that holds it, and past the number of
	// a number with a bad suffix.
	start int
	// zabbix is Zabbix 6.0's reason for a problem its validator finds
	// once the expression parses (an unknown function, the number or
	// kind of a function's parameters); "" for a syntax error.
	zabbix string
}

// Zabbix is the reason as Zabbix 6.0's API gives it (recorded from
// 6.0.14's trigger.create: `Invalid parameter "/1/expression": REASON.`):
// `incorrect expression starting from "..."` with the rest of the
// expression from where its parser stopped, or its validator's reason
// (`unknown function "f"`, `invalid number of parameters in function
// "f"`, ...).
func (e *ParseError) Zabbix() string {
	if e.zabbix != "" {
		return e.zabbix
	}
	rest := ""
	if e.start < len(e.Expr) {
		rest = e.Expr[e.start:]
	}
	return `incorrect expression starting from "` + rest + `"`
}

func (e *ParseError) Error() string {
	if e.Pos >= len(e.Expr) {
		return fmt.Sprintf("incorrect expression: %s at end of expression (position %d)", e.Msg, e.Pos)
	}
	rest := e.Expr[e.Pos:]
	if len(rest) > 40 {
		rest = rest[:40] + "..."
	}
	return fmt.Sprintf("incorrect expression starting from %q (position %d): %s", rest, e.Pos, e.Msg)
}

// lexer turns an expression into tokens on demand. It is a plain cursor
// over the string; the parser asks for one token at a time because what
// follows a history function's query (a period such as "5m:now-1d") is
// read raw by the parser, not tokenised.
type lexer struct {
	src string
	pos int
}

func (l *lexer) errf(pos int, format string, args ...any) *ParseError {
	return &ParseError{Expr: l.src, Pos: pos, Msg: fmt.Sprintf(format, args...), start: pos}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

func isAlpha(c byte) bool { return isLower(c) || (c >= 'A' && c <= 'Z') }

func (l *lexer) skipSpace() {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
}

// next returns the next token. Keywords (and, or, not) are operators;
// any other lower-case word must be a function name followed directly by
// '(' as in Zabbix, where "last (" is not a call.
func (l *lexer) next() (token, error) {
	l.skipSpace()
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, pos: start}, nil
	}
	c := l.src[l.pos]
	switch {
	case c == '(':
		l.pos++
		return token{tokLParen, "(", start}, nil
	case c == ')':
		l.pos++
		return token{tokRParen, ")", start}, nil
	case c == ',':
		l.pos++
		return token{tokComma, ",", start}, nil
	case c == '+' || c == '-' || c == '*' || c == '/' || c == '=':
		l.pos++
		return token{tokOp, l.src[start:l.pos], start}, nil
	case c == '<':
		l.pos++
		if l.pos < len(l.src) && (l.src[l.pos] == '=' || l.src[l.pos] == '>') {
			l.pos++
		}
		return token{tokOp, l.src[start:l.pos], start}, nil
	case c == '>':
		l.pos++
		if l.pos < len(l.src) && l.src[l.pos] == '=' {
			l.pos++
		}
		return token{tokOp, l.src[start:l.pos], start}, nil
	case c == '"':
		end, err := scanString(l.src, start)
		if err != nil {
			return token{}, l.errf(start, "%s", err)
		}
		l.pos = end
		return token{tokString, l.src[start:end], start}, nil
	case c == '{':
		end, err := scanMacro(l.src, start)
		if err != nil {
			return token{}, l.errf(start, "%s", err)
		}
		l.pos = end
		return token{tokMacro, l.src[start:end], start}, nil
	case isDigit(c) || (c == '.' && l.pos+1 < len(l.src) && isDigit(l.src[l.pos+1])):
		end, err := scanNumber(l.src, start)
		if err != nil {
			pe := l.errf(start, "%s", err)
			pe.start = end // Zabbix 6.0 stops after the number
			return token{}, pe
		}
		l.pos = end
		return token{tokNumber, l.src[start:end], start}, nil
	case isLower(c) || c == '_':
		end := start
		for end < len(l.src) && (isLower(l.src[end]) || isDigit(l.src[end]) || l.src[end] == '_') {
			end++
		}
		word := l.src[start:end]
		if word == "and" || word == "or" || word == "not" {
			if end < len(l.src) && (isAlpha(l.src[end]) || isDigit(l.src[end])) {
				return token{}, l.errf(start, "unknown word %q", l.src[start:end+1])
			}
			l.pos = end
			return token{tokOp, word, start}, nil
		}
		if end >= len(l.src) || l.src[end] != '(' {
			return token{}, l.errf(start, "%q is neither a function call nor an operator", word)
		}
		l.pos = end
		return token{tokIdent, word, start}, nil
	}
	return token{}, l.errf(start, "unexpected character %q", c)
}

// scanNumber reads a decimal number with an optional fraction, exponent
// and one unit suffix (K M G T, s m h d w). A letter right after it is an
// error, so "5mm" or "1e" never half-parse.
func scanNumber(s string, i int) (int, error) {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	if i < len(s) && strings.IndexByte(suffixes, s[i]) >= 0 {
		i++
	}
	if i < len(s) && (isAlpha(s[i]) || isDigit(s[i]) || s[i] == '.' || s[i] == '_') {
		return i, fmt.Errorf("invalid number suffix %q", s[i])
	}
	return i, nil
}

// suffixes are the unit suffixes a numeric constant may carry.
const suffixes = "KMGTsmhdw"

// scanString reads a double-quoted string starting at s[i]. Zabbix 6.0
// knows two escapes only, \" and \\; any other backslash is kept as
// written (regular expressions in templates rely on "\d" staying "\d").
func scanString(s string, i int) (int, error) {
	i++ // opening quote
	for i < len(s) {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i += 2
				continue
			}
			return i, fmt.Errorf("unterminated string")
		case '"':
			return i + 1, nil
		}
		i++
	}
	return i, fmt.Errorf("unterminated string")
}

// unquote returns the value of a string token: the quotes removed and \"
// and \\ replaced.
func unquote(tok string) string {
	body := tok[1 : len(tok)-1]
	if strings.IndexByte(body, '\\') < 0 {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' && i+1 < len(body) && (body[i+1] == '"' || body[i+1] == '\\') {
			i++
		}
		b.WriteByte(body[i])
	}
	return b.String()
}

// quote is the inverse of unquote.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// scanMacro reads a macro starting at s[i] ('{') and returns its end:
//
//	{$NAME} {$NAME:context} {$NAME:"quoted context"} {$NAME:regex:"..."}
//	{#LLD}  {HOST.HOST} {TRIGGER.VALUE} (built-in: upper case, dots, digits)
//	{{#LLD}.func(params)} and {{HOST.HOST}.func(params)} (function macros)
func scanMacro(s string, i int) (int, error) {
	start := i
	if i+1 >= len(s) {
		return i, fmt.Errorf("unterminated macro")
	}
	switch s[i+1] {
	case '$':
		j := i + 2
		for j < len(s) && isMacroNameChar(s[j]) {
			j++
		}
		if j == i+2 {
			return j, fmt.Errorf("empty user macro name")
		}
		if j < len(s) && s[j] == ':' {
			j++
			if strings.HasPrefix(s[j:], "regex:") {
				j += len("regex:")
			}
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j < len(s) && s[j] == '"' {
				end, err := scanString(s, j)
				if err != nil {
					return end, fmt.Errorf("user macro context: %w", err)
				}
				j = end
				for j < len(s) && s[j] == ' ' {
					j++
				}
			} else {
				for j < len(s) && s[j] != '}' {
					j++
				}
			}
		}
		if j >= len(s) || s[j] != '}' {
			return j, fmt.Errorf("unterminated user macro %q", s[start:j])
		}
		return j + 1, nil
	case '#':
		j := i + 2
		for j < len(s) && isMacroNameChar(s[j]) {
			j++
		}
		if j == i+2 || j >= len(s) || s[j] != '}' {
			return j, fmt.Errorf("invalid low-level discovery macro")
		}
		return j + 1, nil
	case '{':
		// Function macro: an inner macro, '.', a name and a
		// parenthesised parameter list that may hold quoted strings.
		inner, err := scanMacro(s, i+1)
		if err != nil {
			return inner, err
		}
		j := inner
		if j >= len(s) || s[j] != '.' {
			return j, fmt.Errorf("invalid function macro")
		}
		j++
		for j < len(s) && isLower(s[j]) {
			j++
		}
		if j >= len(s) || s[j] != '(' {
			return j, fmt.Errorf("invalid function macro")
		}
		j++
		for j < len(s) && s[j] != ')' {
			if s[j] == '"' {
				end, err := scanString(s, j)
				if err != nil {
					return end, err
				}
				j = end
				continue
			}
			j++
		}
		if j+1 >= len(s) || s[j+1] != '}' {
			return j, fmt.Errorf("unterminated function macro")
		}
		return j + 2, nil
	}
	j := i + 1
	for j < len(s) && (s[j] >= 'A' && s[j] <= 'Z' || isDigit(s[j]) || s[j] == '.' || s[j] == '_') {
		j++
	}
	if j == i+1 || j >= len(s) || s[j] != '}' {
		return j, fmt.Errorf("invalid macro")
	}
	return j + 1, nil
}

func isMacroNameChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c == '.'
}
