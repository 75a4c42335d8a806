// Package buildcheck has no code: its tests hold the repository's build
// files (Makefile, .ci/run) and its layout to the source tree, so a new
// fuzz target, a test that skips itself under the race detector, or an
// import against the layering cannot silently slip in.
//
// What it checks (buildcheck_test.go): every `func FuzzX(*testing.F)` has
// a line in the Makefile's fuzz target naming X and its package; every
// test that skips itself when raceEnabled is run by a plain (no -race)
// `go test -run` line of .ci/run; `make lint` runs staticcheck and CI
// runs `make lint`. oneway_test.go: no package but the pipeline converts
// or preprocesses values to be stored (package preprocess's Convert,
// Run, Compile, Trace; the API's preprocessing.test excepted), so every
// way in takes the pipeline's one way in.
//
// # Layers (layers_test.go)
//
// Every package of the module is placed in one layer, lowest first:
//
//	foundation    zbx/..., sqlitedb, selfmon, usermacro, history (the
//	              interfaces), fsutil, wal, config
//	catalog       catalog, auth
//	stages        ingest/..., poll/..., pipeline, preprocess/...,
//	              history/engine/..., clickhouse, memstore, valuecache,
//	              expr/..., trigger, event, alert, maintenance, housekeep
//	test helpers  testutil/..., history/historytest
//	readers       api, web
//	wiring        server, bench, cmd/..., buildcheck
//
// A package imports only its own layer and lower ones (read from the
// non-test files; tests may import anything), and named rules narrow
// that: the value path ingest/poll → pipeline → preprocess → history
// never imports backwards; trigger takes commits through the pipeline's
// hook and imports none of the value path; trigger, alert and
// maintenance meet only in the event store, which imports no stage;
// only the wiring imports checkers, receivers and history backends; api
// and web never import ingest, poll or the pipeline; only cmd/* imports
// the wiring; only tests import the test helpers. Known exceptions are
// listed as allowances with the reason and the day they go; one that no
// longer matches fails the test. A package in no layer fails the test
// until it is placed. The tests also hold docs/layout.md (one line per
// package, under its layer) to the table, and no hand-written .go file
// may be over 1,000 lines.
//
// It reads files only; it runs no program and needs no network.
package buildcheck
