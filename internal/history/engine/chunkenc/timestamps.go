package chunkenc

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// The timestamp stream follows the header; it is empty for chunks of
// fewer than two values (the header holds the only timestamp). Otherwise:
//
//	byte k, uvarint m: the unit g = m·10^k ≥ 1; every delta between
//	        neighbours is a multiple of g
//	byte    mode: tsDoD or tsGrid
//	body
//
// All arithmetic is modulo 2^64, so any int64 sequence round-trips.
// With t[i] = t[0] + g·S[i] and s[i] = S[i] - S[i-1] (scaled deltas):
//
//	tsDoD:  varint s[1], then an int stream of n-2 zigzag(s[i]-s[i-1])
//	tsGrid: varint D, varint o, then an int stream of n-1 values
//	        u[i] = S[i] - i·D - o (i ≥ 1)
//
// The unit makes exact-second timestamps cost nothing beyond their
// pattern; the grid mode stores only the jitter of values polled on a
// fixed interval, which delta-of-delta would double.
const (
	tsDoD   byte = 1
	tsGrid  byte = 2
	tsSplit byte = 3
)

// The split mode (issue 10) stores whole seconds and the sub-second part
// of each timestamp apart:
//
//	tsSplit: a timestamp stream (mode tsDoD or tsGrid) of the seconds
//	         floor(t[i] / 10^9), i = 0 … n-1, then an int stream of n-1
//	         values (t[i] mod 10^9) / g, i ≥ 1
//
// A value an agent sends a second late or early moves its whole
// timestamp by 10^9 ns; in one stream that jitter and the random
// sub-second part add up to a residual range of about three seconds,
// which packed mode stores in ⌈log2(3·10^9/g)⌉ bits plus exceptions.
// Apart, the sub-second part costs exactly ⌈log2(10^9/g)⌉ bits (10 at
// millisecond precision) and the seconds cost what their jitter costs in
// a sparse stream (under a bit). On the realistic data set it takes
// millisecond timestamps from 1.53 to about 1.42 bytes per value.
const splitUnit = int64(1e9)

// When appendTimestampsSplit may use the split mode.
const (
	splitNever  = iota // inside a split stream's seconds; tests
	splitAuto          // when it saves enough, see below
	splitAlways        // whenever possible (tests and benchmarks)
)

// appendTimestamps appends the timestamp stream of ts.
func appendTimestamps(dst []byte, ts []int64, sc *scratch) []byte {
	return appendTimestampsSplit(dst, ts, sc, splitAuto)
}

// appendTimestampsSplit is appendTimestamps with the split mode as split
// says.
func appendTimestampsSplit(dst []byte, ts []int64, sc *scratch, split int) []byte {
	n := len(ts)
	if n < 2 {
		return dst
	}
	// Unit: the gcd of the deltas' magnitudes.
	var g uint64
	for i := 1; i < n && g != 1; i++ {
		d := ts[i] - ts[i-1]
		m := uint64(d)
		if d < 0 {
			m = -m
		}
		g = gcd(g, m)
	}
	if g == 0 || g > 1<<62 {
		g = 1
	}

	// Scaled cumulative offsets S[i] in sc.u (as uint64 bits).
	S := grow(sc.u, n)
	sc.u = S
	S[0] = 0
	// Exact division by g as a shift and a multiplication by the inverse
	// of g's odd part modulo 2^64: every delta is a multiple of g, and a
	// 64-bit division costs ten times more.
	tz := uint(bits.TrailingZeros64(g))
	inv := inverseOdd(g >> tz)
	for i := 1; i < n; i++ {
		S[i] = S[i-1] + uint64((ts[i]-ts[i-1])>>tz)*inv
	}

	// Delta of delta, in sc.u2.
	dod := grow(sc.u2, n)
	sc.u2 = dod
	s1 := int64(S[1])
	prev := s1
	for i := 2; i < n; i++ {
		s := int64(S[i] - S[i-1])
		dod[i] = zigzag(s - prev)
		prev = s
	}
	dodPlan := planFor(dod[2:])
	dodSize := dodPlan.size() + uvarintLen(zigzag(s1))

	// Grid residuals, in sc.u3: try the least-squares slope and the
	// end-to-end slope, unless the deltas of deltas are already nearly
	// free (regular timestamps), which the grid cannot beat.
	res := grow(sc.u3, n)
	sc.u3 = res
	var gridPlan intPlan
	bestD, bestO, gridSize := int64(0), int64(0), math.MaxInt
	if n >= 3 && dodSize > 8 {
		d0 := int64(S[n-1]) / int64(n-1)
		d1 := d0 + lsqCorrection(S, d0)
		cands := []int64{d1, d0}
		if d0 == d1 {
			cands = cands[:1]
		}
		var filled int64 // the D whose residuals res holds
		for _, D := range cands {
			o := gridOffset(S, D)
			gridFill(res, S, D, o)
			filled = D
			p := planFor(res[1:])
			size := p.size() + uvarintLen(zigzag(D)) + uvarintLen(zigzag(o))
			if size < gridSize {
				bestD, bestO, gridSize, gridPlan = D, o, size, p
			}
		}
		if filled != bestD {
			gridFill(res, S, bestD, bestO)
		}
	}

	// Split: only for sub-second units and timestamps that are not
	// already nearly free, and only when it saves at least a twentieth:
	// it decodes about 1.5 times slower than a plain stream
	// (BenchmarkTimestamps), which pays for 8 % fewer bytes at
	// millisecond precision but not for the 3 % it saves at nanoseconds,
	// where the 30 random bits of the sub-second part dominate either way.
	if split != splitNever && n >= 3 && g < uint64(splitUnit) && (min(dodSize, gridSize) > 8 || split == splitAlways) {
		var ub [16]byte
		plain := len(appendUnit(ub[:0], g)) + 1 + min(dodSize, gridSize)
		start := len(dst)
		var ok bool
		if dst, ok = appendSplit(dst, ts, g); ok && (len(dst)-start < plain-plain/20 || split == splitAlways) {
			return dst
		}
		dst = dst[:start]
	}

	dst = appendUnit(dst, g)
	if gridSize < dodSize {
		dst = append(dst, tsGrid)
		dst = binary.AppendVarint(dst, bestD)
		dst = binary.AppendVarint(dst, bestO)
		return appendIntsPlan(dst, res[1:], &gridPlan)
	}
	dst = append(dst, tsDoD)
	dst = binary.AppendVarint(dst, s1)
	return appendIntsPlan(dst, dod[2:], &dodPlan)
}

// appendSplit appends the unit, the tsSplit mode and its body for ts,
// whose deltas are multiples of g. It reports false when no sub-second
// unit divides every timestamp's sub-second part.
func appendSplit(dst []byte, ts []int64, g uint64) ([]byte, bool) {
	h := gcd(gcd(g, uint64(splitUnit)), uint64(floorMod(ts[0], splitUnit)))
	if h == 0 || h >= uint64(splitUnit) {
		return dst, false
	}
	sc := getScratch()
	defer putScratch(sc)
	secs := grow(sc.i1, len(ts)) // the nested call uses sc.u … sc.u3
	sc.i1 = secs
	fine := grow(sc.u4, len(ts)-1)
	sc.u4 = fine
	for i, t := range ts {
		secs[i] = floorDiv(t, splitUnit)
		if i > 0 {
			fine[i-1] = uint64(floorMod(t, splitUnit)) / h
		}
	}
	dst = appendUnit(dst, h)
	dst = append(dst, tsSplit)
	dst = appendTimestampsSplit(dst, secs, sc, splitNever)
	return appendInts(dst, fine), true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// lsqCorrection returns the rounded least-squares slope of the residuals
// S[i] - i·d0, the correction that centres the grid on jittered samples.
func lsqCorrection(S []uint64, d0 int64) int64 {
	n := float64(len(S))
	mi := (n - 1) / 2
	var sr float64
	base := int64(0)
	for i := range S {
		sr += float64(int64(S[i]) - base)
		base += d0
	}
	mr := sr / n
	var num, den float64
	base = 0
	for i := range S {
		di := float64(i) - mi
		num += di * (float64(int64(S[i])-base) - mr)
		den += di * di
		base += d0
	}
	if den == 0 {
		return 0
	}
	c := math.Round(num / den)
	if math.IsNaN(c) || math.Abs(c) > 1<<53 {
		return 0
	}
	return int64(c)
}

// gridOffset returns the minimum residual S[i] - i·D over i ≥ 1.
func gridOffset(S []uint64, D int64) int64 {
	o := int64(math.MaxInt64)
	base := int64(0)
	for i := 1; i < len(S); i++ {
		base += D
		if r := int64(S[i]) - base; r < o {
			o = r
		}
	}
	return o
}

// gridFill stores u[i] = S[i] - i·D - o in out[1:].
func gridFill(out, S []uint64, D, o int64) {
	base := int64(0)
	for i := 1; i < len(S); i++ {
		base += D
		out[i] = uint64(int64(S[i]) - base - o)
	}
}

// appendUnit appends the unit g as a byte k and a uvarint m with
// g = m·10^k, so that 60 s (6·10^10 ns) takes 2 bytes instead of 6.
func appendUnit(dst []byte, g uint64) []byte {
	k := byte(0)
	for g%10 == 0 && k < 18 {
		g /= 10
		k++
	}
	dst = append(dst, k)
	return binary.AppendUvarint(dst, g)
}

func readUnit(r *reader) (uint64, error) {
	off := r.off
	k, err := r.byte("timestamp unit exponent")
	if err != nil {
		return 0, err
	}
	if k > 18 {
		return 0, corruptAt("timestamp unit exponent", off, "%d exceeds 18", k)
	}
	off = r.off
	m, err := r.uvarint("timestamp unit")
	if err != nil {
		return 0, err
	}
	g := m
	for range k {
		hi, lo := bits.Mul64(g, 10)
		if hi != 0 {
			return 0, corruptAt("timestamp unit", off, "%d·10^%d overflows", m, k)
		}
		g = lo
	}
	if g == 0 || g > 1<<63 {
		return 0, corruptAt("timestamp unit", off, "%d·10^%d out of range", m, k)
	}
	return g, nil
}

// inverseOdd returns the inverse of the odd number x modulo 2^64.
func inverseOdd(x uint64) uint64 {
	y := x // correct to 3 bits: x·x ≡ 1 mod 8 for odd x
	for range 5 {
		y *= 2 - x*y // Newton's iteration doubles the correct bits
	}
	return y
}

func gcd(a, b uint64) uint64 {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	// Binary gcd.
	shift := bits.TrailingZeros64(a | b)
	a >>= bits.TrailingZeros64(a)
	for b != 0 {
		b >>= bits.TrailingZeros64(b)
		if a > b {
			a, b = b, a
		}
		b -= a
	}
	return a << shift
}

// decodeTimestamps decodes the timestamp stream of a chunk whose header is
// info into out (len(out) == info.Count).
func decodeTimestamps(r *reader, info *Info, out []int64) error {
	return decodeTimestampsSplit(r, info, out, true)
}

// decodeSplit decodes a tsSplit body with sub-second unit h.
func decodeSplit(r *reader, info *Info, out []int64, h int64) error {
	if h >= splitUnit || splitUnit%h != 0 {
		return r.corrupt("timestamp unit", "%d does not divide a second for the split mode", h)
	}
	n := len(out)
	sc := getScratch()
	defer putScratch(sc)
	fine := grow(sc.u, n-1)
	sc.u = fine
	limit := uint64(splitUnit / h)

	// The seconds on a grid (what agents' timestamps give) are decoded
	// fused with the sub-second parts: the residuals go to out, and one
	// pass computes every timestamp from them, the grid and the
	// sub-second part. A loop per step (grid, then combining) made the
	// split stream decode at half the speed of a plain one.
	nested := r.off
	gs, err := readUnit(r)
	if err != nil {
		return err
	}
	mode, err := r.byte("timestamp mode")
	if err != nil {
		return err
	}
	if mode != tsGrid {
		r.off = nested
		secInfo := Info{Count: info.Count, MinT: floorDiv(info.MinT, splitUnit), MaxT: floorDiv(info.MaxT, splitUnit)}
		if err := decodeTimestampsSplit(r, &secInfo, out, false); err != nil {
			return err
		}
		if err := decodeInts(r, "timestamp sub-second parts", fine); err != nil {
			return err
		}
		for i := 1; i < n; i++ {
			f := fine[i-1]
			if f >= limit {
				return r.corrupt("timestamp sub-second parts", "element %d is %d, not below %d", i, f, limit)
			}
			out[i] = out[i]*splitUnit + int64(f)*h
		}
		out[0] = info.MinT
		return nil
	}
	D, err := r.varint("timestamp grid interval")
	if err != nil {
		return err
	}
	o, err := r.varint("timestamp grid offset")
	if err != nil {
		return err
	}
	if err := decodeInts(r, "timestamp grid residuals", out[1:]); err != nil {
		return err
	}
	if err := decodeInts(r, "timestamp sub-second parts", fine); err != nil {
		return err
	}
	g := int64(gs)
	base := floorDiv(info.MinT, splitUnit) + g*o
	step := g * D
	bad := false
	for i := 1; i < n; i++ {
		base += step
		f := fine[i-1]
		bad = bad || f >= limit
		out[i] = (base+g*out[i])*splitUnit + int64(f)*h
	}
	if bad {
		for i, f := range fine {
			if f >= limit {
				return r.corrupt("timestamp sub-second parts", "element %d is %d, not below %d", i+1, f, limit)
			}
		}
	}
	out[0] = info.MinT
	return nil
}

func decodeTimestampsSplit(r *reader, info *Info, out []int64, split bool) error {
	n := len(out)
	if n == 0 {
		return nil
	}
	t0 := info.MinT
	out[0] = t0
	if n == 1 {
		return nil
	}
	g, err := readUnit(r)
	if err != nil {
		return err
	}
	gi := int64(g)
	off := r.off
	mode, err := r.byte("timestamp mode")
	if err != nil {
		return err
	}
	switch mode {
	case tsDoD:
		s, err := r.varint("first timestamp delta")
		if err != nil {
			return err
		}
		if err := decodeInts(r, "timestamp deltas of deltas", out[2:]); err != nil {
			return err
		}
		// Accumulate in units of g and multiply per value: that keeps the
		// multiplication out of the loop-carried dependency chain.
		S := s
		out[1] = t0 + gi*S
		for i := 2; i < len(out); i++ {
			u := uint64(out[i])
			s += int64(u>>1) ^ -int64(u&1)
			S += s
			out[i] = t0 + gi*S
		}
	case tsGrid:
		D, err := r.varint("timestamp grid interval")
		if err != nil {
			return err
		}
		o, err := r.varint("timestamp grid offset")
		if err != nil {
			return err
		}
		if err := decodeInts(r, "timestamp grid residuals", out[1:]); err != nil {
			return err
		}
		base := t0 + gi*o
		step := gi * D
		for i := 1; i < len(out); i++ {
			base += step
			out[i] = base + gi*out[i]
		}
	case tsSplit:
		if !split {
			return corruptAt("timestamp mode", off, "split mode inside a split stream")
		}
		if err := decodeSplit(r, info, out, gi); err != nil {
			return err
		}
	default:
		return corruptAt("timestamp mode", off, "unknown mode %d", mode)
	}
	if out[n-1] != info.MaxT {
		return r.corrupt("timestamps", "last timestamp %d differs from the header's %d", out[n-1], info.MaxT)
	}
	return nil
}
