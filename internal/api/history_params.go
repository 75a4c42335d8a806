package api

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Strict parameters of history.get and trend.get, checked the way the
// Zabbix frontend's API input validator checks them, with its error texts
// (code -32602 "Invalid params.", data `Invalid parameter "<path>":
// <reason>.`): an unknown parameter is refused ("unexpected parameter"),
// every known one must have its type, and the first problem in Zabbix's
// order (unknown names first, in the order sent, then each field in the
// order of its rules) is the one reported. A lenient decoder that ignored
// unknown or mistyped members answered a mistyped request with the wrong
// rows instead of an error.
//
// Where Peregrine is stricter than Zabbix 6.0, it follows what Zabbix
// itself uses elsewhere: time_from and time_till are timestamps (an
// unsigned integer up to 2^31-1, as trend.get, event.get and problem.get
// declare them) rather than any 32-bit integer, because a negative time
// selects nothing in a store that holds no value before 1970 and is
// always a client bug. trend.get is checked with the rules later Zabbix
// versions give it (6.0 checked nothing).

// jsonKindOf classifies a JSON value by its first byte, as PHP's
// json_decode types it: 'n' null, 'b' boolean, 's' string, 'a' array,
// 'o' object, 'i' integer, 'f' float (a fraction, an exponent, or an
// integer beyond int64, which PHP decodes as a float).
func jsonKindOf(v json.RawMessage) byte {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return 'n'
	}
	switch v[0] {
	case 'n':
		return 'n'
	case 't', 'f':
		return 'b'
	case '"':
		return 's'
	case '[':
		return 'a'
	case '{':
		return 'o'
	}
	if bytes.ContainsAny(v, ".eE") {
		return 'f'
	}
	if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
		return 'f'
	}
	return 'i'
}

func invalid(path, reason string) *Error {
	return errParams(`Invalid parameter "%s": %s.`, path, reason)
}

// subpath is path/name as Zabbix builds it ("/" + "limit" = "/limit").
func subpath(path, name string) string {
	if path == "/" {
		return "/" + name
	}
	return path + "/" + name
}

// members reads a params object (or, as PHP sees a JSON list, a list
// whose keys are "0", "1", ...) into its members, refusing any name
// known does not accept with Zabbix's "unexpected parameter" in the order
// the names were sent. A repeated name keeps its last value, as PHP's
// json_decode does.
func members(raw json.RawMessage, path string, known func(string) bool) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	switch jsonKindOf(raw) {
	case 'o':
		dec := json.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.Token(); err != nil {
			return nil, invalid(path, "an array is expected")
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, invalid(path, "an array is expected")
			}
			name, _ := tok.(string)
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, invalid(path, "an array is expected")
			}
			if !known(name) {
				return nil, invalid(path, `unexpected parameter "`+name+`"`)
			}
			out[name] = v
		}
	case 'a':
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, invalid(path, "an array is expected")
		}
		for i, v := range list {
			name := strconv.Itoa(i)
			if !known(name) {
				return nil, invalid(path, `unexpected parameter "`+name+`"`)
			}
			out[name] = v
		}
	default:
		return nil, invalid(path, "an array is expected")
	}
	return out, nil
}

// int32Param reads an integer (a JSON integer or a string of one) in
// lo..hi, which the error for a value outside calls in; null leaves it
// unset when allowNull.
func int32Param(v json.RawMessage, path string, allowNull bool, lo, hi int64, in string) (flexInt, error) {
	k := jsonKindOf(v)
	if k == 'n' && allowNull {
		return flexInt{}, nil
	}
	var text string
	switch k {
	case 'i':
		text = string(bytes.TrimSpace(v))
	case 's':
		json.Unmarshal(v, &text)
		if !isInteger(text) {
			return flexInt{}, invalid(path, "an integer is expected")
		}
	default:
		return flexInt{}, invalid(path, "an integer is expected")
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
		return flexInt{}, invalid(path, "a number is too large")
	}
	if n < lo || n > hi {
		return flexInt{}, invalid(path, "value must be one of "+in)
	}
	return flexInt{set: true, v: n}, nil
}

// isInteger reports whether s is an optional minus and decimal digits.
func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// timestampParam reads a Unix time: an unsigned integer (or a string of
// digits) up to 2^31-1; null leaves it unset.
func timestampParam(v json.RawMessage, path string) (flexInt, error) {
	var text string
	switch jsonKindOf(v) {
	case 'n':
		return flexInt{}, nil
	case 'i':
		text = string(bytes.TrimSpace(v))
	case 's':
		json.Unmarshal(v, &text)
	default:
		return flexInt{}, invalid(path, "an unsigned integer is expected")
	}
	if text == "" || strings.Trim(text, "0123456789") != "" {
		return flexInt{}, invalid(path, "an unsigned integer is expected")
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n > math.MaxInt32 {
		return flexInt{}, invalid(path, "a timestamp is too large")
	}
	return flexInt{set: true, v: n}, nil
}

// idsParam reads ids: one id or a list of them, each a JSON integer or a
// string of digits; null (or absence) selects no filter.
func idsParam(v json.RawMessage, path string) (ids, error) {
	k := jsonKindOf(v)
	if k == 'n' {
		return nil, nil
	}
	if k != 'a' {
		if id, reason := oneIDParam(v); reason == "" {
			return ids{id}, nil
		}
		return nil, invalid(path, "an array is expected")
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(v, &elems); err != nil {
		return nil, invalid(path, "an array is expected")
	}
	list := make(ids, 0, len(elems))
	for i, e := range elems {
		id, reason := oneIDParam(e)
		if reason != "" {
			return nil, invalid(subpath(path, strconv.Itoa(i+1)), reason)
		}
		list = append(list, id)
	}
	return list, nil
}

// oneIDParam reads one id: digits as a JSON integer or string, at most
// 2^63-1 (Zabbix's largest id). It returns why not otherwise.
func oneIDParam(v json.RawMessage) (uint64, string) {
	var text string
	switch jsonKindOf(v) {
	case 'i':
		text = string(bytes.TrimSpace(v))
	case 's':
		json.Unmarshal(v, &text)
	default:
		return 0, "a number is expected"
	}
	if text == "" || strings.Trim(text, "0123456789") != "" {
		return 0, "a number is expected"
	}
	id, err := strconv.ParseUint(text, 10, 64)
	if err != nil || id > math.MaxInt64 {
		return 0, "a number is too large"
	}
	return id, ""
}

// boolParam reads a strict JSON boolean.
func boolParam(v json.RawMessage, path string) (bool, error) {
	switch string(bytes.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, invalid(path, "a boolean is expected")
}

// flagParam reads a Zabbix "flag": a boolean, or (deprecated since Zabbix
// 3.4 but still accepted) any other value, which means true unless null.
func flagParam(v json.RawMessage) bool {
	switch string(bytes.TrimSpace(v)) {
	case "false", "null":
		return false
	}
	return true
}

// stringsParam reads a string or a list of strings, each one of in.
func stringsParam(v json.RawMessage, path string, in []string, normalize bool) (stringList, error) {
	var elems []json.RawMessage
	switch k := jsonKindOf(v); {
	case k == 's' && normalize:
		elems = []json.RawMessage{v}
	case k == 'a':
		if err := json.Unmarshal(v, &elems); err != nil {
			return nil, invalid(path, "an array is expected")
		}
	default:
		return nil, invalid(path, "an array is expected")
	}
	out := make(stringList, 0, len(elems))
	for i, e := range elems {
		p := subpath(path, strconv.Itoa(i+1))
		var s string
		if jsonKindOf(e) != 's' || json.Unmarshal(e, &s) != nil {
			return nil, invalid(p, "a character string is expected")
		}
		if !slices.Contains(in, s) {
			return nil, invalid(p, "value must be one of "+strings.Join(in, ", "))
		}
		out = append(out, s)
	}
	return out, nil
}

// outputParam reads "output": "extend" or a list of field names from in.
func outputParam(v json.RawMessage, path string, in []string) (stringList, error) {
	switch jsonKindOf(v) {
	case 's':
		var s string
		json.Unmarshal(v, &s)
		if s != "extend" {
			return nil, invalid(path, "value must be one of extend")
		}
		return stringList{s}, nil
	case 'a':
		return stringsParam(v, path, in, false)
	}
	return nil, invalid(path, "an array or a character string is expected")
}

// sortOrderParam reads "sortorder": ASC or DESC, or a list of them.
func sortOrderParam(v json.RawMessage, path string) (stringList, error) {
	k := jsonKindOf(v)
	if k != 's' && k != 'a' {
		return nil, invalid(path, "an array or a character string is expected")
	}
	if k == 's' {
		var s string
		json.Unmarshal(v, &s)
		if s != "ASC" && s != "DESC" {
			return nil, invalid(path, "value must be one of ASC, DESC")
		}
		return stringList{s}, nil
	}
	return stringsParam(v, path, []string{"ASC", "DESC"}, false)
}

// filterParam reads "filter" or "search": an object of field name to one
// value or a list of values (strings or numbers), the names limited to
// fields; null, or a null field, filters nothing.
func filterParam(v json.RawMessage, path string, fields []string) (map[string][]string, error) {
	if jsonKindOf(v) == 'n' {
		return nil, nil
	}
	if k := jsonKindOf(v); k == 'a' {
		// An empty JSON list is an empty PHP array: no condition.
		var l []json.RawMessage
		if json.Unmarshal(v, &l) == nil && len(l) == 0 {
			return nil, nil
		}
	}
	if len(fields) == 0 {
		// No field may be searched (numeric history): Zabbix's words for
		// an object whose rules list no fields.
		m, err := members(v, path, func(string) bool { return true })
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			return nil, invalid(path, "should be empty")
		}
		return nil, nil
	}
	m, err := members(v, path, func(name string) bool { return slices.Contains(fields, name) })
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, f := range fields { // Zabbix's order, so the first error is its first
		raw, ok := m[f]
		if !ok || jsonKindOf(raw) == 'n' {
			continue
		}
		p := subpath(path, f)
		elems := []json.RawMessage{raw}
		if jsonKindOf(raw) == 'a' {
			elems = nil
			json.Unmarshal(raw, &elems)
		} else if jsonKindOf(raw) == 'o' {
			return nil, invalid(p, "an array is expected")
		}
		vals := make([]string, 0, len(elems))
		for i, e := range elems {
			switch jsonKindOf(e) {
			case 's':
				var s string
				json.Unmarshal(e, &s)
				vals = append(vals, s)
			case 'i', 'f':
				vals = append(vals, string(bytes.TrimSpace(e)))
			default:
				return nil, invalid(subpath(p, strconv.Itoa(i+1)), "a character string, integer or floating point value is expected")
			}
		}
		out[f] = vals
	}
	return out, nil
}

// historyParams are history.get's parameters after parseHistoryParams.
type historyParams struct {
	History     int64
	ItemIDs     ids
	HostIDs     ids
	TimeFrom    flexInt
	TimeTill    flexInt
	Filter      map[string][]string
	Search      map[string][]string
	SearchByAny bool
	StartSearch bool
	// ExcludeSearch and SearchWildcards shape Search (rowmatch.go).
	ExcludeSearch   bool
	SearchWildcards bool
	// Editable asks for the history of items the caller may change only
	// (Zabbix 6.0 accepts it on history.get): none for a user below admin.
	Editable    bool
	Output      stringList
	CountOutput bool
	SortField   stringList
	SortOrder   stringList
	Limit       flexInt
	// Downsample is our extension: see histread/downsample.go. Raw JSON
	// so that a bad value gets an error naming the parameter.
	Downsample json.RawMessage
}

// limitRange is what "limit" may be, as Zabbix words it.
var limitRange = "1-" + strconv.Itoa(math.MaxInt32)

// historyParamNames are the parameters history.get accepts, in the order
// Zabbix 6.0 checks them; "downsample" is Peregrine's.
var historyParamNames = []string{"history", "hostids", "itemids", "time_from", "time_till", "filter", "search",
	"searchByAny", "startSearch", "excludeSearch", "searchWildcardsEnabled", "output", "countOutput", "sortfield",
	"sortorder", "limit", "editable", "downsample"}

// historyOutputFields lists what "output" may name per history type, and
// with "downsample" (which adds the bucket's statistics).
var (
	historyOutputFields    = []string{"itemid", "clock", "value", "ns"}
	historyLogOutputFields = []string{"itemid", "clock", "timestamp", "source", "severity", "value", "logeventid", "ns"}
	downsampleOutputFields = []string{"itemid", "clock", "value", "ns", "min", "max", "avg", "count"}
)

// parseHistoryParams checks and reads history.get's parameters.
func parseHistoryParams(raw json.RawMessage) (*historyParams, error) {
	m, err := members(raw, "/", func(n string) bool { return slices.Contains(historyParamNames, n) })
	if err != nil {
		return nil, err
	}
	p := &historyParams{History: int64(history.Uint)} // Zabbix's default "history" is 3
	for _, name := range historyParamNames {
		v, ok := m[name]
		if !ok {
			continue
		}
		path := subpath("/", name)
		var err error
		switch name {
		case "history":
			var h flexInt
			h, err = int32Param(v, path, false, 0, 4, "0, 1, 2, 3, 4")
			p.History = h.v
		case "hostids":
			p.HostIDs, err = idsParam(v, path)
		case "itemids":
			p.ItemIDs, err = idsParam(v, path)
		case "time_from":
			p.TimeFrom, err = timestampParam(v, path)
		case "time_till":
			p.TimeTill, err = timestampParam(v, path)
		case "filter":
			fields := []string{"itemid", "clock", "ns", "value"}
			switch p.History {
			case int64(history.Log):
				fields = []string{"itemid", "clock", "timestamp", "source", "severity", "logeventid", "ns"}
			case int64(history.Str), int64(history.Text):
				fields = []string{"itemid", "clock", "ns"}
			}
			p.Filter, err = filterParam(v, path, fields)
		case "search":
			var fields []string
			switch p.History {
			case int64(history.Log):
				fields = []string{"source", "value"}
			case int64(history.Str), int64(history.Text):
				fields = []string{"value"}
			}
			p.Search, err = filterParam(v, path, fields)
		case "searchByAny":
			p.SearchByAny, err = boolParam(v, path)
		case "startSearch":
			p.StartSearch = flagParam(v)
		case "excludeSearch":
			p.ExcludeSearch = flagParam(v)
		case "searchWildcardsEnabled":
			p.SearchWildcards, err = boolParam(v, path)
		case "output":
			in := historyOutputFields
			if p.History == int64(history.Log) {
				in = historyLogOutputFields
			}
			if d := jsonKindOf(m["downsample"]); d != 'n' {
				in = downsampleOutputFields
			}
			p.Output, err = outputParam(v, path, in)
		case "countOutput":
			p.CountOutput = flagParam(v)
		case "sortfield":
			p.SortField, err = stringsParam(v, path, []string{"itemid", "clock"}, true)
		case "sortorder":
			p.SortOrder, err = sortOrderParam(v, path)
		case "limit":
			p.Limit, err = int32Param(v, path, true, 1, math.MaxInt32, limitRange)
		case "editable":
			p.Editable, err = boolParam(v, path)
		case "downsample":
			p.Downsample = v
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// trendParams are trend.get's parameters after parseTrendParams.
type trendParams struct {
	ItemIDs     ids
	TimeFrom    flexInt
	TimeTill    flexInt
	Output      stringList
	CountOutput bool
	Limit       flexInt
}

var trendParamNames = []string{"itemids", "time_from", "time_till", "output", "countOutput", "limit"}

// parseTrendParams checks and reads trend.get's parameters.
func parseTrendParams(raw json.RawMessage) (*trendParams, error) {
	m, err := members(raw, "/", func(n string) bool { return slices.Contains(trendParamNames, n) })
	if err != nil {
		return nil, err
	}
	p := &trendParams{}
	for _, name := range trendParamNames {
		v, ok := m[name]
		if !ok {
			continue
		}
		path := subpath("/", name)
		var err error
		switch name {
		case "itemids":
			p.ItemIDs, err = idsParam(v, path)
		case "time_from":
			p.TimeFrom, err = timestampParam(v, path)
		case "time_till":
			p.TimeTill, err = timestampParam(v, path)
		case "output":
			p.Output, err = outputParam(v, path, []string{"itemid", "clock", "num", "value_min", "value_avg", "value_max"})
		case "countOutput":
			p.CountOutput, err = boolParam(v, path)
		case "limit":
			p.Limit, err = int32Param(v, path, true, 1, math.MaxInt32, limitRange)
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// parseDownsample reads the "downsample" parameter, Peregrine's
// extension (histread/downsample.go has what it does): absent or null
// means a raw read (n 0); otherwise an integer (or numeric string) in
// 1..history.MaxBuckets.
func parseDownsample(raw json.RawMessage) (int, error) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return 0, nil
	}
	v, err := strconv.ParseInt(string(bytes.Trim(b, `"`)), 10, 64)
	if err != nil {
		return 0, errParams(`Invalid parameter "/downsample": an integer is expected.`)
	}
	if v < 1 || v > history.MaxBuckets {
		return 0, errParams(`Invalid parameter "/downsample": value must be one of 1-%d.`, history.MaxBuckets)
	}
	return int(v), nil
}
