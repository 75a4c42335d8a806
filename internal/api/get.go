package api

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// getParams are the parameters every Zabbix *.get method shares; each
// get method's params struct embeds them (decodeGet decodes it).
type getParams struct {
	Output          opt[[]string]                   `json:"output"`
	Filter          opt[map[string]json.RawMessage] `json:"filter"`
	Search          opt[map[string]json.RawMessage] `json:"search"`
	SearchByAny     opt[bool]                       `json:"searchByAny"`
	StartSearch     opt[bool]                       `json:"startSearch"`
	ExcludeSearch   opt[bool]                       `json:"excludeSearch"`
	SearchWildcards opt[bool]                       `json:"searchWildcardsEnabled"`
	SortField       opt[[]string]                   `json:"sortfield"`
	SortOrder       opt[[]string]                   `json:"sortorder"`
	Limit           opt[int64]                      `json:"limit"`
	CountOutput     opt[bool]                       `json:"countOutput"`
	PreserveKeys    opt[bool]                       `json:"preservekeys"`
	// Editable keeps only objects the caller may change (read-write on
	// the host groups concerned); for a super admin that is all.
	Editable opt[bool] `json:"editable"`
	// LimitSelects bounds the length of each selectX list.
	LimitSelects opt[int64] `json:"limitSelects"`
}

// searchMatch reports whether value v matches the search pattern w as
// Zabbix's search does: case-insensitive substring (prefix with
// startSearch); with searchWildcardsEnabled, w matches the whole value
// and "*" stands for any run of characters.
func (p *getParams) searchMatch(v, w string) bool {
	lv, lw := strings.ToLower(v), strings.ToLower(w)
	switch {
	case p.SearchWildcards.Value:
		return globMatch(lw, lv)
	case p.StartSearch.Value:
		return strings.HasPrefix(lv, lw)
	}
	return strings.Contains(lv, lw)
}

// globMatch matches s against pattern, in which "*" matches any run of
// bytes (also none) and every other byte itself.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return s == pattern
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// limitSelect cuts a selectX list to limitSelects.
func (p *getParams) limitSelect(l []object) []object {
	if p.LimitSelects.Given() && p.LimitSelects.Value >= 0 && int(p.LimitSelects.Value) < len(l) {
		return l[:p.LimitSelects.Value]
	}
	return l
}

// object is one API object: field name to string value (Zabbix returns
// every scalar as a string), plus nested selections.
type object map[string]any

// values reads a filter value: a scalar or a list, compared as strings.
func filterValues(raw json.RawMessage) []string {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		list = []json.RawMessage{raw}
	}
	out := make([]string, 0, len(list))
	for _, r := range list {
		var s string
		if json.Unmarshal(r, &s) == nil {
			out = append(out, s)
			continue
		}
		out = append(out, strings.TrimSpace(string(r)))
	}
	return out
}

// apply filters, searches, sorts, limits and shapes objs per p. idField
// names the object's id (for preservekeys); sortable lists the fields
// sortfield may name.
func (p *getParams) apply(objs []object, idField string, sortable ...string) (any, error) {
	for f, raw := range p.Filter.Value {
		want := filterValues(raw)
		kept := objs[:0]
		for _, o := range objs {
			v, _ := o[f].(string)
			for _, w := range want {
				if v == w {
					kept = append(kept, o)
					break
				}
			}
		}
		objs = kept
	}
	if len(p.Search.Value) > 0 {
		kept := objs[:0]
		for _, o := range objs {
			matches := 0
			for f, raw := range p.Search.Value {
				v, _ := o[f].(string)
				for _, w := range filterValues(raw) {
					if p.searchMatch(v, w) {
						matches++
						break
					}
				}
			}
			hit := matches == len(p.Search.Value) || (p.SearchByAny.Value && matches > 0)
			if hit != p.ExcludeSearch.Value {
				kept = append(kept, o)
			}
		}
		objs = kept
	}
	for i, f := range p.SortField.Value {
		ok := false
		for _, s := range sortable {
			ok = ok || s == f
		}
		if !ok {
			return nil, errParams(`Invalid parameter "/sortfield/%d": value must be one of "%s".`, i+1, strings.Join(sortable, `", "`))
		}
	}
	if len(p.SortField.Value) > 0 {
		desc := len(p.SortOrder.Value) > 0 && strings.EqualFold(p.SortOrder.Value[0], "DESC")
		sort.SliceStable(objs, func(i, j int) bool {
			for _, f := range p.SortField.Value {
				a, _ := objs[i][f].(string)
				b, _ := objs[j][f].(string)
				if a == b {
					continue
				}
				less := a < b
				if ai, err1 := strconv.ParseInt(a, 10, 64); err1 == nil {
					if bi, err2 := strconv.ParseInt(b, 10, 64); err2 == nil {
						less = ai < bi
					}
				}
				return less != desc
			}
			return false
		})
	}
	if p.CountOutput.Value {
		return strconv.Itoa(len(objs)), nil
	}
	if p.Limit.Given() && p.Limit.Value >= 0 && int(p.Limit.Value) < len(objs) {
		objs = objs[:p.Limit.Value]
	}
	out := parseOutput(p.Output.Value, true)
	if !out.all {
		for i, o := range objs {
			shaped := object{}
			for k, v := range o {
				if out.has(k) || k == idField && p.PreserveKeys.Value {
					shaped[k] = v
				} else if _, nested := v.(string); !nested {
					shaped[k] = v // selectX results are always returned
				}
			}
			objs[i] = shaped
		}
	}
	if p.PreserveKeys.Value {
		m := make(map[string]object, len(objs))
		for _, o := range objs {
			id, _ := o[idField].(string)
			m[id] = o
		}
		return m, nil
	}
	if objs == nil {
		objs = []object{}
	}
	return objs, nil
}

func id(v uint64) string { return strconv.FormatUint(v, 10) }

func status(enabled bool) string {
	if enabled {
		return "0"
	}
	return "1"
}

func nonNil(l []object) []object {
	if l == nil {
		return []object{}
	}
	return l
}
