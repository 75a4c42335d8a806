package chunkenc

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
}

const (
	// maxExp bounds the decimal exponent: 10^22 is the largest exact
	// power of ten, so M·10^e and M/10^e are single correctly rounded
	// operations.
	maxExp = 22
	// maxDecimals is the most fraction digits the encoder looks for.
	maxDecimals = 18
)

// EncodeFloats appends a chunk of float values with timestamps ts (unix
// nanoseconds) to dst and returns the extended slice. It picks the
// smallest of the float encodings; decoding gives back bit-identical
// values. It panics if len(ts) != len(vals) or len(ts) > MaxCount.
func EncodeFloats(dst []byte, ts []int64, vals []float64) []byte {
	return encodeFloats(dst, ts, vals, 0)
}

// encodeFloats is EncodeFloats restricted to one encoding when force is
// not 0 (benchmarks and tests use it to compare encodings). A forced
// encoding that cannot represent vals falls back to the automatic choice.
func encodeFloats(dst []byte, ts []int64, vals []float64, force Encoding) []byte {
	checkLens("EncodeFloats", len(ts), len(vals))
	n := len(vals)
	if n == 0 {
		return appendHeader(dst, EncFloatRaw, ts)
	}
	start := len(dst)
	sc := getScratch()
	defer putScratch(sc)

	allSame := true
	first := math.Float64bits(vals[0])
	for _, v := range vals[1:] {
		if math.Float64bits(v) != first {
			allSame = false
			break
		}
	}
	if allSame && (force == 0 || force == EncFloatConst) {
		dst = appendHeader(dst, EncFloatConst, ts)
		dst = appendTimestamps(dst, ts, sc)
		return binary.LittleEndian.AppendUint64(dst, first)
	}

	dst = appendHeader(dst, EncFloatRaw, ts)
	dst = appendTimestamps(dst, ts, sc)
	valStart := len(dst)

	// Candidates in order of decoding speed, so that ties go to the
	// faster one.
	tryDecimal := force == 0 || force == EncFloatDecimal
	tryXOR := force == 0 || force == EncFloatXOR
	best, bestSize := EncFloatRaw, 8*n
	if force != 0 && force != EncFloatRaw {
		bestSize = math.MaxInt
	}
	if tryDecimal {
		var ok bool
		if dst, ok = appendDecimal(dst, vals, sc); ok {
			if size := len(dst) - valStart; size <= bestSize {
				best, bestSize = EncFloatDecimal, size
				sc.c1 = append(sc.c1[:0], dst[valStart:]...)
			}
		} else if force != 0 {
			tryXOR = true
		}
		dst = dst[:valStart]
	}
	if tryXOR && (xorSize(vals) < bestSize || force != 0) {
		dst = appendXOR(dst, vals)
		if size := len(dst) - valStart; size < bestSize {
			best, bestSize = EncFloatXOR, size
			sc.c1 = append(sc.c1[:0], dst[valStart:]...)
		}
		dst = dst[:valStart]
	}
	if (force == 0 || force == EncFloatRate) && bestSize > 2*n && rateLikely(ts, vals) {
		var ok bool
		if dst, ok = appendRate(dst, ts, vals); ok {
			if size := len(dst) - valStart; size < bestSize {
				best, bestSize = EncFloatRate, size
				sc.c1 = append(sc.c1[:0], dst[valStart:]...)
			}
		}
		dst = dst[:valStart]
	}
	dst[start] = byte(best)
	if best == EncFloatRaw {
		for _, v := range vals {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
		}
		return dst
	}
	return append(dst, sc.c1...)
}

// decodeDecimal is the one formula that turns a mantissa and exponent
// back into a float64; the encoder verifies every value through it.
func decodeDecimal(m int64, e int) float64 {
	switch {
	case e < 0:
		return float64(m) / pow10[-e]
	case e > 0:
		return float64(m) * pow10[e]
	}
	return float64(m)
}

// mantissaAt returns m with decodeDecimal(m, -k) bit-identical to v, if
// there is one.
func mantissaAt(v float64, k int) (int64, bool) {
	r := math.Round(v * pow10[k])
	if !(r > -(1<<63) && r < 1<<63) { // also false for NaN
		return 0, false
	}
	m := int64(r)
	return m, math.Float64bits(decodeDecimal(m, -k)) == math.Float64bits(v)
}

// decimalize finds the exponent e for which every value is an integer
// mantissa times 10^e, verified through decodeDecimal, and stores the
// mantissas in m. -0, NaN, ±Inf and values with more than maxDecimals
// fraction digits make it fail.
func decimalize(vals []float64, m []uint64) (int, bool) {
	K := 0
	for i, v := range vals {
		if mi, ok := mantissaAt(v, K); ok {
			m[i] = uint64(mi)
			continue
		}
		found := false
		for k := K + 1; k <= maxDecimals; k++ {
			mi, ok := mantissaAt(v, k)
			if !ok {
				continue
			}
			// Rescale the mantissas found so far. A value exact at K is
			// exact at k with the mantissa times 10^(k-K) while that stays
			// within 2^53: the mantissa and the power of ten are then
			// exact, and the correctly rounded quotient of the same real
			// number is the same float64. Beyond 2^53, verify.
			p := int64(pow10[k-K])
			for j := range i {
				mj := int64(m[j])
				if mj > 1<<53/p || mj < -(1<<53)/p {
					nm, ok := mantissaAt(vals[j], k)
					if !ok {
						return 0, false
					}
					m[j] = uint64(nm)
					continue
				}
				m[j] = uint64(mj * p)
			}
			m[i] = uint64(mi)
			K, found = k, true
			break
		}
		if !found {
			return 0, false
		}
	}
	if K > 0 {
		return -K, true
	}
	// Integers: factor out trailing decimal zeros common to all values.
	j := maxExp
	for _, u := range m[:len(vals)] {
		mi := int64(u)
		if mi == 0 {
			continue
		}
		z := 0
		for z < j && mi%10 == 0 {
			mi /= 10
			z++
		}
		j = z
		if j == 0 {
			return 0, true
		}
	}
	if j == maxExp {
		return 0, true // all zeros
	}
	p := int64(1)
	for range j {
		p *= 10
	}
	for i, v := range vals {
		mi := int64(m[i]) / p
		if math.Float64bits(decodeDecimal(mi, j)) != math.Float64bits(v) {
			// Undo: keep exponent 0.
			for k := range i {
				m[k] = uint64(int64(m[k]) * p)
			}
			return 0, true
		}
		m[i] = uint64(mi)
	}
	return j, true
}

// appendDecimal appends the FloatDecimal value stream if every value is a
// decimal:
//
//	varint e, byte order, varint M[0], then for n ≥ 2 the varint parameter
//	of the order and its int stream (see deltas.go).
func appendDecimal(dst []byte, vals []float64, sc *scratch) ([]byte, bool) {
	n := len(vals)
	m := grow(sc.u, n)
	sc.u = m
	e, ok := decimalize(vals, m)
	if !ok {
		return dst, false
	}
	dst = binary.AppendVarint(dst, int64(e))
	m0 := int64(m[0])
	if n == 1 {
		dst = append(dst, orderDelta)
		return binary.AppendVarint(dst, m0), true
	}
	for i := n - 1; i >= 1; i-- {
		m[i] -= m[i-1]
	}
	order, param, elems, plan := chooseDeltas(m, sc)
	dst = append(dst, order)
	dst = binary.AppendVarint(dst, m0)
	dst = binary.AppendVarint(dst, param)
	return appendIntsPlan(dst, elems, &plan), true
}

// appendXOR appends the FloatXOR bitstream: the first value's 64 bits,
// then per value the XOR x with the previous value's bits as
//
//	'0'                         x == 0
//	'10' + window bits          x fits the current window
//	'11' + 6-bit leading zeros + 6-bit (significant bits - 1)
//	     + significant bits     opens a new window
func appendXOR(dst []byte, vals []float64) []byte {
	w := bitWriter{b: dst}
	prev := math.Float64bits(vals[0])
	w.write(prev, 64)
	var wl, wt, wsig uint // current window: leading, trailing, significant
	for _, v := range vals[1:] {
		cur := math.Float64bits(v)
		x := cur ^ prev
		prev = cur
		if x == 0 {
			w.write(0, 1)
			continue
		}
		lead := uint(bits.LeadingZeros64(x))
		trail := uint(bits.TrailingZeros64(x))
		sig := 64 - lead - trail
		// Reuse the window unless it wastes more bits than a new header.
		if wsig != 0 && lead >= wl && trail >= wt && wsig <= sig+12 {
			w.write(0b10, 2)
			w.write(x>>wt, wsig)
			continue
		}
		w.write(0b11<<12|uint64(lead)<<6|uint64(sig-1), 14)
		w.write(x>>trail, sig)
		wl, wt, wsig = lead, trail, sig
	}
	return w.finish()
}

// xorSize returns the size in bytes of appendXOR's output, without
// writing it.
func xorSize(vals []float64) int {
	nbits := 64
	prev := math.Float64bits(vals[0])
	var wl, wt, wsig uint
	for _, v := range vals[1:] {
		cur := math.Float64bits(v)
		x := cur ^ prev
		prev = cur
		if x == 0 {
			nbits++
			continue
		}
		lead := uint(bits.LeadingZeros64(x))
		trail := uint(bits.TrailingZeros64(x))
		sig := 64 - lead - trail
		if wsig != 0 && lead >= wl && trail >= wt && wsig <= sig+12 {
			nbits += 2 + int(wsig)
			continue
		}
		nbits += 14 + int(sig)
		wl, wt, wsig = lead, trail, sig
	}
	return (nbits + 7) / 8
}

// DecodeFloats decodes a float chunk, appending its timestamps to ts and
// its values to vals. On error it returns ts and vals with their original
// lengths and an error wrapping ErrCorrupt.
func DecodeFloats(ts []int64, vals []float64, src []byte) ([]int64, []float64, error) {
	r := reader{b: src}
	info, err := r.header()
	if err != nil {
		return ts, vals, err
	}
	switch info.Encoding {
	case EncFloatConst, EncFloatRaw, EncFloatXOR, EncFloatDecimal, EncFloatRate:
	default:
		return ts, vals, corruptAt("encoding", 0, "%v is not a float encoding", info.Encoding)
	}
	n := info.Count
	nts, nvals := len(ts), len(vals)
	ts = slices.Grow(ts, n)[:nts+n]
	vals = slices.Grow(vals, n)[:nvals+n]
	if err := decodeFloatChunk(&r, &info, ts[nts:], vals[nvals:]); err != nil {
		return ts[:nts], vals[:nvals], err
	}
	return ts, vals, nil
}

func decodeFloatChunk(r *reader, info *Info, ts []int64, vals []float64) error {
	n := len(vals)
	if err := decodeTimestamps(r, info, ts); err != nil {
		return err
	}
	if n == 0 {
		return r.end()
	}
	switch info.Encoding {
	case EncFloatConst:
		b, err := r.bytes("constant value", 8)
		if err != nil {
			return err
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(b))
		for i := range vals {
			vals[i] = v
		}
	case EncFloatRaw:
		if n > (len(r.b)-r.off)/8 {
			return r.corrupt("raw values", "%d values need %d bytes, %d left", n, 8*n, len(r.b)-r.off)
		}
		b, _ := r.bytes("raw values", 8*n)
		for i := range vals {
			vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case EncFloatXOR:
		if err := decodeXOR(r, vals); err != nil {
			return err
		}
	case EncFloatDecimal:
		if err := decodeDecimalStream(r, vals); err != nil {
			return err
		}
	case EncFloatRate:
		if err := decodeRate(r, ts, vals); err != nil {
			return err
		}
	}
	return r.end()
}

func decodeXOR(r *reader, vals []float64) error {
	br := newBitReader(r.rest())
	prev := br.read64(64)
	vals[0] = math.Float64frombits(prev)
	var wt, wsig uint
	for i := 1; i < len(vals); i++ {
		if br.n < 2 {
			br.refill()
		}
		switch br.acc >> 62 {
		case 0, 1: // '0'
			br.acc <<= 1
			br.n--
		case 2: // '10'
			br.acc <<= 2
			br.n -= 2
			if wsig == 0 {
				return r.corrupt("xor values", "value %d reuses a window before any was opened", i)
			}
			prev ^= br.read64(wsig) << wt
		case 3: // '11'
			br.acc <<= 2
			br.n -= 2
			h := br.read(12)
			lead, sig := uint(h>>6), uint(h&63)+1
			if lead+sig > 64 {
				return r.corrupt("xor values", "value %d: window of %d leading and %d significant bits", i, lead, sig)
			}
			wt, wsig = 64-lead-sig, sig
			prev ^= br.read64(sig) << wt
		}
		vals[i] = math.Float64frombits(prev)
	}
	used, ok := br.consumed()
	if !ok {
		return r.corrupt("xor values", "bitstream runs past the end of the chunk")
	}
	r.off += used
	return nil
}

func decodeDecimalStream(r *reader, vals []float64) error {
	n := len(vals)
	off := r.off
	e64, err := r.varint("decimal exponent")
	if err != nil {
		return err
	}
	if e64 < -maxExp || e64 > maxExp {
		return corruptAt("decimal exponent", off, "%d outside ±%d", e64, maxExp)
	}
	e := int(e64)
	off = r.off
	order, err := r.byte("decimal order")
	if err != nil {
		return err
	}
	if order != orderDelta && order != orderDoD {
		return corruptAt("decimal order", off, "unknown order %d", order)
	}
	m, err := r.varint("first mantissa")
	if err != nil {
		return err
	}
	vals[0] = decodeDecimal(m, e)
	if n == 1 {
		if order != orderDelta {
			return corruptAt("decimal order", off, "delta of delta for one value")
		}
		return nil
	}
	param, err := r.varint("mantissa delta parameter")
	if err != nil {
		return err
	}
	sc := getScratch()
	defer putScratch(sc)
	u := grow(sc.u, n)
	sc.u = u
	vals = vals[:len(u)] // lets the compiler drop bounds checks below
	if order == orderDelta {
		if err := decodeInts(r, "mantissa deltas", u[1:]); err != nil {
			return err
		}
		base := param
		if e < 0 {
			p := pow10[-e]
			for i := 1; i < len(u); i++ {
				x := u[i]
				m += base + (int64(x>>1) ^ -int64(x&1))
				vals[i] = float64(m) / p
			}
		} else {
			p := pow10[e]
			for i := 1; i < len(u); i++ {
				x := u[i]
				m += base + (int64(x>>1) ^ -int64(x&1))
				vals[i] = float64(m) * p
			}
		}
		return nil
	}
	d := param
	m += d
	vals[1] = decodeDecimal(m, e)
	if err := decodeInts(r, "mantissa deltas of deltas", u[2:]); err != nil {
		return err
	}
	if e < 0 {
		p := pow10[-e]
		for i := 2; i < len(u); i++ {
			x := u[i]
			d += int64(x>>1) ^ -int64(x&1)
			m += d
			vals[i] = float64(m) / p
		}
	} else {
		p := pow10[e]
		for i := 2; i < len(u); i++ {
			x := u[i]
			d += int64(x>>1) ^ -int64(x&1)
			m += d
			vals[i] = float64(m) * p
		}
	}
	return nil
}

// The rate encoding (issue 30) stores the values of a counter's change
// per second, as Zabbix's "change per second" preprocessing computes
// them from the counter's difference and the two timestamps:
//
//	v[i] = float64(Δ[i]) / (float64(sec[i]-sec[i-1]) + float64(ns[i]-ns[i-1])/1e9) · m
//
// with integer Δ[i], sec and ns the whole seconds and nanoseconds of the
// chunk's own timestamps, and m a multiplier (1, or 8 for bits from
// bytes). Such a value has a full 52-bit mantissa that no XOR or decimal
// coding shortens, but Δ is as small as the counter's increments. Body:
//
//	8 bytes    v[0] (its previous timestamp is in another chunk)
//	uvarint    m
//	byte       order: orderDelta (Δ[i]) or orderDoD (Δ[i] − Δ[i−1])
//	int stream n-1 zigzag values, i ≥ 1 (0 where v[i] is an exception)
//	uvarint    exceptions, then for each: uvarint gap from the previous
//	           exception's index (from 0), 8 bytes v[i]
//
// It applies only when timestamps are exact (precision ns): at a coarser
// precision the stored times no longer give the divisor, every value is
// an exception and another encoding wins.

// rateMults are the multipliers the encoder tries.
var rateMults = [...]int64{1, 8}

// rateDivisor is the change-per-second divisor between two timestamps.
func rateDivisor(a, b int64) float64 {
	return float64(floorDiv(b, splitUnit)-floorDiv(a, splitUnit)) + float64(floorMod(b, splitUnit)-floorMod(a, splitUnit))/1e9
}

// rateValue is the one formula the decoder and the encoder's check use.
func rateValue(d int64, dt float64, m int64) float64 {
	v := float64(d) / dt
	if m != 1 {
		v *= float64(m)
	}
	return v
}

// rateDeltas fills d[i] (i ≥ 1) with Δ[i] for multiplier m and returns
// how many values are exceptions (ok[i] false).
func rateDeltas(ts []int64, vals []float64, m int64, d []int64, ok []bool) int {
	exc := 0
	for i := 1; i < len(vals); i++ {
		dt := rateDivisor(ts[i-1], ts[i])
		x := math.Round(vals[i] / float64(m) * dt)
		ok[i] = false
		d[i] = 0
		if dt > 0 && x > -(1<<53) && x < 1<<53 {
			if di := int64(x); math.Float64bits(rateValue(di, dt, m)) == math.Float64bits(vals[i]) {
				d[i], ok[i] = di, true
			}
		}
		if !ok[i] {
			exc++
		}
	}
	return exc
}

// rateLikely reports whether the first values look like rates: at most
// a quarter of the first 17 are exceptions for one multiplier.
func rateLikely(ts []int64, vals []float64) bool {
	k := min(len(vals), 17)
	if k < 3 {
		return false
	}
	var d [17]int64
	var ok [17]bool
	for _, m := range rateMults {
		if rateDeltas(ts[:k], vals[:k], m, d[:k], ok[:k]) <= (k-1)/4 {
			return true
		}
	}
	return false
}

// appendRate appends the rate body of vals, or reports false when more
// than a quarter of the values are exceptions.
func appendRate(dst []byte, ts []int64, vals []float64) ([]byte, bool) {
	n := len(vals)
	if n < 3 {
		return dst, false
	}
	d := make([]int64, n)
	ok := make([]bool, n)
	m := int64(0)
	for _, mm := range rateMults {
		if rateDeltas(ts, vals, mm, d, ok) <= n/4 {
			m = mm
			break
		}
	}
	if m == 0 {
		return dst, false
	}
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(vals[0]))
	dst = binary.AppendUvarint(dst, uint64(m))
	u := make([]uint64, n-1)
	for i := 1; i < n; i++ {
		u[i-1] = zigzag(d[i])
	}
	plain := appendInts(nil, u)
	prev := int64(0)
	for i := 1; i < n; i++ {
		u[i-1] = zigzag(d[i] - prev)
		prev = d[i]
	}
	if dod := appendInts(nil, u); len(dod) < len(plain) {
		dst = append(dst, orderDoD)
		dst = append(dst, dod...)
	} else {
		dst = append(dst, orderDelta)
		dst = append(dst, plain...)
	}
	exc := 0
	for i := 1; i < n; i++ {
		if !ok[i] {
			exc++
		}
	}
	dst = binary.AppendUvarint(dst, uint64(exc))
	last := 0
	for i := 1; i < n; i++ {
		if !ok[i] {
			dst = binary.AppendUvarint(dst, uint64(i-last))
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(vals[i]))
			last = i
		}
	}
	return dst, true
}

func decodeRate(r *reader, ts []int64, vals []float64) error {
	n := len(vals)
	b, err := r.bytes("first rate value", 8)
	if err != nil {
		return err
	}
	vals[0] = math.Float64frombits(binary.LittleEndian.Uint64(b))
	off := r.off
	m64, err := r.uvarint("rate multiplier")
	if err != nil {
		return err
	}
	if m64 != 1 && m64 != 8 {
		return corruptAt("rate multiplier", off, "%d is not 1 or 8", m64)
	}
	m := int64(m64)
	off = r.off
	order, err := r.byte("rate order")
	if err != nil {
		return err
	}
	if order != orderDelta && order != orderDoD {
		return corruptAt("rate order", off, "unknown order %d", order)
	}
	if n < 2 {
		return corruptAt("rate order", off, "a rate chunk of %d values", n)
	}
	sc := getScratch()
	defer putScratch(sc)
	u := grow(sc.u, n-1)
	sc.u = u
	if err := decodeInts(r, "rate deltas", u); err != nil {
		return err
	}
	prev := int64(0)
	for i := 1; i < n; i++ {
		x := u[i-1]
		d := int64(x>>1) ^ -int64(x&1)
		if order == orderDoD {
			d += prev
			prev = d
		}
		vals[i] = rateValue(d, rateDivisor(ts[i-1], ts[i]), m)
	}
	off = r.off
	exc, err := r.uvarint("rate exceptions")
	if err != nil {
		return err
	}
	if exc > uint64(n-1) {
		return corruptAt("rate exceptions", off, "%d exceptions for %d values", exc, n)
	}
	at := uint64(0)
	for range exc {
		off = r.off
		gap, err := r.uvarint("rate exception index")
		if err != nil {
			return err
		}
		if gap == 0 || gap > uint64(n-1)-at {
			return corruptAt("rate exception index", off, "gap %d after index %d of %d values", gap, at, n)
		}
		at += gap
		b, err := r.bytes("rate exception value", 8)
		if err != nil {
			return err
		}
		vals[at] = math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	return nil
}
