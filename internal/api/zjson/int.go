package zjson

import "strconv"

// digitPairs is "00" "01" ... "99": two digits per table lookup.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// put4 writes v < 10000 as exactly four digits.
func put4(t []byte, v uint32) {
	hi, lo := v/100*2, v%100*2
	t[0], t[1], t[2], t[3] = digitPairs[hi], digitPairs[hi+1], digitPairs[lo], digitPairs[lo+1]
}

// AppendClock appends a Unix time in decimal. Every clock from 2001 to
// 2286 has ten digits, written from two 32-bit halves without the
// general 64-bit loop of strconv (about half its cost per row).
func AppendClock(b []byte, c int64) []byte {
	if c < 1e9 || c >= 1e10 {
		return strconv.AppendInt(b, c, 10)
	}
	hi, lo := uint32(c/100000), uint32(c%100000) // 5 digits each
	var t [10]byte
	t[0] = byte('0' + hi/10000)
	put4(t[1:5], hi%10000)
	t[5] = byte('0' + lo/10000)
	put4(t[6:10], lo%10000)
	return append(b, t[:]...)
}

// AppendNS appends a nanosecond part in decimal. Nine in ten random
// nanosecond parts (as agents send them) have nine digits: written in
// two 32-bit pieces; others take strconv.
func AppendNS(b []byte, ns int32) []byte {
	if ns < 1e8 || ns >= 1e9 {
		return strconv.AppendInt(b, int64(ns), 10)
	}
	v := uint32(ns)
	hi, lo := v/100000, v%100000 // 4 and 5 digits
	var t [9]byte
	put4(t[0:4], hi)
	t[4] = byte('0' + lo/10000)
	put4(t[5:9], lo%10000)
	return append(b, t[:]...)
}
