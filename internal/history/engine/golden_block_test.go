package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// goldenSamples are the values in testdata/v1.blk, a block written by the
// engine before block format version 2 (commit aa320b4, the parent of the
// compact format): five items, one per value type, with nanosecond
// timestamps, three chunks for the fast ones. Never regenerate the file
// with a newer engine: it stands for the blocks already on users' disks.
func goldenSamples() []history.Sample {
	var out []history.Sample
	for i := 0; i < 300; i++ {
		clock := int64(1_700_000_000 + i*10)
		ns := int32((i * 7919 * 104729) % 1_000_000_000)
		out = append(out,
			history.Sample{ItemID: 1, Clock: clock, NS: ns, Type: history.Float, F: float64(i%97) / 8},
			history.Sample{ItemID: 2, Clock: clock, NS: 0, Type: history.Uint, U: uint64(i) * 4096},
			history.Sample{ItemID: 3, Clock: clock, NS: ns, Type: history.Str, S: []string{"up", "down"}[i/50%2]},
		)
		if i%3 == 0 {
			out = append(out, history.Sample{ItemID: 4, Clock: clock, NS: 1, Type: history.Text, S: "line " + string(rune('a'+i%26))},
				history.Sample{ItemID: 5, Clock: clock, Type: history.Log, S: "log", Log: &history.LogMeta{Timestamp: clock - 5, Source: "src", Severity: int32(i % 5), EventID: int64(i)}})
		}
	}
	return out
}

// TestWriteGoldenBlockV2 wrote testdata/v2.blk (goldenSamples in a
// version 2 block, by commit f3d78c9, before version 3) when run with
// PEREGRINE_WRITE_GOLDEN_V2=1. Never run it with a newer engine.
func TestWriteGoldenBlockV2(t *testing.T) {
	if os.Getenv("PEREGRINE_WRITE_GOLDEN_V2") != "1" {
		t.Skip("writes testdata/v2.blk only when asked")
	}
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Write(context.Background(), goldenSamples()); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(s.blocks) != 1 {
		t.Fatalf("%d blocks", len(s.blocks))
	}
	raw, err := os.ReadFile(s.blocks[0].path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "v2.blk"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGoldenBlockV1 opens a version 1 block and a version 2 block (written
// by older engines) with today's engine and reads every value back
// exactly.
func TestGoldenBlockV1(t *testing.T) {
	for _, v := range []string{"1", "2"} {
		t.Run("v"+v, func(t *testing.T) { testGoldenBlock(t, "v"+v+".blk", "PGBLK00"+v) })
	}
}

func testGoldenBlock(t *testing.T, file, magic string) {
	src, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if string(src[:8]) != magic {
		t.Fatalf("testdata/%s starts with %q, not %s", file, src[:8], magic)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "blocks", "p1699999200")
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "000000000001.blk"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.blocks) != 1 {
		t.Fatalf("%d blocks open, want 1 (quarantined?)", len(s.blocks))
	}
	want := map[uint64][]history.Sample{}
	for _, v := range goldenSamples() {
		want[v.ItemID] = append(want[v.ItemID], v)
	}
	for id := uint64(1); id <= 5; id++ {
		var got []history.Sample
		err := s.Read(context.Background(), history.Query{ItemID: id, From: 0, Till: 1 << 40}, func(v *history.Sample) bool {
			c := *v
			if v.Log != nil {
				l := *v.Log
				c.Log = &l
			}
			got = append(got, c)
			return true
		})
		if err != nil {
			t.Fatalf("item %d: %v", id, err)
		}
		if diff := cmp.Diff(want[id], got); diff != "" {
			t.Errorf("item %d (-want +got):\n%s", id, diff)
		}
	}
}

// TestGoldenBlockV1Compacted merges the version 1 block with a version 2
// block of older values of the same day: a compaction rewrites both into
// one version 2 day block, and every value of both reads back.
func TestGoldenBlockV1Compacted(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "v1.blk"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "blocks", "p1699999200")
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "000000000001.blk"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[uint64][]history.Sample{}
	for _, v := range goldenSamples() {
		want[v.ItemID] = append(want[v.ItemID], v)
	}
	// Three hours earlier, the same day (2023-11-14): a second 2-hour
	// block, written now in version 2.
	var newer []history.Sample
	for i := range 50 {
		v := history.Sample{ItemID: 1, Clock: 1_699_989_000 + int64(i*60), NS: int32(i * 1_000_003), Type: history.Float, F: float64(i) / 100}
		newer = append(newer, v)
	}
	want[1] = append(slices.Clone(newer), want[1]...)
	if err := s.Write(context.Background(), newer); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(s.blocks) != 2 || s.blocks[0].compact == s.blocks[1].compact {
		t.Fatalf("before compaction: %d blocks, want a version 1 and a version 2 block", len(s.blocks))
	}
	if _, err := s.Compact(context.Background(), time.Unix(1_700_000_000+3*86400, 0), nil); err != nil {
		t.Fatal(err)
	}
	if len(s.blocks) != 1 || s.blocks[0].span != int64(DayPartition) || !s.blocks[0].compact {
		t.Fatalf("after compaction: %d blocks, want one compact day block", len(s.blocks))
	}
	for id := uint64(1); id <= 5; id++ {
		var got []history.Sample
		err := s.Read(context.Background(), history.Query{ItemID: id, Till: 1 << 40}, func(v *history.Sample) bool {
			c := *v
			if v.Log != nil {
				l := *v.Log
				c.Log = &l
			}
			got = append(got, c)
			return true
		})
		if err != nil {
			t.Fatalf("item %d: %v", id, err)
		}
		if diff := cmp.Diff(want[id], got); diff != "" {
			t.Errorf("item %d (-want +got):\n%s", id, diff)
		}
	}
}

// TestBlockV2 checks what a flush writes now: version 2 blocks whose
// history chunks are stored without their header times (rebuilt on
// read, so every value reads back), trend files stored whole, and a
// flipped byte of a stored chunk caught by its checksum.
func TestBlockV2(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, ChunkValues: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	samples := goldenSamples()
	if err := s.Write(context.Background(), samples); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(s.blocks) != 1 || len(s.trends) == 0 {
		t.Fatalf("%d blocks and %d trend files, want 1 and some", len(s.blocks), len(s.trends))
	}
	b := s.blocks[0]
	raw, err := os.ReadFile(b.path)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw[:8]) != "PGBLK003" || !b.compact {
		t.Fatalf("block starts with %q, compact %v; want PGBLK003, compact", raw[:8], b.compact)
	}
	for _, tb := range s.trends {
		if tb.compact {
			t.Errorf("%s: trend file marked compact", tb.path)
		}
	}
	want := map[uint64][]history.Sample{}
	for _, v := range samples {
		want[v.ItemID] = append(want[v.ItemID], v)
	}
	var buf []byte
	for id, ix := range b.index {
		for _, c := range ix.chunks {
			// The buffer is passed back as the read path does.
			if buf, err = b.readChunk(c, buf); err != nil {
				t.Fatalf("item %d: %v", id, err)
			}
			if int64(len(buf)) <= c.len {
				t.Errorf("item %d: chunk of %d bytes rebuilt from %d stored", id, len(buf), c.len)
			}
		}
		var got []history.Sample
		err := s.Read(context.Background(), history.Query{ItemID: id, Till: 1 << 40}, func(v *history.Sample) bool {
			c := *v
			if v.Log != nil {
				l := *v.Log
				c.Log = &l
			}
			got = append(got, c)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[id], got); diff != "" {
			t.Errorf("item %d (-want +got):\n%s", id, diff)
		}
	}
	// Flip the last byte of item 1's first chunk on disk.
	c := b.index[1].chunks[0]
	raw[c.off+c.len-1] ^= 0x40
	if err := os.WriteFile(b.path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	b2, err := openBlock(b.path, b.partition, b.seq)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.release()
	if _, err := b2.readChunk(c, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped chunk byte: err %v, want ErrCorrupt", err)
	}
}
