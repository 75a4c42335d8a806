package lld

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// Options configures an Engine.
type Options struct {
	Catalog    *catalog.Catalog
	ItemStates *itemstate.Registry // rule states; nil: a private one
	Logger     *slog.Logger
	// Now is the clock (tests move it to pass a lifetime); time.Now by
	// default.
	Now func() time.Time
	// MaxRules bounds the rules applied in one Edit (default 1000); the
	// rest wait for the next.
	MaxRules int
}

// Engine applies discovery rules' values to the catalog.
type Engine struct {
	opts Options

	mu      sync.Mutex
	pending map[uint64]pendingValue
	errs    map[uint64]string // rules' errors of the last apply ("" none)
	wake    chan struct{}
	applied uint64 // results applied (tests and metrics)
	edits   uint64 // Edits that changed the catalog
}

type pendingValue struct {
	value string
	clock int64
}

// New returns an engine; Run applies what Commit queues.
func New(o Options) *Engine {
	if o.ItemStates == nil {
		o.ItemStates = itemstate.New()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxRules <= 0 {
		o.MaxRules = 1000
	}
	return &Engine{opts: o, pending: map[uint64]pendingValue{}, errs: map[uint64]string{}, wake: make(chan struct{}, 1)}
}

// Commit is the pipeline's commit hook for discovery rules: the values
// of rules among samples are queued (the newest per rule), the others
// ignored. It never blocks on the catalog.
func (e *Engine) Commit(_ int, samples []history.Sample) {
	snap := e.opts.Catalog.Snapshot()
	queued := false
	for i := range samples {
		s := &samples[i]
		it := snap.Item(s.ItemID)
		if it == nil || it.Ext().LLD == nil || !it.Enabled {
			continue
		}
		if !queued {
			e.mu.Lock()
			queued = true
		}
		if p, ok := e.pending[s.ItemID]; !ok || p.clock <= s.Clock {
			e.pending[s.ItemID] = pendingValue{value: strings.Clone(s.S), clock: s.Clock}
		}
	}
	if queued {
		e.mu.Unlock()
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// Run applies queued values until ctx ends.
func (e *Engine) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-e.wake:
		}
		for e.ApplyPending(ctx) > 0 && ctx.Err() == nil {
		}
	}
}

// ApplyPending applies up to MaxRules queued values in one Edit and
// returns how many it took.
func (e *Engine) ApplyPending(ctx context.Context) int {
	e.mu.Lock()
	batch := make(map[uint64]pendingValue, min(len(e.pending), e.opts.MaxRules))
	for id, v := range e.pending {
		if len(batch) == e.opts.MaxRules {
			break
		}
		batch[id] = v
		delete(e.pending, id)
	}
	e.mu.Unlock()
	if len(batch) == 0 {
		return 0
	}
	e.Apply(ctx, batch2list(batch))
	return len(batch)
}

// Value is one value of a rule, for Apply.
type Value struct {
	RuleID uint64
	Value  string
}

func batch2list(b map[uint64]pendingValue) []Value {
	out := make([]Value, 0, len(b))
	for id, v := range b {
		out = append(out, Value{RuleID: id, Value: v.value})
	}
	return out
}

// Apply applies values of rules in one catalog Edit. Values that parse
// badly set their rule's error and change nothing.
func (e *Engine) Apply(ctx context.Context, values []Value) {
	snap := e.opts.Catalog.Snapshot()
	now := e.opts.Now()
	type work struct {
		rule *catalog.Item
		res  catalog.DiscoveryResult
	}
	var todo []work
	for _, v := range values {
		rule := snap.Item(v.RuleID)
		if rule == nil || rule.Ext().LLD == nil {
			continue
		}
		sc := snap.UserMacros(rule.HostID)
		exp := func(s string) string {
			if sc == nil || !strings.Contains(s, "{$") {
				return s
			}
			return sc.Expand(s)
		}
		rows, err := ParseRows(v.Value, rule.Ext().LLD.MacroPaths)
		if err != nil {
			e.setError(rule.ID, true, err.Error(), now)
			continue
		}
		lifetime, err := delay.ParseSeconds(exp(rule.Ext().LLD.Lifetime))
		if err != nil {
			e.setError(rule.ID, true, "Invalid lifetime: "+err.Error(), now)
			continue
		}
		items, trigs := Expand(snap, rule, rows, exp)
		hosts := ExpandHosts(snap, rule, rows, exp) // hosts.go
		todo = append(todo, work{rule: rule, res: catalog.DiscoveryResult{RuleID: rule.ID, Now: now.Unix(), Lifetime: lifetime, Items: items, Triggers: trigs, Hosts: hosts,
			Graphs: ExpandGraphs(snap, rule, rows, exp, items)}})
	}
	if len(todo) == 0 {
		return
	}
	msgs := make([][]string, len(todo))
	r, err := e.opts.Catalog.Edit(ctx, func(ed *catalog.Edit) error {
		for i := range todo {
			m, err := ed.ApplyDiscovery(&todo[i].res)
			if err != nil {
				return err
			}
			msgs[i] = m
		}
		return nil
	})
	if err != nil {
		e.opts.Logger.Error("cannot apply discovery results", "rules", len(todo), "err", err)
		return
	}
	e.mu.Lock()
	e.applied += uint64(len(todo))
	if r != (catalog.EditResult{}) {
		e.edits++
	}
	e.mu.Unlock()
	for i, w := range todo {
		text := ""
		for _, m := range msgs[i] {
			text += m + "\n"
		}
		e.setError(w.rule.ID, false, text, now)
	}
}

// setError records a rule's state: not supported with the error, or
// supported with the messages of objects it could not make ("" none).
func (e *Engine) setError(rule uint64, notSupported bool, msg string, now time.Time) {
	e.mu.Lock()
	if msg == "" {
		delete(e.errs, rule)
	} else {
		e.errs[rule] = msg
	}
	e.mu.Unlock()
	if notSupported {
		e.opts.ItemStates.SetItemState(rule, itemstate.Item{NotSupported: true, Error: msg, Clock: now.Unix()})
	} else {
		e.opts.ItemStates.SetItemState(rule, itemstate.Item{Clock: now.Unix()})
	}
}

// RuleError returns the error a rule's last value left ("" none): the
// not-supported reason, or the objects it could not make, as Zabbix
// 6.0's discoveryrule.get error shows them.
func (e *Engine) RuleError(rule uint64) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.errs[rule]
}

// Stats returns the results applied and the Edits that changed the
// catalog.
func (e *Engine) Stats() (applied, edits uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.applied, e.edits
}
