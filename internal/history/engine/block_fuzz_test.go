package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// seedBlock returns the bytes of a small valid block file.
func seedBlock(t testing.TB) []byte {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, ChunkValues: 4})
	if err != nil {
		t.Fatal(err)
	}
	var batch []history.Sample
	for i := 0; i < 20; i++ {
		batch = append(batch, history.Sample{ItemID: uint64(i%3 + 1), Clock: 1_700_000_000 + int64(i*60), Type: history.Float, F: float64(i) / 4})
	}
	if err := s.Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	path := s.blocks[0].path
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzBlockIndex feeds arbitrary bytes as a block file: opening must fail
// cleanly (wrapping ErrCorrupt) or succeed, and reading every indexed
// chunk must not panic.
func FuzzBlockIndex(f *testing.F) {
	f.Add(seedBlock(f))
	f.Add([]byte("PGBLK001"))
	f.Add([]byte("PGBLK002"))
	f.Add([]byte("PGBLK003"))
	for _, name := range []string{"v1.blk", "v2.blk"} {
		if old, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(old)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "000000000001.blk")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := openBlock(path, 0, 1)
		if err != nil {
			return
		}
		defer b.release()
		for id, ix := range b.index {
			r := reader{vt: ix.vt, lo: -1 << 63, hi: 1<<63 - 1, collect: &buf{}, late: &buf{}}
			for _, c := range ix.chunks {
				d, err := b.readChunk(c, nil)
				if err != nil {
					continue
				}
				r.piece(&piece{lower: c.minT - 1, upper: c.maxT, data: d}, false)
				decodeTrends(nil, d)
			}
			_ = id
		}
	})
}

// FuzzBlockIndexV2 feeds arbitrary bytes to the version 2 index decoder
// directly (FuzzBlockIndex goes through a file per input, a hundred times
// slower): it must fail cleanly or return entries that keep the
// invariants readers rely on (sorted, disjoint chunks inside the data,
// value counts a chunk header can carry).
func FuzzBlockIndexV2(f *testing.F) {
	seed := seedBlock(f)
	f.Add(seed[len(blockMagic):len(seed)-footerLen], int64(len(seed)))
	f.Add([]byte{1, 0}, int64(8))
	f.Fuzz(func(t *testing.T, idx []byte, dataEnd int64) {
		b := &block{minT: 1<<63 - 1, maxT: -1 << 63}
		out, err := decodeBlockIndexV2(idx, dataEnd, b)
		if err != nil {
			return
		}
		for id, ix := range out {
			prevMax := int64(-1 << 63)
			for j, c := range ix.chunks {
				if c.minT > c.maxT || (j > 0 && c.minT <= prevMax) || c.n < 1 || c.n > 1<<20 ||
					c.off < int64(len(blockMagic)) || c.len < 1 || c.off+c.len > dataEnd {
					t.Fatalf("item %d chunk %d: %+v breaks the invariants (dataEnd %d)", id, j, c, dataEnd)
				}
				prevMax = c.maxT
			}
		}
	})
}
