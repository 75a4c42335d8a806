package usermacro

import (
	"errors"
	"fmt"
	"strings"
)

// Ref is a parsed user macro reference or definition name.
type Ref struct {
	Name string // "CPU.UTIL.CRIT" of {$CPU.UTIL.CRIT}
	// HasContext is set when a context follows the name, even an empty
	// one ({$A:""}).
	HasContext bool
	Context    string // unquoted
	// Regex is set for {$NAME:regex:"..."}: Context is then a regular
	// expression (definitions only, see the package doc).
	Regex bool
}

// ErrSyntax is wrapped by the errors of ParseRef and ScanRef.
var ErrSyntax = errors.New("incorrect user macro syntax")

// SyntaxError is a macro that does not parse: where and why. It wraps
// ErrSyntax.
type SyntaxError struct {
	Macro string // the text given
	Pos   int    // byte offset where the parse stopped (len(Macro): at its end)
	Msg   string // what is wrong
}

func (e *SyntaxError) Error() string { return ErrSyntax.Error() + ": " + e.Msg }

// Unwrap returns ErrSyntax.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Zabbix is the reason as Zabbix 6.0's API gives it for a macro name
// (recorded from 6.0.14: `Invalid parameter "/1/macro": incorrect
// syntax near "bad".`): "unexpected end of macro" when the text ends
// before the macro does, else "incorrect syntax near" the rest of the
// text from where the parse stopped.
func (e *SyntaxError) Zabbix() string {
	if e.Pos >= len(e.Macro) {
		return "unexpected end of macro"
	}
	return `incorrect syntax near "` + e.Macro[e.Pos:] + `"`
}

func syntaxErr(s string, pos int, format string, args ...any) error {
	return &SyntaxError{Macro: s, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// maxLen is Zabbix's length of a macro field (hostmacro.macro).
const maxLen = 255

// ParseRef parses s, which must be exactly one macro reference.
func ParseRef(s string) (Ref, error) {
	r, n, err := ScanRef(s)
	if err != nil {
		return Ref{}, err
	}
	if n != len(s) {
		return Ref{}, syntaxErr(s, n, "unexpected %q after the macro", s[n:])
	}
	return r, nil
}

// ScanRef parses the macro reference at the start of s ("{$" first) and
// returns it with its length in bytes.
func ScanRef(s string) (Ref, int, error) {
	if !strings.HasPrefix(s, "{$") {
		pos := 0
		if strings.HasPrefix(s, "{") {
			pos = 1
		}
		return Ref{}, 0, syntaxErr(s, pos, "a user macro starts with \"{$\"")
	}
	j := 2
	for j < len(s) && isNameChar(s[j]) {
		j++
	}
	var r Ref
	r.Name = s[2:j]
	if r.Name == "" {
		return Ref{}, 0, syntaxErr(s, j, "empty macro name (use A-Z, 0-9, '_' and '.')")
	}
	if j >= len(s) {
		return Ref{}, 0, syntaxErr(s, j, "missing '}'")
	}
	switch s[j] {
	case '}':
		return r, j + 1, nil
	case ':':
	default:
		return Ref{}, 0, syntaxErr(s, j, "unexpected %q in the macro name (use A-Z, 0-9, '_' and '.')", s[j])
	}
	j++
	r.HasContext = true
	if strings.HasPrefix(s[j:], "regex:") {
		r.Regex = true
		j += len("regex:")
	}
	for j < len(s) && s[j] == ' ' {
		j++
	}
	if j < len(s) && s[j] == '"' {
		var b strings.Builder
		j++
		for {
			if j >= len(s) {
				return Ref{}, 0, syntaxErr(s, j, "unterminated quoted context")
			}
			c := s[j]
			if c == '"' {
				j++
				break
			}
			if c == '\\' && j+1 < len(s) && s[j+1] == '"' {
				c = '"'
				j++
			}
			b.WriteByte(c)
			j++
		}
		r.Context = b.String()
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j >= len(s) || s[j] != '}' {
			return Ref{}, 0, syntaxErr(s, j, "expected '}' after the quoted context")
		}
		return r, j + 1, nil
	}
	if r.Regex {
		// Zabbix requires the pattern quoted: {$A:regex:"^x"}.
		return Ref{}, 0, syntaxErr(s, j, "a regex context must be quoted: {$%s:regex:\"pattern\"}", r.Name)
	}
	k := strings.IndexByte(s[j:], '}')
	if k < 0 {
		return Ref{}, 0, syntaxErr(s, len(s), "missing '}'")
	}
	r.Context = s[j : j+k]
	return r, j + k + 1, nil
}

func isNameChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// Key is the definition's identity: the name with its context in one
// spelling, so that {$A:x} and {$A:"x"} compare equal. It is also the
// canonical spelling (String): unquoted where the context allows, as
// Zabbix's templates write most contexts, quoted otherwise. A quoted
// context ending in a backslash has no spelling that parses back (Zabbix
// shares the ambiguity); its Key is still unique.
func (r Ref) Key() string {
	if !r.HasContext {
		return "{$" + r.Name + "}"
	}
	var b strings.Builder
	b.WriteString("{$")
	b.WriteString(r.Name)
	b.WriteByte(':')
	if r.Regex {
		b.WriteString("regex:")
	} else if c := r.Context; c != "" && c[0] != ' ' && c[0] != '"' && !strings.HasPrefix(c, "regex:") && !strings.Contains(c, "}") {
		b.WriteString(c)
		b.WriteByte('}')
		return b.String()
	}
	b.WriteByte('"')
	b.WriteString(strings.ReplaceAll(r.Context, `"`, `\"`))
	b.WriteString(`"}`)
	return b.String()
}

// String returns the canonical spelling; see Key.
func (r Ref) String() string { return r.Key() }

// CheckDefinition validates s as the macro field of a definition and
// returns it parsed: a reference, at most 255 characters, whose regular
// expression context (if any) compiles.
func CheckDefinition(s string) (Ref, error) {
	if len(s) > maxLen {
		return Ref{}, fmt.Errorf("%w: longer than %d characters", ErrSyntax, maxLen)
	}
	r, err := ParseRef(s)
	if err != nil {
		return Ref{}, err
	}
	if r.Regex {
		if _, err := compile(r.Context); err != nil {
			return Ref{}, err
		}
	}
	return r, nil
}
