package chunkenc

import (
	"encoding/binary"
	"math/bits"
)

// An int stream holds a known number of uint64 elements (the count comes
// from the context: the chunk header, a dictionary size). Zero elements
// take zero bytes. Otherwise the first byte is the mode:
//
//	intPacked: fixed-width bit packing with exceptions (patched frame of
//	           reference): byte w, uvarint k, the low w bits of every
//	           element, then k exceptions as (uvarint gap, uvarint high)
//	intVarint: one uvarint per element
//	intRLE:    (value, run length - 1) uvarint pairs
//	intZstd:   a zstd block holding a packed, varint or RLE stream
//	intSparse: a base value and Rice-coded exceptions (sparse.go)
//
// Signed quantities are zigzagged by the caller before they get here.
//
// The packed mode was chosen over Gorilla-style prefix classes (a 1 to 3
// bit code selecting one of up to four widths per element), which were
// tried first: they were about 5 % smaller on gauges but decoded 4 to 5
// times slower, because each element's position depended on a table
// lookup of the previous one. Fixed-width unpacking has no such chain,
// and the few elements wider than w are patched afterwards.
const (
	intPacked byte = 1
	intVarint byte = 2
	intRLE    byte = 3
	intZstd   byte = 4
)

// Worth trying zstd only on streams at least this large (in elements, and
// in bytes of the best plain mode): below it the frame overhead of about
// 10 bytes eats the gain, and the encoder time is wasted.
const (
	zstdMinElems = 64
	zstdMinBytes = 96
)

// packedPlan is the chosen shape of a packed stream.
type packedPlan struct {
	w    uint // bit width
	k    int  // exceptions: elements wider than w
	size int  // encoded bytes, mode byte included
}

// intPlan is the cost of each plain mode for one stream.
type intPlan struct {
	packed packedPlan
	varint int // bytes including the mode byte
	rle    int // bytes including the mode byte
	sparse sparsePlan
}

// best returns the cheapest plain mode and its size in bytes. Ties go to
// the packed mode, the fastest to decode.
func (p *intPlan) best() (byte, int) {
	mode, size := intPacked, p.packed.size
	if p.rle < size {
		mode, size = intRLE, p.rle
	}
	if p.varint < size {
		mode, size = intVarint, p.varint
	}
	if p.sparse.size > 0 && p.sparse.size < size {
		mode, size = intSparse, p.sparse.size
	}
	return mode, size
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// planInts computes the cost of every plain mode for v (len(v) > 0).
func planInts(v []uint64) intPlan {
	var hist [65]int
	var p intPlan
	p.varint = 1
	p.rle = 1
	run := uint64(0)
	prev := v[0]
	hist[bits.Len64(prev)]++
	for _, x := range v[1:] {
		hist[bits.Len64(x)]++
		if x == prev {
			run++
			continue
		}
		p.rle += uvarintLen(prev) + uvarintLen(run)
		prev, run = x, 0
	}
	p.rle += uvarintLen(prev) + uvarintLen(run)
	for l, c := range hist {
		p.varint += c * max(1, (l+6)/7)
	}
	p.packed = planPacked(v, &hist)
	p.sparse = planSparse(v)
	return p
}

// planPacked chooses the width that minimises the packed size for the
// histogram of bit lengths, estimating an exception at one byte of gap
// plus its high bits in 7-bit groups, then computes the exact size.
func planPacked(v []uint64, hist *[65]int) packedPlan {
	n := len(v)
	var lens [65]int // bit lengths that occur, ascending
	L := 0
	for l, c := range hist {
		if c > 0 {
			lens[L] = l
			L++
		}
	}
	maxLen := lens[L-1]
	// The best width is 0 or a length that occurs: between two of them
	// the cost only grows with w.
	bestW, bestBits := uint(maxLen), uint64(n)*uint64(maxLen)
	for i := -1; i < L-1; i++ {
		w := 0
		if i >= 0 {
			w = lens[i]
		}
		b := uint64(n) * uint64(w)
		for _, l := range lens[i+1 : L] {
			if l > w {
				b += uint64(hist[l]) * uint64(8+8*((l-w+6)/7))
			}
		}
		if b < bestBits {
			bestW, bestBits = uint(w), b
		}
	}
	p := packedPlan{w: bestW, size: 2 + (n*int(bestW)+7)/8}
	if bestW < 64 {
		last := -1
		for i, x := range v {
			if x>>bestW != 0 {
				p.k++
				p.size += uvarintLen(uint64(i-last-1)) + uvarintLen(x>>bestW)
				last = i
			}
		}
	}
	p.size += uvarintLen(uint64(p.k))
	return p
}

// planFor returns the plan of v; an empty v has an empty plan of size 0.
func planFor(v []uint64) intPlan {
	if len(v) == 0 {
		return intPlan{}
	}
	return planInts(v)
}

// size returns the size of the cheapest plain mode.
func (p *intPlan) size() int {
	if p.varint == 0 {
		return 0 // empty stream
	}
	_, size := p.best()
	return size
}

// appendInts appends v as an int stream in its cheapest mode, trying zstd
// over the varint form when the stream is large enough.
func appendInts(dst []byte, v []uint64) []byte {
	p := planFor(v)
	return appendIntsPlan(dst, v, &p)
}

// appendIntsPlan is appendInts with the plan of v already made.
func appendIntsPlan(dst []byte, v []uint64, p *intPlan) []byte {
	if len(v) == 0 {
		return dst
	}
	mode, size := p.best()
	if len(v) >= zstdMinElems && size >= zstdMinBytes {
		start := len(dst)
		var ok bool
		if dst, ok = appendIntsZstd(dst, v, size); ok {
			return dst
		}
		dst = dst[:start]
	}
	if mode == intSparse {
		return appendSparse(dst, v, &p.sparse)
	}
	return appendIntsMode(dst, v, mode, &p.packed)
}

// appendIntsZstd appends a zstd-wrapped varint stream if it is smaller than
// limit bytes.
func appendIntsZstd(dst []byte, v []uint64, limit int) ([]byte, bool) {
	sc := getScratch()
	defer putScratch(sc)
	sc.b = appendIntsMode(sc.b[:0], v, intVarint, nil)
	return appendZstdBlock(append(dst, intZstd), sc.b, limit-1)
}

// appendIntsMode appends v in the given plain mode.
func appendIntsMode(dst []byte, v []uint64, mode byte, p *packedPlan) []byte {
	dst = append(dst, mode)
	switch mode {
	case intVarint:
		for _, x := range v {
			dst = binary.AppendUvarint(dst, x)
		}
	case intRLE:
		run := 0
		for i := 1; i <= len(v); i++ {
			if i < len(v) && v[i] == v[i-1] {
				run++
				continue
			}
			dst = binary.AppendUvarint(dst, v[i-1])
			dst = binary.AppendUvarint(dst, uint64(run))
			run = 0
		}
	case intPacked:
		dst = appendPacked(dst, v, p)
	default:
		panic("BUG: chunkenc: unknown int stream mode")
	}
	return dst
}

func appendPacked(dst []byte, v []uint64, p *packedPlan) []byte {
	dst = append(dst, byte(p.w))
	dst = binary.AppendUvarint(dst, uint64(p.k))
	dst = packFixed(dst, v, p.w)
	if p.k == 0 {
		return dst
	}
	last := -1
	for i, x := range v {
		if hi := x >> p.w; hi != 0 {
			dst = binary.AppendUvarint(dst, uint64(i-last-1))
			dst = binary.AppendUvarint(dst, hi)
			last = i
		}
	}
	return dst
}

// packFixed appends the low w bits of each element, most significant bit
// first, zero-padded to a byte.
func packFixed(dst []byte, v []uint64, w uint) []byte {
	switch {
	case w == 0:
		return dst
	case w == 64:
		bw := bitWriter{b: dst}
		for _, x := range v {
			bw.write(x, 64)
		}
		return bw.finish()
	}
	// The bitWriter loop, inlined with the state in locals.
	mask := uint64(1)<<w - 1
	var acc uint64
	var n uint // bits in acc, right-aligned
	for _, x := range v {
		x &= mask
		if n+w <= 64 {
			acc = acc<<w | x
			n += w
			continue
		}
		rest := n + w - 64
		dst = binary.BigEndian.AppendUint64(dst, acc<<(64-n)|x>>rest)
		acc = x & (1<<rest - 1)
		n = rest
	}
	bw := bitWriter{b: dst, acc: acc, n: n}
	if n == 64 {
		bw.b = binary.BigEndian.AppendUint64(bw.b, acc)
		bw.acc, bw.n = 0, 0
	}
	return bw.finish()
}

// decodeInts decodes an int stream of len(dst) elements from r into dst,
// storing each element's bits as T.
func decodeInts[T ~uint64 | ~int64](r *reader, field string, dst []T) error {
	return decodeIntsDepth(r, field, dst, false)
}

func decodeIntsDepth[T ~uint64 | ~int64](r *reader, field string, dst []T, nested bool) error {
	if len(dst) == 0 {
		return nil
	}
	start := r.off
	mode, err := r.byteP(field, "mode")
	if err != nil {
		return err
	}
	switch mode {
	case intVarint:
		b := r.b
		off := r.off
		for i := range dst {
			v, k := binary.Uvarint(b[off:])
			if k <= 0 {
				return corruptAt(field, off, "bad varint for element %d of %d", i, len(dst))
			}
			off += k
			dst[i] = T(v)
		}
		r.off = off
		return nil
	case intRLE:
		i := 0
		for i < len(dst) {
			v, err := r.uvarintP(field, "run value")
			if err != nil {
				return err
			}
			off := r.off
			run, err := r.uvarintP(field, "run length")
			if err != nil {
				return err
			}
			if run >= uint64(len(dst)-i) {
				return corruptAt(field, off, "run of %d+1 exceeds the %d elements left", run, len(dst)-i)
			}
			end := i + int(run) + 1
			for ; i < end; i++ {
				dst[i] = T(v)
			}
		}
		return nil
	case intPacked:
		return decodePacked(r, field, dst)
	case intSparse:
		return decodeSparse(r, field, dst)
	case intZstd:
		if nested {
			return corruptAt(field, start, "nested zstd block")
		}
		sc := getScratch()
		defer putScratch(sc)
		// A plain stream never needs more than two 10-byte varints per
		// element plus a small header.
		limit := uint64(len(dst))*20 + 8
		raw, err := readZstdBlock(r, field, limit, sc.b[:0])
		if err != nil {
			return err
		}
		sc.b = raw
		inner := reader{b: raw}
		if err := decodeIntsDepth(&inner, field+" (zstd)", dst, true); err != nil {
			return err
		}
		if inner.off != len(raw) {
			return corruptAt(field, start, "zstd block has %d trailing bytes", len(raw)-inner.off)
		}
		return nil
	}
	return corruptAt(field, start, "unknown int stream mode %d", mode)
}

func decodePacked[T ~uint64 | ~int64](r *reader, field string, dst []T) error {
	off := r.off
	w8, err := r.byteP(field, "width")
	if err != nil {
		return err
	}
	w := uint(w8)
	if w > 64 {
		return corruptAt(field, off, "width %d exceeds 64", w)
	}
	off = r.off
	k, err := r.lengthP(field, "exceptions", uint64(len(dst)))
	if err != nil {
		return err
	}
	if k > 0 && w == 64 {
		return corruptAt(field, off, "%d exceptions at width 64", k)
	}
	br := newBitReader(r.rest())
	unpackFixed(&br, dst, w)
	used, ok := br.consumed()
	if !ok {
		return r.corrupt(field, "%d elements of %d bits run past the end of the chunk", len(dst), w)
	}
	r.off += used
	pos := -1
	for range k {
		off := r.off
		gap, err := r.uvarintP(field, "exception gap")
		if err != nil {
			return err
		}
		if gap >= uint64(len(dst)-1-pos) {
			return corruptAt(field, off, "exception gap %d runs past element %d", gap, len(dst))
		}
		pos += int(gap) + 1
		hi, err := r.uvarintP(field, "exception")
		if err != nil {
			return err
		}
		dst[pos] |= T(hi << w)
	}
	return nil
}

// unpackFixed reads len(dst) elements of w bits. It keeps the bit
// reader's state in locals: through the pointer, every element would
// store and reload acc and n, a store-to-load delay in the loop's
// dependency chain.
func unpackFixed[T ~uint64 | ~int64](br *bitReader, dst []T, w uint) {
	switch {
	case w == 0:
		clear(dst)
		return
	case w > 56:
		unpackWide(br, dst, w)
		return
	}
	i := 0
	acc, n, pos, b := br.acc, br.n, br.pos, br.b
	rsh := (64 - w) & 63
	for ; i < len(dst); i++ {
		if n < w {
			if pos+8 > len(b) {
				break
			}
			acc |= binary.BigEndian.Uint64(b[pos:pos+8]) >> (n & 63)
			k := (63 - n) >> 3
			pos += int(k)
			n += k << 3
		}
		dst[i] = T(acc >> rsh)
		acc <<= w & 63
		n -= w
	}
	br.acc, br.n, br.pos = acc, n, pos
	for ; i < len(dst); i++ {
		dst[i] = T(br.read(w))
	}
}

// unpackWide is unpackFixed for widths of 57 to 64 bits: each element is
// read as two halves, each within the 56 bits a refill guarantees.
func unpackWide[T ~uint64 | ~int64](br *bitReader, dst []T, w uint) {
	hw := w - 32
	i := 0
	acc, n, pos, b := br.acc, br.n, br.pos, br.b
	for ; i < len(dst); i++ {
		if n < hw {
			if pos+8 > len(b) {
				break
			}
			acc |= binary.BigEndian.Uint64(b[pos:pos+8]) >> (n & 63)
			k := (63 - n) >> 3
			pos += int(k)
			n += k << 3
		}
		hi := acc >> ((64 - hw) & 63)
		acc <<= hw & 63
		n -= hw
		if n < 32 {
			if pos+8 > len(b) {
				br.acc, br.n, br.pos = acc, n, pos
				dst[i] = T(hi<<32 | br.read(32))
				acc, n, pos = br.acc, br.n, br.pos
				i++
				break
			}
			acc |= binary.BigEndian.Uint64(b[pos:pos+8]) >> (n & 63)
			k := (63 - n) >> 3
			pos += int(k)
			n += k << 3
		}
		dst[i] = T(hi<<32 | acc>>32)
		acc <<= 32
		n -= 32
	}
	br.acc, br.n, br.pos = acc, n, pos
	for ; i < len(dst); i++ {
		dst[i] = T(br.read64(w))
	}
}
