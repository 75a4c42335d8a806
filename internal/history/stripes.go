package history

import (
	"math"
	"sync"
	"sync/atomic"
)

// Striper groups a batch's samples by lock stripe (item id modulo N), so
// that a store takes each stripe lock once per batch instead of once per
// sample, and visits the stripes starting at a rotating one: concurrent
// writers (one per pipeline shard) walking the stripes in the same order
// would queue behind each other on every lock. Safe for concurrent use.
type Striper struct {
	n     int
	rotor atomic.Uint32
	pool  sync.Pool // *[]int32 sample indices grouped by stripe
}

// NewStriper returns a Striper over n stripes.
func NewStriper(n int) *Striper { return &Striper{n: n} }

// Stripe is the stripe of an item.
func (g *Striper) Stripe(item uint64) int { return int(item % uint64(g.n)) }

// Each calls fn once per stripe that has samples, with the indices (into
// samples, in batch order) of that stripe's samples. idx is only valid
// during the call.
func (g *Striper) Each(samples []Sample, fn func(stripe int, idx []int32)) {
	counts := make([]int32, g.n+1, 128)
	for i := range samples {
		counts[g.Stripe(samples[i].ItemID)+1]++
	}
	for i := 1; i <= g.n; i++ {
		counts[i] += counts[i-1]
	}
	ip, _ := g.pool.Get().(*[]int32)
	if ip == nil {
		ip = new([]int32)
	}
	idx := *ip
	if cap(idx) < len(samples) {
		idx = make([]int32, len(samples))
	}
	idx = idx[:len(samples)]
	pos := append([]int32(nil), counts...)
	for i := range samples {
		st := g.Stripe(samples[i].ItemID)
		idx[pos[st]] = int32(i)
		pos[st]++
	}
	first := int(g.rotor.Add(1))
	for k := 0; k < g.n; k++ {
		st := (first + k) % g.n
		if lo, hi := counts[st], counts[st+1]; lo < hi {
			fn(st, idx[lo:hi])
		}
	}
	*ip = idx
	g.pool.Put(ip)
}

// ClockNanos converts a clock bound in unix seconds to unix nanoseconds,
// saturating instead of overflowing for "from the beginning" / "until the
// end" bounds such as 1<<40.
func ClockNanos(clock int64) int64 {
	const maxClock = int64(math.MaxInt64 / 1_000_000_000)
	switch {
	case clock >= maxClock:
		return math.MaxInt64
	case clock <= -maxClock:
		return math.MinInt64
	}
	return clock * 1e9
}
