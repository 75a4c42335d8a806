// Package selfmon holds Peregrine's self-monitoring: counters, gauges and
// histograms that the server's stages update, and their exposition in the Prometheus
// text format at /metrics.
//
// A Registry is created by main and injected into each stage; there are no
// package-level metrics, so two servers can run in one test process.
// Counters are atomic and padded to a cache line, so the shards that bump
// them on the hot path do not share lines. Registration takes a lock;
// updating and reading never do; a Histogram's Observe is a few atomic
// adds (fixed buckets, no lock).
package selfmon
