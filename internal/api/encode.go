package api

import (
	"encoding/json"
	"sort"

	"github.com/peregrine-mon/peregrine/internal/api/zjson"
)

// appendValue encodes the result shapes the getters build without
// reflection; other values go through encoding/json.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case rawJSON:
		return append(dst, x...), nil
	case field:
		return appendValue(dst, x.v)
	case string:
		return zjson.AppendString(dst, x), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case object:
		if len(x) == 0 {
			// An object with no field (a list of fields that names
			// none) is PHP's empty array, which Zabbix returns as [].
			return append(dst, "[]"...), nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = zjson.AppendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendValue(dst, x[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case []any: // a list whose elements are of several kinds
		dst = append(dst, '[')
		for i, o := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, o); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case []object:
		dst = append(dst, '[')
		for i, o := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, o); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[string]object:
		if len(x) == 0 {
			return append(dst, "[]"...), nil // preservekeys with no result
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = zjson.AppendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendValue(dst, x[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	b, err := json.Marshal(v)
	return append(dst, b...), err
}
