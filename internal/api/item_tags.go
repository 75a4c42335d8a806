package api

import (
	"cmp"
	"slices"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Item tags as Zabbix 6.0 keeps them (recorded from 6.0.14,
// item_tags_test.go has its answers):
//
//   - item.create stores the tags in the order given;
//   - item.update with "tags" replaces them: the item's tags that are
//     in the new list keep their place, the others go, and the new ones
//     follow sorted by name, then value, in PHP's case-insensitive
//     natural order (strnatcasecmp: "x9" before "x10", "a" before "B");
//   - item.get's selectTags gives {"tag","value"} objects in that order,
//     a list of fields those fields; "count", true or a string other
//     than "extend" gives an empty object ([]) per tag;
//   - item.get's "tags" and "evaltype" filter on the item's own tags
//     (not its host's) with the logic of get_tags.go.

// itemTagObjects are an item's tags as selectTags lists them.
func itemTagObjects(tags []catalog.Tag) []object {
	out := make([]object, 0, len(tags))
	for _, t := range tags {
		out = append(out, object{"tag": t.Tag, "value": t.Value})
	}
	return out
}

// replaceTags returns the tags an item with cur has after an update
// with want, in the order Zabbix 6.0 stores them.
func replaceTags(cur, want []catalog.Tag) []catalog.Tag {
	out := make([]catalog.Tag, 0, len(want))
	for _, t := range cur {
		if slices.Contains(want, t) {
			out = append(out, t)
		}
	}
	kept := len(out)
	for _, t := range want {
		if !slices.Contains(cur, t) {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out[kept:], func(a, b catalog.Tag) int {
		if c := natCaseCompare(a.Tag, b.Tag); c != 0 {
			return c
		}
		return natCaseCompare(a.Value, b.Value)
	})
	return out
}

// natCaseCompare orders a and b as PHP's strnatcasecmp does: ASCII
// letters compared as upper case, white space skipped, zeros that
// begin the string skipped, runs of digits compared by their value, or
// digit by digit when either run begins with a zero (as decimals).
func natCaseCompare(a, b string) int {
	if a == "" || b == "" {
		return cmp.Compare(len(a), len(b))
	}
	at := func(s string, i int) byte { // PHP's strings end in a NUL
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	i, j := natZeros(a), natZeros(b)
	for {
		for natSpace(at(a, i)) {
			i++
		}
		for natSpace(at(b, j)) {
			j++
		}
		ca, cb := at(a, i), at(b, j)
		if natDigit(ca) && natDigit(cb) {
			ei, ej := natDigitsEnd(a, i), natDigitsEnd(b, j)
			ra, rb := a[i:ei], b[j:ej]
			c := strings.Compare(ra, rb)
			if ca != '0' && cb != '0' {
				c = cmp.Or(cmp.Compare(len(ra), len(rb)), c)
			}
			if c != 0 {
				return c
			}
			i, j = ei, ej
			if c := natEnd(a, b, i, j); c != 2 {
				return c
			}
			ca, cb = a[i], b[j]
		}
		if ca, cb = natUpper(ca), natUpper(cb); ca != cb {
			return cmp.Compare(ca, cb)
		}
		i++
		j++
		if c := natEnd(a, b, i, j); c != 2 {
			return c
		}
	}
}

// natEnd compares a and b by which ends first at i and j; 2: neither.
func natEnd(a, b string, i, j int) int {
	switch {
	case i >= len(a) && j >= len(b):
		return 0
	case i >= len(a):
		return -1
	case j >= len(b):
		return 1
	}
	return 2
}

// natZeros is where s starts after its leading zeros that a digit
// follows.
func natZeros(s string) int {
	i := 0
	for i+1 < len(s) && s[i] == '0' && natDigit(s[i+1]) {
		i++
	}
	return i
}

func natSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func natDigit(c byte) bool { return c >= '0' && c <= '9' }

func natUpper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func natDigitsEnd(s string, i int) int {
	for i < len(s) && natDigit(s[i]) {
		i++
	}
	return i
}
