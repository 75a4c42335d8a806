package api

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// HistoryFlusher flushes the history store's head and compacts it on an
// operator's demand (the housekeeper, adapted by package server).
type HistoryFlusher interface {
	// FlushHistory writes the head out and, when compact, compacts every
	// day including the current one. It returns the values flushed, the
	// days compacted (-1 when not asked or the store has no
	// compaction) and how long it took; ErrFlushBusy while another
	// such run is in progress.
	FlushHistory(ctx context.Context, compact bool) (flushed int64, compacted int, took time.Duration, err error)
}

// ErrFlushBusy: an on-demand flush is already running.
var ErrFlushBusy = errors.New("busy")

// historyFlushParams are history.flush's params.
type historyFlushParams struct {
	// Compact asks for compaction after the flush, the current day
	// included.
	Compact opt[flexBool] `json:"compact"`
}

func (s *Server) registerHistoryFlush() {
	// A flush and compaction costs the store I/O for seconds: super
	// admins only, as Zabbix's runtime control is the server's owner's.
	s.methods["history.flush"] = &method{role: RoleSuperAdmin, call: s.historyFlush}
}

// historyFlush serves history.flush, Peregrine's extension (what other
// time-series stores call "force flush" and "force merge"; Zabbix, whose
// history is in SQL, has none): the head of the embedded history store
// written out now and, with "compact": true, every day compacted, the
// current one included, so that the data directory is at its smallest
// (before a backup, for a measurement of bytes per value). It answers
// {"flushed": "values", "compacted": "days" or "-1", "took": "seconds"}.
func (s *Server) historyFlush(ctx context.Context, c *call) (any, error) {
	var p historyFlushParams
	if err := decodeStrictObject(c.params, &p); err != nil {
		return nil, err
	}
	if s.opts.HistoryFlush == nil {
		return nil, errApp("The history store has nothing to flush.")
	}
	flushed, compacted, took, err := s.opts.HistoryFlush.FlushHistory(ctx, p.Compact.Value.v)
	switch {
	case errors.Is(err, ErrFlushBusy):
		return nil, errApp("A history flush is already running.")
	case err != nil:
		s.opts.Logger.Error("history.flush failed", "err", err)
		return nil, errApp("Cannot flush the history: %v", err)
	}
	return object{
		"flushed":   strconv.FormatInt(flushed, 10),
		"compacted": strconv.Itoa(compacted),
		"took":      strconv.FormatFloat(took.Seconds(), 'f', 3, 64),
	}, nil
}
