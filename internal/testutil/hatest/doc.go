// Package hatest starts what the state stores' PostgreSQL tests share:
// a private PostgreSQL 15 (testutil.StartPostgres) and one HA node on
// it, waited for until it holds the lease, both ended with the test.
//
// What it owns: only that fixture, which pglog, event, alert, audit,
// pipeline, ingest, autoreg, catalog, auth and service tests used to
// copy. The ha package's own tests cannot use it (hatest imports ha).
//
// Concurrency: each call starts its own server and node.
package hatest
