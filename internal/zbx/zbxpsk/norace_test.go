//go:build !race && cgo && !nopsk

package zbxpsk

const raceEnabled = false
