package history

import (
	"context"
	"time"
)

// Optional interfaces. A backend implements the ones that fit how it
// stores data; consumers (the API, the housekeeping stage) find them with
// a type assertion on the Store and skip what is missing. They live here,
// next to Store, so that no consumer needs to know a concrete backend:
// the embedded engine implements all of them, a ClickHouse backend would
// implement TrendReader, Dropper and (as a no-op or a merge) Compactor,
// and memstore implements none (it keeps everything until the process
// ends).

// Trend is one hour of one numeric item, the row of Zabbix's trends and
// trends_uint tables.
type Trend struct {
	Clock         int64 // start of the hour, unix seconds
	Num           int64 // values in the hour, at least 1
	Min, Max, Sum float64
}

// Avg is the hour's mean.
func (t Trend) Avg() float64 { return t.Sum / float64(t.Num) }

// TrendReader is a Store that keeps hourly trends.
type TrendReader interface {
	// ReadTrends returns item's trends for the hours starting in
	// [from, till] (unix seconds, inclusive), oldest first.
	ReadTrends(ctx context.Context, item uint64, from, till int64) ([]Trend, error)
}

// Flusher is a Store that buffers recent values in memory (a head backed
// by a write-ahead log) and writes them to long-term files in bulk. The
// caller decides when: the buffer's size bounds memory and the log a
// restart replays.
type Flusher interface {
	// Flush writes everything buffered so far. It MAY be called
	// concurrently with writes and reads; on error the buffered values
	// stay buffered (and logged), nothing is lost.
	Flush() error
	// HeadValues is the number of values written since the last
	// successful Flush.
	HeadValues() int64
}

// Dropper is a Store that applies retention by dropping whole time
// partitions, never single rows.
type Dropper interface {
	// DropBefore removes history partitions that end at or before cutoff
	// (unix seconds) and returns how many it removed. Reads in flight
	// finish on the data they hold.
	DropBefore(cutoff int64) (int, error)
	// DropTrendsBefore does the same for trends partitions.
	DropTrendsBefore(cutoff int64) (int, error)
}

// RetentionFunc returns an item's history retention in seconds (0 = keep
// no history); ok is false for an unknown item, whose data is kept as is.
type RetentionFunc func(item uint64) (seconds int64, ok bool)

// Compactor is a Store that rewrites finished periods into larger, better
// compressed partitions, applying each item's own retention on the way
// (retention shorter than the longest, which Dropper applies).
type Compactor interface {
	// Compact rewrites every period that ended before now and returns
	// how many it rewrote. retention may be nil (keep everything).
	Compact(ctx context.Context, now time.Time, retention RetentionFunc) (int, error)
}

// NowCompactor is a Compactor that can also compact the period in
// progress, on an operator's demand (before a backup, for a
// measurement): the period's later writes are compacted again with it
// when it ends.
type NowCompactor interface {
	// CompactNow is Compact including the current period.
	CompactNow(ctx context.Context, now time.Time, retention RetentionFunc) (int, error)
}

// WriteChecker is a Store that can tell, without writing, that a Write
// would fail now: its log failed and waits to write again, or its disk
// is full. The pipeline then refuses values before any shard writes
// (a request is refused whole), and /healthz reports not ready with
// the reason.
type WriteChecker interface {
	// WriteErr returns why writes are refused now, or nil. It MUST be
	// cheap (no I/O) and safe for concurrent use.
	WriteErr() error
}
