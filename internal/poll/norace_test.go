//go:build !race

package poll_test

const raceEnabled = false
