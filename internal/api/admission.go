package api

import (
	"context"
	"sync"

	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// admission bounds the calls the API runs at once and shares them
// fairly between callers (users; for the calls made without a session,
// the client's address). While a slot is free a call runs at once. When
// none is, the call waits in its caller's queue, and each slot freed goes
// to the waiting caller with the fewest calls running (the one waiting
// longest among equals): a user flooding the API with history reads
// fills its own queue, and another user's call waits for one slot to
// free, not for the flood. A caller whose queue is full is refused at
// once, and a call that waits until its request's deadline is refused
// then: the API's memory and the work it has taken on stay bounded under
// any request rate, and a refusal costs the caller one error, not a
// stalled connection.
type admission struct {
	mu      sync.Mutex
	slots   int // calls running at once, all callers
	perUser int // calls one caller may have waiting
	used    int
	nwait   int // calls waiting, all callers
	callers map[string]*caller
	seq     uint64 // order of arrival of waiters

	running, waiting *selfmon.Gauge
	refusedBusy      *selfmon.Counter // a full queue
	refusedTimeout   *selfmon.Counter // waited until the deadline
}

// caller is one user's (or address's) calls running and waiting.
type caller struct {
	running int
	queue   []*waiter
}

type waiter struct {
	seq   uint64
	ready chan struct{} // closed when the slot is handed over
}

func newAdmission(slots, perUser int, r *selfmon.Registry) *admission {
	if r == nil {
		r = selfmon.NewRegistry()
	}
	return &admission{
		slots: slots, perUser: perUser, callers: map[string]*caller{},
		running:        r.Gauge("peregrine_api_calls_running", "API calls running (at most api.max_concurrent_calls)."),
		waiting:        r.Gauge("peregrine_api_calls_waiting", "API calls waiting for a free slot, all callers."),
		refusedBusy:    r.Counter("peregrine_api_calls_refused_total", "API calls refused because the server was busy: the caller's queue was full (busy) or the call waited until its request's deadline (timeout).", "reason", "busy"),
		refusedTimeout: r.Counter("peregrine_api_calls_refused_total", "API calls refused because the server was busy: the caller's queue was full (busy) or the call waited until its request's deadline (timeout).", "reason", "timeout"),
	}
}

// acquire waits for a slot for a call of key; release frees it.
func (a *admission) acquire(ctx context.Context, key string) (release func(), e *Error) {
	a.mu.Lock()
	c := a.callers[key]
	if c == nil {
		c = &caller{}
		a.callers[key] = c
	}
	if a.used < a.slots && a.nwait == 0 {
		a.used++
		c.running++
		a.running.Set(int64(a.used))
		a.mu.Unlock()
		return func() { a.release(key) }, nil
	}
	if len(c.queue) >= a.perUser {
		a.forgetLocked(key, c)
		a.mu.Unlock()
		a.refusedBusy.Inc()
		return nil, errApp("The server is busy: %d calls of this user are waiting already (api.max_waiting_calls_per_user); try again later.", a.perUser)
	}
	a.seq++
	w := &waiter{seq: a.seq, ready: make(chan struct{})}
	c.queue = append(c.queue, w)
	a.nwait++
	a.waiting.Set(int64(a.nwait))
	a.mu.Unlock()
	select {
	case <-w.ready:
		return func() { a.release(key) }, nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	select {
	case <-w.ready:
		// Handed the slot just as the deadline came: give it on.
		a.mu.Unlock()
		a.release(key)
	default:
		for i, x := range c.queue {
			if x == w {
				c.queue = append(c.queue[:i], c.queue[i+1:]...)
				break
			}
		}
		a.nwait--
		a.waiting.Set(int64(a.nwait))
		a.forgetLocked(key, c)
		a.mu.Unlock()
	}
	a.refusedTimeout.Inc()
	return nil, errApp("The server is busy: the call waited %s for a free slot (api.max_concurrent_calls) and was not run.", deadlineOf(ctx))
}

// deadlineOf is how long ctx allowed, for the refusal's text.
func deadlineOf(ctx context.Context) string {
	if err := ctx.Err(); err == context.Canceled {
		return "until the client went away"
	}
	return "until the request's deadline (api.timeout)"
}

// release frees key's slot: handed to the waiting caller with the fewest
// calls running, or returned.
func (a *admission) release(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.callers[key]; c != nil {
		c.running--
		a.forgetLocked(key, c)
	}
	var next *caller
	for _, c := range a.callers {
		if len(c.queue) == 0 {
			continue
		}
		if next == nil || c.running < next.running || (c.running == next.running && c.queue[0].seq < next.queue[0].seq) {
			next = c
		}
	}
	if next == nil {
		a.used--
		a.running.Set(int64(a.used))
		return
	}
	w := next.queue[0]
	next.queue = next.queue[1:]
	next.running++
	a.nwait--
	a.waiting.Set(int64(a.nwait))
	close(w.ready)
}

// forgetLocked drops a caller with nothing running or waiting.
func (a *admission) forgetLocked(key string, c *caller) {
	if c.running == 0 && len(c.queue) == 0 {
		delete(a.callers, key)
	}
}
