package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// TypeSamples is the record type of a batch of history samples.
const TypeSamples byte = 1

// ErrCorrupt marks a payload that cannot be decoded: truncated, trailing
// garbage, an unknown record or value type, or a field out of range.
// Errors returned by this package wrap it, with the offset of the damage.
var ErrCorrupt = errors.New("record: corrupt payload")

// logMetaFlag is set in a Log sample's type byte when the sample carries
// LogMeta, so that a nil Log and a zero LogMeta survive a round trip as
// themselves.
const logMetaFlag = 0x80

// minSampleSize is the fewest bytes one encoded sample occupies (item id,
// clock delta, ns, type byte and a one-byte value). DecodeSamples uses it to
// refuse counts that the payload could not possibly hold before it
// allocates for them.
const minSampleSize = 5

// Type returns the record type of payload src (its first byte).
func Type(src []byte) (byte, error) {
	if len(src) == 0 {
		return 0, fmt.Errorf("%w: empty record", ErrCorrupt)
	}
	return src[0], nil
}

// AppendSamples appends the encoding of samples to dst and returns the
// extended buffer. Samples may be of any items and value types, in any
// order. Only the fields meaningful for a sample's Type are encoded (F for
// Float, U for Uint, S for Str and Text, S and Log for Log); the others
// decode as zero values.
//
// Every sample's Type must be valid (history.ValueType.Valid): the caller
// validates input before it reaches the WAL, so an invalid type here is a
// bug and panics rather than writing a record that replay would reject.
func AppendSamples(dst []byte, samples []history.Sample) []byte {
	// A float sample takes about 18 bytes (3-byte item id, 1-byte clock
	// delta, 5-byte ns, type, 8-byte value); growing once up front avoids
	// repeated copying for the common case.
	dst = slices.Grow(dst, 1+binary.MaxVarintLen64+len(samples)*20)
	dst = append(dst, TypeSamples)
	dst = binary.AppendUvarint(dst, uint64(len(samples)))
	var prevClock int64
	for i := range samples {
		s := &samples[i]
		dst = binary.AppendUvarint(dst, s.ItemID)
		// Clocks in one batch are close together, so the zigzag delta is
		// usually one byte. Overflow wraps identically in the decoder.
		dst = binary.AppendVarint(dst, s.Clock-prevClock)
		prevClock = s.Clock
		dst = binary.AppendUvarint(dst, uint64(uint32(s.NS)))
		switch s.Type {
		case history.Float:
			dst = append(dst, byte(history.Float))
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(s.F))
		case history.Uint:
			dst = append(dst, byte(history.Uint))
			dst = binary.AppendUvarint(dst, s.U)
		case history.Str, history.Text:
			dst = append(dst, byte(s.Type))
			dst = appendString(dst, s.S)
		case history.Log:
			if s.Log == nil {
				dst = append(dst, byte(history.Log))
				dst = appendString(dst, s.S)
				break
			}
			dst = append(dst, byte(history.Log)|logMetaFlag)
			dst = appendString(dst, s.S)
			dst = binary.AppendVarint(dst, s.Log.Timestamp)
			dst = appendString(dst, s.Log.Source)
			dst = binary.AppendVarint(dst, int64(s.Log.Severity))
			dst = binary.AppendVarint(dst, s.Log.EventID)
		default:
			panic(fmt.Sprintf("BUG: record.AppendSamples: sample %d (item %d) has invalid value type %d", i, s.ItemID, s.Type))
		}
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// DecodeSamples decodes a TypeSamples payload and appends the samples to
// dst. Strings are copied out of src. On error it returns dst unchanged
// (its original length) and an error wrapping ErrCorrupt that names the
// sample and byte offset where decoding failed. It never panics, and it
// allocates at most in proportion to len(src).
func DecodeSamples(dst []history.Sample, src []byte) ([]history.Sample, error) {
	d := decoder{src: src}
	t := d.byte()
	if d.bad {
		return dst, d.corrupt(-1, "empty record")
	}
	if t != TypeSamples {
		return dst, d.corrupt(-1, fmt.Sprintf("record type %d is not a samples record (%d)", t, TypeSamples))
	}
	n := d.uvarint()
	if d.bad {
		return dst, d.corrupt(-1, "bad sample count")
	}
	if n > uint64(len(src)-d.pos)/minSampleSize {
		return dst, d.corrupt(-1, fmt.Sprintf("sample count %d cannot fit in the %d bytes that follow", n, len(src)-d.pos))
	}
	orig := len(dst)
	dst = slices.Grow(dst, int(n))
	var clock int64
	for i := 0; i < int(n); i++ {
		start := d.pos
		dst = append(dst, history.Sample{})
		s := &dst[len(dst)-1]
		s.ItemID = d.uvarint()
		clock += d.varint()
		s.Clock = clock
		ns := d.uvarint()
		t := d.byte()
		if d.bad {
			return dst[:orig], d.corrupt(i, "truncated sample header")
		}
		if ns > math.MaxUint32 {
			return dst[:orig], d.corruptAt(i, start, fmt.Sprintf("ns %d out of range", ns))
		}
		s.NS = int32(uint32(ns))
		vt := history.ValueType(t &^ logMetaFlag)
		if !vt.Valid() || (t&logMetaFlag != 0 && vt != history.Log) {
			return dst[:orig], d.corruptAt(i, d.pos-1, fmt.Sprintf("unknown value type byte 0x%02x", t))
		}
		s.Type = vt
		switch vt {
		case history.Float:
			s.F = math.Float64frombits(d.uint64())
		case history.Uint:
			s.U = d.uvarint()
		case history.Str, history.Text:
			s.S = d.string()
		case history.Log:
			s.S = d.string()
			if t&logMetaFlag != 0 {
				lm := &history.LogMeta{}
				lm.Timestamp = d.varint()
				lm.Source = d.string()
				sev := d.varint()
				lm.EventID = d.varint()
				if !d.bad && (sev < math.MinInt32 || sev > math.MaxInt32) {
					return dst[:orig], d.corruptAt(i, start, fmt.Sprintf("log severity %d out of range", sev))
				}
				lm.Severity = int32(sev)
				s.Log = lm
			}
		}
		if d.bad {
			return dst[:orig], d.corruptAt(i, start, fmt.Sprintf("truncated or malformed %s value", vt))
		}
	}
	if d.pos != len(src) {
		return dst[:orig], d.corrupt(-1, fmt.Sprintf("%d trailing bytes after %d samples", len(src)-d.pos, n))
	}
	return dst, nil
}

// decoder reads fields from src. Reads past the end, overlong varints and
// oversized string lengths set bad instead of failing one by one, so the
// sample loop checks once per field group; the value returned after bad is
// set is zero.
type decoder struct {
	src []byte
	pos int
	bad bool
}

func (d *decoder) corrupt(sample int, what string) error {
	return d.corruptAt(sample, d.pos, what)
}

func (d *decoder) corruptAt(sample, off int, what string) error {
	if sample < 0 {
		return fmt.Errorf("%w: offset %d of %d: %s", ErrCorrupt, off, len(d.src), what)
	}
	return fmt.Errorf("%w: sample %d at offset %d of %d: %s", ErrCorrupt, sample, off, len(d.src), what)
}

func (d *decoder) byte() byte {
	if d.pos >= len(d.src) {
		d.bad = true
		return 0
	}
	b := d.src[d.pos]
	d.pos++
	return b
}

func (d *decoder) uvarint() uint64 {
	if d.pos < len(d.src) && d.src[d.pos] < 0x80 {
		b := d.src[d.pos]
		d.pos++
		return uint64(b)
	}
	v, n := binary.Uvarint(d.src[min(d.pos, len(d.src)):])
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.pos += n
	return v
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) uint64() uint64 {
	if len(d.src)-d.pos < 8 {
		d.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint64(d.src[d.pos:])
	d.pos += 8
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.src)-d.pos) {
		d.bad = true
		return ""
	}
	s := string(d.src[d.pos : d.pos+int(n)])
	d.pos += int(n)
	return s
}
