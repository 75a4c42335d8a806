package chunkenc

import "encoding/binary"

// Bitstreams are written most significant bit first: the first bit written
// is bit 7 of the first byte. The last byte is padded with zero bits.

// bitWriter appends bits to a byte slice.
type bitWriter struct {
	b   []byte
	acc uint64 // pending bits, right-aligned
	n   uint   // number of pending bits, 0..63
}

// write appends the low nb bits of v, nb ≤ 64.
func (w *bitWriter) write(v uint64, nb uint) {
	if nb < 64 {
		v &= 1<<nb - 1
	}
	free := 64 - w.n
	if nb < free {
		w.acc = w.acc<<nb | v
		w.n += nb
		return
	}
	rest := nb - free
	// Shifts of 64 yield 0 in Go, which is what free == 64 needs.
	w.acc = w.acc<<free | v>>rest
	w.b = binary.BigEndian.AppendUint64(w.b, w.acc)
	if rest == 0 {
		w.acc, w.n = 0, 0
		return
	}
	w.acc = v & (1<<rest - 1)
	w.n = rest
}

// finish flushes the pending bits, zero-padded to a byte, and returns the
// slice.
func (w *bitWriter) finish() []byte {
	if w.n > 0 {
		acc := w.acc << (64 - w.n)
		for i := uint(0); i < w.n; i += 8 {
			w.b = append(w.b, byte(acc>>56))
			acc <<= 8
		}
	}
	w.acc, w.n = 0, 0
	return w.b
}

// bitReader reads a bitstream written by bitWriter. Reading past the end
// yields zero bits; callers check overrun once at the end, which keeps the
// per-value path free of bounds checks on the input.
type bitReader struct {
	b   []byte
	pos int    // next byte to load; may run past len(b) (virtual zero bytes)
	acc uint64 // left-aligned bits; the top n are valid
	n   uint
}

func newBitReader(b []byte) bitReader { return bitReader{b: b} }

// refill makes at least 56 bits valid.
func (r *bitReader) refill() {
	if r.pos+8 <= len(r.b) {
		// Load 8 bytes; the bits beyond the whole bytes we account for are
		// loaded again, at the same position, by the next refill, so
		// OR-ing them twice is harmless.
		r.acc |= binary.BigEndian.Uint64(r.b[r.pos:]) >> r.n
		k := (63 - r.n) >> 3
		r.pos += int(k)
		r.n += k << 3
		return
	}
	r.refillSlow()
}

func (r *bitReader) refillSlow() {
	for r.n <= 56 {
		if r.pos < len(r.b) {
			r.acc |= uint64(r.b[r.pos]) << (56 - r.n)
		}
		r.pos++
		r.n += 8
	}
}

// read returns the next nb bits, nb ≤ 56.
func (r *bitReader) read(nb uint) uint64 {
	if r.n < nb {
		r.refill()
	}
	v := r.acc >> (64 - nb) // nb == 0 shifts by 64, giving 0
	r.acc <<= nb
	r.n -= nb
	return v
}

// read64 returns the next nb bits, nb ≤ 64.
func (r *bitReader) read64(nb uint) uint64 {
	if nb <= 56 {
		return r.read(nb)
	}
	hi := r.read(nb - 32)
	return hi<<32 | r.read(32)
}

// consumed returns the number of whole bytes the bits read so far occupy,
// and false when more bits were read than the input holds.
func (r *bitReader) consumed() (int, bool) {
	bitsRead := uint64(r.pos)*8 - uint64(r.n)
	if bitsRead > uint64(len(r.b))*8 {
		return 0, false
	}
	return int((bitsRead + 7) / 8), true
}
