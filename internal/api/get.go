package api

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// getParams are the parameters every Zabbix *.get method shares.
type getParams struct {
	Output        stringList                 `json:"output"`
	Filter        map[string]json.RawMessage `json:"filter"`
	Search        map[string]json.RawMessage `json:"search"`
	SearchByAny   bool                       `json:"searchByAny"`
	StartSearch   bool                       `json:"startSearch"`
	ExcludeSearch bool                       `json:"excludeSearch"`
	SortField     stringList                 `json:"sortfield"`
	SortOrder     stringList                 `json:"sortorder"`
	Limit         flexInt                    `json:"limit"`
	CountOutput   bool                       `json:"countOutput"`
	PreserveKeys  bool                       `json:"preservekeys"`
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
	for f, raw := range p.Filter {
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
	if len(p.Search) > 0 {
		kept := objs[:0]
		for _, o := range objs {
			matches := 0
			for f, raw := range p.Search {
				v, _ := o[f].(string)
				for _, w := range filterValues(raw) {
					lv, lw := strings.ToLower(v), strings.ToLower(w)
					if (p.StartSearch && strings.HasPrefix(lv, lw)) || (!p.StartSearch && strings.Contains(lv, lw)) {
						matches++
						break
					}
				}
			}
			hit := matches == len(p.Search) || (p.SearchByAny && matches > 0)
			if hit != p.ExcludeSearch {
				kept = append(kept, o)
			}
		}
		objs = kept
	}
	for i, f := range p.SortField {
		ok := false
		for _, s := range sortable {
			ok = ok || s == f
		}
		if !ok {
			return nil, errParams(`Invalid parameter "/sortfield/%d": value must be one of "%s".`, i+1, strings.Join(sortable, `", "`))
		}
	}
	if len(p.SortField) > 0 {
		desc := len(p.SortOrder) > 0 && strings.EqualFold(p.SortOrder[0], "DESC")
		sort.SliceStable(objs, func(i, j int) bool {
			for _, f := range p.SortField {
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
	if p.CountOutput {
		return strconv.Itoa(len(objs)), nil
	}
	if p.Limit.set && p.Limit.v >= 0 && int(p.Limit.v) < len(objs) {
		objs = objs[:p.Limit.v]
	}
	out := parseOutput(p.Output, true)
	if !out.all {
		for i, o := range objs {
			shaped := object{}
			for k, v := range o {
				if out.has(k) || k == idField && p.PreserveKeys {
					shaped[k] = v
				} else if _, nested := v.(string); !nested {
					shaped[k] = v // selectX results are always returned
				}
			}
			objs[i] = shaped
		}
	}
	if p.PreserveKeys {
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
