// Package housekeep is the housekeeping stage: the scheduled work that
// keeps the history store bounded, apart from the path values take.
//
// It runs two loops:
//   - flush: every second (or a quarter of the flush interval, if
//     shorter) it checks whether the store's head is due to be written
//     out: the flush interval has passed since the last flush, or the head
//     holds MaxHeadValues values. That bounds the head's memory and the
//     write-ahead log a restart replays.
//   - retention: at start and then every CheckInterval it drops history
//     and trends partitions older than the longest retention of any item,
//     then compacts finished periods, applying each item's own (shorter)
//     retention on the way. Dropping comes first so that compaction never
//     rewrites data that is about to go.
//
// Besides the loops, FlushNow (ondemand.go) flushes and compacts on an
// operator's demand (the API's history.flush), the current day included
// when the store implements history.NowCompactor; one at a time.
//
// What it owns: the schedule, the error handling (a failure is counted,
// logged with its context at most once per minute per task, and retried
// at the next run; nothing is lost, the store keeps what it could not
// write or drop) and the housekeeping metrics. What it does not own: how
// a store flushes, drops or compacts. It finds those through the optional
// interfaces history.Flusher, history.Dropper and history.Compactor on the
// Store it is given, and skips what the store does not implement (the
// memory store implements none, so its housekeeper does nothing).
// Retention comes from the caller as a function, read once per run, so
// that this package does not import the catalog.
//
// Why a package of its own, at the top of internal/ rather than under
// history/: it is a stage that consumes the store (and the catalog's
// retention) the way the pipeline does, not a part of a backend, and it
// is where Zabbix's housekeeper jobs that are not about history (expired
// sessions, old events and problems) will go.
//
// Runs that overrun their interval are not queued: the tickers drop the
// ticks, and the missed runs are counted.
//
// Concurrency: Run starts the loops and returns when ctx is done or Stop
// is called; Stop may be called from any goroutine, more than once.
// Flush and retention may overlap; the store serialises what must be
// (the engine holds one lock across a flush and a compaction).
package housekeep
