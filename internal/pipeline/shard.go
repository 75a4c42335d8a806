package pipeline

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/preprocess"
)

// waiter is a ticket whose values end before index end of the queue
// (of the batch, after preprocessing); n is how many it submitted.
type waiter struct {
	t   *Ticket
	end int
	n   int
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
	// readyLanes are lanes whose detached script ended (lanes.go): the
	// preprocessing stage takes them with the queue.
	readyLanes []*lane
	// detached counts entries detached from their batches and not yet
	// finished: the shard does not stop before they are.
	detached atomic.Int64
	// laneDone is signalled when a script ends, for a batch that waits.
	laneDone chan struct{}

	// free holds the jobs not in flight: the preprocessing stage takes
	// one before it drains the queue, the commit stage returns it once
	// the batch is acknowledged. There are jobsInFlight of them, which
	// bounds the batches between the queue and the store.
	free chan *job

	depth atomic.Int64

	stateMu sync.RWMutex
	state   map[uint64]*itemState

	// Preprocessing (preproc.go), touched by the preprocessing stage once per
	// batch with Raw samples, by SaveState and by the commit stage after a
	// failed write (forgetState), under prepMu.
	prepMu      sync.Mutex
	prep        prepTable                            // items with steps seen by this shard
	chains      map[*catalog.PreprocStep]*compiled   // compiled chains by the catalog's slice
	restored    map[uint64]savedState                // read at start, waiting for their items' next value
	prepVersion uint64                               // catalog version prep was last pruned for
	caches      [maxDependentLevels]preprocess.Cache // one per level of dependents
	stateGen    uint64                               // bumped by forgetState
	lanes       map[uint64]*lane                     // items with values on their way through a script (lanes.go)
	batchMark   uint64                               // counts batches, for lane.touched
	batch       prepBatch                            // the batch being preprocessed; its slices reused
}

// jobsInFlight is how many batches a shard holds between its queue and
// the store: one being written (and fsynced) while the next is
// preprocessed, or waits, preprocessed, for the write to finish. Two is
// the least that overlaps the stages; more would only add memory, as the
// write is the slower stage when the two are unbalanced.
const jobsInFlight = 2

// job is one batch on its way through a shard's two stages. Its buffers
// are reused batch after batch, so that steady state allocates nothing.
type job struct {
	in      []history.Sample // the values drained from the queue
	waiters []waiter         // their tickets, ends indexing batch
	ready   []*lane          // lanes whose detached script ended
	buf     []history.Sample // backs a preprocessed batch
	batch   []history.Sample // what the commit stage writes: in or buf
	gen     uint64           // the shard's stateGen its steps ran on, or noState
}

// noState is the gen of a batch whose values ran no steps.
const noState = ^uint64(0)

func newShard(p *Pipeline, id int) *shard {
	s := &shard{p: p, id: id, state: map[uint64]*itemState{}, free: make(chan *job, jobsInFlight), laneDone: make(chan struct{}, 1)}
	s.cond = sync.NewCond(&s.mu)
	for range jobsInFlight {
		s.free <- &job{}
	}
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
	s.waiters = append(s.waiters, waiter{t: t, end: len(s.queue), n: len(values)})
	s.depth.Store(int64(len(s.queue)))
	s.mu.Unlock()
	if wake {
		s.cond.Broadcast()
	}
	return nil
}

// run is the shard's preprocessing stage; it starts the commit stage
// and hands it each batch, so that batch N+1 is preprocessed while
// batch N is written and fsynced. The hand-off is one channel send per
// batch, and the commit stage takes batches in the order they were
// drained, so per-item order is kept. run returns once both stages have
// drained after Stop.
func (s *shard) run() {
	commits := make(chan *job, jobsInFlight-1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.commitLoop(commits)
	}()
	defer func() {
		close(commits)
		<-done
	}()
	for {
		// A free job first: while jobsInFlight batches are in flight the
		// queue is left to fill, and its limit blocks the submitters.
		j := <-s.free
		s.mu.Lock()
		// Values, or scripts that ended; at stop, once nothing is queued
		// and no detached value is left to finish.
		for len(s.queue) == 0 && len(s.readyLanes) == 0 && !(s.stopping && s.detached.Load() == 0) {
			s.cond.Wait()
		}
		if len(s.queue) == 0 && len(s.readyLanes) == 0 {
			s.mu.Unlock()
			return
		}
		batch, waiters, ready := s.queue, s.waiters, s.readyLanes
		s.queue, s.waiters, s.readyLanes = j.in[:0], j.waiters[:0], j.ready[:0]
		s.depth.Store(0)
		s.mu.Unlock()
		s.cond.Broadcast() // room for blocked submitters

		j.in, j.waiters, j.ready = batch, waiters, ready
		start := time.Now()
		j.batch = s.preprocess(j)
		s.p.busy.Since(start)
		commits <- j
	}
}

// recycle readies j's buffers for another batch.
func (s *shard) recycle(j *job) {
	clear(j.in) // drop string references before reuse
	clear(j.waiters)
	clear(j.ready)
	j.ready = j.ready[:0]
	if len(j.batch) > 0 && len(j.in) > 0 && &j.batch[0] != &j.in[0] {
		clear(j.batch)
	}
	j.in, j.waiters, j.batch = j.in[:0], j.waiters[:0], nil
	// One oversized request must not pin its memory.
	if cap(j.in) > 4*s.p.opts.QueueValues {
		j.in = nil
	}
	if cap(j.buf) > 4*s.p.opts.QueueValues {
		j.buf = nil
	}
}

// commitLoop is the shard's commit stage. After a failed write it keeps
// the failed job from the preprocessing stage until the next batch has
// been dealt with: that batch may have run its steps on the state the
// failure made forgotten (it was preprocessed while the write was under
// way), and is then failed too (see forgetState); holding the job back
// makes sure no third batch runs on the state that batch left.
func (s *shard) commitLoop(commits <-chan *job) {
	var held *job
	var lastErr error
	for j := range commits {
		var err error
		if j.gen != noState && held != nil && j.gen != s.currentGen() {
			err = s.failStale(j, lastErr)
		} else {
			err = s.commit(j)
		}
		if held != nil {
			s.recycle(held)
			s.free <- held
			held = nil
		}
		s.recycle(j)
		if err != nil && j.gen != noState {
			held, lastErr = j, err
			continue
		}
		s.free <- j
	}
	if held != nil {
		s.recycle(held)
		s.free <- held
	}
}

func (s *shard) currentGen() uint64 {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	return s.stateGen
}

// failStale fails a batch whose steps ran on step state that a failed
// write has since made forgotten, without writing it: its results may
// depend on values that were never stored (a value discarded as
// unchanged from one that was not written). Its items' state is
// forgotten as well, and its submitters may send again.
func (s *shard) failStale(j *job, cause error) error {
	err := fmt.Errorf("values not written: preprocessed after values whose write failed: %w", cause)
	s.p.errors.Inc()
	s.p.opts.Logger.Error("batch not written: its preprocessing followed a failed write", "shard", s.id, "values", len(j.batch), "err", cause)
	s.forgetState(j.batch, j.in)
	for _, w := range j.waiters {
		w.t.finishShard(s.id, w.n, err)
	}
	return err
}

// forgetState resets the step state of the items of written (values
// preprocessed but not written) and of in's Raw samples (whose chains
// ran), as when an item's steps change: the next value of a change step
// is then discarded as a first value, and a discard-unchanged step
// stores it. It is the choice made for a failed write: Zabbix keeps the
// state its preprocessing manager computed even when the history write
// fails, but then a value sent again after the failure would be
// compared with its own unstored self and could be discarded as
// unchanged, so nothing would ever be stored for it. Forgetting costs
// at most one discarded first value of a change step. It bumps the
// state generation, so that a batch preprocessed before is failed too.
func (s *shard) forgetState(written, in []history.Sample) {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	s.stateGen++
	for i := range written {
		if ip := s.prep.get(written[i].ItemID); ip != nil {
			ip.state.Reset()
		}
	}
	for i := range in {
		if in[i].Type >= Raw {
			if ip := s.prep.get(in[i].ItemID); ip != nil {
				ip.state.Reset()
			}
		}
	}
}

// commit writes j's batch to the store in pieces of up to MaxBatch
// values cut between waiters, so that one Submit's values in this shard
// go to the store in one Write, which is all or nothing (a Submit with
// more values than MaxBatch is written alone, whole); and completes the
// waiters whose values are written. A failed write fails its waiters and
// every later waiter of this batch as well (they would follow values
// that were not written); the step state of the items whose values were
// not written is forgotten first (see forgetState).
func (s *shard) commit(j *job) error {
	defer s.p.busy.Since(time.Now())
	batch, waiters := j.batch, j.waiters
	maxBatch := s.p.opts.MaxBatch
	w := 0
	var err error
	off := 0
	for off < len(batch) {
		end := len(batch)
		if end-off > maxBatch {
			// The last waiter's end that fits, or the first one's.
			end = off
			for k := w; k < len(waiters) && (waiters[k].end-off <= maxBatch || end == off); k++ {
				end = waiters[k].end
			}
			if end == off { // BUG guard: values no waiter covers
				end = min(off+maxBatch, len(batch))
			}
		}
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
			waiters[w].t.finishShard(s.id, waiters[w].n, nil)
			w++
		}
		off = end
	}
	if err != nil && j.gen != noState {
		// Before the submitters hear of the failure, so that a value
		// they send again meets the forgotten state.
		s.forgetState(batch[off:], j.in)
	}
	for ; w < len(waiters); w++ {
		waiters[w].t.finishShard(s.id, waiters[w].n, err)
	}
	return err
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
