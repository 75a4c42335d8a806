//go:build !race

package zbxpsk

const raceEnabled = false
