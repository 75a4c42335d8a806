package alert

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// mediaQueue holds one media type's alerts waiting to be sent: a slice
// (kept near Options.QueueSize by the escalations' back-pressure,
// backpressure.go) plus a one-slot signal channel (values in slices,
// signals in channels), drained by one dispatcher goroutine that starts
// up to maxsessions sends and paces them by the rate limit.
type mediaQueue struct {
	id   uint64
	e    *Engine
	wake chan struct{}

	// held counts the escalations waiting for room in this queue (the
	// engine's goroutine changes it; /metrics reads it); wantRoom is set
	// by the engine while some wait, and cleared by the dispatcher when
	// it wakes the engine at the low mark.
	held     atomic.Int64
	wantRoom atomic.Bool

	mu       sync.Mutex
	q        []Alert
	retrying int // alerts waiting for their next attempt
	inflight int
	// Token bucket of the rate limit: tokens refill at RateLimit per
	// second up to a burst of one second's worth.
	tokens float64
	last   time.Time
}

// enqueue queues alerts for sending. It never fails one: the queue's
// bound is kept upstream, where escalation steps wait for room
// (backpressure.go), so what reaches here was admitted already.
// Recovery and update messages, retries and the alerts re-queued at
// start are the only ones that may go past the bound; their number is
// bounded by the escalations that sent before.
func (e *Engine) enqueue(as []Alert) {
	for _, a := range as {
		e.admit(a)
	}
}

// queue returns the media type's queue, made (with its dispatcher) on
// first use; nil before Run.
func (e *Engine) queue(id uint64) *mediaQueue {
	e.qMu.Lock()
	defer e.qMu.Unlock()
	q := e.queues[id]
	if q != nil || e.ctx == nil {
		return q
	}
	q = &mediaQueue{id: id, e: e, wake: make(chan struct{}, 1)}
	e.queues[id] = q
	// Queues are made once per media type and never dropped, so the
	// series are registered once.
	mtid := strconv.FormatUint(q.id, 10)
	e.opts.Metrics.GaugeFunc("peregrine_alert_queue_length", "Alerts queued, waiting for a retry or being sent, per media type.",
		func() float64 {
			q.mu.Lock()
			defer q.mu.Unlock()
			return float64(len(q.q) + q.retrying + q.inflight)
		}, "mediatypeid", mtid)
	e.opts.Metrics.GaugeFunc("peregrine_alert_escalations_waiting", "Escalations whose next step waits for room in the media type's queue (back-pressure).",
		func() float64 { return float64(q.held.Load()) }, "mediatypeid", mtid)
	e.wg.Add(1)
	go q.dispatch(e.ctx)
	return q
}

// admit puts a in its media type's queue.
func (e *Engine) admit(a Alert) {
	q := e.queue(a.MediaTypeID)
	if q == nil {
		return // Run has not started; it re-queues unsent alerts
	}
	q.mu.Lock()
	q.q = append(q.q, a)
	q.mu.Unlock()
	e.m.queued.Inc()
	e.m.backlog.Add(1)
	q.signal()
}

// waiting is the number of alerts waiting in the queue or for a retry:
// what Options.QueueSize bounds. q.mu is held.
func (q *mediaQueue) waiting() int { return len(q.q) + q.retrying }

// roomMade wakes the engine, once per wait, when the queue has drained
// to half its bound while escalations wait for it. q.mu is held.
func (q *mediaQueue) roomMade() {
	if q.held.Load() > 0 && q.waiting() <= q.e.opts.QueueSize/2 && q.wantRoom.CompareAndSwap(true, false) {
		q.e.signal()
	}
}

func (q *mediaQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// finish records an alert's final or intermediate status.
func (e *Engine) finish(a Alert, status int, errText string) {
	if a.Repeat {
		errText = repeatNote(status, errText)
	}
	a.Status, a.Error = status, errText
	switch status {
	case StatusSent:
		e.m.sent.Inc()
	case StatusFailed:
		e.m.failed.Inc()
	}
	if err := e.store.write([]record{{Alert: &a}}); err != nil {
		e.log.Error("alert: cannot record an alert's status", "alertid", a.ID, "status", status, "err", err)
	}
}

// started logs that an attempt to deliver a starts now, before the
// sender is called: if the process is killed or loses its lease before
// the outcome is logged, the next start or the next active node counts
// the attempt and marks the alert (logStore.markRepeats). With the
// state in PostgreSQL the write is fenced: a node that lost its lease
// cannot log it and so does not send.
func (e *Engine) started(a *Alert) error {
	return e.store.write([]record{{Started: a.ID}})
}

// sessions is the media type's concurrency now (it may be edited).
func (q *mediaQueue) sessions(mt *catalog.MediaType) int {
	if mt == nil || mt.MaxSessions <= 0 {
		return q.e.opts.MaxSessions
	}
	return mt.MaxSessions
}

// dispatch starts sends while sessions and the rate limit allow.
func (q *mediaQueue) dispatch(ctx context.Context) {
	defer q.e.wg.Done()
	var sends sync.WaitGroup
	defer sends.Wait()
	for {
		for {
			mt := q.e.opts.Config().MediaTypes[q.id]
			q.mu.Lock()
			if len(q.q) == 0 || q.inflight >= q.sessions(mt) {
				q.mu.Unlock()
				break
			}
			if wait := q.take(); wait > 0 {
				q.mu.Unlock()
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				continue
			}
			a := q.q[0]
			q.q[0] = Alert{}
			q.q = q.q[1:]
			q.inflight++
			q.roomMade()
			q.mu.Unlock()
			sends.Add(1)
			go func() {
				defer sends.Done()
				q.deliver(ctx, a)
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		}
	}
}

// take takes a rate token, or says how long to wait for one. q.mu is
// held.
func (q *mediaQueue) take() time.Duration {
	rate := q.e.opts.RateLimit
	if rate <= 0 {
		return 0
	}
	now := time.Now()
	if q.last.IsZero() {
		q.tokens = 1
	} else {
		q.tokens = min(q.tokens+now.Sub(q.last).Seconds()*rate, max(rate, 1))
	}
	q.last = now
	if q.tokens >= 1 {
		q.tokens--
		return 0
	}
	return time.Duration((1 - q.tokens) / rate * float64(time.Second))
}

// deliver makes one attempt and records the outcome; a failed attempt
// with attempts left comes back to the queue after the media type's
// attempt_interval, not holding a session while it waits.
func (q *mediaQueue) deliver(ctx context.Context, a Alert) {
	e := q.e
	done := func() {
		q.mu.Lock()
		q.inflight--
		q.mu.Unlock()
		q.signal()
	}
	if a.AlertType == AlertCommand {
		e.runCommand(ctx, a)
		done()
		return
	}
	mt := e.opts.Config().MediaTypes[a.MediaTypeID]
	interval := func() time.Duration {
		d, err := ParsePeriod(mt.AttemptInterval)
		if err != nil {
			return 10 * time.Second
		}
		return d
	}
	if mt == nil || mt.Status != 0 {
		e.m.backlog.Add(-1)
		msg := "Media type disabled."
		if mt == nil {
			msg = "Media type does not exist."
		}
		e.finish(a, StatusFailed, msg)
		done()
		return
	}
	s := e.senders[mt.Type]
	var err error
	switch {
	case s == nil && mt.Type == catalog.MediaSMS:
		err = errors.New("SMS is not supported by Peregrine (no GSM modem): use a webhook media type")
	case s == nil:
		err = fmt.Errorf("unsupported media type %d", mt.Type)
	default:
		if err := e.started(&a); err != nil {
			// Not sent, not counted: tried again after the interval
			// (the log's fault, or a lost lease, which stops the
			// engine; the log still has the alert to send).
			e.log.Error("alert: cannot log the start of an attempt; not sending", "alertid", a.ID, "err", err)
			q.retryLater(ctx, a, interval())
			return
		}
		timeout, perr := ParsePeriod(mt.Timeout)
		if perr != nil || timeout <= 0 {
			timeout = 30 * time.Second
		}
		sctx, cancel := context.WithTimeout(ctx, timeout)
		err = s.Send(sctx, mt, &a)
		cancel()
	}
	if err == nil {
		e.m.backlog.Add(-1)
		a.Retries++
		e.finish(a, StatusSent, "")
		done()
		return
	}
	a.Retries++
	attempts := mt.MaxAttempts
	if attempts <= 0 {
		attempts = 3
	}
	if a.Retries >= attempts {
		e.m.backlog.Add(-1)
		e.finish(a, StatusFailed, err.Error())
		done()
		return
	}
	if ctx.Err() != nil {
		// Stopping: the alert stays "not sent" in the log and is sent
		// again after the restart.
		e.finish(a, StatusNotSent, err.Error())
		done()
		return
	}
	e.m.retries.Inc()
	e.finish(a, StatusNotSent, err.Error())
	q.retryLater(ctx, a, interval())
}

// retryLater gives up a's session and puts it back first in the queue
// after interval (unless stopping: the log re-queues it at start).
func (q *mediaQueue) retryLater(ctx context.Context, a Alert, interval time.Duration) {
	q.mu.Lock()
	q.inflight--
	q.retrying++
	q.mu.Unlock()
	t := time.NewTimer(interval)
	select {
	case <-ctx.Done():
		t.Stop()
	case <-t.C:
	}
	q.mu.Lock()
	q.retrying--
	// A retry goes first and past the bound: it was admitted already.
	q.q = append([]Alert{a}, q.q...)
	q.mu.Unlock()
	q.signal()
}

// QueueState is one media type's backlog.
type QueueState struct {
	// Alerts are queued, waiting for a retry or being sent.
	Alerts int
	// Escalations wait for room in the queue to run their next step.
	Escalations int
}

// Queues returns the backlog per media type ID (0: remote commands), of
// the media types that had alerts since the start.
func (e *Engine) Queues() map[uint64]QueueState {
	e.qMu.Lock()
	defer e.qMu.Unlock()
	out := map[uint64]QueueState{}
	for id, q := range e.queues {
		q.mu.Lock()
		out[id] = QueueState{Alerts: len(q.q) + q.retrying + q.inflight, Escalations: int(q.held.Load())}
		q.mu.Unlock()
	}
	return out
}

// runCommand runs a command alert once (Zabbix does not retry remote
// commands: a command is not known to be safe to run twice) and records
// its output or error.
func (e *Engine) runCommand(ctx context.Context, a Alert) {
	e.m.backlog.Add(-1)
	cfg, snap := e.opts.Config(), e.opts.Snapshot()
	sc := cfg.Scripts[a.ScriptID]
	var h *catalog.Host
	if snap != nil {
		h = snap.HostByID(a.HostID)
	}
	a.Retries++
	switch {
	case sc == nil:
		e.finish(a, StatusFailed, "Script does not exist.")
		return
	case h == nil:
		e.finish(a, StatusFailed, "Host does not exist.")
		return
	}
	if err := e.started(&a); err != nil {
		// Not run: the alert stays unsent in the log, run after the
		// restart (or by the next active node).
		e.log.Error("alert: cannot log the start of a command; not running it", "alertid", a.ID, "err", err)
		return
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if sc.Type != catalog.ScriptWebhook { // a webhook script has its own timeout
		cctx, cancel = context.WithTimeout(ctx, e.opts.CommandTimeout)
	}
	out, err := e.opts.Commander.Run(cctx, sc, h, a.Message)
	cancel()
	a.Output = out
	if err != nil {
		e.finish(a, StatusFailed, err.Error())
		return
	}
	e.finish(a, StatusSent, "")
}
