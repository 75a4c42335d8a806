package history

import (
	"math"
	"testing"
)

func TestStriperVisitsEverySampleOnceByStripe(t *testing.T) {
	g := NewStriper(8)
	samples := make([]Sample, 1000)
	for i := range samples {
		samples[i].ItemID = uint64(i*7 + 3)
	}
	for round := 0; round < 3; round++ { // the starting stripe rotates
		seen := make([]int, len(samples))
		stripes := map[int]bool{}
		g.Each(samples, func(st int, idx []int32) {
			if stripes[st] {
				t.Fatalf("stripe %d visited twice", st)
			}
			stripes[st] = true
			prev := int32(-1)
			for _, i := range idx {
				if g.Stripe(samples[i].ItemID) != st {
					t.Fatalf("sample %d of stripe %d given with stripe %d", i, g.Stripe(samples[i].ItemID), st)
				}
				if i <= prev {
					t.Fatalf("indices not in batch order: %d after %d", i, prev)
				}
				prev = i
				seen[i]++
			}
		})
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("sample %d visited %d times", i, n)
			}
		}
	}
}

func TestClockNanosSaturates(t *testing.T) {
	for _, c := range []struct{ in, want int64 }{
		{0, 0}, {1_700_000_000, 1_700_000_000_000_000_000}, {-5, -5_000_000_000},
		{1 << 40, math.MaxInt64}, {-(1 << 40), math.MinInt64},
	} {
		if got := ClockNanos(c.in); got != c.want {
			t.Errorf("ClockNanos(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}
