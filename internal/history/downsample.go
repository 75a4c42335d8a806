package history

import (
	"context"
	"errors"
	"math"
	"math/bits"
)

// Downsampling: a read that returns, instead of every value of an item in
// a range, the min, max, mean and count of the values in each of at most
// N equal time buckets. history.get serves it as its "downsample"
// parameter; the store computes it, so that 1M values become 1,000 rows
// without 1M samples ever crossing an interface.
//
// The grid. Buckets have a whole number of seconds: width =
// ceil((till-from+1) / N), bucket i covers [from + i·width, from +
// (i+1)·width) clipped to till (the last bucket may be narrower), and
// Bucket.Clock is its start. Whole seconds because clients read "clock" as
// unix seconds and a fractional bucket start has nowhere to go but "ns",
// which Grafana ignores; the price is that a range shorter than N seconds
// gets one bucket per second, fewer than N. Buckets with no values are
// omitted (a gap stays a gap in a graph).
//
// Rejected: one pass that picks the grid from the data (first and last
// value) inside the store. It would save the caller two one-value reads
// when a bound is open, but every backend would have to implement range
// discovery; DataRange does it once for all of them through Reader.

// MaxBuckets bounds DownsampleQuery.Buckets.
const MaxBuckets = 100_000

// ErrBuckets is returned for a bucket count outside 1..MaxBuckets.
var ErrBuckets = errors.New("bucket count must be from 1 to 100000")

// DownsampleQuery selects one item's values in [From, Till] (unix seconds,
// both inclusive) and folds them into at most Buckets buckets of the grid
// NewGrid(From, Till, Buckets).
type DownsampleQuery struct {
	ItemID     uint64
	From, Till int64
	Buckets    int
}

// Bucket is the aggregate of one grid bucket's values. For Float items
// Min and Max are the extremes and Sum the sum; for Uint items MinU and
// MaxU are exact, Min and Max are the same as float64, and SumHi:SumLo is
// the exact 128-bit sum (Sum is unused), so that the mean of counters near
// 2^64 is right to float64 precision.
type Bucket struct {
	Clock        int64 // bucket start, unix seconds
	Count        int64 // values in the bucket, ≥ 1
	Type         ValueType
	Min, Max     float64
	Sum          float64 // Float: the sum of the values
	MinU, MaxU   uint64  // Uint only
	SumHi, SumLo uint64  // Uint only: the 128-bit sum
}

// Avg is the mean of the bucket's values.
func (b *Bucket) Avg() float64 {
	if b.Type == Uint {
		return (float64(b.SumHi)*0x1p64 + float64(b.SumLo)) / float64(b.Count)
	}
	return b.Sum / float64(b.Count)
}

// Downsampler is implemented by stores that compute buckets next to their
// data; Downsample falls back to Reader for the others.
type Downsampler interface {
	// Downsample returns the non-empty buckets of q's grid in ascending
	// Clock order, computed over exactly the values Read would return for
	// the same item and range (after last-write-wins replacement).
	// Non-numeric values are skipped: a series stored as text has no
	// buckets. It returns ErrBuckets when q.Buckets is out of range. The
	// same concurrency promise as Read holds: it MUST NOT block writers
	// for longer than it takes to copy or fold a bounded amount of data.
	Downsample(ctx context.Context, q DownsampleQuery) ([]Bucket, error)
}

// Downsample computes q with r's own Downsampler when it has one and by
// folding a Read otherwise, so every store supports it.
func Downsample(ctx context.Context, r Reader, q DownsampleQuery) ([]Bucket, error) {
	if d, ok := r.(Downsampler); ok {
		return d.Downsample(ctx, q)
	}
	return DownsampleRead(ctx, r, q)
}

// DownsampleRead is the generic Downsample: one ascending Read folded
// into an Accumulator. Per value it costs a callback, which is what the
// stores' own implementations avoid.
func DownsampleRead(ctx context.Context, r Reader, q DownsampleQuery) ([]Bucket, error) {
	if q.Buckets < 1 || q.Buckets > MaxBuckets {
		return nil, ErrBuckets
	}
	acc := NewAccumulator(NewGrid(q.From, q.Till, q.Buckets))
	err := r.Read(ctx, Query{ItemID: q.ItemID, From: q.From, Till: q.Till}, func(s *Sample) bool {
		t := s.Clock*1e9 + int64(s.NS)
		switch s.Type {
		case Float:
			acc.AddFloat(t, s.F)
		case Uint:
			acc.AddUint(t, s.U)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return acc.Buckets(), nil
}

// DataRange returns the clocks (unix seconds) of item's first and last
// value in [from, till], with two one-value reads; ok is false when the
// range holds no value. history.get uses it for the grid when a bound is
// not given.
func DataRange(ctx context.Context, r Reader, item uint64, from, till int64) (first, last int64, ok bool, err error) {
	one := func(desc bool) (int64, bool, error) {
		var c int64
		found := false
		err := r.Read(ctx, Query{ItemID: item, From: from, Till: till, Desc: desc, Limit: 1}, func(s *Sample) bool {
			c, found = s.Clock, true
			return false
		})
		return c, found, err
	}
	if first, ok, err = one(false); err != nil || !ok {
		return 0, 0, false, err
	}
	if last, ok, err = one(true); err != nil || !ok {
		return 0, 0, false, err
	}
	return first, last, true, nil
}

// maxGridClock bounds grid clocks so that every bucket boundary converts
// to nanoseconds without overflow (about the year 2262).
const maxGridClock = math.MaxInt64/1_000_000_000 - 1

// Grid is the bucket layout of a downsampled read: N buckets of Width
// seconds from Start, the last one ending at End (exclusive) instead
// when the range is not a multiple of Width.
type Grid struct {
	Start int64 // unix seconds
	Width int64 // seconds, ≥ 1
	N     int   // buckets, 1..MaxBuckets
	End   int64 // unix seconds, exclusive: till+1
}

// NewGrid lays out at most n (clamped to 1..MaxBuckets) whole-second
// buckets over [from, till]. A reversed range (till < from) gives a grid
// that selects nothing (N == 0). Bounds beyond ±maxGridClock are clamped.
func NewGrid(from, till int64, n int) Grid {
	n = min(max(n, 1), MaxBuckets)
	from = min(max(from, -maxGridClock), maxGridClock)
	till = min(max(till, -maxGridClock), maxGridClock-1)
	if till < from {
		return Grid{Start: from, Width: 1, End: from}
	}
	span := till - from + 1 // ≤ 2·maxGridClock: no overflow
	w := span / int64(n)
	if span%int64(n) != 0 {
		w++
	}
	cnt := span / w
	if span%w != 0 {
		cnt++
	}
	return Grid{Start: from, Width: w, N: int(cnt), End: till + 1}
}

// Index returns the bucket of unix second sec, or -1 outside the grid.
func (g Grid) Index(sec int64) int {
	if sec < g.Start || sec >= g.End {
		return -1
	}
	return int((sec - g.Start) / g.Width)
}

// Bounds returns bucket i's [start, end) in unix seconds.
func (g Grid) Bounds(i int) (start, end int64) {
	start = g.Start + int64(i)*g.Width
	return start, min(start+g.Width, g.End)
}

// Accumulator folds values into a grid's buckets. Values should arrive in
// ascending time order, as stores keep them: then each costs a compare
// and the aggregate updates, and no division. A value before the current
// bucket (out of order across calls) takes a slower path that finds or
// inserts its bucket, so the result is still right. Within one AddFloats
// or AddUints call timestamps MUST ascend. The zero Accumulator is not
// usable; call NewAccumulator.
type Accumulator struct {
	g          Grid
	out        []Bucket
	cur        int   // index in out of the current bucket, -1 for none
	start, end int64 // the current bucket's bounds in unix nanoseconds
	lo, hi     int64 // the grid's bounds in unix nanoseconds
}

// NewAccumulator returns an empty Accumulator over g.
func NewAccumulator(g Grid) *Accumulator {
	// Sized for the grid up front (the common case fills most buckets),
	// up to a bound so a sparse read of a huge grid does not pay for it.
	a := &Accumulator{g: g, cur: -1, lo: g.Start * 1e9, hi: g.End * 1e9, out: make([]Bucket, 0, min(g.N, 4096))}
	a.start, a.end = a.hi, a.hi // no current bucket: every value seeks
	return a
}

// Grid is the accumulator's grid.
func (a *Accumulator) Grid() Grid { return a.g }

// Buckets returns the non-empty buckets in ascending Clock order. The
// accumulator must not be used afterwards.
func (a *Accumulator) Buckets() []Bucket { return a.out }

// seek makes t's bucket the current one and reports whether t is inside
// the grid.
func (a *Accumulator) seek(t int64, vt ValueType) bool {
	if t < a.lo || t >= a.hi {
		return false
	}
	sec := t / 1e9
	if t < 0 && t%1e9 != 0 {
		sec--
	}
	i := a.g.Index(sec)
	start, end := a.g.Bounds(i)
	a.start, a.end = start*1e9, end*1e9
	// The common case: a bucket after every bucket so far.
	if n := len(a.out); n == 0 || a.out[n-1].Clock < start {
		a.out = append(a.out, Bucket{Clock: start, Type: vt})
		a.cur = n
		return true
	}
	// Out of order: find or insert (binary search by Clock).
	lo, hi := 0, len(a.out)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a.out[m].Clock < start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if a.out[lo].Clock != start {
		a.out = append(a.out, Bucket{})
		copy(a.out[lo+1:], a.out[lo:])
		a.out[lo] = Bucket{Clock: start, Type: vt}
	}
	a.cur = lo
	return true
}

// AddFloat adds one float value at t (unix nanoseconds).
func (a *Accumulator) AddFloat(t int64, v float64) {
	if t < a.start || t >= a.end {
		if !a.seek(t, Float) {
			return
		}
	}
	addFloat(&a.out[a.cur], v)
}

func addFloat(b *Bucket, v float64) {
	if b.Count == 0 {
		b.Min, b.Max = v, v
	}
	// The same comparisons as AddFloats, so that both agree on ±0.
	if v < b.Min {
		b.Min = v
	}
	if v > b.Max {
		b.Max = v
	}
	b.Sum += v
	b.Count++
}

// AddUint adds one unsigned value at t (unix nanoseconds).
func (a *Accumulator) AddUint(t int64, v uint64) {
	if t < a.start || t >= a.end {
		if !a.seek(t, Uint) {
			return
		}
	}
	b := &a.out[a.cur]
	if b.Count == 0 {
		b.MinU, b.MaxU = v, v
	} else {
		b.MinU, b.MaxU = min(b.MinU, v), max(b.MaxU, v)
	}
	b.Min, b.Max = float64(b.MinU), float64(b.MaxU)
	var c uint64
	b.SumLo, c = bits.Add64(b.SumLo, v, 0)
	b.SumHi += c
	b.Count++
}

// AddFloats adds float values with ascending timestamps ts (a decoded
// chunk). The inner loop keeps one bucket's aggregate in registers until
// the bucket ends.
func (a *Accumulator) AddFloats(ts []int64, vals []float64) {
	vals = vals[:len(ts)]
	for k := 0; k < len(ts); {
		if t := ts[k]; t < a.start || t >= a.end {
			if !a.seek(t, Float) {
				k++
				continue
			}
		}
		b := &a.out[a.cur]
		end := a.end
		n, sum, lo, hi := b.Count, b.Sum, b.Min, b.Max
		if n == 0 {
			v := vals[k]
			lo, hi = v, v
		}
		j := k
		for ; j < len(ts) && ts[j] < end; j++ {
			v := vals[j]
			sum += v
			// Written as branches rather than min/max: Go's min/max
			// order NaN and ±0 (extra work per value), and stored values
			// are never NaN (the trapper refuses them).
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
		b.Count, b.Sum, b.Min, b.Max = n+int64(j-k), sum, lo, hi
		k = j
	}
}

// AddFloatBits is AddFloats for values given as their IEEE-754 bits, as
// the head and memstore keep them.
func (a *Accumulator) AddFloatBits(ts []int64, vbits []uint64) {
	vbits = vbits[:len(ts)]
	for k := 0; k < len(ts); {
		if t := ts[k]; t < a.start || t >= a.end {
			if !a.seek(t, Float) {
				k++
				continue
			}
		}
		b := &a.out[a.cur]
		end := a.end
		n, sum, lo, hi := b.Count, b.Sum, b.Min, b.Max
		if n == 0 {
			v := math.Float64frombits(vbits[k])
			lo, hi = v, v
		}
		j := k
		for ; j < len(ts) && ts[j] < end; j++ {
			v := math.Float64frombits(vbits[j])
			sum += v
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
		b.Count, b.Sum, b.Min, b.Max = n+int64(j-k), sum, lo, hi
		k = j
	}
}

// AddUints adds unsigned values with ascending timestamps ts.
func (a *Accumulator) AddUints(ts []int64, vals []uint64) {
	vals = vals[:len(ts)]
	for k := 0; k < len(ts); {
		if t := ts[k]; t < a.start || t >= a.end {
			if !a.seek(t, Uint) {
				k++
				continue
			}
		}
		b := &a.out[a.cur]
		end := a.end
		n, shi, slo, lo, hi := b.Count, b.SumHi, b.SumLo, b.MinU, b.MaxU
		if n == 0 {
			lo, hi = vals[k], vals[k]
		}
		j := k
		for ; j < len(ts) && ts[j] < end; j++ {
			v := vals[j]
			var c uint64
			slo, c = bits.Add64(slo, v, 0)
			shi += c
			lo, hi = min(lo, v), max(hi, v)
		}
		b.Count, b.SumHi, b.SumLo, b.MinU, b.MaxU = n+int64(j-k), shi, slo, lo, hi
		b.Min, b.Max = float64(lo), float64(hi)
		k = j
	}
}
