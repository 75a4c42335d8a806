package chunkenc

import (
	"encoding/binary"
	"slices"
)

// A string column holds n strings (n from the context) in one of three
// modes. In a string chunk the mode is the low nibble of the encoding byte
// (EncStringRaw, EncStringDict, EncStringZstd) and the body follows the
// timestamp stream; in a log chunk each column is a mode byte and a body.
//
//	colRaw:  int stream of n lengths, then the concatenated bytes
//	colDict: uvarint d (1..n), int stream of d lengths, the d entries'
//	         concatenated bytes, byte index mode (idxPlain or idxDelta),
//	         int stream of n indexes (plain) or zigzag index deltas
//	colZstd: zstd block whose content is a mode byte (colRaw or colDict)
//	         and that mode's body
const (
	colRaw  byte = 1
	colDict byte = 2
	colZstd byte = 3
)

// Dictionary index modes.
const (
	idxPlain byte = 0
	idxDelta byte = 1
)

// zstdMinStringBytes is the smallest column worth trying zstd on.
const zstdMinStringBytes = 64

// EncodeStrings appends a chunk of character or text values with
// timestamps ts to dst and returns the extended slice. Repetitive values
// go into a dictionary; otherwise the column is zstd-compressed, or stored
// raw when that is smaller. It panics if len(ts) != len(vals) or len(ts) >
// MaxCount.
func EncodeStrings(dst []byte, ts []int64, vals []string) []byte {
	checkLens("EncodeStrings", len(ts), len(vals))
	if len(vals) == 0 {
		return appendHeader(dst, EncStringRaw, ts)
	}
	start := len(dst)
	sc := getScratch()
	defer putScratch(sc)
	dst = appendHeader(dst, EncStringRaw, ts)
	dst = appendTimestamps(dst, ts, sc)
	var mode byte
	dst, mode = appendStringColumn(dst, vals, sc)
	dst[start] = 0x20 | mode
	return dst
}

// appendStringColumn appends the body of the smallest column encoding of
// vals and returns its mode.
func appendStringColumn(dst []byte, vals []string, sc *scratch) ([]byte, byte) {
	n := len(vals)
	lens := grow(sc.u, n)
	sc.u = lens
	total := 0
	for i, s := range vals {
		lens[i] = uint64(len(s))
		total += len(s)
	}
	lensPlan := planFor(lens)
	rawSize := lensPlan.size() + 1 + total

	// The column with its mode byte goes to sc.c1, for zstd to read.
	inner := sc.c1[:0]
	if d := buildDict(vals, sc); d != nil {
		inner = appendDictColumn(inner, vals, d, sc)
		if len(inner) > rawSize {
			inner = inner[:0]
		}
	}
	if len(inner) == 0 {
		inner = append(inner, colRaw)
		inner = appendIntsPlan(inner, lens, &lensPlan)
		for _, s := range vals {
			inner = append(inner, s...)
		}
	}
	sc.c1 = inner
	if len(inner) >= zstdMinStringBytes {
		if out, ok := appendZstdBlock(dst, inner, len(inner)-1); ok {
			return out, colZstd
		}
	}
	return append(dst, inner[1:]...), inner[0]
}

// strDict is a dictionary of distinct strings in order of first use, with
// each value's index.
type strDict struct {
	entries []string
	idx     []uint64
}

// buildDict returns the dictionary of vals, or nil when more than half the
// values are distinct (then a dictionary cannot pay for itself).
func buildDict(vals []string, sc *scratch) *strDict {
	limit := len(vals) / 2
	if limit == 0 {
		return nil
	}
	if sc.dict == nil {
		sc.dict = make(map[string]uint32)
	}
	m := sc.dict
	defer func() {
		if len(m) > 1<<14 {
			sc.dict = nil // let a huge map go rather than pool it
		} else {
			clear(m)
		}
	}()
	d := &sc.sd
	d.entries = d.entries[:0]
	d.idx = grow(d.idx, len(vals))
	for i, s := range vals {
		j, ok := m[s]
		if !ok {
			if len(d.entries) == limit {
				clear(d.entries)
				return nil
			}
			j = uint32(len(d.entries))
			m[s] = j
			d.entries = append(d.entries, s)
		}
		d.idx[i] = uint64(j)
	}
	return d
}

func appendDictColumn(dst []byte, vals []string, d *strDict, sc *scratch) []byte {
	dst = append(dst, colDict)
	dst = binary.AppendUvarint(dst, uint64(len(d.entries)))
	lens := grow(sc.u2, len(d.entries))
	sc.u2 = lens
	for i, s := range d.entries {
		lens[i] = uint64(len(s))
	}
	dst = appendInts(dst, lens)
	for _, s := range d.entries {
		dst = append(dst, s...)
	}
	clear(d.entries) // drop references to the caller's strings
	// Plain indexes or zigzag deltas (runs of one value become zeros).
	deltas := grow(sc.u2, len(vals))
	sc.u2 = deltas
	prev := int64(0)
	for i, x := range d.idx {
		deltas[i] = zigzag(int64(x) - prev)
		prev = int64(x)
	}
	plainPlan := planFor(d.idx)
	deltaPlan := planFor(deltas)
	if plainPlan.size() <= deltaPlan.size() {
		dst = append(dst, idxPlain)
		return appendIntsPlan(dst, d.idx, &plainPlan)
	}
	dst = append(dst, idxDelta)
	return appendIntsPlan(dst, deltas, &deltaPlan)
}

// DecodeStrings decodes a string chunk, appending its timestamps to ts and
// its values to vals. The strings share one allocation per chunk (or per
// dictionary) and never alias src. On error it returns ts and vals with
// their original lengths and an error wrapping ErrCorrupt.
func DecodeStrings(ts []int64, vals []string, src []byte) ([]int64, []string, error) {
	r := reader{b: src}
	info, err := r.header()
	if err != nil {
		return ts, vals, err
	}
	switch info.Encoding {
	case EncStringRaw, EncStringDict, EncStringZstd:
	default:
		return ts, vals, corruptAt("encoding", 0, "%v is not a string encoding", info.Encoding)
	}
	n := info.Count
	nts, nvals := len(ts), len(vals)
	ts = slices.Grow(ts, n)[:nts+n]
	vals = slices.Grow(vals, n)[:nvals+n]
	err = decodeTimestamps(&r, &info, ts[nts:])
	if err == nil && n > 0 {
		err = decodeStringColumn(&r, "values", byte(info.Encoding)&0x0f, vals[nvals:], false)
	}
	if err == nil {
		err = r.end()
	}
	if err != nil {
		clear(vals[nvals:])
		return ts[:nts], vals[:nvals], err
	}
	return ts, vals, nil
}

// decodeStringColumn decodes a column body of the given mode into out.
func decodeStringColumn(r *reader, field string, mode byte, out []string, nested bool) error {
	switch mode {
	case colRaw:
		return readStrings(r, field, out)
	case colDict:
		return decodeDictColumn(r, field, out)
	case colZstd:
		if nested {
			return r.corrupt(field, "nested zstd block")
		}
		sc := getScratch()
		defer putScratch(sc)
		raw, err := readZstdBlock(r, field, MaxZstdBytes, sc.b[:0])
		if err != nil {
			return err
		}
		sc.b = raw
		inner := reader{b: raw}
		m, err := inner.byteP(field, "(zstd) mode")
		if err != nil {
			return err
		}
		if err := decodeStringColumn(&inner, field+" (zstd)", m, out, true); err != nil {
			return err
		}
		if inner.off != len(raw) {
			return r.corrupt(field, "zstd block has %d trailing bytes", len(raw)-inner.off)
		}
		return nil
	}
	return r.corrupt(field, "unknown column mode %d", mode)
}

// readStrings reads an int stream of len(out) lengths followed by the
// concatenated bytes, and fills out with substrings of one new string.
func readStrings(r *reader, field string, out []string) error {
	sc := getScratch()
	defer putScratch(sc)
	lens := grow(sc.u, len(out))
	sc.u = lens
	if err := decodeInts(r, field+" lengths", lens); err != nil {
		return err
	}
	left := uint64(len(r.b) - r.off)
	var total uint64
	for i, l := range lens {
		if l > left-total {
			return r.corrupt(field, "string %d of %d bytes runs past the end (%d bytes left)", i, l, left-total)
		}
		total += l
	}
	b, _ := r.bytes(field, int(total))
	all := string(b)
	off := uint64(0)
	for i, l := range lens {
		out[i] = all[off : off+l]
		off += l
	}
	return nil
}

func decodeDictColumn(r *reader, field string, out []string) error {
	n := len(out)
	d, err := r.lengthP(field, "dictionary size", uint64(n))
	if err != nil {
		return err
	}
	if d == 0 {
		return r.corrupt(field+" dictionary size", "zero for %d values", n)
	}
	dict := make([]string, d)
	if err := readStrings(r, field+" dictionary", dict); err != nil {
		return err
	}
	off := r.off
	im, err := r.byteP(field, "index mode")
	if err != nil {
		return err
	}
	if im != idxPlain && im != idxDelta {
		return corruptAt(field+" index mode", off, "unknown mode %d", im)
	}
	sc := getScratch()
	defer putScratch(sc)
	idx := grow(sc.u, n)
	sc.u = idx
	off = r.off
	if err := decodeInts(r, field+" indexes", idx); err != nil {
		return err
	}
	var cur int64
	for i, x := range idx {
		if im == idxDelta {
			cur += unzigzag(x)
		} else {
			cur = int64(x)
		}
		if cur < 0 || cur >= int64(d) {
			return corruptAt(field+" indexes", off, "index %d of value %d outside the dictionary of %d", cur, i, d)
		}
		out[i] = dict[cur]
	}
	return nil
}
