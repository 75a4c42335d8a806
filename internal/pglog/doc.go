// Package pglog is the record log the state stores keep in PostgreSQL
// when state.store is postgres (issue 31): an ordered sequence of opaque
// records in one table per store, each record in a part (a day for the
// event store, one part for the alert log), every write fenced by the
// HA lease.
//
// # What it owns
//
// Table Options.Table of schema Options.Schema (default
// peregrine_state): seq (an identity, the order of appends), part and
// rec; and that table's row in the schema's schema_version table. Open
// creates or upgrades the table in one fenced transaction behind an
// advisory lock and refuses a version newer than this binary.
//
// Every write (appends, deletes, migrations) runs inside
// Options.Write, which is (*ha.Lease).Write: the transaction checks the
// lease first and commits only while this node is the active one, so
// a node that lost its lease writes nothing and a refused group of
// records leaves no row. Reads (Parts, Replay, Mark) go to
// Options.Pool unfenced: a store replays after its node became active.
// OpenReader opens a log for an HA standby, which reads only: Since
// gives the records after a seq, in seq order (the event and audit
// followers); Follow does too and says, in the same snapshot, whether
// records it had not read were deleted (the alert log's checkpoints),
// so that its follower reads the log again.
//
// Blob is the other shape: a named value replaced whole by each fenced
// Save (a row of its table: name, data, saved_at), for a store that
// rewrites a snapshot file in the embedded mode (the preprocessing
// state).
//
// It does not own the records' format (the stores encode them as in
// their embedded logs) nor what they mean.
//
// # Group commit and acknowledgement
//
// AppendAsync queues a copy of the record and returns a Pending; one
// goroutine writes what is queued, up to 1024 records or 4 MiB, in one
// fenced transaction (COPY), in append order, and Wait returns nil
// once that transaction committed. A failed group fails each of its
// records and leaves the log usable: the next group is tried anew.
// When PostgreSQL does not report a commit's outcome (the connection
// dropped during COMMIT) the records are reported failed but may be
// stored: a replay then shows them (the stores' IDs are never reused,
// so no record is mistaken for another).
//
// # Concurrency
//
// A Log is safe for concurrent use; appends from one goroutine are
// stored in the order made, appends from several in the order their
// AppendAsync calls returned.
package pglog
