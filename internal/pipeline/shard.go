package pipeline

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/preprocess"
)

// waiter is a ticket whose values end before index end of the queue.
type waiter struct {
	t   *Ticket
	end int
}

type itemState struct {
	last, prev history.Sample
}

type shard struct {
	p  *Pipeline
	id int

	mu       sync.Mutex
	cond     *sync.Cond // signalled when work arrives, room frees or stop begins
	queue    []history.Sample
	waiters  []waiter
	stopping bool

	// spare buffers swapped with queue/waiters by the shard goroutine, so
	// that steady state allocates nothing.
	spareQ []history.Sample
	spareW []waiter

	depth atomic.Int64

	stateMu sync.RWMutex
	state   map[uint64]*itemState

	// Preprocessing (preproc.go), touched by the shard goroutine once per
	// batch with Raw samples and by SaveState, under prepMu.
	prepMu      sync.Mutex
	prep        prepTable                            // items with steps seen by this shard
	chains      map[*catalog.PreprocStep]*compiled   // compiled chains by the catalog's slice
	restored    map[uint64]savedState                // read at start, waiting for their items' next value
	prepVersion uint64                               // catalog version prep was last pruned for
	out         []history.Sample                     // the preprocessed batch, reused
	caches      [maxDependentLevels]preprocess.Cache // one per level of dependents
}

func newShard(p *Pipeline, id int) *shard {
	s := &shard{p: p, id: id, state: map[uint64]*itemState{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// enqueue copies values into the queue, waiting while it is full. A batch
// larger than the whole queue is admitted when the queue is empty, so that
// no request is refused for its size alone.
func (s *shard) enqueue(values []history.Sample, t *Ticket) error {
	limit := s.p.opts.QueueValues
	s.mu.Lock()
	for !s.stopping && len(s.queue) > 0 && len(s.queue)+len(values) > limit {
		s.cond.Wait()
	}
	if s.stopping {
		s.mu.Unlock()
		return ErrStopped
	}
	wake := len(s.queue) == 0
	s.queue = append(s.queue, values...)
	s.waiters = append(s.waiters, waiter{t: t, end: len(s.queue)})
	s.depth.Store(int64(len(s.queue)))
	s.mu.Unlock()
	if wake {
		s.cond.Broadcast()
	}
	return nil
}

func (s *shard) run() {
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.stopping {
			s.cond.Wait()
		}
		if len(s.queue) == 0 && s.stopping {
			s.mu.Unlock()
			return
		}
		batch, waiters := s.queue, s.waiters
		s.queue, s.waiters = s.spareQ[:0], s.spareW[:0]
		s.depth.Store(0)
		s.mu.Unlock()
		s.cond.Broadcast() // room for blocked submitters

		s.commit(batch, waiters)

		clear(batch) // drop string references before reuse
		clear(waiters)
		s.spareQ, s.spareW = batch[:0], waiters[:0]
		if cap(s.spareQ) > 4*s.p.opts.QueueValues {
			s.spareQ = nil // one oversized request must not pin its memory
		}
	}
}

// commit writes batch to the store in MaxBatch pieces and completes the
// waiters whose values are all written. A failed write fails the waiters
// that had values in it and every later waiter of this batch as well,
// since their values may share the failed piece.
func (s *shard) commit(batch []history.Sample, waiters []waiter) {
	defer s.p.busy.Since(time.Now())
	if pre := s.preprocess(batch, waiters); len(batch) == 0 || len(pre) == 0 || &pre[0] != &batch[0] {
		batch = pre
		defer func() {
			clear(s.out) // drop string references before reuse
			if cap(s.out) > 4*s.p.opts.QueueValues {
				s.out = nil // one oversized request must not pin its memory
			}
		}()
	}
	maxBatch := s.p.opts.MaxBatch
	w := 0
	var err error
	for off := 0; off < len(batch) && err == nil; off += maxBatch {
		end := min(off+maxBatch, len(batch))
		piece := batch[off:end]
		err = s.p.opts.Store.Write(context.Background(), piece)
		if err != nil {
			s.p.errors.Inc()
			s.p.opts.Logger.Error("history store write failed; values not acknowledged", "shard", s.id, "values", len(piece), "err", err)
			break
		}
		s.p.batches.Inc()
		s.p.committed.Add(uint64(len(piece)))
		s.countTypes(piece)
		s.updateState(piece)
		if s.p.opts.OnCommit != nil {
			s.p.opts.OnCommit(s.id, piece)
		}
		for w < len(waiters) && waiters[w].end <= end {
			waiters[w].t.finish(nil)
			w++
		}
	}
	for ; w < len(waiters); w++ {
		waiters[w].t.finish(err)
	}
}

// countTypes adds piece's values to the per-type counters: one pass of
// local counts, then one atomic add per type present.
func (s *shard) countTypes(piece []history.Sample) {
	var n [history.Text + 1]uint64
	for i := range piece {
		if t := piece[i].Type; t.Valid() {
			n[t]++
		}
	}
	for t, c := range n {
		if c > 0 {
			s.p.byType[t].Add(c)
		}
	}
}

func (s *shard) updateState(piece []history.Sample) {
	s.stateMu.Lock()
	for i := range piece {
		v := &piece[i]
		st := s.state[v.ItemID]
		if st == nil {
			st = &itemState{}
			s.state[v.ItemID] = st
		}
		// Late values do not move "last" backwards.
		if st.last.ItemID == 0 || !v.Before(&st.last) {
			st.prev, st.last = st.last, *v
		}
	}
	s.stateMu.Unlock()
}

func (s *shard) last(item uint64) (last, prev history.Sample, ok bool) {
	s.stateMu.RLock()
	defer s.stateMu.RUnlock()
	st := s.state[item]
	if st == nil {
		return history.Sample{}, history.Sample{}, false
	}
	return st.last, st.prev, true
}

// seed merges stored values (newest first) into an item's state: the two
// newest of the state's and the stored ones by time, the state's winning
// on an equal timestamp (it was committed later, as the same write or a
// replacement of it).
func (s *shard) seed(newestFirst []history.Sample) {
	item := newestFirst[0].ItemID
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	st := s.state[item]
	if st == nil {
		st = &itemState{}
		s.state[item] = st
	}
	for i := len(newestFirst) - 1; i >= 0; i-- {
		v := newestFirst[i]
		switch {
		case st.last.ItemID == 0:
			st.last = v
		case sameTime(&v, &st.last):
		case st.last.Before(&v):
			st.prev, st.last = st.last, v
		case st.prev.ItemID == 0 || st.prev.Before(&v):
			st.prev = v
		}
	}
}

func sameTime(a, b *history.Sample) bool { return a.Clock == b.Clock && a.NS == b.NS }
