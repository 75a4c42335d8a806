package delay

import (
	"errors"
	"fmt"
	"strings"
)

// MaxSeconds is the longest main or flexible delay Zabbix accepts: one
// day.
const MaxSeconds = 86400

// maxLen bounds a whole delay string (the Zabbix database column is 1024
// characters): parsing cost stays bounded whatever a client sends.
const maxLen = 1024

// maxFlexible is Zabbix 6.0's limit on flexible intervals per item; it
// also bounds the work of finding period boundaries in Next.
const maxFlexible = 7

// ErrMacro is wrapped by Parse's error for a delay that still holds a
// macro: the scheduler expands user macros first (package poll), so one
// left is undefined on the item's host, its templates and globally.
var ErrMacro = errors.New("the update interval uses a macro that is not defined")

// Interval is a parsed update interval. The zero value never checks.
type Interval struct {
	// Main is the main delay in seconds (0: only flexible and scheduling
	// intervals check).
	Main int64
	// Flexible are the flexible intervals in the order given.
	Flexible []Flexible
	// Scheduling are the scheduling intervals in the order given.
	Scheduling []Schedule
}

// Flexible is one flexible interval: Delay seconds between checks from
// Start to End (seconds of the day, End exclusive) on week days FromDay
// to ToDay (1 = Monday .. 7 = Sunday).
type Flexible struct {
	Delay          int64
	FromDay, ToDay int
	Start, End     int
}

// Schedule is one scheduling interval as sets of matching values, one
// bit per value: bit d of MonthDays is day d of the month (1..31), bit w
// of WeekDays is week day w (1 = Monday .. 7 = Sunday), bit h of Hours
// hour h (0..23) and so on. Omitted filters are already resolved (see
// the package comment).
type Schedule struct {
	MonthDays uint32
	WeekDays  uint8
	Hours     uint32
	Minutes   uint64
	Seconds   uint64
}

// Polls reports whether the interval ever checks.
func (iv *Interval) Polls() bool {
	if iv.Main > 0 || len(iv.Scheduling) > 0 {
		return true
	}
	for _, f := range iv.Flexible {
		if f.Delay > 0 {
			return true
		}
	}
	return false
}

// Parse parses a Zabbix update interval (see the package comment). The
// error says what is wrong and where.
func Parse(s string) (Interval, error) {
	var iv Interval
	if len(s) > maxLen {
		return iv, fmt.Errorf("update interval is %d characters long; at most %d are allowed", len(s), maxLen)
	}
	if strings.Contains(s, "{") {
		return iv, fmt.Errorf("update interval %q: %w (define it on the host, a linked template or globally, or write the interval itself, e.g. \"1m\")", s, ErrMacro)
	}
	parts := strings.Split(s, ";")
	main, err := parseTime(parts[0])
	if err != nil {
		return iv, fmt.Errorf("update interval %q: main interval: %w", s, err)
	}
	iv.Main = main
	for _, p := range parts[1:] {
		switch {
		case p == "":
			return iv, fmt.Errorf("update interval %q has an empty custom interval (remove the extra ';')", s)
		case p[0] >= '0' && p[0] <= '9':
			f, err := parseFlexible(p)
			if err != nil {
				return iv, fmt.Errorf("update interval %q: flexible interval %q: %w", s, p, err)
			}
			if len(iv.Flexible) == maxFlexible {
				return iv, fmt.Errorf("update interval %q has more than %d flexible intervals, the most Zabbix allows", s, maxFlexible)
			}
			iv.Flexible = append(iv.Flexible, f)
		default:
			sc, err := parseSchedule(p)
			if err != nil {
				return iv, fmt.Errorf("update interval %q: scheduling interval %q: %w", s, p, err)
			}
			iv.Scheduling = append(iv.Scheduling, sc)
		}
	}
	if !iv.Polls() {
		if len(parts) == 1 {
			return iv, fmt.Errorf("update interval %q never checks: use a non-zero interval, or add a flexible or scheduling interval", s)
		}
		return iv, fmt.Errorf("update interval %q never checks: the main interval is 0 and no flexible interval has a non-zero delay nor is there a scheduling interval", s)
	}
	return iv, nil
}

// ParseSeconds parses a Zabbix time value: a non-negative decimal number
// optionally followed by one suffix s, m, h, d or w ("90d", "30s",
// "3600"). A number alone is seconds. Signs, fractions, spaces, the "y"
// suffix and user macros are not accepted. It is the one parser of such
// values: update intervals here, retention periods and timeouts in the
// catalog, queue bounds of internal items. Values beyond 2^40 seconds are
// refused (far beyond any limit; keeps the multiplication exact).
func ParseSeconds(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("empty time value")
	}
	mul := int64(1)
	num := s
	switch s[len(s)-1] {
	case 's':
		num = s[:len(s)-1]
	case 'm':
		mul, num = 60, s[:len(s)-1]
	case 'h':
		mul, num = 3600, s[:len(s)-1]
	case 'd':
		mul, num = 86400, s[:len(s)-1]
	case 'w':
		mul, num = 7*86400, s[:len(s)-1]
	}
	if num == "" {
		return 0, fmt.Errorf("time value %q has no number", s)
	}
	var n int64
	for i := 0; i < len(num); i++ {
		c := num[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("time value %q is not a number with an optional suffix s, m, h, d or w", s)
		}
		n = n*10 + int64(c-'0')
		if n > 1<<40 {
			return 0, fmt.Errorf("time value %q is %w", s, errTooLarge)
		}
	}
	return n * mul, nil
}

// errTooLarge marks a time value beyond ParseSeconds' range.
var errTooLarge = errors.New("too large")

// parseTime parses a delay: a time value (ParseSeconds) of at most
// MaxSeconds.
func parseTime(s string) (int64, error) {
	n, err := ParseSeconds(s)
	if err != nil && !errors.Is(err, errTooLarge) {
		return 0, err
	}
	if err != nil || n > MaxSeconds {
		return 0, fmt.Errorf("time value %q is longer than one day (%d s), the most Zabbix allows", s, MaxSeconds)
	}
	return n, nil
}

// parseFlexible parses "<delay>/<d[-d],hh:mm-hh:mm>".
func parseFlexible(s string) (Flexible, error) {
	var f Flexible
	d, period, ok := strings.Cut(s, "/")
	if !ok {
		return f, errors.New("want <delay>/<period>, e.g. 50s/1-5,09:00-18:00")
	}
	var err error
	if f.Delay, err = parseTime(d); err != nil {
		return f, err
	}
	days, times, ok := strings.Cut(period, ",")
	if !ok {
		return f, fmt.Errorf("period %q: want d[-d],hh:mm-hh:mm", period)
	}
	from, to, ranged := strings.Cut(days, "-")
	if f.FromDay, err = weekDay(from); err != nil {
		return f, fmt.Errorf("period %q: %w", period, err)
	}
	f.ToDay = f.FromDay
	if ranged {
		if f.ToDay, err = weekDay(to); err != nil {
			return f, fmt.Errorf("period %q: %w", period, err)
		}
		if f.ToDay < f.FromDay {
			return f, fmt.Errorf("period %q: day range %s ends before it starts", period, days)
		}
	}
	start, end, ok := strings.Cut(times, "-")
	if !ok {
		return f, fmt.Errorf("period %q: want a time range hh:mm-hh:mm", period)
	}
	if f.Start, err = clock(start); err != nil {
		return f, fmt.Errorf("period %q: %w", period, err)
	}
	if f.End, err = clock(end); err != nil {
		return f, fmt.Errorf("period %q: %w", period, err)
	}
	if f.End <= f.Start {
		return f, fmt.Errorf("period %q: time range %s must end after it starts", period, times)
	}
	return f, nil
}

func weekDay(s string) (int, error) {
	if len(s) != 1 || s[0] < '1' || s[0] > '7' {
		return 0, fmt.Errorf("week day %q must be 1 (Monday) .. 7 (Sunday)", s)
	}
	return int(s[0] - '0'), nil
}

// clock parses h:mm or hh:mm, 00:00 .. 24:00, into seconds of the day.
func clock(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 || !digits(h) || !digits(m) {
		return 0, fmt.Errorf("time %q must be hh:mm", s)
	}
	hh := atoi(h)
	mm := atoi(m)
	if hh > 24 || mm > 59 || (hh == 24 && mm != 0) {
		return 0, fmt.Errorf("time %q must be 00:00 .. 24:00", s)
	}
	return hh*3600 + mm*60, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// units of a scheduling interval, in the order they must appear.
var units = [...]struct {
	prefix   string
	min, max int
}{
	{"md", 1, 31},
	{"wd", 1, 7},
	{"h", 0, 23},
	{"m", 0, 59},
	{"s", 0, 59},
}

// parseSchedule parses "md..wd..h..m..s..".
func parseSchedule(s string) (Schedule, error) {
	var sets [len(units)]uint64
	var given [len(units)]bool
	rest := s
	next := 0 // the first unit still allowed
	for rest != "" {
		u := -1
		for i := range units {
			if strings.HasPrefix(rest, units[i].prefix) {
				u = i
				break
			}
		}
		if u < next {
			return Schedule{}, fmt.Errorf("at %q: want one of the prefixes md, wd, h, m, s, each once and in this order", rest)
		}
		rest = rest[len(units[u].prefix):]
		end := 0
		for end < len(rest) && (rest[end] >= '0' && rest[end] <= '9' || rest[end] == '-' || rest[end] == '/' || rest[end] == ',') {
			end++
		}
		set, err := parseFilter(rest[:end], units[u].min, units[u].max, u == 1)
		if err != nil {
			return Schedule{}, fmt.Errorf("%s filter %q: %w", units[u].prefix, rest[:end], err)
		}
		sets[u], given[u] = set, true
		rest = rest[end:]
		next = u + 1
	}
	// Resolve omitted filters: days match every day; a time unit matches
	// everything when a smaller unit has a filter, else only 0.
	for u := range units {
		if given[u] {
			continue
		}
		lower := false
		for l := u + 1; l < len(units); l++ {
			lower = lower || given[l]
		}
		if u <= 1 || lower {
			sets[u] = rangeBits(units[u].min, units[u].max, 1)
		} else {
			sets[u] = 1 // value 0
		}
	}
	return Schedule{
		MonthDays: uint32(sets[0]), WeekDays: uint8(sets[1]), Hours: uint32(sets[2]),
		Minutes: sets[3], Seconds: sets[4],
	}, nil
}

// parseFilter parses "[from[-to]][/step]" items separated by ','.
// Numbers have at most two digits (one for week days).
func parseFilter(s string, min, max int, weekDays bool) (uint64, error) {
	if s == "" {
		return 0, errors.New("empty filter: give a value, a range or a /step")
	}
	var set uint64
	for item := range strings.SplitSeq(s, ",") {
		rng, stepStr, hasStep := strings.Cut(item, "/")
		from, to, step := min, max, 1
		if rng == "" && !hasStep {
			return 0, errors.New("empty filter item: give a value, a range or a /step")
		}
		if rng != "" {
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if from, err = filterNum(a, min, max, weekDays); err != nil {
				return 0, err
			}
			to = from
			if isRange {
				if to, err = filterNum(b, min, max, weekDays); err != nil {
					return 0, err
				}
				if to < from {
					return 0, fmt.Errorf("range %s ends before it starts", rng)
				}
			} else if hasStep {
				to = max // "from/step": from, from+step, ... up to the maximum
			}
		}
		if hasStep {
			if stepStr == "" || len(stepStr) > 2 || !digits(stepStr) {
				return 0, fmt.Errorf("step %q must be a number", stepStr)
			}
			step = atoi(stepStr)
			if step < 1 || step > max {
				return 0, fmt.Errorf("step %d must be 1..%d", step, max)
			}
		}
		set |= rangeBits(from, to, step)
	}
	return set, nil
}

func filterNum(s string, min, max int, weekDays bool) (int, error) {
	if s == "" || !digits(s) || len(s) > 2 || (weekDays && len(s) > 1) {
		return 0, fmt.Errorf("value %q must be a number %d..%d", s, min, max)
	}
	n := atoi(s)
	if n < min || n > max {
		return 0, fmt.Errorf("value %d is out of range %d..%d", n, min, max)
	}
	return n, nil
}

func rangeBits(from, to, step int) uint64 {
	var b uint64
	for v := from; v <= to; v += step {
		b |= 1 << uint(v)
	}
	return b
}

// Seconds parses a single time value ("3s", "1m", "30"), as item timeouts
// are written, into seconds; at most MaxSeconds.
func Seconds(s string) (int64, error) { return parseTime(s) }
