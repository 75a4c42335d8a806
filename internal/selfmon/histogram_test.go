package selfmon

import (
	"math"
	"strings"
	"testing"
)

func TestHistogramText(t *testing.T) {
	r := NewRegistry()
	h := r.Histogram("x_seconds", "X.", []float64{1, 0.1}, "kind", "a")
	for _, v := range []float64{0.05, 0.1, 0.5, 2} {
		h.Observe(v)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `# HELP x_seconds X.
# TYPE x_seconds histogram
x_seconds_bucket{kind="a",le="0.1"} 2
x_seconds_bucket{kind="a",le="1"} 3
x_seconds_bucket{kind="a",le="+Inf"} 4
x_seconds_sum{kind="a"} 2.65
x_seconds_count{kind="a"} 4
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestHistogramQuantile(t *testing.T) {
	h := NewHistogram([]float64{0.01, 0.1, 1})
	if !math.IsNaN(h.Quantile(0.99)) {
		t.Fatal("quantile of nothing is not NaN")
	}
	for i := 0; i < 98; i++ {
		h.Observe(0.005)
	}
	h.Observe(0.5)
	h.Observe(5)
	f := func(q, want float64) {
		t.Helper()
		if got := h.Quantile(q); got != want {
			t.Fatalf("Quantile(%g) = %g; want %g", q, got, want)
		}
	}
	f(0.5, 0.01)
	f(0.98, 0.01)
	f(0.99, 1)
	f(1, math.Inf(1))
	if h.Count() != 100 {
		t.Fatalf("count %d", h.Count())
	}
}
