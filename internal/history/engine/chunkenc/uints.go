package chunkenc

import (
	"encoding/binary"
	"slices"
)

// EncodeUints appends a chunk of unsigned values with timestamps ts to dst
// and returns the extended slice. Every uint64 round-trips exactly: deltas
// are taken modulo 2^64, so a counter that wraps or resets costs one large
// delta, not a failure. It panics if len(ts) != len(vals) or len(ts) >
// MaxCount.
//
// Value streams:
//
//	UintConst: uvarint v
//	UintDelta: uvarint v[0], varint B, int stream of n-1 zigzag(d[i]-B)
//	UintDoD:   uvarint v[0], varint d[1], int stream of n-2
//	           zigzag(d[i]-d[i-1])
//	UintScaled: uvarint v[0], uvarint g ≥ 2, byte order, then the
//	           UintDelta or UintDoD stream of the deltas divided by g
//
// where d[i] = v[i]-v[i-1] and B is the median delta (see deltas.go).
func EncodeUints(dst []byte, ts []int64, vals []uint64) []byte {
	checkLens("EncodeUints", len(ts), len(vals))
	n := len(vals)
	if n == 0 {
		return appendHeader(dst, EncUintDelta, ts)
	}
	sc := getScratch()
	defer putScratch(sc)
	allSame := true
	for _, v := range vals[1:] {
		if v != vals[0] {
			allSame = false
			break
		}
	}
	start := len(dst)
	dst = appendHeader(dst, EncUintConst, ts)
	dst = appendTimestamps(dst, ts, sc) // uses sc.u and sc.u2: first
	dst = binary.AppendUvarint(dst, vals[0])
	if allSame {
		return dst
	}
	// n ≥ 2 from here: a single value is constant.
	d := grow(sc.u, n)
	sc.u = d
	for i := 1; i < n; i++ {
		d[i] = vals[i] - vals[i-1]
	}
	order, param, elems, plan := chooseDeltas(d, sc)
	if g := deltaGCD(d[1:]); g >= 2 {
		// Try the deltas divided by their common factor; keep the
		// smaller (planning again if the unscaled deltas win, as both
		// plans share the scratch buffers).
		plain := plan.size() + uvarintLen(zigzag(param))
		s := grow(sc.u4, n)
		sc.u4 = s
		for i := 1; i < n; i++ {
			s[i] = uint64(int64(d[i]) / int64(g))
		}
		sorder, sparam, selems, splan := chooseDeltas(s, sc)
		if splan.size()+uvarintLen(zigzag(sparam))+uvarintLen(g)+1 < plain {
			dst[start] = byte(EncUintScaled)
			dst = binary.AppendUvarint(dst, g)
			dst = append(dst, sorder)
			dst = binary.AppendVarint(dst, sparam)
			return appendIntsPlan(dst, selems, &splan)
		}
		order, param, elems, plan = chooseDeltas(d, sc)
	}
	if order == orderDelta {
		dst[start] = byte(EncUintDelta)
	} else {
		dst[start] = byte(EncUintDoD)
	}
	dst = binary.AppendVarint(dst, param)
	return appendIntsPlan(dst, elems, &plan)
}

// deltaGCD returns the gcd of the deltas' magnitudes as int64, or 0 when
// it is above 2^62 or all deltas are 0.
func deltaGCD(d []uint64) uint64 {
	var g uint64
	for _, x := range d {
		m := x
		if int64(x) < 0 {
			m = -x
		}
		if g = gcd(g, m); g == 1 {
			return 1
		}
	}
	if g > 1<<62 {
		return 0
	}
	return g
}

// DecodeUints decodes an unsigned chunk, appending its timestamps to ts
// and its values to vals. On error it returns ts and vals with their
// original lengths and an error wrapping ErrCorrupt.
func DecodeUints(ts []int64, vals []uint64, src []byte) ([]int64, []uint64, error) {
	r := reader{b: src}
	info, err := r.header()
	if err != nil {
		return ts, vals, err
	}
	switch info.Encoding {
	case EncUintConst, EncUintDelta, EncUintDoD, EncUintScaled:
	default:
		return ts, vals, corruptAt("encoding", 0, "%v is not an unsigned encoding", info.Encoding)
	}
	n := info.Count
	nts, nvals := len(ts), len(vals)
	ts = slices.Grow(ts, n)[:nts+n]
	vals = slices.Grow(vals, n)[:nvals+n]
	if err := decodeUintChunk(&r, &info, ts[nts:], vals[nvals:]); err != nil {
		return ts[:nts], vals[:nvals], err
	}
	return ts, vals, nil
}

func decodeUintChunk(r *reader, info *Info, ts []int64, vals []uint64) error {
	n := len(vals)
	if err := decodeTimestamps(r, info, ts); err != nil {
		return err
	}
	if n == 0 {
		return r.end()
	}
	v, err := r.uvarint("first value")
	if err != nil {
		return err
	}
	vals[0] = v
	switch info.Encoding {
	case EncUintConst:
		for i := range vals {
			vals[i] = v
		}
	case EncUintDelta:
		base, err := r.varint("value delta base")
		if err != nil {
			return err
		}
		if err := decodeInts(r, "value deltas", vals[1:]); err != nil {
			return err
		}
		b := uint64(base)
		for i := 1; i < len(vals); i++ {
			x := vals[i]
			v += b + uint64(int64(x>>1)^-int64(x&1))
			vals[i] = v
		}
	case EncUintScaled:
		return decodeUintScaled(r, vals)
	case EncUintDoD:
		if n < 2 {
			return r.corrupt("first value delta", "delta of delta for one value")
		}
		d, err := r.varint("first value delta")
		if err != nil {
			return err
		}
		v += uint64(d)
		vals[1] = v
		if err := decodeInts(r, "value deltas of deltas", vals[2:]); err != nil {
			return err
		}
		for i := 2; i < len(vals); i++ {
			x := vals[i]
			d += int64(x>>1) ^ -int64(x&1)
			v += uint64(d)
			vals[i] = v
		}
	}
	return r.end()
}

// decodeUintScaled decodes the rest of a UintScaled chunk after the first
// value (in vals[0]).
func decodeUintScaled(r *reader, vals []uint64) error {
	n := len(vals)
	off := r.off
	g, err := r.uvarint("value delta factor")
	if err != nil {
		return err
	}
	if g < 2 || g > 1<<62 {
		return corruptAt("value delta factor", off, "%d out of range", g)
	}
	off = r.off
	order, err := r.byte("value delta order")
	if err != nil {
		return err
	}
	if n < 2 {
		return corruptAt("value delta order", off, "scaled deltas for one value")
	}
	param, err := r.varint("value delta parameter")
	if err != nil {
		return err
	}
	v := vals[0]
	switch order {
	case orderDelta:
		if err := decodeInts(r, "value deltas", vals[1:]); err != nil {
			return err
		}
		b := uint64(param)
		for i := 1; i < n; i++ {
			x := vals[i]
			v += g * (b + uint64(int64(x>>1)^-int64(x&1)))
			vals[i] = v
		}
	case orderDoD:
		d := param
		v += g * uint64(d)
		vals[1] = v
		if err := decodeInts(r, "value deltas of deltas", vals[2:]); err != nil {
			return err
		}
		for i := 2; i < n; i++ {
			x := vals[i]
			d += int64(x>>1) ^ -int64(x&1)
			v += g * uint64(d)
			vals[i] = v
		}
	default:
		return corruptAt("value delta order", off, "unknown order %d", order)
	}
	return r.end()
}
