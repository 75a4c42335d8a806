// Package server assembles a Peregrine server from its stages: catalog,
// history store, pipeline, trapper and the HTTP listener, and runs them as
// one group that starts together and stops in dependency order (ingest
// first, then the pipeline drains, then the store and catalog close).
//
// It holds the wiring that would otherwise sit in main, so that tests and
// the bench harness can run a whole server in-process.
package server
