// Package event is Peregrine's event store: trigger events (problems and
// the OK events that resolve them), auto-registration and internal
// events (sources 2 and 3: kept and read by event.get, never in the
// open-problem index; an internal OK event sets its problem's
// REventID), acknowledge actions and trigger
// runtime (value, state, error, last change), appended to day-partitioned
// logs. The format is specified in docs/format/events.md.
//
// # What it owns
//
//   - The directory Options.Dir: one write-ahead log per UTC day
//     (internal/wal framing and fsync policies), each
//     starting with a carry record of the open problems and trigger
//     runtimes so that older days can be deleted whole. Or, with
//     Options.Postgres (state.store: postgres), the same records as rows
//     of table event_log in PostgreSQL, their day as the row's part,
//     every write checking the HA lease in its own transaction: a node
//     that lost its lease commits nothing. Package daylog places the
//     records either way; the store's logic is the same over both.
//   - Durability: Commit returns nil only once its batch is durable under
//     the fsync policy (Options.Sync, the history WAL's), so an event is
//     acknowledged to its producer only then. In PostgreSQL: once
//     the transaction holding it committed.
//   - ID assignment: event and acknowledge IDs increase and are never
//     reused, also after old days are deleted.
//   - The in-memory state rebuilt by replay at Open: every retained
//     event, the open problems indexed by event ID, by trigger and in ID
//     order (so OpenProblems costs O(open problems), and ScanOpen walks
//     them newest or oldest first without copying, for problem.get to
//     stop at its limit; ScanEventsDesc walks every retained event
//     newest first by ID, for event.get's "the newest events"),
//     acknowledge actions per event, trigger runtimes.
//   - Event correlation's part of a commit: an OK event naming its cause
//     (Event.Cause, the new problem earlier in the same batch) gets its
//     ID as CEventID and, for "close new event", resolves it, so a new
//     problem and all its correlation closed are one record;
//     CorrelationID and NoAction are stored with the event, and the
//     rule becomes the closed problem's CorrelationID.
//   - The tag index of open problems (tagindex.go: OpenTagged,
//     OpenTaggedValue), for correlation's old-event conditions: built
//     at the first query, maintained by every commit from then on,
//     freed by DropTagIndex; without correlation rules it does not
//     exist and costs nothing.
//   - Suppression changes (Batch.Suppress): a maintenance starting or
//     ending over an open problem sets or clears its Suppressed flag;
//     replayed, and carried into new days with the problem.
//   - Retention: ApplyRetention (and Run, periodically) deletes day
//     directories older than Options.Retention; nothing is rewritten.
//   - A follower (OpenFollower, follow.go: an HA standby's events): the
//     store read from PostgreSQL without writing, Follow applying what
//     the active node committed since, in commit order, and forgetting
//     the days its retention deleted; Commit fails with ErrReadOnly.
//
// # What it does not own
//
// Deciding which events to make (package trigger's state machine and
// its event correlation) and
// which problems are suppressed (package maintenance), who may
// read them (the API), and actions or notifications. Event.get-style reads
// scan all retained events in memory: memory grows with the events kept
// (about 200 bytes an event plus its strings), which suits the volumes of
// trigger events, not of history.
//
// # Concurrency contract
//
// All methods may be called from any number of goroutines. Commits are
// serialised for ID assignment and logging (one WAL append each, group
// committed by the WAL across concurrent callers) and applied to memory
// in log order; readers take a read lock and get copies. Lock order:
// Store.wmu, then Store.mu; neither is held while waiting for an fsync,
// except that a day rollover holds wmu while it closes the old day.
package event
