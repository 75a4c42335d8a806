package zjson

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestAppendClockAndNS(t *testing.T) {
	clocks := []int64{0, 1, 999_999_999, 1_000_000_000, 1_000_000_001, 1_600_000_000, 1_600_099_999, 1_600_100_000, 9_999_999_999, 10_000_000_000, -1, math.MaxInt64, math.MinInt64}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		clocks = append(clocks, r.Int64N(20_000_000_000))
	}
	for _, c := range clocks {
		if got, want := string(AppendClock([]byte("x"), c)), "x"+strconv.FormatInt(c, 10); got != want {
			t.Fatalf("AppendClock(%d) = %q, want %q", c, got, want)
		}
	}
	nss := []int32{0, 7, 99_999_999, 100_000_000, 100_000_001, 123_456_789, 999_999_999, 1_000_000_000, -1, math.MaxInt32, math.MinInt32}
	for range 100_000 {
		nss = append(nss, r.Int32N(1_000_000_000))
	}
	for _, ns := range nss {
		if got, want := string(AppendNS([]byte("x"), ns)), "x"+strconv.FormatInt(int64(ns), 10); got != want {
			t.Fatalf("AppendNS(%d) = %q, want %q", ns, got, want)
		}
	}
}
