// Package iprange parses the address ranges of network discovery rules
// as Zabbix 6.0 writes them: a comma-separated list of single addresses
// (192.168.1.33), ranges in any octet of an IPv4 address (192.168.1-10.1-254),
// IPv4 and IPv6 networks (192.168.4.0/24, fe80::/120) and IPv6 addresses
// with a range in the last group (fe80::1-ff). Each element may hold at
// most 65,536 addresses, as 6.0 allows. Ports lists ("22,80,8000-8100")
// are parsed here too.
//
// Concurrency: a parsed List is read-only and safe to share.
package iprange

import (
	"fmt"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
)

// MaxPerRange is the most addresses one element of a list may hold.
const MaxPerRange = 65536

// Range is one element of a list: the addresses from First to Last, or
// for an IPv4 octet range the product of the octets' ranges.
type Range struct {
	Text string
	// octets: for IPv4, each octet's [lo, hi]; nil for IPv6.
	octets *[4][2]uint8
	// first and last: an IPv6 span (a network or a last-group range).
	first, last netip.Addr
	count       int
}

// List is a parsed address range.
type List []Range

// Error is a range that cannot be used, in 6.0's words.
type Error struct {
	Text     string
	TooLarge bool
}

func (e *Error) Error() string {
	if e.TooLarge {
		return fmt.Sprintf("IP range %q exceeds \"%d\" address limit", e.Text, MaxPerRange)
	}
	return fmt.Sprintf("invalid address range %q", e.Text)
}

// Parse parses a comma-separated list; spaces around elements are
// allowed. The error is an *Error for the first element that cannot be
// used.
func Parse(s string) (List, error) {
	var out List
	for part := range strings.SplitSeq(s, ",") {
		t := strings.TrimSpace(part)
		r, err := parseOne(t)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func parseOne(t string) (Range, error) {
	bad := &Error{Text: t}
	if t == "" {
		return Range{}, bad
	}
	if addr, bits, ok := strings.Cut(t, "/"); ok {
		a, err := netip.ParseAddr(addr)
		n, err2 := strconv.Atoi(bits)
		if err != nil || err2 != nil || n < 0 || n > a.BitLen() || bits != strconv.Itoa(n) {
			return Range{}, bad
		}
		p := netip.PrefixFrom(a, n).Masked()
		host := a.BitLen() - n
		if host > 16 {
			return Range{}, &Error{Text: t, TooLarge: true}
		}
		first := p.Addr()
		last := lastOf(first, host)
		return Range{Text: t, first: first, last: last, count: 1 << host}, nil
	}
	if !strings.Contains(t, ":") {
		parts := strings.Split(t, ".")
		if len(parts) != 4 {
			return Range{}, bad
		}
		var o [4][2]uint8
		count := 1
		for i, p := range parts {
			lo, hi, isRange := strings.Cut(p, "-")
			l, ok1 := octet(lo)
			h, ok2 := l, true
			if isRange {
				h, ok2 = octet(hi)
			}
			if !ok1 || !ok2 || h < l {
				return Range{}, bad
			}
			o[i] = [2]uint8{l, h}
			count *= int(h-l) + 1
		}
		if count > MaxPerRange {
			return Range{}, &Error{Text: t, TooLarge: true}
		}
		return Range{Text: t, octets: &o, count: count}, nil
	}
	addr, hi, isRange := strings.Cut(t, "-")
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is6() {
		return Range{}, bad
	}
	last := a
	if isRange {
		h, err := strconv.ParseUint(hi, 16, 16)
		b := a.As16()
		lo := uint64(b[14])<<8 | uint64(b[15])
		if err != nil || len(hi) > 4 || h < lo {
			return Range{}, bad
		}
		b[14], b[15] = byte(h>>8), byte(h)
		last = netip.AddrFrom16(b)
	}
	n := new(big.Int).Sub(new(big.Int).SetBytes(last.AsSlice()), new(big.Int).SetBytes(a.AsSlice()))
	return Range{Text: t, first: a, last: last, count: int(n.Int64()) + 1}, nil
}

func octet(s string) (uint8, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 || s != strconv.Itoa(n) {
		return 0, false
	}
	return uint8(n), true
}

// lastOf is first with its host bits (the low host bits) set.
func lastOf(first netip.Addr, host int) netip.Addr {
	b := first.AsSlice()
	for i := len(b) - 1; host > 0; i-- {
		k := min(host, 8)
		b[i] |= byte(1<<k - 1)
		host -= k
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// Count is the number of addresses in the list (an address in two
// elements counts twice).
func (l List) Count() int {
	n := 0
	for _, r := range l {
		n += r.count
	}
	return n
}

// Each calls fn with every address of the list in order, until fn
// returns false. Of an IPv4 network of /30 or wider only the hosts are
// given: its network and broadcast addresses are skipped.
func (l List) Each(fn func(netip.Addr) bool) {
	for _, r := range l {
		if r.octets != nil {
			o := r.octets
			for a := int(o[0][0]); a <= int(o[0][1]); a++ {
				for b := int(o[1][0]); b <= int(o[1][1]); b++ {
					for c := int(o[2][0]); c <= int(o[2][1]); c++ {
						for d := int(o[3][0]); d <= int(o[3][1]); d++ {
							if !fn(netip.AddrFrom4([4]byte{byte(a), byte(b), byte(c), byte(d)})) {
								return
							}
						}
					}
				}
			}
			continue
		}
		first, last := r.first, r.last
		if first.Is4() && r.count >= 4 {
			first, last = first.Next(), last.Prev()
		}
		for a := first; a.IsValid() && a.Compare(last) <= 0; a = a.Next() {
			if !fn(a) {
				return
			}
		}
	}
}

// Contains reports whether the list holds a.
func (l List) Contains(a netip.Addr) bool {
	a = a.Unmap()
	for _, r := range l {
		if r.octets != nil {
			if !a.Is4() {
				continue
			}
			b := a.As4()
			in := true
			for i := range 4 {
				in = in && b[i] >= r.octets[i][0] && b[i] <= r.octets[i][1]
			}
			if in {
				return true
			}
			continue
		}
		if a.BitLen() == r.first.BitLen() && a.Compare(r.first) >= 0 && a.Compare(r.last) <= 0 {
			return true
		}
	}
	return false
}

// Ports parses a list of ports and port ranges ("22,80,8000-8100"): ok
// false when an element is not a port 0-65535 or a range of two. As in
// 6.0 a range may run backwards ("10-1" is accepted, recorded from
// 6.0.14): it is returned as written, and a sweep reads it lo to hi.
func Ports(s string) ([][2]int, bool) {
	var out [][2]int
	for part := range strings.SplitSeq(s, ",") {
		t := strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(t, "-")
		l, err := strconv.Atoi(strings.TrimSpace(lo))
		h := l
		var err2 error
		if isRange {
			h, err2 = strconv.Atoi(strings.TrimSpace(hi))
		}
		if err != nil || err2 != nil || l < 0 || h < 0 || l > 65535 || h > 65535 {
			return nil, false
		}
		out = append(out, [2]int{min(l, h), max(l, h)})
	}
	return out, true
}
