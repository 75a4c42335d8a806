package trigger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
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
	// a trigger with the same timestamp are made one at the pass);
	// default 1<<22. A commit that would exceed it is not waited for nor
	// dropped: the shard keeps, per trigger, only the span of times its
	// values cover and re-reads those values from Store when it gets to
	// them (eval_backlog.go), so memory stays bounded and every value is
	// still evaluated.
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

	queued, backlogged, reread, dropped, evaluated, unknown, failed, passes *selfmon.Counter
	pendingGauge, backlogGauge                                              *selfmon.Gauge
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
	// backlogging is set when a commit found the queue full, and cleared
	// by the pass that finds the backlog empty: meanwhile every commit's
	// evaluations go to backlog, none to queued, so a trigger's values
	// are evaluated in commit order (eval_backlog.go).
	backlogging bool
	backlog     map[uint64]backlogSpan // guarded by mu
	spareMap    map[uint64]backlogSpan

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
	active     []int32           // the jobs of work with times left in a round, reused
	// doneTill is, while the shard is backlogged, each re-read trigger's
	// newest evaluated time: a re-read never evaluates a trigger at or
	// before it again (eval_backlog.go).
	doneTill map[uint64]int64
	times    []int64  // a re-read's times, reused
	ids      []uint64 // a backlog's triggers, reused
	results  []Result // a round's results, reused
	src      exprsource.StoreSource
	known    history.Sample // src.Known's value
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
	// For an expression last(/host/key) OP N without a recovery
	// expression (expr.LastComparison): the comparison, kept here so an
	// evaluation touches no more memory, and its item in snap (0 when
	// it does not resolve: the evaluation says why).
	last     expr.LastComparison
	lastItem uint64
	lastSnap *catalog.Snapshot
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
		backlogged:   reg.Counter("peregrine_trigger_eval_backlogged_total", "Trigger evaluations due to committed values that found their shard's queue full (triggers.max_pending) or backlogged: kept as a span of times per trigger and evaluated from the values re-read from the history store."),
		reread:       reg.Counter("peregrine_trigger_eval_reread_total", "Trigger evaluations made from values re-read from the history store for a backlogged trigger: one per distinct time of its items' values in the backlogged span."),
		dropped:      reg.Counter("peregrine_trigger_eval_dropped_total", "Backlogged trigger spans that could not be evaluated because reading their values back from the history store failed (the log says why)."),
		evaluated:    reg.Counter("peregrine_trigger_evaluations_total", "Trigger expressions evaluated (after values were committed and by the timer)."),
		unknown:      reg.Counter("peregrine_trigger_evaluations_unknown_total", "Trigger evaluations whose result was unknown (the trigger's error says why)."),
		failed:       reg.Counter("peregrine_trigger_eval_process_errors_total", "Evaluation rounds whose results could not be stored by the problem state machine."),
		passes:       reg.Counter("peregrine_trigger_eval_passes_total", "Batches of evaluation results handed to the problem state machine (one per round of a value pass, one per timer tick and shard)."),
		pendingGauge: reg.Gauge("peregrine_trigger_eval_pending", "Trigger evaluations queued by committed values and not yet taken by a pass, all shards (values of a trigger with the same timestamp not yet made one)."),
		backlogGauge: reg.Gauge("peregrine_trigger_eval_backlog", "Triggers with a backlogged span of values waiting to be re-read from the history store and evaluated, all shards."),
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
	// The committed numeric value that queued it, so that last() of its
	// item at ts needs no read (exprsource.StoreSource.Known): item is 0
	// when there is none (a string value, or values of the trigger with
	// the same ts made one evaluation); bits is F's or U's bits.
	item uint64
	bits uint64
	typ  history.ValueType
}

// known sets s to q's committed value and reports whether it has one.
func (q *queuedEval) known(s *history.Sample) bool {
	if q.item == 0 {
		return false
	}
	*s = history.Sample{ItemID: q.item, Clock: q.ts / 1e9, NS: int32(q.ts % 1e9), Type: q.typ}
	if q.typ == history.Float {
		s.F = math.Float64frombits(q.bits)
	} else {
		s.U = q.bits
	}
	return true
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
		q := queuedEval{ts: s.Clock*1e9 + int64(s.NS)}
		switch s.Type {
		case history.Float:
			q.item, q.bits, q.typ = s.ItemID, math.Float64bits(s.F), s.Type
		case history.Uint:
			q.item, q.bits, q.typ = s.ItemID, s.U, s.Type
		}
		for _, t := range trigs {
			k := t.ID % nsh
			q.trigger = t.ID
			buckets[k] = append(buckets[k], q)
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
// the trigger wait for the pass, off the pipeline's commit path. A
// commit that does not fit, and every commit after it until a pass has
// caught up, goes to the backlog instead (backlogLocked).
func (sh *evalShard) queue(b []queuedEval) {
	ev := sh.ev
	sh.mu.Lock()
	if sh.backlogging || len(b) > ev.opts.MaxPending-len(sh.queued) {
		started := !sh.backlogging
		added := sh.backlogLocked(b)
		sh.mu.Unlock()
		ev.backlogged.Add(uint64(len(b)))
		ev.backlogGauge.Add(int64(added))
		if started {
			if others, ok := ev.throttle.Allow("backlog"); ok {
				ev.opts.Logger.Warn("trigger evaluation queue full: values are evaluated from the history store until the shard catches up (raise triggers.max_pending for more headroom)",
					"max_pending", ev.opts.MaxPending, "shard", sh.index, "others_suppressed", others)
			}
		}
	} else {
		sh.queued = append(sh.queued, b...)
		sh.mu.Unlock()
		ev.pendingGauge.Add(int64(len(b)))
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
// order, then its backlog (eval_backlog.go), until both are empty: the
// queue first, because while the shard is backlogged nothing new enters
// it, so what it holds was committed before anything in the backlog.
func (sh *evalShard) drain(ctx context.Context) {
	sh.passMu.Lock()
	defer sh.passMu.Unlock()
	for ctx.Err() == nil {
		sh.mu.Lock()
		q := sh.queued
		sh.queued, sh.spare = sh.spare[:0], nil
		sh.mu.Unlock()
		if len(q) > 0 {
			sh.ev.pendingGauge.Add(-int64(len(q)))
			sh.evalQueue(ctx, q)
			continue
		}
		sh.mu.Lock()
		if sh.spare == nil {
			sh.spare = q
		}
		sh.mu.Unlock()
		if !sh.drainBacklog(ctx) {
			return
		}
	}
}

// evalQueue evaluates the queued triggers q at every waiting time, in
// order: round r evaluates each trigger's r-th oldest time and hands the
// round's results to Process in one call (one commit), so a trigger's
// results reach the state machine in its values' order and a 1 followed
// by a 0 makes a problem and its recovery, however late the pass. No
// time is merged into another: a trigger with a thousand values waiting
// is evaluated a thousand times (the queue's bound, MaxPending, bounds
// the memory).
func (sh *evalShard) evalQueue(ctx context.Context, q []queuedEval) {
	ev := sh.ev
	start := time.Now()
	defer func() { ev.passSeconds.Observe(time.Since(start).Seconds()) }()
	q, sh.sorted = sortByTrigger(q, sh.sorted)
	snap := ev.opts.Snapshot()
	sh.reindex(snap)
	trigs := snap.Triggers()
	work := sh.work[:0]
	rounds, pos := 0, 0
	var queued uint64
	for i := 0; i < len(q); {
		// One trigger's values, in commit order (the sort is stable):
		// its distinct times, ascending, in place.
		id := q[i].trigger
		j := i + 1
		for j < len(q) && q[j].trigger == id {
			j++
		}
		times := q[i:j]
		if len(times) > 1 {
			times = distinctTimes(times)
		}
		i = j
		queued += uint64(len(times))
		pos = seekTrigger(trigs, pos, id)
		if pos == len(trigs) || trigs[pos].ID != id || !trigs[pos].Enabled {
			continue // deleted or disabled since the value was committed
		}
		t := &trigs[pos]
		work = append(work, evalJob{t: t, c: sh.compile(t, pos), times: times})
		rounds = max(rounds, len(times))
	}
	ev.queued.Add(queued)
	// Round 0 walks every job; active is the jobs with a time in the
	// next round, in trigger order, so that a backfill's long tail of
	// rounds walks only the triggers still in it (and the common pass,
	// one time per trigger, never builds it).
	active := sh.active[:0]
	for r := range rounds {
		if ctx.Err() != nil {
			break // stopping: what is left is not evaluated (Run)
		}
		results := sh.results[:0]
		if r == 0 {
			for i := range work {
				j := &work[i]
				if res, send := sh.evaluateCompiled(ctx, snap, j.t, j.c, time.Unix(0, j.times[0].ts), &j.times[0]); send {
					results = append(results, res)
				}
				if len(j.times) > 1 {
					active = append(active, int32(i))
				}
			}
		} else {
			n := 0
			for _, i := range active {
				j := &work[i]
				if res, send := sh.evaluateCompiled(ctx, snap, j.t, j.c, time.Unix(0, j.times[r].ts), &j.times[r]); send {
					results = append(results, res)
				}
				if len(j.times) > r+1 {
					active[n] = i
					n++
				}
			}
			active = active[:n]
		}
		ev.process(snap, results, "value")
		clear(results)
		sh.results = results[:0]
	}
	sh.active = active[:0]
	clear(work)
	sh.work = work[:0]
	clear(q)
	sh.mu.Lock()
	if sh.spare == nil {
		sh.spare = q[:0]
	}
	sh.mu.Unlock()
}

// distinctTimes sorts one trigger's queued evaluations by time (they
// come in commit order, ascending but for values of other pipeline
// shards or senders' clocks) and keeps one per distinct time, in place:
// values with the same timestamp are one evaluation, since a history
// read as of that nanosecond sees them all.
func distinctTimes(seg []queuedEval) []queuedEval {
	if !slices.IsSortedFunc(seg, cmpTime) {
		slices.SortStableFunc(seg, cmpTime)
	}
	n := 1
	for k := 1; k < len(seg); k++ {
		if seg[k].ts != seg[n-1].ts {
			seg[n] = seg[k]
			n++
		} else {
			seg[n-1].item = 0 // several values: read them
		}
	}
	return seg[:n]
}

func cmpTime(a, b queuedEval) int { return cmp.Compare(a.ts, b.ts) }

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

// evalJob is one trigger of a pass, compiled, with its evaluation times
// (distinct, ascending).
type evalJob struct {
	t     *catalog.Trigger
	c     *compiled
	times []queuedEval
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
		if r, send := sh.evaluateCompiled(ctx, snap, t, sh.compile(t, int(i)), now, nil); send {
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
	if c.err == nil && t.RecoveryMode != catalog.RecoverRecoveryExpression {
		c.last, _ = c.e.LastComparison()
	}
	if c.err == nil && t.RecoveryMode == catalog.RecoverRecoveryExpression {
		c.recovery, c.err = expr.Parse(t.RecoveryExpression)
		if c.err != nil {
			c.err = fmt.Errorf("recovery expression: %w", c.err)
		}
	}
	sh.compiledAt[pos] = c
	return c
}

// evaluateCompiled evaluates t, whose parsed expressions are c, at now;
// q, when not nil, is the queued value that caused it (queuedEval.known).
// It reads shared state only; the shard's reused source is its own. send
// is false for a result that would change nothing (OK on a settled
// trigger, see Machine.Settled): the pass leaves it out of Process.
func (sh *evalShard) evaluateCompiled(ctx context.Context, snap *catalog.Snapshot, t *catalog.Trigger, c *compiled, now time.Time, q *queuedEval) (r Result, send bool) {
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
	if c.last.Ref.Key != "" && c.lastSnap != snap {
		// Resolved once per snapshot, as an evaluation resolves it
		// (src.Item, memoised).
		c.lastItem, c.lastSnap = 0, snap
		if it, err := src.Item(c.last.Ref); err == nil && it != nil {
			c.lastItem = it.ID
		}
	}
	src.Reuse = true // its buffer is the shard's; the results are done with before the next read
	src.Known = nil
	if q != nil && q.known(&sh.known) {
		src.Known = &sh.known
	}
	var v expr.Value
	var opt expr.Options // set for Eval: the recovery expression's too
	if src.Known != nil && c.lastItem != 0 && c.lastItem == src.Known.ItemID && c.recovery == nil {
		// last(/host/key) OP N at the value that queued it: the value
		// is the one last() would read (StoreSource.Known), and no
		// macro can take part; the same result as Eval, without it.
		v = c.last.Eval(src.Known)
	} else {
		opt = expr.Options{Now: now, Location: ev.opts.Location, Source: src, Started: ev.opts.Started, Macros: c.macros}
		if len(t.HostIDs) > 1 || ev.opts.Macros != nil {
			// Several hosts (Zabbix's per-function and all-hosts scopes) or
			// an embedder's resolver: hostmacros.go. Rare, so not cached.
			ev.setUserMacros(&opt, snap, t, src)
		}
		v = c.e.Eval(ctx, opt)
	}
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
	r, _ := sh.evaluateCompiled(ctx, snap, t, sh.compile(t, pos), now, nil)
	return r, true
}
