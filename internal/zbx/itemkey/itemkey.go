package itemkey

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key Zabbix stores, in characters.
const MaxKeyLen = 2048

// ErrInvalidKey is wrapped by every error Parse returns.
var ErrInvalidKey = errors.New("invalid item key")

// Param is one parameter of a key.
type Param struct {
	// Value is the parameter's text with quotes and escapes removed; ""
	// for an array parameter.
	Value string
	// Quoted reports whether the parameter was written in double quotes.
	Quoted bool
	// Array is non-nil for an array parameter [a,b,"c"]; it then has at
	// least one element, and its elements have no Array of their own.
	Array []Param
}

// Key is a parsed item key.
type Key struct {
	// Name is the part before the brackets.
	Name string
	// Params is nil for a key without brackets; name[] has one empty
	// parameter.
	Params []Param
}

// SyntaxError describes where a key is invalid. It wraps ErrInvalidKey.
type SyntaxError struct {
	Key string // the key as given
	Pos int    // 0-based character (not byte) offset of the problem
	Msg string // what is wrong, without the position
	// Start is where Zabbix's key parser stops: Pos, but the start of
	// the array parameter that holds a nested one.
	Start int
	// end: the key ends before it is complete (an unterminated list or
	// quoted parameter).
	end bool
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid item key %q: %s at position %d", shorten(e.Key), e.Msg, e.Pos)
}

// Zabbix is the reason as Zabbix 6.0's API gives it (recorded from
// 6.0.14, `Invalid key "a[b" for item ...: unexpected end of key.`):
// "unexpected end of key" for a key that ends too early, "key is empty",
// or "incorrect syntax near" the rest of the key from where its parser
// stopped.
func (e *SyntaxError) Zabbix() string {
	switch {
	case e.Key == "":
		return "key is empty"
	case e.end:
		return "unexpected end of key"
	}
	rest := e.Key
	for range e.Start {
		_, n := utf8.DecodeRuneInString(rest)
		rest = rest[n:]
	}
	return `incorrect syntax near "` + rest + `"`
}

// Unwrap returns ErrInvalidKey.
func (e *SyntaxError) Unwrap() error { return ErrInvalidKey }

// shorten keeps error messages readable for very long keys.
func shorten(s string) string {
	const keep = 64
	if len(s) <= keep {
		return s
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// syntaxErr builds a SyntaxError for byte offset i of s.
func syntaxErr(s string, i int, format string, args ...any) error {
	pos := utf8.RuneCountInString(s[:i])
	return &SyntaxError{Key: s, Pos: pos, Start: pos, Msg: fmt.Sprintf(format, args...)}
}

// endErr is a SyntaxError of a key that ends too early.
func endErr(s string, i int, format string, args ...any) error {
	err := syntaxErr(s, i, format, args...).(*SyntaxError)
	err.end = true
	return err
}

func isNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// Parse parses an item key. Unquoted and unescaped values share memory
// with s; only quoted values with \" escapes are copied.
func Parse(s string) (Key, error) {
	if len(s) > MaxKeyLen && utf8.RuneCountInString(s) > MaxKeyLen {
		i := 0
		for range MaxKeyLen {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
		}
		return Key{}, syntaxErr(s, i, "key is %d characters long, more than the maximum %d", utf8.RuneCountInString(s), MaxKeyLen)
	}
	i := 0
	for i < len(s) && isNameChar(s[i]) {
		i++
	}
	switch {
	case len(s) == 0:
		return Key{}, syntaxErr(s, 0, "empty key")
	case i == len(s):
		return Key{Name: s}, nil
	case i == 0 && s[0] == '[':
		return Key{}, syntaxErr(s, 0, "empty key name")
	case s[i] != '[':
		return Key{}, syntaxErr(s, i, "invalid character %s in key name (allowed: 0-9 a-z A-Z _ - .)", charAt(s, i))
	}
	params, end, err := parseList(s, i+1, false)
	if err != nil {
		return Key{}, err
	}
	if end != len(s) {
		return Key{}, syntaxErr(s, end, "unexpected %s after the closing bracket", charAt(s, end))
	}
	return Key{Name: s[:i], Params: params}, nil
}

// charAt quotes the character at byte offset i for an error message.
func charAt(s string, i int) string {
	_, n := utf8.DecodeRuneInString(s[i:])
	return fmt.Sprintf("%q", s[i:i+n])
}

const nestedArrays = "nested array parameters are not allowed"

// parseList parses parameters from s[i:], just after an opening bracket,
// up to and including the matching closing bracket, and returns them with
// the offset after that bracket. inArray is set inside an array
// parameter, where another "[" is an error.
func parseList(s string, i int, inArray bool) ([]Param, int, error) {
	what := "parameter list"
	var params []Param
	if inArray {
		what = "array parameter"
	} else {
		// Commas bound the number of parameters: one allocation.
		params = make([]Param, 0, strings.Count(s[i:], ",")+1)
	}
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i == len(s) {
			return nil, 0, endErr(s, i, "unterminated %s", what)
		}
		var p Param
		switch s[i] {
		case '"':
			v, next, err := parseQuoted(s, i)
			if err != nil {
				return nil, 0, err
			}
			p, i = Param{Value: v, Quoted: true}, skipSpaces(s, next)
			if i < len(s) && s[i] != ',' && s[i] != ']' {
				return nil, 0, syntaxErr(s, i, "unexpected %s after a quoted parameter (want \",\" or \"]\")", charAt(s, i))
			}
		case '[':
			if inArray {
				return nil, 0, syntaxErr(s, i, nestedArrays)
			}
			arr, next, err := parseList(s, i+1, true)
			var se *SyntaxError
			if errors.As(err, &se) && se.Msg == nestedArrays {
				se.Start = utf8.RuneCountInString(s[:i])
			}
			if err != nil {
				return nil, 0, err
			}
			p, i = Param{Array: arr}, skipSpaces(s, next)
			if i < len(s) && s[i] != ',' && s[i] != ']' {
				return nil, 0, syntaxErr(s, i, "unexpected %s after an array parameter (want \",\" or \"]\")", charAt(s, i))
			}
		default:
			j := i
			for j < len(s) && s[j] != ',' && s[j] != ']' {
				j++
			}
			p, i = Param{Value: s[i:j]}, j
		}
		if i == len(s) {
			return nil, 0, endErr(s, i, "unterminated %s", what)
		}
		params = append(params, p)
		if s[i] == ']' {
			return params, i + 1, nil
		}
		i++ // the comma
	}
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// parseQuoted parses the quoted parameter starting at s[i] == '"' and
// returns its value and the offset after the closing quote.
func parseQuoted(s string, i int) (string, int, error) {
	escaped := false
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if j+1 < len(s) && s[j+1] == '"' {
				escaped = true
				j++
			}
		case '"':
			v := s[i+1 : j]
			if escaped {
				// Every \" in v is an escape (the loop above treats each
				// one so), and ReplaceAll finds exactly those.
				v = strings.ReplaceAll(v, `\"`, `"`)
			}
			return v, j + 1, nil
		}
	}
	return "", 0, endErr(s, i, "unterminated quoted parameter")
}

// MapValues replaces the value of every parameter, and of every element
// of an array parameter, with f(value): what expanding macros in a key's
// parameters does. String then quotes a value that needs it.
func (k *Key) MapValues(f func(string) string) {
	for i := range k.Params {
		p := &k.Params[i]
		p.Value = f(p.Value)
		for j := range p.Array {
			p.Array[j].Value = f(p.Array[j].Value)
		}
	}
}

// String returns the key in a form Parse reads back to the same Key.
// Values are quoted when they were (Quoted) or must be: empty values stay
// unquoted unless Quoted, a value that starts with a space, '"' or '[',
// or contains ',' or ']', is quoted, with '"' escaped as \".
//
// Only keys built by hand can be unrepresentable: a value that must be
// quoted but ends in a backslash (it would escape the closing quote), an
// invalid name, or an Array inside an array element (its Value is written
// instead). Parse rejects what String makes of those.
func (k Key) String() string {
	if len(k.Params) == 0 {
		return k.Name
	}
	b := make([]byte, 0, len(k.Name)+2+8*len(k.Params))
	b = append(b, k.Name...)
	b = appendList(b, k.Params, true)
	return string(b)
}

func appendList(b []byte, params []Param, top bool) []byte {
	b = append(b, '[')
	for i, p := range params {
		if i > 0 {
			b = append(b, ',')
		}
		if p.Array != nil && top {
			b = appendList(b, p.Array, false)
			continue
		}
		b = appendValue(b, p.Value, p.Quoted)
	}
	return append(b, ']')
}

func appendValue(b []byte, v string, quoted bool) []byte {
	must := v != "" && (v[0] == ' ' || v[0] == '"' || v[0] == '[' || strings.ContainsAny(v, ",]"))
	if !must && (!quoted || strings.HasSuffix(v, `\`)) {
		return append(b, v...)
	}
	b = append(b, '"')
	for i := 0; i < len(v); i++ {
		if v[i] == '"' {
			b = append(b, '\\')
		}
		b = append(b, v[i])
	}
	return append(b, '"')
}
