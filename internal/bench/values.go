package bench

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
)

// The values every scenario sends. A benchmark that sends the same number
// per item over and over measures a server on data no agent produces:
// delta-of-delta and XOR encodings make such series nearly free to store
// and to read, so the figures flatter whichever side compresses. By
// default the harness therefore sends the "realistic" shape below; the
// "constant" shape is the harness's old data, kept to show how much the
// data changes a figure.
//
// Realistic: every item draws a kind from a seeded hash of its host and
// key (so the same item gets the same series on every target and in every
// scenario, whatever the layout around it), with the numeric mix of the
// engine's realistic data set, internal/history/historytest.Realistic
// (gauge/counter/size/status 45/20/10/15 %, renormalised without its 10 %
// of text: bench items are float items; its uint kinds go as integral
// floats):
//
//	gauge   50 %  random walk with mean reversion, full float64 precision
//	              (the shortest decimal that parses back to the same bits,
//	              typically 15–17 significant digits, as a computed metric)
//	counter 22 %  monotonic integer, grows by rate·(0.8..1.2) per value,
//	              rate log-uniform 1..10^6 (bytes, packets)
//	size    11 %  multiple of 4096 near 10^9..10^12, changes in 30 % of
//	              values (disk used)
//	status  17 %  0/1, mostly 1, flips on average every 500 values
//
// Nanoseconds are uniform in [0, 1e9) per value (agents stamp values at
// the clock's full resolution), shifted by the send's NS (a random number
// per run) modulo 1e9 so that runs reusing items and clocks never repeat
// an (item, clock, ns). Clocks are the scenario's (one value per item per
// round, whole seconds): scenarios count values in clock windows, so the
// generator does not jitter them; historytest.Realistic's per-item
// intervals and second jitter are what the engine's own benchmarks use.
//
// Why not historytest.Realistic itself: it generates by item index over a
// fixed span with per-item intervals, and rounds gauges to 2–3 decimals;
// the bench sends one value per item per round to named items, streams
// frame by frame, and its gauges must carry full precision (issue 10).
//
// Each item's values are a sequence: value k is the k-th draw from the
// item's own PCG source seeded by (seed, hash(host, key)). A send
// generates frames in unit order under one lock (sender.go), so the
// sequence does not depend on how many connections send it.

// Shape is how the values of a send are made.
type Shape string

const (
	// ShapeRealistic is the default: see the comment above.
	ShapeRealistic Shape = "realistic"
	// ShapeConstant is the harness's old data: each item repeats one
	// 2-decimal value (20.00..29.99 by its position in the item set) and
	// every value of a send carries the same nanoseconds.
	ShapeConstant Shape = "constant"
)

// Data is the data setting of a run: the shape and the seed. The zero
// value is the realistic shape with seed 0.
type Data struct {
	Shape Shape
	Seed  uint64
	// Gauges makes every realistic item a gauge: history-read's one item
	// must hold full-precision random values whatever the seed.
	Gauges bool
}

// ParseShape checks a --data value.
func ParseShape(s string) (Shape, error) {
	switch Shape(s) {
	case ShapeRealistic, ShapeConstant:
		return Shape(s), nil
	}
	return "", fmt.Errorf("--data must be realistic or constant, not %q", s)
}

func (d Data) shape() Shape {
	if d.Shape == "" {
		return ShapeRealistic
	}
	return d.Shape
}

// Describe is the data shape as the report prints it.
func (d Data) Describe() string {
	if d.shape() == ShapeConstant {
		return "constant (the harness's old data, for comparison only): each item repeats one 2-decimal value 20.00..29.99; one nanosecond value per send"
	}
	if d.Gauges {
		return fmt.Sprintf("realistic, seed %d, every item a full-precision random-walk gauge; nanoseconds uniform in [0, 1e9) per value", d.Seed)
	}
	return fmt.Sprintf("realistic, seed %d: per item (by a hash of host and key) a full-precision random-walk gauge (50 %%), "+
		"a counter growing by 1..10^6 per value ±20 %% (22 %%), a disk size near 10^9..10^12 in 4 KiB steps (11 %%) or a 0/1 status (17 %%); "+
		"nanoseconds uniform in [0, 1e9) per value; one value per item per round at the scenario's clocks", d.Seed)
}

// Kind is the shape of one realistic item's values.
type Kind uint8

// The realistic kinds.
const (
	KindGauge Kind = iota
	KindCounter
	KindSize
	KindStatus
	KindConstant // ShapeConstant
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindGauge:
		return "gauge"
	case KindCounter:
		return "counter"
	case KindSize:
		return "size"
	case KindStatus:
		return "status"
	case KindConstant:
		return "constant"
	}
	return "kind?"
}

// itemHash identifies an item across targets and layouts.
func itemHash(host, key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(host))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return h.Sum64()
}

// series is one item's value sequence.
type series struct {
	src   rand.PCG
	kind  Kind
	v     float64 // current value
	mean  float64 // gauge: the level it reverts to
	step  float64 // gauge: step deviation; counter: rate
	konst float64 // ShapeConstant's value
	// hist holds values already generated, only for sends that ask for
	// positions out of order (backfill); nil otherwise.
	hist []float64
	hns  []int32
}

func newSeries(d Data, host, key string, konst float64) series {
	s := series{konst: konst}
	if d.shape() == ShapeConstant {
		s.kind = KindConstant
		return s
	}
	s.src.Seed(d.Seed, itemHash(host, key))
	u := s.uniform
	p := s.src.Uint64() % 100
	if d.Gauges {
		p = 0
	}
	switch {
	case p < 50:
		s.kind = KindGauge
		s.mean = math.Exp(u() * math.Log(1e4)) // 1..10^4, log-uniform
		s.v = s.mean * (0.8 + 0.4*u())
		s.step = s.mean * (0.001 + 0.02*u())
	case p < 72:
		s.kind = KindCounter
		s.v = float64(s.src.Uint64() % (1 << 40))
		s.step = math.Exp(u() * math.Log(1e6))
	case p < 83:
		s.kind = KindSize
		s.v = float64((1e9 + s.src.Uint64()%1e12) &^ 4095)
	default:
		s.kind = KindStatus
		s.v = 1
	}
	return s
}

func (s *series) uniform() float64 { return float64(s.src.Uint64()>>11) / (1 << 53) }

// normal is an approximately standard normal draw (the sum of four
// uniforms, scaled): cheap, and a random walk needs no exact tails.
func (s *series) normal() float64 {
	return (s.uniform() + s.uniform() + s.uniform() + s.uniform() - 2) * math.Sqrt(3)
}

// next draws the next value and its nanoseconds.
func (s *series) next() (float64, int32) {
	switch s.kind {
	case KindConstant:
		return s.konst, 0
	case KindGauge:
		s.v += 0.02*(s.mean-s.v) + s.step*s.normal()
	case KindCounter:
		s.v += math.Floor(s.step * (0.8 + 0.4*s.uniform()))
	case KindSize:
		if s.src.Uint64()%10 < 3 {
			d := float64((s.src.Uint64() % (1 << 24)) &^ 4095)
			if s.src.Uint64()%3 == 0 && s.v > d {
				s.v -= d
			} else {
				s.v += d
			}
		}
	case KindStatus:
		if s.src.Uint64()%500 == 0 {
			s.v = 1 - s.v
		}
	}
	return s.v, int32(s.src.Uint64() % 1e9)
}

// at returns value number p of the sequence, keeping what it generated:
// a send in random time order asks for positions in any order, and the
// series must still be one walk in time order.
func (s *series) at(p int64) (float64, int32) {
	for int64(len(s.hist)) <= p {
		v, ns := s.next()
		s.hist, s.hns = append(s.hist, v), append(s.hns, ns)
	}
	return s.hist[p], s.hns[p]
}

// appendValue formats v as the sender's value text: the shortest decimal
// that parses back to v, without an exponent (Zabbix's float parser and
// ours both take plain decimals).
func appendValue(dst []byte, k Kind, v float64) []byte {
	if k == KindConstant {
		return strconv.AppendFloat(dst, v, 'f', 2, 64)
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

// ValueSeq is one item's values as a send generates them, for checks and
// for filling a peer by other means (SQL) with the same data.
type ValueSeq struct{ s series }

// NewValueSeq returns the sequence the harness sends to (host, key) with
// data d (realistic shapes only; a constant item's value depends on its
// position in the send's item set).
func NewValueSeq(d Data, host, key string) *ValueSeq {
	return &ValueSeq{s: newSeries(d, host, key, 0)}
}

// Next returns the next value as the sender formats it, its float and
// the nanoseconds before the send's NS offset.
func (q *ValueSeq) Next() (text string, v float64, ns int32) {
	v, ns = q.s.next()
	return string(appendValue(nil, q.s.kind, v)), v, ns
}

// Kind is the item's kind.
func (q *ValueSeq) Kind() Kind { return q.s.kind }

// ShuffledPositions is a SendPlan.Position that sends every item's
// rounds in a random time order: round r of item i carries position
// perm[(r + off_i) mod rounds], perm a seeded permutation and off_i a
// per-item rotation, so items are not all at the same clock in a frame
// and each item still gets every position once.
func ShuffledPositions(rounds int64, seed uint64) func(item int, round int64) int64 {
	if rounds <= 0 {
		// Nothing to shuffle; a plan with no rounds sends nothing.
		return func(_ int, round int64) int64 { return round }
	}
	r := rand.New(rand.NewPCG(seed, 0xbacf111))
	perm := make([]int64, rounds)
	for i := range perm {
		perm[i] = int64(i)
	}
	r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	return func(item int, round int64) int64 {
		off := int64((uint64(item)*0x9e3779b97f4a7c15 ^ seed) % uint64(rounds))
		return perm[(round+off)%rounds]
	}
}
