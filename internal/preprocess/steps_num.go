package preprocess

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// number is a value read as Zabbix reads it for the numeric steps: an
// unsigned item's value stays unsigned when it is one, everything else is
// a float.
type number struct {
	isUint bool
	u      uint64
	f      float64
}

func (n number) float() float64 {
	if n.isUint {
		return float64(n.u)
	}
	return n.f
}

func (n number) String() string {
	if n.isUint {
		return strconv.FormatUint(n.u, 10)
	}
	return formatFloat(n.f)
}

// formatFloat writes a float as the shortest text that reads back to it,
// without an exponent for ordinary magnitudes (Zabbix prints "%.17g" and
// then drops trailing zeros; the shortest form reads back the same).
func formatFloat(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// toNumber converts a step's input for an item of type vt: unsigned
// first for unsigned items, float otherwise (and for an unsigned item's
// value that is not an unsigned integer, as "1.5").
func toNumber(text string, vt history.ValueType) (number, bool) {
	// A view, not a copy: the parsers only read it.
	b := trimNumber(unsafe.Slice(unsafe.StringData(text), len(text)))
	if vt == history.Uint {
		if u, ok := parseUint(b); ok {
			return number{isUint: true, u: u}, true
		}
	}
	f, ok := parseFloat(b)
	return number{f: f}, ok
}

// desc quotes a value in an error message, cut to 64 bytes (back to a
// character boundary) so that a huge value does not make a huge message.
func desc(v string) string {
	if len(v) > 64 {
		n := 64
		for n > 0 && !utf8.RuneStart(v[n]) {
			n--
		}
		return v[:n] + "..."
	}
	return v
}

type stepErr string

func (e stepErr) Error() string { return string(e) }

const errNotNumeric = "cannot convert value to numeric type"

// factor is a custom multiplier's parameter, parsed once by ParseStep.
type factor struct {
	f      float64
	u      uint64
	isUint bool // an unsigned integer without a fraction: exact for unsigned values
}

func newFactor(param string, f float64) *factor {
	p := strings.TrimSpace(param)
	m := &factor{f: f}
	if u, ok := parseUint([]byte(p)); ok && !strings.Contains(p, ".") {
		m.u, m.isUint = u, true
	}
	return m
}

func multiplier(text, param string, m *factor, vt history.ValueType) (string, error) {
	r, err := multiply(&value{text: text, hasText: true}, param, m, vt)
	if err != nil {
		return "", err
	}
	return r.String(), nil
}

// multiply is the multiplier on in, text or a number.
func multiply(in *value, param string, m *factor, vt history.ValueType) (number, error) {
	n, ok := in.toNumber(vt)
	if !ok {
		return number{}, stepErr(`cannot apply multiplier "` + param + `" to value "` + desc(in.String()) + `" of type "string": ` + errNotNumeric)
	}
	if m == nil {
		f, _ := parseFloat(trimNumber([]byte(param))) // a Step built without ParseStep
		m = newFactor(param, f)
	}
	// An unsigned value times an unsigned multiplier stays exact, as in
	// Zabbix; a fractional multiplier makes a float.
	if n.isUint && m.isUint {
		if m.u == 0 || n.u <= math.MaxUint64/m.u {
			return number{isUint: true, u: n.u * m.u}, nil
		}
	}
	r := n.float() * m.f
	if math.IsInf(r, 0) || math.Abs(r) > 1e308 {
		return number{}, stepErr(`cannot apply multiplier "` + param + `" to value "` + desc(in.String()) + `" of type "string": the result is out of range`)
	}
	if vt == history.Uint && r >= 0 && r < 18446744073709551616.0 {
		// Zabbix converts the float result to the unsigned item's type by
		// truncation.
		return number{isUint: true, u: uint64(r)}, nil
	}
	return number{f: r}, nil
}

// trueWords and falseWords are the texts "Boolean to decimal" accepts,
// compared without case.
var (
	trueWords  = []string{"true", "t", "yes", "y", "on", "up", "running", "enabled", "available", "ok", "master"}
	falseWords = []string{"false", "f", "no", "n", "off", "down", "unused", "disabled", "unavailable", "err", "slave"}
)

func toDecimal(t StepType, text string) (string, error) {
	v := strings.TrimLeft(text, " \"")
	v = strings.TrimRight(v, " \"\n\r")
	var (
		u      uint64
		ok     bool
		format string
	)
	switch t {
	case StepBool2Dec:
		format = "boolean"
		u, ok = parseBool(v)
	case StepOct2Dec:
		format = "octal"
		u, ok = parseBase(v, 8)
	default:
		format = "hexadecimal"
		u, ok = parseBase(v, 16)
		if !ok {
			u, ok = parseHexBytes(v)
		}
	}
	if !ok {
		return "", stepErr(`cannot convert value "` + desc(text) + `" of type "string" from ` + format + ` format: invalid value format`)
	}
	return strconv.FormatUint(u, 10), nil
}

func parseBool(v string) (uint64, bool) {
	if f, ok := parseFloat([]byte(v)); ok {
		if f != 0 {
			return 1, true
		}
		return 0, true
	}
	for _, w := range trueWords {
		if strings.EqualFold(v, w) {
			return 1, true
		}
	}
	for _, w := range falseWords {
		if strings.EqualFold(v, w) {
			return 0, true
		}
	}
	return 0, false
}

// parseBase reads digits of base 8 or 16 only: no sign, no "0x" prefix,
// no overflow.
func parseBase(v string, base int) (uint64, bool) {
	if v == "" || v[0] == '+' || v[0] == '-' || strings.Contains(v, "_") {
		return 0, false
	}
	u, err := strconv.ParseUint(v, base, 64)
	return u, err == nil
}

// parseHexBytes reads a hex dump as SNMP delivers it: two-digit bytes
// separated by spaces or line breaks ("01 0A\n FF").
func parseHexBytes(v string) (uint64, bool) {
	var digits []byte
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\n' }) {
		if len(f) != 2 {
			return 0, false
		}
		digits = append(digits, f...)
	}
	if len(digits) == 0 {
		return 0, false
	}
	return parseBase(string(digits), 16)
}

// delta is "Simple change" and "Change per second". The first value, a
// value smaller than the previous one (a counter reset or wrap-around)
// and, for change per second, a timestamp not after the previous one are
// discarded, as in Zabbix; the state always moves on to the new value.
func delta(t StepType, text string, in Input, ss *stepState) (string, error) {
	d, err := deltaOf(t, &value{text: text, hasText: true}, in, ss)
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// deltaOf is delta on v, text or a number.
func deltaOf(t StepType, v *value, in Input, ss *stepState) (number, error) {
	n, ok := v.toNumber(in.Type)
	if !ok {
		name := "simple change"
		if t == StepDeltaSpeed {
			name = "speed per second"
		}
		return number{}, stepErr(`cannot calculate delta (` + name + `) for value "` + desc(v.String()) + `" of type "string": ` + errNotNumeric)
	}
	prev, prevTime, had := *ss, ss.time, ss.set
	ss.set, ss.isUint, ss.u, ss.f, ss.time = true, n.isUint, n.u, n.f, in.Time
	if !had {
		return number{}, errDiscard
	}
	var dt float64
	if t == StepDeltaSpeed {
		if !in.Time.After(prevTime) {
			return number{}, errDiscard
		}
		dt = in.Time.Sub(prevTime).Seconds()
	}
	if n.isUint && prev.isUint {
		if prev.u > n.u {
			return number{}, errDiscard
		}
		d := n.u - prev.u
		if t == StepDeltaSpeed {
			// Zabbix divides in floating point and truncates for an
			// unsigned item.
			return number{isUint: true, u: uint64(float64(d) / dt)}, nil
		}
		return number{isUint: true, u: d}, nil
	}
	p := number{isUint: prev.isUint, u: prev.u, f: prev.f}.float()
	if p > n.float() {
		return number{}, errDiscard
	}
	d := n.float() - p
	if t == StepDeltaSpeed {
		d /= dt
	}
	return number{f: d}, nil
}

// validateRange is "In range". Its refusal names the bounds as written
// in the step (recorded from 6.0.14's server: "value is less than 0 or
// greater than 100", "value is less than 5", "value is greater than 5").
func validateRange(text string, p []string, vt history.ValueType) (string, error) {
	n, ok := toNumber(text, vt)
	if !ok {
		return "", stepErr(errNotNumeric)
	}
	v := n.float()
	out := false
	if p[0] != "" {
		if lo, _ := parseFloat(trimNumber([]byte(p[0]))); v < lo {
			out = true
		}
	}
	if p[1] != "" {
		if hi, _ := parseFloat(trimNumber([]byte(p[1]))); v > hi {
			out = true
		}
	}
	if !out {
		return text, nil
	}
	switch {
	case p[0] != "" && p[1] != "":
		return "", stepErr("value is less than " + p[0] + " or greater than " + p[1])
	case p[0] != "":
		return "", stepErr("value is less than " + p[0])
	}
	return "", stepErr("value is greater than " + p[1])
}

// throttle is "Discard unchanged" and, with a heartbeat, "Discard
// unchanged with heartbeat": a value equal (as text) to the last kept one
// is discarded, unless the heartbeat has passed since that one was kept.
func throttle(s *Step, text string, now time.Time, ss *stepState) (string, error) {
	if ss.set && ss.prevText() == text {
		if err := s.unchanged(now, ss); err != nil {
			return "", err
		}
	}
	// A copy, into the step's own buffer (reused, so a changing value
	// costs no allocation): text may be a span of a large master
	// document (a JSONPath result) or of the submitter's request
	// buffer, which the state must not keep. ss.text views ss.buf and
	// is replaced whenever ss.buf is rewritten; nothing else holds it.
	ss.buf = append(ss.buf[:0], text...)
	ss.set, ss.numSet, ss.text, ss.time = true, false, unsafe.String(unsafe.SliceData(ss.buf), len(ss.buf)), now
	return text, nil
}

// throttleNum is throttle on a number, the result of a numeric step
// before it: the same decision as on the number's text (two numbers of
// one kind have equal texts exactly when their bits are equal), without
// making the text; the state keeps the number.
func throttleNum(s *Step, n number, now time.Time, ss *stepState) error {
	if ss.set {
		var same bool
		if ss.numSet && ss.num.isUint == n.isUint {
			same = ss.num.u == n.u && math.Float64bits(ss.num.f) == math.Float64bits(n.f)
		} else {
			same = ss.prevText() == n.String()
		}
		if same {
			if err := s.unchanged(now, ss); err != nil {
				return err
			}
		}
	}
	ss.set, ss.numSet, ss.num, ss.text, ss.time = true, true, n, "", now
	return nil
}

// unchanged decides for a value equal to the last kept one: errDiscard,
// or nil when the heartbeat has passed.
func (s *Step) unchanged(now time.Time, ss *stepState) error {
	if s.Type == StepThrottleValue {
		return errDiscard
	}
	hb, _ := parseHeartbeat(s.Params[0]) // validated by ParseStep
	if now.Sub(ss.time) < hb {
		return errDiscard
	}
	return nil
}

// prevText is the last kept value of a discard step as text.
func (ss *stepState) prevText() string {
	if ss.numSet {
		return ss.num.String()
	}
	return ss.text
}
