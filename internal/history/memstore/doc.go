// Package memstore is an in-memory history.Store: the backend for tests and
// for running Peregrine before the embedded engine exists. It keeps every
// sample until the process exits; nothing is durable, so Write's
// acknowledgement means only "in memory".
//
// Items are spread over lock stripes by item id, so writers from different
// pipeline shards rarely contend. A sample with the same (item, clock, ns)
// as a stored one replaces it (last write wins), the behaviour the durable
// engine documents too. Reads copy out bounded runs of samples under the
// stripe lock and call back outside it, so a slow reader never holds up
// writers.
package memstore
