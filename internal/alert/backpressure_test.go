package alert

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// slowReceiver is a webhook endpoint on 127.0.0.1 that takes delay per
// request and counts the deliveries of each event (the "event"
// parameter); fail says whether to answer 500 to an attempt.
type slowReceiver struct {
	srv   *httptest.Server
	delay time.Duration
	fail  func(event uint64, attempt int) bool

	mu       sync.Mutex
	got      map[uint64]int // deliveries answered 200, by event
	attempts map[uint64]int
	inflight atomic.Int32
	peak     atomic.Int32
}

func newSlowReceiver(t testing.TB, delay time.Duration, fail func(event uint64, attempt int) bool) *slowReceiver {
	r := &slowReceiver{delay: delay, fail: fail, got: map[uint64]int{}, attempts: map[uint64]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := r.inflight.Add(1)
		defer r.inflight.Add(-1)
		for p := r.peak.Load(); n > p && !r.peak.CompareAndSwap(p, n); p = r.peak.Load() {
		}
		var body map[string]string
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id, _ := strconv.ParseUint(body["event"], 10, 64)
		time.Sleep(r.delay)
		r.mu.Lock()
		r.attempts[id]++
		attempt := r.attempts[id]
		r.mu.Unlock()
		if r.fail != nil && r.fail(id, attempt) {
			http.Error(w, "receiver refused", http.StatusInternalServerError)
			return
		}
		r.mu.Lock()
		r.got[id]++
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// delivered returns how many events were delivered at least once.
func (r *slowReceiver) delivered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// floodConfig: one action messaging user 1 at step 1 through media type
// 1, a plain webhook (JSON POST to the URL parameter) with maxsessions
// sessions.
func floodConfig(url string, sessions, attempts int) *catalog.AlertConfig {
	cfg := testConfig(catalog.Action{Name: "flood", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}, MediaTypeID: 1}}})
	mt := cfg.MediaTypes[1]
	mt.MaxSessions, mt.MaxAttempts, mt.AttemptInterval, mt.Timeout = sessions, attempts, "0s", "10s"
	mt.Parameters = []catalog.MediaParam{{Name: "URL", Value: url}, {Name: "event", Value: "{EVENT.ID}"}, {Name: "subject", Value: "{ALERT.SUBJECT}"}}
	return cfg
}

// floodRun notifies n problem events in trigger-commit-sized batches
// to an engine whose queue holds qsize alerts, and waits (bounded) until
// every alert is final. It returns the engine and the highest alert
// backlog seen per media type while the flood drained.
func floodRun(t *testing.T, cfg *catalog.AlertConfig, n, qsize int, limit time.Duration) (*harness, int) {
	t.Helper()
	h := newHarness(t, cfg, "", func(o *Options) {
		o.QueueSize, o.KeepAlerts, o.Sync = qsize, 1000, wal.SyncInterval
		o.Senders = map[int]Sender{} // the real webhook sender
		o.Now = nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	for from := 1; from <= n; from += 1000 {
		var evs []event.Event
		for id := from; id < min(from+1000, n+1); id++ {
			evs = append(evs, problem(uint64(id), 4, "flood"))
		}
		h.e.Notify(h.ev.put(evs...))
	}
	deadline := time.Now().Add(limit)
	peak := 0
	for {
		peak = max(peak, h.e.Queues()[1].Alerts)
		final := h.e.m.sent.Load() + h.e.m.failed.Load()
		if final == uint64(n) && h.e.m.backlog.Load() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d of %d alerts final (sent %d, failed %d), backlog %d", limit, final, n,
				h.e.m.sent.Load(), h.e.m.failed.Load(), h.e.m.backlog.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The counters move when an attempt ends; the alert's own record
	// (status, retries, error) is logged just after: wait for every
	// record to be final too before the callers read them.
	for {
		pending := 0
		for _, a := range h.e.Alerts(all) {
			if a.Status != StatusSent && a.Status != StatusFailed {
				pending++
			}
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d alerts still not final in the alert log", limit, pending)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return h, peak
}

// TestFloodDeliversEveryAlert: a flood of problems × one action through
// a media type much slower than the flood, whose queue holds a tenth of
// it: every alert is delivered, once, at the media type's maxsessions;
// the queue never holds more than its bound (the escalations wait for
// room instead: back-pressure), and nothing fails for a full queue.
func TestFloodDeliversEveryAlert(t *testing.T) {
	n, qsize, sessions := 10_000, 1000, 8
	if raceEnabled || testing.Short() {
		n, qsize = 3000, 300
	}
	rcv := newSlowReceiver(t, time.Millisecond, nil)
	h, peak := floodRun(t, floodConfig(rcv.srv.URL, sessions, 3), n, qsize, 3*time.Minute)
	if got := rcv.delivered(); got != n {
		t.Fatalf("receiver got %d of %d events", got, n)
	}
	rcv.mu.Lock()
	for id, c := range rcv.got {
		if c != 1 {
			t.Errorf("event %d delivered %d times", id, c)
		}
	}
	rcv.mu.Unlock()
	var failed []Alert
	sent := 0
	for _, a := range h.e.Alerts(all) {
		switch a.Status {
		case StatusSent:
			sent++
		default:
			failed = append(failed, a)
		}
	}
	if len(failed) > 0 {
		t.Fatalf("%d alerts not sent, the first: %+v", len(failed), failed[0])
	}
	if p := int(rcv.peak.Load()); p > sessions {
		t.Fatalf("%d requests at once, maxsessions %d", p, sessions)
	}
	// The queue is bounded: an escalation step adds one alert here, so
	// the bound holds but for the alerts in flight.
	if peak > qsize+sessions {
		t.Fatalf("backlog of media type 1 peaked at %d, bound %d+%d in flight", peak, qsize, sessions)
	}
	if h.e.m.held.Load() == 0 {
		t.Fatal("no escalation waited for the queue: the flood did not fill it")
	}
	t.Logf("%d alerts delivered (%d kept), backlog peak %d, %d escalation steps waited for room", n, sent, peak, h.e.m.held.Load())
}

// TestFloodReportsUndelivered: in a flood through a receiver that
// refuses some alerts for good and others once, the once-refused are
// delivered on their next attempt, and each refused one is failed with
// its reason and its attempts, as alert.get shows it (status 2, error,
// retries = maxattempts).
func TestFloodReportsUndelivered(t *testing.T) {
	n := 2000
	rcv := newSlowReceiver(t, 0, func(ev uint64, attempt int) bool { return ev%100 == 0 || ev%7 == 0 && attempt == 1 })
	h, _ := floodRun(t, floodConfig(rcv.srv.URL, 4, 2), n, 200, 3*time.Minute)
	for _, a := range h.e.Alerts(all) {
		var ev uint64
		for _, p := range a.Params {
			if p.Name == "event" {
				ev, _ = strconv.ParseUint(p.Value, 10, 64)
			}
		}
		switch {
		case ev%100 == 0:
			if a.Status != StatusFailed || a.Retries != 2 || a.Error != rcv.srv.URL+" answered 500 Internal Server Error: receiver refused" {
				t.Fatalf("refused alert: %+v", a)
			}
		case a.Status != StatusSent:
			t.Fatalf("alert of event %d: %+v", ev, a)
		}
	}
	if want := n - n/100; rcv.delivered() != want {
		t.Fatalf("receiver got %d events, want %d", rcv.delivered(), want)
	}
	if f := h.e.m.failed.Load(); f != uint64(n/100) {
		t.Fatalf("failed_total %d, want %d", f, n/100)
	}
}

// runQueues lets the engine's queues send without running Run's loop,
// so that a test decides when passes happen.
func runQueues(t *testing.T, e *Engine) {
	ctx, cancel := context.WithCancel(context.Background())
	e.qMu.Lock()
	e.ctx = ctx
	e.qMu.Unlock()
	t.Cleanup(func() { cancel(); e.wg.Wait() })
}

// TestWaitingEscalations: with a queue of 2 and a stuck medium (one
// alert in flight), the fourth problem on waits; a waiting escalation
// whose problem resolves ends without a message (it notified nobody),
// the others run their step once the queue drains, oldest first; the
// waits are counted and shown per media type.
func TestWaitingEscalations(t *testing.T) {
	act := catalog.Action{Name: "a", Period: "1h",
		Operations:         []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}, MediaTypeID: 1}},
		RecoveryOperations: []catalog.Operation{{OperationType: catalog.OpNotifyAllRecovery, DefaultMsg: 1}}}
	cfg := testConfig(act)
	cfg.MediaTypes[1].MaxSessions = 1
	h := newHarness(t, cfg, "", func(o *Options) { o.QueueSize = 2 })
	h.snd.block = make(chan struct{})
	runQueues(t, h.e)
	// The first alert is taken by the one session before the flood, so
	// that what the queue holds does not depend on when the session
	// goroutine runs.
	h.e.Notify(h.ev.put(problem(1, 4, "p1")))
	h.e.pass()
	waitFor(t, "the first alert in flight", func() bool { return h.snd.entered.Load() == 1 })
	var evs []event.Event
	for id := uint64(2); id <= 5; id++ {
		evs = append(evs, problem(id, 4, fmt.Sprint("p", id)))
	}
	h.e.Notify(h.ev.put(evs...))
	h.e.pass()
	if q := h.e.Queues()[1]; q.Alerts != 3 || q.Escalations != 2 {
		t.Fatalf("after the flood: %+v, want 3 alerts (one in flight) and 2 escalations waiting", q)
	}
	h.e.Notify(h.ev.put(event.Event{ID: 6, ObjectID: 104, Value: event.ValueOK, Resolves: []uint64{4}}))
	h.e.pass()
	if q := h.e.Queues()[1]; q.Escalations != 1 {
		t.Fatalf("after problem 4 resolved: %+v, want 1 escalation waiting", q)
	}
	close(h.snd.block)
	waitFor(t, "the queue drained", func() bool { return h.snd.count() == 3 })
	waitFor(t, "the queue sent its alerts", func() bool { return h.e.Queues()[1].Alerts == 0 })
	h.e.pass()
	waitFor(t, "the waiting steps sent", func() bool { return h.snd.count() == 4 })
	eq(t, "alerts", summary(h.e.Alerts(all)), []string{"u1 step1 Problem: p1", "u1 step1 Problem: p2", "u1 step1 Problem: p3", "u1 step1 Problem: p5"})
	if q := h.e.Queues()[1]; q.Escalations != 0 || h.e.m.held.Load() != 2 || h.e.m.failed.Load() != 0 {
		t.Fatalf("at the end: %+v, %d steps waited, %d failed", q, h.e.m.held.Load(), h.e.m.failed.Load())
	}
}

// TestStepLoggedTogether: an escalation step's alerts and the
// escalation's next step are one log frame, so a kill -9 keeps both or
// neither (a torn tail is cut at a frame boundary): the step is never
// run twice after a restart, and its alerts are never lost.
func TestStepLoggedTogether(t *testing.T) {
	act := catalog.Action{Name: "a", Period: "1h", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 2, DefaultMsg: 1, UserIDs: []uint64{1, 2}}}}
	h := newHarness(t, testConfig(act), "", nil)
	h.e.Notify(h.ev.put(problem(1, 4, "p")))
	h.e.pass()
	h.e.Close()
	w, err := wal.Open(wal.Options{Dir: h.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	found := false
	err = w.Replay(func(b []byte) error {
		var r record
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		alerts, step2 := 0, false
		for _, g := range r.Group {
			if g.Alert != nil && g.Alert.EscStep == 1 {
				alerts++
			}
			step2 = step2 || g.Escalation != nil && g.Escalation.Step == 2
		}
		found = found || alerts == 2 && step2
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatal("no log record holds step 1's two alerts with the escalation at step 2")
	}
}
