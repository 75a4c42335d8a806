package housekeep

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// OnDemand is what FlushNow did.
type OnDemand struct {
	// Flushed is the values the head held when the flush began.
	Flushed int64
	// Compacted is the periods (days) rewritten; -1 when compaction was
	// not asked for or the store has none.
	Compacted int
	// Took is how long it took.
	Took time.Duration
}

// ErrBusy: an on-demand flush is already running.
var ErrBusy = errors.New("a flush or compaction asked for on demand is already running")

// onDemandMu lets one on-demand run at a time per process: two at once
// would only queue on the store's flush lock.
var onDemandMu sync.Mutex

// FlushNow writes the head out at once and, when compact is set,
// compacts every day including the current one (the store's
// history.NowCompactor; else its finished days only), applying
// retention as the periodic run does. It is what operators of other
// time-series stores have as "force flush" and "force merge": the store
// at its smallest before a backup, or for a measurement of its size.
// It runs beside the periodic loops (the store serialises flushes and
// compactions itself) and returns ErrBusy while another on-demand run
// is in progress.
func (h *Housekeeper) FlushNow(ctx context.Context, compact bool) (OnDemand, error) {
	if !onDemandMu.TryLock() {
		return OnDemand{}, ErrBusy
	}
	defer onDemandMu.Unlock()
	start := time.Now()
	res := OnDemand{Compacted: -1}
	if h.flusher != nil {
		res.Flushed = h.flusher.HeadValues()
		if err := h.flusher.Flush(); err != nil {
			h.flushErrors.Inc()
			return res, err
		}
		h.flushes.Inc()
	}
	if compact && h.compactor != nil {
		compactFn := h.compactor.Compact
		if nc, ok := h.compactor.(history.NowCompactor); ok {
			compactFn = nc.CompactNow
		}
		n, err := compactFn(ctx, start, h.opts.Retention().Item)
		h.compacted.Add(uint64(n))
		res.Compacted = n
		if err != nil {
			h.retentionErrors.Inc()
			return res, err
		}
	}
	res.Took = time.Since(start)
	h.opts.Logger.Info("history flushed on demand", "values", res.Flushed, "compacted_periods", res.Compacted, "took", res.Took)
	return res, nil
}
