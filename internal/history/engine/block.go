package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Block files: see docs/format/blocks.md. A block holds, for the items
// flushed at one time into one time partition, their compressed chunks
// followed by an index from item to chunks and a fixed footer.

var (
	// blockMagic starts every block this engine writes: format version 2,
	// whose chunks may use the encodings added for issue 10 (the sparse
	// int stream); a version 1 reader would reject those chunks at read
	// time, so the version tells it at open instead.
	blockMagic = []byte("PGBLK002")
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
	off, len   int64
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
	refs      atomic.Int32 // 1 for the engine's list, +1 per reader
}

func (b *block) acquire() { b.refs.Add(1) }

func (b *block) release() {
	if b.refs.Add(-1) == 0 {
		b.f.Close() // the file may already be unlinked: retention
	}
}

// readChunk reads and checks one chunk.
func (b *block) readChunk(c chunkRef, dst []byte) ([]byte, error) {
	if cap(dst) < int(c.len) {
		dst = make([]byte, c.len)
	}
	dst = dst[:c.len]
	if _, err := b.f.ReadAt(dst, c.off); err != nil {
		return nil, fmt.Errorf("%s: cannot read chunk at %d: %w", b.path, c.off, err)
	}
	if crc32.Checksum(dst, castagnoli) != c.crc {
		return nil, fmt.Errorf("%s: chunk at offset %d fails its checksum: %w", b.path, c.off, ErrCorrupt)
	}
	return dst, nil
}

// blockWriter accumulates one block file in memory, then writes it
// atomically (temporary file, fsync, rename, directory fsync).
type blockWriter struct {
	data  bytes.Buffer
	index map[uint64]*itemIndex
	minT  int64
	maxT  int64
}

func newBlockWriter() *blockWriter {
	w := &blockWriter{index: map[uint64]*itemIndex{}, minT: 1<<63 - 1, maxT: -1 << 63}
	w.data.Write(blockMagic)
	return w
}

func (w *blockWriter) add(item uint64, vt history.ValueType, minT, maxT int64, n int, chunk []byte) {
	ix := w.index[item]
	if ix == nil {
		ix = &itemIndex{vt: vt}
		w.index[item] = ix
	}
	off := int64(w.data.Len())
	w.data.Write(chunk)
	ix.chunks = append(ix.chunks, chunkRef{minT: minT, maxT: maxT, n: n, off: off, len: int64(len(chunk)), crc: crc32.Checksum(chunk, castagnoli)})
	w.minT, w.maxT = min(w.minT, minT), max(w.maxT, maxT)
}

func (w *blockWriter) encodeIndex() []byte {
	ids := make([]uint64, 0, len(w.index))
	for id := range w.index {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		ix := w.index[id]
		b = binary.AppendUvarint(b, id)
		b = append(b, byte(ix.vt))
		b = binary.AppendUvarint(b, uint64(len(ix.chunks)))
		for _, c := range ix.chunks {
			b = binary.AppendVarint(b, c.minT)
			b = binary.AppendUvarint(b, uint64(c.maxT-c.minT))
			b = binary.AppendUvarint(b, uint64(c.n))
			b = binary.AppendUvarint(b, uint64(c.off))
			b = binary.AppendUvarint(b, uint64(c.len))
			b = binary.LittleEndian.AppendUint32(b, c.crc)
		}
	}
	return b
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
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fileMode)
	if err != nil {
		return err
	}
	if _, err := f.Write(w.data.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
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
	if _, err := f.ReadAt(head, 0); err != nil || !(bytes.Equal(head, blockMagic) || bytes.Equal(head, blockMagicV1)) {
		return nil, corrupt("bad magic")
	}
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
	b.index, err = decodeBlockIndex(idx, off, b)
	if err != nil {
		return nil, corrupt("%v", err)
	}
	return b, nil
}

// decodeBlockIndex parses an index; dataEnd bounds every chunk.
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
