package engine

import (
	"context"

	"github.com/peregrine-mon/peregrine/internal/history"
)

var _ history.BatchReader = (*Store)(nil)

// readManyGroup is how many items ReadMany snapshots from the head before
// it takes one view of the blocks for all of them. The snapshots of a
// group are held at once, so the group bounds that memory; the view costs
// a lock and a reference per block, so a few hundred items amortise it.
const readManyGroup = 256

// ReadMany implements history.BatchReader. Per group of items it copies
// each item's head snapshot, then takes one view of the blocks that
// overlap the range and of the series being flushed (in that order, the
// same as Read, so a concurrent Flush cannot hide a value), and reads the
// items one after another from that view with one set of decode buffers.
func (s *Store) ReadMany(ctx context.Context, items []uint64, q history.Query, fn func(*history.Sample) bool) error {
	s.closeMu.RLock()
	closed := s.closed
	s.closeMu.RUnlock()
	if closed {
		return history.ErrClosed
	}
	lo, hi := nanos(q.From), nanos(q.Till+1) // [lo, hi)
	if lo >= hi {
		return nil
	}
	sc := &scratch{}
	stopped := false
	userFn := fn
	fn = func(v *history.Sample) bool {
		if !userFn(v) {
			stopped = true
			return false
		}
		return true
	}
	snaps := make([]*series, 0, min(len(items), readManyGroup))
	var mine []*block // the view's blocks that hold the current item
	for len(items) > 0 {
		group := items[:min(len(items), readManyGroup)]
		items = items[len(group):]
		snaps = snaps[:0]
		for _, id := range group {
			snaps = append(snaps, s.headSnapshot(id, lo, hi))
		}
		blocks, flushing := s.acquireRange(lo, hi)
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
			if err = s.readItem(ctx, q, lo, hi, mine, fl, snaps[k], fn, sc); stopped || err != nil {
				break
			}
		}
		for _, b := range blocks {
			b.release()
		}
		clear(snaps) // let the group's copies go before the next group
		if stopped || err != nil {
			return err
		}
	}
	return nil
}

// acquireRange returns, in write order, the blocks that overlap [lo, hi)
// for any item, each with a reference the caller must release, and the
// set of series being flushed, as one consistent view (see
// acquireBlocks).
func (s *Store) acquireRange(lo, hi int64) ([]*block, map[uint64]*series) {
	s.blocksMu.RLock()
	defer s.blocksMu.RUnlock()
	var fl map[uint64]*series
	if m := s.flushing.Load(); m != nil {
		fl = *m
	}
	var out []*block
	for _, b := range s.blocks {
		if b.maxT < lo || b.minT >= hi {
			continue
		}
		b.acquire()
		out = append(out, b)
	}
	return out, fl
}
