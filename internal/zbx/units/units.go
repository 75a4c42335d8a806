// Package units formats a numeric value with its item's units as Zabbix
// 6.0 shows it in macros such as {ITEM.VALUE} in problem names: "1.4 GB",
// "95 %", "1h 2m 5s", "1 day, 01:01:01", "2023.11.14 22:13:20".
//
// Every rule was recorded from the real Zabbix 6.0.14 server (problem
// names of triggers "{ITEM.VALUE}" over trapper items of each unit;
// units_test.go has the table):
//
//   - no units: the value as it is;
//   - "s": the duration in years (365 days), months (30 days, "M"),
//     days, hours, minutes, seconds and milliseconds, at most three
//     units from the largest one that is not zero, zero ones left out
//     ("3600.7" is "1h", "61.25" is "1m 1s 250ms"); "0s" for zero,
//     "< 1ms" under a millisecond, a minus sign before a negative one;
//   - "uptime": "HH:MM:SS", preceded by "N days, " ("1 day, ") when it
//     is a day or more;
//   - "unixtime": the time as "2006.01.02 15:04:05" in the server's zone,
//     from a whole second after the epoch on ("0 unixtime", "-5
//     unixtime" before);
//   - units starting with "!": no conversion at all, the "!" dropped
//     ("!B": "1500000000 B", "!s": "3725 s"), the number rounded to two
//     decimals;
//   - "%", "ms", "rpm" and "RPM": no prefix, the number rounded to two
//     decimals ("12.35 %");
//   - anything else: a K, M, G or T prefix (powers of 1024 for "B" and
//     "Bps", of 1000 otherwise; T is the largest), the number rounded to
//     two decimals with trailing zeros dropped ("1.4 GB", "1000 TW").
package units

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Format returns v, a numeric value as history keeps it, with units
// applied. A value that is not a number is returned as it is.
func Format(v, units string, loc *time.Location) string {
	if units == "" {
		return v
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return v
	}
	if rest, ok := strings.CutPrefix(units, "!"); ok {
		minus := ""
		if f < 0 {
			minus, f = "-", -f
		}
		return minus + number(f) + " " + rest
	}
	switch units {
	case "s":
		return duration(f)
	case "uptime":
		return uptime(f)
	case "unixtime":
		if int64(f) <= 0 {
			break // "0 unixtime", "0.5 unixtime", "-5 unixtime"
		}
		if loc == nil {
			loc = time.Local
		}
		return time.Unix(int64(f), 0).In(loc).Format("2006.01.02 15:04:05")
	}
	return normal(f, units)
}

// noPrefix are the units Zabbix never scales.
var noPrefix = map[string]bool{"%": true, "ms": true, "rpm": true, "RPM": true}

func normal(f float64, units string) string {
	minus := ""
	if f < 0 {
		minus, f = "-", -f
	}
	prefix := ""
	if !noPrefix[units] {
		base := 1000.0
		if units == "B" || units == "Bps" {
			base = 1024
		}
		for _, p := range []string{"K", "M", "G", "T"} {
			if f < base {
				break
			}
			f /= base
			prefix = p
		}
	}
	return minus + number(f) + " " + prefix + units
}

// number prints f as Zabbix does after scaling: an integer without
// decimals, anything else with two, trailing zeros dropped.
func number(f float64) string {
	if f == math.Round(f) {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	s := strconv.FormatFloat(f, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

var durationUnits = []struct {
	ms   int64
	name string
}{
	{365 * 86400 * 1000, "y"}, {30 * 86400 * 1000, "M"}, {86400 * 1000, "d"},
	{3600 * 1000, "h"}, {60 * 1000, "m"}, {1000, "s"}, {1, "ms"},
}

func duration(f float64) string {
	if f == 0 {
		return "0s"
	}
	minus := ""
	if f < 0 {
		minus, f = "-", -f
	}
	ms := int64(math.Round(f * 1000))
	if ms == 0 {
		return minus + "< 1ms"
	}
	var parts []string
	first := -1
	for i, u := range durationUnits {
		n := ms / u.ms
		ms -= n * u.ms
		if first < 0 {
			if n == 0 {
				continue
			}
			first = i
		}
		if i > first+2 {
			break
		}
		if n > 0 {
			parts = append(parts, strconv.FormatInt(n, 10)+u.name)
		}
	}
	return minus + strings.Join(parts, " ")
}

func uptime(f float64) string {
	secs := int64(f)
	minus := ""
	if secs < 0 {
		minus, secs = "-", -secs
	}
	days := secs / 86400
	secs %= 86400
	hms := pad2(secs/3600) + ":" + pad2(secs%3600/60) + ":" + pad2(secs%60)
	switch days {
	case 0:
		return minus + hms
	case 1:
		return minus + "1 day, " + hms
	}
	return minus + strconv.FormatInt(days, 10) + " days, " + hms
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}
