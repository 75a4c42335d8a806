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

// series holds one item's samples in columns sorted by time. Numeric
// series carry no pointers at all, so the garbage collector does not scan
// them: with tens of millions of float samples held, scanning a []Sample
// (which has a string and a pointer field) dominated the server's CPU.
type series struct {
	ts  []int64  // clock*1e9 + ns
	num []uint64 // float64 bits or uint64 values (numeric types)
	str []string // string values (Str, Text, Log)
	log []*history.LogMeta
	vt  history.ValueType
}

func tsOf(s *history.Sample) int64 { return s.Clock*1e9 + int64(s.NS) }

func (sr *series) sample(i int, item uint64, out *history.Sample) {
	t := sr.ts[i]
	*out = history.Sample{ItemID: item, Clock: t / 1e9, NS: int32(t % 1e9), Type: sr.vt}
	switch sr.vt {
	case history.Float:
		out.F = float64frombits(sr.num[i])
	case history.Uint:
		out.U = sr.num[i]
	default:
		out.S = sr.str[i]
		if sr.vt == history.Log {
			out.Log = sr.log[i]
		}
	}
}

func (sr *series) set(i int, v *history.Sample) {
	switch sr.vt {
	case history.Float:
		sr.num[i] = float64bits(v.F)
	case history.Uint:
		sr.num[i] = v.U
	default:
		sr.str[i] = v.S
		if sr.vt == history.Log {
			var lm *history.LogMeta
			if v.Log != nil {
				c := *v.Log
				lm = &c
			}
			sr.log[i] = lm
		}
	}
}

// insert puts v in time order; an equal timestamp replaces (last write
// wins).
func (sr *series) insert(v *history.Sample) {
	t := tsOf(v)
	n := len(sr.ts)
	j := n
	if n > 0 && sr.ts[n-1] >= t {
		j = sort.Search(n, func(k int) bool { return sr.ts[k] >= t })
		if sr.ts[j] == t {
			sr.set(j, v)
			return
		}
	}
	sr.ts = append(sr.ts, 0)
	copy(sr.ts[j+1:], sr.ts[j:])
	sr.ts[j] = t
	switch sr.vt {
	case history.Float, history.Uint:
		sr.num = append(sr.num, 0)
		copy(sr.num[j+1:], sr.num[j:])
	default:
		sr.str = append(sr.str, "")
		copy(sr.str[j+1:], sr.str[j:])
		if sr.vt == history.Log {
			sr.log = append(sr.log, nil)
			copy(sr.log[j+1:], sr.log[j:])
		}
	}
	sr.set(j, v)
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
	striper *history.Striper
}

var _ history.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	s := &Store{striper: history.NewStriper(stripes)}
	for i := range s.stripes {
		s.stripes[i].series = map[uint64]*series{}
	}
	return s
}

func stripeOf(item uint64) int { return int(item % stripes) } // = striper.Stripe

// Write implements history.Writer. Samples are grouped by stripe first so
// that each stripe lock is taken once per call, not once per sample.
func (s *Store) Write(_ context.Context, samples []history.Sample) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return history.ErrClosed
	}
	s.striper.Each(samples, func(st int, idx []int32) {
		str := &s.stripes[st]
		str.mu.Lock()
		defer str.mu.Unlock()
		var last *series
		var lastID uint64
		for _, i := range idx {
			v := &samples[i]
			sr := last
			if sr == nil || lastID != v.ItemID {
				sr = str.series[v.ItemID]
				if sr == nil {
					sr = &series{vt: v.Type}
					str.series[v.ItemID] = sr
				}
				last, lastID = sr, v.ItemID
			}
			if sr.vt != v.Type {
				// An item's value type changed: keep what the store can
				// represent by starting the series over in the new type,
				// as Zabbix reads only the table of the current type.
				*sr = series{vt: v.Type}
			}
			sr.insert(v)
		}
	})
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
	st := &s.stripes[stripeOf(q.ItemID)]
	// A limited read copies no more than it may send: the newest one or
	// two values of many items (lastvalue) would otherwise allocate a
	// whole chunk each.
	chunk := readChunk
	if q.Limit > 0 && q.Limit < chunk {
		chunk = q.Limit
	}
	buf := make([]history.Sample, 0, chunk)
	sent := 0
	// Position by timestamp rather than index, so that writes between
	// chunks (which may insert before the cursor) neither repeat nor skip
	// samples. lo is inclusive, hi exclusive.
	lo, hi := history.ClockNanos(q.From), history.ClockNanos(q.Till+1)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf = buf[:0]
		st.mu.RLock()
		if sr := st.series[q.ItemID]; sr != nil {
			ts := sr.ts
			i := sort.Search(len(ts), func(k int) bool { return ts[k] >= lo })
			j := sort.Search(len(ts), func(k int) bool { return ts[k] >= hi })
			if q.Desc {
				i = max(i, j-chunk)
			} else {
				j = min(j, i+chunk)
			}
			for k := i; k < j; k++ {
				buf = append(buf, history.Sample{})
				sr.sample(k, q.ItemID, &buf[len(buf)-1])
			}
		}
		st.mu.RUnlock()
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
			lo = tsOf(&buf[len(buf)-1]) + 1
		} else {
			for k := len(buf) - 1; k >= 0; k-- {
				if !fn(&buf[k]) {
					return nil
				}
				if sent++; q.Limit > 0 && sent >= q.Limit {
					return nil
				}
			}
			hi = tsOf(&buf[0])
		}
		if len(buf) < chunk {
			return nil
		}
	}
}

// Len returns the number of samples stored for item (for tests).
func (s *Store) Len(item uint64) int {
	st := &s.stripes[stripeOf(item)]
	st.mu.RLock()
	defer st.mu.RUnlock()
	if sr := st.series[item]; sr != nil {
		return len(sr.ts)
	}
	return 0
}

// Count returns the number of samples stored for all items.
func (s *Store) Count() int {
	n := 0
	for i := range s.stripes {
		st := &s.stripes[i]
		st.mu.RLock()
		for _, sr := range st.series {
			n += len(sr.ts)
		}
		st.mu.RUnlock()
	}
	return n
}

// Close implements history.Store. The store refuses every later call.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}
