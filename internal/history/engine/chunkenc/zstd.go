package chunkenc

import (
	"encoding/binary"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstd coders are pooled, one per concurrent user, each with concurrency
// 1: a single shared Decoder with concurrency 1 would serialise every
// DecodeAll in the process, and a Decoder with higher concurrency keeps
// that many block decoders alive. EncodeAll and DecodeAll start no
// goroutines, so a coder dropped by the pool leaks nothing.
var (
	zstdEncoders = sync.Pool{New: func() any {
		e, err := zstd.NewWriter(nil,
			zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithEncoderCRC(false), // chunks are checksummed by their container
			zstd.WithLowerEncoderMem(true),
			zstd.WithWindowSize(1<<20),
		)
		if err != nil {
			panic("BUG: chunkenc: zstd.NewWriter: " + err.Error())
		}
		return e
	}}
	zstdDecoders = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(MaxZstdBytes),
			zstd.WithDecoderMaxWindow(MaxZstdBytes),
			zstd.WithDecodeAllCapLimit(true),
		)
		if err != nil {
			panic("BUG: chunkenc: zstd.NewReader: " + err.Error())
		}
		return d
	}}
)

// appendZstdBlock appends raw as a zstd block (uvarint raw length, uvarint
// compressed length, one zstd frame) if that takes fewer than limit bytes.
// Otherwise it returns dst unchanged and false.
func appendZstdBlock(dst []byte, raw []byte, limit int) ([]byte, bool) {
	if len(raw) > MaxZstdBytes {
		return dst, false
	}
	sc := getScratch()
	defer putScratch(sc)
	enc := zstdEncoders.Get().(*zstd.Encoder)
	sc.b = enc.EncodeAll(raw, sc.b[:0])
	zstdEncoders.Put(enc)
	size := uvarintLen(uint64(len(raw))) + uvarintLen(uint64(len(sc.b))) + len(sc.b)
	if size >= limit {
		return dst, false
	}
	dst = binary.AppendUvarint(dst, uint64(len(raw)))
	dst = binary.AppendUvarint(dst, uint64(len(sc.b)))
	return append(dst, sc.b...), true
}

// readZstdBlock reads a zstd block whose raw length must be at most limit
// (and MaxZstdBytes) and decompresses it into buf, which it grows if
// needed.
func readZstdBlock(r *reader, field string, limit uint64, buf []byte) ([]byte, error) {
	limit = min(limit, MaxZstdBytes)
	rawLen, err := r.lengthP(field, "zstd raw length", limit)
	if err != nil {
		return buf, err
	}
	compLen, err := r.lengthP(field, "zstd length", uint64(len(r.b)-r.off))
	if err != nil {
		return buf, err
	}
	off := r.off
	frame, err := r.bytesP(field, "zstd frame", compLen)
	if err != nil {
		return buf, err
	}
	if cap(buf) < rawLen {
		buf = make([]byte, 0, rawLen)
	}
	dec := zstdDecoders.Get().(*zstd.Decoder)
	out, err := dec.DecodeAll(frame, buf[:0:rawLen])
	zstdDecoders.Put(dec)
	if err != nil {
		return buf, corruptAt(field, off, "zstd: %v", err)
	}
	if len(out) != rawLen {
		return buf, corruptAt(field, off, "zstd block holds %d bytes, header says %d", len(out), rawLen)
	}
	return out, nil
}

// scratch holds reusable buffers for one encode or decode call.
type scratch struct {
	b  []byte
	c1 []byte
	u  []uint64
	u2 []uint64
	u3 []uint64
	u4 []uint64 // split timestamps: sub-second parts
	i1 []int64  // split timestamps: seconds

	dict map[string]uint32 // EncodeStrings: distinct values
	sd   strDict
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// putScratch returns sc to the pool unless its buffers grew huge.
func putScratch(sc *scratch) {
	if cap(sc.b) > 4<<20 {
		sc.b = nil
	}
	if cap(sc.c1) > 4<<20 {
		sc.c1 = nil
	}
	if cap(sc.u) > 1<<16 {
		sc.u = nil
	}
	if cap(sc.u2) > 1<<16 {
		sc.u2 = nil
	}
	if cap(sc.u3) > 1<<16 {
		sc.u3 = nil
	}
	if cap(sc.u4) > 1<<16 {
		sc.u4 = nil
	}
	if cap(sc.i1) > 1<<16 {
		sc.i1 = nil
	}
	scratchPool.Put(sc)
}

// grow returns s resliced to length n, reallocating if needed.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
