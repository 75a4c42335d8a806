package delay

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseGood(t *testing.T) {
	f := func(s string, main int64, nflex, nsched int) {
		t.Helper()
		iv, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if iv.Main != main || len(iv.Flexible) != nflex || len(iv.Scheduling) != nsched {
			t.Fatalf("Parse(%q) = main %d, %d flexible, %d scheduling; want %d, %d, %d", s, iv.Main, len(iv.Flexible), len(iv.Scheduling), main, nflex, nsched)
		}
	}
	f("30s", 30, 0, 0)
	f("1m", 60, 0, 0)
	f("1h", 3600, 0, 0)
	f("1d", 86400, 0, 0)
	f("60", 60, 0, 0)
	f("86400", 86400, 0, 0)
	f("1m;50s/1-5,09:00-18:00", 60, 1, 0)
	f("1m;50s/1-5,9:00-18:00;10s/6-7,00:00-24:00", 60, 2, 0)
	f("0;10s/1-5,09:00-18:00", 0, 1, 0)
	f("0;md1wd1h9", 0, 0, 1)
	f("1h;wd1-5h9-18/2m0", 3600, 0, 1)
	f("0;h9;m/30;s0-59/10", 0, 0, 3)
	f("10m;0/1-7,00:00-07:00;h9,10,11", 600, 1, 1)
	f("1m;md01-31", 60, 0, 1)
	f("1m;h/02", 60, 0, 1)
}

func TestParseBad(t *testing.T) {
	f := func(s, wantInErr string) {
		t.Helper()
		_, err := Parse(s)
		if err == nil {
			t.Fatalf("Parse(%q) succeeded; want an error containing %q", s, wantInErr)
		}
		if !strings.Contains(err.Error(), wantInErr) {
			t.Fatalf("Parse(%q) error %q does not contain %q", s, err, wantInErr)
		}
	}
	f("", "empty time value")
	f("0", "never checks")
	f("0;0/1-7,00:00-24:00", "never checks")
	f("1w", "longer than one day")
	f("86401", "longer than one day")
	f("2d", "longer than one day")
	f("99999999999999999999", "longer than one day")
	f("1.5m", "not a number")
	f("-1", "not a number")
	f("1y", "not a number")
	f("m", "no number")
	f("{$DELAY}", "macro that is not defined")
	f("1m;{$FLEX}", "macro that is not defined")
	f("1m;", "empty custom interval")
	f("1m;;h9", "empty custom interval")
	f("1m;50s", "want <delay>/<period>")
	f("1m;50s/1-5", "want d[-d],hh:mm-hh:mm")
	f("1m;50s/0,09:00-18:00", "week day")
	f("1m;50s/8,09:00-18:00", "week day")
	f("1m;50s/5-1,09:00-18:00", "ends before it starts")
	f("1m;50s/1-5,18:00-09:00", "must end after it starts")
	f("1m;50s/1-5,09:00-09:00", "must end after it starts")
	f("1m;50s/1-5,24:01-24:00", "00:00 .. 24:00")
	f("1m;50s/1-5,9:60-10:00", "00:00 .. 24:00")
	f("1m;50s/1-5,0900-1800", "must be hh:mm")
	f("1m;2d/1-5,09:00-18:00", "longer than one day")
	f("1m;x1", "prefixes md, wd, h, m, s")
	f("1m;h9md1", "in this order")
	f("1m;h9h10", "in this order")
	f("1m;h24", "out of range 0..23")
	f("1m;md0", "out of range 1..31")
	f("1m;md32", "out of range 1..31")
	f("1m;wd8", "out of range 1..7")
	f("1m;wd01", "must be a number 1..7")
	f("1m;md001", "must be a number")
	f("1m;h", "empty filter")
	f("1m;h9,", "empty filter item")
	f("1m;h18-9", "ends before it starts")
	f("1m;m/0", "step 0 must be 1..59")
	f("1m;m/", "step \"\" must be a number")
	f("1m;h9-", "must be a number")
	f(strings.Repeat("1", 1025), "at most 1024")
}

func TestParseMacroError(t *testing.T) {
	_, err := Parse("{$DELAY}")
	if !errors.Is(err, ErrMacro) {
		t.Fatalf("error %v does not wrap ErrMacro", err)
	}
}

func TestScheduleResolvesOmittedFilters(t *testing.T) {
	iv, err := Parse("0;h9")
	if err != nil {
		t.Fatal(err)
	}
	s := iv.Scheduling[0]
	if s.Hours != 1<<9 || s.Minutes != 1 || s.Seconds != 1 || s.WeekDays != 0xfe || s.MonthDays != 0xfffffffe {
		t.Fatalf("h9 resolved to %+v; want 09:00:00 every day", s)
	}
	iv, _ = Parse("0;m0")
	s = iv.Scheduling[0]
	if s.Hours != 1<<24-1 || s.Minutes != 1 || s.Seconds != 1 {
		t.Fatalf("m0 resolved to %+v; want every hour at :00:00", s)
	}
	iv, _ = Parse("0;wd1-5h9-18/2m0")
	s = iv.Scheduling[0]
	if s.WeekDays != 0b111110 || s.Hours != 1<<9|1<<11|1<<13|1<<15|1<<17 || s.Minutes != 1 || s.Seconds != 1 {
		t.Fatalf("wd1-5h9-18/2m0 resolved to %+v", s)
	}
	iv, _ = Parse("0;s/15")
	s = iv.Scheduling[0]
	if s.Seconds != 1|1<<15|1<<30|1<<45 || s.Minutes != 1<<60-1 || s.Hours != 1<<24-1 {
		t.Fatalf("s/15 resolved to %+v", s)
	}
	iv, _ = Parse("0;m10/20")
	s = iv.Scheduling[0]
	if s.Minutes != 1<<10|1<<30|1<<50 {
		t.Fatalf("m10/20 resolved to minutes %b", s.Minutes)
	}
}

// utc builds a UTC time; 2024-01-01 is a Monday.
func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestNext(t *testing.T) {
	f := func(delay string, seed uint64, after, want string) {
		t.Helper()
		iv, err := Parse(delay)
		if err != nil {
			t.Fatalf("Parse(%q): %v", delay, err)
		}
		got, ok := iv.Next(seed, utc(after))
		if want == "never" {
			if ok {
				t.Fatalf("Next(%q, seed %d, %s) = %s; want never", delay, seed, after, got)
			}
			return
		}
		if !ok || !got.Equal(utc(want)) {
			t.Fatalf("Next(%q, seed %d, %s) = %s, %v; want %s", delay, seed, after, got.UTC().Format(time.DateTime), ok, want)
		}
	}
	// Main delay: the grid d*k + seed%d of Unix seconds; strictly after.
	f("60", 0, "2024-01-01 10:00:00", "2024-01-01 10:01:00")
	f("60", 0, "2024-01-01 10:00:30", "2024-01-01 10:01:00")
	f("60", 7, "2024-01-01 10:00:00", "2024-01-01 10:00:07")
	f("60", 7, "2024-01-01 10:00:07", "2024-01-01 10:01:07")
	f("1m", 60+7, "2024-01-01 10:00:07", "2024-01-01 10:01:07")
	f("30s", 29, "2024-01-01 10:00:00", "2024-01-01 10:00:29")
	f("1h", 3599, "2024-01-01 10:00:00", "2024-01-01 10:59:59")
	f("1d", 0, "2024-01-01 10:00:00", "2024-01-02 00:00:00")
	// Flexible: 10s during working hours on week days (Monday 2024-01-01).
	f("1m;10s/1-5,09:00-18:00", 3, "2024-01-01 12:00:00", "2024-01-01 12:00:03")
	f("1m;10s/1-5,09:00-18:00", 3, "2024-01-01 12:00:03", "2024-01-01 12:00:13")
	// Before 09:00 the main grid would land after the boundary: the
	// flexible grid from the boundary on.
	f("1h;10s/1-5,09:00-18:00", 3, "2024-01-01 08:30:00", "2024-01-01 09:00:03")
	// Saturday: the flexible interval is not in force.
	f("1m;10s/1-5,09:00-18:00", 3, "2024-01-06 12:00:05", "2024-01-06 12:01:03")
	// At 17:59:55, the 10 s grid point 18:00:03 is past the end: the main
	// minute grid from 18:00 on.
	f("1m;10s/1-5,09:00-18:00", 3, "2024-01-01 17:59:55", "2024-01-01 18:00:03")
	f("5m;10s/1-5,09:00-18:00", 3, "2024-01-01 17:59:55", "2024-01-01 18:00:03")
	// Overlapping flexible intervals: the smaller delay wins.
	f("1h;30s/1-7,00:00-24:00;5s/1-1,10:00-11:00", 0, "2024-01-01 10:00:01", "2024-01-01 10:00:05")
	f("1h;30s/1-7,00:00-24:00;5s/1-1,10:00-11:00", 0, "2024-01-02 10:00:01", "2024-01-02 10:00:30")
	// Zero: not polled at night, resumes at 07:00.
	f("10m;0/1-7,00:00-07:00", 0, "2024-01-01 01:00:00", "2024-01-01 07:00:00")
	f("10m;0/1-7,00:00-07:00", 0, "2024-01-01 06:55:00", "2024-01-01 07:00:00")
	f("0;10s/3-3,09:00-10:00", 0, "2024-01-01 12:00:00", "2024-01-03 09:00:00")
	// Scheduling: exact local times, strictly after.
	f("0;h9", 0, "2024-01-01 08:00:00", "2024-01-01 09:00:00")
	f("0;h9", 0, "2024-01-01 09:00:00", "2024-01-02 09:00:00")
	f("0;m0", 0, "2024-01-01 08:00:00", "2024-01-01 09:00:00")
	f("0;m/15", 0, "2024-01-01 08:00:00", "2024-01-01 08:15:00")
	f("0;s/10", 0, "2024-01-01 08:00:05", "2024-01-01 08:00:10")
	f("0;wd1-5h9-18/2m0", 0, "2024-01-05 17:30:00", "2024-01-08 09:00:00") // Friday 17:30 -> Monday 09:00
	f("0;wd1-5h9-18/2m0", 0, "2024-01-02 09:00:00", "2024-01-02 11:00:00")
	f("0;md1wd1h9", 0, "2024-01-01 10:00:00", "2024-04-01 09:00:00") // next 1st that is a Monday
	f("0;md31", 0, "2024-01-31 00:00:00", "2024-03-31 00:00:00")
	f("0;md15h12m30s15", 0, "2024-01-15 12:30:14", "2024-01-15 12:30:15")
	f("0;h9;h10", 0, "2024-01-01 09:00:00", "2024-01-01 10:00:00")
	// Scheduling alongside a main delay: whichever comes first.
	f("1h;h9m30", 0, "2024-01-01 09:10:00", "2024-01-01 09:30:00")
	f("1h;h9m30", 0, "2024-01-01 09:40:00", "2024-01-01 10:00:00")
	// md31 on a Sunday in February never exists, but other months do.
	f("0;md30wd5", 0, "2024-01-01 00:00:00", "2024-08-30 00:00:00")
}

func TestNextInLocation(t *testing.T) {
	loc := time.FixedZone("UTC+3", 3*3600)
	iv, err := Parse("0;h9")
	if err != nil {
		t.Fatal(err)
	}
	got, ok := iv.Next(0, time.Date(2024, 1, 1, 8, 0, 0, 0, loc))
	if !ok || !got.Equal(time.Date(2024, 1, 1, 9, 0, 0, 0, loc)) {
		t.Fatalf("h9 in UTC+3 at 08:00 local: got %s", got)
	}
}

// Items at the same interval are spread over it by id: 10,000 items with
// consecutive ids at 60 s fire at most ceil(10000/60) in one second.
func TestNextSpreadsItems(t *testing.T) {
	iv, err := Parse("1m")
	if err != nil {
		t.Fatal(err)
	}
	now := utc("2024-01-01 10:00:00")
	perSecond := map[int64]int{}
	for id := uint64(100000); id < 110000; id++ {
		n, ok := iv.Next(id, now)
		if !ok || !n.After(now) || n.Sub(now) > time.Minute {
			t.Fatalf("item %d: next %s not within (now, now+1m]", id, n)
		}
		perSecond[n.Unix()]++
	}
	most := 0
	for _, c := range perSecond {
		most = max(most, c)
	}
	if len(perSecond) != 60 || most > 10000/60+1 {
		t.Fatalf("10000 items spread over %d seconds, at most %d in one; want 60 seconds, at most %d", len(perSecond), most, 10000/60+1)
	}
}

// The grid is the same whenever it is computed: the schedule survives a
// restart (the next check after any time is on the same grid).
func TestNextIsStable(t *testing.T) {
	iv, _ := Parse("5m")
	a, _ := iv.Next(12345, utc("2024-01-01 10:00:00"))
	b, _ := iv.Next(12345, utc("2024-01-01 10:03:17"))
	if a.Unix()%300 != 12345%300 || b.Sub(a)%(5*time.Minute) != 0 {
		t.Fatalf("next checks %s and %s are not on the item's 5m grid", a, b)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"30s", "1m;50s/1-5,09:00-18:00", "0;md1wd1h9", "1h;wd1-5h9-18/2m0", "0;s/10;m0-59/7,3",
		"10m;0/1-7,00:00-07:00;5s/6-7,0:00-24:00", "0;md30wd5", "{$X}", "1m;h9md1"} {
		f.Add(s, uint64(12345), int64(1704103200))
	}
	f.Fuzz(func(t *testing.T, s string, seed uint64, at int64) {
		iv, err := Parse(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if !iv.Polls() {
			t.Fatalf("Parse(%q) accepted an interval that never polls", s)
		}
		at = at % (1 << 33) // up to year 2242
		if at < 0 {
			at = -at
		}
		now := time.Unix(at, 0).UTC()
		n, ok := iv.Next(seed, now)
		if ok && !n.After(now) {
			t.Fatalf("Next(%q, %d, %s) = %s, not after", s, seed, now, n)
		}
		if ok && iv.Main > 0 && len(iv.Flexible) == 0 && n.Sub(now) > time.Duration(iv.Main)*time.Second {
			t.Fatalf("Next(%q, %d, %s) = %s, more than the main interval ahead", s, seed, now, n)
		}
	})
}

func TestParseTooManyFlexible(t *testing.T) {
	s := "1m" + strings.Repeat(";10s/1-5,09:00-18:00", 8)
	if _, err := Parse(s); err == nil || !strings.Contains(err.Error(), "more than 7 flexible") {
		t.Fatalf("Parse with 8 flexible intervals: %v", err)
	}
}

// BenchmarkNext measures the costliest shapes: seven flexible intervals
// whose delays never fit their periods (a year of boundaries searched),
// and a scheduling interval matching a few days a year.
//
//	go test -run '^$' -bench Next -benchmem ./internal/zbx/delay/
func BenchmarkNext(b *testing.B) {
	for _, s := range []string{"1m", "1m;10s/1-5,09:00-18:00", "0" + strings.Repeat(";1d/1-7,00:00-00:01", 7), "0;md31wd7h23m59s59"} {
		iv, err := Parse(s)
		if err != nil {
			b.Fatal(err)
		}
		now := utc("2024-01-01 10:00:00")
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				iv.Next(uint64(i), now)
			}
		})
	}
}
