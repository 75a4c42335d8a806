package api

import (
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// history.get "filter" and "search", applied to each row as it streams
// (the store has no index on values, so this is what the SQL WHERE of
// Zabbix does, one row at a time):
//
//   - filter: per field, the row's value must equal one of the given
//     values (numbers compare as numbers, strings exactly); fields are
//     ANDed, or ORed with searchByAny.
//   - search: per field (value, and source for log history), the row
//     must contain one of the patterns, case-insensitively; startSearch
//     matches the start instead; searchWildcardsEnabled makes the pattern
//     match the whole value with "*" for any run of characters (and
//     ignores startSearch, as Zabbix documents); excludeSearch keeps the
//     rows that match none; fields are ANDed, or ORed with searchByAny.
//   - filter and search together: both must hold.

// rowPred is one field's condition on a row.
type rowPred func(*history.Sample) bool

// rowMatcher is the compiled filter and search of one history.get.
type rowMatcher struct {
	filters  []rowPred
	searches []rowPred
	byAny    bool
	exclude  bool
}

// rowFilter is history.get's filter and search, as the params give them.
type rowFilter struct {
	Filter, Search map[string][]string
	SearchByAny    bool
	StartSearch    bool
	// ExcludeSearch and SearchWildcards shape Search.
	ExcludeSearch   bool
	SearchWildcards bool
}

// newRowMatcher compiles p's filter and search; nil when there are none,
// so that the common read pays nothing.
func newRowMatcher(p *rowFilter) *rowMatcher {
	m := &rowMatcher{byAny: p.SearchByAny, exclude: p.ExcludeSearch}
	for _, f := range []string{"itemid", "clock", "ns", "value", "timestamp", "source", "severity", "logeventid"} {
		if vals, ok := p.Filter[f]; ok {
			m.filters = append(m.filters, filterPred(f, vals))
		}
	}
	for _, f := range []string{"value", "source"} {
		if pats, ok := p.Search[f]; ok {
			m.searches = append(m.searches, searchPred(f, pats, p.StartSearch, p.SearchWildcards))
		}
	}
	if len(m.filters) == 0 && len(m.searches) == 0 {
		return nil
	}
	return m
}

func (m *rowMatcher) match(v *history.Sample) bool {
	if len(m.filters) > 0 && !m.all(m.filters, v, false) {
		return false
	}
	return len(m.searches) == 0 || m.all(m.searches, v, m.exclude)
}

// all combines the fields' conditions (each negated when negate): every
// one must hold, or any one with searchByAny.
func (m *rowMatcher) all(preds []rowPred, v *history.Sample, negate bool) bool {
	for _, p := range preds {
		ok := p(v) != negate
		if m.byAny && ok {
			return true
		}
		if !m.byAny && !ok {
			return false
		}
	}
	return !m.byAny
}

// filterPred is field = one of vals. A value that cannot be the field's
// type (a word for a clock) matches nothing, as in SQL.
func filterPred(field string, vals []string) rowPred {
	ints := func() map[int64]bool {
		set := map[int64]bool{}
		for _, s := range vals {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				set[n] = true
			}
		}
		return set
	}
	logMeta := func(v *history.Sample) history.LogMeta {
		if v.Log != nil {
			return *v.Log
		}
		return history.LogMeta{}
	}
	switch field {
	case "itemid":
		set := map[uint64]bool{}
		for _, s := range vals {
			if n, err := strconv.ParseUint(s, 10, 64); err == nil {
				set[n] = true
			}
		}
		return func(v *history.Sample) bool { return set[v.ItemID] }
	case "clock":
		set := ints()
		return func(v *history.Sample) bool { return set[v.Clock] }
	case "ns":
		set := ints()
		return func(v *history.Sample) bool { return set[int64(v.NS)] }
	case "timestamp":
		set := ints()
		return func(v *history.Sample) bool { return set[logMeta(v).Timestamp] }
	case "severity":
		set := ints()
		return func(v *history.Sample) bool { return set[int64(logMeta(v).Severity)] }
	case "logeventid":
		set := ints()
		return func(v *history.Sample) bool { return set[logMeta(v).EventID] }
	case "source":
		return func(v *history.Sample) bool {
			src := logMeta(v).Source
			for _, s := range vals {
				if s == src {
					return true
				}
			}
			return false
		}
	}
	// "value" of numeric history: compared as numbers, so "1.50" finds 1.5.
	var nums []float64
	for _, s := range vals {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			nums = append(nums, f)
		}
	}
	uints := map[uint64]bool{}
	for _, s := range vals {
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			uints[n] = true
		}
	}
	return func(v *history.Sample) bool {
		if v.Type == history.Uint {
			if uints[v.U] {
				return true
			}
			for _, f := range nums {
				if f == float64(v.U) && f < 1<<53 { // exact only where a float is
					return true
				}
			}
			return false
		}
		for _, f := range nums {
			if f == v.F {
				return true
			}
		}
		return false
	}
}

// searchPred is "field contains (or starts with, or matches) one of
// pats", case-insensitively.
func searchPred(field string, pats []string, start, wildcards bool) rowPred {
	lower := make([]string, len(pats))
	for i, p := range pats {
		lower[i] = strings.ToLower(p)
	}
	text := func(v *history.Sample) string {
		if field == "source" {
			if v.Log == nil {
				return ""
			}
			return v.Log.Source
		}
		return v.S
	}
	return func(v *history.Sample) bool {
		s := strings.ToLower(text(v))
		for _, p := range lower {
			switch {
			case wildcards:
				if globMatch(p, s) {
					return true
				}
			case start:
				if strings.HasPrefix(s, p) {
					return true
				}
			default:
				if strings.Contains(s, p) {
					return true
				}
			}
		}
		return false
	}
}
