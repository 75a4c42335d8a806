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
// It owns no storage itself. Backends live in subpackages: memstore (in
// memory, for tests and the first milestone), engine (the embedded
// time-series store) and clickhouse.
//
// Concurrency: every Store method may be called from many goroutines at
// once; the pipeline calls Write from one goroutine per shard.
package history
