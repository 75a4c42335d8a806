//go:build !race

package zbx_test

const raceEnabled = false
