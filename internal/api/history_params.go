package api

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Strict parameters of history.get and trend.get, checked the way the
// Zabbix frontend's API input validator checks them, with its error texts
// (code -32602 "Invalid params.", data `Invalid parameter "<path>":
// <reason>.`): an unknown parameter is refused ("unexpected parameter"),
// every known one must have its type, and the first problem in Zabbix's
// order (unknown names first, in the order sent, then each field in the
// order of its rules, the order of the structs' fields) is the one
// reported (decodeValidated). A lenient decoder that ignored unknown or
// mistyped members answered a mistyped request with the wrong rows
// instead of an error.
//
// The times are 32-bit integers, as 6.0 declares them: a negative
// time_from is the start of time, a negative time_till selects nothing.
// "downsample" is Peregrine's extension, which 6.0 refuses as unknown.
// trend.get is read as 6.0 reads it, leniently (trendGetParams).

// historyGetParams are history.get's parameters, in the order Zabbix 6.0
// checks them; "downsample" is Peregrine's.
type historyGetParams struct {
	// History is the value type; Zabbix's default is 3 (unsigned).
	History         opt[int64]               `json:"history" in:"0,1,2,3,4" default:"3"`
	HostIDs         opt[ids]                 `json:"hostids"`
	ItemIDs         opt[ids]                 `json:"itemids"`
	TimeFrom        opt[int64]               `json:"time_from" zbx:"null"`
	TimeTill        opt[int64]               `json:"time_till" zbx:"null"`
	Filter          opt[map[string][]string] `json:"filter" as:"filter"` // fields: adjustRule
	Search          opt[map[string][]string] `json:"search" as:"filter"` // fields: adjustRule
	SearchByAny     opt[bool]                `json:"searchByAny"`
	StartSearch     opt[bool]                `json:"startSearch" as:"flag"`
	ExcludeSearch   opt[bool]                `json:"excludeSearch" as:"flag"`
	SearchWildcards opt[bool]                `json:"searchWildcardsEnabled"`
	Output          opt[[]string]            `json:"output" as:"output"` // names: adjustRule
	CountOutput     opt[bool]                `json:"countOutput" as:"flag"`
	SortField       opt[[]string]            `json:"sortfield" in:"itemid,clock" zbx:"normalize,uniq"`
	SortOrder       opt[[]string]            `json:"sortorder" as:"sortorder"`
	Limit           opt[int64]               `json:"limit" in:"1:2147483647" zbx:"null"`
	// Editable asks for the history of items the caller may change only
	// (Zabbix 6.0 accepts it on history.get): none for a user below admin.
	Editable opt[bool] `json:"editable"`
	// Downsample is our extension: see histread/downsample.go. Kept as
	// JSON and read by parseDownsample once the request is authorised,
	// so that a bad value gets an error naming the parameter.
	Downsample opt[json.RawMessage] `json:"downsample" as:"json"`
}

// adjustRule gives the fields filter, search and output may name, which
// depend on the history type (and "output"'s on "downsample").
func (p *historyGetParams) adjustRule(r *fieldRule, given func(string) bool) {
	h := history.ValueType(p.History.Value)
	switch r.name {
	case "filter":
		switch h {
		case history.Log:
			r.in = []string{"itemid", "clock", "timestamp", "source", "severity", "logeventid", "ns"}
		case history.Str, history.Text:
			r.in = []string{"itemid", "clock", "ns"}
		default:
			r.in = []string{"itemid", "clock", "ns", "value"}
		}
	case "search":
		switch h {
		case history.Log:
			r.in = []string{"source", "value"}
		case history.Str, history.Text:
			r.in = []string{"value"}
		default:
			r.in = nil
		}
	case "output":
		switch {
		case given("downsample"):
			r.in = []string{"itemid", "clock", "value", "ns", "min", "max", "avg", "count"}
		case h == history.Log:
			r.in = []string{"itemid", "clock", "timestamp", "source", "severity", "value", "logeventid", "ns"}
		default:
			r.in = []string{"itemid", "clock", "value", "ns"}
		}
	}
}

// rowFilter is what rowmatch.go compiles.
func (p *historyGetParams) rowFilter() *rowFilter {
	return &rowFilter{Filter: p.Filter.Value, Search: p.Search.Value, SearchByAny: p.SearchByAny.Value,
		StartSearch: p.StartSearch.Value, ExcludeSearch: p.ExcludeSearch.Value, SearchWildcards: p.SearchWildcards.Value}
}

// trendGetParams are trend.get's parameters. Zabbix 6.0's trend.get is
// one of its legacy gets (params_legacy.go): it ignores what it does not
// know (sortfield, sortorder, preservekeys, filter: Grafana sends the
// first two) and reads the rest as PHP does; recorded from 6.0.14:
// itemids null reads every item's trends, an output list gives the
// fields named and no other (not even the item's ID: [] for none),
// countOutput counts whatever the limit.
type trendGetParams struct {
	ItemIDs     opt[ids]      `json:"itemids"`
	TimeFrom    opt[int64]    `json:"time_from"`
	TimeTill    opt[int64]    `json:"time_till"`
	Output      opt[[]string] `json:"output" as:"output"`
	CountOutput opt[bool]     `json:"countOutput"`
	Limit       opt[int64]    `json:"limit" as:"limit"`

	noRows bool // a value selects nothing (errNoRows)
}

func (p *trendGetParams) markNoRows() { p.noRows = true }

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
