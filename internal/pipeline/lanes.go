package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/preprocess"
)

// JavaScript off the shard's path (issue 25).
//
// A JavaScript step is the one step whose cost a user decides: it may
// run for its whole time limit (10 s) or grow to its memory limit. Run
// inline, it held the shard, and every sender with a value in it, for
// as long. So the shard never runs one: preprocess.Run stops before
// each JavaScript step (Input.Defer), the value becomes an entry of its
// item's lane, and the lane's goroutine runs the script (on
// Options.JS, the server's worker processes) while the shard goes on.
// The shard then waits up to Options.JSWait for the scripts its batch
// started, resumes the chains whose script finished (the steps after
// it, conversion, dependents: all the state stays the shard's, touched
// only by its preprocessing stage), and writes them with the batch. A
// script still running then is detached: the batch is written without
// it, the value's submitter waits on (its Ticket counts one more), and
// the script's end wakes the shard, which finishes the value in a later
// batch. So one item's slow script delays other items by JSWait at
// most, once per batch, and not at all once detached.
//
// Order. A lane holds its item's values in arrival order, each either
// waiting for a script (the lane runs its item's scripts one at a time,
// in order) or finished (its chain done, waiting only for the values
// before it), and the shard takes them from the head only: an item's
// values are stored, and its state and dependents updated, in the order
// they were submitted, as in Zabbix. A value of an item whose lane is
// not empty goes behind the others even when it needs no script (its
// steps failed, or changed). The steps before the first JavaScript step
// run on arrival, which keeps each step's own order.
//
// Bounds. A lane refuses a new value of its item when the value would
// wait more than laneMaxWait for its script to start: the scripts queued
// before it times the longer of the last script's run and the running
// one's so far, plus what the running one has left (lane.wait). A
// refused value is dropped, the item is made not supported with the
// reason (in its turn), and counted
// (peregrine_preprocessing_js_refused_total); otherwise an item fed
// faster than its script ends would hold ever more senders, each longer
// (a script that loops for its 10 s, fed every second, held its senders
// for minutes). A refused value is acknowledged as processed, as a value
// that fails its steps is in Zabbix; a fast script's burst (a thousand
// log lines) is never refused.
//
// Acknowledgement and durability are unchanged: a submitter returns
// once every value it gave, including those finished late, is in the
// store (except with NewTicketNoScripts, whose detached values are
// written on their own). A value finished in a batch after a failed write of the state
// it was preprocessed on is not written and its submitter is told so
// (as failStale does for a whole batch).

// laneMaxWait is how long a new value may be expected to wait for its
// item's script to start before the lane refuses it: one time limit.
const laneMaxWait = preprocess.JSTimeout

// Entry kinds.
const (
	entryScript  = iota // waits for the script of chain[step]
	entryDone           // its chain ended; waits for the values before it
	entryRefused        // values refused; makes the item not supported in its turn
)

// Entry states, of an entryScript's script.
const (
	stPending  = iota // running or waiting to run; the shard may still wait for it
	stDone            // finished: res and err are set
	stDetached        // running or waiting, and the shard no longer waits: its end wakes the shard
)

// entry is one value of a lane's item on its way.
type entry struct {
	kind  uint8
	state atomic.Int32
	// counted says the entry holds a count of its ticket of its own (it
	// was detached from the batch that made it); left that it left its
	// lane; drop that it ends without a value (its item is gone, or its
	// chain discarded the value).
	counted, left, drop bool
	lane                *lane
	item                uint64
	depth               int
	// chain is the item's compiled chain as the value started it; step
	// the JavaScript step it waits for, text the step's input.
	chain []preprocess.Step
	step  int
	text  string
	in    preprocess.Input // Time and Type for the steps after the script
	v     history.Sample   // the submitted value: its timestamps, log fields
	t     *Ticket          // nil for entryRefused
	gen   uint64           // the shard's state generation its steps ran on
	// res and err are the script's result, set by the lane's goroutine
	// before the state turns stDone.
	res string
	err error
	// entryDone: the chain's result or failure. entryRefused: the
	// message, and how many values it stands for.
	outText, chainErr string
	refused           int
}

// lane is one item's values waiting for its JavaScript step, and the
// goroutine that runs its scripts.
type lane struct {
	s    *shard
	item uint64
	// entries, by arrival: touched by the shard's preprocessing stage
	// only (under prepMu).
	entries []*entry
	// touched is the batch generation that last added the lane to its
	// batch's list, so that it is listed once.
	touched uint64

	mu      sync.Mutex
	jobs    []*entry // scripts to run, in order
	running bool
	// since is when the running script started (UnixNano), 0 when none;
	// lastRun how long the last one ran (ns).
	since   atomic.Int64
	lastRun atomic.Int64
}

// push queues e's script and starts the lane's goroutine if it is idle.
func (l *lane) push(e *entry) {
	l.mu.Lock()
	l.jobs = append(l.jobs, e)
	start := !l.running
	l.running = true
	l.mu.Unlock()
	if start {
		go l.run()
	}
}

// wait estimates how long a script queued now would wait to start: each
// script before it is taken to run as long as the last one did, or as
// the running one has so far if that is longer (a script that loops is
// known to be slow before it ends), and the running one to run that long
// in all.
func (l *lane) wait(now time.Time) time.Duration {
	l.mu.Lock()
	queued := len(l.jobs)
	since := l.since.Load()
	l.mu.Unlock()
	est := time.Duration(l.lastRun.Load())
	var left time.Duration
	if since != 0 {
		ran := now.Sub(time.Unix(0, since))
		est = max(est, ran)
		left = est - ran
	}
	return time.Duration(queued)*est + left
}

// run runs the lane's scripts one at a time until none is left.
func (l *lane) run() {
	for {
		l.mu.Lock()
		if len(l.jobs) == 0 {
			l.running = false
			l.since.Store(0)
			l.mu.Unlock()
			return
		}
		e := l.jobs[0]
		l.jobs[0] = nil
		l.jobs = l.jobs[1:]
		start := time.Now()
		l.since.Store(start.UnixNano())
		l.mu.Unlock()
		e.res, e.err = e.chain[e.step].RunScript(context.Background(), l.s.p.opts.JS, e.text)
		l.lastRun.Store(int64(time.Since(start)))
		l.s.scriptDone(l, e)
	}
}

// scriptDone tells the shard that e's script ended: a detached one by
// listing its lane as ready (the preprocessing stage wakes for it), any
// by a signal to a batch that may be waiting.
func (s *shard) scriptDone(l *lane, e *entry) {
	if e.state.Swap(stDone) == stDetached {
		s.mu.Lock()
		s.readyLanes = append(s.readyLanes, l)
		s.mu.Unlock()
		s.cond.Broadcast()
	}
	select {
	case s.laneDone <- struct{}{}:
	default:
	}
}

// prepBatch is the preprocessing stage's work on one batch.
type prepBatch struct {
	snap    *catalog.Snapshot
	j       *job
	out     []history.Sample
	t       *Ticket // the ticket of the value being preprocessed
	gen     uint64
	lanes   []*lane  // lanes to advance: of this batch's entries and the ready ones
	waitFor []*entry // scripts started by this batch
	fresh   []*entry // entries this batch made
	mark    uint64   // this batch's mark for lane.touched
}

func (b *prepBatch) touch(l *lane) {
	if l.touched != b.mark {
		l.touched = b.mark
		b.lanes = append(b.lanes, l)
	}
}

// laneOf returns item's lane, making one.
func (s *shard) laneOf(item uint64) *lane {
	l := s.lanes[item]
	if l == nil {
		if s.lanes == nil {
			s.lanes = map[uint64]*lane{}
		}
		l = &lane{s: s, item: item}
		s.lanes[item] = l
	}
	return l
}

// queued returns the lane of an item that has values on their way, or
// nil: a new value of it goes behind them.
func (s *shard) queued(item uint64) *lane {
	if len(s.lanes) == 0 {
		return nil
	}
	if l := s.lanes[item]; l != nil && len(l.entries) > 0 {
		return l
	}
	return nil
}

// startScript makes a value whose chain Run suspended before a
// JavaScript step an entry of its item's lane, and starts the script;
// or refuses the value when the lane is too far behind.
func (s *shard) startScript(b *prepBatch, it *catalog.Item, chain []preprocess.Step, o preprocess.Output, in preprocess.Input, v *history.Sample, depth int) {
	l := s.laneOf(it.ID)
	b.touch(l)
	now := time.Now()
	if wait := l.wait(now); wait > s.p.laneMaxWait {
		s.refuse(l, it, wait)
		return
	}
	in.Text, in.Err, in.Cache, in.Defer = "", "", nil, true
	e := &entry{kind: entryScript, lane: l, item: it.ID, depth: depth, chain: chain, step: o.Step,
		// Copies: the text may be a step state's buffer, and the entry
		// outlives this batch.
		text: strings.Clone(o.Text), in: in, v: *v, t: b.t, gen: b.gen}
	keepSample(&e.v)
	l.entries = append(l.entries, e)
	b.fresh = append(b.fresh, e)
	b.waitFor = append(b.waitFor, e)
	s.p.jsWaiting.Add(1)
	l.push(e)
}

// deferDone puts a value whose chain ended (or failed) behind its item's
// values still on their way.
func (s *shard) deferDone(b *prepBatch, l *lane, it *catalog.Item, text, chainErr string, in preprocess.Input, v *history.Sample, depth int) {
	b.touch(l)
	in.Text, in.Err, in.Cache = "", "", nil
	e := &entry{kind: entryDone, lane: l, item: it.ID, depth: depth, in: in, v: *v, t: b.t, gen: b.gen,
		outText: strings.Clone(text), chainErr: strings.Clone(chainErr)}
	keepSample(&e.v)
	l.entries = append(l.entries, e)
	b.fresh = append(b.fresh, e)
	s.p.jsWaiting.Add(1)
}

// keepSample drops the text of an entry's copy of its submitted value
// and copies its log fields: an entry may outlive the Submit, whose
// caller then reuses its buffers (NewTicketNoScripts).
func keepSample(v *history.Sample) {
	v.S = ""
	if v.Log != nil {
		m := *v.Log
		m.Source = strings.Clone(m.Source)
		v.Log = &m
	}
}

// refuse drops a value of an item whose lane is too far behind, and
// queues the item's not supported state, folding a run of refusals into
// one entry.
func (s *shard) refuse(l *lane, it *catalog.Item, wait time.Duration) {
	s.p.jsRefused.Inc()
	if n := len(l.entries); n > 0 && l.entries[n-1].kind == entryRefused {
		l.entries[n-1].refused++
		return
	}
	msg := "cannot execute script: value dropped: it would wait " + wait.Round(time.Millisecond).String() +
		" for the item's JavaScript step to run its earlier values (more than " + s.p.laneMaxWait.String() + ")"
	l.entries = append(l.entries, &entry{kind: entryRefused, lane: l, item: it.ID, chainErr: msg, refused: 1})
	if n, ok := s.p.throttle.Allow("js refused"); ok {
		s.p.opts.Logger.Warn("values dropped: their item's JavaScript step is too far behind",
			"item", it.ID, "key", it.Key, "host", hostName(it), "would_wait", wait, "suppressed", n)
	}
}

// runLanes advances the lanes of batch b: it resumes and finishes the
// values whose scripts ended, waiting up to JSWait for the scripts the
// batch started (while one may still end in time), then detaches the
// rest: their tickets count them, and their lanes wake the shard when
// they end.
func (s *shard) runLanes(b *prepBatch) {
	var timer *time.Timer
	deadline := time.Now().Add(s.p.opts.JSWait)
	for {
		for i := 0; i < len(b.lanes); i++ { // advancing may add lanes (dependents)
			s.advance(b, b.lanes[i])
		}
		now := time.Now()
		if !now.Before(deadline) || !s.worthWaiting(b, now) {
			break
		}
		if timer == nil {
			timer = time.NewTimer(deadline.Sub(now))
			defer timer.Stop()
		}
		select {
		case <-s.laneDone:
		case <-timer.C:
			deadline = now // one more pass, then stop
		}
	}
	for _, e := range b.waitFor {
		if !e.state.CompareAndSwap(stPending, stDetached) && !e.left && e.state.Load() == stDone {
			// It ended after the last pass: nobody else will say so.
			s.mu.Lock()
			s.readyLanes = append(s.readyLanes, e.lane)
			s.mu.Unlock()
		}
	}
	for _, e := range b.fresh {
		if !e.left && !e.counted {
			e.counted = true
			s.p.jsDetached.Inc()
			s.detached.Add(1)
			if e.t != nil && e.t.noScripts {
				e.t = nil // written on its own (NewTicketNoScripts)
			} else if e.t != nil {
				e.t.pending.Add(1)
			}
		}
	}
	for _, l := range b.lanes {
		if len(l.entries) == 0 {
			delete(s.lanes, l.item)
		}
	}
}

// worthWaiting reports whether a script the batch started may still end
// within JSWait: one at the head of its lane (the others wait for it)
// that has not run for longer than JSWait already.
func (s *shard) worthWaiting(b *prepBatch, now time.Time) bool {
	for _, e := range b.waitFor {
		if e.state.Load() != stPending {
			continue
		}
		l := e.lane
		if len(l.entries) == 0 || l.entries[0] != e {
			continue
		}
		since := l.since.Load()
		if since == 0 || now.Sub(time.Unix(0, since)) < s.p.opts.JSWait {
			return true
		}
	}
	return false
}

// advance takes l's values from the head while they can go on: a script
// that ended resumes its chain (which may stop at its next script), a
// finished chain is converted and stored with its dependents.
func (s *shard) advance(b *prepBatch, l *lane) {
	for len(l.entries) > 0 {
		e := l.entries[0]
		if e.kind == entryScript {
			if e.state.Load() != stDone {
				return
			}
			if s.resume(b, l, e) {
				return // waits for its next script
			}
		}
		l.entries[0] = nil
		l.entries = l.entries[1:]
		e.left = true
		s.finishEntry(b, e)
	}
}

// resume runs the steps after e's script; it reports whether the chain
// stopped at a further script (e stays the head of its lane, waiting for
// it).
func (s *shard) resume(b *prepBatch, l *lane, e *entry) bool {
	it := b.snap.Item(e.item)
	if it == nil {
		e.kind, e.drop = entryDone, true
		return false
	}
	st := &preprocess.State{} // the steps changed meanwhile: the rest runs without memory
	if ip := s.prep.get(it.ID); ip != nil && len(ip.chain) == len(e.chain) && &ip.chain[0] == &e.chain[0] {
		st = &ip.state
	}
	in := e.in
	in.Type, in.KeepNumber = it.ValueType, false // e.outText takes the text
	o, err := preprocess.Resume(e.chain, e.step, e.res, e.err, in, st)
	e.res, e.err = "", nil
	switch {
	case err != nil:
		e.kind, e.chainErr = entryDone, err.Error()
	case o.Suspended:
		e.step, e.text = o.Step, strings.Clone(o.Text)
		e.state.Store(stPending)
		if e.counted {
			e.state.Store(stDetached)
		}
		b.touch(l)
		b.waitFor = append(b.waitFor, e)
		l.push(e)
		return true
	case o.Discarded:
		s.p.discarded.Inc()
		e.kind, e.drop = entryDone, true
	default:
		e.kind, e.outText = entryDone, o.Text
	}
	return false
}

var errStale = errors.New("value not written: preprocessed after values whose write failed")

// finishEntry ends e, which left its lane: a finished chain is converted
// and stored (finish), with its dependents; a refusal makes the item not
// supported. A detached entry's ticket gets a waiter of its own at its
// values' end in this batch (or its error, when its state went stale);
// an attached one's values are covered by one more waiter of its ticket.
func (s *shard) finishEntry(b *prepBatch, e *entry) {
	if e.kind == entryRefused {
		s.notSupported(b.snap.Item(e.item), e.chainErr, time.Now().Unix())
		return
	}
	s.p.jsWaiting.Add(-1)
	t := e.t
	if e.counted {
		s.detached.Add(-1)
	}
	if e.counted && e.gen != b.gen {
		// A write failed since its steps ran (see failStale).
		if ip := s.prep.get(e.item); ip != nil {
			ip.state.Reset()
		}
		if t != nil {
			t.finish(errStale)
		} else if n, ok := s.p.throttle.Allow("js stale"); ok {
			s.p.opts.Logger.Error("value not written: preprocessed after values whose write failed", "item", e.item, "suppressed", n)
		}
		return
	}
	before := len(b.out)
	if it := b.snap.Item(e.item); it != nil && !e.drop {
		saved := b.t
		b.t = t
		s.finish(b, it, e.outText, e.chainErr, e.in, &e.v, e.depth)
		b.t = saved
	}
	switch {
	case t == nil:
		// Nobody waits for it (NewTicketNoScripts): a failed write is
		// logged and counted by the commit stage.
	case !e.counted && len(b.out) == before:
		// Nothing to write: its batch's waiter covers it.
	case !e.counted:
		t.pending.Add(1)
		b.j.waiters = append(b.j.waiters, waiter{t: t, end: len(b.out)})
	default:
		b.j.waiters = append(b.j.waiters, waiter{t: t, end: len(b.out)})
	}
}

// notSupported sets it not supported with msg, counted and logged.
func (s *shard) notSupported(it *catalog.Item, msg string, clock int64) {
	if it == nil {
		return
	}
	s.p.notSupported.Inc()
	s.p.opts.ItemStates.SetItemState(it.ID, itemstate.Item{NotSupported: true, Error: msg, Clock: clock})
	if n, ok := s.p.throttle.Allow("not supported"); ok {
		s.p.opts.Logger.Warn("item not supported: its value failed preprocessing or conversion",
			"item", it.ID, "key", it.Key, "host", hostName(it), "err", msg, "suppressed", n)
	}
}
