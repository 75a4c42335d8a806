package historytest

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// The realistic data set: what a fleet of Zabbix agents sends, so that
// benchmarks and tests measure compression and reads on data shaped like
// production rather than on counters that tick by one every second.
//
// Every item has an interval of 10 s, 60 s or 300 s (20 %, 60 %, 20 %: most
// templates poll every minute, a few fast and a few slow items), a phase
// within that interval, and a kind:
//
//	gauge   45 %  Float, random walk rounded to 2 or 3 decimals (load, temperature, %)
//	counter 20 %  Uint, monotonic, grows by rate·interval with ±20 % noise (bytes, packets)
//	size    10 %  Uint, multiple of 4096 near 10^9..10^12, changes in 30 % of polls (disk used)
//	status  15 %  Uint 0/1, mostly 1, flips rarely (service up, ping)
//	text    10 %  Str from a small set, changes rarely (state, version)
//
// Value k of an item is due at Start + phase + k·interval; it is stamped
// there plus a jitter of whole seconds (90 % none, 5 % one second early,
// 5 % one late: agent scheduling drift) plus a nanosecond part uniform in
// [0, 1e9), because Zabbix agents stamp values with the clock's full
// resolution. Timestamps of one item strictly ascend.
//
// Each item draws from its own random source seeded by (seed, item id),
// so an item's values do not depend on how the set is walked (Series or
// Next) or on how many other items there are.

// RealisticStart is the first instant of every realistic data set:
// 2026-01-01 00:00:00 UTC, on a day and hour boundary.
const RealisticStart = 1767225600

// Kind is the shape of a realistic item's values.
type Kind uint8

const (
	Gauge Kind = iota
	Counter
	Size
	Status
	Text
)

// String names the kind, for benchmark names.
func (k Kind) String() string {
	switch k {
	case Gauge:
		return "gauge"
	case Counter:
		return "counter"
	case Size:
		return "size"
	case Status:
		return "status"
	case Text:
		return "text"
	}
	return "kind?"
}

// Item describes one generated item.
type Item struct {
	ID       uint64 // 1..N
	Kind     Kind
	Type     history.ValueType // Float for gauges, Str for text, else Uint
	Interval int64             // seconds: 10, 60 or 300
	Phase    int64             // seconds into the interval of the first value
	Decimals int               // gauges: 2 or 3
}

// Gen generates a realistic data set; see the comment above Kind. It is
// not safe for concurrent use (Series is: it does not touch the Gen's
// walk state).
type Gen struct {
	Seed       uint64
	Items      []Item
	Start, End int64 // unix seconds; values have Start ≤ clock < End

	state []itemState // Next's walk state, built lazily
	now   int64       // Next's window start
}

// Realistic returns the generator of items realistic items over span
// from RealisticStart. Same seed, items and span: same values.
func Realistic(seed uint64, items int, span time.Duration) *Gen {
	g := &Gen{Seed: seed, Start: RealisticStart, End: RealisticStart + int64(span/time.Second)}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	g.Items = make([]Item, items)
	for i := range g.Items {
		it := Item{ID: uint64(i + 1)}
		switch p := r.IntN(100); {
		case p < 20:
			it.Interval = 10
		case p < 80:
			it.Interval = 60
		default:
			it.Interval = 300
		}
		it.Phase = r.Int64N(it.Interval)
		switch p := r.IntN(100); {
		case p < 45:
			it.Kind, it.Type = Gauge, history.Float
			it.Decimals = 2 + r.IntN(2)
		case p < 65:
			it.Kind, it.Type = Counter, history.Uint
		case p < 75:
			it.Kind, it.Type = Size, history.Uint
		case p < 90:
			it.Kind, it.Type = Status, history.Uint
		default:
			it.Kind, it.Type = Text, history.Str
		}
		g.Items[i] = it
	}
	return g
}

var textValues = []string{"up", "down", "degraded", "maintenance", "7.0.4", "7.0.5", "OK: all checks passed"}

// itemState is one item's position in its series.
type itemState struct {
	it    *Item
	r     *rand.Rand
	k     int64 // next value's slot number
	prevT int64 // previous timestamp, unix ns
	f     float64
	step  float64
	u     uint64
	rate  float64
	s     string
}

func (g *Gen) newState(it *Item) itemState {
	r := rand.New(rand.NewPCG(g.Seed, it.ID))
	st := itemState{it: it, r: r, prevT: math.MinInt64}
	switch it.Kind {
	case Gauge:
		st.f = math.Round(r.Float64()*500*math.Pow10(it.Decimals)) / math.Pow10(it.Decimals)
		st.step = 0.005 + r.Float64()*2 // per value, before rounding
	case Counter:
		st.u = r.Uint64N(1 << 40)
		st.rate = math.Exp(r.Float64() * math.Log(1e6)) // 1..1e6 per second, log-uniform
	case Size:
		st.u = (1e9 + r.Uint64N(1e12)) &^ 4095
	case Status:
		st.u = 1
	case Text:
		st.s = textValues[r.IntN(len(textValues))]
	}
	return st
}

// next fills s with the item's next value if it is due before end
// (unix seconds) and reports whether it did.
func (st *itemState) next(s *history.Sample, start, end int64) bool {
	it, r := st.it, st.r
	slot := start + it.Phase + st.k*it.Interval
	if slot >= end {
		return false
	}
	clock := slot
	switch j := r.IntN(20); {
	case j == 0 && clock > start:
		clock--
	case j == 1 && clock+1 < end:
		clock++
	}
	ns := int32(r.Int64N(1e9))
	if t := clock*1e9 + int64(ns); t <= st.prevT {
		// A late previous value and an early one collide in the same
		// second: keep timestamps strictly ascending.
		t = st.prevT + 1
		clock, ns = t/1e9, int32(t%1e9)
	}
	st.prevT = clock*1e9 + int64(ns)
	st.k++
	*s = history.Sample{ItemID: it.ID, Clock: clock, NS: ns, Type: it.Type}
	switch it.Kind {
	case Gauge:
		p := math.Pow10(it.Decimals)
		st.f = math.Max(0, st.f+r.NormFloat64()*st.step)
		st.f = math.Round(st.f*p) / p
		s.F = st.f
	case Counter:
		st.u += uint64(st.rate * float64(it.Interval) * (0.8 + 0.4*r.Float64()))
		s.U = st.u
	case Size:
		if r.IntN(10) < 3 {
			d := r.Uint64N(1<<24) &^ 4095
			if r.IntN(3) == 0 && st.u > d {
				st.u -= d
			} else {
				st.u += d
			}
		}
		s.U = st.u
	case Status:
		if r.IntN(500) == 0 {
			st.u ^= 1
		}
		s.U = st.u
	case Text:
		if r.IntN(200) == 0 {
			st.s = textValues[r.IntN(len(textValues))]
		}
		s.S = st.s
	}
	return true
}

// Series returns every value of item i (an index into Items) in
// ascending time order.
func (g *Gen) Series(i int) []history.Sample {
	st := g.newState(&g.Items[i])
	out := make([]history.Sample, 0, (g.End-g.Start)/g.Items[i].Interval+1)
	var s history.Sample
	for st.next(&s, g.Start, g.End) {
		out = append(out, s)
	}
	return out
}

// Next appends to dst the values of every item stamped in the next
// window (by their slot; jitter may move a value a second across the
// window edge), sorted by time (then item), and reports false once the span is
// exhausted and nothing was appended. Walking the whole span with Next
// yields, per item, exactly Series: batches as a server receives them.
func (g *Gen) Next(dst []history.Sample, window time.Duration) ([]history.Sample, bool) {
	if g.state == nil {
		g.state = make([]itemState, len(g.Items))
		for i := range g.Items {
			g.state[i] = g.newState(&g.Items[i])
		}
		g.now = g.Start
	}
	if g.now >= g.End {
		return dst, false
	}
	wEnd := min(g.now+max(int64(window/time.Second), 1), g.End)
	n := len(dst)
	var s history.Sample
	for i := range g.state {
		st := &g.state[i]
		for {
			// Only values whose slot is before the window end: peek at
			// the slot without consuming the random source.
			if g.Start+st.it.Phase+st.k*st.it.Interval >= wEnd {
				break
			}
			if !st.next(&s, g.Start, g.End) {
				break
			}
			dst = append(dst, s)
		}
	}
	g.now = wEnd
	batch := dst[n:]
	// By time, then item: a total order, so the batch is the same
	// whatever the sort algorithm.
	slices.SortFunc(batch, func(a, b history.Sample) int {
		if c := cmp.Compare(a.Clock, b.Clock); c != 0 {
			return c
		}
		if c := cmp.Compare(a.NS, b.NS); c != 0 {
			return c
		}
		return cmp.Compare(a.ItemID, b.ItemID)
	})
	return dst, true
}

// Count is the number of values the whole set holds.
func (g *Gen) Count() int {
	n := 0
	for _, it := range g.Items {
		span := g.End - g.Start - it.Phase
		if span > 0 {
			n += int((span + it.Interval - 1) / it.Interval)
		}
	}
	return n
}
