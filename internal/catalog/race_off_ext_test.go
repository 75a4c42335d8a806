//go:build !race

package catalog_test

// raceEnabled is set when the race detector is on (the external test
// package's copy): the template sweep
// skips then, since it would take minutes.
const raceEnabled = false
