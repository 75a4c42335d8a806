//go:build !race

package engine

// raceEnabled is set when the race detector is on: the tests that only
// measure bytes per value over whole corpora skip then (minutes under it).
const raceEnabled = false
