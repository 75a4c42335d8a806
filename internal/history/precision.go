package history

import "fmt"

// Precision is how finely a store keeps an item's timestamps. Zabbix
// keeps nanoseconds (clock and ns), and agents send a nanosecond part
// that is effectively random: about 30 bits, 3.7 bytes per value once
// compressed, more than the values themselves on typical data. A coarser
// precision truncates the ns part when the value is written (towards the
// earlier instant, so clock never changes and order is kept), and the
// chunk encoder then stores only the remaining digits.
//
// The price: two values of one item whose timestamps differ only below
// the precision become one timestamp, and the later write wins (the same
// rule as a resent value). At PrecisionS an item that receives two values
// within one second keeps one.
//
// The zero value is PrecisionNS, exact: the default, because it is the
// only setting a Zabbix user cannot notice. history.get returns "ns" as
// sent, and a log item whose agent reads many lines in one millisecond
// keeps every line. Coarser precision is a choice per installation or per
// item, made for disk (docs/configuration.md gives the cost of each).
type Precision uint8

const (
	PrecisionNS Precision = iota // nanoseconds: exact
	PrecisionUS                  // microseconds
	PrecisionMS                  // milliseconds
	PrecisionS                   // whole seconds: ns is always 0
)

// ParsePrecision parses "ns", "us", "ms" or "s".
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "ns":
		return PrecisionNS, nil
	case "us":
		return PrecisionUS, nil
	case "ms":
		return PrecisionMS, nil
	case "s":
		return PrecisionS, nil
	}
	return 0, fmt.Errorf("timestamp precision must be one of ns, us, ms, s, not %q", s)
}

// String returns the name ParsePrecision accepts.
func (p Precision) String() string {
	switch p {
	case PrecisionNS:
		return "ns"
	case PrecisionUS:
		return "us"
	case PrecisionMS:
		return "ms"
	case PrecisionS:
		return "s"
	}
	return fmt.Sprintf("Precision(%d)", uint8(p))
}

// Unit is the precision's step in nanoseconds.
func (p Precision) Unit() int32 {
	switch p {
	case PrecisionUS:
		return 1_000
	case PrecisionMS:
		return 1_000_000
	case PrecisionS:
		return 1_000_000_000
	}
	return 1
}

// TruncateNS returns ns (0..999999999) cut down to a multiple of the
// unit.
func (p Precision) TruncateNS(ns int32) int32 {
	u := p.Unit()
	return ns - ns%u
}
