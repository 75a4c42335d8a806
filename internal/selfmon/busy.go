package selfmon

import (
	"sync/atomic"
	"time"
)

// Busy accumulates the time a stage's goroutines spend working (not
// waiting for work), for Zabbix's zabbix[process,<type>,avg,busy]: the
// busy share over an interval is the growth of Nanos divided by the
// interval's wall time times Goroutines. Stages add the duration of each
// unit of work (a loop turn, a store write, a request); a clock read on
// either side of it is the whole cost.
type Busy struct {
	ns atomic.Int64
	// Goroutines is how many goroutines share the work (the divisor of
	// the busy share); set once before use.
	Goroutines int
	_          [48]byte // pad: shards add concurrently
}

// Since adds the time from start until now.
func (b *Busy) Since(start time.Time) { b.ns.Add(int64(time.Since(start))) }

// Add adds d.
func (b *Busy) Add(d time.Duration) { b.ns.Add(int64(d)) }

// Nanos returns the busy time accumulated so far.
func (b *Busy) Nanos() int64 { return b.ns.Load() }

// Busy registers a Busy for goroutines goroutines and exposes it as the
// counter name (seconds), from which Prometheus's rate() divided by the
// goroutine count gives the same busy share.
func (r *Registry) Busy(name, help string, goroutines int, labels ...string) *Busy {
	b := &Busy{Goroutines: max(goroutines, 1)}
	r.CounterFunc(name, help, func() float64 { return float64(b.Nanos()) / 1e9 }, labels...)
	return b
}
