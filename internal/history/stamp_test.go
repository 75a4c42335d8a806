package history

import (
	"math"
	"testing"
)

func TestSnapStamp(t *testing.T) {
	const slot = 1_700_000_000_000_000_000
	f := func(actual, tol, want int64) {
		t.Helper()
		if got := SnapStamp(slot, actual, tol); got != want {
			t.Errorf("SnapStamp(slot, slot%+d, %d) = slot%+d, want slot%+d", actual-slot, tol, got-slot, want-slot)
		}
	}
	f(slot, 0, slot)
	f(slot+1_999_999, DefaultStampTolerance, slot)
	f(slot+2_000_000, DefaultStampTolerance, slot)
	f(slot+2_000_001, DefaultStampTolerance, slot+2_000_001) // a slow check keeps its real time
	f(slot-1_500_000, DefaultStampTolerance, slot)           // early, within tolerance
	f(slot-3_000_000, DefaultStampTolerance, slot-3_000_000)
	f(slot+5, -1, slot+5)
	// Far apart: the difference overflows int64; the real time is kept.
	if got := SnapStamp(math.MinInt64+10, math.MaxInt64-10, DefaultStampTolerance); got != math.MaxInt64-10 {
		t.Errorf("overflowing difference snapped to %d", got)
	}
}
