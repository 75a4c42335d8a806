package delay

import (
	"math/bits"
	"time"
)

// horizon bounds the search for the next check: an interval that checks
// nowhere within it (say, only "md31wd7" and 0 otherwise, which can take
// years) is treated as never checking rather than searched forever.
// Zabbix searches one year ahead for flexible intervals.
const horizon = 366 * 24 * time.Hour

// scheduleDays bounds the day-by-day search of a scheduling interval
// (month day and week day filters combined repeat within 28 years, but
// every combination Zabbix accepts matches within about 6 years).
const scheduleDays = 7 * 366

// Next returns the first check time strictly after t for the item whose
// seed (its id) is given, and false if the interval never checks within
// a year. Times are whole seconds.
func (iv *Interval) Next(seed uint64, t time.Time) (time.Time, bool) {
	now := t.Unix()
	next, ok := iv.nextFlexible(seed, now, t.Location())
	for i := range iv.Scheduling {
		if s, sok := iv.Scheduling[i].next(t); sok && (!ok || s.Unix() < next) {
			next, ok = s.Unix(), true
		}
	}
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(next, 0).In(t.Location()), true
}

// nextFlexible is the next check by the main and flexible delays, the
// way Zabbix computes it: on the grid of the delay in force at t; if
// that lands beyond the end of the current period, start again from the
// period's boundary.
func (iv *Interval) nextFlexible(seed uint64, now int64, loc *time.Location) (int64, bool) {
	if len(iv.Flexible) == 0 {
		if iv.Main <= 0 {
			return 0, false
		}
		return grid(iv.Main, seed, now, true), true
	}
	t := now
	limit := now + int64(horizon/time.Second)
	for first := true; t < limit; first = false {
		d := iv.delayAt(t, loc)
		boundary, hasBoundary := iv.nextBoundary(t, loc)
		if d > 0 {
			n := grid(d, seed, t, first)
			if !hasBoundary || n < boundary {
				return n, true
			}
		}
		if !hasBoundary {
			return 0, false
		}
		t = boundary
	}
	return 0, false
}

// grid returns the first point of d*k + seed%d after t (strictly after
// when strict, else at or after).
func grid(d int64, seed uint64, t int64, strict bool) int64 {
	n := d*floorDiv(t, d) + int64(seed%uint64(d))
	for n < t || (strict && n == t) {
		n += d
	}
	return n
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// delayAt is the delay in force at Unix second t: the smallest delay of
// the flexible intervals whose period holds t, else the main one.
func (iv *Interval) delayAt(t int64, loc *time.Location) int64 {
	lt := time.Unix(t, 0).In(loc)
	wd := weekday(lt)
	sec := lt.Hour()*3600 + lt.Minute()*60 + lt.Second()
	d, in := int64(0), false
	for _, f := range iv.Flexible {
		if wd >= f.FromDay && wd <= f.ToDay && sec >= f.Start && sec < f.End {
			if !in || f.Delay < d {
				d, in = f.Delay, true
			}
		}
	}
	if !in {
		return iv.Main
	}
	return d
}

// nextBoundary is the first time after t at which any flexible period
// starts or ends.
func (iv *Interval) nextBoundary(t int64, loc *time.Location) (int64, bool) {
	lt := time.Unix(t, 0).In(loc)
	y, m, d := lt.Date()
	best, ok := int64(0), false
	for off := 0; off <= 8; off++ {
		day := time.Date(y, m, d+off, 0, 0, 0, 0, loc)
		wd := weekday(day)
		for _, f := range iv.Flexible {
			if wd < f.FromDay || wd > f.ToDay {
				continue
			}
			for _, s := range [2]int{f.Start, f.End} {
				b := time.Date(y, m, d+off, 0, 0, s, 0, loc).Unix()
				if b > t && (!ok || b < best) {
					best, ok = b, true
				}
			}
		}
		if ok {
			return best, true
		}
	}
	return best, ok
}

// weekday is Zabbix's week day: 1 = Monday .. 7 = Sunday.
func weekday(t time.Time) int {
	if w := int(t.Weekday()); w != 0 {
		return w
	}
	return 7
}

// next is the first time strictly after t matching the schedule, in t's
// location.
func (s *Schedule) next(t time.Time) (time.Time, bool) {
	loc := t.Location()
	start := time.Unix(t.Unix()+1, 0).In(loc)
	y, m, d := start.Date()
	from := start.Hour()*3600 + start.Minute()*60 + start.Second()
	for off := 0; off < scheduleDays; off++ {
		day := time.Date(y, m, d+off, 0, 0, 0, 0, loc)
		if s.MonthDays&(1<<uint(day.Day())) == 0 || s.WeekDays&(1<<uint(weekday(day))) == 0 {
			from = 0
			continue
		}
		if sec, ok := s.inDay(from); ok {
			dy, dm, dd := day.Date()
			return time.Date(dy, dm, dd, sec/3600, sec/60%60, sec%60, 0, loc), true
		}
		from = 0
	}
	return time.Time{}, false
}

// inDay is the first second of the day at or after from matching the
// hour, minute and second sets.
func (s *Schedule) inDay(from int) (int, bool) {
	h0, m0, s0 := from/3600, from/60%60, from%60
	for h := h0; h < 24; h++ {
		if s.Hours&(1<<uint(h)) == 0 {
			continue
		}
		mStart := 0
		if h == h0 {
			mStart = m0
		}
		for mi := mStart; mi < 60; mi++ {
			if s.Minutes&(1<<uint(mi)) == 0 {
				continue
			}
			sStart := 0
			if h == h0 && mi == m0 {
				sStart = s0
			}
			if rest := s.Seconds >> uint(sStart); rest != 0 {
				sec := sStart + bits.TrailingZeros64(rest)
				if sec < 60 {
					return h*3600 + mi*60 + sec, true
				}
			}
		}
	}
	return 0, false
}
