package api

import "math"

// decimalPow10 are the scales appendDecimalFloat tries: gauges are
// usually stored with a few decimals (23.45, 0.085).
var decimalPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6}

// appendDecimalFloat is the fast path of appendZabbixFloat: it formats f
// when f is the double nearest to a decimal d with at most 6 fraction
// digits and |f| < 1e9, which is what most stored gauge values are, and
// reports false otherwise. strconv's shortest formatting costs about
// 60–90 ns per value on the benchmark machine, a fifth of history.get's
// CPU for a million float rows; this costs about half of that.
//
// Why the output is the same as strconv.AppendFloat(b, f, 'f', -1, 64):
// m/10^k is a correctly rounded division of exact operands (|m| < 1e15 <
// 2^53), so m/10^k == f means f is the double nearest d = m·10^-k. d
// has at most 15 significant digits, and two different decimals of at
// most 15 digits never round to the same double (DBL_DIG), so no shorter
// decimal reads back as f: d is the shortest representation. The
// smallest k that works leaves no trailing zero (had m ended in 0, k-1
// would have worked), and 1e-6 ≤ |f| < 1e9 is the range where
// appendZabbixFloat uses the 'f' format. Zero is left to strconv (-0).
// TestAppendZabbixFloat and FuzzAppendZabbixFloat check it against
// strconv.
func appendDecimalFloat(b []byte, f float64) ([]byte, bool) {
	if !(f > -1e9 && f < 1e9) || f == 0 { // also NaN
		return b, false
	}
	for k := range decimalPow10 {
		p := decimalPow10[k]
		m := math.Round(f * p)
		if m/p != f {
			continue
		}
		u := uint64(math.Abs(m))
		var tmp [24]byte
		i := len(tmp)
		for range k {
			i--
			tmp[i] = byte('0' + u%10)
			u /= 10
		}
		if k > 0 {
			i--
			tmp[i] = '.'
		}
		for {
			i--
			tmp[i] = byte('0' + u%10)
			u /= 10
			if u == 0 {
				break
			}
		}
		if m < 0 {
			i--
			tmp[i] = '-'
		}
		return append(b, tmp[i:]...), true
	}
	return b, false
}
