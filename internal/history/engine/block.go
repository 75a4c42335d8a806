package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"

	"github.com/peregrine-mon/peregrine/internal/fsutil"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine/chunkenc"
)

// Block files: see docs/format/blocks.md. A block holds, for the items
// flushed at one time into one time partition, their compressed chunks
// followed by an index from item to chunks and a fixed footer.

var (
	// blockMagic starts every block this engine writes: format version 3,
	// whose chunks may use the rate float encoding (issue 30); its index
	// is version 2's. Version 2's chunks may use the encodings added for
	// issue 10 (the sparse int stream). An older reader would reject
	// the newer chunks at read time, so the version tells it at open
	// instead.
	blockMagic = []byte("PGBLK003")
	// blockMagicV2 starts blocks written before version 3, read as
	// version 3 (testdata/v2.blk).
	blockMagicV2 = []byte("PGBLK002")
	// blockMagicV1 starts blocks written before version 2; they stay
	// readable (testdata/v1.blk).
	blockMagicV1 = []byte("PGBLK001")
	footerMagic  = []byte("PGBLKEND")
	castagnoli   = crc32.MakeTable(crc32.Castagnoli)
	// ErrCorrupt marks a block whose bytes do not decode; the engine
	// quarantines such a block at open instead of failing.
	ErrCorrupt = errors.New("corrupt block")
)

const footerLen = 8 + 4 + 4 + 8 // index offset, index length, index crc, magic

type chunkRef struct {
	minT, maxT int64
	n          int
	off, len   int64 // the bytes stored in the file
	crc        uint32
}

type itemIndex struct {
	vt     history.ValueType
	chunks []chunkRef // sorted, disjoint
}

// block is an open, immutable block file. Chunks are read with pread:
// nothing but the index is held in memory.
type block struct {
	path      string
	partition int64 // partition start, unix nanoseconds
	span      int64 // partition length in nanoseconds: 2 h, or a day once compacted
	seq       uint64
	minT      int64
	maxT      int64
	f         *os.File
	index     map[uint64]*itemIndex
	size      int64
	// compact: a version 2 block of history chunks stored without the
	// count, first timestamp and span of their header, which readChunk
	// rebuilds from the index entry.
	compact bool
	refs    atomic.Int32 // 1 for the engine's list, +1 per reader
}

func (b *block) acquire() { b.refs.Add(1) }

func (b *block) release() {
	if b.refs.Add(-1) == 0 {
		b.f.Close() // the file may already be unlinked: retention
	}
}

// maxHeaderRest is the most bytes a chunk header holds after its
// encoding byte: a count (≤ 2^20, 3 bytes), the first timestamp (8) and
// the span (≤ 10).
const maxHeaderRest = 3 + 8 + 10

// readChunk reads and checks one chunk into dst (reused when large
// enough) and returns it whole: a compact block's header is rebuilt from
// the index entry.
func (b *block) readChunk(c chunkRef, dst []byte) ([]byte, error) {
	pre := 0
	if b.compact {
		pre = maxHeaderRest
	}
	need := pre + int(c.len)
	if cap(dst) < need {
		dst = make([]byte, need)
	}
	dst = dst[:need]
	stored := dst[pre:]
	if _, err := b.f.ReadAt(stored, c.off); err != nil {
		return nil, fmt.Errorf("%s: cannot read chunk at %d: %w", b.path, c.off, err)
	}
	if crc32.Checksum(stored, castagnoli) != c.crc {
		return nil, fmt.Errorf("%s: chunk at offset %d fails its checksum: %w", b.path, c.off, ErrCorrupt)
	}
	if !b.compact {
		return stored, nil
	}
	// The body moves up against the rebuilt header (a memmove of a few
	// hundred bytes, nothing beside decoding), so that the result starts
	// at dst[0] and keeps dst's capacity for the next call.
	var h [maxHeaderRest]byte
	hb := binary.AppendUvarint(h[:0], uint64(c.n))
	hb = binary.LittleEndian.AppendUint64(hb, uint64(c.minT))
	hb = binary.AppendUvarint(hb, uint64(c.maxT)-uint64(c.minT))
	enc := stored[0]
	n := copy(dst[1+len(hb):], stored[1:])
	dst[0] = enc
	copy(dst[1:], hb)
	return dst[:1+len(hb)+n], nil
}

// blockWriter accumulates one block file in memory, then writes it
// atomically (temporary file, fsync, rename, directory fsync).
type blockWriter struct {
	data    bytes.Buffer
	index   map[uint64]*itemIndex
	minT    int64
	maxT    int64
	compact bool // history chunks: store them without their header's times
}

// newBlockWriter returns a writer of a version 3 block (version 2's
// index). history says that
// the chunks are history chunks (docs/format/chunks.md), whose header the
// block stores in its index only; trend files pass false.
func newBlockWriter(history bool) *blockWriter {
	w := &blockWriter{index: map[uint64]*itemIndex{}, minT: 1<<63 - 1, maxT: -1 << 63, compact: history}
	w.data.Write(blockMagic)
	return w
}

// add appends one chunk of item, whose times and count are minT, maxT
// and n. A history writer drops the chunk header's count, first
// timestamp and span, which repeat the index entry: about 15 bytes per
// chunk, 0.07 bytes per value on the realistic data set (issue 10).
func (w *blockWriter) add(item uint64, vt history.ValueType, minT, maxT int64, n int, chunk []byte) {
	ix := w.index[item]
	if ix == nil {
		ix = &itemIndex{vt: vt}
		w.index[item] = ix
	}
	off := int64(w.data.Len())
	var crc uint32
	if w.compact {
		info, err := chunkenc.Inspect(chunk)
		if err != nil || info.Count != n || info.MinT != minT || info.MaxT != maxT || n == 0 {
			panic(fmt.Sprintf("BUG: engine: chunk of item %d does not match its index entry (%d values %d…%d; header %+v, %v)", item, n, minT, maxT, info, err))
		}
		hl := 1 + uvarintLen(uint64(n)) + 8 + uvarintLen(uint64(maxT)-uint64(minT))
		w.data.WriteByte(chunk[0])
		w.data.Write(chunk[hl:])
		crc = crc32.Update(crc32.Update(0, castagnoli, chunk[:1]), castagnoli, chunk[hl:])
	} else {
		w.data.Write(chunk)
		crc = crc32.Checksum(chunk, castagnoli)
	}
	ix.chunks = append(ix.chunks, chunkRef{minT: minT, maxT: maxT, n: n, off: off, len: int64(w.data.Len()) - off, crc: crc})
	w.minT, w.maxT = min(w.minT, minT), max(w.maxT, maxT)
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// Index flags of version 2.
const indexCompact byte = 1 // history chunks stored without header times

// encodeIndex encodes the version 2 index (docs/format/blocks.md): per
// item a time unit, the first chunk's start and offset, then per chunk
// the gap since the previous one and the span in that unit, so that a
// chunk's entry takes about 14 bytes instead of 26.
func (w *blockWriter) encodeIndex() []byte {
	ids := make([]uint64, 0, len(w.index))
	for id := range w.index {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var b []byte
	flags := byte(0)
	if w.compact {
		flags |= indexCompact
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(ids)))
	prevID := uint64(0)
	for _, id := range ids {
		ix := w.index[id]
		b = binary.AppendUvarint(b, id-prevID)
		prevID = id
		b = append(b, byte(ix.vt))
		b = binary.AppendUvarint(b, uint64(len(ix.chunks)))
		// The unit: the gcd of every gap and span (a millisecond or more
		// at ms precision), so that they take two or three bytes each.
		var u uint64
		for j, c := range ix.chunks {
			u = gcd(u, uint64(c.maxT)-uint64(c.minT))
			if j > 0 {
				u = gcd(u, uint64(c.minT)-uint64(ix.chunks[j-1].maxT))
			}
		}
		u = max(u, 1)
		b = binary.AppendUvarint(b, u)
		b = binary.AppendVarint(b, ix.chunks[0].minT)
		b = binary.AppendUvarint(b, uint64(ix.chunks[0].off))
		for j, c := range ix.chunks {
			if j > 0 {
				p := ix.chunks[j-1]
				b = binary.AppendUvarint(b, (uint64(c.minT)-uint64(p.maxT))/u)
				b = binary.AppendUvarint(b, uint64(c.off-(p.off+p.len)))
			}
			b = binary.AppendUvarint(b, (uint64(c.maxT)-uint64(c.minT))/u)
			b = binary.AppendUvarint(b, uint64(c.n))
			b = binary.AppendUvarint(b, uint64(c.len))
			b = binary.LittleEndian.AppendUint32(b, c.crc)
		}
	}
	return b
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// write stores the block at path.
func (w *blockWriter) write(path string) error {
	idx := w.encodeIndex()
	off := int64(w.data.Len())
	w.data.Write(idx)
	var foot [footerLen]byte
	binary.LittleEndian.PutUint64(foot[0:], uint64(off))
	binary.LittleEndian.PutUint32(foot[8:], uint32(len(idx)))
	binary.LittleEndian.PutUint32(foot[12:], crc32.Checksum(idx, castagnoli))
	copy(foot[16:], footerMagic)
	w.data.Write(foot[:])
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return err
	}
	// fsync the file, rename, fsync the directory: a block is whole or
	// absent after a crash, and the WAL segments it replaces are removed
	// only once it is durable. A crashed write's .tmp is removed at open.
	return fsutil.WriteFileAtomic(path, w.data.Bytes(), fileMode)
}

// openBlock opens and checks a block file's footer and index.
func openBlock(path string, partition int64, seq uint64) (*block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	b, err := readBlockIndex(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	b.partition, b.seq, b.span = partition, seq, int64(PartitionDuration)
	b.refs.Store(1)
	return b, nil
}

func readBlockIndex(f *os.File, path string) (*block, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	corrupt := func(msg string, args ...any) error {
		return fmt.Errorf("%s: %s: %w", path, fmt.Sprintf(msg, args...), ErrCorrupt)
	}
	if size < int64(len(blockMagic))+footerLen {
		return nil, corrupt("file of %d bytes is too short", size)
	}
	head := make([]byte, len(blockMagic))
	if _, err := f.ReadAt(head, 0); err != nil || !(bytes.Equal(head, blockMagic) || bytes.Equal(head, blockMagicV2) || bytes.Equal(head, blockMagicV1)) {
		return nil, corrupt("bad magic")
	}
	v1 := bytes.Equal(head, blockMagicV1)
	var foot [footerLen]byte
	if _, err := f.ReadAt(foot[:], size-footerLen); err != nil {
		return nil, err
	}
	if !bytes.Equal(foot[16:], footerMagic) {
		return nil, corrupt("bad footer magic")
	}
	off := int64(binary.LittleEndian.Uint64(foot[0:]))
	n := int64(binary.LittleEndian.Uint32(foot[8:]))
	if off < int64(len(blockMagic)) || off+n != size-footerLen {
		return nil, corrupt("index offset %d length %d do not fit a %d-byte file", off, n, size)
	}
	idx := make([]byte, n)
	if _, err := f.ReadAt(idx, off); err != nil {
		return nil, err
	}
	if crc32.Checksum(idx, castagnoli) != binary.LittleEndian.Uint32(foot[12:]) {
		return nil, corrupt("index fails its checksum")
	}
	b := &block{path: path, f: f, size: size, minT: 1<<63 - 1, maxT: -1 << 63}
	if v1 {
		b.index, err = decodeBlockIndex(idx, off, b)
	} else {
		b.index, err = decodeBlockIndexV2(idx, off, b)
	}
	if err != nil {
		return nil, corrupt("%v", err)
	}
	return b, nil
}

// decodeBlockIndexV2 parses a version 2 index; dataEnd bounds every
// chunk. It sets b.compact from the index flags.
func decodeBlockIndexV2(idx []byte, dataEnd int64, b *block) (map[uint64]*itemIndex, error) {
	p := 0
	uv := func(what string) (uint64, error) {
		v, n := binary.Uvarint(idx[p:])
		if n <= 0 {
			return 0, fmt.Errorf("bad varint for %s at index offset %d", what, p)
		}
		p += n
		return v, nil
	}
	if len(idx) == 0 {
		return nil, errors.New("empty index")
	}
	if dataEnd < int64(len(blockMagic)) {
		return nil, fmt.Errorf("index at offset %d, inside the magic", dataEnd)
	}
	flags := idx[0]
	p++
	if flags&^indexCompact != 0 {
		return nil, fmt.Errorf("unknown index flags 0x%02x", flags)
	}
	b.compact = flags&indexCompact != 0
	items, err := uv("item count")
	if err != nil {
		return nil, err
	}
	if items > uint64(len(idx)) {
		return nil, fmt.Errorf("index claims %d items in %d bytes", items, len(idx))
	}
	out := make(map[uint64]*itemIndex, items)
	id := uint64(0)
	for i := uint64(0); i < items; i++ {
		d, err := uv("item id")
		if err != nil {
			return nil, err
		}
		if i > 0 && (d == 0 || id+d < id) {
			return nil, fmt.Errorf("item id %d+%d not ascending", id, d)
		}
		id += d
		if p >= len(idx) {
			return nil, errors.New("index truncated")
		}
		vt := history.ValueType(idx[p])
		p++
		if !vt.Valid() {
			return nil, fmt.Errorf("item %d: bad value type %d", id, vt)
		}
		nc, err := uv("chunk count")
		if err != nil {
			return nil, err
		}
		if nc == 0 || nc > uint64(len(idx)-p) {
			return nil, fmt.Errorf("item %d claims %d chunks", id, nc)
		}
		u, err := uv("time unit")
		if err != nil {
			return nil, err
		}
		if u == 0 || u > 1<<62 {
			return nil, fmt.Errorf("item %d: time unit %d", id, u)
		}
		minT, n := binary.Varint(idx[p:])
		if n <= 0 {
			return nil, fmt.Errorf("bad varint for item %d's first time at index offset %d", id, p)
		}
		p += n
		off, err := uv("first offset")
		if err != nil {
			return nil, err
		}
		// times scales a count of units, refusing what leaves int64.
		times := func(k uint64) (int64, bool) {
			hi, lo := bits.Mul64(k, u)
			return int64(lo), hi == 0 && lo <= 1<<62
		}
		ix := &itemIndex{vt: vt, chunks: make([]chunkRef, 0, nc)}
		var prev chunkRef
		for c := uint64(0); c < nc; c++ {
			if c > 0 {
				g, err := uv("gap")
				if err != nil {
					return nil, err
				}
				gap, ok := times(g)
				if !ok || g == 0 || prev.maxT > 1<<63-1-gap {
					return nil, fmt.Errorf("item %d chunk %d: gap of %d units of %d", id, c, g, u)
				}
				minT = prev.maxT + gap
				skip, err := uv("offset skip")
				if err != nil {
					return nil, err
				}
				off = uint64(prev.off+prev.len) + skip
				if off < skip {
					return nil, fmt.Errorf("item %d chunk %d: offset overflows", id, c)
				}
			}
			sp, err := uv("span")
			if err != nil {
				return nil, err
			}
			cnt, err := uv("value count")
			if err != nil {
				return nil, err
			}
			ln, err := uv("length")
			if err != nil {
				return nil, err
			}
			if p+4 > len(idx) {
				return nil, errors.New("index truncated")
			}
			crc := binary.LittleEndian.Uint32(idx[p:])
			p += 4
			span, ok := times(sp)
			if !ok || minT > 1<<63-1-span || cnt == 0 || cnt > chunkenc.MaxCount || (cnt == 1 && span != 0) ||
				off < uint64(len(blockMagic)) || ln == 0 || ln > uint64(dataEnd) || off > uint64(dataEnd)-ln {
				return nil, fmt.Errorf("item %d chunk %d: inconsistent entry", id, c)
			}
			prev = chunkRef{minT: minT, maxT: minT + span, n: int(cnt), off: int64(off), len: int64(ln), crc: crc}
			ix.chunks = append(ix.chunks, prev)
			b.minT, b.maxT = min(b.minT, prev.minT), max(b.maxT, prev.maxT)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("item %d listed twice", id)
		}
		out[id] = ix
	}
	if p != len(idx) {
		return nil, fmt.Errorf("%d bytes after the last index entry", len(idx)-p)
	}
	return out, nil
}

// decodeBlockIndex parses a version 1 index; dataEnd bounds every chunk.
func decodeBlockIndex(idx []byte, dataEnd int64, b *block) (map[uint64]*itemIndex, error) {
	p := 0
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(idx[p:])
		if n <= 0 {
			return 0, fmt.Errorf("bad varint at index offset %d", p)
		}
		p += n
		return v, nil
	}
	items, err := uv()
	if err != nil {
		return nil, err
	}
	if items > uint64(len(idx)) {
		return nil, fmt.Errorf("index claims %d items in %d bytes", items, len(idx))
	}
	out := make(map[uint64]*itemIndex, items)
	for i := uint64(0); i < items; i++ {
		id, err := uv()
		if err != nil {
			return nil, err
		}
		if p >= len(idx) {
			return nil, errors.New("index truncated")
		}
		vt := history.ValueType(idx[p])
		p++
		if !vt.Valid() {
			return nil, fmt.Errorf("item %d: bad value type %d", id, vt)
		}
		nc, err := uv()
		if err != nil {
			return nil, err
		}
		if nc > uint64(len(idx)-p) {
			return nil, fmt.Errorf("item %d claims %d chunks", id, nc)
		}
		ix := &itemIndex{vt: vt, chunks: make([]chunkRef, 0, nc)}
		prevMax := int64(-1 << 63)
		for c := uint64(0); c < nc; c++ {
			minT, n := binary.Varint(idx[p:])
			if n <= 0 {
				return nil, fmt.Errorf("bad varint at index offset %d", p)
			}
			p += n
			span, err := uv()
			if err != nil {
				return nil, err
			}
			cnt, err := uv()
			if err != nil {
				return nil, err
			}
			off, err := uv()
			if err != nil {
				return nil, err
			}
			ln, err := uv()
			if err != nil {
				return nil, err
			}
			if p+4 > len(idx) {
				return nil, errors.New("index truncated")
			}
			crc := binary.LittleEndian.Uint32(idx[p:])
			p += 4
			maxT := minT + int64(span)
			if span > 1<<62 || maxT < minT || minT <= prevMax || cnt == 0 || off < uint64(len(blockMagic)) || ln == 0 || off+ln > uint64(dataEnd) || off+ln < off {
				return nil, fmt.Errorf("item %d chunk %d: inconsistent entry", id, c)
			}
			prevMax = maxT
			ix.chunks = append(ix.chunks, chunkRef{minT: minT, maxT: maxT, n: int(cnt), off: int64(off), len: int64(ln), crc: crc})
			b.minT, b.maxT = min(b.minT, minT), max(b.maxT, maxT)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("item %d listed twice", id)
		}
		out[id] = ix
	}
	if p != len(idx) {
		return nil, fmt.Errorf("%d bytes after the last index entry", len(idx)-p)
	}
	return out, nil
}
