//go:build !race

package catalog

// raceEnabled is set when the race detector is on; the million-item test
// skips then, since it would take minutes.
const raceEnabled = false
