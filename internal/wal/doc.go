// Package wal is Peregrine's write-ahead log: a directory of numbered
// segment files holding checksummed records, written with group commit
// under a named fsync policy, and replayed at start. The on-disk format,
// the torn-tail rules and what "acknowledged" means under each policy are
// specified in docs/format/wal.md.
//
// Its users are the embedded history engine (internal/history/engine),
// the event store (internal/event), the alert store (internal/alert) and
// the ClickHouse spool (internal/history/clickhouse). It sits in the
// foundation layer (docs/layout.md) and imports no other package of the
// module, so that any stage may use it.
//
// # What it owns
//
//   - Segment files (00000001.wal, ...) in Options.Dir: creating them,
//     rolling over at Options.SegmentSize, fsyncing files and the
//     directory, deleting whole segments on Truncate.
//   - Record framing: length, CRC-32C, and the torn-tail rules of Replay.
//   - Durability: Append returns nil only once its record is as durable as
//     Options.Sync promises. A write or fsync failure fails the whole
//     group, whose bytes are then removed from the segment files (none of
//     its records is replayed, whole ones included), and the WAL refuses
//     appends until a retry (every Options.RetryInterval) can start a new
//     segment: a disk that was full takes appends again by itself. A
//     failure that cannot be undone (the bytes cannot be removed, or
//     under SyncInterval a failed fsync that may have lost acknowledged
//     records) refuses appends until the WAL is reopened.
//   - The filesystem seam (FS, File) through which all of this happens.
//
// # What it does not own
//
// Record payloads are opaque bytes here; each user defines its own (the
// engine's are in internal/history/record). Checkpoints, deciding
// which segments a checkpoint made redundant, and what to do about a
// CorruptionError belong to the user. There is no directory lock: the
// user must ensure one WAL per directory.
//
// # Concurrency contract
//
// Append, AppendAsync, Cut, Truncate, Segments and Stats may be called from
// any number of goroutines at once. Records from concurrent callers are
// written in the order they were enqueued; Append and Cut return only when
// their group has been written (and fsynced, under SyncBatch). One writer
// goroutine, started by Open and stopped by Close, performs every write,
// fsync and segment rollover. Replay and Truncate are serialised with each
// other and with Close. Replay must succeed before the first Append when the directory
// held segments at Open (Append returns ErrNotReplayed until then).
//
// Lock order: WAL.opMu, then WAL.mu. WAL.mu is never held during I/O.
package wal
