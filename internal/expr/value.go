package expr

import (
	"math"
	"strconv"
	"strings"
)

// Kind is the kind of a Value.
type Kind uint8

const (
	KindNumber Kind = iota // a float64
	KindString             // a string
	KindError              // unknown, with the reason in Err
)

// Value is the result of evaluating an expression or a part of it: a
// number, a string, or an error (Zabbix's "unknown" with its text).
type Value struct {
	Kind Kind
	Num  float64
	Str  string
	Err  string
}

// NumberValue, StringValue and ErrorValue build values.
func NumberValue(f float64) Value { return Value{Kind: KindNumber, Num: f} }

// StringValue is a string value.
func StringValue(s string) Value { return Value{Kind: KindString, Str: s} }

// ErrorValue is an unknown value with its reason.
func ErrorValue(msg string) Value { return Value{Kind: KindError, Err: msg} }

// IsError reports whether v is unknown.
func (v Value) IsError() bool { return v.Kind == KindError }

// String formats v as Zabbix shows a calculated value: numbers without
// a trailing ".0", strings as they are, errors as unknown(reason).
func (v Value) String() string {
	switch v.Kind {
	case KindNumber:
		return formatNumber(v.Num)
	case KindString:
		return v.Str
	}
	return "unknown(" + v.Err + ")"
}

// Bool reports whether v is TRUE for a trigger (a non-zero number); ok
// is false when v is unknown or not a number.
func (v Value) Bool() (truth, ok bool) {
	f, ok := v.number()
	return ok && f != 0, ok
}

func formatNumber(f float64) string {
	if math.Abs(f) >= 1e15 || (f != 0 && math.Abs(f) < 1e-6) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// number converts v to a number: numbers as they are, strings that hold
// a number (with an optional unit suffix, as macro values often do:
// "5m", "1K"), nothing else.
func (v Value) number() (float64, bool) {
	switch v.Kind {
	case KindNumber:
		return v.Num, true
	case KindString:
		return parseNumericString(v.Str)
	}
	return 0, false
}

// text converts v to a string (numbers formatted).
func (v Value) text() string {
	if v.Kind == KindNumber {
		return formatNumber(v.Num)
	}
	return v.Str
}

// parseNumericString accepts what Zabbix treats as a numeric string: an
// optionally signed decimal number with an optional suffix, surrounding
// spaces allowed.
func parseNumericString(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || !(isDigit(s[0]) || s[0] == '.') {
		return 0, false
	}
	end, err := scanNumber(s, 0)
	if err != nil || end != len(s) {
		return 0, false
	}
	f, err := parseNumber(s)
	if err != nil {
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}

// epsilon is Zabbix's tolerance for = and <> between numbers.
const epsilon = 2.22e-16

func numEqual(a, b float64) bool { return math.Abs(a-b) <= epsilon }
