package iprange

import (
	"net/netip"
	"testing"
)

// Errors and limits recorded from 6.0.14 (drule.create): "127.0.0.300"
// and "10.1.0.0/33" are invalid, "10.0.0.1-10.0.0.5" too (a range is in
// octets), "10.0.0.0/15" exceeds the limit, "10.1.0.0/16" is accepted.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		in    string
		count int
		err   string
	}{
		{"127.0.0.4-7", 4, ""},
		{"192.168.1-2.1-3", 6, ""},
		{"127.0.0.1,10.1.0.0/24, 10.2.0.1-20", 1 + 256 + 20, ""},
		{"10.1.0.0/16", 65536, ""},
		{"fe80::1-ff", 255, ""},
		{"fe80::/120", 256, ""},
		{"127.0.0.300", 0, `invalid address range "127.0.0.300"`},
		{"10.1.0.0/33", 0, `invalid address range "10.1.0.0/33"`},
		{"10.0.0.1-10.0.0.5", 0, `invalid address range "10.0.0.1-10.0.0.5"`},
		{"10.0.0.0/15", 0, `IP range "10.0.0.0/15" exceeds "65536" address limit`},
		{"1.2.3.4,", 0, `invalid address range ""`},
		{"0-255.0-255.0-1.1", 0, `IP range "0-255.0-255.0-1.1" exceeds "65536" address limit`},
	} {
		l, err := Parse(c.in)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%q: error %v, want %s", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && l.Count() != c.count:
			t.Errorf("%q: %d addresses, want %d", c.in, l.Count(), c.count)
		}
	}
}

func TestEachContains(t *testing.T) {
	l, err := Parse("10.0.0.0/30,10.0.1.5-6,192.168.1-2.9")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	l.Each(func(a netip.Addr) bool { got = append(got, a.String()); return true })
	want := []string{"10.0.0.1", "10.0.0.2", "10.0.1.5", "10.0.1.6", "192.168.1.9", "192.168.2.9"}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] || !l.Contains(netip.MustParseAddr(want[i])) {
			t.Fatalf("%v, want %v", got, want)
		}
	}
	if l.Contains(netip.MustParseAddr("10.0.1.7")) || l.Contains(netip.MustParseAddr("192.168.3.9")) {
		t.Fatal("contains an address outside")
	}
	if p, ok := Ports("22, 80,8000-8100"); !ok || len(p) != 3 || p[2] != [2]int{8000, 8100} {
		t.Fatalf("ports: %v %v", p, ok)
	}
	for _, bad := range []string{"70000", "a", "", "1-70000"} {
		if _, ok := Ports(bad); ok {
			t.Errorf("ports %q accepted", bad)
		}
	}
}
