package ingest

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

// convertError says why a value does not fit its item's value type.
type convertError struct {
	vt    history.ValueType
	value string
}

func (e *convertError) Error() string {
	v := e.value
	if len(v) > 64 {
		v = v[:64] + "..."
	}
	return "value \"" + v + "\" is not suitable for value type \"" + e.vt.String() + "\""
}

// convert parses raw into s according to vt. raw is not retained: string
// values are copied.
func convert(vt history.ValueType, raw []byte, s *history.Sample) error {
	s.Type = vt
	switch vt {
	case history.Float:
		f, ok := parseFloat(trimNumber(raw))
		if !ok {
			return &convertError{vt, string(raw)}
		}
		s.F = f
	case history.Uint:
		u, ok := parseUint(trimNumber(raw))
		if !ok {
			return &convertError{vt, string(raw)}
		}
		s.U = u
	case history.Str:
		s.S = truncateChars(raw, maxStrChars)
	case history.Text, history.Log:
		s.S = truncateChars(raw, maxTextChars)
	default:
		return &convertError{vt, string(raw)}
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
// invalid bytes become '?', as Zabbix replaces them.
func truncateChars(b []byte, n int) string {
	if len(b) <= n && utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, min(len(b), 4*n))
	for chars := 0; len(b) > 0 && chars < n; chars++ {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			out = append(out, '?')
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return string(out)
}
