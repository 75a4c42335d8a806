package expr

import (
	"math"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// args evaluates every argument; the first unknown one is returned as
// the error (functions of values propagate unknown).
func (ev *evaluator) args(c *Call) ([]Value, *Value) {
	out := make([]Value, len(c.Args))
	for i, a := range c.Args {
		out[i] = ev.eval(a)
		if out[i].IsError() {
			return nil, &out[i]
		}
	}
	return out, nil
}

func (ev *evaluator) numArgs(c *Call) ([]float64, *Value) {
	vs, errv := ev.args(c)
	if errv != nil {
		return nil, errv
	}
	out := make([]float64, len(vs))
	for i, v := range vs {
		f, ok := v.number()
		if !ok {
			e := callError(c, "parameter %d: %q is not a number", i+1, v.text())
			return nil, &e
		}
		out[i] = f
	}
	return out, nil
}

// math1 wraps a function of one number; domain says where it is
// defined (nil = everywhere).
func math1(fn func(float64) float64, domain func(float64) bool) evalFunc {
	return func(ev *evaluator, c *Call) Value {
		v, errv := ev.numArgs(c)
		if errv != nil {
			return *errv
		}
		if domain != nil && !domain(v[0]) {
			return callError(c, "%v is outside the function's domain", v[0])
		}
		return checkedNumber(c, fn(v[0]))
	}
}

func mathN(fn func(v []float64) (float64, string)) evalFunc {
	return func(ev *evaluator, c *Call) Value {
		v, errv := ev.numArgs(c)
		if errv != nil {
			return *errv
		}
		r, bad := fn(v)
		if bad != "" {
			return callError(c, "%s", bad)
		}
		return checkedNumber(c, r)
	}
}

func positive(x float64) bool    { return x > 0 }
func nonNegative(x float64) bool { return x >= 0 }
func unit(x float64) bool        { return x >= -1 && x <= 1 }

func roundTo(v []float64, trunc bool) (float64, string) {
	d := v[1]
	if d != math.Trunc(d) || d < 0 || d > 308 {
		return 0, "decimal places must be a whole number from 0 to 308"
	}
	p := math.Pow(10, d)
	if trunc {
		return math.Trunc(v[0]*p) / p, ""
	}
	return math.Round(v[0]*p) / p, ""
}

// toUint converts a number to the unsigned integer the bitwise functions
// work on.
func toUint(f float64) (uint64, bool) {
	if f < 0 || f != math.Trunc(f) || f > math.MaxUint64 {
		return 0, false
	}
	return uint64(f), true
}

func bitwise(op string) evalFunc {
	return mathN(func(v []float64) (float64, string) {
		a, ok := toUint(v[0])
		if !ok {
			return 0, "bitwise functions need non-negative integers"
		}
		if op == "bitnot" {
			return float64(^a), ""
		}
		b, ok := toUint(v[1])
		if !ok {
			return 0, "bitwise functions need non-negative integers"
		}
		switch op {
		case "bitand":
			return float64(a & b), ""
		case "bitor":
			return float64(a | b), ""
		case "bitxor":
			return float64(a ^ b), ""
		case "bitlshift":
			if b > 64 {
				return 0, "shift larger than 64"
			}
			return float64(a << b), ""
		}
		if b > 64 {
			return 0, "shift larger than 64"
		}
		return float64(a >> b), ""
	})
}

func fnRand(ev *evaluator, _ *Call) Value { return NumberValue(float64(ev.rand())) }

// fnIn is 1 when the first argument equals any of the others, compared
// as numbers when both are numeric and as strings otherwise (the = rule).
func fnIn(ev *evaluator, c *Call) Value {
	vs, errv := ev.args(c)
	if errv != nil {
		return *errv
	}
	for _, v := range vs[1:] {
		if valuesEqual(vs[0], v) {
			return NumberValue(1)
		}
	}
	return NumberValue(0)
}

func valuesEqual(a, b Value) bool {
	af, aok := a.number()
	bf, bok := b.number()
	if aok && bok {
		return numEqual(af, bf)
	}
	return a.text() == b.text()
}

func fnBetween(ev *evaluator, c *Call) Value {
	v, errv := ev.numArgs(c)
	if errv != nil {
		return *errv
	}
	return boolValue(v[0] >= v[1] && v[0] <= v[2])
}

// String functions count characters, not bytes, as Zabbix's UTF-8
// aware ones do (except bytelength and bitlength).

func (ev *evaluator) strAndInts(c *Call) (string, []int, *Value) {
	vs, errv := ev.args(c)
	if errv != nil {
		return "", nil, errv
	}
	ints := make([]int, 0, len(vs))
	for i, v := range vs[1:] {
		f, ok := v.number()
		if !ok || f != math.Trunc(f) || f < 0 || f > 1<<20 {
			e := callError(c, "parameter %d: %q is not a valid count", i+2, v.text())
			return "", nil, &e
		}
		ints = append(ints, int(f))
	}
	return vs[0].text(), ints, nil
}

func fnLeft(ev *evaluator, c *Call) Value {
	s, n, errv := ev.strAndInts(c)
	if errv != nil {
		return *errv
	}
	r := []rune(s)
	return StringValue(string(r[:min(n[0], len(r))]))
}

func fnRight(ev *evaluator, c *Call) Value {
	s, n, errv := ev.strAndInts(c)
	if errv != nil {
		return *errv
	}
	r := []rune(s)
	return StringValue(string(r[len(r)-min(n[0], len(r)):]))
}

// fnMid is mid(string, start, length) with a 1-based start.
func fnMid(ev *evaluator, c *Call) Value {
	s, n, errv := ev.strAndInts(c)
	if errv != nil {
		return *errv
	}
	r := []rune(s)
	if n[0] < 1 || n[0] > len(r) {
		return callError(c, "start %d is outside the string (length %d)", n[0], len(r))
	}
	start := n[0] - 1
	return StringValue(string(r[start:min(start+n[1], len(r))]))
}

func fnRepeat(ev *evaluator, c *Call) Value {
	s, n, errv := ev.strAndInts(c)
	if errv != nil {
		return *errv
	}
	if len(s)*n[0] > MaxLength {
		return callError(c, "result longer than %d bytes", MaxLength)
	}
	return StringValue(strings.Repeat(s, n[0]))
}

// fnInsert is insert(string, start, length, replacement): replaces
// length characters from the 1-based start.
func fnInsert(ev *evaluator, c *Call) Value {
	vs, errv := ev.args(c)
	if errv != nil {
		return *errv
	}
	r := []rune(vs[0].text())
	start, ok1 := vs[1].number()
	length, ok2 := vs[2].number()
	if !ok1 || !ok2 || start != math.Trunc(start) || length != math.Trunc(length) || length < 0 || start < 1 || start > float64(len(r)+1) {
		return callError(c, "invalid start or length")
	}
	i := int(start) - 1
	j := len(r)
	if length < float64(len(r)-i) {
		j = i + int(length)
	}
	return StringValue(string(r[:i]) + vs[3].text() + string(r[j:]))
}

func fnReplace(ev *evaluator, c *Call) Value {
	vs, errv := ev.args(c)
	if errv != nil {
		return *errv
	}
	if vs[1].text() == "" {
		return StringValue(vs[0].text())
	}
	return StringValue(strings.ReplaceAll(vs[0].text(), vs[1].text(), vs[2].text()))
}

func fnConcat(ev *evaluator, c *Call) Value {
	vs, errv := ev.args(c)
	if errv != nil {
		return *errv
	}
	var b strings.Builder
	for _, v := range vs {
		b.WriteString(v.text())
	}
	return StringValue(b.String())
}

// trimmer builds ltrim, rtrim and trim; the default set is white space.
func trimmer(fn func(s, cut string) string) evalFunc {
	return func(ev *evaluator, c *Call) Value {
		vs, errv := ev.args(c)
		if errv != nil {
			return *errv
		}
		cut := " \t\r\n"
		if len(vs) > 1 {
			cut = vs[1].text()
		}
		return StringValue(fn(vs[0].text(), cut))
	}
}

func str1(fn func(c *Call, s Value) Value) evalFunc {
	return func(ev *evaluator, c *Call) Value {
		vs, errv := ev.args(c)
		if errv != nil {
			return *errv
		}
		return fn(c, vs[0])
	}
}

func fnLength(_ *Call, v Value) Value {
	return NumberValue(float64(utf8.RuneCountInString(v.text())))
}

func fnASCII(c *Call, v Value) Value {
	s := v.text()
	if s == "" {
		return callError(c, "empty string")
	}
	return NumberValue(float64(s[0]))
}

func fnChar(c *Call, v Value) Value {
	f, ok := v.number()
	if !ok || f != math.Trunc(f) || f < 0 || f > 255 {
		return callError(c, "%q is not a character code 0 to 255", v.text())
	}
	return StringValue(string([]byte{byte(f)}))
}

// fnByteLength and fnBitLength measure strings in bytes or bits; an
// integer counts by its binary form, as Zabbix does for unsigned items.
func fnByteLength(_ *Call, v Value) Value {
	if u, ok := toUint(v.Num); v.Kind == KindNumber && ok {
		return NumberValue(float64((bits.Len64(u) + 7) / 8))
	}
	return NumberValue(float64(len(v.text())))
}

func fnBitLength(_ *Call, v Value) Value {
	if u, ok := toUint(v.Num); v.Kind == KindNumber && ok {
		return NumberValue(float64(bits.Len64(u)))
	}
	return NumberValue(float64(len(v.text()) * 8))
}

// Date and time functions use the evaluation time in Options.Location.

func fnDate(ev *evaluator, _ *Call) Value {
	t := ev.opt.Now.In(ev.opt.Location)
	return NumberValue(float64(t.Year()*10000 + int(t.Month())*100 + t.Day()))
}

func fnTime(ev *evaluator, _ *Call) Value {
	t := ev.opt.Now.In(ev.opt.Location)
	return NumberValue(float64(t.Hour()*10000 + t.Minute()*100 + t.Second()))
}

func fnNow(ev *evaluator, _ *Call) Value { return NumberValue(float64(ev.opt.Now.Unix())) }

func fnDayOfMonth(ev *evaluator, _ *Call) Value {
	return NumberValue(float64(ev.opt.Now.In(ev.opt.Location).Day()))
}

// fnDayOfWeek is 1 for Monday to 7 for Sunday.
func fnDayOfWeek(ev *evaluator, _ *Call) Value {
	wd := int(ev.opt.Now.In(ev.opt.Location).Weekday())
	if wd == 0 {
		wd = 7
	}
	return NumberValue(float64(wd))
}
