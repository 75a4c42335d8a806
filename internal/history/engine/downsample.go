package engine

import (
	"context"
	"fmt"
	"sort"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine/chunkenc"
)

var _ history.Downsampler = (*Store)(nil)

// Downsample implements history.Downsampler. It takes the same consistent
// view of blocks, the series being flushed and the head as Read, and in
// the common case (the sources are disjoint in time, see disjointSpans)
// decodes each chunk into reused column buffers and folds the selected
// run straight into the accumulator: no history.Sample is built and
// nothing is allocated per value or per chunk once the buffers have
// grown to a chunk's size. Block chunks are decoded to []float64 and
// folded as they are; head pieces go through reader.piece (which merges
// late samples) with a run callback.
//
// Overlapping sources (late values written after their partition was
// flushed, or a type change) need Read's merge, which collects the
// sources anyway; that case folds a Read (history.DownsampleRead).
//
// Rejected: skipping the decode of a chunk that lies inside one bucket by
// using per-chunk min/max/sum. Chunks carry no value statistics (the
// header has count and first/last time only, docs/format/chunks.md), and
// adding them would change the block format for a gain only when buckets
// are much wider than chunks; decoding 1M values already takes a few
// milliseconds.
func (s *Store) Downsample(ctx context.Context, q history.DownsampleQuery) ([]history.Bucket, error) {
	if q.Buckets < 1 || q.Buckets > history.MaxBuckets {
		return nil, history.ErrBuckets
	}
	s.closeMu.RLock()
	closed := s.closed
	s.closeMu.RUnlock()
	if closed {
		return nil, history.ErrClosed
	}
	g := history.NewGrid(q.From, q.Till, q.Buckets)
	if g.N == 0 {
		return nil, nil
	}
	lo, hi := nanos(g.Start), nanos(g.End) // [lo, hi)
	str := &s.stripes[q.ItemID%stripes]
	str.mu.RLock()
	var snap *series
	if sr := str.series[q.ItemID]; sr != nil {
		snap = sr.snapshot(lo, hi)
	}
	str.mu.RUnlock()
	blocks, fl := s.acquireBlocks(q.ItemID, lo, hi)
	defer func() {
		for _, b := range blocks {
			b.release()
		}
	}()
	spans, ok := disjointSpans(nil, q.ItemID, blocks, fl, snap)
	if !ok {
		return history.DownsampleRead(ctx, s, q)
	}
	if len(spans) == 0 || !spans[0].vt.Numeric() {
		return nil, nil
	}
	vt := spans[0].vt
	acc := history.NewAccumulator(g)
	d := downsampler{acc: acc, vt: vt, lo: lo, hi: hi}
	for i := range spans {
		sp := &spans[i]
		if sp.maxT < lo || sp.minT >= hi {
			continue
		}
		if sp.ser != nil {
			r := reader{vt: vt, lo: lo, hi: hi, runs: d.run}
			if err := r.series(ctx, sp.ser, lo, hi, false); err != nil {
				return nil, err
			}
			continue
		}
		if err := d.block(ctx, sp.block, q.ItemID); err != nil {
			return nil, err
		}
	}
	return acc.Buckets(), nil
}

// downsampler folds one item's chunks into an accumulator; its buffers
// are reused from chunk to chunk.
type downsampler struct {
	acc    *history.Accumulator
	vt     history.ValueType
	lo, hi int64
	data   []byte
	ts     []int64
	fs     []float64
	us     []uint64
}

// run folds a head piece's selected samples.
func (d *downsampler) run(src *buf, i, j int) {
	if d.vt == history.Float {
		d.acc.AddFloatBits(src.ts[i:j], src.num[i:j])
	} else {
		d.acc.AddUints(src.ts[i:j], src.num[i:j])
	}
}

// block folds item's chunks in [lo, hi) from one block file.
func (d *downsampler) block(ctx context.Context, b *block, item uint64) error {
	for _, c := range b.index[item].chunks {
		if c.maxT < d.lo || c.minT >= d.hi {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if d.data, err = b.readChunk(c, d.data); err != nil {
			return err
		}
		if d.vt == history.Float {
			d.ts, d.fs, err = chunkenc.DecodeFloats(d.ts[:0], d.fs[:0], d.data)
		} else {
			d.ts, d.us, err = chunkenc.DecodeUints(d.ts[:0], d.us[:0], d.data)
		}
		if err != nil {
			return fmt.Errorf("%s: item %d: %w", b.path, item, err)
		}
		// Only the chunks at the ends of the range need cutting.
		i, j := 0, len(d.ts)
		if c.minT < d.lo {
			i = sort.Search(len(d.ts), func(k int) bool { return d.ts[k] >= d.lo })
		}
		if c.maxT >= d.hi {
			j = sort.Search(len(d.ts), func(k int) bool { return d.ts[k] >= d.hi })
		}
		if i >= j {
			continue
		}
		if d.vt == history.Float {
			d.acc.AddFloats(d.ts[i:j], d.fs[i:j])
		} else {
			d.acc.AddUints(d.ts[i:j], d.us[i:j])
		}
	}
	return nil
}
