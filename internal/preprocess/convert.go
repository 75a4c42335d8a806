package preprocess

import (
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Limits on string values, in characters, as the Zabbix database columns.
const (
	maxStrChars  = 255
	maxTextChars = 65535
)

// ConvertError says why a value does not fit its item's value type.
type ConvertError struct {
	Type history.ValueType
	// Value is the start of the refused value: at most 64 bytes, then
	// "..." if it was longer, so that refusing a huge value does not
	// copy it.
	Value string
}

// Error is Zabbix 6.0's text for an item made not supported by such a
// value (recorded: internal/conformance, case zabbix_utils, step items):
// the values a sender or an agent delivers are strings.
func (e *ConvertError) Error() string {
	return "Value of type \"string\" is not suitable for value type \"" + e.Type.String() + "\". Value \"" + e.Value + "\""
}

func convertError(vt history.ValueType, raw []byte) error {
	if len(raw) > 64 {
		return &ConvertError{vt, string(raw[:64]) + "..."}
	}
	return &ConvertError{vt, string(raw)}
}

// Convert parses raw, a value's text as a sender or a check delivers it,
// into s according to vt: s.Type and one of s.F, s.U or s.S. raw is not
// retained: string values are copied, so raw may alias a reused buffer.
// The error, a *ConvertError, quotes at most 64 bytes of raw.
//
// Numbers are converted without allocating. Character values are cut to
// 255 characters and text and log values to 65535, as the Zabbix
// database columns; invalid UTF-8 bytes become '?'. The copy of a string
// value is never longer than raw, which lets a caller bound the memory a
// request's conversions take before making them.
func Convert(vt history.ValueType, raw []byte, s *history.Sample) error {
	s.Type = vt
	switch vt {
	case history.Float:
		f, ok := parseFloat(trimNumber(raw))
		if !ok {
			return convertError(vt, raw)
		}
		s.F = f
	case history.Uint:
		u, ok := parseUint(trimNumber(raw))
		if !ok {
			return convertError(vt, raw)
		}
		s.U = u
	case history.Str:
		s.S = truncateChars(raw, maxStrChars)
	case history.Text, history.Log:
		s.S = truncateChars(raw, maxTextChars)
	default:
		return convertError(vt, raw)
	}
	return nil
}

// trimNumber drops the spaces, tabs, CR and LF Zabbix tolerates around a
// number.
func trimNumber(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// parseFloat accepts what Zabbix accepts for a float item: an optional
// sign, digits with an optional fraction, an optional exponent; no inf,
// nan, hex or digit separators, and |x| <= 1e308.
func parseFloat(b []byte) (float64, bool) {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	digits := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		exp := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return 0, false
		}
	}
	if i != len(b) {
		return 0, false
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64)
	if err != nil || math.Abs(f) > 1e308 {
		return 0, false
	}
	return f, true
}

// parseUint accepts decimal 0..2^64-1, with an optional all-zero fraction
// ("12.000"), as Zabbix does for unsigned items.
func parseUint(b []byte) (uint64, bool) {
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	if dot := indexByte(b, '.'); dot >= 0 {
		for _, c := range b[dot+1:] {
			if c != '0' {
				return 0, false
			}
		}
		b = b[:dot]
	}
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	return u, true
}

func indexByte(b []byte, c byte) int {
	for i := range b {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// truncateChars returns b as a valid UTF-8 string of at most n characters;
// invalid bytes become '?', as Zabbix replaces them. The result is built
// in one allocation no longer than b: one pass measures it, a second
// fills it.
func truncateChars(b []byte, n int) string {
	if len(b) <= n && utf8.Valid(b) {
		return string(b)
	}
	size, chars := 0, 0
	for rest := b; len(rest) > 0 && chars < n; chars++ {
		_, w := utf8.DecodeRune(rest)
		size += w // an invalid byte (w == 1) becomes one '?'
		rest = rest[w:]
	}
	out := make([]byte, size)
	for i := 0; i < size; {
		r, w := utf8.DecodeRune(b)
		if r == utf8.RuneError && w <= 1 {
			out[i] = '?'
		} else {
			copy(out[i:], b[:w])
		}
		i += w
		b = b[w:]
	}
	return unsafe.String(unsafe.SliceData(out), len(out))
}
