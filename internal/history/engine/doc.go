// Package engine is Peregrine's embedded history store: the default
// history.Store, inside the server process, with no external database.
//
// Write path: every Write encodes its batch as one WAL record
// (package history/record, shared with the ClickHouse spool) and appends it to the segmented write-ahead log
// (internal/wal, shared with the event and alert stores and the
// ClickHouse spool), which group-commits concurrent appends into one
// write and, under the default sync policy, one fsync. Only after the WAL has the
// record does Write apply the samples to the head and return: the trapper
// acknowledges a value on the strength of that return. The head keeps,
// per item, an open buffer of recent samples in columns and a list of
// sealed chunks compressed with engine/chunkenc once the buffer fills.
//
// Read path: a read takes the item's stripe lock only to copy references
// to its immutable sealed chunks and the matching part of its open and
// late buffers; decoding and merging happen outside the lock, so reads
// never hold up writes for longer than that copy.
//
// Many items, short ranges (read_many.go, chunkspan.go): block writers
// cut each item's chunks at aligned time windows chosen from its rate
// (an hour for a 10-second item, two for a one-minute one), so a read of
// an hour decodes about an hour, and ReadMany (history.BatchReader)
// serves many items from one view of the blocks with one set of decode
// buffers. CountMany (count.go, history.Counter) counts the same values
// from the block index and chunk timestamps without decoding values.
//
// Downsampling (downsample.go) takes the same view as a read and folds
// decoded chunks straight into history.Accumulator buckets, without
// building samples.
//
// Late and duplicate values: a sample older than the item's newest sealed
// chunk goes to the item's late buffer (it is never dropped); reads merge
// it in. The late buffer (late.go) is a small log-structured merge:
// appends to a bounded tail, sorted runs merged size-tiered, so a
// backfill in random order costs O(log n) copies per value instead of an
// insertion each, and a read references the runs instead of copying them
// under the lock. A sample with the same (item, clock, ns) as a stored one replaces
// it: last write wins, the same rule as memstore, so a sender's retry of
// an acknowledged batch never yields the value twice.
//
// Recovery: Open replays the WAL into the head. A torn tail of the last
// segment (a crash in the middle of a write) is cut by the WAL; a record
// that was acknowledged was fsynced and is therefore whole.
//
// Failed writes (a full disk, an I/O error): a Write whose WAL append
// fails returns the error and applies nothing, and the WAL removes the
// failed group's bytes, so none of its values comes back at a restart
// (history.Writer's all-or-nothing contract). Until the WAL can write
// again (it retries every second; package wal) every Write fails at
// once and WriteErr (history.WriteChecker) says why, which the pipeline
// and /healthz read; then writes go on without a restart.
//
// Blocks (flush.go, block.go; format in docs/format/blocks.md): Flush
// swaps the head out, writes it into immutable block files, one per
// 2-hour partition touched (history/blocks/p<S>/), and then removes the
// WAL segments those blocks made unnecessary, so that a restart replays
// only what was written since. Reads merge blocks, the head being flushed
// and the head. Blocks are written in format version 3: a compact index
// (per-item time unit, gaps and spans instead of absolute times) and
// history chunks stored without the header times the index repeats,
// which readChunk puts back (version 2, issue 10), whose chunks may use
// the rate float encoding (version 3, issue 30); version 1 and 2 blocks
// stay readable (testdata/v1.blk, v2.blk).
//
// corpus_test.go holds the size targets (ms ≤ 2.5, s ≤ 1.4 bytes per
// value) on the values recorded from real agents and snmpd
// (historytest's corpus), beside TestDiskBytesTargets on the generator.
//
// Trends (trend.go): each flush also writes the hourly min/avg/max/count
// of numeric items into day-partitioned trend files (history/trends/);
// ReadTrends adds the hours still in the head.
//
// Retention and compaction (compact.go): DropBefore and DropTrendsBefore
// remove whole partitions, never rows; Compact rewrites each finished
// day's 2-hour blocks into one day block (d<S>/), dropping values older
// than each item's own retention on the way. The engine does not decide
// when: it implements history.Flusher, history.Dropper and
// history.Compactor, and the housekeeping stage (internal/housekeep)
// schedules them.
//
// Corrupt block files are moved to quarantine/ at open and counted, not
// fatal: the rest of the history stays readable.
//
// Concurrency: all Store methods are safe for concurrent use. Items are
// spread over lock stripes by id; a stripe lock is taken once per Write
// per stripe, never around I/O.
package engine
