package units

import (
	"testing"
	"time"
)

// TestFormat: every row was recorded from the real Zabbix 6.0.14 server
// on 2026-11-29: a trapper item with the units, a trigger named
// "[{ITEM.VALUE}]", the value sent with zabbix_sender, the problem's
// name read back with problem.get (server time zone UTC).
func TestFormat(t *testing.T) {
	for _, c := range []struct{ v, units, want string }{
		{"3725", "s", "1h 2m 5s"},
		{"0.123", "s", "123ms"},
		{"90061.5", "s", "1d 1h 1m"},
		{"0", "s", "0s"},
		{"31622400", "s", "1y 1d"},
		{"1.5", "s", "1s 500ms"},
		{"61.25", "s", "1m 1s 250ms"},
		{"2592000", "s", "1M"},
		{"5187600", "s", "2M 1h"},
		{"59.999", "s", "59s 999ms"},
		{"-5", "s", "-5s"},
		{"0.0004", "s", "< 1ms"},
		{"86400", "s", "1d"},
		{"3600.7", "s", "1h"},
		{"100000000", "s", "3y 2M 2d"},
		{"90061", "uptime", "1 day, 01:01:01"},
		{"3599", "uptime", "00:59:59"},
		{"86399", "uptime", "23:59:59"},
		{"172800", "uptime", "2 days, 00:00:00"},
		{"0", "uptime", "00:00:00"},
		{"400000", "uptime", "4 days, 15:06:40"},
		{"1700000000", "unixtime", "2023.11.14 22:13:20"},
		{"1500000000", "B", "1.4 GB"},
		{"1023", "B", "1023 B"},
		{"1536.5", "B", "1.5 KB"},
		{"2048", "Bps", "2 KBps"},
		{"12.345", "%", "12.35 %"},
		{"95", "%", "95 %"},
		{"1.5", "", "1.5"},
		{"42", "", "42"},
		{"3000", "rpm", "3000 rpm"},
		{"-2500", "W", "-2.5 KW"},
		{"1000000000000000", "W", "1000 TW"},
		{"1500", "ms", "1500 ms"},
		{"999.999", "Hz", "1000 Hz"},
		{"not a number", "B", "not a number"},
	} {
		if got := Format(c.v, c.units, time.UTC); got != c.want {
			t.Errorf("Format(%q, %q) = %q, want %q", c.v, c.units, got, c.want)
		}
	}
}

func BenchmarkFormat(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Format("1500000000", "B", time.UTC)
		Format("90061.5", "s", time.UTC)
	}
}

// TestFormatMore: more rows recorded from the real Zabbix 6.0.14 server
// on 2026-11-30 the same way (issue 29): units starting with "!" are
// shown without conversion (the "!" dropped, no prefix, no time
// formatting), "unixtime" of 0 is the number with its units, fractions
// under a prefix's base and non-byte units with prefixes.
func TestFormatMore(t *testing.T) {
	for _, c := range []struct{ v, units, want string }{
		{"1500000000", "!B", "1500000000 B"},
		{"3725", "!s", "3725 s"},
		{"12.345", "!%", "12.35 %"},
		{"90061", "!uptime", "90061 uptime"},
		{"0.001", "W", "0 W"},
		{"0.5", "W", "0.5 W"},
		{"0.0004", "W", "0 W"},
		{"1000", "W", "1 KW"},
		{"0.5", "B", "0.5 B"},
		{"123456", "B", "120.56 KB"},
		{"0.25", "Bps", "0.25 Bps"},
		{"2048", "b", "2.05 Kb"},
		{"1000000", "bps", "1 Mbps"},
		{"2048", "KB", "2.05 KKB"},
		{"0.0001", "s", "< 1ms"},
		{"1e3", "W", "1 KW"},
		{"123456789", "W", "123.46 MW"},
		{"1099511627776000", "B", "1000 TB"},
		{"0.001", "%", "0 %"},
		{"-0.25", "W", "-0.25 W"},
		{"1e9", "s", "31y 8M 19d"},
		{"0", "unixtime", "0 unixtime"},
		{"-5", "unixtime", "-5 unixtime"},
		{"0.5", "unixtime", "0.5 unixtime"},
		{"1700000000", "!unixtime", "1700000000 unixtime"},
		{"123456.789", "!W", "123456.79 W"},
		{"0.125", "!B", "0.12 B"},
		{"42", "!", "42 "},
		{"0", "uptime", "00:00:00"},
	} {
		if got := Format(c.v, c.units, time.UTC); got != c.want {
			t.Errorf("Format(%q, %q) = %q, want %q", c.v, c.units, got, c.want)
		}
	}
}
