// Package history defines what every history backend must provide: the
// Sample value model, the Store interface the pipeline writes into and the
// API reads from, and the sentinel errors shared by backends.
//
// It also defines downsampling (downsample.go): the Bucket aggregate, the
// whole-second Grid, the Accumulator that folds time-ordered values into
// buckets, the optional Downsampler interface a store implements to
// compute buckets next to its data, and Downsample, which falls back to
// folding a Read for stores that do not.
//
// Batched reads (batch.go): the BatchReader interface reads one range of
// many items in one call (a dashboard's pattern), and ReadMany falls back
// to one Read per item for stores without it; Counter and CountMany count
// what ReadMany would give (history.get's row count against
// api.max_rows) without building samples; NewestReader finds the newest
// values of many items at once (the pipeline's last values at start) for
// stores whose reads are round trips.
//
// Timestamps: Precision (precision.go) is how finely a store keeps them
// (nanoseconds by default, as Zabbix), and SnapStamp (stamp.go) is the
// tolerance rule for values Peregrine stamps itself, which puts a value
// received within a tolerance of its scheduled slot on the slot.
//
// Optional interfaces (optional.go) cover what only some backends do:
// TrendReader (hourly trends), Flusher (a buffered head written out in
// bulk), Dropper (retention by whole partitions) and Compactor. Consumers
// find them by type assertion on a Store, so that neither the API nor the
// housekeeping stage knows a concrete backend.
//
// It owns no storage itself. Backends live in subpackages: memstore (in
// memory, for tests and benchmarks; it implements none of the optional
// interfaces), engine (the embedded time-series store; it implements
// all but NewestReader, its reads being local) and clickhouse (history in
// a ClickHouse server or cluster; BatchReader, Counter, Downsampler,
// NewestReader, TrendReader, Dropper). historytest holds the contract suite every
// backend passes.
//
// Concurrency: every Store method may be called from many goroutines at
// once; the pipeline calls Write from one goroutine per shard.
package history
