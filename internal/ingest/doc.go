// Package ingest owns Peregrine's Zabbix trapper listener: it accepts TCP
// connections, reads ZBXD frames (package zbx), decodes "sender data"
// requests, checks every value against the catalog snapshot and converts
// it to its item's value type (with package preprocess's rules, the same
// for every way in), hands the accepted values to the pipeline and
// answers with the reply the real Zabbix server gives once the pipeline
// has acknowledged them. Server.Push applies the same rules to the API's
// history.push values (preprocess.RawValue); the API reaches it through
// its own Pusher interface and does not import this package.
//
// It does not own the catalog, the pipeline, storage or the acceptance
// and conversion rules; it reaches the first three through the Catalog
// and Submitter interfaces that main wires in.
//
// Bounds: at most MaxConnections connections are served at once (the rest
// wait in the kernel's accept queue); frames larger than MaxFrameSize are
// refused; the payload bytes held by all connections together are bounded
// by MaxBufferedBytes; every read and write has a deadline, so slow or
// half-open clients are disconnected without holding anyone else up. Bad
// input is answered or dropped, counted by reason, and logged at most once
// per window per reason.
//
// Concurrency: one goroutine per connection; all shared state is atomic
// counters, the catalog's immutable snapshot and the pipeline.
package ingest
