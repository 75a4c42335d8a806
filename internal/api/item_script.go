package api

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/api/zjson"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// Script items (type 21): the members 6.0 checks for them before the
// update interval and the key, in its order and words (recorded from
// 6.0.14): "params" (needed, not empty; white space is taken),
// "timeout" (needed, 1-60 seconds or a user macro), then "parameters"
// (an array of objects with a string name, not empty and unique, and a
// string value, within the columns' lengths). Items of other types take
// "parameters" and keep none (6.0 stores what item.create gives them
// unchecked; an intended difference).

// scriptTimeoutMax is the longest timeout 6.0 takes for a script item.
const scriptTimeoutMax = 60

// scriptChecks checks a script item's members (i: the object's index;
// cur: the item as it is, nil on create) and returns its parameters:
// nil when "parameters" was not given (an update keeps them).
func (p *itemParams) scriptChecks(i int, cur *catalog.Item) (*[]catalog.ItemParam, error) {
	becomes := cur == nil || cur.Type != catalog.Script // create, or a type change
	switch {
	case !p.Params.Set && (becomes || cur.Ext().Params == ""):
		return nil, missing(i, "params")
	case p.Params.Set && p.Params.Value == "":
		return nil, empty(i, "params")
	}
	switch t := p.Timeout; {
	case !t.Set && becomes:
		return nil, missing(i, "timeout")
	case t.Null:
		return nil, errParams(`Invalid parameter "/%d/timeout": a character string is expected.`, i+1)
	case t.Set && t.Value == "":
		return nil, empty(i, "timeout")
	case t.Set && !strings.HasPrefix(t.Value, "{$"):
		n, err := delay.ParseSeconds(t.Value)
		if err != nil {
			return nil, errParams(`Invalid parameter "/%d/timeout": a time unit is expected.`, i+1)
		}
		if n < 1 || n > scriptTimeoutMax {
			return nil, errParams(`Invalid parameter "/%d/timeout": value must be one of 1-%d.`, i+1, scriptTimeoutMax)
		}
	}
	if !p.Parameters.Set {
		return nil, nil
	}
	ps, err := scriptParameters(i, p.Parameters)
	if err != nil {
		return nil, err
	}
	return &ps, nil
}

// scriptParameters reads "parameters" as 6.0's validator does.
func scriptParameters(i int, o opt[json.RawMessage]) ([]catalog.ItemParam, error) {
	at := "/" + strconv.Itoa(i+1) + "/parameters"
	if o.Null || jsonKindOf(o.Value) != 'a' {
		// 6.0 answers an object with an HTTP 500 (a PHP error); this is
		// its answer to any other value.
		return nil, invalid(at, "an array is expected")
	}
	elems, _ := arrayElems(o.Value)
	out := make([]catalog.ItemParam, 0, len(elems))
	seen := make(map[string]bool, len(elems))
	for j, el := range elems {
		sub := at + "/" + strconv.Itoa(j+1)
		var ms []member
		switch jsonKindOf(el) {
		case 'o':
			ms, _ = objectMembers(el)
		case 'a':
			// PHP's array: an empty one is an object without members.
			if es, _ := arrayElems(el); len(es) > 0 {
				return nil, invalid(sub, `unexpected parameter "0"`)
			}
		default:
			return nil, invalid(sub, "an array is expected")
		}
		var name, value *string
		for _, m := range ms {
			var dst **string
			switch m.name {
			case "name":
				dst = &name
			case "value":
				dst = &value
			default:
				return nil, invalid(sub, `unexpected parameter "`+m.name+`"`)
			}
			s, ok := jsonStringText(bytes.TrimSpace(m.raw))
			if jsonKindOf(m.raw) != 's' || !ok {
				return nil, invalid(sub+"/"+m.name, "a character string is expected")
			}
			*dst = &s
		}
		switch {
		case name == nil:
			return nil, invalid(sub, `the parameter "name" is missing`)
		case *name == "":
			return nil, invalid(sub+"/name", "cannot be empty")
		case utf8.RuneCountInString(*name) > catalog.MaxItemParamNameLen:
			return nil, invalid(sub+"/name", "value is too long")
		case value == nil:
			return nil, invalid(sub, `the parameter "value" is missing`)
		case utf8.RuneCountInString(*value) > catalog.MaxItemParamValueLen:
			return nil, invalid(sub+"/value", "value is too long")
		case seen[*name]:
			return nil, invalid(sub, "value (name)=("+*name+") already exists")
		}
		seen[*name] = true
		out = append(out, catalog.ItemParam{Name: *name, Value: *value})
	}
	if len(out) > catalog.MaxItemParams {
		return nil, invalid(at, "too many parameters: at most "+strconv.Itoa(catalog.MaxItemParams))
	}
	return out, nil
}

// appendItemParameters appends "parameters" as 6.0 returns it: an array
// of {"name","value"} objects, empty for items without.
func appendItemParameters(dst []byte, ps []catalog.ItemParam) []byte {
	dst = append(dst, `"parameters":[`...)
	for k, p := range ps {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = zjson.AppendString(dst, p.Name)
		dst = append(dst, `,"value":`...)
		dst = zjson.AppendString(dst, p.Value)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
