package engine

import (
	"context"
	"fmt"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine/chunkenc"
)

var _ history.Counter = (*Store)(nil)

// CountMany implements history.Counter with the same views as ReadMany.
// In the common case (an item's sources are disjoint in time, nothing is
// being flushed and the head has no late values for the range) it counts
// a chunk inside the range from the index, and decodes only the
// timestamps of a chunk that straddles a bound (chunkenc.DecodeTimes);
// otherwise it counts a read of the item, which merges.
func (s *Store) CountMany(ctx context.Context, items []uint64, q history.Query, max int) (int, error) {
	s.closeMu.RLock()
	closed := s.closed
	s.closeMu.RUnlock()
	if closed {
		return 0, history.ErrClosed
	}
	lo, hi := nanos(q.From), nanos(q.Till+1) // [lo, hi)
	if lo >= hi {
		return 0, nil
	}
	sc := &scratch{}
	snaps := make([]*series, 0, min(len(items), readManyGroup))
	var mine []*block
	var times []int64
	total := 0
	for len(items) > 0 {
		group := items[:min(len(items), readManyGroup)]
		items = items[len(group):]
		snaps = snaps[:0]
		for _, id := range group {
			snaps = append(snaps, s.headSnapshot(id, lo, hi))
		}
		blocks, flushing := s.acquireRange(lo, hi) // after the snapshots, as ReadMany
		var err error
		for k, id := range group {
			if err = ctx.Err(); err != nil {
				break
			}
			mine = mine[:0]
			for _, b := range blocks {
				if _, ok := b.index[id]; ok {
					mine = append(mine, b)
				}
			}
			var fl *series
			if flushing != nil {
				fl = flushing[id]
			}
			q.ItemID = id
			var n int
			n, times, err = s.countItem(ctx, q, lo, hi, mine, fl, snaps[k], sc, times)
			if err != nil {
				break
			}
			total += n
			if max > 0 && total > max {
				break
			}
		}
		for _, b := range blocks {
			b.release()
		}
		clear(snaps)
		if err != nil || (max > 0 && total > max) {
			return total, err
		}
	}
	return total, nil
}

// countItem counts one item's samples in [lo, hi), capped at q.Limit.
// times is a reusable timestamp buffer, returned grown.
func (s *Store) countItem(ctx context.Context, q history.Query, lo, hi int64, blocks []*block, fl, snap *series, sc *scratch, times []int64) (int, []int64, error) {
	capped := func(n int) int {
		if q.Limit > 0 && n > q.Limit {
			return q.Limit
		}
		return n
	}
	if fl == nil && (snap == nil || snap.late.len() == 0) {
		spans, ok := disjointSpans(sc.spans[:0], q.ItemID, blocks, nil, snap)
		sc.spans = spans[:0]
		if ok {
			n := 0
			// inChunk counts a chunk's values in range: from the index
			// when it lies inside, from its timestamps when it straddles.
			inChunk := func(minT, maxT int64, cnt int, data func() ([]byte, error)) error {
				if maxT < lo || minT >= hi {
					return nil
				}
				if minT >= lo && maxT < hi {
					n += cnt
					return nil
				}
				b, err := data()
				if err != nil {
					return err
				}
				if times, err = chunkenc.DecodeTimes(times[:0], b); err != nil {
					return err
				}
				tb := buf{ts: times}
				n += tb.search(hi) - tb.search(lo)
				return nil
			}
			for i := range spans {
				sp := &spans[i]
				if sp.maxT < lo || sp.minT >= hi {
					continue
				}
				if sp.ser != nil {
					for _, c := range sp.ser.chunks {
						if err := inChunk(c.minT, c.maxT, c.n, func() ([]byte, error) { return c.data, nil }); err != nil {
							return 0, times, err
						}
					}
					o := &sp.ser.open
					n += o.search(hi) - o.search(lo)
					continue
				}
				for _, c := range sp.block.index[q.ItemID].chunks {
					err := inChunk(c.minT, c.maxT, c.n, func() ([]byte, error) {
						var err error
						sc.data, err = sp.block.readChunk(c, sc.data)
						return sc.data, err
					})
					if err != nil {
						return 0, times, fmt.Errorf("%s: item %d: %w", sp.block.path, q.ItemID, err)
					}
				}
			}
			return capped(n), times, nil
		}
	}
	// Overlapping sources, late values or a flush under way: count a
	// read, which merges them exactly as Read does.
	n := 0
	err := s.readItem(ctx, q, lo, hi, blocks, fl, snap, func(*history.Sample) bool { n++; return true }, sc)
	return n, times, err
}
