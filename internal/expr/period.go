package expr

import (
	"strconv"
	"strings"
	"time"
)

// periodSpec is a checked period parameter: either the last N values
// (#N) or a time length, each with an optional time shift that moves the
// end of the window from the evaluation time.
type periodSpec struct {
	count bool
	n     int64 // values for #N; units of unit otherwise
	unit  byte  // s m h d w M y (time periods only)
	shift []shiftOp
}

// shiftOp is one step of a time shift after "now": truncate to the start
// of a unit ("/d") or add a signed amount ("-1d").
type shiftOp struct {
	trunc bool
	n     int64
	unit  byte
}

// parsePeriodSpec checks a period: "#N", "N[smhdwMy]" (no unit =
// seconds), each optionally followed by ":now" and shift steps, as in
// "#3:now-1h", "1h:now/h", "1d:now/d-1w".
func parsePeriodSpec(raw string) (periodSpec, error) {
	var ps periodSpec
	length, shift, hasShift := strings.Cut(raw, ":")
	length = strings.TrimSpace(length)
	if strings.HasPrefix(length, "#") {
		n, err := strconv.ParseInt(length[1:], 10, 64)
		switch {
		case err == nil && n == 0:
			return ps, errZeroPeriod("invalid number of values " + strconv.Quote(length))
		case err != nil || n < 0:
			return ps, errString("invalid number of values " + strconv.Quote(length))
		}
		ps.count, ps.n = true, n
	} else {
		n, unit, err := parseTimeLength(length)
		if err != nil {
			return ps, err
		}
		if n <= 0 {
			return ps, errZeroPeriod("period must be positive: " + strconv.Quote(length))
		}
		ps.n, ps.unit = n, unit
	}
	if hasShift {
		ops, err := parseShift(strings.TrimSpace(shift))
		if err != nil {
			return ps, err
		}
		ps.shift = ops
		if ops == nil {
			ps.shift = []shiftOp{}
		}
	}
	return ps, nil
}

// maxSeconds bounds a period or a shift step (about 272 years) so that
// it fits a time.Duration in nanoseconds with room to spare.
const maxSeconds = 1 << 33

// parseTimeLength parses "N" or "N<unit>" with unit in s m h d w M y.
func parseTimeLength(s string) (int64, byte, error) {
	unit := byte('s')
	if s != "" && strings.IndexByte("smhdwMy", s[len(s)-1]) >= 0 {
		unit = s[len(s)-1]
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxSeconds/unitSeconds(unit) {
		return 0, 0, errString("invalid time period " + strconv.Quote(s+string(unit)))
	}
	return n, unit, nil
}

func parseShift(s string) ([]shiftOp, error) {
	if !strings.HasPrefix(s, "now") {
		return nil, errString("time shift must start with \"now\": " + strconv.Quote(s))
	}
	rest := s[3:]
	var ops []shiftOp
	for rest != "" {
		c := rest[0]
		switch c {
		case '/':
			if len(rest) < 2 || strings.IndexByte("mhdwMy", rest[1]) < 0 {
				return nil, errString("invalid time shift " + strconv.Quote(s))
			}
			ops = append(ops, shiftOp{trunc: true, unit: rest[1]})
			rest = rest[2:]
		case '+', '-':
			j := 1
			for j < len(rest) && isDigit(rest[j]) {
				j++
			}
			if j == 1 {
				return nil, errString("invalid time shift " + strconv.Quote(s))
			}
			n, err := strconv.ParseInt(rest[1:j], 10, 64)
			unit := byte('s')
			if j < len(rest) && strings.IndexByte("smhdwMy", rest[j]) >= 0 {
				unit = rest[j]
				j++
			}
			if err != nil || n > maxSeconds/unitSeconds(unit) {
				return nil, errString("invalid time shift " + strconv.Quote(s))
			}
			if c == '-' {
				n = -n
			}
			ops = append(ops, shiftOp{n: n, unit: unit})
			rest = rest[j:]
		default:
			return nil, errString("invalid time shift " + strconv.Quote(s))
		}
	}
	return ops, nil
}

// end returns the end of the window: now moved by the shift steps.
// Truncation uses loc, the server's time zone in Zabbix (a day starts
// at local midnight).
func (ps periodSpec) end(now time.Time, loc *time.Location) time.Time {
	t := now.In(loc)
	for _, op := range ps.shift {
		if op.trunc {
			t = truncate(t, op.unit)
		} else {
			t = add(t, op.n, op.unit)
		}
	}
	return t
}

// start returns the start of a time window ending at end.
func (ps periodSpec) start(end time.Time) time.Time {
	return add(end, -ps.n, ps.unit)
}

// seconds is the period's nominal length (months as 30 days, years as
// 365), for the functions that need a number rather than a window.
func (ps periodSpec) seconds() int64 {
	return ps.n * unitSeconds(ps.unit)
}

func unitSeconds(u byte) int64 {
	switch u {
	case 'm':
		return 60
	case 'h':
		return 3600
	case 'd':
		return 86400
	case 'w':
		return 7 * 86400
	case 'M':
		return 30 * 86400
	case 'y':
		return 365 * 86400
	}
	return 1
}

func add(t time.Time, n int64, unit byte) time.Time {
	switch unit {
	case 'M':
		return t.AddDate(0, int(n), 0)
	case 'y':
		return t.AddDate(int(n), 0, 0)
	}
	return t.Add(time.Duration(n*unitSeconds(unit)) * time.Second)
}

func truncate(t time.Time, unit byte) time.Time {
	y, mo, d := t.Date()
	switch unit {
	case 'm':
		return time.Date(y, mo, d, t.Hour(), t.Minute(), 0, 0, t.Location())
	case 'h':
		return time.Date(y, mo, d, t.Hour(), 0, 0, 0, t.Location())
	case 'd':
		return time.Date(y, mo, d, 0, 0, 0, 0, t.Location())
	case 'w':
		// Zabbix weeks start on Monday.
		wd := (int(t.Weekday()) + 6) % 7
		return time.Date(y, mo, d-wd, 0, 0, 0, 0, t.Location())
	case 'M':
		return time.Date(y, mo, 1, 0, 0, 0, 0, t.Location())
	case 'y':
		return time.Date(y, 1, 1, 0, 0, 0, 0, t.Location())
	}
	return t
}
