package poll

import (
	"strconv"
	"testing"
	"time"
)

// While the process is behind, the checks in flight stay within the
// limit (not MaxInFlight), the limit's hits and bound are on /metrics,
// and once it catches up the bound doubles each second back to
// MaxInFlight. Without the limit the first turn hands out every due
// check (1,500) and keeps them all in flight.
func TestInFlightLimitWhileBehind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		behind int // Options.MaxInFlightBehind
		want   int
	}{{"adaptive", 0, minInFlightBehind}, {"configured", 100, 100}} {
		t.Run(tc.name, func(t *testing.T) {
			lag := &fixedLag{2 * time.Second}
			h := newHarness(t, 1, 1500, "1s", Options{Lag: lag, MaxInFlight: 5000, MaxInFlightBehind: tc.behind})
			var held []Check
			for sec := 0; sec < 5; sec++ {
				held = append(held, h.at(sec)...)
				if len(held) > tc.want {
					t.Fatalf("second %d: %d checks in flight while behind; the limit is %d", sec, len(held), tc.want)
				}
			}
			if len(held) != tc.want {
				t.Fatalf("%d checks in flight; want the limit, %d", len(held), tc.want)
			}
			if got := metric(t, h.m, `peregrine_poll_in_flight_limit`); got != strconv.Itoa(tc.want) {
				t.Fatalf("limit gauge %s; want %d", got, tc.want)
			}
			if got := metric(t, h.m, `peregrine_poll_in_flight_limit_hits_total{reason="server_behind"}`); got == "0" {
				t.Fatal("the limit held checks back but no hit was counted")
			}
			// Caught up: the bound doubles each second, then is lifted.
			lag.d = 0
			h.complete(held, OK, "1", "")
			prev := tc.want
			for sec := 5; ; sec++ {
				cs := h.at(sec)
				g, _ := strconv.Atoi(metric(t, h.m, `peregrine_poll_in_flight_limit`))
				if g == 5000 {
					break
				}
				if g != 2*prev || len(cs) > g {
					t.Fatalf("second %d: bound %d after %d, %d handed out; want it doubled and kept", sec, g, prev, len(cs))
				}
				prev = g
				h.complete(cs, OK, "1", "")
				if sec > 20 {
					t.Fatal("the limit was never lifted")
				}
			}
			if cs := h.chk.take(); len(cs) != 0 {
				t.Fatalf("%d checks left untaken", len(cs))
			}
		})
	}
}

// The adaptive limit is what the process completed in the last second
// scaled to a third of the default timeout: here 8,000 in a second,
// 0.75 s, so 2,000 in flight once it is behind; a configured limit wins,
// and the limit never exceeds MaxInFlight.
func TestInFlightLimitFollowsCompletions(t *testing.T) {
	for _, tc := range []struct {
		behind, max, done, want int
	}{{0, 10000, 8000, 2000}, {0, 10000, 40, minInFlightBehind}, {0, 50, 400, 50}, {10, 10000, 400, 10}, {0, 10000, 100000, 10000}} {
		lag := &fixedLag{2 * time.Second}
		h := newHarness(t, 1, 1, "1s", Options{Lag: lag, DefaultTimeout: 750 * time.Millisecond, MaxInFlight: tc.max, MaxInFlightBehind: tc.behind})
		now := time.Now()
		h.s.limit.last, h.s.limit.done, h.s.limit.rate = now.Add(-time.Second), tc.done, -1
		h.s.updateLimit(now)
		if h.s.limit.limit != tc.want {
			t.Errorf("%+v: limit %d", tc, h.s.limit.limit)
		}
		// Not behind: nothing changes until it was; then it doubles.
		lag.d = 0
		h.s.updateLimit(now.Add(time.Second))
		if want := 2 * tc.want; want >= tc.max && h.s.limit.limit != 0 || want < tc.max && h.s.limit.limit != want {
			t.Errorf("%+v: limit %d a second after catching up", tc, h.s.limit.limit)
		}
	}
}

// A second of few completions does not throttle at once: the limit
// falls by at most half a second from the checks in flight.
func TestInFlightLimitFallsByHalves(t *testing.T) {
	h := newHarness(t, 1, 1, "1s", Options{Lag: &fixedLag{2 * time.Second}, MaxInFlight: 20000})
	now := time.Now()
	h.s.inFlight = 16000 // as if handed out before the process fell behind
	h.s.limit.last, h.s.limit.done, h.s.limit.rate = now.Add(-time.Second), 10, -1
	for i, want := range []int{8000, 4000, 2000, minInFlightBehind, minInFlightBehind} {
		h.s.updateLimit(now.Add(time.Duration(i) * time.Second))
		if h.s.limit.limit != want {
			t.Fatalf("second %d behind: limit %d; want %d", i, h.s.limit.limit, want)
		}
	}
	h.s.inFlight = 0
}
