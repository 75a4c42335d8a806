package api

// The validated gets: the get methods Zabbix 6.0 checks with its API
// input validator before reading anything (token.get, valuemap.get,
// script.get), decoded by decodeValidated. What they share is declared here, in the
// order of 6.0's rules, and each method's params struct embeds it
// between its own parameters so that the first problem reported is
// 6.0's first (recorded from 6.0.14):
//
//	tokenids, userids, ... (the method's), validQuery, the method's
//	selects, validPage, editable (where the method has it), preservekeys
//
// Unlike the legacy gets they refuse an unknown member, a field that
// output, filter, search or sortfield may not name (validNames, given
// by the method's adjustRule), a value of another type ("a boolean is
// expected" for preservekeys 1, "an integer is expected" for limit "x"),
// and a list naming a field twice. countOutput, startSearch and
// excludeSearch are flags (any value but null and false is true); an
// output list gives the fields named and not the object's ID
// (schema.named). Once read they are a getParams (validGet), filtered,
// sorted and shaped by apply as every get is.

// validQuery are the search and output parameters of a validated get.
type validQuery struct {
	Filter          opt[fieldMap] `json:"filter"`
	Search          opt[fieldMap] `json:"search"`
	SearchByAny     opt[anyFlag]  `json:"searchByAny"`
	StartSearch     opt[bool]     `json:"startSearch" as:"flag"`
	ExcludeSearch   opt[bool]     `json:"excludeSearch" as:"flag"`
	SearchWildcards opt[bool]     `json:"searchWildcardsEnabled"`
	Output          opt[[]string] `json:"output" as:"output"`
	CountOutput     opt[bool]     `json:"countOutput" as:"flag"`
}

// validPage are the sort and limit parameters of a validated get.
type validPage struct {
	SortField opt[[]string]   `json:"sortfield" zbx:"normalize,uniq"`
	SortOrder opt[sortOrders] `json:"sortorder"`
	Limit     opt[int64]      `json:"limit" in:"1:2147483647" zbx:"null"`
}

// validNames are the fields a validated get's output, filter, search
// and sortfield may name, each list in 6.0's order (its texts list
// them so).
type validNames struct {
	output, filter, search, sort []string
}

// adjust gives rule r the names its parameter may take.
func (n *validNames) adjust(r *fieldRule) {
	switch r.name {
	case "output":
		r.in = n.output
	case "filter":
		r.in = n.filter
	case "search":
		r.in = n.search
	case "sortfield":
		r.in = n.sort
	}
}

// validGet is a validated get's parameters as apply reads them.
func validGet(q *validQuery, pg *validPage, preserveKeys opt[bool]) getParams {
	return getParams{
		Output: q.Output, Filter: q.Filter, Search: q.Search, SearchByAny: q.SearchByAny,
		StartSearch: q.StartSearch, ExcludeSearch: q.ExcludeSearch, SearchWildcards: q.SearchWildcards,
		SortField: pg.SortField, SortOrder: pg.SortOrder, Limit: pg.Limit,
		CountOutput: q.CountOutput, PreserveKeys: preserveKeys,
	}
}
