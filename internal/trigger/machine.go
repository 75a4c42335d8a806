package trigger

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// Value is an evaluation result.
type Value uint8

// Evaluation results.
const (
	OK      Value = 0 // the expression is false
	Problem Value = 1 // the expression is true
	Unknown Value = 2 // the expression could not be evaluated (Error says why)
)

// Result is one evaluation of one trigger.
type Result struct {
	TriggerID uint64
	Value     Value
	// Recovered is the recovery expression's result, read only for
	// triggers in recovery mode "recovery expression" when Value is OK.
	Recovered bool
	// Error is why the result is Unknown.
	Error string
	Clock int64
	NS    int32
	// ItemValues are the values of the expression's items in order of
	// appearance, for {ITEM.VALUE} and {ITEM.VALUE<N>}.
	ItemValues []string
	// ItemIDs are those items (0: not found), in the same order, for
	// their value maps in operational data (opdata.go); may be nil.
	ItemIDs []uint64
}

// Store is the event store the machine writes to (*event.Store).
type Store interface {
	Commit(b *event.Batch) error
	OpenProblemsOf(trigger uint64) []event.Event
	Runtimes() map[uint64]event.Runtime
	Event(id uint64) (event.Event, bool)
}

// Options configures New.
type Options struct {
	Store    Store    // required
	Resolver Resolver // default: MacroResolver{} (no user macros)
	// Suppress, if set, says whether a problem of t with tags, made at
	// the given time, is covered by a maintenance in effect; the
	// problem is then made suppressed (maintenance.Tracker.Covers).
	Suppress func(snap *catalog.Snapshot, t *catalog.Trigger, tags []event.Tag, at time.Time) bool
	// OnSoft, if set, is told when a trigger enters a soft state (its
	// first PROBLEM evaluation of fewer than MaxCheckAttempts) and when
	// it leaves it (HARD problem, OK, or the trigger gone), so that its
	// items are re-checked at their retry interval meanwhile. It is
	// called with the machine's lock held and must not block.
	OnSoft func(t *catalog.Trigger, soft bool)
	Logger *slog.Logger
}

// Machine is the problem state machine. See the package documentation.
type Machine struct {
	store    Store
	res      Resolver
	suppress func(snap *catalog.Snapshot, t *catalog.Trigger, tags []event.Tag, at time.Time) bool
	onSoft   func(t *catalog.Trigger, soft bool)
	log      *slog.Logger

	// mu serialises Process, Acknowledge and Reconcile; it is held
	// while their commit is made durable.
	mu sync.Mutex
	// rts holds the triggers that ever changed (absent: OK, normal).
	// Writers hold mu and rtMu; Runtime reads under rtMu only, so the
	// API never waits for an fsync of the event store (trigger.get over
	// 100,000 triggers during an incident storm).
	rtMu sync.RWMutex
	rts  map[uint64]event.Runtime
	// attempts counts the consecutive PROBLEM evaluations of triggers in
	// a soft state (MaxCheckAttempts > 1, value OK); absent: none. Kept
	// in memory only: after a restart counting starts over, as a Nagios
	// without retained state does. Writers hold mu and rtMu.
	attempts map[uint64]uint8
}

// New makes a machine whose trigger runtimes are those stored.
func New(opts Options) (*Machine, error) {
	if opts.Store == nil {
		return nil, errors.New("trigger: Options.Store is required")
	}
	if opts.Resolver == nil {
		opts.Resolver = MacroResolver{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Machine{store: opts.Store, res: opts.Resolver, suppress: opts.Suppress, onSoft: opts.OnSoft, log: opts.Logger,
		rts: opts.Store.Runtimes(), attempts: map[uint64]uint8{}}, nil
}

// SoftState is a trigger's Nagios-style state: Soft while it counts
// PROBLEM evaluations towards MaxCheckAttempts (Attempt of them so far),
// hard otherwise (Attempt 0).
type SoftState struct {
	Soft    bool
	Attempt uint8
}

// Soft returns a trigger's soft state.
func (m *Machine) Soft(id uint64) SoftState {
	m.rtMu.RLock()
	defer m.rtMu.RUnlock()
	a := m.attempts[id]
	return SoftState{Soft: a > 0, Attempt: a}
}

// setAttempt records a trigger's soft attempts and tells OnSoft when it
// enters or leaves the soft state. m.mu is held.
func (m *Machine) setAttempt(t *catalog.Trigger, a uint8) {
	m.rtMu.Lock()
	prev := m.attempts[t.ID]
	if a == 0 {
		delete(m.attempts, t.ID)
	} else {
		m.attempts[t.ID] = a
	}
	m.rtMu.Unlock()
	if m.onSoft != nil && (prev == 0) != (a == 0) {
		m.onSoft(t, a > 0)
	}
}

// Runtime returns a trigger's runtime: value, state, error, last change.
// A trigger that never changed is OK and normal.
func (m *Machine) Runtime(id uint64) event.Runtime {
	m.rtMu.RLock()
	defer m.rtMu.RUnlock()
	if r, ok := m.rts[id]; ok {
		return r
	}
	return event.Runtime{TriggerID: id}
}

// Outcome counts what one Process call did.
type Outcome struct {
	Problems   int // problem events made
	Resolved   int // OK events made
	Unchanged  int // results that changed nothing
	Skipped    int // results of unknown or disabled triggers
	Suppressed int // PROBLEM results ignored because a master is in PROBLEM
	Soft       int // PROBLEM results counted as soft attempts (no event yet)
}

// pending is the state of one Process batch: the events and runtimes
// decided but not yet committed.
type pending struct {
	batch   event.Batch
	rts     map[uint64]event.Runtime
	touched map[uint64]bool // triggers with uncommitted events
}

// Process applies evaluation results, in order, and commits the events
// and runtime changes they cause; it returns once they are durable. On
// a commit error nothing of the failed commit is applied, and the
// results may be processed again.
func (m *Machine) Process(snap *catalog.Snapshot, results []Result) (Outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out Outcome
	p := &pending{rts: map[uint64]event.Runtime{}, touched: map[uint64]bool{}}
	for i := range results {
		r := &results[i]
		if p.touched[r.TriggerID] {
			// A second result for a trigger in one batch: its first
			// events need their IDs before an OK event can name them.
			if err := m.flush(p); err != nil {
				return out, err
			}
		}
		m.step(snap, r, p, &out)
	}
	return out, m.flush(p)
}

// rt is trigger id's runtime as the batch sees it.
func (m *Machine) rt(p *pending, id uint64) event.Runtime {
	if r, ok := p.rts[id]; ok {
		return r
	}
	if r, ok := m.rts[id]; ok {
		return r
	}
	return event.Runtime{TriggerID: id}
}

// flush commits p and applies its runtimes. m.mu is held.
func (m *Machine) flush(p *pending) error {
	if len(p.batch.Events)+len(p.rts) > 0 {
		for _, r := range p.rts {
			p.batch.Runtimes = append(p.batch.Runtimes, r)
		}
		slices.SortFunc(p.batch.Runtimes, func(a, b event.Runtime) int { return cmp.Compare(a.TriggerID, b.TriggerID) })
		if err := m.store.Commit(&p.batch); err != nil {
			return fmt.Errorf("trigger: cannot store events: %w", err)
		}
	}
	m.rtMu.Lock()
	for id, r := range p.rts {
		m.rts[id] = r
	}
	m.rtMu.Unlock()
	p.batch = event.Batch{}
	clear(p.rts)
	clear(p.touched)
	return nil
}

// setRT records trigger's new runtime in the batch.
func (p *pending) setRT(r event.Runtime) { p.rts[r.TriggerID] = r }

// step applies one result. m.mu is held.
func (m *Machine) step(snap *catalog.Snapshot, r *Result, p *pending, out *Outcome) {
	t := snap.Trigger(r.TriggerID)
	if t == nil || !t.Enabled {
		out.Skipped++
		return
	}
	cur := m.rt(p, t.ID)
	next := cur
	if r.Value == Unknown {
		next.State, next.Error = 1, r.Error
		if next != cur {
			p.setRT(next)
		} else {
			out.Unchanged++
		}
		return
	}
	next.State, next.Error = 0, ""
	if r.Value == OK && m.attempts[t.ID] > 0 {
		m.setAttempt(t, 0) // a soft problem that cleared: no event, as in Nagios
	}
	switch {
	case r.Value == Problem:
		if m.masterInProblem(snap, p, t, 0) {
			out.Suppressed++
			break
		}
		if t.MaxCheckAttempts <= 1 && m.attempts[t.ID] > 0 {
			m.setAttempt(t, 0) // the option was turned off while soft
		}
		if cur.Value == event.ValueOK && t.MaxCheckAttempts > 1 {
			// Nagios's soft state: the problem becomes HARD (an event)
			// only at the MaxCheckAttempts-th consecutive PROBLEM.
			a := m.attempts[t.ID] + 1
			if a < t.MaxCheckAttempts {
				m.setAttempt(t, a)
				out.Soft++
				break
			}
			m.setAttempt(t, 0)
		}
		if cur.Value == event.ValueOK || t.Multiple {
			p.batch.Events = append(p.batch.Events, m.problemEvent(snap, t, r))
			p.touched[t.ID] = true
			out.Problems++
			next.Value, next.LastChange, next.LastChangeNS = event.ValueProblem, r.Clock, r.NS
		}
	case cur.Value == event.ValueProblem:
		switch t.RecoveryMode {
		case catalog.RecoverRecoveryExpression:
			if !r.Recovered {
				break
			}
			fallthrough
		case catalog.RecoverExpression:
			if ids := m.openIDs(t.ID); len(ids) > 0 {
				p.batch.Events = append(p.batch.Events, m.okEvent(snap, t, r.Clock, r.NS, ids, 0))
				p.touched[t.ID] = true
				out.Resolved++
			}
			next.Value, next.LastChange, next.LastChangeNS = event.ValueOK, r.Clock, r.NS
		case catalog.RecoverNone:
			// The value follows the expression so that the next
			// PROBLEM makes an event; the problems stay open until
			// closed by hand.
			next.Value, next.LastChange, next.LastChangeNS = event.ValueOK, r.Clock, r.NS
		}
	}
	if next != cur {
		p.setRT(next)
	} else {
		out.Unchanged++
	}
}

// masterInProblem reports whether a trigger t depends on, directly or up
// the chain, is in PROBLEM.
func (m *Machine) masterInProblem(snap *catalog.Snapshot, p *pending, t *catalog.Trigger, depth int) bool {
	if depth > 32 { // the catalog refuses deeper chains
		return false
	}
	for _, id := range t.Dependencies {
		mt := snap.Trigger(id)
		if mt == nil || !mt.Enabled {
			continue
		}
		if m.rt(p, id).Value == event.ValueProblem || m.masterInProblem(snap, p, mt, depth+1) {
			return true
		}
	}
	return false
}

// openIDs are the IDs of trigger's open problems.
func (m *Machine) openIDs(trigger uint64) []uint64 {
	open := m.store.OpenProblemsOf(trigger)
	ids := make([]uint64, len(open))
	for i := range open {
		ids[i] = open[i].ID
	}
	return ids
}

func (m *Machine) problemEvent(snap *catalog.Snapshot, t *catalog.Trigger, r *Result) event.Event {
	mc := &MacroContext{Trigger: t, Snapshot: snap, Result: r}
	e := event.Event{
		Source: event.SourceTrigger, Object: event.ObjectTrigger, ObjectID: t.ID,
		Clock: r.Clock, NS: r.NS, Value: event.ValueProblem, Severity: t.Priority,
		Name: m.res.Expand(t.Description, mc), Opdata: m.opdata(t, mc),
		Tags: m.tags(snap, t, mc),
	}
	if m.suppress != nil {
		e.Suppressed = m.suppress(snap, t, e.Tags, time.Unix(r.Clock, int64(r.NS)))
	}
	return e
}

// okEvent resolves problems ids of t; user is who closed them by hand.
func (m *Machine) okEvent(snap *catalog.Snapshot, t *catalog.Trigger, clock int64, ns int32, ids []uint64, user uint64) event.Event {
	mc := &MacroContext{Trigger: t, Snapshot: snap}
	return event.Event{
		Source: event.SourceTrigger, Object: event.ObjectTrigger, ObjectID: t.ID,
		Clock: clock, NS: ns, Value: event.ValueOK,
		Name: m.res.Expand(t.Description, mc), Tags: m.tags(snap, t, mc),
		Resolves: ids, UserID: user,
	}
}

// tags are t's tags followed by its hosts' tags, values expanded,
// without duplicates.
func (m *Machine) tags(snap *catalog.Snapshot, t *catalog.Trigger, mc *MacroContext) []event.Tag {
	var out []event.Tag
	add := func(tg catalog.Tag) {
		e := event.Tag{Tag: tg.Tag, Value: m.res.Expand(tg.Value, mc)}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	for _, tg := range t.Tags {
		add(tg)
	}
	for _, hid := range t.HostIDs {
		if h := snap.HostByID(hid); h != nil {
			for _, tg := range h.Tags {
				add(tg)
			}
		}
	}
	return out
}

// OpenProblemsStore is what Reconcile needs besides Store: every open
// problem (*event.Store).
type OpenProblemsStore interface {
	OpenProblems() []event.Event
}

// Reconcile resolves the open problems of triggers that are no longer
// in snap (deleted, or gone with their items or hosts), as Zabbix drops
// a deleted trigger's problems: one OK event per trigger, without a
// user. It returns the number of problems resolved. It costs O(open
// problems); the server calls it after each catalog change.
func (m *Machine) Reconcile(snap *catalog.Snapshot) (int, error) {
	ops, ok := m.store.(OpenProblemsStore)
	if !ok {
		return 0, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rtMu.Lock()
	for id := range m.attempts {
		if snap.Trigger(id) == nil {
			delete(m.attempts, id) // its items left the retry interval with it
		}
	}
	m.rtMu.Unlock()
	gone := map[uint64][]uint64{}
	var order []uint64
	var clock int64
	for _, e := range ops.OpenProblems() {
		if snap.Trigger(e.ObjectID) != nil {
			continue
		}
		if _, seen := gone[e.ObjectID]; !seen {
			order = append(order, e.ObjectID)
		}
		gone[e.ObjectID] = append(gone[e.ObjectID], e.ID)
		clock = max(clock, e.Clock)
	}
	if len(order) == 0 {
		return 0, nil
	}
	var b event.Batch
	n := 0
	for _, tid := range order {
		b.Events = append(b.Events, event.Event{
			Source: event.SourceTrigger, Object: event.ObjectTrigger, ObjectID: tid,
			Clock: clock, Value: event.ValueOK, Resolves: gone[tid],
		})
		b.Runtimes = append(b.Runtimes, event.Runtime{TriggerID: tid})
		n += len(gone[tid])
	}
	if err := m.store.Commit(&b); err != nil {
		return 0, fmt.Errorf("trigger: cannot resolve the problems of deleted triggers: %w", err)
	}
	m.rtMu.Lock()
	for _, tid := range order {
		delete(m.rts, tid)
	}
	m.rtMu.Unlock()
	m.log.Info("resolved the problems of deleted triggers", "triggers", len(order), "problems", n)
	return n, nil
}
