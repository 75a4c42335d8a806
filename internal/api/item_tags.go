package api

import (
	"cmp"
	"slices"

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
// letters compared as upper case, white space skipped, runs of digits
// compared by their numeric value (leading zeros aside).
func natCaseCompare(a, b string) int {
	i, j := 0, 0
	for {
		for i < len(a) && natSpace(a[i]) {
			i++
		}
		for j < len(b) && natSpace(b[j]) {
			j++
		}
		switch {
		case i == len(a) && j == len(b):
			return 0
		case i == len(a):
			return -1
		case j == len(b):
			return 1
		}
		if natDigit(a[i]) && natDigit(b[j]) {
			ei, ej := natDigitsEnd(a, i), natDigitsEnd(b, j)
			na, nb := natTrimZeros(a[i:ei]), natTrimZeros(b[j:ej])
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			i, j = ei, ej
			continue
		}
		ca, cb := natUpper(a[i]), natUpper(b[j])
		if ca != cb {
			return cmp.Compare(ca, cb)
		}
		i++
		j++
	}
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

func natTrimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}
