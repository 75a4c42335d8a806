package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// ErrStopped is returned by Submit once the pipeline is stopping.
var ErrStopped = errors.New("pipeline is stopped")

// Options configures a Pipeline.
type Options struct {
	// Shards is the number of shards; 0 means runtime.GOMAXPROCS(0).
	Shards int
	// QueueValues bounds the values queued in one shard.
	QueueValues int
	// MaxBatch is the most values passed to one Store.Write call.
	MaxBatch int
	// Store receives every value. Required.
	Store history.Writer
	// Admit, when set, is asked once per Submit before anything is
	// queued: a non-nil error refuses the whole Submit with it, nothing
	// written (the store cannot take values now: low disk space, a
	// failed log). It MUST be cheap and safe for concurrent use.
	Admit func() error
	// OnCommit, when set, is called after each batch the store accepted;
	// see CommitFunc.
	OnCommit CommitFunc
	// Metrics receives the pipeline's counters; nil disables them.
	Metrics *selfmon.Registry
	Logger  *slog.Logger
	// Catalog returns the current catalog snapshot: the shards look up
	// the items of Raw samples (steps, value type, dependents) in it,
	// once per batch. Required if Raw samples are submitted; without it
	// they are dropped with an error logged.
	Catalog func() *catalog.Snapshot
	// ItemStates receives the item states that preprocessing sets (not
	// supported with the step's message, supported again). Default: a
	// private one.
	ItemStates *itemstate.Registry
	// StatePath is the file that keeps the preprocessing steps' per-item
	// state (previous values for change and discard steps) across
	// restarts; "" keeps it in memory only. See SaveState.
	StatePath string
	// StateStore, when set, keeps that state instead of StatePath
	// (state.store: postgres: a pglog.Blob, every save fenced by the HA
	// lease).
	StateStore StateStore
	// StateInterval is how often Run saves the state besides at stop;
	// default one minute, so a crash loses at most that much of it.
	StateInterval time.Duration
	// JS runs the JavaScript preprocessing steps: the server's pool of
	// worker processes (jsvm.Pool). nil runs them in this process
	// (jsvm.Local: tests and tools).
	JS jsvm.Runner
	// JSWait is the longest a shard waits, per batch, for the scripts
	// its values started before it writes the batch without the values
	// still in a script, which finish later (lanes.go); default 10 ms.
	// It bounds what one item's slow script costs the other items of
	// its shard.
	JSWait time.Duration
}

// CommitFunc is the pipeline's one hook for its consumers (trigger
// evaluation, item state): the wiring in server sets it, so that the
// pipeline never imports what consumes it.
//
// It is called once per batch, not per value: by the shard's commit stage that
// wrote the batch, after Store.Write returned nil for it (the values are
// as durable as the store promises) and after Last reflects it, and
// before the batch's submitters are acknowledged, so that when Submit
// returns nil the hook has seen every value it was given. Batches of one
// shard arrive in commit order; different shards call it concurrently
// with their own batches, and an item always belongs to the same shard.
//
// It MUST NOT block for long: the shard's next batch, and every sender
// waiting on this one, wait for it; hand slow work to a queue of your
// own. It MUST NOT keep samples or the slice after it returns: the shard
// reuses the backing array. It MUST NOT call Submit (the shard would wait
// for itself).
type CommitFunc func(shard int, samples []history.Sample)

// DefaultOptions returns the defaults for everything but Store.
func DefaultOptions() Options {
	return Options{QueueValues: 1 << 17, MaxBatch: 1 << 14}
}

func (o *Options) ensureDefaults() {
	d := DefaultOptions()
	if o.Shards <= 0 {
		o.Shards = runtime.GOMAXPROCS(0)
	}
	if o.QueueValues <= 0 {
		o.QueueValues = d.QueueValues
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = d.MaxBatch
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = selfmon.NewRegistry()
	}
	if o.ItemStates == nil {
		o.ItemStates = itemstate.New()
	}
	if o.StateInterval <= 0 {
		o.StateInterval = time.Minute
	}
	if o.JSWait <= 0 {
		o.JSWait = 10 * time.Millisecond
	}
}

// Pipeline is the sharded value pipeline.
type Pipeline struct {
	opts   Options
	shards []*shard

	committed *selfmon.Counter
	errors    *selfmon.Counter
	batches   *selfmon.Counter
	// byType counts committed values per value type (index: the
	// history.ValueType), for zabbix[wcache,values,<type>].
	byType [history.Text + 1]*selfmon.Counter
	// busy is the shards' time preprocessing and writing to the store
	// (zabbix[process,pipeline shard,avg,busy]).
	busy *selfmon.Busy
	// discarded and notSupported count preprocessing results: values a
	// step discarded, values that left their item not supported.
	discarded    *selfmon.Counter
	notSupported *selfmon.Counter
	refused      *selfmon.Counter // Submits refused by Admit
	// JavaScript off the shards' path (lanes.go): values finished after
	// their batch, values refused, values on their way.
	jsDetached *selfmon.Counter
	jsRefused  *selfmon.Counter
	jsWaiting  atomic.Int64
	// laneMaxWait is laneMaxWait, lowered by tests.
	laneMaxWait time.Duration
	throttle    *selfmon.LogThrottle
	saveMu      sync.Mutex // one SaveState at a time

	stopOnce sync.Once
	wg       sync.WaitGroup
}

// New creates a pipeline; Run starts its shard goroutines.
func New(opts Options) (*Pipeline, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("pipeline: Options.Store is required")
	}
	opts.ensureDefaults()
	p := &Pipeline{opts: opts, laneMaxWait: laneMaxWait}
	m := opts.Metrics
	p.committed = m.Counter("peregrine_pipeline_values_committed_total", "Values accepted by the history store.")
	p.errors = m.Counter("peregrine_pipeline_store_errors_total", "History store writes that failed; their values were not acknowledged.")
	p.batches = m.Counter("peregrine_pipeline_store_batches_total", "Batches written to the history store.")
	for t := range p.byType {
		p.byType[t] = m.Counter("peregrine_pipeline_values_committed_by_type_total", "Values accepted by the history store, by value type.",
			"type", typeLabels[t])
	}
	p.discarded = m.Counter("peregrine_preprocessing_discarded_total", "Values that a preprocessing step discarded (discard unchanged, first value of a change step, discard-value handler).")
	p.notSupported = m.Counter("peregrine_preprocessing_not_supported_total", "Values whose preprocessing or conversion failed, leaving their item not supported.")
	p.refused = m.Counter("peregrine_pipeline_refused_values_total", "Values refused before any write because the store could not take them (low disk space, a history log that cannot write); they were not acknowledged.")
	p.jsDetached = m.Counter("peregrine_preprocessing_js_detached_total", "Values whose JavaScript step outlasted the shard's wait (JSWait): written after their batch, off the shard's path, while the shard went on.")
	p.jsRefused = m.Counter("peregrine_preprocessing_js_refused_total", "Values dropped because their item's JavaScript step was too far behind (its values waited more than its time limit); the item is made not supported with the reason.")
	m.GaugeFunc("peregrine_preprocessing_js_waiting", "Values waiting for their item's JavaScript step, or behind such values of their item.",
		func() float64 { return float64(p.jsWaiting.Load()) })
	p.throttle = selfmon.NewLogThrottle(opts.Logger, time.Minute)
	// Each shard has two goroutines, preprocessing and commit (see run).
	p.busy = m.Busy("peregrine_pipeline_busy_seconds_total", "Time the shard goroutines spent preprocessing batches and writing them (store write, last values, commit hook), summed over the shards' two goroutines each.", 2*opts.Shards)
	m.Rate("peregrine_pipeline_values_committed_per_second", "Values accepted by the history store per second, over the last rate interval.",
		func() float64 { return float64(p.committed.Load()) })
	for i := 0; i < opts.Shards; i++ {
		s := newShard(p, i)
		p.shards = append(p.shards, s)
		m.GaugeFunc("peregrine_pipeline_queue_values", "Values waiting in a shard's queue.",
			func() float64 { return float64(s.depth.Load()) }, "shard", strconv.Itoa(i))
	}
	if opts.StateStore == nil && opts.StatePath != "" {
		p.opts.StateStore = fileState(opts.StatePath)
	}
	if st := p.opts.StateStore; st != nil {
		n, err := p.loadState()
		if err != nil {
			// Not fatal: without it the change steps discard each item's
			// first value, which is all a lost state costs.
			opts.Logger.Error("cannot read the preprocessing state; starting without it", "path", st.String(), "err", err)
		} else if n > 0 {
			opts.Logger.Info("preprocessing state restored", "path", st.String(), "items", n)
		}
	}
	return p, nil
}

// typeLabels name the value types as Zabbix's zabbix[wcache,values,<type>]
// modes do.
var typeLabels = [history.Text + 1]string{history.Float: "float", history.Str: "str", history.Log: "log", history.Uint: "uint", history.Text: "text"}

// ValuesCommitted returns the values the store accepted so far, per
// value type (index: history.ValueType).
func (p *Pipeline) ValuesCommitted() (byType [history.Text + 1]uint64) {
	for t, c := range p.byType {
		byType[t] = c.Load()
	}
	return byType
}

// Busy is the shards' busy time (see selfmon.Busy); Goroutines is the
// shard count.
func (p *Pipeline) Busy() *selfmon.Busy { return p.busy }

// Shards returns the shard count.
func (p *Pipeline) Shards() int { return len(p.shards) }

// shardOf maps an item to its shard. Item ids are usually dense, so a
// multiplicative hash spreads runs of ids evenly whatever the shard count.
func (p *Pipeline) shardOf(item uint64) int {
	return int((item * 0x9E3779B97F4A7C15 >> 32) % uint64(len(p.shards)))
}

// Run starts the shards and blocks until ctx is done or Stop is called,
// then drains what is queued and returns.
func (p *Pipeline) Run(ctx context.Context) error {
	for _, s := range p.shards {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			s.run()
		}()
	}
	stop := context.AfterFunc(ctx, p.Stop)
	defer stop()
	done := make(chan struct{})
	if p.opts.StateStore != nil {
		go p.saveLoop(done)
	}
	p.wg.Wait()
	close(done)
	// After the shards drained: the state of every value they wrote.
	if err := p.SaveState(); err != nil {
		p.opts.Logger.Error("cannot save the preprocessing state at stop", "err", err)
		return err
	}
	return nil
}

// saveLoop saves the preprocessing state every StateInterval until done.
func (p *Pipeline) saveLoop(done <-chan struct{}) {
	t := time.NewTicker(p.opts.StateInterval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if err := p.SaveState(); err != nil {
				if n, ok := p.throttle.Allow("save state"); ok {
					p.opts.Logger.Error("cannot save the preprocessing state", "err", err, "suppressed", n)
				}
			}
		}
	}
}

// Stop makes Submit refuse new values, lets the shards write what they
// already hold, and returns once they have.
func (p *Pipeline) Stop() {
	p.stopOnce.Do(func() {
		for _, s := range p.shards {
			s.mu.Lock()
			s.stopping = true
			s.cond.Broadcast()
			s.mu.Unlock()
		}
	})
}

// Ticket tracks one Submit's outstanding shards. A caller that submits
// repeatedly (one connection) reuses one Ticket to avoid allocating.
type Ticket struct {
	pending atomic.Int32
	stored  atomic.Int64 // values of the shards whose write succeeded
	mu      sync.Mutex
	err     error
	failed  []int // shards whose write failed
	unknown bool  // a failure of no known shard: see finish
	p       *Pipeline
	done    chan struct{}
	// noScripts: values still in a JavaScript step after JSWait do not
	// hold the ticket (NewTicketNoScripts).
	noScripts bool
}

// NewTicket returns a reusable ticket.
func NewTicket() *Ticket { return &Ticket{done: make(chan struct{}, 1)} }

// NewTicketNoScripts returns a reusable ticket whose Submit does not wait
// for the values still in a JavaScript step once their shard's JSWait
// is over: they are written later on their own, a store error on them
// logged and counted rather than returned. It is for the ways in that
// acknowledge to no one and handle many items' values in one Submit
// (the poller's results, SNMP traps): one item's slow script must not
// hold the others' results. Senders and agents, whose frames are
// acknowledged, use NewTicket: a frame with a value still in a script
// waits for it.
func NewTicketNoScripts() *Ticket {
	t := NewTicket()
	t.noScripts = true
	return t
}

// finish completes one part of the ticket that is not a shard's whole
// part (a value finished apart from its request's batch, lanes.go): a
// failure then says nothing about which values were stored, and Submit
// reports it as a failure of all (never claiming stored what was not).
func (t *Ticket) finish(err error) { t.finishShard(-1, 0, err) }

// finishShard completes the ticket's part in shard, n values, written
// (err nil) or not.
func (t *Ticket) finishShard(shard, n int, err error) {
	if err != nil {
		t.mu.Lock()
		if t.err == nil {
			t.err = err
		}
		if shard >= 0 {
			t.failed = append(t.failed, shard)
		} else {
			t.unknown = true
		}
		t.mu.Unlock()
	} else {
		t.stored.Add(int64(n))
	}
	if t.pending.Add(-1) == 0 {
		t.done <- struct{}{}
	}
}

// PartialError is Submit's error when the values of some shards were
// stored and those of others were not (a store error in one shard): the
// stored ones are acknowledged, and the caller must say so to its client
// (the trapper's processed and failed counts) rather than "failed",
// which would make a sender send the stored ones again. Within a shard
// one Submit's values are all written or none (they go to the store in
// one write, which is all or nothing).
type PartialError struct {
	Stored int   // values stored
	Err    error // the first store error
	p      *Pipeline
	failed []int // shards whose write failed
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%d values stored, the others not: %v", e.Stored, e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }

// StoredItem reports whether the values submitted for item were stored.
func (e *PartialError) StoredItem(item uint64) bool {
	s := e.p.shardOf(item)
	for _, f := range e.failed {
		if f == s {
			return false
		}
	}
	return true
}

// Submit routes values to their shards and returns once all of them are
// in the store, or with the first store error. values must not be empty of
// ItemIDs; the slice may be reused by the caller as soon as Submit returns.
// t may be nil (a ticket is then allocated).
func (p *Pipeline) Submit(values []history.Sample, t *Ticket) error {
	if len(values) == 0 {
		return nil
	}
	if p.opts.Admit != nil {
		if err := p.opts.Admit(); err != nil {
			p.refused.Add(uint64(len(values)))
			if n, ok := p.throttle.Allow("refused"); ok {
				p.opts.Logger.Error("values refused: the history store cannot take them now", "values", len(values), "err", err, "suppressed", n)
			}
			return err
		}
	}
	if t == nil {
		t = NewTicket()
	}
	t.err, t.failed, t.unknown, t.p = nil, t.failed[:0], false, p
	t.stored.Store(0)
	// Count the shards touched first, so that a fast shard finishing
	// before the others are enqueued cannot complete the ticket early.
	n := len(p.shards)
	if n == 1 {
		t.pending.Store(1)
		if err := p.shards[0].enqueue(values, t); err != nil {
			return err
		}
		<-t.done
		return t.result()
	} else {
		// Group values per shard with one counting pass and one scatter
		// pass into a scratch slice, so each shard gets one contiguous run.
		sc := getScratch(n, len(values))
		defer putScratch(sc)
		for i := range values {
			sc.counts[p.shardOf(values[i].ItemID)]++
		}
		touched := int32(0)
		off := 0
		for i, c := range sc.counts {
			sc.starts[i] = off
			sc.pos[i] = off
			off += c
			if c > 0 {
				touched++
			}
		}
		for i := range values {
			s := p.shardOf(values[i].ItemID)
			sc.buf[sc.pos[s]] = values[i]
			sc.pos[s]++
		}
		t.pending.Store(touched)
		for i, c := range sc.counts {
			if c == 0 {
				continue
			}
			if err := p.shards[i].enqueue(sc.buf[sc.starts[i]:sc.starts[i]+c], t); err != nil {
				// Shards already enqueued will still finish the ticket;
				// account for the ones that never will.
				for j := i; j < len(sc.counts); j++ {
					if sc.counts[j] > 0 {
						t.finishShard(j, sc.counts[j], err)
					}
				}
				<-t.done
				return t.result()
			}
		}
	}
	<-t.done
	return t.result()
}

// result is a finished ticket's error: nil, the store's error when
// nothing was stored, or a *PartialError.
func (t *Ticket) result() error {
	if t.err == nil {
		return nil
	}
	if n := t.stored.Load(); n > 0 && !t.unknown {
		return &PartialError{Stored: int(n), Err: t.err, p: t.p, failed: slices.Clone(t.failed)}
	}
	return t.err
}

type scratch struct {
	counts, starts, pos []int
	buf                 []history.Sample
}

var scratchPool sync.Pool

func getScratch(shards, n int) *scratch {
	sc, _ := scratchPool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	if cap(sc.counts) < shards {
		sc.counts, sc.starts, sc.pos = make([]int, shards), make([]int, shards), make([]int, shards)
	}
	sc.counts, sc.starts, sc.pos = sc.counts[:shards], sc.starts[:shards], sc.pos[:shards]
	clear(sc.counts)
	if cap(sc.buf) < n {
		sc.buf = make([]history.Sample, n)
	}
	sc.buf = sc.buf[:n]
	return sc
}

func putScratch(sc *scratch) {
	clear(sc.buf) // drop string references
	if cap(sc.buf) > 1<<16 {
		sc.buf = nil // do not pin the memory of one huge request
	}
	scratchPool.Put(sc)
}

// Last returns the newest and the previous value the store accepted for
// item (ok is false when the item has none yet; prev.ItemID is 0 when there
// was only one).
func (p *Pipeline) Last(item uint64) (last, prev history.Sample, ok bool) {
	return p.shards[p.shardFor(item)].last(item)
}

// shardFor is the shard that holds item's state: the shard of its root
// master for a dependent item, whose values its master's shard makes
// (see Submit), else the item's own.
func (p *Pipeline) shardFor(item uint64) int {
	if p.opts.Catalog != nil {
		snap := p.opts.Catalog()
		if it := snap.Item(item); it != nil && it.MasterItemID != 0 {
			item = snap.Root(it).ID
		}
	}
	return p.shardOf(item)
}
