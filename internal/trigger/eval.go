package trigger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
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
	// MaxPending bounds the trigger evaluations queued in each shard
	// (one per committed value and trigger of its item, before values of
	// a trigger with the same timestamp are merged at the pass); default
	// 1<<22. One that would exceed the bound is dropped and counted,
	// never waited for.
	MaxPending int
	// Shards is the number of evaluation goroutines, each owning the
	// triggers whose id modulo Shards is its index; default GOMAXPROCS.
	Shards int
	// TimerInterval is how often time-based triggers (nodata, date and
	// time functions, trends) are evaluated without new values; default
	// 30 s, Zabbix's timer period.
	TimerInterval time.Duration
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
	shards []*evalShard   // trigger id % len(shards) owns a trigger

	// bufs recycles Commit's per-shard buckets, so a commit allocates
	// nothing once warm.
	bufs sync.Pool

	throttle *selfmon.LogThrottle

	queued, merged, dropped, evaluated, unknown, failed, passes *selfmon.Counter
	pendingGauge                                                *selfmon.Gauge
	// passSeconds times value passes, evaluation and Process together:
	// a value waits at most about one pass before it is evaluated.
	passSeconds *selfmon.Histogram
}

// evalShard is one evaluation goroutine's share of the triggers: its own
// queue under its own lock, its own parse cache and timer list, so shards
// never wait for each other.
//
// With a million triggers the cost of an evaluation is mostly memory
// that is not in the CPU's caches: maps keyed by trigger ID put
// neighbouring triggers in random places. So the shard keeps no such
// map. Commit appends to a queue; a pass sorts it by trigger ID and
// walks the snapshot's triggers (sorted by ID) and the parse cache
// (indexed like them) in that order, so consecutive evaluations touch
// neighbouring memory, and the parsed expressions, first made in that
// order, lie in it too.
type evalShard struct {
	ev    *Evaluator
	index int

	// mu guards queued, the evaluations waiting for the next pass: one
	// per committed value and trigger. Commit holds it for an append per
	// batch; the shard's pass swaps the slice out under it, so neither
	// waits on the other's work.
	mu     sync.Mutex
	queued []queuedEval
	spare  []queuedEval
	wake   chan struct{}

	// passMu serialises the shard's passes (drain, timerPass) and guards
	// everything below.
	passMu sync.Mutex
	// compiledAt[i] is the parsed form of cacheSnap.Triggers()[i] when
	// this shard owns it and evaluated it; reindex carries the entries
	// over to each new snapshot by ID.
	compiledAt []*compiled
	cacheSnap  *catalog.Snapshot
	timerSnap  *catalog.Snapshot // the snapshot timed was built from
	timed      []int32           // positions of time-based triggers of timerSnap in this shard
	sorted     []queuedEval      // the radix sort's other buffer, reused
	work       []evalJob         // a pass's triggers, reused
	results    []Result          // a round's results, reused
	src        exprsource.StoreSource
}

// maxTimesPerTrigger bounds the distinct times one trigger keeps waiting
// between two passes: a pass evaluates each of them in order, so the
// bound caps a lagging pass's work per trigger. Past it the newest
// waiting time is replaced by the newer value's (counted in
// peregrine_trigger_eval_merged_total).
const maxTimesPerTrigger = 16

// pendingTimes is a waiting trigger's evaluation times (unix ns), one per
// distinct timestamp of the values that touched it: earlier ascending,
// then last, the newest. History functions read as of an evaluation's
// nanosecond (expr.HistoryQuery.Before), so each value is evaluated on
// its own, as Zabbix does; values with the same timestamp are one
// evaluation. The common case, one time, allocates nothing.
type pendingTimes struct {
	last    int64
	earlier []int64
}

// add records ts; it reports false when a waiting time had to be merged
// into a newer one because of maxTimesPerTrigger.
func (p *pendingTimes) add(ts int64) bool {
	switch {
	case ts == p.last:
		return true
	case ts > p.last:
		if len(p.earlier)+1 >= maxTimesPerTrigger {
			p.last = ts
			return false
		}
		p.earlier = append(p.earlier, p.last)
		p.last = ts
		return true
	}
	// Older than the newest (values of another pipeline shard, or a
	// sender's clock): kept in order among the earlier times.
	i, found := slices.BinarySearch(p.earlier, ts)
	if found {
		return true
	}
	if len(p.earlier)+1 >= maxTimesPerTrigger {
		return false
	}
	p.earlier = slices.Insert(p.earlier, i, ts)
	return true
}

// n is the number of evaluations waiting.
func (p *pendingTimes) n() int { return len(p.earlier) + 1 }

// at is the i-th evaluation time, oldest first.
func (p *pendingTimes) at(i int) int64 {
	if i < len(p.earlier) {
		return p.earlier[i]
	}
	return p.last
}

// compiled is a trigger's parsed expressions, valid while the trigger's
// texts are the ones they were parsed from.
type compiled struct {
	text, recoveryText string
	e, recovery        *expr.Expr
	err                error

	// What evaluations in snap share, looked up at its first evaluation
	// in it: the trigger's host for //key, its user macros and its item
	// queries resolved. Owned by the shard's goroutine like the cache.
	snap   *catalog.Snapshot
	self   *catalog.Host
	macros expr.Macros
	memo   []exprsource.Resolved
}

// NewEvaluator returns an evaluator; Run starts it.
func NewEvaluator(opts EvaluatorOptions) (*Evaluator, error) {
	if opts.Machine == nil || opts.Snapshot == nil || opts.Store == nil {
		return nil, errors.New("trigger: EvaluatorOptions.Machine, Snapshot and Store are required")
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = 1 << 22
	}
	if opts.Shards <= 0 {
		opts.Shards = runtime.GOMAXPROCS(0)
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
		opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute),
		queued:       reg.Counter("peregrine_trigger_eval_queued_total", "Trigger evaluations due to committed values: one per trigger and distinct timestamp of its values (values of a trigger with the same timestamp are one evaluation)."),
		merged:       reg.Counter("peregrine_trigger_eval_merged_total", "Trigger evaluations merged into a newer one because the trigger already had 16 distinct value times waiting: the values between were not evaluated on their own."),
		dropped:      reg.Counter("peregrine_trigger_eval_dropped_total", "Trigger evaluations dropped because triggers.max_pending evaluations were already queued in their evaluation shard."),
		evaluated:    reg.Counter("peregrine_trigger_evaluations_total", "Trigger expressions evaluated (after values were committed and by the timer)."),
		unknown:      reg.Counter("peregrine_trigger_evaluations_unknown_total", "Trigger evaluations whose result was unknown (the trigger's error says why)."),
		failed:       reg.Counter("peregrine_trigger_eval_process_errors_total", "Evaluation rounds whose results could not be stored by the problem state machine."),
		passes:       reg.Counter("peregrine_trigger_eval_passes_total", "Batches of evaluation results handed to the problem state machine (one per round of a value pass, one per timer tick and shard)."),
		pendingGauge: reg.Gauge("peregrine_trigger_eval_pending", "Trigger evaluations queued by committed values and not yet taken by a pass, all shards (values of a trigger with the same timestamp not yet merged)."),
		passSeconds: reg.Histogram("peregrine_trigger_eval_pass_seconds", "Duration of evaluation passes started by committed values (evaluation and storing the results), per shard.",
			[]float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10}),
	}
	ev.trends, _ = opts.Store.(history.TrendReader)
	ev.values = opts.Store
	if opts.Values != nil {
		ev.values = opts.Values
	}
	for i := range opts.Shards {
		ev.shards = append(ev.shards, &evalShard{ev: ev, index: i, wake: make(chan struct{}, 1)})
	}
	ev.bufs.New = func() any { b := make([][]queuedEval, len(ev.shards)); return &b }
	return ev, nil
}

// queuedEval is one trigger touched by a committed value, on its way to
// its shard.
type queuedEval struct {
	trigger uint64
	ts      int64
}

// Commit is the pipeline's commit hook (pipeline.CommitFunc): it queues
// the triggers of the committed values' items, each with its value's
// time, and returns. It never blocks on evaluation: it takes each
// affected shard's lock once per batch, no lock shared by all shards.
func (ev *Evaluator) Commit(_ int, samples []history.Sample) {
	snap := ev.opts.Snapshot()
	bp := ev.bufs.Get().(*[][]queuedEval)
	buckets := *bp
	nsh := uint64(len(ev.shards))
	touched := false
	for i := range samples {
		s := &samples[i]
		trigs := snap.TriggersOfItem(s.ItemID)
		if len(trigs) == 0 {
			continue
		}
		ts := s.Clock*1e9 + int64(s.NS)
		for _, t := range trigs {
			k := t.ID % nsh
			buckets[k] = append(buckets[k], queuedEval{trigger: t.ID, ts: ts})
			touched = true
		}
	}
	if touched {
		for k, b := range buckets {
			if len(b) > 0 {
				ev.shards[k].queue(b)
				buckets[k] = b[:0]
			}
		}
	}
	ev.bufs.Put(bp)
}

// queue adds one commit's evaluations to the shard's queue and wakes its
// goroutine. It appends only: merging a trigger's values and looking up
// the trigger wait for the pass, off the pipeline's commit path.
func (sh *evalShard) queue(b []queuedEval) {
	ev := sh.ev
	sh.mu.Lock()
	room := ev.opts.MaxPending - len(sh.queued)
	dropped := 0
	if len(b) > room {
		dropped = len(b) - max(room, 0)
		b = b[:max(room, 0)]
	}
	sh.queued = append(sh.queued, b...)
	sh.mu.Unlock()
	ev.pendingGauge.Add(int64(len(b)))
	if dropped > 0 {
		ev.dropped.Add(uint64(dropped))
		if others, ok := ev.throttle.Allow("dropped"); ok {
			ev.opts.Logger.Warn("trigger evaluation queue full: evaluations dropped (raise triggers.max_pending)",
				"dropped", dropped, "max_pending", ev.opts.MaxPending, "shard", sh.index, "others_suppressed", others)
		}
	}
	select {
	case sh.wake <- struct{}{}:
	default:
	}
}

// Run evaluates queued triggers and runs the timer, one goroutine per
// shard, until ctx ends. Values queued when it ends are not evaluated.
func (ev *Evaluator) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, sh := range ev.shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh.run(ctx)
		}()
	}
	wg.Wait()
}

func (sh *evalShard) run(ctx context.Context) {
	tick := time.NewTicker(sh.ev.opts.TimerInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.wake:
			sh.drain(ctx)
		case <-tick.C:
			sh.timerPass(ctx)
		}
	}
}

// Drain evaluates the triggers queued so far in every shard, the shards
// concurrently (see evalShard.drain). Run calls the shards' drains; tests
// and benchmarks may call it directly instead of running Run.
func (ev *Evaluator) Drain(ctx context.Context) {
	ev.eachShard(func(sh *evalShard) { sh.drain(ctx) })
}

// TimerPass evaluates every enabled time-based trigger at the clock's
// time, the shards concurrently. Run's shards do it every TimerInterval.
func (ev *Evaluator) TimerPass(ctx context.Context) {
	ev.eachShard(func(sh *evalShard) { sh.timerPass(ctx) })
}

func (ev *Evaluator) eachShard(fn func(*evalShard)) {
	if len(ev.shards) == 1 {
		fn(ev.shards[0])
		return
	}
	var wg sync.WaitGroup
	for _, sh := range ev.shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(sh)
		}()
	}
	wg.Wait()
}

// drain evaluates the shard's queued triggers at every waiting time, in
// order: round r evaluates each trigger's r-th oldest time and hands the
// round's results to Process in one call (one commit), so a trigger's
// results reach the state machine in its values' order and a 1 followed
// by a 0 makes a problem and its recovery, however late the pass.
func (sh *evalShard) drain(ctx context.Context) {
	ev := sh.ev
	sh.passMu.Lock()
	defer sh.passMu.Unlock()
	sh.mu.Lock()
	q := sh.queued
	sh.queued, sh.spare = sh.spare[:0], nil
	sh.mu.Unlock()
	ev.pendingGauge.Add(-int64(len(q)))
	if len(q) == 0 {
		sh.spare = q
		return
	}
	start := time.Now()
	defer func() { ev.passSeconds.Observe(time.Since(start).Seconds()) }()
	q, sh.sorted = sortByTrigger(q, sh.sorted)
	snap := ev.opts.Snapshot()
	sh.reindex(snap)
	trigs := snap.Triggers()
	work := sh.work[:0]
	rounds, pos := 0, 0
	var queued, merged uint64
	for i := 0; i < len(q); {
		// One trigger's values, in commit order (the sort is stable):
		// its distinct times, as pendingTimes keeps them.
		id := q[i].trigger
		p := pendingTimes{last: q[i].ts}
		queued++
		for i++; i < len(q) && q[i].trigger == id; i++ {
			n := p.n()
			if !p.add(q[i].ts) {
				merged++
			} else if p.n() > n {
				queued++
			}
		}
		pos = seekTrigger(trigs, pos, id)
		if pos == len(trigs) || trigs[pos].ID != id || !trigs[pos].Enabled {
			continue // deleted or disabled since the value was committed
		}
		t := &trigs[pos]
		work = append(work, evalJob{t: t, c: sh.compile(t, pos), times: p})
		rounds = max(rounds, p.n())
	}
	ev.queued.Add(queued)
	if merged > 0 {
		ev.merged.Add(merged)
	}
	clear(q)
	sh.mu.Lock()
	if sh.spare == nil {
		sh.spare = q[:0]
	}
	sh.mu.Unlock()
	for r := range rounds {
		results := sh.results[:0]
		for i := range work {
			j := &work[i]
			if r < j.times.n() {
				if res, send := sh.evaluateCompiled(ctx, snap, j.t, j.c, time.Unix(0, j.times.at(r))); send {
					results = append(results, res)
				}
			}
		}
		ev.process(snap, results, "value")
		clear(results)
		sh.results = results[:0]
	}
	clear(work)
	sh.work = work[:0]
}

// seekTrigger returns the position of id in trigs (sorted by ID) at or
// after from, or where it would be: a gallop from from, because a pass
// looks up ascending IDs and most lie close to the previous one.
func seekTrigger(trigs []catalog.Trigger, from int, id uint64) int {
	if from >= len(trigs) || trigs[from].ID >= id {
		return from
	}
	lo, step := from, 1
	for lo+step < len(trigs) && trigs[lo+step].ID < id {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(trigs)-1)
	// trigs[lo].ID < id; the answer is in (lo, hi] or len(trigs).
	i, _ := slices.BinarySearchFunc(trigs[lo+1:hi+1], id, func(t catalog.Trigger, id uint64) int { return cmp.Compare(t.ID, id) })
	return lo + 1 + i
}

// sortByTrigger sorts q by trigger ID, keeping the order of entries of
// the same trigger (their commit order), with an LSD radix sort of 11-bit
// digits over the IDs' range: two or three linear passes for any
// realistic catalog, where a comparison sort of a million entries costs
// far more than the evaluations it orders. buf is the other buffer; it
// returns the sorted slice and the other one for reuse.
func sortByTrigger(q, buf []queuedEval) (sorted, spare []queuedEval) {
	lo, hi := q[0].trigger, q[0].trigger
	inOrder := true
	for i := 1; i < len(q); i++ {
		id := q[i].trigger
		lo, hi = min(lo, id), max(hi, id)
		if id < q[i-1].trigger {
			inOrder = false
		}
	}
	if inOrder {
		return q, buf
	}
	if cap(buf) < len(q) {
		buf = make([]queuedEval, len(q), cap(q))
	}
	buf = buf[:len(q)]
	const bits = 11
	var count [1 << bits]int
	for shift := uint(0); shift < 64 && (hi-lo)>>shift > 0; shift += bits {
		clear(count[:])
		for i := range q {
			count[((q[i].trigger-lo)>>shift)&(1<<bits-1)]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for i := range q {
			d := ((q[i].trigger - lo) >> shift) & (1<<bits - 1)
			buf[count[d]] = q[i]
			count[d]++
		}
		q, buf = buf, q
	}
	return q, buf
}

// evalJob is one trigger of a pass, compiled, with its evaluation times.
type evalJob struct {
	t     *catalog.Trigger
	c     *compiled
	times pendingTimes
}

// timerPass evaluates the shard's enabled time-based triggers at the
// clock's time.
func (sh *evalShard) timerPass(ctx context.Context) {
	ev := sh.ev
	sh.passMu.Lock()
	defer sh.passMu.Unlock()
	snap := ev.opts.Snapshot()
	sh.reindex(snap)
	trigs := snap.Triggers()
	if snap != sh.timerSnap {
		// Rebuilt once per catalog change: parses only triggers whose
		// text changed (the cache), then keeps the time-based ones.
		sh.timed = sh.timed[:0]
		nsh := uint64(len(ev.shards))
		for i := range trigs {
			t := &trigs[i]
			if t.ID%nsh != uint64(sh.index) {
				continue
			}
			if c := sh.compile(t, i); c.err == nil && (c.e.TimeBased() || (c.recovery != nil && c.recovery.TimeBased())) {
				sh.timed = append(sh.timed, int32(i))
			}
		}
		sh.timerSnap = snap
	}
	if len(sh.timed) == 0 {
		return
	}
	now := ev.opts.Now()
	results := make([]Result, 0, len(sh.timed))
	for _, i := range sh.timed {
		t := &trigs[i]
		if !t.Enabled {
			continue
		}
		if r, send := sh.evaluateCompiled(ctx, snap, t, sh.compile(t, int(i)), now); send {
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

// reindex moves the parse cache to snap's positions, once per snapshot:
// the entries of triggers still in snap are carried over by ID (both
// snapshots' triggers are sorted by ID, so this is one merge walk), the
// others are dropped.
func (sh *evalShard) reindex(snap *catalog.Snapshot) {
	if snap == sh.cacheSnap {
		return
	}
	trigs := snap.Triggers()
	next := make([]*compiled, len(trigs))
	if sh.cacheSnap != nil {
		old := sh.cacheSnap.Triggers()
		j := 0
		for i, c := range sh.compiledAt {
			if c == nil {
				continue
			}
			j = seekTrigger(trigs, j, old[i].ID)
			if j < len(trigs) && trigs[j].ID == old[i].ID {
				next[j] = c
			}
		}
	}
	sh.compiledAt, sh.cacheSnap = next, snap
}

// compile returns the parsed expressions of t, at position pos of the
// snapshot reindex last ran for, from the cache, parsing them again when
// the trigger's texts changed.
func (sh *evalShard) compile(t *catalog.Trigger, pos int) *compiled {
	if c := sh.compiledAt[pos]; c != nil && c.text == t.Expression && c.recoveryText == t.RecoveryExpression {
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
	sh.compiledAt[pos] = c
	return c
}

// evaluateCompiled evaluates t, whose parsed expressions are c, at now.
// It reads shared state only; the shard's reused source is its own. send
// is false for a result that would change nothing (OK on a settled
// trigger, see Machine.Settled): the pass leaves it out of Process.
func (sh *evalShard) evaluateCompiled(ctx context.Context, snap *catalog.Snapshot, t *catalog.Trigger, c *compiled, now time.Time) (r Result, send bool) {
	ev := sh.ev
	ev.evaluated.Inc()
	r = Result{TriggerID: t.ID, Clock: now.Unix(), NS: int32(now.Nanosecond())}
	if c.err != nil {
		// The catalog refuses expressions that do not parse; this is a
		// trigger stored by an older parser.
		r.Value, r.Error = Unknown, "invalid expression: "+c.err.Error()
		ev.unknown.Inc()
		return r, true
	}
	// One source per shard, reset per evaluation: a new one would be an
	// allocation per evaluation (it escapes through expr.Options).
	src := &sh.src
	if c.snap != snap {
		c.snap, c.self, c.macros, c.memo = snap, nil, nil, c.memo[:0]
		if len(t.HostIDs) == 1 {
			// //key and {HOST.HOST} name the trigger's host when it has one.
			c.self = snap.HostByID(t.HostIDs[0])
			if ev.opts.Macros == nil {
				// The host's view: host, its templates, global.
				c.macros = snap.UserMacros(t.HostIDs[0])
			}
		}
	}
	src.Store, src.TrendStore, src.Snap, src.Self, src.Memo = ev.values, ev.trends, snap, c.self, &c.memo
	src.Reuse = true // its buffer is the shard's; the results are done with before the next read
	opt := expr.Options{Now: now, Location: ev.opts.Location, Source: src, Started: ev.opts.Started, Macros: c.macros}
	if len(t.HostIDs) > 1 || ev.opts.Macros != nil {
		// Several hosts (Zabbix's per-function and all-hosts scopes) or
		// an embedder's resolver: hostmacros.go. Rare, so not cached.
		ev.setUserMacros(&opt, snap, t, src)
	}
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
	if r.Value == OK && ev.opts.Machine.Settled(t.ID) {
		// Most evaluations under load: nothing to tell the machine.
		return r, false
	}
	// {ITEM.VALUE} is only read by the events a result may make: an
	// unknown result makes none, nor does OK on a trigger that is OK
	// (acknowledgements cannot turn a trigger to PROBLEM meanwhile).
	if r.Value != Unknown && !(r.Value == OK && ev.opts.Machine.Runtime(t.ID).Value == event.ValueOK) {
		for _, ref := range c.e.ItemRefs() {
			it, err := src.Item(ref)
			if err != nil {
				r.ItemValues = append(r.ItemValues, "UNKNOWN")
				r.ItemIDs = append(r.ItemIDs, 0)
				continue
			}
			r.ItemIDs = append(r.ItemIDs, it.ID)
			// The value as of the evaluated time, read as last() reads
			// it: the one that made this result, even when the pass
			// runs after newer values were committed.
			ss, err := src.History(ctx, ref, expr.HistoryQuery{Count: 1, Till: now.Unix(), Before: now.UnixNano()})
			if err != nil || len(ss) == 0 {
				r.ItemValues = append(r.ItemValues, "UNKNOWN")
				continue
			}
			r.ItemValues = append(r.ItemValues, formatSample(&ss[0]))
		}
	}
	return r, true
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

// evaluate evaluates trigger id at now in its shard, outside any pass
// (benchmarks of one evaluation); ok is false for a trigger that is gone
// or disabled.
func (ev *Evaluator) evaluate(ctx context.Context, snap *catalog.Snapshot, id uint64, now time.Time) (Result, bool) {
	sh := ev.shards[id%uint64(len(ev.shards))]
	sh.passMu.Lock()
	defer sh.passMu.Unlock()
	sh.reindex(snap)
	pos, ok := snap.TriggerIndex(id)
	if !ok || !snap.Triggers()[pos].Enabled {
		return Result{}, false
	}
	t := &snap.Triggers()[pos]
	r, _ := sh.evaluateCompiled(ctx, snap, t, sh.compile(t, pos), now)
	return r, true
}
