package history

import "testing"

func TestPrecision(t *testing.T) {
	f := func(name string, want Precision, ns, truncated int32) {
		t.Helper()
		p, err := ParsePrecision(name)
		if err != nil || p != want {
			t.Fatalf("ParsePrecision(%q) = %v, %v; want %v", name, p, err, want)
		}
		if p.String() != name {
			t.Fatalf("%v.String() = %q, want %q", p, p.String(), name)
		}
		if got := p.TruncateNS(ns); got != truncated {
			t.Fatalf("%s: TruncateNS(%d) = %d, want %d", name, ns, got, truncated)
		}
	}
	f("ns", PrecisionNS, 123_456_789, 123_456_789)
	f("us", PrecisionUS, 123_456_789, 123_456_000)
	f("ms", PrecisionMS, 123_456_789, 123_000_000)
	f("s", PrecisionS, 999_999_999, 0)
	f("ms", PrecisionMS, 999, 0)
	for _, bad := range []string{"", "NS", "sec", "1ms"} {
		if _, err := ParsePrecision(bad); err == nil {
			t.Errorf("ParsePrecision(%q) accepted", bad)
		}
	}
	var zero Precision
	if zero != PrecisionNS {
		t.Fatal("the zero Precision is not exact nanoseconds")
	}
}
