package memstore

import (
	"context"
	"sort"
	"sync"

	"github.com/peregrine-mon/peregrine/internal/history"
)

const stripes = 64

// readChunk bounds how many samples a reader copies per lock hold.
const readChunk = 4096

type series struct {
	samples []history.Sample // sorted by (clock, ns), unique
}

type stripe struct {
	mu     sync.RWMutex
	series map[uint64]*series
	_      [32]byte
}

// Store is an in-memory history.Store.
type Store struct {
	stripes [stripes]stripe
	mu      sync.RWMutex // guards closed only
	closed  bool
}

var _ history.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	s := &Store{}
	for i := range s.stripes {
		s.stripes[i].series = map[uint64]*series{}
	}
	return s
}

func (s *Store) stripe(item uint64) *stripe { return &s.stripes[item%stripes] }

// Write implements history.Writer.
func (s *Store) Write(_ context.Context, samples []history.Sample) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return history.ErrClosed
	}
	for i := range samples {
		v := samples[i]
		if v.Log != nil {
			lm := *v.Log
			v.Log = &lm
		}
		st := s.stripe(v.ItemID)
		st.mu.Lock()
		sr := st.series[v.ItemID]
		if sr == nil {
			sr = &series{}
			st.series[v.ItemID] = sr
		}
		n := len(sr.samples)
		switch {
		case n == 0 || sr.samples[n-1].Before(&v):
			sr.samples = append(sr.samples, v)
		default:
			j := sort.Search(n, func(k int) bool { return !sr.samples[k].Before(&v) })
			if j < n && sr.samples[j].Clock == v.Clock && sr.samples[j].NS == v.NS {
				sr.samples[j] = v // same timestamp: last write wins
			} else {
				sr.samples = append(sr.samples, history.Sample{})
				copy(sr.samples[j+1:], sr.samples[j:])
				sr.samples[j] = v
			}
		}
		st.mu.Unlock()
	}
	return nil
}

// Read implements history.Reader.
func (s *Store) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return history.ErrClosed
	}
	st := s.stripe(q.ItemID)
	buf := make([]history.Sample, 0, readChunk)
	sent := 0
	// Position by timestamp rather than index, so that writes between
	// chunks (which may insert before the cursor) neither repeat nor skip
	// samples.
	lo := history.Sample{Clock: q.From}
	hi := history.Sample{Clock: q.Till + 1}
	first := true
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf = buf[:0]
		st.mu.RLock()
		if sr := st.series[q.ItemID]; sr != nil {
			ss := sr.samples
			i := sort.Search(len(ss), func(k int) bool { return !ss[k].Before(&lo) })
			j := sort.Search(len(ss), func(k int) bool { return !ss[k].Before(&hi) })
			if !q.Desc {
				if !first && i < j && ss[i].Clock == lo.Clock && ss[i].NS == lo.NS {
					i++ // lo is the last one delivered
				}
				end := min(j, i+readChunk)
				buf = append(buf, ss[i:end]...)
			} else {
				start := max(i, j-readChunk)
				buf = append(buf, ss[start:j]...)
			}
		}
		st.mu.RUnlock()
		first = false
		if len(buf) == 0 {
			return nil
		}
		if !q.Desc {
			for k := range buf {
				if !fn(&buf[k]) {
					return nil
				}
				if sent++; q.Limit > 0 && sent >= q.Limit {
					return nil
				}
			}
			last := buf[len(buf)-1]
			lo = history.Sample{Clock: last.Clock, NS: last.NS}
		} else {
			for k := len(buf) - 1; k >= 0; k-- {
				if !fn(&buf[k]) {
					return nil
				}
				if sent++; q.Limit > 0 && sent >= q.Limit {
					return nil
				}
			}
			hi = history.Sample{Clock: buf[0].Clock, NS: buf[0].NS} // exclusive upper bound
		}
		if len(buf) < readChunk {
			return nil
		}
	}
}

// Len returns the number of samples stored for item (for tests).
func (s *Store) Len(item uint64) int {
	st := s.stripe(item)
	st.mu.RLock()
	defer st.mu.RUnlock()
	if sr := st.series[item]; sr != nil {
		return len(sr.samples)
	}
	return 0
}

// Close implements history.Store. Samples stay readable by nobody: the
// store refuses every later call.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}
