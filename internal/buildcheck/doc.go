// Package buildcheck has no code: its tests hold the repository's build
// files (Makefile, .ci/run) to the source tree, so a new fuzz target or a
// test that skips itself under the race detector cannot silently fall out
// of `make fuzz` or CI.
//
// What it checks: every `func FuzzX(*testing.F)` has a line in the
// Makefile's fuzz target naming X and its package; every test that skips
// itself when raceEnabled is run by a plain (no -race) `go test -run` line
// of .ci/run; `make lint` runs staticcheck and CI runs `make lint`; no
// package but the pipeline converts or preprocesses values to be stored
// (package preprocess's Convert, Run, Compile, Trace: oneway_test.go),
// so every way in takes the pipeline's one way in.
//
// It reads files only; it runs no program and needs no network.
package buildcheck
