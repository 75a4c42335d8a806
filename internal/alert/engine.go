package alert

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// Events is the event store the engine reads problems from (*event.Store).
type Events interface {
	Event(id uint64) (event.Event, bool)
	Events(keep func(*event.Event) bool) []event.Event
	// AcksAfter returns the acknowledges with an ID above id, ascending.
	AcksAfter(id uint64) []event.Ack
}

// Sender delivers one alert through one media type. Send must honour
// ctx (the media type's timeout) and return an error saying what the
// far end answered.
type Sender interface {
	Send(ctx context.Context, mt *catalog.MediaType, a *Alert) error
}

// Options configures New.
type Options struct {
	// Dir is the alert log's directory. Required unless Postgres is set.
	Dir string
	// Postgres, when set, keeps the alert log in PostgreSQL instead
	// (state.store: postgres; table alert_log, package pglog), every
	// write fenced by the HA lease. Its Table is set here; Dir, Sync and
	// SyncInterval do not apply then.
	Postgres *pglog.Options
	Sync     wal.SyncMode
	// SyncInterval is the fsync period under wal.SyncInterval.
	SyncInterval time.Duration
	// Config returns the notification configuration (catalog); Snapshot
	// the catalog snapshot. Required.
	Config   func() *catalog.AlertConfig
	Snapshot func() *catalog.Snapshot
	// Events is the event store. Required.
	Events Events
	// UsersOfGroups returns the members of user groups; nil: operations
	// that name groups reach nobody.
	UsersOfGroups func(groupIDs []uint64) []uint64
	// Rights returns what a user may read: reads reports whether the
	// user has at least read permission on a host in the given host
	// groups (Zabbix's rule, auth.Rights.Host). A user is sent a message
	// about an event only if reads holds for a host of its trigger;
	// otherwise the user is skipped, counted and logged. nil: no check
	// (every user reads everything). Called at most once per user per
	// pass.
	Rights func(userID uint64) (reads func(hostGroupIDs []uint64) bool, err error)
	// Suppressed says whether a problem is suppressed (maintenance);
	// nil: the event's Suppressed flag.
	Suppressed func(ev *event.Event) bool
	// LastValue gives {ITEM.LASTVALUE}.
	LastValue func(itemID uint64) (string, bool)
	// Autoreg matches an auto-registration action (event source 2)
	// against an event of source 2 (package autoreg's Matches), and
	// AutoregMacros gives the event's {HOST.HOST}, {HOST.IP},
	// {HOST.DNS}, {HOST.PORT}, {HOST.METADATA} and {PROXY.NAME}; nil:
	// auto-registration actions send nothing.
	Autoreg       func(a *catalog.Action, ev *event.Event) bool
	AutoregMacros func(ev *event.Event) map[string]string
	// Discovery matches a discovery action (event source 1) against a
	// discovery event (package netdisc's Matches); nil: discovery
	// actions send nothing. Every discovery event, whatever its value,
	// is matched, and the operations run once, as auto-registration's.
	Discovery func(a *catalog.Action, ev *event.Event) bool
	// DiscoveryMacros gives a discovery event's {DISCOVERY.*} macros.
	DiscoveryMacros func(ev *event.Event) map[string]string
	// Senders by media type kind (catalog.MediaEmail, ...); missing kinds
	// get the built-in senders.
	Senders map[int]Sender
	// Commander runs remote commands (operation type 1); default a
	// CommandRunner without agents.
	Commander Commander
	// CommandTimeout bounds one remote command (default 30 s, Zabbix's
	// longest Timeout).
	CommandTimeout time.Duration
	// QueueSize bounds the alerts waiting per media type (default
	// 10,000): past it a new alert fails at once.
	QueueSize int
	// RateLimit bounds the alerts started per second per media type
	// (0: unlimited).
	RateLimit float64
	// MaxSessions caps a media type's concurrent sends when it says 0
	// (unlimited) (default 100).
	MaxSessions int
	// KeepAlerts bounds the alerts kept for alert.get (default 100,000).
	KeepAlerts int
	// InboxSize bounds the events waiting to be matched (default
	// 1,000,000); past it events are dropped and counted.
	InboxSize int
	// ScriptsDir holds script media types' programs (Zabbix's
	// AlertScriptsPath).
	ScriptsDir string
	// MaxBody bounds a webhook response body (default 1 MiB).
	MaxBody int64
	// JS runs webhook scripts (the server's jsvm.Pool); nil runs them in
	// this process (tests).
	JS jsvm.Runner
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// Location is the zone of {EVENT.DATE} and {EVENT.TIME}; default
	// local time.
	Location *time.Location
	Metrics  *selfmon.Registry
	Logger   *slog.Logger
}

// Engine matches events to actions, runs escalations and delivers
// alerts. See the package documentation.
type Engine struct {
	opts    Options
	log     *slog.Logger
	store   *logStore
	m       metrics
	throt   *selfmon.LogThrottle
	senders map[int]Sender

	// inbox holds what Notify was given and Run has not taken.
	inMu  sync.Mutex
	inbox []event.Batch
	inLen int
	wake  chan struct{}

	// escs is the working set of escalations (Run's goroutine only);
	// byEvent indexes them by problem.
	escs    map[uint64]*Escalation
	byEvent map[uint64][]uint64
	// running holds the escalations not Done: the only ones due and
	// nextDue look at, so that a storm's finished escalations (waiting
	// for recoveries) cost nothing per pass.
	running map[uint64]*Escalation
	// held are the escalations waiting for room in a queue
	// (backpressure.go).
	held heldState

	qMu    sync.Mutex
	queues map[uint64]*mediaQueue
	ctx    context.Context
	wg     sync.WaitGroup
}

type metrics struct {
	backlog, escalations                               *selfmon.Gauge
	sent, failed, retries, held, eventsDropped, queued *selfmon.Counter
	denied, repeats                                    *selfmon.Counter
}

// New opens the alert log and restores escalations and alerts.
func New(opts Options) (*Engine, error) {
	switch {
	case opts.Dir == "" && opts.Postgres == nil:
		return nil, errors.New("alert: Options.Dir is required")
	case opts.Config == nil || opts.Snapshot == nil || opts.Events == nil:
		return nil, errors.New("alert: Options.Config, Snapshot and Events are required")
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 10_000
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 100
	}
	if opts.KeepAlerts <= 0 {
		opts.KeepAlerts = defaultKeepAlerts
	}
	if opts.InboxSize <= 0 {
		opts.InboxSize = 1_000_000
	}
	if opts.Commander == nil {
		opts.Commander = &CommandRunner{}
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = 30 * time.Second
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 1 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	if opts.Suppressed == nil {
		opts.Suppressed = func(ev *event.Event) bool { return ev.Suppressed }
	}
	var st *logStore
	var err error
	if opts.Postgres != nil {
		st, err = openPGLog(*opts.Postgres, opts.Logger, opts.KeepAlerts)
	} else {
		st, err = openLog(wal.Options{Dir: opts.Dir, Sync: opts.Sync, SyncInterval: opts.SyncInterval, Logger: opts.Logger}, opts.KeepAlerts)
	}
	if err != nil {
		return nil, err
	}
	r := opts.Metrics
	e := &Engine{opts: opts, log: opts.Logger, store: st, wake: make(chan struct{}, 1),
		throt: selfmon.NewLogThrottle(opts.Logger, time.Minute),
		escs:  map[uint64]*Escalation{}, byEvent: map[uint64][]uint64{}, running: map[uint64]*Escalation{}, queues: map[uint64]*mediaQueue{},
		senders: map[int]Sender{
			catalog.MediaWebhook: &WebhookSender{MaxBody: opts.MaxBody, Logger: opts.Logger, JS: opts.JS},
			catalog.MediaScript:  &ScriptSender{Dir: opts.ScriptsDir},
			catalog.MediaEmail:   &EmailSender{Now: opts.Now},
		},
		m: metrics{
			backlog:       r.Gauge("peregrine_alert_backlog", "Alerts waiting to be sent or retried, all media types."),
			escalations:   r.Gauge("peregrine_alert_escalations", "Escalations in progress or waiting for a recovery."),
			queued:        r.Counter("peregrine_alert_queued_total", "Alerts made and queued for sending."),
			sent:          r.Counter("peregrine_alert_sent_total", "Alerts delivered."),
			failed:        r.Counter("peregrine_alert_failed_total", "Alerts that failed after their last attempt, or at once (no media, media type gone)."),
			retries:       r.Counter("peregrine_alert_retries_total", "Failed attempts that were retried."),
			held:          r.Counter("peregrine_alert_steps_waited_total", "Escalation steps that waited for room in a full media type queue (back-pressure); each runs once the queue drains."),
			eventsDropped: r.Counter("peregrine_alert_events_dropped_total", "Events not matched against actions because the engine's inbox was full."),
			repeats:       r.Counter("peregrine_alert_repeats_total", "Alerts found at start with an attempt started and its outcome unknown (a kill or a takeover), sent again and marked."),
			denied:        r.Counter("peregrine_alert_recipients_denied_total", "Messages not made because the user has no read permission on any host of the event's trigger."),
		},
	}
	e.held.reset()
	e.m.repeats.Add(uint64(st.repeated))
	for k, s := range opts.Senders {
		e.senders[k] = s
	}
	for _, x := range st.escalations() {
		cp := x
		e.addEsc(&cp)
	}
	return e, nil
}

// Notify hands the engine a committed batch of the event store: problem
// and OK events and acknowledge actions. It never blocks on sending:
// the batch is queued for Run, and dropped and counted if the inbox
// holds Options.InboxSize events already. It is the event store's
// commit hook (wired by the server).
//
// The batch is kept, not copied (a storm's commit of 100,000 events is
// about 17 MB): the caller must not change it, nor the slices it holds,
// after Notify. The event store's committers start a new batch for
// each commit; the engine only reads it.
func (e *Engine) Notify(b *event.Batch) {
	n := len(b.Events) + len(b.Acks)
	if n == 0 {
		return
	}
	cp := event.Batch{Events: b.Events, Acks: b.Acks}
	e.inMu.Lock()
	if e.inLen+n > e.opts.InboxSize {
		e.inMu.Unlock()
		e.m.eventsDropped.Add(uint64(n))
		e.throt.Warn("inbox", "alert: inbox full, events not matched against actions (raise alerts.inbox_size)", "events", n, "inbox", e.opts.InboxSize)
		return
	}
	e.inbox = append(e.inbox, cp)
	e.inLen += n
	e.inMu.Unlock()
	e.signal()
}

func (e *Engine) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Run matches events, runs escalations on time and delivers alerts
// until ctx ends; it then waits for sends in flight (bounded by their
// timeouts). At start it catches up with problems the event store
// holds beyond the log's watermark (a crash between an event's commit
// and its escalation's), and re-queues alerts not yet delivered.
func (e *Engine) Run(ctx context.Context) {
	e.qMu.Lock()
	e.ctx = ctx
	e.qMu.Unlock()
	e.catchUp()
	e.enqueue(e.store.Alerts(func(a *Alert) bool { return a.Status == StatusNew || a.Status == StatusNotSent }))
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		e.pass()
		next := e.nextDue()
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		if next > 0 {
			timer.Reset(max(time.Duration(next-e.opts.Now().UnixNano()), time.Millisecond))
		}
		select {
		case <-ctx.Done():
			e.wg.Wait()
			return
		case <-e.wake:
		case <-timer.C:
		}
	}
}

// Close closes the log. Run must have returned.
func (e *Engine) Close() error { return e.store.close() }

// catchUp queues the events after the watermark and the acknowledges
// from the ack mark on, as if notified: the event store committed them
// (the producer was told they are stored) but the engine may not have
// decided them before a crash. Events go first in one batch with the
// acks, so an ack's escalation exists when its update operations run.
func (e *Engine) catchUp() {
	w, ackNext := e.store.marks()
	var b event.Batch
	if w > 0 {
		b.Events = e.opts.Events.Events(func(ev *event.Event) bool { return ev.ID > w })
	}
	if ackNext == 0 {
		// A new log, or one written before acks were tracked: start from
		// the acks stored now, not from every retained one, and record
		// the mark at once so that an ack committed before the first
		// pass is replayed after a crash.
		next := uint64(1)
		if as := e.opts.Events.AcksAfter(0); len(as) > 0 {
			next = as[len(as)-1].ID + 1
		}
		if err := e.store.write([]record{{AckNext: next}}); err != nil {
			e.log.Error("alert: cannot record the acknowledge mark; acks of a crash before the next pass are not replayed", "err", err)
		}
	} else if as := e.opts.Events.AcksAfter(ackNext - 1); len(as) > 0 {
		// A pass's alerts and its mark are separate log frames: a torn
		// tail may keep an ack's alerts and lose the mark. An ack with
		// alerts already logged was decided; deciding it again would
		// send its update messages twice.
		done := map[uint64]bool{}
		for _, a := range e.store.Alerts(func(a *Alert) bool { return a.AckID >= ackNext }) {
			done[a.AckID] = true
		}
		for _, a := range as {
			if !done[a.ID] {
				b.Acks = append(b.Acks, a)
			}
		}
	}
	if len(b.Events)+len(b.Acks) > 0 {
		e.log.Info("alert: matching events and acknowledges committed before the last stop",
			"events", len(b.Events), "after_event", w, "acks", len(b.Acks), "from_ack", ackNext)
		e.Notify(&b)
	}
}

func (e *Engine) addEsc(x *Escalation) {
	e.escs[x.ID] = x
	if !x.Done {
		e.running[x.ID] = x
	}
	e.byEvent[x.EventID] = append(e.byEvent[x.EventID], x.ID)
	e.m.escalations.Set(int64(len(e.escs)))
}

func (e *Engine) delEsc(x *Escalation) {
	e.dropHeld(x)
	delete(e.escs, x.ID)
	delete(e.running, x.ID)
	ids := e.byEvent[x.EventID]
	for i, id := range ids {
		if id == x.ID {
			ids = append(ids[:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(e.byEvent, x.EventID)
	} else {
		e.byEvent[x.EventID] = ids
	}
	e.m.escalations.Set(int64(len(e.escs)))
}

// nextDue is the earliest NextCheck of a running escalation, or the
// next look at the waiting ones; 0 if none.
func (e *Engine) nextDue() int64 {
	n := e.heldWake()
	for _, x := range e.running {
		if n == 0 || x.NextCheck < n {
			n = x.NextCheck
		}
	}
	return n
}

// pass is one round of Run: take the inbox, start and stop escalations,
// run the steps that are due, persist, then queue the alerts.
func (e *Engine) pass() {
	e.inMu.Lock()
	in := e.inbox
	e.inbox, e.inLen = nil, 0
	e.inMu.Unlock()
	p := &passState{e: e, cfg: e.opts.Config(), snap: e.opts.Snapshot(), now: e.opts.Now()}
	p.actions = p.cfg.SortedActions() // once per pass, not per event
	for i := range in {
		for j := range in[i].Events {
			ev := &in[i].Events[j]
			p.watermark = max(p.watermark, ev.ID)
			if ev.NoAction {
				// A problem closed at once by event correlation ("close
				// new event") and its OK event: 6.0 runs no action.
				continue
			}
			if ev.Value == event.ValueProblem || ev.Source == event.SourceDiscovery {
				p.problem(ev)
			} else {
				p.recovery(ev, ev.Resolves)
			}
		}
		for j := range in[i].Acks {
			ack := &in[i].Acks[j]
			p.ackNext = max(p.ackNext, ack.ID+1)
			p.update(ack)
		}
	}
	p.due()
	if len(p.recs) == 0 && p.watermark == 0 && p.ackNext == 0 {
		return
	}
	if p.watermark > 0 || p.ackNext > 0 {
		p.recs = append(p.recs, record{Events: p.watermark, AckNext: p.ackNext})
	}
	if err := e.store.write(p.recs); err != nil {
		// Not applied: the escalations stay as they were in memory too
		// would be wrong (they were changed in place), so reload them
		// from the log, which is the truth, and try again next pass.
		e.log.Error("alert: cannot persist alerts and escalations; retrying at the next pass", "err", err)
		e.escs, e.byEvent, e.running = map[uint64]*Escalation{}, map[uint64][]uint64{}, map[uint64]*Escalation{}
		e.resetHeld()
		for _, x := range e.store.escalations() {
			cp := x
			e.addEsc(&cp)
		}
		// The batches go back first in the inbox, so the next pass
		// decides them again.
		e.inMu.Lock()
		for _, b := range in {
			e.inLen += len(b.Events) + len(b.Acks)
		}
		e.inbox = append(in, e.inbox...)
		e.inMu.Unlock()
		time.AfterFunc(time.Second, e.signal)
		return
	}
	as := make([]Alert, len(p.alerts))
	for i, a := range p.alerts {
		as[i] = *a
	}
	e.enqueue(as)
}

// passState collects the changes of one pass.
type passState struct {
	e       *Engine
	cfg     *catalog.AlertConfig
	snap    *catalog.Snapshot
	now     time.Time
	actions []*catalog.Action // enabled or not, by ID
	recs    []record
	alerts  []*Alert
	// reads caches Options.Rights per user for the pass; groupHosts the
	// hosts of each host group, made on the first command that needs it.
	reads      map[uint64]func([]uint64) bool
	groupHosts map[uint64][]*catalog.Host
	watermark  uint64
	ackNext    uint64 // the next ack ID after those of this pass, 0 if none
	// made counts this pass's alerts per queue (not queued until the
	// pass is logged); groupUsers and opMedia cache user groups'
	// members and "every medium" operations' media types for the pass.
	made       map[uint64]int
	groupUsers map[string][]uint64
	opMedia    map[string][]uint64
}

// group makes the records appended since r0 one log record: an
// escalation step's alerts and the escalation's next step, or a
// recovery's alerts and the escalation's end, are then durable
// together, and a crash between them can neither send a step twice nor
// lose its alerts.
func (p *passState) group(r0 int) {
	if len(p.recs)-r0 < 2 {
		return
	}
	g := record{Group: slices.Clone(p.recs[r0:])}
	p.recs = append(p.recs[:r0], g)
}

func (p *passState) putEsc(x *Escalation) {
	cp := *x
	p.recs = append(p.recs, record{Escalation: &cp})
}

// problem starts an escalation per matching enabled trigger action.
func (p *passState) problem(ev *event.Event) {
	if len(p.e.byEvent[ev.ID]) > 0 {
		return // already escalating (catch-up after a restart)
	}
	in := &matchInput{ev: ev, snap: p.snap, suppressed: p.e.opts.Suppressed(ev)}
	if p.snap != nil {
		in.trig = p.snap.Trigger(ev.ObjectID)
	}
	for _, a := range p.actions {
		if a.Status != 0 || a.EventSource != int(ev.Source) || !p.e.matchesSource(a, ev, in) {
			continue
		}
		_, id := p.e.store.ids(0, 1)
		x := &Escalation{ID: id, ActionID: a.ID, EventID: ev.ID, TriggerID: ev.ObjectID, Step: 1, NextCheck: p.now.UnixNano()}
		p.e.addEsc(x)
		p.putEsc(x)
	}
}

// recovery ends the escalations of the resolved problems with their
// actions' recovery operations.
func (p *passState) recovery(ok *event.Event, problems []uint64) {
	for _, pid := range problems {
		for _, xid := range append([]uint64(nil), p.e.byEvent[pid]...) {
			x := p.e.escs[xid]
			a := p.cfg.Actions[x.ActionID]
			r0, n0 := len(p.recs), len(p.alerts)
			if a != nil && a.Status == 0 {
				prob, _ := p.e.opts.Events.Event(pid)
				p.run(a, x, a.RecoveryOperations, 1, &prob, ok, nil)
			}
			p.e.delEsc(x)
			p.recs = append(p.recs, record{DeleteEsc: x.ID})
			p.group(r0)
			p.countMade(n0)
		}
	}
}

// update runs the update operations of the actions escalating the
// acknowledged problem.
func (p *passState) update(ack *event.Ack) {
	for _, xid := range p.e.byEvent[ack.EventID] {
		x := p.e.escs[xid]
		a := p.cfg.Actions[x.ActionID]
		if a == nil || a.Status != 0 || len(a.UpdateOperations) == 0 {
			continue
		}
		prob, ok := p.e.opts.Events.Event(ack.EventID)
		if !ok {
			continue
		}
		p.run(a, x, a.UpdateOperations, 2, &prob, nil, ack)
	}
}

// due runs the escalation steps whose time has come: first those that
// waited for room in a queue and now have it, then the others.
func (p *passState) due() {
	now := p.now.UnixNano()
	p.release(now)
	// In escalation ID order, not the map's: escalations due together
	// (one problem batch) make their alerts in the order their problems
	// came, every run alike.
	var due []*Escalation
	for _, x := range p.e.running {
		if x.NextCheck <= now {
			due = append(due, x)
		}
	}
	slices.SortFunc(due, func(a, b *Escalation) int { return cmp.Compare(a.ID, b.ID) })
	for _, x := range due {
		if p.e.running[x.ID] != x {
			continue // ended above, with another escalation of its problem
		}
		p.step(x, now)
	}
}

// step runs escalation x's step now, unless a queue it would add alerts
// to is full: then x waits for room (backpressure.go).
func (p *passState) step(x *Escalation, now int64) {
	a := p.cfg.Actions[x.ActionID]
	prob, ok := p.e.opts.Events.Event(x.EventID)
	switch {
	case !ok || a == nil || a.Status != 0:
		// The action was deleted or disabled, or the problem
		// retention-dropped: Zabbix cancels the escalation.
		p.e.log.Info("alert: escalation cancelled", "action", x.ActionID, "event", x.EventID, "action_exists", a != nil, "event_exists", ok)
		p.e.delEsc(x)
		p.recs = append(p.recs, record{DeleteEsc: x.ID})
		return
	case !prob.Open():
		// Resolved while the engine did not hear of it (a full inbox,
		// a crash): recover now.
		okEv, _ := p.e.opts.Events.Event(prob.REventID)
		p.recovery(&okEv, []uint64{prob.ID})
		return
	case a.PauseSuppressed == 1 && p.e.opts.Suppressed(&prob):
		x.NextCheck = now + int64(time.Minute) // re-check; maintenance may end
		p.putEsc(x)
		return
	}
	var ops []catalog.Operation
	var period time.Duration
	more := false
	for _, op := range a.Operations {
		from, to := max(op.StepFrom, 1), op.StepTo
		if from <= x.Step && (to == 0 || x.Step <= to) {
			// The step's duration counts every operation of the step,
			// run or not: a condition decides whether an operation
			// runs, not when the next step comes (as Zabbix).
			if opConditionsHold(&op, &prob) {
				ops = append(ops, op)
			}
			if d, err := ParsePeriod(op.Period); err == nil && d > 0 && (period == 0 || d < period) {
				period = d
			}
		}
		if to == 0 || to > x.Step || from > x.Step {
			more = true
		}
	}
	if period == 0 {
		period, _ = ParsePeriod(a.Period)
		if period <= 0 {
			period = time.Hour
		}
	}
	if qid, full := p.blocked(ops); full {
		p.e.hold(x, qid)
		return
	}
	r0, n0 := len(p.recs), len(p.alerts)
	p.run(a, x, ops, 0, &prob, nil, nil)
	if runsOnce(prob.Source) {
		// Auto-registration operations run once; nothing recovers.
		more = false
	}
	if more {
		x.Step++
		x.NextCheck = now + int64(period)
	} else {
		x.Done = true
		delete(p.e.running, x.ID)
	}
	if runsOnce(prob.Source) {
		p.e.delEsc(x)
		p.recs = append(p.recs, record{DeleteEsc: x.ID})
	} else {
		p.putEsc(x)
	}
	p.group(r0)
	p.countMade(n0)
}

// ParsePeriod parses Zabbix's time suffixes: "30", "30s", "1m", "1h",
// "1d", "1w".
func ParsePeriod(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	mult := time.Second
	switch s[len(s)-1] {
	case 's':
		s = s[:len(s)-1]
	case 'm':
		mult, s = time.Minute, s[:len(s)-1]
	case 'h':
		mult, s = time.Hour, s[:len(s)-1]
	case 'd':
		mult, s = 24*time.Hour, s[:len(s)-1]
	case 'w':
		mult, s = 7*24*time.Hour, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid time period %q", s)
	}
	return time.Duration(n) * mult, nil
}

// kind 0 problem, 1 recovery, 2 update: Zabbix's message template
// "recovery" value.
func (p *passState) run(a *catalog.Action, x *Escalation, ops []catalog.Operation, kind int, prob, ok *event.Event, ack *event.Ack) {
	for i := range ops {
		op := &ops[i]
		var targets []Recipient
		switch op.OperationType {
		case catalog.OpSendMessage:
			for _, u := range p.users(op) {
				targets = append(targets, Recipient{UserID: u, MediaTypeID: op.MediaTypeID})
			}
		case catalog.OpNotifyAllRecovery, catalog.OpNotifyAllUpdate:
			targets = x.Recipients
		case catalog.OpRemoteCommand:
			if runsOnce(prob.Source) {
				continue // stored; not run for registrations (no host to run on yet)
			}
			p.command(a, x, op, kind, prob, ok, ack)
			continue
		default:
			continue
		}
		for _, t := range targets {
			p.send(a, x, op, kind, t, prob, ok, ack)
		}
	}
}

// send makes the alerts of one operation for one user: one per matching
// medium, or one failed alert if the user has none.
func (p *passState) send(a *catalog.Action, x *Escalation, op *catalog.Operation, kind int, t Recipient, prob, ok *event.Event, ack *event.Ack) {
	if !p.permitted(t.UserID, prob) {
		p.e.m.denied.Inc()
		p.e.throt.Warn(fmt.Sprint("denied", a.ID, "/", t.UserID),
			"alert: user not messaged: no read permission on any host of the event's trigger (give one of the user's groups read on a host group of the host)",
			"userid", t.UserID, "actionid", a.ID, "eventid", prob.ID, "triggerid", prob.ObjectID)
		return
	}
	sev := prob.Severity
	var made bool
	have := false
	for _, md := range p.cfg.Medias[t.UserID] {
		if t.MediaTypeID != 0 && md.MediaTypeID != t.MediaTypeID {
			continue
		}
		mt := p.cfg.MediaTypes[md.MediaTypeID]
		if mt == nil || mt.Status != 0 {
			continue
		}
		have = true
		if md.Active != 0 || md.Severity&(1<<sev) == 0 || !inPeriod(md.Period, p.now.In(p.loc())) {
			continue
		}
		subject, message := op.Subject, op.Message
		// "Notify all involved" has a message of its own too (6.0's
		// opmessage on operation types 11 and 12). One with neither
		// subject nor message takes the template, as every such
		// operation did before the API kept their opmessage.
		notifyAll := op.OperationType != catalog.OpSendMessage
		if op.DefaultMsg == 1 || notifyAll && op.Subject == "" && op.Message == "" {
			subject, message = "", ""
			for _, tm := range mt.Templates {
				if tm.EventSource == a.EventSource && tm.Recovery == kind {
					subject, message = tm.Subject, tm.Message
				}
			}
		}
		p.alert(a, x, kind, t.UserID, mt, strings.Join(md.SendTo, ","), subject, message, prob, ok, ack, "")
		made = true
	}
	if !have {
		p.alert(a, x, kind, t.UserID, nil, "", "", "", prob, ok, ack, "No media defined for user.")
	}
	if made && kind == 0 {
		for _, r := range x.Recipients {
			if r.UserID == t.UserID && r.MediaTypeID == t.MediaTypeID {
				return
			}
		}
		x.Recipients = append(x.Recipients, t)
	}
}

// permitted reports whether user may be told about the problem: at
// least read permission on one host of its trigger (Zabbix's rule). A
// trigger no longer in the catalog has no host anybody can be shown;
// rights that cannot be read deny (and are logged), rather than leak an
// event to someone who may not see it.
func (p *passState) permitted(user uint64, prob *event.Event) bool {
	if p.e.opts.Rights == nil {
		return true
	}
	reads, ok := p.reads[user]
	if !ok {
		var err error
		reads, err = p.e.opts.Rights(user)
		if err != nil {
			p.e.throt.Warn(fmt.Sprint("rights", user), "alert: cannot read a user's permissions; the user is not messaged", "userid", user, "err", err)
			reads = nil
		}
		if p.reads == nil {
			p.reads = map[uint64]func([]uint64) bool{}
		}
		p.reads[user] = reads
	}
	if runsOnce(prob.Source) {
		return true // no host to have rights on, as in Zabbix
	}
	if reads == nil || p.snap == nil {
		return false
	}
	hosts := eventHosts(p.snap, prob)
	if hosts == nil {
		return false
	}
	for _, hid := range hosts {
		if h := p.snap.HostByID(hid); h != nil && reads(h.GroupIDs) {
			return true
		}
	}
	return false
}

func (p *passState) loc() *time.Location {
	if p.e.opts.Location != nil {
		return p.e.opts.Location
	}
	return time.Local
}

// alert makes one alert: expands subject, message and parameters, and
// records it (failed at once when failErr is set).
func (p *passState) alert(a *catalog.Action, x *Escalation, kind int, user uint64, mt *catalog.MediaType, sendto, subject, message string, prob, ok *event.Event, ack *event.Ack, failErr string) {
	md := &MacroData{Problem: prob, Recovery: ok, Ack: ack, Snap: p.snap, LastValue: p.e.opts.LastValue, Action: a, Loc: p.e.opts.Location}
	switch {
	case prob.Source == event.SourceAutoreg && p.e.opts.AutoregMacros != nil:
		md.Extra = p.e.opts.AutoregMacros(prob)
	case prob.Source == event.SourceDiscovery && p.e.opts.DiscoveryMacros != nil:
		md.Extra = p.e.opts.DiscoveryMacros(prob)
	case p.snap != nil && prob.Source == event.SourceInternal:
		md.Extra = internalMacros(p.snap, prob)
	case p.snap != nil:
		md.Trigger = p.snap.Trigger(prob.ObjectID)
	}
	id, _ := p.e.store.ids(1, 0)
	al := &Alert{ID: id, ActionID: a.ID, EventID: prob.ID, PEventID: prob.ID, TriggerID: prob.ObjectID, UserID: user,
		Clock: p.now.Unix(), SendTo: sendto, Subject: Expand(subject, md), Message: Expand(message, md), Status: StatusNew, EscStep: x.Step}
	if ok != nil {
		al.EventID = ok.ID
	}
	if ack != nil {
		al.AckID = ack.ID
	}
	if kind != 0 {
		al.EscStep = 0
	}
	if failErr != "" {
		al.Status, al.Error = StatusFailed, failErr
		p.e.m.failed.Inc()
		p.recs = append(p.recs, record{Alert: al})
		return
	}
	al.MediaTypeID = mt.ID
	md.SendTo, md.Subject, md.Message = al.SendTo, al.Subject, al.Message
	switch mt.Type {
	case catalog.MediaWebhook:
		for _, prm := range mt.Parameters {
			al.Params = append(al.Params, Param{Name: prm.Name, Value: Expand(prm.Value, md)})
		}
	case catalog.MediaScript:
		for _, line := range strings.Split(strings.TrimSuffix(mt.ExecParams, "\n"), "\n") {
			if mt.ExecParams != "" {
				al.Params = append(al.Params, Param{Value: Expand(line, md)})
			}
		}
	}
	p.recs = append(p.recs, record{Alert: al})
	p.alerts = append(p.alerts, al)
}

// command makes one command alert per target host of a remote command
// operation: the hosts named (0: the trigger's hosts) and the hosts of
// the host groups named, restricted to the script's host group. They are
// run by the commands queue (media type ID 0), off this goroutine.
func (p *passState) command(a *catalog.Action, x *Escalation, op *catalog.Operation, kind int, prob, ok *event.Event, ack *event.Ack) {
	fail := func(hostID uint64, msg string) {
		id, _ := p.e.store.ids(1, 0)
		al := &Alert{ID: id, ActionID: a.ID, EventID: prob.ID, PEventID: prob.ID, TriggerID: prob.ObjectID, Clock: p.now.Unix(),
			AlertType: AlertCommand, HostID: hostID, ScriptID: op.ScriptID, Status: StatusFailed, Error: msg, EscStep: x.Step}
		if kind != 0 {
			al.EscStep = 0
		}
		if ok != nil {
			al.EventID = ok.ID
		}
		p.e.m.failed.Inc()
		p.recs = append(p.recs, record{Alert: al})
	}
	sc := p.cfg.Scripts[op.ScriptID]
	if sc == nil || sc.Scope != catalog.ScopeAction {
		fail(0, "Script does not exist or is not for action operations.")
		return
	}
	if p.snap == nil {
		fail(0, "No hosts to run the command on.")
		return
	}
	var hosts []*catalog.Host
	seen := map[uint64]bool{}
	add := func(h *catalog.Host) {
		if h != nil && !seen[h.ID] {
			seen[h.ID] = true
			hosts = append(hosts, h)
		}
	}
	for _, hid := range op.CommandHosts {
		if hid == 0 {
			if t := p.snap.Trigger(prob.ObjectID); t != nil {
				for _, th := range t.HostIDs {
					add(p.snap.HostByID(th))
				}
			}
			continue
		}
		add(p.snap.HostByID(hid))
	}
	if len(op.CommandGroups) > 0 {
		if p.groupHosts == nil {
			// Once per pass, not per event: a storm of problems with a
			// group-wide command must not walk every host per problem.
			p.groupHosts = map[uint64][]*catalog.Host{}
			for _, h := range p.snap.Hosts() {
				for _, g := range h.GroupIDs {
					p.groupHosts[g] = append(p.groupHosts[g], h)
				}
			}
		}
		for _, g := range op.CommandGroups {
			for _, h := range p.groupHosts[g] {
				add(h)
			}
		}
	}
	if len(hosts) == 0 {
		fail(0, "No hosts to run the command on.")
		return
	}
	md := &MacroData{Problem: prob, Recovery: ok, Ack: ack, Snap: p.snap, LastValue: p.e.opts.LastValue, Action: a, Loc: p.e.opts.Location}
	md.Trigger = p.snap.Trigger(prob.ObjectID)
	for _, h := range hosts {
		// Host macros are the host the command runs on; the others the
		// event's.
		command := ScriptInput(sc, h, md)
		if sc.GroupID != 0 && !slices.Contains(h.GroupIDs, sc.GroupID) {
			fail(h.ID, fmt.Sprintf("Script %q is not allowed on host %q (not in its host group).", sc.Name, h.Host))
			continue
		}
		id, _ := p.e.store.ids(1, 0)
		al := &Alert{ID: id, ActionID: a.ID, EventID: prob.ID, PEventID: prob.ID, TriggerID: prob.ObjectID, Clock: p.now.Unix(),
			AlertType: AlertCommand, HostID: h.ID, ScriptID: sc.ID, Message: command, Status: StatusNew, EscStep: x.Step}
		if kind != 0 {
			al.EscStep = 0
		}
		if ok != nil {
			al.EventID = ok.ID
		}
		if ack != nil {
			al.AckID = ack.ID
		}
		p.recs = append(p.recs, record{Alert: al})
		p.alerts = append(p.alerts, al)
	}
}

// Alerts returns the kept alerts that keep accepts, ascending by ID.
func (e *Engine) Alerts(keep func(*Alert) bool) []Alert { return e.store.Alerts(keep) }

// Escalations returns the escalations as last persisted.
func (e *Engine) Escalations() []Escalation { return e.store.escalations() }
