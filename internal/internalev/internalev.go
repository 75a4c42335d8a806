package internalev

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// EventStore takes the internal events; the server's wrapper of
// *event.Store also hands them to the alert engine. Events returns the
// stored events kept (to find the internal problems still open at
// start).
type EventStore interface {
	Commit(b *event.Batch) error
	Events(keep func(*event.Event) bool) []event.Event
}

// Options configures New.
type Options struct {
	Events EventStore
	// QueueSize bounds the state changes waiting to be stored (default
	// 100,000); past it changes are dropped and counted.
	QueueSize int
	Metrics   *selfmon.Registry
	Logger    *slog.Logger
	Now       func() time.Time
}

type key struct {
	object uint8
	id     uint64
}

// change is one state change waiting to be stored.
type change struct {
	key
	bad     bool
	err     string
	clock   time.Time
	resolve uint64 // of a recovery: the problem event, 0 if being stored
}

// Producer turns state changes into internal events: an object becoming
// not supported (items, LLD rules) or unknown (triggers) is a problem
// event of source 3, its return to normal the OK event that resolves
// it. Only changes make events: a second "not supported" of an object
// whose problem is open makes none.
type Producer struct {
	opts Options
	log  *slog.Logger

	mu   sync.Mutex
	open map[key]uint64 // object → its open problem event (0: being stored)
	// late are the problems a recovery was queued for while they were
	// being stored: their IDs, for that recovery.
	late    map[key]uint64
	pending []change
	wake    chan struct{}

	made, dropped, failed *selfmon.Counter
}

// New makes a producer and reads the internal problems still open from
// the event store.
func New(opts Options) (*Producer, error) {
	if opts.Events == nil {
		return nil, errors.New("internalev: Options.Events is required")
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 100_000
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := opts.Metrics
	p := &Producer{opts: opts, log: opts.Logger, open: map[key]uint64{}, late: map[key]uint64{}, wake: make(chan struct{}, 1),
		made:    r.Counter("peregrine_internal_events_total", "Internal events (source 3) stored: objects becoming not supported or unknown, and normal again."),
		dropped: r.Counter("peregrine_internal_events_dropped_total", "State changes not made into internal events because the queue was full."),
		failed:  r.Counter("peregrine_internal_events_failed_total", "Internal events lost because the event store refused them."),
	}
	for _, ev := range opts.Events.Events(func(e *event.Event) bool {
		return e.Source == event.SourceInternal && e.Value == event.ValueProblem && e.REventID == 0
	}) {
		p.open[key{ev.Object, ev.ObjectID}] = ev.ID
	}
	return p, nil
}

// ItemState records an item's state: not supported with its error, or
// normal. Cheap when nothing changes.
func (p *Producer) ItemState(item uint64, notSupported bool, err string) {
	p.set(key{event.ObjectItem, item}, notSupported, err)
}

// TriggerState records a trigger's state: unknown with its error, or
// normal.
func (p *Producer) TriggerState(trigger uint64, unknown bool, err string) {
	p.set(key{event.ObjectTrigger, trigger}, unknown, err)
}

// LLDRuleState records a low-level discovery rule's state: not
// supported with its error, or normal. The server's item state hook
// calls it for items that are discovery rules.
func (p *Producer) LLDRuleState(rule uint64, notSupported bool, err string) {
	p.set(key{event.ObjectLLDRule, rule}, notSupported, err)
}

func (p *Producer) set(k key, bad bool, err string) {
	p.mu.Lock()
	_, isOpen := p.open[k]
	if bad == isOpen {
		p.mu.Unlock()
		return
	}
	if !bad && p.open[k] == 0 {
		// Not supported and normal again before the problem was
		// stored: neither is.
		for i := len(p.pending) - 1; i >= 0; i-- {
			if p.pending[i].key == k && p.pending[i].bad {
				p.pending = append(p.pending[:i], p.pending[i+1:]...)
				delete(p.open, k)
				p.mu.Unlock()
				return
			}
		}
	}
	if len(p.pending) >= p.opts.QueueSize {
		p.mu.Unlock()
		p.dropped.Inc()
		return
	}
	c := change{key: k, bad: bad, err: err, clock: p.opts.Now()}
	if bad {
		p.open[k] = 0
	} else {
		c.resolve = p.open[k]
		delete(p.open, k)
	}
	p.pending = append(p.pending, c)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run stores the changes until ctx ends.
func (p *Producer) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		p.flush()
	}
}

// flush stores the pending changes as one batch.
func (p *Producer) flush() {
	p.mu.Lock()
	cs := p.pending
	p.pending = nil
	var b event.Batch
	for _, c := range cs {
		ev := event.Event{Source: event.SourceInternal, Object: c.object, ObjectID: c.id, Clock: c.clock.Unix(),
			NS: int32(c.clock.Nanosecond()), Name: c.err}
		if c.bad {
			ev.Value = event.ValueProblem
		} else {
			// Resolves the open problem; one that was being stored when
			// the recovery came has its ID in late now.
			id := c.resolve
			if id == 0 {
				id = p.late[c.key]
				delete(p.late, c.key)
			}
			if id != 0 {
				ev.Resolves = []uint64{id}
			}
		}
		b.Events = append(b.Events, ev)
	}
	p.mu.Unlock()
	if len(b.Events) == 0 {
		return
	}
	if err := p.opts.Events.Commit(&b); err != nil {
		p.failed.Add(uint64(len(b.Events)))
		// Lost: the next "not supported" makes its problem again.
		p.mu.Lock()
		for _, c := range cs {
			if id, ok := p.open[c.key]; c.bad && ok && id == 0 {
				delete(p.open, c.key)
			}
		}
		p.mu.Unlock()
		p.log.Error("internalev: cannot store internal events", "events", len(b.Events), "err", err)
		return
	}
	p.made.Add(uint64(len(b.Events)))
	p.mu.Lock()
	for i, c := range cs {
		if !c.bad {
			continue
		}
		if id, ok := p.open[c.key]; ok && id == 0 {
			p.open[c.key] = b.Events[i].ID
		} else if !ok {
			p.late[c.key] = b.Events[i].ID // a recovery is queued
		}
	}
	p.mu.Unlock()
}
