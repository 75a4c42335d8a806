package chunkenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// ErrCorrupt is wrapped by every error a decoder returns. The wrapping
// error names the field and the byte offset in the chunk where decoding
// failed.
var ErrCorrupt = errors.New("corrupt chunk")

// MaxCount is the largest number of values one chunk may hold. Encoders
// panic above it; decoders reject a header that claims more. It bounds the
// memory a corrupt chunk can make a decoder allocate (about 16 MiB for a
// float chunk).
const MaxCount = 1 << 20

// MaxZstdBytes bounds the decompressed size of any zstd block inside a
// chunk. String values whose encoding would be larger are stored without
// zstd.
const MaxZstdBytes = 64 << 20

// Encoding identifies how a chunk is encoded; it is the first byte of
// every chunk. The values are part of the on-disk format
// (docs/format/chunks.md) and never change meaning.
type Encoding byte

// The encodings. The high nibble is the value kind: 0 float, 1 unsigned,
// 2 string (character or text), 3 log.
const (
	// EncFloatConst: every value has the same float64 bits.
	EncFloatConst Encoding = 0x01
	// EncFloatRaw: 8 little-endian bytes per value.
	EncFloatRaw Encoding = 0x02
	// EncFloatXOR: Gorilla-style XOR bitstream.
	EncFloatXOR Encoding = 0x03
	// EncFloatDecimal: values are integer mantissas times a common power
	// of ten, stored as deltas or deltas of deltas.
	EncFloatDecimal Encoding = 0x04
	// EncFloatRate: a counter's change per second, stored as the
	// counter's integer differences over the chunk's own timestamps
	// (block format version 3 and later).
	EncFloatRate Encoding = 0x05

	// EncUintConst: every value is the same.
	EncUintConst Encoding = 0x11
	// EncUintDelta: first value, then wrapping deltas.
	EncUintDelta Encoding = 0x12
	// EncUintDoD: first value, first delta, then wrapping deltas of deltas.
	EncUintDoD Encoding = 0x13
	// EncUintScaled: deltas that share a common factor g ≥ 2 (sizes in
	// 4 KiB pages), stored divided by it, in either order.
	EncUintScaled Encoding = 0x14

	// EncStringRaw: lengths, then the concatenated bytes.
	EncStringRaw Encoding = 0x21
	// EncStringDict: a dictionary of distinct values plus one index per value.
	EncStringDict Encoding = 0x22
	// EncStringZstd: a zstd block holding a raw or dictionary column.
	EncStringZstd Encoding = 0x23

	// EncLog: log values, one column per field.
	EncLog Encoding = 0x31
)

// String returns the name of e as used in docs/format/chunks.md.
func (e Encoding) String() string {
	switch e {
	case EncFloatConst:
		return "FloatConst"
	case EncFloatRaw:
		return "FloatRaw"
	case EncFloatXOR:
		return "FloatXOR"
	case EncFloatDecimal:
		return "FloatDecimal"
	case EncFloatRate:
		return "FloatRate"
	case EncUintConst:
		return "UintConst"
	case EncUintDelta:
		return "UintDelta"
	case EncUintDoD:
		return "UintDoD"
	case EncUintScaled:
		return "UintScaled"
	case EncStringRaw:
		return "StringRaw"
	case EncStringDict:
		return "StringDict"
	case EncStringZstd:
		return "StringZstd"
	case EncLog:
		return "Log"
	}
	return fmt.Sprintf("Encoding(0x%02x)", byte(e))
}

// Valid reports whether e is a known encoding.
func (e Encoding) Valid() bool {
	switch e {
	case EncFloatConst, EncFloatRaw, EncFloatXOR, EncFloatDecimal, EncFloatRate,
		EncUintConst, EncUintDelta, EncUintDoD, EncUintScaled,
		EncStringRaw, EncStringDict, EncStringZstd, EncLog:
		return true
	}
	return false
}

// LogMeta is the metadata of one log value; it mirrors history.LogMeta
// without the pointer.
type LogMeta struct {
	Timestamp int64  // time in the log line, 0 if unknown
	Source    string // event log source
	Severity  int32
	EventID   int64
}

// Info is what a chunk header tells without decoding the streams.
type Info struct {
	Encoding Encoding
	Count    int
	// MinT and MaxT are the first and the last timestamp of the chunk (the
	// minimum and maximum, as timestamps are ascending). Both are 0 when
	// Count is 0.
	MinT, MaxT int64
}

// Inspect parses the chunk header only. It is cheap: it reads at most 22
// bytes and allocates nothing.
func Inspect(src []byte) (Info, error) {
	var r reader
	r.b = src
	info, err := r.header()
	return info, err
}

// appendHeader appends the chunk header. ts must be the chunk's timestamps.
func appendHeader(dst []byte, enc Encoding, ts []int64) []byte {
	dst = append(dst, byte(enc))
	dst = binary.AppendUvarint(dst, uint64(len(ts)))
	if len(ts) == 0 {
		return dst
	}
	dst = binary.LittleEndian.AppendUint64(dst, uint64(ts[0]))
	return binary.AppendUvarint(dst, uint64(ts[len(ts)-1])-uint64(ts[0]))
}

// checkCount panics when the caller passed more than MaxCount values.
func checkCount(n int) {
	if n > MaxCount {
		panic(fmt.Sprintf("BUG: chunkenc: %d values in one chunk, more than MaxCount (%d)", n, MaxCount))
	}
}

// checkLens panics when the caller passed slices of different lengths.
func checkLens(what string, nts, nvals int) {
	if nts != nvals {
		panic(fmt.Sprintf("BUG: chunkenc: %s: %d timestamps but %d values", what, nts, nvals))
	}
	checkCount(nts)
}

// reader is a cursor over a chunk with decoding helpers that turn every
// failure into an error wrapping ErrCorrupt with the field and offset.
type reader struct {
	b   []byte
	off int
}

// corrupt returns an error wrapping ErrCorrupt naming field and the
// current offset.
func (r *reader) corrupt(field, format string, args ...any) error {
	return corruptAt(field, r.off, format, args...)
}

func corruptAt(field string, off int, format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, field, off, fmt.Sprintf(format, args...))
}

func (r *reader) rest() []byte { return r.b[r.off:] }

// The reader methods take the name of the field being read in two parts
// that are joined only when an error is built, so that the hot paths do
// not allocate names.

func joinField(field, part string) string {
	if part == "" {
		return field
	}
	return field + " " + part
}

func (r *reader) byte(field string) (byte, error) { return r.byteP(field, "") }

func (r *reader) byteP(field, part string) (byte, error) {
	if r.off >= len(r.b) {
		return 0, r.corrupt(joinField(field, part), "unexpected end of chunk")
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) uvarint(field string) (uint64, error) { return r.uvarintP(field, "") }

func (r *reader) uvarintP(field, part string) (uint64, error) {
	v, k := binary.Uvarint(r.b[r.off:])
	if k <= 0 {
		if k == 0 {
			return 0, r.corrupt(joinField(field, part), "unexpected end of chunk")
		}
		return 0, r.corrupt(joinField(field, part), "varint overflows 64 bits")
	}
	r.off += k
	return v, nil
}

func (r *reader) varint(field string) (int64, error) {
	v, k := binary.Varint(r.b[r.off:])
	if k <= 0 {
		if k == 0 {
			return 0, r.corrupt(field, "unexpected end of chunk")
		}
		return 0, r.corrupt(field, "varint overflows 64 bits")
	}
	r.off += k
	return v, nil
}

// length reads a uvarint that must be at most limit.
func (r *reader) length(field string, limit uint64) (int, error) {
	return r.lengthP(field, "", limit)
}

func (r *reader) lengthP(field, part string, limit uint64) (int, error) {
	off := r.off
	v, err := r.uvarintP(field, part)
	if err != nil {
		return 0, err
	}
	if v > limit {
		return 0, corruptAt(joinField(field, part), off, "%d exceeds the limit %d", v, limit)
	}
	return int(v), nil
}

// bytes returns the next n bytes.
func (r *reader) bytes(field string, n int) ([]byte, error) { return r.bytesP(field, "", n) }

func (r *reader) bytesP(field, part string, n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, r.corrupt(joinField(field, part), "%d bytes needed, %d left", n, len(r.b)-r.off)
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b, nil
}

// header parses the chunk header.
func (r *reader) header() (Info, error) {
	var info Info
	c, err := r.byte("encoding")
	if err != nil {
		return info, err
	}
	info.Encoding = Encoding(c)
	if !info.Encoding.Valid() {
		return info, corruptAt("encoding", 0, "unknown encoding 0x%02x", c)
	}
	n, err := r.length("count", MaxCount)
	if err != nil {
		return info, err
	}
	info.Count = n
	if n == 0 {
		return info, nil
	}
	b, err := r.bytes("first timestamp", 8)
	if err != nil {
		return info, err
	}
	info.MinT = int64(binary.LittleEndian.Uint64(b))
	span, err := r.uvarint("timestamp span")
	if err != nil {
		return info, err
	}
	info.MaxT = int64(uint64(info.MinT) + span)
	if n == 1 && span != 0 {
		return info, r.corrupt("timestamp span", "%d for a single value", span)
	}
	return info, nil
}

// end checks that the whole chunk was consumed.
func (r *reader) end() error {
	if r.off != len(r.b) {
		return r.corrupt("end of chunk", "%d trailing bytes", len(r.b)-r.off)
	}
	return nil
}

// zigzag maps signed to unsigned so that small magnitudes become small.
func zigzag(x int64) uint64 { return uint64(x<<1) ^ uint64(x>>63) }

// unzigzag inverts zigzag.
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// DecodeTimes appends the timestamps of a chunk of any kind to ts,
// decoding the header and the timestamp stream only: counting a chunk's
// values in a time range (history.get's row count) needs no values. It
// cannot check the value streams or that the chunk ends after them; a
// chunk that fails those checks fails its full decode, and block files
// check every chunk's CRC before any decode.
func DecodeTimes(ts []int64, src []byte) ([]int64, error) {
	r := reader{b: src}
	info, err := r.header()
	if err != nil {
		return ts, err
	}
	n := len(ts)
	ts = slices.Grow(ts, info.Count)[:n+info.Count]
	if err := decodeTimestamps(&r, &info, ts[n:]); err != nil {
		return ts[:n], err
	}
	return ts, nil
}
