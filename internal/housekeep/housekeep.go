package housekeep

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Retention is the catalog's retention at one moment.
type Retention struct {
	// History and Trends are the longest history and trends retention
	// of any item, in seconds. 0 drops nothing: with no items, or none
	// that keeps data, the data on disk is kept rather than guessed away.
	History, Trends int64
	// Item returns one item's history retention, for compaction; nil
	// keeps every item's data as is.
	Item history.RetentionFunc
}

// Options configures a Housekeeper.
type Options struct {
	// Store is the history store; its optional interfaces say what there
	// is to do. Required.
	Store history.Store
	// Retention is called once per retention run. Required when Store
	// implements history.Dropper or history.Compactor.
	Retention func() Retention
	// FlushInterval is the longest time between flushes; MaxHeadValues
	// flushes sooner once the head holds that many values.
	FlushInterval time.Duration
	MaxHeadValues int64
	// CheckInterval is the time between retention runs.
	CheckInterval time.Duration
	// Metrics receives the counters; nil keeps them private.
	Metrics *selfmon.Registry
	Logger  *slog.Logger
}

// DefaultOptions returns the defaults for everything but Store and
// Retention (the same as the configuration's).
func DefaultOptions() Options {
	return Options{FlushInterval: 30 * time.Minute, MaxHeadValues: 20_000_000, CheckInterval: 10 * time.Minute}
}

func (o *Options) ensureDefaults() {
	d := DefaultOptions()
	if o.FlushInterval <= 0 {
		o.FlushInterval = d.FlushInterval
	}
	if o.MaxHeadValues <= 0 {
		o.MaxHeadValues = d.MaxHeadValues
	}
	if o.CheckInterval <= 0 {
		o.CheckInterval = d.CheckInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = selfmon.NewRegistry()
	}
}

// Housekeeper runs the flush and retention loops.
type Housekeeper struct {
	opts      Options
	flusher   history.Flusher   // nil: nothing to flush
	dropper   history.Dropper   // nil: no partition retention
	compactor history.Compactor // nil: no compaction
	throttle  *selfmon.LogThrottle

	lastFlush time.Time // flush loop only

	flushes, flushErrors      *selfmon.Counter
	droppedHistory, droppedTr *selfmon.Counter
	compacted                 *selfmon.Counter
	retentionErrors           *selfmon.Counter
	missed                    *selfmon.Counter
	// busy is the time the two loops spend flushing and applying
	// retention: zabbix[process,housekeeper,avg,busy].
	busy *selfmon.Busy

	stopOnce sync.Once
	stop     chan struct{}
}

// New returns a Housekeeper for opts.Store; Run starts it.
func New(opts Options) (*Housekeeper, error) {
	if opts.Store == nil {
		return nil, errors.New("housekeep: Options.Store is required")
	}
	opts.ensureDefaults()
	h := &Housekeeper{opts: opts, stop: make(chan struct{}), lastFlush: time.Now()}
	h.flusher, _ = opts.Store.(history.Flusher)
	h.dropper, _ = opts.Store.(history.Dropper)
	h.compactor, _ = opts.Store.(history.Compactor)
	if (h.dropper != nil || h.compactor != nil) && opts.Retention == nil {
		return nil, errors.New("housekeep: Options.Retention is required for a store that drops or compacts partitions")
	}
	h.throttle = selfmon.NewLogThrottle(opts.Logger, time.Minute)
	m := opts.Metrics
	h.flushes = m.Counter("peregrine_history_flushes_total", "Head flushes into block files that succeeded.")
	h.flushErrors = m.Counter("peregrine_history_flush_errors_total", "Head flushes that failed; the head and the WAL keep the values and the next check retries.")
	h.droppedHistory = m.Counter("peregrine_history_retention_dropped_total", "Partitions dropped by retention.", "kind", "history")
	h.droppedTr = m.Counter("peregrine_history_retention_dropped_total", "Partitions dropped by retention.", "kind", "trends")
	h.compacted = m.Counter("peregrine_history_compacted_periods_total", "Finished periods (days) rewritten by compaction.")
	h.retentionErrors = m.Counter("peregrine_history_housekeeping_errors_total", "Retention or compaction steps that failed; the data stays as it was and the next run retries.")
	h.missed = m.Counter("peregrine_history_housekeeping_missed_runs_total", "Retention runs skipped because the previous run overran the check interval.")
	h.busy = m.Busy("peregrine_history_housekeeping_busy_seconds_total", "Time the housekeeping loops (flush, retention) spent working, summed over both.", 2)
	return h, nil
}

// Busy is the housekeeper's busy time (see selfmon.Busy) over its two
// loops, flush and retention, whether or not the store needs both.
func (h *Housekeeper) Busy() *selfmon.Busy { return h.busy }

// Run runs the loops until ctx is done or Stop is called.
func (h *Housekeeper) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if h.flusher != nil {
		wg.Add(1)
		go func() { defer wg.Done(); h.flushLoop(ctx) }()
	}
	if h.dropper != nil || h.compactor != nil {
		wg.Add(1)
		go func() { defer wg.Done(); h.retentionLoop(ctx) }()
	}
	// Run lasts until told to stop even with nothing to do, so that a
	// caller's run group does not take an early return for a failure.
	select {
	case <-h.stop:
	case <-ctx.Done():
	}
	cancel()
	wg.Wait()
	return nil
}

// Stop ends Run; a run in progress finishes first.
func (h *Housekeeper) Stop() { h.stopOnce.Do(func() { close(h.stop) }) }

func (h *Housekeeper) flushLoop(ctx context.Context) {
	// Check often: MaxHeadValues is a memory bound, and reading a counter
	// costs nothing; the interval alone would let the head grow for
	// minutes past it.
	t := time.NewTicker(min(time.Second, h.opts.FlushInterval/4))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if h.flushIfDue(now) {
				h.busy.Since(now)
			}
		}
	}
}

// flushIfDue flushes when FlushInterval has passed since the last flush
// attempt or the head holds MaxHeadValues values, and reports whether it
// tried. A failed flush is retried at the next due check, not at once:
// a full disk would otherwise be hammered every second.
func (h *Housekeeper) flushIfDue(now time.Time) bool {
	if now.Sub(h.lastFlush) < h.opts.FlushInterval && h.flusher.HeadValues() < h.opts.MaxHeadValues {
		return false
	}
	h.lastFlush = now
	head := h.flusher.HeadValues()
	if err := h.flusher.Flush(); err != nil {
		h.flushErrors.Inc()
		h.logError("flush", "history flush failed; the head keeps the values and the WAL is kept", "head_values", head, "err", err)
		return true
	}
	h.flushes.Inc()
	return true
}

// logError logs a failure at most once a minute per key: a full disk
// fails every run the same way, and one line a minute (with the count of
// the ones suppressed) says as much as sixty.
func (h *Housekeeper) logError(key, msg string, args ...any) {
	n, ok := h.throttle.Allow(key)
	if !ok {
		return
	}
	if n > 0 {
		args = append(args, "suppressed", n)
	}
	h.opts.Logger.Error(msg, args...)
}

func (h *Housekeeper) retentionLoop(ctx context.Context) {
	// The first run is at start: a server that was down for a while has
	// partitions past their retention now, not in CheckInterval.
	t := time.NewTicker(h.opts.CheckInterval)
	defer t.Stop()
	for {
		start := time.Now()
		h.retain(ctx, start)
		h.busy.Since(start)
		// The ticker drops the ticks of an overrun; count them so that
		// an operator sees retention falling behind.
		if took := time.Since(start); took > h.opts.CheckInterval {
			h.missed.Add(uint64(took / h.opts.CheckInterval))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// retain runs one retention pass as of now: drop trends, drop history,
// compact.
func (h *Housekeeper) retain(ctx context.Context, now time.Time) {
	r := h.opts.Retention()
	log := h.opts.Logger
	if h.dropper != nil && r.Trends > 0 {
		cutoff := now.Unix() - r.Trends
		n, err := h.dropper.DropTrendsBefore(cutoff)
		h.droppedTr.Add(uint64(n))
		if err != nil {
			h.retentionErrors.Inc()
			h.logError("trends", "trends retention: cannot drop partitions; they stay until the next run", "cutoff", time.Unix(cutoff, 0).UTC(), "dropped", n, "err", err)
		} else if n > 0 {
			log.Info("trends retention dropped partitions", "partitions", n, "older_than", time.Unix(cutoff, 0).UTC())
		}
	}
	if h.dropper != nil && r.History > 0 {
		cutoff := now.Unix() - r.History
		n, err := h.dropper.DropBefore(cutoff)
		h.droppedHistory.Add(uint64(n))
		if err != nil {
			h.retentionErrors.Inc()
			h.logError("history", "history retention: cannot drop partitions; they stay until the next run", "cutoff", time.Unix(cutoff, 0).UTC(), "dropped", n, "err", err)
		} else if n > 0 {
			log.Info("history retention dropped partitions", "partitions", n, "older_than", time.Unix(cutoff, 0).UTC())
		}
	}
	if h.compactor != nil && ctx.Err() == nil {
		n, err := h.compactor.Compact(ctx, now, r.Item)
		h.compacted.Add(uint64(n))
		switch {
		case err != nil && ctx.Err() != nil:
			// Cancelled by shutdown: the unfinished period stays as its
			// sources, and the next start compacts it.
		case err != nil:
			h.retentionErrors.Inc()
			h.logError("compact", "history compaction failed; the partitions stay as they are", "compacted", n, "err", err)
		case n > 0:
			log.Info("history compacted", "periods", n)
		}
	}
}
