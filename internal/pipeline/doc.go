// Package pipeline moves accepted values from ingest to the history store.
//
// Values are routed by item id to one of N shards (N defaults to the CPU
// count). Each shard owns a bounded queue, the per-item state that
// triggers and the API read (last and previous value), and one goroutine
// that drains its queue in batches into the history Writer.
//
// Acknowledgement: Submit returns only after every value it was given has
// been accepted by the store's Write, which for the durable engine means
// "in the WAL per the fsync policy". A store error is returned to every
// submitter of the failed batch, so nothing is acknowledged that was not
// stored.
//
// Back-pressure: when a shard's queue holds QueueValues values, Submit
// blocks until the shard drains; nothing is dropped and no queue grows
// without bound. Memory per shard is bounded by twice QueueValues (the
// queue being filled plus the batch being written).
//
// Concurrency: Submit may be called from any number of goroutines. The hot
// path takes one short mutex per shard per submitted batch (not per
// value); per-item state is written only by the owning shard goroutine and
// read through Last under a per-shard read lock taken once per batch.
package pipeline
