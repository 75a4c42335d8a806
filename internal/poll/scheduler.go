package poll

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// Catalog is what the scheduler needs of the catalog: the current
// snapshot and a signal after each swap (*catalog.Catalog has both).
type Catalog interface {
	Snapshot() *catalog.Snapshot
	Subscribe() <-chan struct{}
}

// SubmitFunc stores converted values and returns once they are durable
// (the pipeline's Submit with a fresh ticket); the same path as trapper
// values. It may block (back-pressure): the scheduler calls it from its
// result workers, never from its loop.
type SubmitFunc func(samples []history.Sample) error

// CheckerSpec is one item type's checker and its own in-flight bound.
type CheckerSpec struct {
	Checker Checker
	// MaxInFlight bounds this type's checks in flight (0: only the
	// global bound applies).
	MaxInFlight int
	// NoInterface: items of this type are checked without a host
	// interface (Zabbix internal items); their checks have no Addr and
	// InterfaceID 0, and no availability is kept for them.
	NoInterface bool
	// NoAvailability: items of this type are checked through their
	// interface (its address) but neither change its availability nor
	// wait while it is unreachable: Zabbix keeps availability for agent,
	// SNMP, IPMI and JMX items only, and a simple check's "down" (an
	// icmpping of 0) is its value, not an interface error.
	NoAvailability bool
}

// Options configures a Scheduler.
type Options struct {
	Catalog Catalog
	Submit  SubmitFunc
	// ItemStates receives item states (not supported, and back to normal)
	// and interface availability. Required.
	ItemStates *itemstate.Registry
	// Checkers maps each polled item type to its checker.
	Checkers map[catalog.ItemType]CheckerSpec
	// MaxInFlight bounds the checks of all types in flight together,
	// counted from hand-over to the checker until the result is stored.
	// Default 10000.
	MaxInFlight int
	// MaxInFlightBehind bounds the checks in flight while this process
	// is behind (see inflight.go); 0: adaptive, the checks it completed
	// in the last second scaled to a third of DefaultTimeout (at least
	// 1,000). Never above MaxInFlight.
	MaxInFlightBehind int
	// MaxBatch is the most checks handed to a checker in one call.
	// Default 512.
	MaxBatch int
	// DefaultTimeout is an item's timeout when it has none. Default 3s.
	DefaultTimeout time.Duration
	// Availability, as Zabbix's UnreachablePeriod, UnreachableDelay and
	// UnavailableDelay (defaults 45s, 15s, 60s): after a network error an
	// interface's checks wait UnreachableDelay, then one probes it; after
	// UnreachablePeriod of failures it is unavailable and probed once per
	// UnavailableDelay.
	UnreachablePeriod time.Duration
	UnreachableDelay  time.Duration
	UnavailableDelay  time.Duration
	// StampTolerance: a value received within this of its scheduled time
	// (either side) is stamped at that time, not at its receive time
	// (history.SnapStamp): the jitter of a check's round trip carries no
	// information, and a series on its grid then compresses to a constant
	// delta. 0 (the zero value) stamps every value with its receive time;
	// the server passes poll.timestamp_tolerance (2ms by default).
	StampTolerance time.Duration
	// Lag tells how far this process was behind during a check (see
	// Lag and postponed); default: a LagMeter run by Run.
	Lag Lag
	// Now is the clock (tests); default time.Now.
	Now     func() time.Time
	Metrics *selfmon.Registry
	Logger  *slog.Logger
}

// DefaultOptions returns the defaults of every tunable.
func DefaultOptions() Options {
	return Options{
		MaxInFlight: 10000, MaxBatch: 512, DefaultTimeout: 3 * time.Second,
		UnreachablePeriod: 45 * time.Second, UnreachableDelay: 15 * time.Second, UnavailableDelay: 60 * time.Second,
	}
}

func (o *Options) ensureDefaults() error {
	if o.Catalog == nil || o.Submit == nil || o.ItemStates == nil {
		return errors.New("poll: Options.Catalog, Submit and ItemStates are required")
	}
	d := DefaultOptions()
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = d.MaxInFlight
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = d.MaxBatch
	}
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = d.DefaultTimeout
	}
	if o.UnreachablePeriod <= 0 {
		o.UnreachablePeriod = d.UnreachablePeriod
	}
	if o.UnreachableDelay <= 0 {
		o.UnreachableDelay = d.UnreachableDelay
	}
	if o.UnavailableDelay <= 0 {
		o.UnavailableDelay = d.UnavailableDelay
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = selfmon.NewRegistry()
	}
	return nil
}

// entry is one scheduled item. Entries belong to the loop goroutine.
type entry struct {
	t  target
	iv delay.Interval
	// next is the next check in unix milliseconds: the item's Zabbix grid
	// second plus its spread within that second (see spreadMs).
	next     int64
	idx      int // index in its type's heap, -1 when not in it
	inFlight bool
	probe    bool // the one check probing an interface in error
	gone     bool // left the catalog while in flight
	again    bool // CheckNow while in flight: check once more at once
	// requeued: postponed because the server was behind (its next is
	// still the due time it missed): its missed intervals are counted
	// once, when it first went out.
	requeued bool
	// retry is set while a trigger of the item is soft (SetRetry): the
	// item is checked every t.retry seconds instead of on its grid.
	retry bool
	// lane is the lane whose heap holds the entry or on which it is in
	// flight; after a type change it differs from laneOf[t.typ] until
	// the check in flight comes back.
	lane *lane
}

// lane is one item type: its checker, its heap of waiting entries and
// its in-flight count.
type lane struct {
	typ      catalog.ItemType
	spec     CheckerSpec
	heap     schedHeap
	inFlight int
	batch    []Check
}

// completion is a finished check on its way back to the loop, after its
// value was stored.
type completion struct {
	id     uint64
	iface  uint64
	status Status
	err    string
	clock  int64
	// postponed: a network error while the server was behind (see
	// Scheduler.behind); says nothing of the interface.
	postponed bool
}

// Scheduler schedules and runs the checks of polled items. Run drives
// it; CheckNow and Queue may be called from any goroutine.
type Scheduler struct {
	opts  Options
	types map[catalog.ItemType]bool

	// Loop state: owned by the goroutine running the loop.
	snap     *catalog.Snapshot
	items    map[uint64]*entry
	lanes    []*lane
	laneOf   map[catalog.ItemType]*lane
	ifaces   map[uint64]*ifaceState
	inFlight int
	lastQ    int64
	stopping atomic.Bool // Run is shutting down: abandoned checks are coming back (read by the workers)
	lag      Lag
	lagMeter *LagMeter         // the default Lag, run by Run
	badSeen  map[uint64]string // items that cannot be scheduled, and why
	// lateScratch is computeQueue's fine count, kept between seconds.
	lateScratch []int64
	// targetsFn lists a snapshot's polled items: targetsOf, replaced by
	// unit tests that need interfaces the test catalog cannot hold.
	targetsFn func(*catalog.Snapshot) []target

	// Hand-over between goroutines: results from checkers to the
	// workers, completions and check-now requests to the loop.
	mu       sync.Mutex
	results  []*Result
	comps    []completion
	nowReqs  []uint64
	retryReq []retryReq
	wakeLoop chan struct{} // 1-buffered: "the loop has something to do"
	wakeWork chan struct{} // 1-buffered: "results are waiting"

	ctx           context.Context
	accept        pipeline.Types
	throttle      *selfmon.LogThrottle
	queue         queueGauge
	inFlightGauge atomic.Int64
	inFlightPeak  atomic.Int64 // highest in-flight count since TakeInFlightPeak
	limit         inFlightLimit
	limitGauge    atomic.Int64 // the in-flight bound in effect
	itemsGauge    atomic.Int64
	m             *metrics
}

// New returns a Scheduler; Run starts it.
func New(opts Options) (*Scheduler, error) {
	if err := opts.ensureDefaults(); err != nil {
		return nil, err
	}
	s := &Scheduler{
		opts:     opts,
		types:    map[catalog.ItemType]bool{},
		items:    map[uint64]*entry{},
		laneOf:   map[catalog.ItemType]*lane{},
		ifaces:   map[uint64]*ifaceState{},
		badSeen:  map[uint64]string{},
		wakeLoop: make(chan struct{}, 1),
		wakeWork: make(chan struct{}, 1),
		ctx:      context.Background(),
	}
	for typ, spec := range opts.Checkers {
		if spec.Checker == nil {
			return nil, fmt.Errorf("poll: no checker for item type %s", typ)
		}
		l := &lane{typ: typ, spec: spec}
		s.lanes = append(s.lanes, l)
		s.laneOf[typ] = l
		s.types[typ] = true
		s.accept |= pipeline.TypesOf(typ)
	}
	s.throttle = selfmon.NewLogThrottle(opts.Logger, time.Minute)
	s.lag = opts.Lag
	if s.lag == nil {
		s.lagMeter = NewLagMeter()
		s.lag = s.lagMeter
	}
	noIface := map[catalog.ItemType]bool{}
	for typ, spec := range opts.Checkers {
		noIface[typ] = spec.NoInterface
	}
	s.targetsFn = func(snap *catalog.Snapshot) []target { return targetsOf(snap, s.types, noIface, opts.DefaultTimeout) }
	s.limitGauge.Store(int64(opts.MaxInFlight))
	s.m = newMetrics(opts.Metrics, s)
	if s.lagMeter != nil {
		opts.Metrics.CounterFunc("peregrine_poll_lag_seconds_total", "Scheduling lag this process measured: how much later than asked a goroutine sleeping 20 ms at a time woke (the wait of a runnable goroutine for a CPU).",
			func() float64 { return s.lagMeter.Total().Seconds() })
	}
	return s, nil
}

// Run polls until ctx is done, then stops handing out checks, waits for
// the checks in flight (each bounded by its timeout; checkers abandon
// them when ctx ends) and stores their results. Submit must keep working
// until Run returns.
//
// Run is called once.
func (s *Scheduler) Run(ctx context.Context) error {
	sub := s.opts.Catalog.Subscribe()
	checkCtx, cancelChecks := context.WithCancel(context.Background())
	defer cancelChecks()
	s.ctx = checkCtx
	var workers sync.WaitGroup
	workCtx, stopWork := context.WithCancel(context.Background())
	if s.lagMeter != nil {
		workers.Add(1)
		go func() { defer workers.Done(); s.lagMeter.Run(workCtx) }()
	}
	for i := 0; i < max(2, runtime.GOMAXPROCS(0)); i++ {
		workers.Add(1)
		go func() { defer workers.Done(); s.work(workCtx) }()
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for ctx.Err() == nil {
		now := s.opts.Now()
		turn := time.Now() // not opts.Now: tests fix that clock
		wake := s.step(now)
		s.m.busy.Since(turn)
		d := time.UnixMilli(wake).Sub(now)
		d = max(d, 0)
		timer.Reset(d)
		select {
		case <-ctx.Done():
		case <-timer.C:
		case <-s.wakeLoop:
		case <-sub:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
	// Shut down: no new checks; abandon those in flight; keep draining
	// until every one has come back.
	cancelChecks()
	s.stopping.Store(true)
	for {
		s.drainCompletions(s.opts.Now())
		if s.inFlight == 0 {
			break
		}
		<-s.wakeLoop
	}
	// The gauge is otherwise set by step: without this, checks that came
	// back during the drain would still show in flight after Run.
	s.inFlightGauge.Store(int64(s.inFlight))
	stopWork()
	workers.Wait()
	return nil
}

// wake signals the loop without blocking.
func (s *Scheduler) wake() {
	select {
	case s.wakeLoop <- struct{}{}:
	default:
	}
}

// done is the callback checkers report results through.
func (s *Scheduler) done(r *Result) {
	s.mu.Lock()
	s.results = append(s.results, r)
	s.mu.Unlock()
	select {
	case s.wakeWork <- struct{}{}:
	default:
	}
}

// step is one turn of the loop at time now: take back finished checks,
// follow a catalog swap, hand out the due checks. It returns the unix
// millisecond at which the loop must run again at the latest.
func (s *Scheduler) step(now time.Time) int64 {
	sec, ms := now.Unix(), now.UnixMilli()
	s.drainCompletions(now)
	if snap := s.opts.Catalog.Snapshot(); snap != s.snap {
		s.reconcile(snap, now)
	}
	s.takeCheckNow(ms)
	s.takeRetry(sec)
	s.updateLimit(now)
	wake := ms + 60_000
	for _, l := range s.lanes {
		s.dispatch(l, now)
		if len(l.heap) > 0 && !s.full(l) {
			wake = min(wake, max(l.heap[0].next, ms+1))
		}
	}
	s.inFlightGauge.Store(int64(s.inFlight))
	s.itemsGauge.Store(int64(len(s.items)))
	if sec != s.lastQ {
		s.lastQ = sec
		s.computeQueue(ms)
	}
	return wake
}

// full reports whether lane l may not start another check now.
func (s *Scheduler) full(l *lane) bool {
	return s.inFlight >= s.opts.MaxInFlight || (l.spec.MaxInFlight > 0 && l.inFlight >= l.spec.MaxInFlight) ||
		(s.limit.limit > 0 && s.inFlight >= s.limit.limit)
}

// dispatch hands lane l's due checks to its checker in batches, as far
// as the in-flight bounds allow; the rest stay due (and count in the
// queue once 5 s late).
func (s *Scheduler) dispatch(l *lane, now time.Time) {
	sec, ms := now.Unix(), now.UnixMilli()
	for len(l.heap) > 0 && l.heap[0].next <= ms && !s.full(l) {
		e := l.heap.pop()
		if st := s.ifaces[e.t.ifaceID]; st != nil && st.inError() && !l.spec.NoAvailability {
			if sec < st.disableUntil || st.probing {
				// The interface is unreachable: this check waits for the
				// next probe (on the item's own grid, so deferred checks
				// stay spread) instead of costing a timeout.
				s.m.deferred.Inc()
				s.schedule(l, e, max(st.disableUntil, sec+1)-1)
				continue
			}
			st.probing, e.probe = true, true
		}
		if late := (ms - e.next) / 1000; e.iv.Main > 0 && late >= e.iv.Main && !e.requeued {
			// Whole intervals went by while the check waited (the server
			// was busy or stopped): count them, do not run them all.
			s.m.missed.Add(uint64(late / e.iv.Main))
		}
		e.inFlight, e.requeued = true, false
		l.inFlight++
		s.inFlight++
		l.batch = append(l.batch, Check{
			ItemID: e.t.id, HostID: e.t.hostID, InterfaceID: e.t.ifaceID,
			Key: e.t.key, Addr: e.t.addr, Timeout: e.t.timeout, Due: time.UnixMilli(e.next),
		})
		if len(l.batch) >= s.opts.MaxBatch {
			s.flush(l)
		}
	}
	s.flush(l)
	if s.limitHeld(l, ms) {
		s.m.limitHits.Inc()
	}
}

// flush hands lane l's batch to its checker. The checker may keep the
// slice, so a new one is started.
func (s *Scheduler) flush(l *lane) {
	if len(l.batch) == 0 {
		return
	}
	b := l.batch
	l.batch = make([]Check, 0, min(len(b), s.opts.MaxBatch))
	s.m.dispatched.Add(uint64(len(b)))
	sent := time.Now() // real time, as the checkers' result clocks and Lag
	for i := range b {
		b[i].Sent = sent
	}
	if n := int64(s.inFlight); n > s.inFlightPeak.Load() {
		s.inFlightPeak.Store(n) // the loop is the only writer but for the reset
	}
	l.spec.Checker.Check(s.ctx, b, s.done)
}

// spreadMs is an item's offset within the second of its grid point:
// Zabbix's grid has whole seconds, so items whose ids are equal modulo
// their delay share a second (10,000 items at 1 s all do); handing them
// out at the same instant opens thousands of connections at once, which
// queue in the kernel and add their wait to every check's latency. A
// multiplicative hash of the id spreads them over the second, the same
// offset every time (the schedule stays stable across restarts).
func spreadMs(id uint64) int64 { return int64((id * 0x9E3779B97F4A7C15 >> 32) % 1000) }

// schedule puts e back in lane l's heap at its next check after the unix
// second after.
func (s *Scheduler) schedule(l *lane, e *entry, after int64) {
	if e.retry && e.t.retry > 0 {
		e.next = (after+e.t.retry)*1000 + spreadMs(e.t.seed)
		e.lane = l
		l.heap.push(e)
		return
	}
	next, ok := e.iv.Next(e.t.seed, time.Unix(after, 0))
	if !ok {
		e.next = 0
		return // never within a year: left out until the catalog changes
	}
	e.next = next.Unix()*1000 + spreadMs(e.t.seed)
	e.lane = l
	l.heap.push(e)
}

// drainCompletions takes back the checks whose results were stored:
// availability, then the item's next check.
func (s *Scheduler) drainCompletions(now time.Time) {
	s.mu.Lock()
	comps := s.comps
	s.comps = nil
	s.mu.Unlock()
	sec := now.Unix()
	for _, c := range comps {
		e := s.items[c.id]
		if e == nil || !e.inFlight {
			continue // not reached: every completion is of an entry in flight
		}
		e.inFlight = false
		e.lane.inFlight--
		s.inFlight--
		l := s.laneOf[e.t.typ]
		s.m.results[c.status].Inc()
		if !c.postponed {
			s.limit.done++
		}
		if c.postponed {
			// The server was behind, not the target: the interface is
			// not blamed, and the check goes out again as soon as there
			// is room, still due when it was (so the queue shows it).
			if e.probe {
				if st := s.ifaces[c.iface]; st != nil {
					st.probing = false
				}
			}
			e.probe = false
			if e.gone {
				delete(s.items, c.id)
				continue
			}
			e.again, e.requeued, e.lane = false, true, l
			l.heap.push(e)
			continue
		}
		if (!s.stopping.Load() || c.status != NetworkError) && !e.lane.spec.NoAvailability {
			// Checks abandoned by a stop say nothing of the interface.
			s.availability(c, e.probe, sec)
		}
		e.probe = false
		if e.gone {
			delete(s.items, c.id)
			continue
		}
		if e.again {
			e.again = false
			e.next, e.lane = now.UnixMilli(), l
			l.heap.push(e)
			continue
		}
		after := sec
		if e.retry && c.clock > 0 && c.clock < sec {
			// The retry interval counts from the check, not from when
			// its value was stored.
			after = c.clock
		}
		s.schedule(l, e, after)
	}
}

// reconcile follows a catalog swap: new items are scheduled from now on
// their grid, items whose delay changed are rescheduled, unchanged items
// keep their next check, items that left (deleted, disabled, host not
// monitored, type changed) are dropped.
func (s *Scheduler) reconcile(snap *catalog.Snapshot, now time.Time) {
	s.snap = snap
	sec := now.Unix()
	targets := s.targetsFn(snap)
	seen := make(map[uint64]bool, len(targets))
	ifaces := map[uint64]bool{}
	bad := map[uint64]string{}
	for i := range targets {
		t := &targets[i]
		why := t.bad
		if why == "" {
			iv, err := delay.Parse(t.delay)
			if err == nil {
				s.upsert(t, iv, sec)
				seen[t.id] = true
				ifaces[t.ifaceID] = true
				continue
			}
			why = "invalid update interval: " + err.Error()
		}
		bad[t.id] = why
	}
	var forgetItems []uint64
	for id, e := range s.items {
		if seen[id] {
			continue
		}
		if e.inFlight {
			e.gone = true
		} else {
			if e.idx >= 0 {
				e.lane.heap.remove(e)
			}
			delete(s.items, id)
		}
		if bad[id] == "" {
			forgetItems = append(forgetItems, id)
		}
	}
	var forgetIfaces []uint64
	for id := range s.ifaces {
		if !ifaces[id] {
			delete(s.ifaces, id)
			forgetIfaces = append(forgetIfaces, id)
		}
	}
	// An item that cannot be scheduled is not supported, saying why
	// (Zabbix does the same for an invalid interval); state is set once
	// per change, not per swap.
	for id, why := range bad {
		if s.badSeen[id] != why {
			s.opts.ItemStates.SetItemState(id, itemstate.Item{NotSupported: true, Error: why, Clock: sec})
			s.m.badItems.Inc()
			if n, ok := s.throttle.Allow("item:unschedulable"); ok {
				s.opts.Logger.Warn("item cannot be polled; it is not supported until fixed", "itemid", id, "err", why, "others_suppressed", n)
			}
		}
	}
	for id := range s.badSeen {
		if _, still := bad[id]; !still {
			if seen[id] {
				s.opts.ItemStates.SetItemState(id, itemstate.Item{}) // fixed: normal until checked
			} else {
				forgetItems = append(forgetItems, id) // gone, bad to the end
			}
		}
	}
	s.badSeen = bad
	s.opts.ItemStates.Forget(forgetItems, forgetIfaces)
}

// upsert adds or updates the entry of t.
func (s *Scheduler) upsert(t *target, iv delay.Interval, sec int64) {
	l := s.laneOf[t.typ]
	e := s.items[t.id]
	if e != nil && e.t.typ != t.typ {
		// Another checker now: the new lane's heap, from now (a check in
		// flight comes back to its old lane first).
		if e.idx >= 0 {
			e.lane.heap.remove(e)
		}
		e.gone, e.t, e.iv = false, *t, iv
		if !e.inFlight {
			s.schedule(l, e, sec)
		}
		return
	}
	if e == nil {
		e = &entry{t: *t, iv: iv, idx: -1}
		s.items[t.id] = e
		s.schedule(l, e, sec)
		return
	}
	e.gone = false
	changed := e.t.delay != t.delay
	e.t, e.iv = *t, iv
	if changed {
		if e.idx >= 0 {
			l.heap.remove(e)
		}
		if !e.inFlight {
			s.schedule(l, e, sec)
		}
	}
}

// Busy is the loop's busy time (see selfmon.Busy; one goroutine).
func (s *Scheduler) Busy() *selfmon.Busy { return s.m.busy }

// TakeInFlightPeak returns the highest number of checks in flight since
// the previous call (or the start) and starts a new period. Safe from any
// goroutine; the peak is taken at each hand-over to a checker, so short
// bursts that a scrape would miss are caught.
func (s *Scheduler) TakeInFlightPeak() int { return int(s.inFlightPeak.Swap(0)) }

// ErrNotPolled is wrapped by CheckNow's error for an item the scheduler
// does not poll.
var ErrNotPolled = errors.New("item is not polled by the server")

// CheckNow asks for one check of each item as soon as possible (Zabbix
// task.create type 6). Every item must be an enabled item of a polled
// type on a monitored host with an interface; otherwise nothing is
// scheduled and the error names the first that is not. It does not wait.
func (s *Scheduler) CheckNow(itemIDs []uint64) error {
	snap := s.opts.Catalog.Snapshot()
	for _, id := range itemIDs {
		it := snap.Item(id)
		switch {
		case it == nil:
			return fmt.Errorf("item %d: no such item: %w", id, ErrNotPolled)
		case !s.types[it.Type]:
			return fmt.Errorf("item %d is of type %s, which the server does not poll: %w", id, it.Type, ErrNotPolled)
		case !it.Enabled:
			return fmt.Errorf("item %d is disabled: %w", id, ErrNotPolled)
		case it.Host != nil && !it.Host.Enabled:
			return fmt.Errorf("item %d: its host is not monitored: %w", id, ErrNotPolled)
		case it.Host != nil && it.Host.ProxyID != 0:
			return fmt.Errorf("item %d: its host is monitored by a proxy: %w", id, ErrNotPolled)
		}
	}
	s.mu.Lock()
	s.nowReqs = append(s.nowReqs, itemIDs...)
	s.mu.Unlock()
	s.wake()
	return nil
}

// retryReq is one SetRetry request.
type retryReq struct {
	id uint64
	on bool
}

// SetRetry puts items into (on) or out of their retry interval: while
// a trigger of theirs is in a soft state (trigger.Options.OnSoft) they
// are checked every Item.RetryDelay instead of their interval, as Nagios
// re-checks a service in a soft state. Items without a retry interval,
// or not polled, are left alone. It does not wait. An item with several
// soft triggers follows the last request.
func (s *Scheduler) SetRetry(itemIDs []uint64, on bool) {
	s.mu.Lock()
	for _, id := range itemIDs {
		s.retryReq = append(s.retryReq, retryReq{id, on})
	}
	s.mu.Unlock()
	s.wake()
}

// takeRetry applies SetRetry requests: an item entering its retry
// interval is due within that interval from now (sooner if its next
// check is sooner); one leaving it goes back to its grid.
func (s *Scheduler) takeRetry(sec int64) {
	s.mu.Lock()
	reqs := s.retryReq
	s.retryReq = nil
	s.mu.Unlock()
	for _, r := range reqs {
		e := s.items[r.id]
		if e == nil || e.t.retry == 0 || e.retry == r.on {
			continue
		}
		e.retry = r.on
		if e.idx < 0 || e.inFlight {
			continue // scheduled as it comes back
		}
		if r.on {
			if next := (sec+e.t.retry)*1000 + spreadMs(e.t.seed); next < e.next {
				e.next = next
				e.lane.heap.fix(e.idx)
			}
			continue
		}
		l := e.lane
		l.heap.remove(e)
		s.schedule(l, e, sec)
	}
}

// takeCheckNow moves the requested items to the front of their heaps.
func (s *Scheduler) takeCheckNow(ms int64) {
	s.mu.Lock()
	ids := s.nowReqs
	s.nowReqs = nil
	s.mu.Unlock()
	for _, id := range ids {
		e := s.items[id]
		switch {
		case e == nil:
			// Not scheduled yet (the swap that adds it is on its way) or
			// not schedulable: nothing to hurry.
		case e.inFlight:
			e.again = true
		case e.idx >= 0:
			e.next = ms
			e.lane.heap.fix(e.idx)
		}
	}
}
