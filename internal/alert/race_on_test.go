//go:build race

package alert

// raceEnabled is set when the race detector is on: the flood test then
// floods with 10,000 problems instead of 100,000 (the same bound is
// checked; the detector makes the full flood take minutes).
const raceEnabled = true
