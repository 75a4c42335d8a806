//go:build race

package zbxpsk

const raceEnabled = true
