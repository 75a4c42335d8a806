package chunkenc

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// The sparse int stream mode (intSparse) is for streams where one value
// dominates and the others are rare: the grid residuals of timestamps that
// jitter by a second now and then, the deltas of a size that changes in
// three values out of ten, a status that flips twice a day. Packed mode
// spends w bits on every element (w = 2 for residuals of 0, 1 and 2) and
// two or more whole bytes per exception; here an element equal to the
// base costs nothing, and each other element costs a Rice-coded gap to
// the previous one and a Rice-coded distance from the base, about
// log2(1/p) + 2 bits for an exception of probability p. On the realistic
// data set (issue 10) it takes whole-second timestamps from 0.28 to 0.15
// bytes per value, stream headers included.
//
//	uvarint base
//	uvarint k          number of elements ≠ base, ≤ N
//	if k > 0:
//	  byte rg, byte rv Rice parameters (≤ 63) of the gaps and the values
//	  bitstream of k pairs: rice(gap, rg), rice(zigzag(x - base) - 1, rv)
//
// rice(x, r) writes q = x >> r as q one bits and a zero bit, then the low
// r bits of x; when q ≥ riceEscape it writes riceEscape one bits and
// then all 64 bits of x, so that an outlier costs 88 bits, not 2^60.
//
// Rejected: an adaptive arithmetic coder, which would come closer to the
// entropy of the jitter (≈ 0.57 bits per value against ≈ 0.8 here) but
// decodes several times slower and needs far more code to get exact.
const intSparse byte = 5

// riceEscape is the unary length at which rice codes switch to 64 raw
// bits.
const riceEscape = 24

// sparsePlan is the chosen shape of a sparse stream.
type sparsePlan struct {
	base   uint64
	k      int
	rg, rv uint
	size   int // bytes including the mode byte; 0 when not planned
}

// riceLen is the number of bits rice(x, r) takes.
func riceLen(x uint64, r uint) int {
	q := x >> r
	if q >= riceEscape {
		return riceEscape + 64
	}
	return int(q) + 1 + int(r)
}

// sparseValue maps an element other than base to the value coded for it.
func sparseValue(x, base uint64) uint64 { return zigzag(int64(x-base)) - 1 }

// planSparse plans v in sparse mode with the most frequent value of a
// sample as base; it returns a plan of size 0 when more than half of the
// elements differ from that base (packed mode then wins anyway), or when
// v is too short to matter.
func planSparse(v []uint64) sparsePlan {
	n := len(v)
	if n < 8 {
		return sparsePlan{}
	}
	// The base: the most frequent value among up to 64 evenly spaced
	// elements.
	var sample [64]uint64
	m := min(n, len(sample))
	for i := range m {
		sample[i] = v[i*n/m]
	}
	s := sample[:m]
	slices.Sort(s)
	base, best, run := s[0], 0, 0
	for i := range s {
		if i > 0 && s[i] == s[i-1] {
			run++
		} else {
			run = 1
		}
		if run > best {
			base, best = s[i], run
		}
	}
	k := 0
	for _, x := range v {
		if x != base {
			k++
		}
	}
	if k*2 > n {
		return sparsePlan{}
	}
	p := sparsePlan{base: base, k: k, size: 1 + uvarintLen(base) + uvarintLen(uint64(k))}
	if k == 0 {
		return p
	}
	// Rice parameters: the exact cost of each r near log2 of the mean,
	// which is where the optimum lies for geometric-like data.
	var sumGap, sumVal uint64
	last := -1
	for i, x := range v {
		if x != base {
			sumGap += uint64(i - last - 1)
			sumVal += min(sparseValue(x, base), 1<<40)
			last = i
		}
	}
	costAt := func(r uint, gaps bool) int {
		c := 0
		last := -1
		for i, x := range v {
			if x == base {
				continue
			}
			if gaps {
				c += riceLen(uint64(i-last-1), r)
			} else {
				c += riceLen(sparseValue(x, base), r)
			}
			last = i
		}
		return c
	}
	pick := func(sum uint64, gaps bool) (uint, int) {
		guess := uint(bits.Len64(sum / uint64(k)))
		bestR, bestC := uint(0), int(^uint(0)>>1)
		for r := max(guess, 2) - 2; r <= min(guess+1, 63); r++ {
			if c := costAt(r, gaps); c < bestC {
				bestR, bestC = r, c
			}
		}
		return bestR, bestC
	}
	var cg, cv int
	p.rg, cg = pick(sumGap, true)
	p.rv, cv = pick(sumVal, false)
	p.size += 2 + (cg+cv+7)/8
	return p
}

// appendSparse appends v in sparse mode as planned, mode byte included.
func appendSparse(dst []byte, v []uint64, p *sparsePlan) []byte {
	dst = append(dst, intSparse)
	dst = binary.AppendUvarint(dst, p.base)
	dst = binary.AppendUvarint(dst, uint64(p.k))
	if p.k == 0 {
		return dst
	}
	dst = append(dst, byte(p.rg), byte(p.rv))
	bw := bitWriter{b: dst}
	last := -1
	for i, x := range v {
		if x == p.base {
			continue
		}
		writeRice(&bw, uint64(i-last-1), p.rg)
		writeRice(&bw, sparseValue(x, p.base), p.rv)
		last = i
	}
	return bw.finish()
}

func writeRice(bw *bitWriter, x uint64, r uint) {
	q := x >> r
	if q >= riceEscape {
		bw.write(1<<riceEscape-1, riceEscape)
		bw.write(x, 64)
		return
	}
	bw.write((1<<q-1)<<1, uint(q)+1) // q ones, a zero
	if r > 0 {
		bw.write(x, r)
	}
}

// readRice reads one rice code; the caller checks for overrun.
func readRice(br *bitReader, r uint) uint64 {
	if br.n < riceEscape+1 {
		br.refill()
	}
	q := uint(bits.LeadingZeros64(^br.acc))
	if q >= riceEscape {
		br.read(riceEscape)
		return br.read64(64)
	}
	br.read(q + 1)
	if r == 0 {
		return uint64(q)
	}
	return uint64(q)<<r | br.read64(r)
}

func decodeSparse[T ~uint64 | ~int64](r *reader, field string, dst []T) error {
	base, err := r.uvarintP(field, "sparse base")
	if err != nil {
		return err
	}
	k, err := r.lengthP(field, "sparse exceptions", uint64(len(dst)))
	if err != nil {
		return err
	}
	for i := range dst {
		dst[i] = T(base)
	}
	if k == 0 {
		return nil
	}
	off := r.off
	rg, err := r.byteP(field, "sparse gap parameter")
	if err != nil {
		return err
	}
	rv, err := r.byteP(field, "sparse value parameter")
	if err != nil {
		return err
	}
	if rg > 63 || rv > 63 {
		return corruptAt(field, off, "rice parameters %d, %d exceed 63", rg, rv)
	}
	br := newBitReader(r.rest())
	pos := -1
	// The fast path keeps the bit reader's state in locals and reads a
	// whole rice code (unary part and low bits, at most 24 + 63 bits) from
	// one refill; escapes and codes longer than the bits at hand go
	// through readRice. Through the pointer, each code cost two calls and
	// two refill checks: the sparse seconds of split timestamps decoded
	// at half the speed of the sub-second parts.
	acc, nb := br.acc, br.n
	rgU, rvU := uint(rg), uint(rv)
	for range k {
		var gap, z uint64
		for j := range 2 {
			r := rgU
			if j == 1 {
				r = rvU
			}
			if nb < 56 {
				br.acc, br.n = acc, nb
				br.refill()
				acc, nb = br.acc, br.n
			}
			q := uint(bits.LeadingZeros64(^acc))
			var x uint64
			if c := q + 1 + r; q < riceEscape && c <= nb {
				x = uint64(q)<<r | acc<<(q+1)>>(64-r)
				acc <<= c
				nb -= c
			} else {
				br.acc, br.n = acc, nb
				x = readRice(&br, r)
				acc, nb = br.acc, br.n
			}
			if j == 0 {
				gap = x
			} else {
				z = x
			}
		}
		if gap >= uint64(len(dst)-1-pos) {
			return r.corrupt(field, "sparse gap %d runs past element %d", gap, len(dst))
		}
		pos += int(gap) + 1
		z++
		if z == 0 {
			return r.corrupt(field, "sparse value out of range at element %d", pos)
		}
		dst[pos] = T(base + uint64(unzigzag(z)))
	}
	br.acc, br.n = acc, nb
	used, ok := br.consumed()
	if !ok {
		return r.corrupt(field, "%d sparse exceptions run past the end of the chunk", k)
	}
	r.off += used
	return nil
}
