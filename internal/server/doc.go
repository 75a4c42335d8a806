// Package server assembles a Peregrine server from its stages: catalog,
// history store, pipeline, housekeeping (flush, retention, compaction),
// trapper and the HTTP listener, and runs them as one group that starts
// together and stops in dependency order (ingest first, then the pipeline
// drains and housekeeping stops, then the store and catalog close).
//
// It knows history backends only through history's interfaces: it opens
// the configured one and hands it on; trends and housekeeping find the
// optional interfaces by assertion.
//
// It holds the wiring that would otherwise sit in main, so that tests and
// the bench harness can run a whole server in-process.
package server
