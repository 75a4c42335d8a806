package zjson

import (
	"math"
	"strconv"
)

// AppendFloat appends f as the shortest decimal that reads back
// exactly, without an exponent for ordinary magnitudes (the Zabbix
// database returns plain decimals), as every float of an API answer is
// written: history rows, trends, item.get's last values. Values with a
// few decimals take a faster path with the same output.
func AppendFloat(b []byte, f float64) []byte {
	if out, ok := appendDecimalFloat(b, f); ok {
		return out
	}
	if a := math.Abs(f); a != 0 && (a >= 1e15 || a < 1e-6) {
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// appendDecimalFloat is the fast path of AppendFloat: it formats f
// when f is the double nearest to a decimal d with at most 6 fraction
// digits and |f| < 1e9, which is what most stored gauge values are, and
// reports false otherwise. strconv's shortest formatting costs about
// 50–70 ns per value on the benchmark machine, a fifth of history.get's
// CPU for a million float rows; this costs a fraction of that.
//
// Why the output is the same as strconv.AppendFloat(b, f, 'f', -1, 64):
// m/10^6 is a correctly rounded division of exact operands (|m| < 1e15
// < 2^53), so m/10^6 == f means f is the double nearest d = m·10^-6. d
// has at most 15 significant digits, and two different decimals of at
// most 15 digits never round to the same double (DBL_DIG), so no shorter
// decimal reads back as f: d without its trailing zeros is the shortest
// representation. Conversely, when f is the double nearest some
// m'·10^-k with k ≤ 6, f·10^6 lies within 0.17 of the integer
// m'·10^(6-k) (half an ulp of f < 1e9 scaled by 10^6, plus the
// multiplication's rounding), so rounding finds that integer and the one
// division decides; trying k = 0, 1, 2, ... in turn cost a multiply, a
// rounding and a division each, four for a three-decimal gauge. 1e-6 ≤
// |f| < 1e9 is the range where AppendFloat uses the 'f' format.
// Zero is left to strconv (-0). TestAppendFloat and FuzzAppendFloat
// check it against strconv.
func appendDecimalFloat(b []byte, f float64) ([]byte, bool) {
	if !(f > -1e9 && f < 1e9) || f == 0 { // also NaN
		return b, false
	}
	m := math.RoundToEven(f * 1e6)
	if m/1e6 != f {
		return b, false
	}
	neg := m < 0
	if neg {
		m = -m
	}
	u := uint64(m)
	ip, fp := uint32(u/1e6), uint32(u%1e6) // integer part < 1e9, six fraction digits
	// t holds the integer part ending at t[16], then the point and the
	// fraction.
	var t [24]byte
	i := 16
	for ip >= 100 {
		d := ip % 100 * 2
		ip /= 100
		i -= 2
		t[i], t[i+1] = digitPairs[d], digitPairs[d+1]
	}
	if ip >= 10 {
		d := ip * 2
		i -= 2
		t[i], t[i+1] = digitPairs[d], digitPairs[d+1]
	} else {
		i--
		t[i] = byte('0' + ip)
	}
	if neg {
		i--
		t[i] = '-'
	}
	end := 16
	if fp != 0 {
		t[16] = '.'
		d := fp / 10000 * 2
		t[17], t[18] = digitPairs[d], digitPairs[d+1]
		put4(t[19:23], fp%10000)
		end = 23
		for t[end-1] == '0' {
			end--
		}
	}
	return append(b, t[i:end]...), true
}
