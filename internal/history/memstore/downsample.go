package memstore

import (
	"context"
	"sort"

	"github.com/peregrine-mon/peregrine/internal/history"
)

var _ history.Downsampler = (*Store)(nil)

// Downsample implements history.Downsampler by folding the series'
// columns in place, readChunk values per hold of the stripe's read lock
// (the same bound as Read, positioned by timestamp so that concurrent
// inserts neither repeat nor skip values). Folding is cheaper than the
// copy Read makes, so writers wait no longer than they do for a Read.
func (s *Store) Downsample(ctx context.Context, q history.DownsampleQuery) ([]history.Bucket, error) {
	if q.Buckets < 1 || q.Buckets > history.MaxBuckets {
		return nil, history.ErrBuckets
	}
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return nil, history.ErrClosed
	}
	g := history.NewGrid(q.From, q.Till, q.Buckets)
	if g.N == 0 {
		return nil, nil
	}
	st := &s.stripes[stripeOf(q.ItemID)]
	lo, hi := history.ClockNanos(g.Start), history.ClockNanos(g.End) // [lo, hi)
	acc := history.NewAccumulator(g)
	var vt history.ValueType
	typed := false
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st.mu.RLock()
		sr := st.series[q.ItemID]
		if sr == nil || !sr.vt.Numeric() {
			st.mu.RUnlock()
			return nil, nil
		}
		if typed && sr.vt != vt {
			// The item changed type between two lock holds: start over
			// in the new type, as Read would return only the new data.
			st.mu.RUnlock()
			acc, lo, typed = history.NewAccumulator(g), history.ClockNanos(g.Start), false
			continue
		}
		vt, typed = sr.vt, true
		ts := sr.ts
		i := sort.Search(len(ts), func(k int) bool { return ts[k] >= lo })
		j := sort.Search(len(ts), func(k int) bool { return ts[k] >= hi })
		j = min(j, i+readChunk)
		if vt == history.Float {
			acc.AddFloatBits(ts[i:j], sr.num[i:j])
		} else {
			acc.AddUints(ts[i:j], sr.num[i:j])
		}
		if j > i {
			lo = ts[j-1] + 1
		}
		st.mu.RUnlock()
		if j-i < readChunk {
			return acc.Buckets(), nil
		}
	}
}
