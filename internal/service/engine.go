package service

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// Events is what the engine needs of the event store (*event.Store): the
// open problems, at start and to resynchronise after its queue
// overflowed.
type Events interface {
	OpenProblems() []event.Event
}

// Options configures Open.
type Options struct {
	// Path is the SQLite file (data_dir/services.db).
	Path string
	// Postgres, when set, keeps the services in PostgreSQL instead
	// (state.store: postgres; sqlitedb.OpenPG): schema
	// peregrine_services, every write transaction fenced by the HA
	// lease. Path then only names the store in messages. Open it on
	// the active node only.
	Postgres *sqlitedb.PG
	Events   Events // required
	// Retention is how long status changes are kept (Zabbix's services
	// data storage period, hk_services); default 365 days.
	Retention time.Duration
	// MaxQueue bounds the problem changes waiting to be applied
	// (default 1,000,000); past it the queue is dropped and the state
	// rebuilt from the event store's open problems.
	MaxQueue int
	// Now is the clock; default time.Now.
	Now     func() time.Time
	Logger  *slog.Logger
	Metrics *selfmon.Registry
}

// Engine keeps the services and SLAs, and the services' statuses
// computed from the open problems. See the package documentation.
type Engine struct {
	opts Options
	db   *db
	cfg  atomic.Pointer[Config]
	// follower: opened with OpenFollower (an HA standby); it writes
	// nothing (follow.go).
	follower bool

	// mu serialises edits and the application of problem changes, and
	// guards st.
	mu sync.Mutex
	st state

	qmu      sync.Mutex
	queue    []change
	overflow bool
	signal   chan struct{}

	alarms   *selfmon.Counter
	writeErr *selfmon.Counter
	resyncs  *selfmon.Counter
}

// state is the evaluation state.
type state struct {
	problems map[uint64]*problem        // open problems by event ID
	byLeaf   map[uint64]map[uint64]bool // service without children → matching event IDs
	status   map[uint64]int             // service → status
	matched  map[uint64][]uint64        // event → the services it matches
	// byTag indexes the services without children by one of their
	// problem tags, which every problem they match has: an "equals"
	// tag by name and value (byTag), else the first tag by name
	// (byName).
	byTag, byName map[string][]uint64
}

// change is one problem change waiting to be applied.
type change struct {
	kind     uint8 // changeProblem, changeResolve, changeSeverity
	p        *problem
	id       uint64
	clock    int64
	severity int
}

const (
	changeProblem = iota
	changeResolve
	changeSeverity
)

// Open opens the database, reads the configuration and rebuilds the
// statuses from the open problems; a status that differs from the one
// stored is recorded as a change now.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Path == "" && opts.Postgres != nil {
		opts.Path = "PostgreSQL"
	}
	if opts.Events == nil || opts.Path == "" {
		return nil, errors.New("service: Options.Path and Options.Events are required")
	}
	if opts.Retention <= 0 {
		opts.Retention = 365 * 24 * time.Hour
	}
	if opts.MaxQueue <= 0 {
		opts.MaxQueue = 1_000_000
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
	d, err := openDB(ctx, opts.Path, opts.Postgres)
	if err != nil {
		return nil, err
	}
	cfg, status, err := d.load(ctx)
	if err != nil {
		d.close()
		return nil, err
	}
	e := &Engine{opts: opts, db: d, signal: make(chan struct{}, 1),
		alarms:   opts.Metrics.Counter("peregrine_service_status_changes_total", "Service status changes recorded."),
		writeErr: opts.Metrics.Counter("peregrine_service_write_errors_total", "Service status changes that could not be stored."),
		resyncs:  opts.Metrics.Counter("peregrine_service_resyncs_total", "Rebuilds of the service state from the open problems after the queue overflowed."),
	}
	e.cfg.Store(cfg)
	e.st.status = status
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.resyncLocked(ctx); err != nil {
		d.close()
		return nil, err
	}
	return e, nil
}

// Close closes the database.
func (e *Engine) Close() error { return e.db.close() }

// Now is the engine's clock (Options.Now).
func (e *Engine) Now() time.Time { return e.opts.Now() }

// Config returns the current configuration; shared and read-only.
func (e *Engine) Config() *Config { return e.cfg.Load() }

// resyncLocked rebuilds the problems from the event store and
// recalculates every status.
func (e *Engine) resyncLocked(ctx context.Context) error {
	e.st.problems = map[uint64]*problem{}
	for _, ev := range e.opts.Events.OpenProblems() {
		if isTriggerProblem(&ev) {
			e.st.problems[ev.ID] = newProblem(&ev)
		}
	}
	return e.recalcLocked(ctx, nil, nil)
}

// isTriggerProblem reports whether ev is a problem of a trigger, the
// only problems services match.
func isTriggerProblem(ev *event.Event) bool {
	return ev.Source == event.SourceTrigger && ev.Object == event.ObjectTrigger
}

func newProblem(ev *event.Event) *problem {
	return &problem{id: ev.ID, severity: int(ev.Severity), clock: ev.Clock, name: ev.Name, tags: ev.Tags}
}

// rematchLocked matches every open problem to the services without
// children.
func (e *Engine) rematchLocked(cfg *Config) {
	e.st.byLeaf = map[uint64]map[uint64]bool{}
	e.st.matched = map[uint64][]uint64{}
	e.st.byTag, e.st.byName = map[string][]uint64{}, map[string][]uint64{}
	for i := range cfg.Services {
		s := &cfg.Services[i]
		if len(s.Children) > 0 || len(s.ProblemTags) == 0 {
			continue
		}
		if j := slices.IndexFunc(s.ProblemTags, func(t ProblemTag) bool { return t.Operator == TagEquals }); j >= 0 {
			k := s.ProblemTags[j].Tag + "\x00" + s.ProblemTags[j].Value
			e.st.byTag[k] = append(e.st.byTag[k], s.ID)
		} else {
			e.st.byName[s.ProblemTags[0].Tag] = append(e.st.byName[s.ProblemTags[0].Tag], s.ID)
		}
	}
	for _, p := range e.st.problems {
		for _, id := range e.candidates(p) {
			if matches(cfg.Service(id).ProblemTags, p.tags) {
				e.match(id, p.id)
			}
		}
	}
}

// candidates are the services without children problem p may match,
// ascending, each once.
func (e *Engine) candidates(p *problem) []uint64 {
	var out []uint64
	for i, t := range p.tags {
		out = append(out, e.st.byTag[t.Tag+"\x00"+t.Value]...)
		if !slices.ContainsFunc(p.tags[:i], func(o event.Tag) bool { return o.Tag == t.Tag }) {
			out = append(out, e.st.byName[t.Tag]...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (e *Engine) match(svc, ev uint64) {
	m := e.st.byLeaf[svc]
	if m == nil {
		m = map[uint64]bool{}
		e.st.byLeaf[svc] = m
	}
	m[ev] = true
	e.st.matched[ev] = append(e.st.matched[ev], svc)
}

// problemsOf returns the open problems of service id (without children).
func (e *Engine) problemsOf(id uint64) []*problem {
	m := e.st.byLeaf[id]
	out := make([]*problem, 0, len(m))
	for ev := range m {
		if p := e.st.problems[ev]; p != nil {
			out = append(out, p)
		}
	}
	return out
}

func (e *Engine) statusOf(id uint64) int {
	if st, ok := e.st.status[id]; ok {
		return st
	}
	return StatusOK
}

// recalcLocked recalculates every status with the configuration (next,
// when an edit changed it, with old the configuration before) and
// stores the changes, at the clock of their problems or now.
func (e *Engine) recalcLocked(ctx context.Context, old, next *Config) error {
	cfg := e.cfg.Load()
	if next != nil {
		cfg = next
	}
	e.rematchLocked(cfg)
	now := e.opts.Now().Unix()
	changed := map[uint64]int{}
	var alarms []Alarm
	set := func(id uint64, st int, clock int64) {
		if e.statusOf(id) == st {
			return
		}
		e.st.status[id] = st
		changed[id] = st
		alarms = append(alarms, Alarm{ServiceID: id, Clock: clock, Value: st})
	}
	for i := range cfg.Services {
		if _, ok := e.st.status[cfg.Services[i].ID]; !ok {
			e.st.status[cfg.Services[i].ID] = StatusOK // as Zabbix creates them
		}
	}
	// Children before parents; a service reached twice is evaluated once.
	clockOf := map[uint64]int64{}
	done := map[uint64]bool{}
	var visit func(s *Service, depth int)
	visit = func(s *Service, depth int) {
		if done[s.ID] || depth > len(cfg.Services) {
			return
		}
		done[s.ID] = true
		if len(s.Children) == 0 {
			st, clock := leafStatus(e.problemsOf(s.ID), now)
			set(s.ID, st, clock)
			clockOf[s.ID] = clock
			return
		}
		for _, id := range s.Children {
			if c := cfg.Service(id); c != nil {
				visit(c, depth+1)
			}
		}
		st, top := parentStatus(cfg, s, e.statusOf)
		clock := now
		if top != nil {
			clock = clockOf[top.ID]
		}
		set(s.ID, st, clock)
		clockOf[s.ID] = clock
	}
	for i := range cfg.Services {
		visit(&cfg.Services[i], 0)
	}
	for id := range e.st.status {
		if cfg.Service(id) == nil {
			delete(e.st.status, id)
		}
	}
	if err := e.db.write(ctx, old, next, changed, alarms); err != nil {
		return err
	}
	e.alarms.Add(uint64(len(alarms)))
	return nil
}

// Edit changes the configuration: fn gets a copy to change (Config's
// Add and Delete methods, or its slices directly, then Reindex is done
// for it). When fn returns nil the copy is stored, published and every
// status recalculated, all before Edit returns; fn's error is returned
// as is and changes nothing.
func (e *Engine) Edit(ctx context.Context, fn func(*Config) error) error {
	if e.follower {
		return errFollower
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.cfg.Load()
	next := old.Clone()
	if err := fn(next); err != nil {
		return err
	}
	next.Reindex()
	saved := maps.Clone(e.st.status)
	if err := e.recalcLocked(ctx, old, next); err != nil {
		e.st.status = saved
		e.rematchLocked(old)
		return err
	}
	e.cfg.Store(next)
	return nil
}

// Notify takes the problems, resolutions and severity changes of a
// committed event batch; they are applied by Run (or Sync). It never
// blocks on the database.
func (e *Engine) Notify(b *event.Batch) {
	if e.follower {
		return // a follower reads the active node's statuses (follow.go)
	}
	var cs []change
	for i := range b.Events {
		ev := &b.Events[i]
		if ev.Source != event.SourceTrigger || ev.Object != event.ObjectTrigger {
			continue
		}
		switch ev.Value {
		case event.ValueProblem:
			if ev.REventID == 0 {
				cs = append(cs, change{kind: changeProblem, p: newProblem(ev)})
			}
		case event.ValueOK:
			for _, id := range ev.Resolves {
				cs = append(cs, change{kind: changeResolve, id: id, clock: ev.Clock})
			}
		}
	}
	for _, a := range b.Acks {
		if a.Action&event.ActionSeverity != 0 {
			cs = append(cs, change{kind: changeSeverity, id: a.EventID, severity: int(a.NewSeverity)})
		}
	}
	if len(cs) == 0 {
		return
	}
	e.qmu.Lock()
	if len(e.queue)+len(cs) > e.opts.MaxQueue {
		e.queue, e.overflow = nil, true
	} else {
		e.queue = append(e.queue, cs...)
	}
	e.qmu.Unlock()
	select {
	case e.signal <- struct{}{}:
	default:
	}
}

// Sync applies the changes waiting; Run calls it when notified.
func (e *Engine) Sync(ctx context.Context) error {
	e.qmu.Lock()
	cs, overflow := e.queue, e.overflow
	e.queue, e.overflow = nil, false
	e.qmu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if overflow {
		e.resyncs.Inc()
		e.opts.Logger.Warn("service status queue overflowed; rebuilding the statuses from the open problems", "max_queue", e.opts.MaxQueue)
		return e.resyncLocked(ctx)
	}
	if len(cs) == 0 {
		return nil
	}
	return e.applyLocked(ctx, cs)
}

// applyLocked applies problem changes one by one, as Zabbix processes
// problem events: after each, the services without children it touches
// are recalculated (in ID order) and their changes propagate to their
// parents. All the status changes are stored in one transaction.
func (e *Engine) applyLocked(ctx context.Context, cs []change) error {
	cfg := e.cfg.Load()
	changed := map[uint64]int{}
	var alarms []Alarm
	record := func(id uint64, st int, clock int64) {
		e.st.status[id] = st
		changed[id] = st
		alarms = append(alarms, Alarm{ServiceID: id, Clock: clock, Value: st})
	}
	var up func(id uint64, clock int64, depth int)
	up = func(id uint64, clock int64, depth int) {
		if depth > len(cfg.Services) {
			return
		}
		for _, pid := range cfg.Parents(id) {
			st, _ := parentStatus(cfg, cfg.Service(pid), e.statusOf)
			if st != e.statusOf(pid) {
				record(pid, st, clock)
				up(pid, clock, depth+1)
			}
		}
	}
	for _, c := range cs {
		var touched []uint64
		okClock := c.clock
		switch c.kind {
		case changeProblem:
			if _, ok := e.st.problems[c.p.id]; ok {
				continue
			}
			e.st.problems[c.p.id] = c.p
			for _, id := range e.candidates(c.p) {
				if matches(cfg.Service(id).ProblemTags, c.p.tags) {
					e.match(id, c.p.id)
					touched = append(touched, id)
				}
			}
			okClock = c.p.clock
		case changeResolve:
			if _, ok := e.st.problems[c.id]; !ok {
				continue
			}
			delete(e.st.problems, c.id)
			touched = e.st.matched[c.id]
			for _, s := range touched {
				delete(e.st.byLeaf[s], c.id)
			}
			delete(e.st.matched, c.id)
		case changeSeverity:
			p := e.st.problems[c.id]
			if p == nil {
				continue
			}
			p.severity = c.severity
			touched, okClock = e.st.matched[c.id], p.clock
		}
		touched = slices.Clone(touched)
		slices.Sort(touched)
		for _, id := range touched {
			if cfg.Service(id) == nil {
				continue
			}
			st, clock := leafStatus(e.problemsOf(id), okClock)
			if st != e.statusOf(id) {
				record(id, st, clock)
				up(id, clock, 0)
			}
		}
	}
	if len(alarms) == 0 {
		return nil
	}
	if err := e.db.write(ctx, nil, nil, changed, alarms); err != nil {
		e.writeErr.Add(uint64(len(alarms)))
		return err
	}
	e.alarms.Add(uint64(len(alarms)))
	return nil
}

// Run applies problem changes as they are notified, and deletes status
// changes older than Options.Retention daily, until ctx ends.
func (e *Engine) Run(ctx context.Context) {
	if e.follower {
		<-ctx.Done() // the active node applies changes and retention
		return
	}
	e.expire(ctx)
	daily := time.NewTicker(24 * time.Hour)
	defer daily.Stop()
	for {
		select {
		case <-ctx.Done():
			e.Sync(context.Background())
			return
		case <-e.signal:
			if err := e.Sync(ctx); err != nil {
				e.opts.Logger.Error("cannot store service status changes", "err", err)
			}
		case <-daily.C:
			e.expire(ctx)
		}
	}
}

func (e *Engine) expire(ctx context.Context) {
	n, err := e.db.expire(ctx, e.opts.Now().Add(-e.opts.Retention).Unix())
	switch {
	case err != nil:
		e.opts.Logger.Error("cannot delete old service status changes", "err", err)
	case n > 0:
		e.opts.Logger.Info("deleted old service status changes", "rows", n)
	}
}

// Statuses returns the status of every service.
func (e *Engine) Statuses() map[uint64]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.st.status)
}

// ProblemEvent is an open problem behind a service's status.
type ProblemEvent struct {
	EventID  uint64
	Severity int
	Name     string
}

// ProblemEvents returns, for each service, the open problems behind its
// status (none when it is OK), ascending by event ID.
func (e *Engine) ProblemEvents(ids []uint64) map[uint64][]ProblemEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	cfg := e.cfg.Load()
	out := make(map[uint64][]ProblemEvent, len(ids))
	for _, id := range ids {
		if e.statusOf(id) == StatusOK {
			out[id] = nil
			continue
		}
		found := map[uint64]*problem{}
		problemEvents(cfg, id, nil, e.statusOf, e.problemsOf, found, 0)
		for _, p := range sortProblems(found) {
			out[id] = append(out[id], ProblemEvent{EventID: p.id, Severity: p.severity, Name: p.name})
		}
	}
	return out
}

// Timelines returns each service's status over each period.
func (e *Engine) Timelines(ctx context.Context, ids []uint64, periods []Period) (map[uint64][]Timeline, error) {
	out := make(map[uint64][]Timeline, len(ids))
	for _, id := range ids {
		t, err := e.db.timelines(ctx, id, periods)
		if err != nil {
			return nil, err
		}
		out[id] = t
	}
	return out, nil
}
