package chunkenc

import "slices"

// Sequences of integers (unsigned values, decimal mantissas) are stored in
// one of two orders, whichever is smaller for the chunk:
//
//	delta: varint B, then zigzag(d[i] - B) for the n-1 deltas d[i]
//	dod:   varint d[1], then zigzag(d[i] - d[i-1]) for i = 2..n-1
//
// B is the median delta. For a steady counter (deltas 6000 ± noise) it
// leaves only the noise, which costs about a bit less than the deltas of
// deltas (the difference of two noises); for a gauge or a value that
// changes rarely B is 0 and zero deltas cost about a bit. All arithmetic
// wraps modulo 2^64.
const (
	orderDelta byte = 1
	orderDoD   byte = 2
)

// chooseDeltas takes raw wrapping deltas in d[1:] (d[0] is ignored) and
// returns the order, its varint parameter (B or d[1]), the int stream
// elements, which live in sc.u2 or sc.u3, and their plan.
func chooseDeltas(d []uint64, sc *scratch) (order byte, param int64, elems []uint64, p intPlan) {
	n := len(d)
	base := medianDelta(d[1:], sc)
	delta := grow(sc.u2, n)
	sc.u2 = delta
	for i := 1; i < n; i++ {
		delta[i] = zigzag(int64(d[i]) - base)
	}
	dod := grow(sc.u3, n)
	sc.u3 = dod
	for i := 2; i < n; i++ {
		dod[i] = zigzag(int64(d[i] - d[i-1]))
	}
	deltaPlan := planFor(delta[1:])
	dodPlan := planFor(dod[2:])
	if deltaPlan.size()+uvarintLen(zigzag(base)) <= dodPlan.size()+uvarintLen(zigzag(int64(d[1]))) {
		return orderDelta, base, delta[1:], deltaPlan
	}
	return orderDoD, int64(d[1]), dod[2:], dodPlan
}

// medianSample is the most deltas medianDelta sorts.
const medianSample = 63

// medianDelta returns the median of the deltas as int64, estimated from
// at most medianSample of them spread evenly over the chunk: sorting all
// of them costs more than the rest of the encoding, and a sample finds
// the rate of a counter just as well.
func medianDelta(d []uint64, sc *scratch) int64 {
	k := min(len(d), medianSample)
	tmp := grow(sc.u3, k)
	sc.u3 = tmp
	for i := range tmp {
		tmp[i] = d[i*len(d)/k] ^ 1<<63 // maps int64 order onto uint64 order
	}
	slices.Sort(tmp)
	return int64(tmp[k/2] ^ 1<<63)
}
