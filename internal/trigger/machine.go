package trigger

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
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
	// Correlations, if set, gives the notification configuration whose
	// event correlation rules (catalog.AlertConfig.Correlations) apply
	// to new problems (correlate.go); read at each Process, so an edit
	// counts from the next batch. The Store must then also be a
	// CorrelationStore.
	Correlations func() *catalog.AlertConfig
	Logger       *slog.Logger
}

// Machine is the problem state machine. See the package documentation.
type Machine struct {
	store    Store
	res      Resolver
	suppress func(snap *catalog.Snapshot, t *catalog.Trigger, tags []event.Tag, at time.Time) bool
	onSoft   func(t *catalog.Trigger, soft bool)
	corrCfg  func() *catalog.AlertConfig
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
	// exp caches macro expansions per trigger for one snapshot; guarded
	// by mu.
	exp expCache
	// order caches the items of triggers' problem expressions in order
	// of appearance for one snapshot (tags.go); guarded by mu.
	order itemOrder
	// corr holds the correlation rules compiled for the configuration
	// and snapshot last seen (correlate.go); guarded by mu.
	corr *corrRules
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
	return &Machine{store: opts.Store, res: opts.Resolver, suppress: opts.Suppress, onSoft: opts.OnSoft, corrCfg: opts.Correlations, log: opts.Logger,
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

// Settled reports whether an OK result for trigger id would change
// nothing: the trigger is OK, its state normal, with no soft attempts
// counted. The evaluator drops such results instead of sending them to
// Process (most evaluations under load), which saves their step and a
// lookup of the trigger. Nothing in between can make it unsettled: only
// the trigger's own evaluation shard sends its results, and the other
// writers (a manual close, Reconcile) only turn PROBLEM into OK.
func (m *Machine) Settled(id uint64) bool {
	m.rtMu.RLock()
	defer m.rtMu.RUnlock()
	if len(m.attempts) > 0 && m.attempts[id] > 0 {
		return false
	}
	r, ok := m.rts[id]
	return !ok || (r.Value == event.ValueOK && r.State == 0 && r.Error == "")
}

// Outcome counts what one Process call did.
type Outcome struct {
	Problems   int // problem events made
	Resolved   int // OK events made
	Unchanged  int // results that changed nothing
	Skipped    int // results of unknown or disabled triggers
	Suppressed int // results ignored because a master is in PROBLEM
	Soft       int // PROBLEM results counted as soft attempts (no event yet)
}

// pending is the state of one Process batch: the events and runtimes
// decided but not yet committed. A storm's batch holds 100,000 of each,
// so the runtimes are kept in the batch itself, indexed by trigger
// (first change first), instead of in a map copied and sorted at the
// commit.
type pending struct {
	batch event.Batch
	rtAt  map[uint64]int // trigger → index in batch.Runtimes
	// touched holds the triggers with uncommitted events.
	touched map[uint64]bool
	ids     []uint64 // slab the OK events' Resolves are cut from
	// corr is the batch's event correlation, nil without rules.
	corr *corrState
}

// newPending starts an empty batch. Nothing is sized by the number of
// results: under load most results change nothing (the evaluator does
// not even send those, see Settled), and sizing the events and runtimes
// by the results allocated tens of MB per pass for a few events; a storm
// grows them by appending instead.
func newPending() *pending {
	return &pending{rtAt: make(map[uint64]int), touched: make(map[uint64]bool)}
}

// Process applies evaluation results, in order, and commits the events
// and runtime changes they cause; it returns once they are durable. On
// a commit error nothing of the failed commit is applied, and the
// results may be processed again.
func (m *Machine) Process(snap *catalog.Snapshot, results []Result) (Outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out Outcome
	p := newPending()
	p.corr = m.corrFor(snap)
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
	if i, ok := p.rtAt[id]; ok {
		return p.batch.Runtimes[i]
	}
	if r, ok := m.rts[id]; ok {
		return r
	}
	return event.Runtime{TriggerID: id}
}

// flush commits p and applies its runtimes. m.mu is held.
func (m *Machine) flush(p *pending) error {
	if p.corr != nil {
		// Correlation's OK events come after the problems of the batch
		// (their Cause), those closing new problems first, as 6.0
		// numbers them.
		p.batch.Events = append(append(p.batch.Events, p.corr.closeNew...), p.corr.closeOld...)
		p.corr.reset()
	}
	if len(p.batch.Events)+len(p.batch.Runtimes) > 0 {
		if err := m.store.Commit(&p.batch); err != nil {
			return fmt.Errorf("trigger: cannot store events: %w", err)
		}
	}
	m.rtMu.Lock()
	for _, r := range p.batch.Runtimes {
		m.rts[r.TriggerID] = r
	}
	m.rtMu.Unlock()
	// The committed slices are kept by the store's observers (the alert
	// engine queues the batch without copying it): start new ones
	// rather than reuse them.
	p.batch = event.Batch{}
	clear(p.rtAt)
	clear(p.touched)
	return nil
}

// setRT records trigger's new runtime in the batch.
func (p *pending) setRT(r event.Runtime) {
	if i, ok := p.rtAt[r.TriggerID]; ok {
		p.batch.Runtimes[i] = r
		return
	}
	p.rtAt[r.TriggerID] = len(p.batch.Runtimes)
	p.batch.Runtimes = append(p.batch.Runtimes, r)
}

// step applies one result. m.mu is held.
func (m *Machine) step(snap *catalog.Snapshot, r *Result, p *pending, out *Outcome) {
	t := snap.Trigger(r.TriggerID)
	if t == nil || !t.Enabled {
		out.Skipped++
		return
	}
	if len(t.Dependencies) > 0 && m.masterInProblem(snap, p, t, 0) {
		// Zabbix 6.0 drops the whole result of a trigger whose master
		// (up the chain) is in PROBLEM: neither a problem nor a
		// recovery, nor a change to UNKNOWN (recorded on the peer).
		out.Suppressed++
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
	made := -1 // the index of the problem event made, if any
	if r.Value == OK && len(m.attempts) > 0 && m.attempts[t.ID] > 0 {
		m.setAttempt(t, 0) // a soft problem that cleared: no event, as in Nagios
	}
	switch {
	case r.Value == Problem:
		if t.MaxCheckAttempts <= 1 && len(m.attempts) > 0 && m.attempts[t.ID] > 0 {
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
			made = len(p.batch.Events)
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
			m.recover(snap, t, r, p, out, &next)
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
	if made >= 0 && p.corr != nil {
		m.correlate(snap, t, p, made)
	}
}

// correlateByTag is catalog.Trigger.CorrelationMode's "OK event closes:
// all problems if tag values match" (Zabbix's correlation_mode 1).
const correlateByTag = 1

// recover applies a recovery of t (a PROBLEM trigger whose expression,
// or recovery expression, says OK): an OK event resolves its open
// problems, and the trigger becomes OK. Under "OK event closes: all
// problems if tag values match" (CorrelationMode 1) only the problems
// with a tag named CorrelationTag whose value a tag of that name on the
// OK event has are resolved (the OK event's tags are expanded with this
// evaluation's item values, as a problem's are), as Zabbix 6.0 does
// (recorded from 6.0.14: the correlation_mode conformance case,
// corrmode_test.go): an empty value matches an empty one, a problem or
// an OK event without the tag matches nothing; when nothing matches no
// OK event is made and nothing changes, and while problems stay open
// the trigger stays PROBLEM with its last change at the OK event's
// time. m.mu is held.
func (m *Machine) recover(snap *catalog.Snapshot, t *catalog.Trigger, r *Result, p *pending, out *Outcome, next *event.Runtime) {
	var ok event.Event
	ids := m.openIDs(t.ID, p)
	left := false // problems of t that stay open
	if len(ids) > 0 {
		ok = m.okEvent(snap, t, r, ids)
		if t.CorrelationMode == correlateByTag {
			ok.Resolves = m.tagMatches(t, ok.Tags, ids)
			if len(ok.Resolves) == 0 {
				return // no event, the trigger stays as it is
			}
			left = len(ok.Resolves) < len(ids)
		}
		if p.corr != nil {
			for _, id := range ok.Resolves {
				p.corr.resolving[id] = true
			}
		}
		p.batch.Events = append(p.batch.Events, ok)
		p.touched[t.ID] = true
		out.Resolved++
	}
	if !left {
		next.Value = event.ValueOK
	}
	next.LastChange, next.LastChangeNS = r.Clock, r.NS
}

// tagMatches returns those of t's open problems ids (a slice the caller
// owns) that an OK event with tags closes under correlation by tag: the
// problems with a tag named t.CorrelationTag whose value is that of a
// tag of the name in tags. It costs a copy of t's open problems, paid
// only by the triggers with correlation by tag.
func (m *Machine) tagMatches(t *catalog.Trigger, tags []event.Tag, ids []uint64) []uint64 {
	name := t.CorrelationTag
	var want []string
	for _, tg := range tags {
		if tg.Tag == name {
			want = append(want, tg.Value)
		}
	}
	if len(want) == 0 {
		return nil
	}
	open := m.store.OpenProblemsOf(t.ID)
	out := ids[:0]
	for _, id := range ids {
		i := slices.IndexFunc(open, func(e event.Event) bool { return e.ID == id })
		if i >= 0 && slices.ContainsFunc(open[i].Tags, func(tg event.Tag) bool {
			return tg.Tag == name && slices.Contains(want, tg.Value)
		}) {
			out = append(out, id)
		}
	}
	return out
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

// OpenIDsStore is implemented by stores (*event.Store) that can list a
// trigger's open problem IDs without copying the problems: a storm's
// recovery resolves 100,000 of them in one batch.
type OpenIDsStore interface {
	OpenIDsOf(trigger uint64, dst []uint64) []uint64
}

// openIDs are the IDs of trigger's open problems, in a slice of their
// own (the OK event keeps it).
func (m *Machine) openIDs(trigger uint64, p *pending) []uint64 {
	if s, ok := m.store.(OpenIDsStore); ok {
		// Appended to the batch's slab of IDs: one allocation per few
		// thousand OK events rather than one each.
		if cap(p.ids)-len(p.ids) < 16 {
			p.ids = make([]uint64, 0, 4096)
		}
		start := len(p.ids)
		out := s.OpenIDsOf(trigger, p.ids[start:start])
		if len(out) == 0 {
			return nil
		}
		if len(out) > cap(p.ids)-start {
			return out // outgrew the slab: a slice of its own
		}
		p.ids = p.ids[:start+len(out)]
		return out[:len(out):len(out)]
	}
	open := m.store.OpenProblemsOf(trigger)
	ids := make([]uint64, len(open))
	for i := range open {
		ids[i] = open[i].ID
	}
	return ids
}

func (m *Machine) problemEvent(snap *catalog.Snapshot, t *catalog.Trigger, r *Result) event.Event {
	e := event.Event{
		Source: event.SourceTrigger, Object: event.ObjectTrigger, ObjectID: t.ID,
		Clock: r.Clock, NS: r.NS, Value: event.ValueProblem, Severity: t.Priority,
	}
	m.texts(snap, t, r, &e, true)
	m.setSuppressed(snap, t, r, &e)
	return e
}

// texts sets e's name, tags and, with opdata, operational data: t's
// expanded with the evaluation r, as Zabbix 6.0 makes a problem event's
// and a recovery's OK event's (an OK event has no operational data).
func (m *Machine) texts(snap *catalog.Snapshot, t *catalog.Trigger, r *Result, e *event.Event, opdata bool) {
	if x := m.cached(snap, t); x != nil {
		e.Name, e.Tags = x.problem.name, x.problem.tags
		if opdata {
			e.Opdata = x.problem.opdata
		}
		if x.problem.nameConst && (x.problem.opdataConst || !opdata) && x.problem.tagsConst {
			// The usual case in a storm: no macro context is needed, and
			// making one is an allocation per event.
			return
		}
		mc := &MacroContext{Trigger: t, Snapshot: snap, Result: r}
		if !x.problem.nameConst {
			e.Name = m.name(t, mc)
		}
		if opdata && !x.problem.opdataConst {
			e.Opdata = m.opdata(t, mc)
		}
		if !x.problem.tagsConst {
			e.Tags = m.tags(snap, t, mc)
		}
		return
	}
	mc := &MacroContext{Trigger: t, Snapshot: snap, Result: r}
	e.Name, e.Tags = m.name(t, mc), m.tags(snap, t, mc)
	if opdata {
		e.Opdata = m.opdata(t, mc)
	}
}

// setSuppressed sets e.Suppressed: whether a maintenance covers the new
// problem.
func (m *Machine) setSuppressed(snap *catalog.Snapshot, t *catalog.Trigger, r *Result, e *event.Event) {
	if m.suppress != nil {
		e.Suppressed = m.suppress(snap, t, e.Tags, time.Unix(r.Clock, int64(r.NS)))
	}
}

// okEvent is the OK event of a recovery of t by the evaluation r that
// resolves problems ids: named and tagged as a problem of r would be
// (recorded from 6.0.14: {ITEM.VALUE} is the value at the recovery).
func (m *Machine) okEvent(snap *catalog.Snapshot, t *catalog.Trigger, r *Result, ids []uint64) event.Event {
	e := event.Event{
		Source: event.SourceTrigger, Object: event.ObjectTrigger, ObjectID: t.ID,
		Clock: r.Clock, NS: r.NS, Value: event.ValueOK, Resolves: ids,
	}
	m.texts(snap, t, r, &e, false)
	return e
}

// expCache holds, for the snapshot the machine last made events in, the
// expansions of the triggers' texts that do not depend on the
// evaluation: a template's "High CPU on {HOST.NAME}" and its
// "host:{HOST.HOST}" tag are expanded once per trigger, not once per
// event of a storm. Only triggers with a macro in their own texts are
// cached (the others cost little to expand), and only for MacroResolver,
// whose results depend on the trigger and the snapshot alone, apart from
// {ITEM.*} macros. It holds at most one entry per trigger with macros
// (100,000 such triggers: about 10 MB) and is dropped with its snapshot.
type expCache struct {
	snap *catalog.Snapshot
	m    map[uint64]*expansion
}

// expansion is one trigger's cached texts.
type expansion struct {
	// problem holds the problem event's texts; a text with an {ITEM.*}
	// macro is not constant and is expanded per event.
	problem struct {
		name, opdata                      string
		tags                              []event.Tag
		nameConst, opdataConst, tagsConst bool
	}
	// okName is the name of the OK events made without an evaluation
	// (a manual close, correlation rules): {ITEM.VALUE} is *UNKNOWN* in
	// it, so it is always constant. A recovery's OK event has the
	// problem's texts expanded with its own evaluation.
	okName string
}

// cached returns t's cached expansions, made at first use in snap; nil
// when t's own texts have no macro (hasMacro) or the resolver is not
// MacroResolver.
// m.mu is held.
func (m *Machine) cached(snap *catalog.Snapshot, t *catalog.Trigger) *expansion {
	if _, ok := m.res.(MacroResolver); !ok || !hasMacro(t) {
		return nil
	}
	if m.exp.snap != snap {
		// A catalog change may rename a host or change a macro: start
		// over with the new snapshot.
		m.exp = expCache{snap: snap, m: map[uint64]*expansion{}}
	}
	if x := m.exp.m[t.ID]; x != nil {
		return x
	}
	x := &expansion{}
	mc := &MacroContext{Trigger: t, Snapshot: snap}
	x.okName = m.name(t, mc)
	p := &x.problem
	p.nameConst, p.opdataConst, p.tagsConst = !itemMacro(eventName(t)), !itemMacro(t.Opdata), !tagItemMacro(t)
	if p.nameConst {
		p.name = x.okName
	}
	if p.opdataConst {
		p.opdata = m.res.Expand(t.Opdata, mc)
	}
	if p.tagsConst {
		p.tags = m.tags(snap, t, mc)
	}
	m.exp.m[t.ID] = x
	return x
}

// eventName is the text t's events are named from: its event name if
// set, else its name (as Zabbix 6.0 does).
func eventName(t *catalog.Trigger) string {
	if t.EventName != "" {
		return t.EventName
	}
	return t.Description
}

// hasMacro reports whether t's own texts (name, operational data, tags)
// have a macro. Its items' and hosts' tags are not looked at: that would
// cost lookups per event of every trigger, and a trigger whose only
// macros are in those tags is expanded per event.
func hasMacro(t *catalog.Trigger) bool {
	if strings.IndexByte(eventName(t), '{') >= 0 || strings.IndexByte(t.Opdata, '{') >= 0 {
		return true
	}
	for _, tg := range t.Tags {
		if strings.IndexByte(tg.Tag, '{') >= 0 || strings.IndexByte(tg.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// OpenTriggersStore is what Reconcile needs besides Store: the
// triggers with open problems (*event.Store).
type OpenTriggersStore interface {
	OpenTriggers(dst []uint64) []uint64
}

// Reconcile resolves the open problems of triggers that are no longer
// in snap (deleted, or gone with their items or hosts), as Zabbix drops
// a deleted trigger's problems: one OK event per trigger, without a
// user. It returns the number of problems resolved. It costs a lookup
// per trigger with open problems and copies only the problems of the
// triggers gone (the server calls it after each catalog change, also in
// the middle of a storm of 100,000 open problems).
func (m *Machine) Reconcile(snap *catalog.Snapshot) (int, error) {
	ots, ok := m.store.(OpenTriggersStore)
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
	for _, tid := range ots.OpenTriggers(nil) {
		if snap.Trigger(tid) != nil {
			continue
		}
		for _, e := range m.store.OpenProblemsOf(tid) {
			gone[tid] = append(gone[tid], e.ID)
			clock = max(clock, e.Clock)
		}
		if len(gone[tid]) > 0 {
			order = append(order, tid)
		}
	}
	// In the order of their oldest open problem, as the events were
	// made before the store was asked by trigger.
	slices.SortFunc(order, func(a, b uint64) int { return cmp.Compare(gone[a][0], gone[b][0]) })
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
