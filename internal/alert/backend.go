package alert

import (
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// recordLog is where the alert log's records go: a WAL in Options.Dir
// (embedded) or a table in PostgreSQL whose every write the HA lease
// fences (Options.Postgres, package pglog). The logStore's logic
// (replay, upserts, checkpoints) is the same over both.
type recordLog interface {
	Replay(fn func(rec []byte) error) error
	// Cut marks the log: every record acknowledged before it is at or
	// before the mark, every later one after it.
	Cut() (int64, error)
	AppendAsync(rec []byte) waiter
	// Truncate deletes the records before the mark (a checkpoint after
	// it made them redundant).
	Truncate(mark int64) error
	Close() error
}

type waiter interface{ Wait() error }

// walLog is the embedded log: marks are segment indexes.
type walLog struct{ w *wal.WAL }

func (l walLog) Replay(fn func([]byte) error) error { return l.w.Replay(fn) }
func (l walLog) Cut() (int64, error) {
	idx, err := l.w.Cut()
	return int64(idx), err
}
func (l walLog) AppendAsync(rec []byte) waiter { return l.w.AppendAsync(rec) }
func (l walLog) Truncate(mark int64) error     { return l.w.Truncate(int(mark)) }
func (l walLog) Close() error                  { return l.w.Close() }

// pgAlertLog is the PostgreSQL log, table alert_log, one part: marks
// are the newest stored seq, and Truncate deletes the rows at or below
// it.
type pgAlertLog struct{ l *pglog.Log }

func (l pgAlertLog) Replay(fn func([]byte) error) error { return l.l.Replay("", fn) }
func (l pgAlertLog) Cut() (int64, error)                { return l.l.Mark() }
func (l pgAlertLog) AppendAsync(rec []byte) waiter      { return l.l.AppendAsync("", rec) }
func (l pgAlertLog) Truncate(mark int64) error          { return l.l.DeleteThrough(mark) }
func (l pgAlertLog) Close() error                       { return l.l.Close() }
