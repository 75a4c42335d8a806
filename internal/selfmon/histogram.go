package selfmon

import (
	"math"
	"sort"
	"strconv"
	"sync/atomic"
)

// Histogram counts observations into fixed buckets (cumulative on
// exposition, as Prometheus expects). Observe is lock-free: one atomic
// add per bucket hit plus the count and the sum.
type Histogram struct {
	upper  []float64       // bucket upper bounds, ascending; +Inf implied
	counts []atomic.Uint64 // per bucket (not cumulative), len(upper)+1
	sum    atomic.Uint64   // float64 bits, updated by CAS
	count  atomic.Uint64
}

// NewHistogram returns an unregistered histogram with the given upper
// bounds (sorted here).
func NewHistogram(upper []float64) *Histogram {
	u := append([]float64(nil), upper...)
	sort.Float64s(u)
	return &Histogram{upper: u, counts: make([]atomic.Uint64, len(u)+1)}
}

// Histogram registers and returns a new histogram.
func (r *Registry) Histogram(name, help string, upper []float64, labels ...string) *Histogram {
	h := NewHistogram(upper)
	r.addHistogram(name, help, labels, h)
	return h
}

// Observe records one value.
func (h *Histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.upper, v) // first bound >= v: le semantics
	h.counts[i].Add(1)
	h.count.Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 { return h.count.Load() }

// Sum is the sum of the observations.
func (h *Histogram) Sum() float64 { return math.Float64frombits(h.sum.Load()) }

// Quantile estimates the q-quantile (0 < q <= 1) as the upper bound of
// the bucket that holds it: an upper estimate, never an underestimate
// (+Inf when it lies beyond the last bound; NaN without observations).
func (h *Histogram) Quantile(q float64) float64 {
	total := h.count.Load()
	if total == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		if cum >= rank {
			if i == len(h.upper) {
				return math.Inf(1)
			}
			return h.upper[i]
		}
	}
	return math.Inf(1)
}

// appendText renders the histogram's series for WriteText.
func (h *Histogram) appendText(b []byte, name string, labels Labels) []byte {
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		le := "+Inf"
		if i < len(h.upper) {
			le = strconv.FormatFloat(h.upper[i], 'g', -1, 64)
		}
		b = append(b, name...)
		b = append(b, "_bucket"...)
		b = append(b, append(append(Labels(nil), labels...), "le", le).render()...)
		b = append(b, ' ')
		b = strconv.AppendUint(b, cum, 10)
		b = append(b, '\n')
	}
	ls := labels.render()
	b = append(b, name...)
	b = append(b, "_sum"...)
	b = append(b, ls...)
	b = append(b, ' ')
	b = appendFloat(b, h.Sum())
	b = append(b, '\n')
	b = append(b, name...)
	b = append(b, "_count"...)
	b = append(b, ls...)
	b = append(b, ' ')
	b = strconv.AppendUint(b, h.count.Load(), 10)
	return append(b, '\n')
}
