package alert

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Back-pressure: a media type's queue holds at most Options.QueueSize
// alerts waiting. An escalation step that would add alerts to a full
// queue does not run: the escalation waits, first in first out per
// queue, and runs the step when the queue has drained to half its
// bound (the dispatcher wakes the engine, mediaQueue.roomMade; a pass
// also looks every second). Nothing is dropped and memory stays
// bounded in a flood: the alerts of a waiting escalation are not made
// yet (their macros are expanded when the step runs, as Zabbix expands
// them when its escalator gets to the step), and an escalation is a
// few dozen bytes.
//
// Tried and rejected: failing alerts that find the queue full (the
// flood's alerts were lost for good: 25,117 of 39,750 in one
// measurement); and keeping every alert made, queued or not (memory
// grows with the flood: each alert holds its expanded texts).
//
// Waiting is not persisted: after a restart a waiting escalation is
// due at once (its next check passed) and waits again if the queue is
// full. Its step has not run, so nothing of it was sent.
//
// The gate is "full before the step", not "would overflow": a step
// that alone makes more alerts than the bound (a user group larger
// than the queue) still runs once the queue is not full, so the queue
// can hold up to QueueSize plus one step's alerts less one.

// heldState is the engine's record of waiting escalations (Run's
// goroutine only).
type heldState struct {
	// fifo holds, per media type ID, the escalations waiting for room in
	// its queue, oldest first. An escalation that ended while waiting is
	// left in place (on is the truth) and skipped; stale counts those
	// entries, compacted when they are half the list.
	fifo  map[uint64][]*Escalation
	on    map[uint64]uint64 // escalation ID → the media type it waits for
	stale map[uint64]int
}

func (h *heldState) reset() {
	h.fifo, h.on, h.stale = map[uint64][]*Escalation{}, map[uint64]uint64{}, map[uint64]int{}
}

// hold makes x wait for room in queue qid: it leaves the running set
// until released.
func (e *Engine) hold(x *Escalation, qid uint64) {
	delete(e.running, x.ID)
	e.held.fifo[qid] = append(e.held.fifo[qid], x)
	e.held.on[x.ID] = qid
	e.m.held.Inc()
	if q := e.queue(qid); q != nil {
		q.held.Add(1)
		q.wantRoom.Store(true)
	}
}

// unhold forgets that x waits (released, or ended).
func (e *Engine) unhold(x *Escalation) {
	qid, ok := e.held.on[x.ID]
	if !ok {
		return
	}
	delete(e.held.on, x.ID)
	if q := e.queue(qid); q != nil {
		q.held.Add(-1)
	}
}

// dropHeld forgets x if it waits: it ended (recovered, cancelled).
func (e *Engine) dropHeld(x *Escalation) {
	qid, ok := e.held.on[x.ID]
	if !ok {
		return
	}
	e.unhold(x)
	e.held.stale[qid]++
	if l := e.held.fifo[qid]; e.held.stale[qid] > len(l)/2 {
		e.held.fifo[qid] = slices.DeleteFunc(l, func(y *Escalation) bool { return e.held.on[y.ID] != qid || e.escs[y.ID] != y })
		e.held.stale[qid] = 0
	}
}

// resetHeld forgets every waiting escalation (the working set was
// reloaded from the log: they are due again).
func (e *Engine) resetHeld() {
	e.held.reset()
	e.qMu.Lock()
	for _, q := range e.queues {
		q.held.Store(0)
	}
	e.qMu.Unlock()
}

// heldWake is when a pass must look at the waiting escalations even if
// no dispatcher woke it: a second from now, 0 if none waits.
func (e *Engine) heldWake() int64 {
	if len(e.held.on) == 0 {
		return 0
	}
	return e.opts.Now().Add(time.Second).UnixNano()
}

// waitingIn is the number of alerts waiting in queue qid.
func (e *Engine) waitingIn(qid uint64) int {
	e.qMu.Lock()
	q := e.queues[qid]
	e.qMu.Unlock()
	if q == nil {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting()
}

// full reports whether queue qid has no room for another step: what
// waits in it plus what this pass made for it.
func (p *passState) full(qid uint64) bool {
	return p.e.waitingIn(qid)+p.made[qid] >= p.e.opts.QueueSize
}

// release runs the steps of the escalations waiting for queues that
// now have room, oldest first, until each queue is full again. A
// released step may find another of its queues full and wait there.
func (p *passState) release(now int64) {
	e := p.e
	qids := make([]uint64, 0, len(e.held.fifo))
	for qid := range e.held.fifo {
		qids = append(qids, qid)
	}
	slices.Sort(qids)
	for _, qid := range qids {
		// One at a time from the map: a released step may wait again,
		// on this queue too (a retry took the room meanwhile), and is
		// then appended to this list.
		for {
			l := e.held.fifo[qid]
			if len(l) == 0 {
				delete(e.held.fifo, qid)
				delete(e.held.stale, qid)
				break
			}
			if p.full(qid) {
				if q := e.queue(qid); q != nil {
					q.wantRoom.Store(true) // still waiting: wake again at the low mark
				}
				break
			}
			x := l[0]
			l[0] = nil
			e.held.fifo[qid] = l[1:]
			if e.held.on[x.ID] != qid || e.escs[x.ID] != x {
				e.held.stale[qid] = max(e.held.stale[qid]-1, 0)
				continue // ended while waiting
			}
			e.unhold(x)
			e.running[x.ID] = x
			p.step(x, now)
		}
	}
}

// blocked returns a full queue the step's operations would add alerts
// to, if any.
func (p *passState) blocked(ops []catalog.Operation) (uint64, bool) {
	for i := range ops {
		op := &ops[i]
		switch op.OperationType {
		case catalog.OpSendMessage:
			if op.MediaTypeID != 0 {
				if p.full(op.MediaTypeID) {
					return op.MediaTypeID, true
				}
				continue
			}
			for _, mt := range p.mediaOf(op) {
				if p.full(mt) {
					return mt, true
				}
			}
		case catalog.OpRemoteCommand:
			if p.full(0) {
				return 0, true
			}
		}
	}
	return 0, false
}

// mediaOf returns the enabled media types of the users an "every
// medium" operation messages, once per pass per set of recipients.
func (p *passState) mediaOf(op *catalog.Operation) []uint64 {
	key := recipientsKey(op)
	if mts, ok := p.opMedia[key]; ok {
		return mts
	}
	var mts []uint64
	for _, u := range p.users(op) {
		for _, md := range p.cfg.Medias[u] {
			if mt := p.cfg.MediaTypes[md.MediaTypeID]; mt != nil && mt.Status == 0 && !slices.Contains(mts, mt.ID) {
				mts = append(mts, mt.ID)
			}
		}
	}
	if p.opMedia == nil {
		p.opMedia = map[string][]uint64{}
	}
	p.opMedia[key] = mts
	return mts
}

// users returns the users an operation messages, its users then the
// members of its user groups, each once; the groups are asked once per
// pass (Options.UsersOfGroups may read a database: a storm's steps
// must not ask it per problem).
func (p *passState) users(op *catalog.Operation) []uint64 {
	if len(op.GroupIDs) == 0 || p.e.opts.UsersOfGroups == nil {
		return uniqUsers(op.UserIDs, nil)
	}
	key := groupsKey(op.GroupIDs)
	members, ok := p.groupUsers[key]
	if !ok {
		members = p.e.opts.UsersOfGroups(op.GroupIDs)
		if p.groupUsers == nil {
			p.groupUsers = map[string][]uint64{}
		}
		p.groupUsers[key] = members
	}
	return uniqUsers(op.UserIDs, members)
}

func uniqUsers(a, b []uint64) []uint64 {
	out := make([]uint64, 0, len(a)+len(b))
	seen := make(map[uint64]bool, len(a)+len(b))
	for _, l := range [2][]uint64{a, b} {
		for _, u := range l {
			if !seen[u] {
				seen[u] = true
				out = append(out, u)
			}
		}
	}
	return out
}

func groupsKey(ids []uint64) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(strconv.FormatUint(id, 10))
		b.WriteByte(',')
	}
	return b.String()
}

func recipientsKey(op *catalog.Operation) string {
	return groupsKey(op.UserIDs) + "/" + groupsKey(op.GroupIDs)
}

// countMade adds the alerts made since n0 to the pass's count per queue.
func (p *passState) countMade(n0 int) {
	for _, a := range p.alerts[n0:] {
		if p.made == nil {
			p.made = map[uint64]int{}
		}
		p.made[a.MediaTypeID]++
	}
}
