// Package engine is Peregrine's embedded history store: the default
// history.Store, inside the server process, with no external database.
//
// Write path: every Write encodes its batch as one WAL record
// (engine/record) and appends it to the segmented write-ahead log
// (engine/wal), which group-commits concurrent appends into one write and,
// under the default sync policy, one fsync. Only after the WAL has the
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
// Downsampling (downsample.go) takes the same view as a read and folds
// decoded chunks straight into history.Accumulator buckets, without
// building samples.
//
// Late and duplicate values: a sample older than the item's newest sealed
// chunk goes to the item's late buffer (it is never dropped); reads merge
// it in. A sample with the same (item, clock, ns) as a stored one replaces
// it: last write wins, the same rule as memstore, so a sender's retry of
// an acknowledged batch never yields the value twice.
//
// Recovery: Open replays the WAL into the head. A torn tail of the last
// segment (a crash in the middle of a write) is cut by the WAL; a record
// that was acknowledged was fsynced and is therefore whole.
//
// Not yet here (tracked in issue 3): flushing the head into immutable
// time-partitioned block files, WAL truncation after a flush, trends,
// retention by dropping partitions, and compaction. Until then the WAL
// and the head grow with the data written, and a restart replays
// everything.
//
// Concurrency: all Store methods are safe for concurrent use. Items are
// spread over lock stripes by id; a stripe lock is taken once per Write
// per stripe, never around I/O.
package engine
