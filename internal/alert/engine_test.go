package alert

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// fakeEvents is an event store of a few events.
type fakeEvents struct {
	mu   sync.Mutex
	evs  map[uint64]event.Event
	acks []event.Ack
}

func (f *fakeEvents) AcksAfter(id uint64) []event.Ack {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []event.Ack
	for _, a := range f.acks {
		if a.ID > id {
			out = append(out, a)
		}
	}
	return out
}

// ack stores acknowledges (ascending IDs) and returns their batch.
func (f *fakeEvents) ack(as ...event.Ack) *event.Batch {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acks = append(f.acks, as...)
	return &event.Batch{Acks: as}
}

func (f *fakeEvents) Event(id uint64) (event.Event, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.evs[id]
	return e, ok
}

func (f *fakeEvents) Events(keep func(*event.Event) bool) []event.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []event.Event
	for _, e := range f.evs {
		if keep(&e) {
			out = append(out, e)
		}
	}
	return out
}

// put stores events and returns the batch the event store would hand
// to Notify.
func (f *fakeEvents) put(evs ...event.Event) *event.Batch {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.evs == nil {
		f.evs = map[uint64]event.Event{}
	}
	for _, e := range evs {
		for _, p := range e.Resolves {
			pe := f.evs[p]
			pe.REventID, pe.RClock = e.ID, e.Clock
			f.evs[p] = pe
		}
		f.evs[e.ID] = e
	}
	return &event.Batch{Events: evs}
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// recSender records what it is asked to send and fails as told.
type recSender struct {
	mu    sync.Mutex
	sent  []Alert
	fail  func(a *Alert) error
	block chan struct{}
	// entered counts calls to Send, blocked or not, so that a test can
	// wait until an alert is in flight.
	entered atomic.Int64
}

func (s *recSender) Send(ctx context.Context, _ *catalog.MediaType, a *Alert) error {
	s.entered.Add(1)
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if s.fail != nil {
		if err := s.fail(a); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.sent = append(s.sent, *a)
	s.mu.Unlock()
	return nil
}

func (s *recSender) count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.sent) }

// testConfig: media type 1 (webhook kind, the fake sender), users 1
// and 2 with media, and the given action as action 1.
func testConfig(a catalog.Action) *catalog.AlertConfig {
	mt := &catalog.MediaType{ID: 1, Name: "hook", Type: catalog.MediaWebhook, MaxAttempts: 3, AttemptInterval: "0s",
		Parameters: []catalog.MediaParam{{Name: "to", Value: "{ALERT.SENDTO}"}, {Name: "text", Value: "{EVENT.NAME} is {EVENT.STATUS}"}},
		Templates: []catalog.MessageTemplate{
			{Recovery: 0, Subject: "Problem: {EVENT.NAME}", Message: "Severity {EVENT.SEVERITY}"},
			{Recovery: 1, Subject: "Resolved: {EVENT.NAME}", Message: "at {EVENT.RECOVERY.TIME}"},
			{Recovery: 2, Subject: "Updated: {EVENT.NAME}", Message: "{EVENT.UPDATE.ACTION}: {EVENT.UPDATE.MESSAGE}"},
		}}
	a.ID = 1
	return &catalog.AlertConfig{
		MediaTypes: map[uint64]*catalog.MediaType{1: mt},
		Actions:    map[uint64]*catalog.Action{1: &a},
		Medias: map[uint64][]catalog.UserMedia{
			1: {{ID: 1, MediaTypeID: 1, SendTo: []string{"u1"}, Severity: 63}},
			2: {{ID: 2, MediaTypeID: 1, SendTo: []string{"u2"}, Severity: 63}},
		},
	}
}

type harness struct {
	e   *Engine
	ev  *fakeEvents
	clk *clock
	snd *recSender
	dir string
	cfg *catalog.AlertConfig
}

func newHarness(t *testing.T, cfg *catalog.AlertConfig, dir string, mod func(*Options)) *harness {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	h := &harness{ev: &fakeEvents{}, clk: &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}, snd: &recSender{}, dir: dir, cfg: cfg}
	o := Options{Dir: dir, Sync: wal.SyncBatch, Config: func() *catalog.AlertConfig { return h.cfg },
		Snapshot: func() *catalog.Snapshot { return nil }, Events: h.ev, Now: h.clk.now, Location: time.UTC,
		Senders: map[int]Sender{catalog.MediaWebhook: h.snd}}
	if pg, ok := pgBackends.Load(t); ok {
		o.Dir, o.Postgres = "", pg.(func(string) *pglog.Options)(dir)
	}
	if mod != nil {
		mod(&o)
	}
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	h.e = e
	t.Cleanup(func() { e.Close() })
	return h
}

func problem(id uint64, sev uint8, name string, tags ...event.Tag) event.Event {
	return event.Event{ID: id, ObjectID: 100 + id, Value: event.ValueProblem, Severity: sev, Name: name, Clock: 1_800_000_000, Tags: tags}
}

// summary is "user:subject" per alert, in ID order.
func summary(as []Alert) []string {
	var out []string
	for _, a := range as {
		s := fmt.Sprintf("u%d step%d %s", a.UserID, a.EscStep, a.Subject)
		if a.Error != "" {
			s += " [" + a.Error + "]"
		}
		out = append(out, s)
	}
	return out
}

func all(*Alert) bool { return true }

func eq(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestEscalationSteps: steps run at their times (the action's default
// step duration, an operation's own shorter one), the escalation ends
// after its last step, and a recovery sends the recovery operations to
// everyone the escalation notified, then forgets the escalation.
func TestEscalationSteps(t *testing.T) { eachBackend(t, testEscalationSteps) }

func testEscalationSteps(t *testing.T) {
	act := catalog.Action{Name: "a", Period: "1h",
		Operations: []catalog.Operation{
			{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}},
			{StepFrom: 2, StepTo: 3, Period: "5m", Subject: "Still: {EVENT.NAME}", UserIDs: []uint64{2}},
		},
		RecoveryOperations: []catalog.Operation{{OperationType: catalog.OpNotifyAllRecovery}},
	}
	h := newHarness(t, testConfig(act), "", nil)
	h.e.Notify(h.ev.put(problem(1, 4, "disk full")))
	h.e.pass()
	eq(t, "step 1", summary(h.e.Alerts(all)), []string{"u1 step1 Problem: disk full"})

	h.clk.add(59 * time.Minute)
	h.e.pass()
	if n := len(h.e.Alerts(all)); n != 1 {
		t.Fatalf("alerts before the step duration: %d, want 1", n)
	}
	h.clk.add(time.Minute) // step 1 lasts the action's 1h
	h.e.pass()
	h.clk.add(4 * time.Minute) // step 2 lasts its operation's 5m
	h.e.pass()
	if n := len(h.e.Alerts(all)); n != 2 {
		t.Fatalf("alerts 4m into step 2: %d, want 2", n)
	}
	h.clk.add(time.Minute)
	h.e.pass()
	h.clk.add(24 * time.Hour) // nothing after step 3
	h.e.pass()
	eq(t, "steps", summary(h.e.Alerts(all)), []string{"u1 step1 Problem: disk full", "u2 step2 Still: disk full", "u2 step3 Still: disk full"})
	if x := h.e.Escalations(); len(x) != 1 || !x[0].Done {
		t.Fatalf("after the last step the escalation waits for the recovery: %+v", x)
	}

	ok := event.Event{ID: 2, ObjectID: 101, Value: event.ValueOK, Clock: 1_800_000_600, Resolves: []uint64{1}}
	h.e.Notify(h.ev.put(ok))
	h.e.pass()
	got := summary(h.e.Alerts(func(a *Alert) bool { return a.EventID == 2 }))
	eq(t, "recovery to all involved", got, []string{"u1 step0 Resolved: disk full", "u2 step0 Resolved: disk full"})
	if x := h.e.Escalations(); len(x) != 0 {
		t.Fatalf("escalation after the recovery: %+v", x)
	}
	rec := h.e.Alerts(func(a *Alert) bool { return a.EventID == 2 })[0]
	if rec.PEventID != 1 || rec.Message != "at 08:10:00" {
		t.Fatalf("recovery alert: p_eventid %d, message %q", rec.PEventID, rec.Message)
	}
}

// TestNotifyAllOwnMessage: "notify all involved" with default_msg 0
// sends its own subject and message (6.0's opmessage on operation type
// 11), with macros expanded.
func TestNotifyAllOwnMessage(t *testing.T) {
	act := catalog.Action{Name: "a", Period: "1h",
		Operations:         []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}},
		RecoveryOperations: []catalog.Operation{{OperationType: catalog.OpNotifyAllRecovery, Subject: "Over: {EVENT.NAME}", Message: "m"}},
	}
	h := newHarness(t, testConfig(act), "", nil)
	h.e.Notify(h.ev.put(problem(1, 4, "disk full")))
	h.e.pass()
	h.e.Notify(h.ev.put(event.Event{ID: 2, ObjectID: 101, Value: event.ValueOK, Clock: 1_800_000_600, Resolves: []uint64{1}}))
	h.e.pass()
	eq(t, "recovery", summary(h.e.Alerts(func(a *Alert) bool { return a.EventID == 2 })), []string{"u1 step0 Over: disk full"})
}

// TestRecoveryStopsEscalation: a problem resolved before step 2 never
// gets step 2.
func TestRecoveryStopsEscalation(t *testing.T) { eachBackend(t, testRecoveryStopsEscalation) }

func testRecoveryStopsEscalation(t *testing.T) {
	act := catalog.Action{Name: "a", Period: "10m", Operations: []catalog.Operation{
		{StepFrom: 1, StepTo: 0, DefaultMsg: 1, UserIDs: []uint64{1}}}}
	h := newHarness(t, testConfig(act), "", nil)
	h.e.Notify(h.ev.put(problem(1, 3, "p")))
	h.e.pass()
	h.clk.add(10 * time.Minute)
	h.e.pass() // step 2 (the operation repeats: step_to 0)
	h.e.Notify(h.ev.put(event.Event{ID: 2, ObjectID: 101, Value: event.ValueOK, Resolves: []uint64{1}}))
	h.e.pass()
	h.clk.add(time.Hour)
	h.e.pass()
	eq(t, "alerts", summary(h.e.Alerts(all)), []string{"u1 step1 Problem: p", "u1 step2 Problem: p"})
}

// TestUpdateOperations: an acknowledge of an escalated problem sends the
// update operations with the update macros.
func TestUpdateOperations(t *testing.T) { eachBackend(t, testUpdateOperations) }

func testUpdateOperations(t *testing.T) {
	act := catalog.Action{Name: "a", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}},
		UpdateOperations: []catalog.Operation{{OperationType: catalog.OpSendMessage, DefaultMsg: 1, UserIDs: []uint64{2}}}}
	h := newHarness(t, testConfig(act), "", nil)
	h.e.Notify(h.ev.put(problem(1, 3, "p")))
	h.e.pass()
	h.e.Notify(&event.Batch{Acks: []event.Ack{{ID: 7, EventID: 1, Action: event.ActionAcknowledge | event.ActionMessage, Message: "on it"}}})
	h.e.pass()
	got := h.e.Alerts(func(a *Alert) bool { return a.AckID == 7 })
	if len(got) != 1 || got[0].UserID != 2 || got[0].Message != "acknowledged, commented: on it" {
		t.Fatalf("update alerts: %+v", got)
	}
}

// TestConditions: each condition type and operator, and the evaluation
// types, against one event.
func TestConditions(t *testing.T) { eachBackend(t, testConditions) }

func testConditions(t *testing.T) {
	ev := problem(1, 3, "High CPU on web1", event.Tag{Tag: "service", Value: "web"}, event.Tag{Tag: "env", Value: "prod"})
	in := &matchInput{ev: &ev, trig: &catalog.Trigger{ID: 101, HostIDs: []uint64{7}}}
	c := func(typ, op int, v string) catalog.Condition {
		return catalog.Condition{ConditionType: typ, Operator: op, Value: v}
	}
	e := &Engine{}
	f := func(name string, want bool, evaltype int, formula string, conds ...catalog.Condition) {
		t.Helper()
		for i := range conds {
			conds[i].FormulaID = string(rune('A' + i))
		}
		a := &catalog.Action{Filter: catalog.Filter{EvalType: evaltype, Formula: formula, Conditions: conds}}
		if got := e.matches(a, in); got != want {
			t.Errorf("%s: matches = %v, want %v", name, got, want)
		}
	}
	f("no conditions", true, 0, "")
	f("severity >= 3", true, 0, "", c(catalog.CondSeverity, catalog.OpGreaterEq, "3"))
	f("severity >= 4", false, 0, "", c(catalog.CondSeverity, catalog.OpGreaterEq, "4"))
	f("severity = 3", true, 0, "", c(catalog.CondSeverity, catalog.OpEqual, "3"))
	f("severity <= 2", false, 0, "", c(catalog.CondSeverity, catalog.OpLessEq, "2"))
	f("host 7", true, 0, "", c(catalog.CondHost, catalog.OpEqual, "7"))
	f("host <> 7", false, 0, "", c(catalog.CondHost, catalog.OpNotEqual, "7"))
	f("trigger 101", true, 0, "", c(catalog.CondTrigger, catalog.OpEqual, "101"))
	f("name contains CPU", true, 0, "", c(catalog.CondEventName, catalog.OpLike, "CPU"))
	f("name not contains CPU", false, 0, "", c(catalog.CondEventName, catalog.OpNotLike, "CPU"))
	f("tag service", true, 0, "", c(catalog.CondTag, catalog.OpEqual, "service"))
	f("tag <> service", false, 0, "", c(catalog.CondTag, catalog.OpNotEqual, "service"))
	f("tag <> db", true, 0, "", c(catalog.CondTag, catalog.OpNotEqual, "db"))
	tv := c(catalog.CondTagValue, catalog.OpEqual, "prod")
	tv.Value2 = "env"
	f("tag env=prod", true, 0, "", tv)
	tv.Value = "dev"
	f("tag env=dev", false, 0, "", tv)
	f("not suppressed", true, 0, "", c(catalog.CondSuppressed, catalog.OpNo, ""))
	f("suppressed", false, 0, "", c(catalog.CondSuppressed, catalog.OpYes, ""))
	// and/or: same type or-ed, types and-ed.
	f("and/or", true, 0, "", c(catalog.CondSeverity, catalog.OpEqual, "5"), c(catalog.CondSeverity, catalog.OpEqual, "3"), c(catalog.CondHost, catalog.OpEqual, "7"))
	f("and/or false", false, 0, "", c(catalog.CondSeverity, catalog.OpEqual, "5"), c(catalog.CondSeverity, catalog.OpEqual, "3"), c(catalog.CondHost, catalog.OpEqual, "8"))
	f("and", false, 1, "", c(catalog.CondSeverity, catalog.OpEqual, "5"), c(catalog.CondHost, catalog.OpEqual, "7"))
	f("or", true, 2, "", c(catalog.CondSeverity, catalog.OpEqual, "5"), c(catalog.CondHost, catalog.OpEqual, "7"))
	f("formula", true, 3, "A and (B or not C)", c(catalog.CondHost, catalog.OpEqual, "7"), c(catalog.CondSeverity, catalog.OpEqual, "5"), c(catalog.CondTag, catalog.OpEqual, "db"))
	f("formula false", false, 3, "A and B", c(catalog.CondHost, catalog.OpEqual, "7"), c(catalog.CondSeverity, catalog.OpEqual, "5"))
	in.suppressed = true
	f("suppressed hook", true, 0, "", c(catalog.CondSuppressed, catalog.OpYes, ""))

	for _, bad := range []string{"A and", "(A", "A or D", "A B", ""} {
		if err := CheckFormula(bad, []string{"A", "B"}); err == nil {
			t.Errorf("formula %q accepted", bad)
		}
	}
}

// TestMediaFilters: a user's medium takes only its severities and
// period; a user without a medium gets Zabbix's failed alert.
func TestMediaFilters(t *testing.T) {
	act := catalog.Action{Name: "a", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1, 2, 3}}}}
	cfg := testConfig(act)
	cfg.Medias[1][0].Severity = 1 << 5                          // disasters only
	cfg.Medias[2][0].Period = "1-5,09:00-17:00;6-7,11:00-12:00" // 2026-11-23 is a Monday, 12:00 UTC
	h := newHarness(t, cfg, "", nil)
	h.e.Notify(h.ev.put(problem(1, 4, "p")))
	h.e.pass()
	eq(t, "alerts", summary(h.e.Alerts(all)), []string{"u2 step1 Problem: p", "u3 step1  [No media defined for user.]"})
	if !inPeriod("6-7,11:00-12:00", time.Date(2026, 11, 29, 11, 30, 0, 0, time.UTC)) || inPeriod("1-5,09:00-17:00", time.Date(2026, 11, 29, 11, 30, 0, 0, time.UTC)) {
		t.Fatal("weekend period")
	}
}

// TestRestartKeepsEscalations: a pending step survives a reopen and
// fires on time; a delivered alert is not sent again, one not yet
// delivered is.
func TestRestartKeepsEscalations(t *testing.T) { eachBackend(t, testRestartKeepsEscalations) }

func testRestartKeepsEscalations(t *testing.T) {
	act := catalog.Action{Name: "a", Period: "1h", Operations: []catalog.Operation{
		{StepFrom: 1, StepTo: 2, DefaultMsg: 1, UserIDs: []uint64{1}}}}
	cfg := testConfig(act)
	h := newHarness(t, cfg, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.e.Run(ctx); close(done) }()
	h.e.Notify(h.ev.put(problem(1, 4, "p")))
	waitFor(t, "step 1 delivered", func() bool {
		as := h.e.Alerts(all)
		return len(as) == 1 && as[0].Status == StatusSent
	})
	cancel()
	<-done
	// An alert made but not delivered before the stop (written by hand:
	// the state a kill between the two leaves).
	if err := h.e.store.write([]record{{Alert: &Alert{ID: 50, ActionID: 1, EventID: 1, PEventID: 1, UserID: 2, MediaTypeID: 1, SendTo: "u2", Status: StatusNew}}}); err != nil {
		t.Fatal(err)
	}
	h.e.Close()

	h2 := newHarness(t, cfg, h.dir, nil)
	h2.ev, h2.clk = h.ev, h.clk
	h2.e.opts.Events, h2.e.opts.Now = h.ev, h.clk.now
	if x := h2.e.Escalations(); len(x) != 1 || x[0].Step != 2 {
		t.Fatalf("escalations after reopen: %+v", x)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	done2 := make(chan struct{})
	go func() { h2.e.Run(ctx2); close(done2) }()
	defer func() { cancel2(); <-done2 }()
	waitFor(t, "the undelivered alert sent after the restart", func() bool { return h2.snd.count() == 1 })
	h.clk.add(time.Hour)
	h2.e.signal()
	waitFor(t, "step 2 on time after the restart", func() bool { return h2.snd.count() == 2 })
	if n := h.snd.count(); n != 1 {
		t.Fatalf("first engine sent %d", n)
	}
	h2.snd.mu.Lock()
	defer h2.snd.mu.Unlock()
	for _, a := range h2.snd.sent {
		if a.ID == 1 {
			t.Fatal("the alert delivered before the restart was sent again")
		}
	}
}

// TestRetriesAndFailures: a failing medium is tried maxattempts times
// and fails with its error while another user's alerts are delivered.
func TestRetriesAndFailures(t *testing.T) { eachBackend(t, testRetriesAndFailures) }

func testRetriesAndFailures(t *testing.T) {
	act := catalog.Action{Name: "a", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1, 2}}}}
	h := newHarness(t, testConfig(act), "", nil)
	var attempts sync.Map
	h.snd.fail = func(a *Alert) error {
		if a.SendTo == "u1" {
			n, _ := attempts.LoadOrStore(a.ID, new(int))
			*n.(*int)++
			return errors.New("endpoint answered 500 Internal Server Error")
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	h.e.Notify(h.ev.put(problem(1, 4, "p")))
	waitFor(t, "both final", func() bool {
		n := 0
		for _, a := range h.e.Alerts(all) {
			if a.Status == StatusSent || a.Status == StatusFailed {
				n++
			}
		}
		return n == 2
	})
	for _, a := range h.e.Alerts(all) {
		switch a.SendTo {
		case "u1":
			if a.Status != StatusFailed || a.Retries != 3 || a.Error != "endpoint answered 500 Internal Server Error" {
				t.Errorf("failing alert: %+v", a)
			}
		case "u2":
			if a.Status != StatusSent {
				t.Errorf("good alert: %+v", a)
			}
		}
	}
	if h.e.m.retries.Load() != 2 || h.e.m.failed.Load() != 1 || h.e.m.sent.Load() != 1 {
		t.Fatalf("metrics: retries %d failed %d sent %d", h.e.m.retries.Load(), h.e.m.failed.Load(), h.e.m.sent.Load())
	}
}

// TestFloodBounded: 100,000 problems × one action with a medium that
// cannot keep up: the queue holds QueueSize alerts and the other
// escalations wait for room (back-pressure) instead of failing; the
// alerts made stay within the bound, nothing fails, the backlog is
// visible per media type; matching did not wait for sending.
func TestFloodBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("100k alerts")
	}
	act := catalog.Action{Name: "a", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}}}
	cfg := testConfig(act)
	cfg.MediaTypes[1].MaxSessions = 1
	n, qsize := 100_000, 1000
	if raceEnabled {
		n = 10_000
	}
	const keep = 5000
	h := newHarness(t, cfg, "", func(o *Options) { o.QueueSize = qsize; o.KeepAlerts = keep; o.RateLimit = 10; o.Sync = wal.SyncNever })
	h.snd.block = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	b := &event.Batch{}
	for i := uint64(1); i <= uint64(n); i++ {
		b.Events = append(b.Events, problem(i, 4, "p"))
	}
	h.ev.put(b.Events...)
	h.e.Notify(b)
	waitFor(t, "every escalation started", func() bool { return len(h.e.Escalations()) == n })
	// The one session may have taken an alert off the queue (blocked
	// in Send), which made room for one more: the bound is the queue
	// plus what is in flight.
	var inflight int
	waitFor(t, "the queue full and the other escalations waiting", func() bool {
		q := h.e.Queues()[1]
		inflight = int(h.snd.entered.Load())
		return q.Alerts == qsize+inflight && q.Escalations == n-q.Alerts
	})
	if made := len(h.e.Alerts(all)); made != qsize+inflight {
		t.Fatalf("%d alerts made, want the queue's %d and %d in flight", made, qsize, inflight)
	}
	if g := int(h.e.m.backlog.Load()); g != qsize+inflight {
		t.Fatalf("backlog gauge %d", g)
	}
	if h.e.m.failed.Load() != 0 || h.e.m.held.Load() != uint64(n-qsize) {
		t.Fatalf("failed %d, steps waited %d", h.e.m.failed.Load(), h.e.m.held.Load())
	}
	var m strings.Builder
	h.e.opts.Metrics.WriteText(&m)
	if want := fmt.Sprintf("peregrine_alert_escalations_waiting{mediatypeid=\"1\"} %d\n", n-qsize-inflight); !strings.Contains(m.String(), want) {
		t.Fatalf("/metrics has no %q", want)
	}
	close(h.snd.block)
}

// waitFor waits for cond; the bound only stops a test that would hang
// (a loaded machine under -race can take tens of seconds).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOpConditionNotAcknowledged: step 2 runs only for a problem that is
// not acknowledged when the step comes (opconditions, conditiontype 14);
// an "acknowledged" operation runs only for the acknowledged one. The
// step duration is the same for both.
func TestOpConditionNotAcknowledged(t *testing.T) {
	notAck := []catalog.OpCondition{{ConditionType: catalog.OpCondAcknowledged, Operator: catalog.OpEqual, Value: "0"}}
	isAck := []catalog.OpCondition{{ConditionType: catalog.OpCondAcknowledged, Operator: catalog.OpEqual, Value: "1"}}
	act := catalog.Action{Name: "a", Period: "10m",
		Operations: []catalog.Operation{
			{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}},
			{StepFrom: 2, StepTo: 2, Subject: "unacked {EVENT.NAME}", UserIDs: []uint64{2}, Conditions: notAck},
			{StepFrom: 2, StepTo: 2, Subject: "acked {EVENT.NAME}", UserIDs: []uint64{1}, Conditions: isAck},
		}}
	h := newHarness(t, testConfig(act), "", nil)
	h.e.Notify(h.ev.put(problem(1, 4, "p1"), problem(2, 4, "p2")))
	h.e.pass()
	// Problem 1 is acknowledged between the steps.
	p1, _ := h.ev.Event(1)
	p1.Acknowledged = true
	h.ev.put(p1)
	h.e.Notify(h.ev.ack(event.Ack{ID: 1, EventID: 1, Action: event.ActionAcknowledge}))
	h.e.pass()
	h.clk.add(9 * time.Minute)
	h.e.pass()
	if n := len(h.e.Alerts(all)); n != 2 {
		t.Fatalf("alerts before step 2 is due: %d, want 2", n)
	}
	h.clk.add(time.Minute)
	h.e.pass()
	// The two escalations reach step 2 in the same pass: in ID order.
	eq(t, "alerts", summary(h.e.Alerts(all)), []string{
		"u1 step1 Problem: p1", "u1 step1 Problem: p2",
		"u1 step2 acked p1", "u2 step2 unacked p2",
	})
}

// TestOpConditionEval: the evaluation types of operation conditions.
func TestOpConditionEval(t *testing.T) {
	ack := catalog.OpCondition{ConditionType: catalog.OpCondAcknowledged, Value: "1"}
	nack := catalog.OpCondition{ConditionType: catalog.OpCondAcknowledged, Value: "0"}
	f := func(evaltype int, acked, want bool, conds ...catalog.OpCondition) {
		t.Helper()
		op := &catalog.Operation{EvalType: evaltype, Conditions: conds}
		if got := opConditionsHold(op, &event.Event{Acknowledged: acked}); got != want {
			t.Errorf("evaltype %d, acknowledged %v, %+v: %v, want %v", evaltype, acked, conds, got, want)
		}
	}
	f(0, false, true)
	f(0, true, true, ack)
	f(0, false, false, ack)
	f(0, false, true, ack, nack) // same type: or-ed
	f(1, false, false, ack, nack)
	f(2, true, true, ack, nack)
	f(2, false, false, ack)
	for _, c := range []catalog.OpCondition{{ConditionType: 13, Value: "1"}, {ConditionType: 14, Operator: 1, Value: "1"}, {ConditionType: 14, Value: "2"}} {
		if CheckOpCondition(&c) == nil {
			t.Errorf("CheckOpCondition(%+v) accepted", c)
		}
	}
	if err := CheckOpCondition(&nack); err != nil {
		t.Error(err)
	}
}

// TestAckMark: a new log starts after the acknowledges stored already
// (their update operations are history, not news); an ack committed to
// the event store and never handed to the engine is decided at the
// next start, once.
func TestAckMark(t *testing.T) {
	act := catalog.Action{Name: "a", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}},
		UpdateOperations: []catalog.Operation{{OperationType: catalog.OpSendMessage, DefaultMsg: 1, UserIDs: []uint64{2}}}}
	dir := t.TempDir()
	h := newHarness(t, testConfig(act), dir, nil)
	h.ev.put(problem(1, 3, "p"))
	h.ev.ack(event.Ack{ID: 5, EventID: 1, Action: event.ActionMessage, Message: "old"})
	h.e.catchUp()
	h.e.Notify(&event.Batch{Events: []event.Event{problem(1, 3, "p")}})
	h.e.pass()
	h.ev.ack(event.Ack{ID: 6, EventID: 1, Action: event.ActionMessage, Message: "lost in the crash"})
	h.e.Close()

	updates := func(e *Engine) []string {
		var out []string
		for _, a := range e.Alerts(func(a *Alert) bool { return a.AckID != 0 }) {
			out = append(out, fmt.Sprintf("ack%d u%d %s", a.AckID, a.UserID, a.Message))
		}
		return out
	}
	for round := range 2 {
		e, err := New(Options{Dir: dir, Sync: wal.SyncBatch, Config: func() *catalog.AlertConfig { return h.cfg },
			Snapshot: func() *catalog.Snapshot { return nil }, Events: h.ev, Now: h.clk.now, Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		e.catchUp()
		e.pass()
		eq(t, fmt.Sprintf("update alerts after start %d", round+1), updates(e), []string{"ack6 u2 commented: lost in the crash"})
		e.Close()
	}
}

// TestNotifyLeavesBatch: Notify queues the committed batch itself, not a
// copy, so matching, escalating, recovering and updating must only read
// it: after passes over a problem with tags, its acknowledge and its OK
// event, every batch equals what was committed.
func TestNotifyLeavesBatch(t *testing.T) {
	act := catalog.Action{Name: "a", Period: "1h",
		Operations:         []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}},
		RecoveryOperations: []catalog.Operation{{OperationType: catalog.OpNotifyAllRecovery}},
		UpdateOperations:   []catalog.Operation{{OperationType: catalog.OpNotifyAllUpdate}},
	}
	h := newHarness(t, testConfig(act), "", nil)
	// Each batch is stored just before its Notify, as the event store
	// commits before its hook runs.
	commits := []func() *event.Batch{
		func() *event.Batch {
			return h.ev.put(problem(1, 4, "disk full", event.Tag{Tag: "service", Value: "web"}))
		},
		func() *event.Batch {
			return h.ev.ack(event.Ack{ID: 1, EventID: 1, Action: event.ActionAcknowledge | event.ActionMessage, Message: "on it"})
		},
		func() *event.Batch {
			return h.ev.put(event.Event{ID: 2, ObjectID: 101, Value: event.ValueOK, Clock: 1_800_000_600, Resolves: []uint64{1}})
		},
	}
	var batches []*event.Batch
	var want []event.Batch
	for _, commit := range commits {
		b := commit()
		cp := event.Batch{Events: slices.Clone(b.Events), Acks: slices.Clone(b.Acks)}
		for i := range cp.Events {
			cp.Events[i].Tags = slices.Clone(cp.Events[i].Tags)
			cp.Events[i].Resolves = slices.Clone(cp.Events[i].Resolves)
		}
		batches, want = append(batches, b), append(want, cp)
		h.e.Notify(b)
		h.e.pass()
	}
	if n := len(h.e.Alerts(all)); n < 3 {
		t.Fatalf("%d alerts, want the problem's, the update's and the recovery's", n)
	}
	for i, b := range batches {
		if !reflect.DeepEqual(*b, want[i]) {
			t.Errorf("batch %d changed after Notify:\n got %+v\nwant %+v", i, *b, want[i])
		}
	}
}

// TestNoActionEvents: a problem closed at once by event correlation
// ("close new event") and its OK event run no action, as Zabbix 6.0's
// server marks both; the watermark still passes them.
func TestNoActionEvents(t *testing.T) {
	act := catalog.Action{Name: "a", Period: "1h",
		Operations:         []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1}}},
		RecoveryOperations: []catalog.Operation{{OperationType: catalog.OpNotifyAllRecovery, Subject: "Over: {EVENT.NAME}", Message: "m"}},
	}
	h := newHarness(t, testConfig(act), "", nil)
	p := problem(1, 4, "closed at once")
	p.NoAction = true
	h.e.Notify(h.ev.put(p, event.Event{ID: 2, ObjectID: 101, Value: event.ValueOK, Clock: 1_800_000_000, Resolves: []uint64{1},
		CorrelationID: 5, CEventID: 1, NoAction: true}))
	h.e.pass()
	h.clk.add(2 * time.Hour)
	h.e.pass()
	eq(t, "alerts", summary(h.e.Alerts(all)), nil)
	h.e.Notify(h.ev.put(problem(3, 4, "kept")))
	h.e.pass()
	eq(t, "alerts of a problem without NoAction", summary(h.e.Alerts(all)), []string{"u1 step1 Problem: kept"})
}
