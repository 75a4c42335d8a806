package trigger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/expr"
	"github.com/peregrine-mon/peregrine/internal/expr/exprsource"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// EvaluatorOptions configures NewEvaluator.
type EvaluatorOptions struct {
	// Machine receives the results. Required.
	Machine *Machine
	// Snapshot returns the current catalog snapshot. Required.
	Snapshot func() *catalog.Snapshot
	// Store is where history functions read item values. Required. When
	// it is also a history.TrendReader the trend functions use it.
	Store history.Reader
	// Values, when set, is where history functions read values instead
	// of Store: the value cache (package history/valuecache) in front of
	// it. Trends are still read from Store.
	Values history.Reader
	// MaxPending bounds the distinct triggers waiting for evaluation;
	// default 1<<20. A committed value whose trigger is already waiting
	// costs nothing (it is coalesced); one that would exceed the bound is
	// dropped and counted, never waited for.
	MaxPending int
	// TimerInterval is how often time-based triggers (nodata, date and
	// time functions, trends) are evaluated without new values; default
	// 30 s, Zabbix's timer period.
	TimerInterval time.Duration
	// LastValue gives an item's newest value for {ITEM.VALUE} in event
	// names; nil leaves ItemValues empty. Like Macros, Store and Values
	// it is called from several goroutines at once in a large pass.
	LastValue func(itemID uint64) (history.Sample, bool)
	// Macros returns the user macro resolver of a host; nil: the
	// evaluated snapshot's (catalog.Snapshot.UserMacros), so a macro
	// changed through the API counts from the next evaluation on.
	Macros func(hostID uint64) expr.Macros
	// Location is the time zone of date/time functions; default time.Local.
	Location *time.Location
	// Started is the server's start, for nodata() (see expr.Options).
	Started time.Time
	// Now is the clock of timer passes (tests); default time.Now.
	Now     func() time.Time
	Metrics *selfmon.Registry
	Logger  *slog.Logger
}

// Evaluator evaluates triggers when values of their items are committed
// (Commit, the pipeline's hook) and on a timer for time-based ones, and
// feeds the results to the Machine. See the package documentation.
type Evaluator struct {
	opts   EvaluatorOptions
	trends history.TrendReader
	values history.Reader // Values, or Store without it

	// mu guards pending, the triggers waiting for the next pass with the
	// newest value time seen for each (unix ns). Commit holds it for a map
	// update per affected trigger; the evaluation goroutine swaps the map
	// out under it, so neither waits on the other's work.
	mu      sync.Mutex
	pending map[uint64]int64
	spare   map[uint64]int64
	wake    chan struct{}

	// passMu serialises passes (Drain, TimerPass) and guards the cache
	// and the timer's list.
	passMu    sync.Mutex
	cache     map[uint64]*compiled
	cacheSnap *catalog.Snapshot // the snapshot cache was last pruned for
	timerSnap *catalog.Snapshot // the snapshot timed was built from
	timed     []uint64          // time-based triggers of timerSnap
	work      []evalJob         // a pass's triggers, reused

	throttle *selfmon.LogThrottle

	queued, dropped, evaluated, unknown, failed, passes *selfmon.Counter
	pendingGauge                                        *selfmon.Gauge
	// passSeconds times value passes, evaluation and Process together:
	// a pass that runs late coalesces its triggers' values into one
	// evaluation, so its duration bounds value-to-event latency.
	passSeconds *selfmon.Histogram
}

// compiled is a trigger's parsed expressions, valid while the trigger's
// texts are the ones they were parsed from.
type compiled struct {
	text, recoveryText string
	e, recovery        *expr.Expr
	err                error
}

// NewEvaluator returns an evaluator; Run starts it.
func NewEvaluator(opts EvaluatorOptions) (*Evaluator, error) {
	if opts.Machine == nil || opts.Snapshot == nil || opts.Store == nil {
		return nil, errors.New("trigger: EvaluatorOptions.Machine, Snapshot and Store are required")
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = 1 << 20
	}
	if opts.TimerInterval <= 0 {
		opts.TimerInterval = 30 * time.Second
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	reg := opts.Metrics
	if reg == nil {
		reg = selfmon.NewRegistry() // counted, not exported
	}
	ev := &Evaluator{
		opts: opts, pending: map[uint64]int64{}, spare: map[uint64]int64{}, wake: make(chan struct{}, 1),
		cache: map[uint64]*compiled{}, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute),
		queued:       reg.Counter("peregrine_trigger_eval_queued_total", "Triggers queued for evaluation by committed values (coalesced: a trigger already waiting is not counted again)."),
		dropped:      reg.Counter("peregrine_trigger_eval_dropped_total", "Trigger evaluations dropped because triggers.max_pending triggers were already waiting."),
		evaluated:    reg.Counter("peregrine_trigger_evaluations_total", "Trigger expressions evaluated (after values were committed and by the timer)."),
		unknown:      reg.Counter("peregrine_trigger_evaluations_unknown_total", "Trigger evaluations whose result was unknown (the trigger's error says why)."),
		failed:       reg.Counter("peregrine_trigger_eval_process_errors_total", "Evaluation passes whose results could not be stored by the problem state machine."),
		passes:       reg.Counter("peregrine_trigger_eval_passes_total", "Evaluation passes (one per coalesced group of committed batches, one per timer tick)."),
		pendingGauge: reg.Gauge("peregrine_trigger_eval_pending", "Triggers waiting for evaluation."),
		passSeconds: reg.Histogram("peregrine_trigger_eval_pass_seconds", "Duration of evaluation passes started by committed values (evaluation and storing the results).",
			[]float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10}),
	}
	ev.trends, _ = opts.Store.(history.TrendReader)
	ev.values = opts.Store
	if opts.Values != nil {
		ev.values = opts.Values
	}
	return ev, nil
}

// Commit is the pipeline's commit hook (pipeline.CommitFunc): it queues
// the triggers of the committed values' items and returns. It never
// blocks on evaluation: it takes one short lock per batch.
func (ev *Evaluator) Commit(_ int, samples []history.Sample) {
	snap := ev.opts.Snapshot()
	locked := false
	var queued, dropped uint64
	for i := range samples {
		s := &samples[i]
		trigs := snap.TriggersOfItem(s.ItemID)
		if len(trigs) == 0 {
			continue
		}
		if !locked {
			ev.mu.Lock()
			locked = true
		}
		ts := s.Clock*1e9 + int64(s.NS)
		for _, t := range trigs {
			if old, ok := ev.pending[t.ID]; ok {
				ev.pending[t.ID] = max(old, ts)
				continue
			}
			if len(ev.pending) >= ev.opts.MaxPending {
				dropped++
				continue
			}
			ev.pending[t.ID] = ts
			queued++
		}
	}
	if !locked {
		return
	}
	// Set under mu so that a drain's reset cannot be overtaken.
	ev.pendingGauge.Set(int64(len(ev.pending)))
	ev.mu.Unlock()
	ev.queued.Add(queued)
	if dropped > 0 {
		ev.dropped.Add(dropped)
		if others, ok := ev.throttle.Allow("dropped"); ok {
			ev.opts.Logger.Warn("trigger evaluation queue full: evaluations dropped (raise triggers.max_pending)",
				"dropped", dropped, "max_pending", ev.opts.MaxPending, "others_suppressed", others)
		}
	}
	select {
	case ev.wake <- struct{}{}:
	default:
	}
}

// Run evaluates queued triggers and runs the timer until ctx ends. Values
// queued when it ends are not evaluated.
func (ev *Evaluator) Run(ctx context.Context) {
	tick := time.NewTicker(ev.opts.TimerInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ev.wake:
			ev.Drain(ctx)
		case <-tick.C:
			ev.TimerPass(ctx)
		}
	}
}

// Drain evaluates the triggers queued so far, once each, in one pass
// (one Machine.Process, one event commit). Run calls it; tests and
// benchmarks may call it directly instead of running Run.
func (ev *Evaluator) Drain(ctx context.Context) {
	ev.passMu.Lock()
	defer ev.passMu.Unlock()
	ev.mu.Lock()
	batch := ev.pending
	ev.pending, ev.spare = ev.spare, nil
	ev.pendingGauge.Set(0)
	ev.mu.Unlock()
	if len(batch) == 0 {
		ev.spare = batch
		return
	}
	start := time.Now()
	defer func() { ev.passSeconds.Observe(time.Since(start).Seconds()) }()
	snap := ev.opts.Snapshot()
	ev.prune(snap)
	// Compiling touches the parse cache, so it runs here, serially;
	// the evaluations only read (snapshot, value cache, store) and run
	// on up to GOMAXPROCS goroutines when the pass is large.
	work := ev.work[:0]
	for id, ts := range batch {
		t := snap.Trigger(id)
		if t == nil || !t.Enabled {
			continue
		}
		work = append(work, evalJob{t: t, c: ev.compile(snap, t), at: ts})
	}
	clear(batch)
	ev.spare = batch
	results := make([]Result, len(work))
	workers := min(runtime.GOMAXPROCS(0), len(work)/parallelMin)
	if workers <= 1 {
		for i := range work {
			results[i] = ev.evaluateCompiled(ctx, snap, work[i].t, work[i].c, time.Unix(0, work[i].at))
		}
	} else {
		var wg sync.WaitGroup
		chunk := (len(work) + workers - 1) / workers
		for lo := 0; lo < len(work); lo += chunk {
			hi := min(lo+chunk, len(work))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := lo; i < hi; i++ {
					results[i] = ev.evaluateCompiled(ctx, snap, work[i].t, work[i].c, time.Unix(0, work[i].at))
				}
			}()
		}
		wg.Wait()
	}
	clear(work)
	ev.work = work[:0]
	ev.process(snap, results, "value")
}

// parallelMin is the pending triggers per goroutine below which a pass
// evaluates on one goroutine: starting goroutines costs more than a few
// hundred evaluations of a microsecond or two.
const parallelMin = 1024

// evalJob is one trigger of a pass, compiled, with its evaluation time
// (unix ns).
type evalJob struct {
	t  *catalog.Trigger
	c  *compiled
	at int64
}

// TimerPass evaluates every enabled time-based trigger at the clock's
// time. Run calls it every TimerInterval.
func (ev *Evaluator) TimerPass(ctx context.Context) {
	ev.passMu.Lock()
	defer ev.passMu.Unlock()
	snap := ev.opts.Snapshot()
	ev.prune(snap)
	if snap != ev.timerSnap {
		// Rebuilt once per catalog change: parses only triggers whose
		// text changed (the cache), then keeps the time-based ones.
		ev.timed = ev.timed[:0]
		for _, t := range snap.Triggers() {
			if c := ev.compile(snap, &t); c.err == nil && (c.e.TimeBased() || (c.recovery != nil && c.recovery.TimeBased())) {
				ev.timed = append(ev.timed, t.ID)
			}
		}
		ev.timerSnap = snap
	}
	if len(ev.timed) == 0 {
		return
	}
	now := ev.opts.Now()
	results := make([]Result, 0, len(ev.timed))
	for _, id := range ev.timed {
		if r, ok := ev.evaluate(ctx, snap, id, now); ok {
			results = append(results, r)
		}
	}
	ev.process(snap, results, "timer")
}

func (ev *Evaluator) process(snap *catalog.Snapshot, results []Result, cause string) {
	if len(results) == 0 {
		return
	}
	ev.passes.Inc()
	if _, err := ev.opts.Machine.Process(snap, results); err != nil {
		// The events of this pass are lost to the state machine; the
		// next value or timer pass evaluates the triggers again.
		ev.failed.Inc()
		if others, ok := ev.throttle.Allow("process"); ok {
			ev.opts.Logger.Error("cannot store trigger evaluation results", "cause", cause, "results", len(results), "err", err, "others_suppressed", others)
		}
	}
}

// prune drops the cache entries of triggers gone from snap, once per
// snapshot: a pass over the cache per catalog change.
func (ev *Evaluator) prune(snap *catalog.Snapshot) {
	if snap == ev.cacheSnap {
		return
	}
	for id := range ev.cache {
		if snap.Trigger(id) == nil {
			delete(ev.cache, id)
		}
	}
	ev.cacheSnap = snap
}

// compile returns t's parsed expressions from the cache, parsing them
// again when the trigger's texts changed.
func (ev *Evaluator) compile(snap *catalog.Snapshot, t *catalog.Trigger) *compiled {
	if c, ok := ev.cache[t.ID]; ok && c.text == t.Expression && c.recoveryText == t.RecoveryExpression {
		return c
	}
	c := &compiled{text: t.Expression, recoveryText: t.RecoveryExpression}
	c.e, c.err = expr.Parse(t.Expression)
	if c.err == nil && t.RecoveryMode == catalog.RecoverRecoveryExpression {
		c.recovery, c.err = expr.Parse(t.RecoveryExpression)
		if c.err != nil {
			c.err = fmt.Errorf("recovery expression: %w", c.err)
		}
	}
	ev.cache[t.ID] = c
	return c
}

// evaluate evaluates trigger id at now; ok is false for a trigger that
// is gone or disabled.
func (ev *Evaluator) evaluate(ctx context.Context, snap *catalog.Snapshot, id uint64, now time.Time) (Result, bool) {
	t := snap.Trigger(id)
	if t == nil || !t.Enabled {
		return Result{}, false
	}
	return ev.evaluateCompiled(ctx, snap, t, ev.compile(snap, t), now), true
}

// evaluateCompiled evaluates t, whose parsed expressions are c, at now.
// It only reads shared state, so a pass may run it concurrently.
func (ev *Evaluator) evaluateCompiled(ctx context.Context, snap *catalog.Snapshot, t *catalog.Trigger, c *compiled, now time.Time) Result {
	ev.evaluated.Inc()
	r := Result{TriggerID: t.ID, Clock: now.Unix(), NS: int32(now.Nanosecond())}
	if c.err != nil {
		// The catalog refuses expressions that do not parse; this is a
		// trigger stored by an older parser.
		r.Value, r.Error = Unknown, "invalid expression: "+c.err.Error()
		ev.unknown.Inc()
		return r
	}
	src := &exprsource.StoreSource{Store: ev.values, TrendStore: ev.trends, Snap: snap}
	opt := expr.Options{Now: now, Location: ev.opts.Location, Source: src, Started: ev.opts.Started}
	if len(t.HostIDs) == 1 {
		// //key and {HOST.HOST} name the trigger's host when it has one.
		src.Self = snap.HostByID(t.HostIDs[0])
	}
	ev.setUserMacros(&opt, snap, t, src) // hostmacros.go
	v := c.e.Eval(ctx, opt)
	truth, ok := v.Bool()
	switch {
	case v.IsError():
		r.Value, r.Error = Unknown, v.Err
	case !ok:
		r.Value, r.Error = Unknown, fmt.Sprintf("the expression's result %q is not a number", v.Str)
	case truth:
		r.Value = Problem
	default:
		r.Value = OK
		if c.recovery != nil {
			rt, _ := c.recovery.Eval(ctx, opt).Bool()
			r.Recovered = rt
		}
	}
	if r.Value == Unknown {
		ev.unknown.Inc()
	}
	// {ITEM.VALUE} is only read by the events a result may make: an
	// unknown result makes none, nor does OK on a trigger that is OK
	// (acknowledgements cannot turn a trigger to PROBLEM meanwhile).
	// Most evaluations under load are the latter; they skip the lookups
	// and formatting.
	needValues := r.Value != Unknown && !(r.Value == OK && ev.opts.Machine.Runtime(t.ID).Value == event.ValueOK)
	if ev.opts.LastValue != nil && needValues {
		for _, ref := range c.e.ItemRefs() {
			it, err := src.Item(ref)
			if err != nil {
				r.ItemValues = append(r.ItemValues, "UNKNOWN")
				r.ItemIDs = append(r.ItemIDs, 0)
				continue
			}
			r.ItemIDs = append(r.ItemIDs, it.ID)
			if s, ok := ev.opts.LastValue(it.ID); ok {
				r.ItemValues = append(r.ItemValues, formatSample(&s))
			} else {
				r.ItemValues = append(r.ItemValues, "UNKNOWN")
			}
		}
	}
	return r
}

// formatSample is a value as {ITEM.VALUE} shows it.
func formatSample(s *history.Sample) string {
	switch s.Type {
	case history.Float:
		return strconv.FormatFloat(s.F, 'f', -1, 64)
	case history.Uint:
		return strconv.FormatUint(s.U, 10)
	}
	return s.S
}
