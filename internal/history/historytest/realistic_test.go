package historytest

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
)

func TestRealisticDeterministic(t *testing.T) {
	a := Realistic(7, 50, time.Hour)
	b := Realistic(7, 50, time.Hour)
	for i := range a.Items {
		if d := cmp.Diff(a.Series(i), b.Series(i)); d != "" {
			t.Fatalf("item %d differs between two generators of seed 7 (-a +b):\n%s", i, d)
		}
	}
	c := Realistic(8, 50, time.Hour)
	if cmp.Equal(a.Series(0), c.Series(0)) && cmp.Equal(a.Items, c.Items) {
		t.Fatal("seeds 7 and 8 generated the same data")
	}
	// An item's values do not depend on how many items there are.
	big := Realistic(7, 200, time.Hour)
	if d := cmp.Diff(a.Series(3), big.Series(3)); d != "" {
		t.Fatalf("item 4 changed with the item count (-50 +200):\n%s", d)
	}
}

// TestRealisticNextMatchesSeries: walking by windows yields per item
// exactly Series, every batch in time order.
func TestRealisticNextMatchesSeries(t *testing.T) {
	g := Realistic(1, 300, 2*time.Hour)
	by := map[uint64][]history.Sample{}
	var buf []history.Sample
	total := 0
	for {
		var ok bool
		buf, ok = g.Next(buf[:0], 7*time.Minute)
		if !ok {
			break
		}
		for i := 1; i < len(buf); i++ {
			if buf[i].Before(&buf[i-1]) {
				t.Fatalf("batch not sorted at %d: %+v after %+v", i, buf[i], buf[i-1])
			}
		}
		for _, s := range buf {
			by[s.ItemID] = append(by[s.ItemID], s)
		}
		total += len(buf)
	}
	if total != g.Count() {
		t.Fatalf("Next yielded %d values, Count says %d", total, g.Count())
	}
	for i, it := range g.Items {
		if d := cmp.Diff(g.Series(i), by[it.ID]); d != "" {
			t.Fatalf("item %d: Next differs from Series (-series +next):\n%s", it.ID, d)
		}
	}
}

// TestRealisticShape checks the properties the benchmarks rely on: the
// interval and kind mix, timestamps strictly ascending near their slots
// with a nanosecond part, values of the declared shape.
func TestRealisticShape(t *testing.T) {
	g := Realistic(42, 2000, 6*time.Hour)
	intervals := map[int64]int{}
	kinds := map[Kind]int{}
	var nsZero, values int
	for i, it := range g.Items {
		intervals[it.Interval]++
		kinds[it.Kind]++
		v := g.Series(i)
		if want := int((g.End - g.Start - it.Phase + it.Interval - 1) / it.Interval); len(v) != want {
			t.Fatalf("item %d (interval %d, phase %d): %d values, want %d", it.ID, it.Interval, it.Phase, len(v), want)
		}
		for k, s := range v {
			values++
			if s.ItemID != it.ID || s.Type != it.Type {
				t.Fatalf("item %+v: sample %+v", it, s)
			}
			if k > 0 && !v[k-1].Before(&s) {
				t.Fatalf("item %d: %+v not after %+v", it.ID, s, v[k-1])
			}
			slot := g.Start + it.Phase + int64(k)*it.Interval
			if s.Clock < slot-1 || s.Clock > slot+1 || s.Clock < g.Start || s.Clock >= g.End {
				t.Fatalf("item %d value %d at %d, slot %d", it.ID, k, s.Clock, slot)
			}
			if s.NS < 0 || s.NS >= 1e9 {
				t.Fatalf("item %d: ns %d", it.ID, s.NS)
			}
			if s.NS == 0 {
				nsZero++
			}
			switch it.Kind {
			case Gauge:
				p := math.Pow10(it.Decimals)
				if s.F < 0 || math.Abs(s.F*p-math.Round(s.F*p)) > 1e-6 {
					t.Fatalf("gauge %d with %d decimals: %v", it.ID, it.Decimals, s.F)
				}
			case Counter:
				if k > 0 && s.U <= v[k-1].U {
					t.Fatalf("counter %d went from %d to %d", it.ID, v[k-1].U, s.U)
				}
			case Size:
				if s.U%4096 != 0 {
					t.Fatalf("size %d: %d is not a multiple of 4096", it.ID, s.U)
				}
			case Status:
				if s.U > 1 {
					t.Fatalf("status %d: %d", it.ID, s.U)
				}
			case Text:
				if s.S == "" {
					t.Fatalf("text %d: empty", it.ID)
				}
			}
		}
	}
	// The mix within a few percent of 20/60/20 and 45/20/10/15/10.
	near := func(what string, got int, wantPct float64) {
		t.Helper()
		if pct := 100 * float64(got) / float64(len(g.Items)); math.Abs(pct-wantPct) > 4 {
			t.Errorf("%s: %.1f%% of items, want about %.0f%%", what, pct, wantPct)
		}
	}
	near("10 s", intervals[10], 20)
	near("60 s", intervals[60], 60)
	near("300 s", intervals[300], 20)
	near("gauge", kinds[Gauge], 45)
	near("counter", kinds[Counter], 20)
	near("size", kinds[Size], 10)
	near("status", kinds[Status], 15)
	near("text", kinds[Text], 10)
	if nsZero*1000 > values {
		t.Errorf("%d of %d values have ns 0: the ns part is not random", nsZero, values)
	}
}
