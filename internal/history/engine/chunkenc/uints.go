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
	if order == orderDelta {
		dst[start] = byte(EncUintDelta)
	} else {
		dst[start] = byte(EncUintDoD)
	}
	dst = binary.AppendVarint(dst, param)
	return appendIntsPlan(dst, elems, &plan)
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
	case EncUintConst, EncUintDelta, EncUintDoD:
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
