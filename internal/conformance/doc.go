// Package conformance is the differential harness that makes the real
// Zabbix 6.0 the judge of Peregrine's API and trapper answers (issue 24).
//
// A case (testdata/corpus/<name>.json) is a sequence of steps: JSON-RPC
// calls, raw request bodies (the JSON-RPC layer's errors), trapper
// "sender data" frames and "sync" points. Each step's
// params may name values bound by earlier steps ("$name"), so one answer
// feeds the next call as a client does: Grafana lists groups, takes their
// groupids into host.get, and so on. The same case runs against a Target:
// the real Zabbix 6.0.14 peer (../shared/peers/zabbix, recorded with
// `make conformance-record`) or a Peregrine server started in the test.
//
// Answers are normalised before they are compared (normalise.go): an id
// a step created or bound is written as its name ("$host1") and ids the
// server generates (events, interfaces, macros...) are numbered in order
// of first appearance, so Peregrine must hand out the same ids where a
// fresh Zabbix has fixed ones (user group 7, media type 1) and consistent
// ones elsewhere; clocks the case sent are written relative to the run's
// base time T0 and clocks of "now" as "<now>"; the "uuid" a server makes
// up for an object as "<uuid>"; session tokens as
// "<token>"; an ID the run named is written by name inside error
// messages too; arrays whose order Zabbix does not define (no sortfield) are
// sorted; a step marked "compare": "shape" keeps only the kind of its
// answer (a get without a filter returns whatever else the server
// holds). The peer's normalised answers are the golden files
// (testdata/golden/<name>.json), so CI replays them without a peer.
//
// Every difference between a golden answer and Peregrine's must be listed
// as intended in docs/compat.md's "Intended differences" table (case,
// step and path, globs allowed, with the reason); the test fails on any
// other difference, and on a listed difference that no longer occurs, so
// the list stays true. The same test checks the conformance table in
// docs/compat.md (calls, identical, intended differences per case) and
// rewrites it with -update-table.
//
// The package's code imports nothing of Peregrine: the test starts the
// server through internal/server, which is why the package sits in the
// wiring layer.
package conformance
