package api

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// regexp.get, .create, .update and .delete: Zabbix 6.0's global regular
// expressions (Administration → General → Regular expressions), kept by
// the catalog (catalog.GlobalRegexp), super admins only. Parameters are
// checked as 6.0's API input validator checks CRegexp's, with its texts
// (recorded from 6.0.14; decodeRuled reads them in the order of its
// rules). Types 3 and 4 must compile as Go regular expressions, the
// syntax Peregrine matches them with (6.0 checks PCRE's).

func (s *Server) registerRegexps() {
	s.methods["regexp.get"] = &method{role: RoleUser, call: s.regexpGet}
	ed, ok := s.opts.Catalog.(CatalogEditor)
	if !ok {
		return
	}
	w := &configWriter{s: s, ed: ed, cat: s.opts.Catalog}
	s.methods["regexp.create"] = &method{role: RoleUser, call: w.regexpCreate}
	s.methods["regexp.update"] = &method{role: RoleUser, call: w.regexpUpdate}
	s.methods["regexp.delete"] = &method{role: RoleUser, call: w.regexpDelete}
}

// superAdminOnly is 6.0's answer to anybody else calling a method of
// the Administration section (recorded: regexp.*, task.get).
func superAdminOnly(c *call, method string) error {
	if c.user.Role < RoleSuperAdmin {
		return errParams(`No permissions to call "%s".`, method)
	}
	return nil
}

// regexpFields are a regular expression's fields, in 6.0's order; its
// expressions' follow.
const (
	regexpFields     = "regexpid,name,test_string"
	expressionFields = "expression,expression_type,exp_delimiter,case_sensitive"
)

// regexpGetParams are regexp.get's parameters, in the order 6.0 checks
// them. 6.0 checks "limit" and then ignores it (recorded: "limit": 2
// returns every regular expression); so does Peregrine.
type regexpGetParams struct {
	RegexpIDs         opt[ids]                 `json:"regexpids" zbx:"null"`
	Filter            opt[map[string][]string] `json:"filter" as:"filter" zbx:"null" in:"regexpid,name"`
	Search            opt[map[string][]string] `json:"search" as:"filter" zbx:"null" in:"name,test_string"`
	SearchByAny       opt[bool]                `json:"searchByAny"`
	StartSearch       opt[bool]                `json:"startSearch" as:"flag"`
	ExcludeSearch     opt[bool]                `json:"excludeSearch" as:"flag"`
	SearchWildcards   opt[bool]                `json:"searchWildcardsEnabled"`
	Output            opt[zoutput]             `json:"output" in:"regexpid,name,test_string"`
	SelectExpressions opt[zoutput]             `json:"selectExpressions" zbx:"null" in:"expression,expression_type,exp_delimiter,case_sensitive"`
	CountOutput       opt[bool]                `json:"countOutput" as:"flag"`
	SortField         opt[zwords]              `json:"sortfield" in:"regexpid,name"`
	SortOrder         opt[zorder]              `json:"sortorder"`
	Limit             opt[int64]               `json:"limit" in:"1:2147483647" zbx:"null"`
	PreserveKeys      opt[bool]                `json:"preservekeys"`
}

// regexpField is field f of r as regexp.get returns it.
func regexpField(r *catalog.GlobalRegexp, f string) string {
	switch f {
	case "regexpid":
		return id(r.ID)
	case "name":
		return r.Name
	case "test_string":
		return r.TestString
	}
	return ""
}

// expressionField is field f of x as selectExpressions returns it.
func expressionField(x *catalog.Expression, f string) string {
	switch f {
	case "expression":
		return x.Expression
	case "expression_type":
		return strconv.Itoa(int(x.Type))
	case "exp_delimiter":
		return x.Delimiter
	case "case_sensitive":
		return status(!x.CaseSensitive) // 1 when case-sensitive
	}
	return ""
}

func (s *Server) regexpGet(_ context.Context, c *call) (any, error) {
	if err := superAdminOnly(c, "regexp.get"); err != nil {
		return nil, err
	}
	var p regexpGetParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	search := searchOpts{terms: p.Search.Value, byAny: p.SearchByAny.Value, start: p.StartSearch.Value, wildcards: p.SearchWildcards.Value}
	var list []*catalog.GlobalRegexp
	rs := s.opts.Catalog.Snapshot().Regexps()
	for i := range rs {
		r := &rs[i]
		field := func(f string) string { return regexpField(r, f) }
		if p.RegexpIDs.Given() && !containsID(p.RegexpIDs.Value, r.ID) ||
			!filterMatch(p.Filter.Value, field) || !search.match(field) {
			continue
		}
		list = append(list, r)
	}
	if p.CountOutput.Value {
		return strconv.Itoa(len(list)), nil
	}
	for k := len(p.SortField.Value) - 1; k >= 0; k-- {
		f, desc := p.SortField.Value[k], p.SortOrder.Value.at(k)
		slices.SortStableFunc(list, func(a, b *catalog.GlobalRegexp) int {
			c := lessValues(regexpField(a, f), regexpField(b, f), f == "regexpid")
			if desc {
				return -c
			}
			return c
		})
	}
	out := make([]object, 0, len(list))
	for _, r := range list {
		o := object{}
		for f := range strings.SplitSeq(regexpFields, ",") {
			if p.Output.Value.has(f) {
				o[f] = regexpField(r, f)
			}
		}
		if p.SelectExpressions.Given() {
			o["expressions"] = selectList(p.SelectExpressions.Value, len(r.Expressions), func(i int, f string) any {
				return expressionField(&r.Expressions[i], f)
			}, strings.Split(expressionFields, ",")...)
		}
		out = append(out, o)
	}
	if p.PreserveKeys.Value {
		m := make(map[string]object, len(out))
		for i, o := range out {
			m[id(list[i].ID)] = o
		}
		return m, nil
	}
	return out, nil
}

// expressionParams is one of a regular expression's "expressions", its
// members in 6.0's rule order.
type expressionParams struct {
	ExpressionType opt[int64] `json:"expression_type" in:"0,1,2,3,4"`
	Expression     opt[zstr]  `json:"expression" in:"1:255"`
	ExpDelimiter   opt[zstr]  `json:"exp_delimiter"`
	CaseSensitive  opt[int64] `json:"case_sensitive" in:"0,1"`
}

func (*expressionParams) required() []string { return []string{"expression_type", "expression"} }

// afterField checks what depends on the type: a regular expression for
// types 3 and 4, the delimiter of type 1 (and none given for the
// others).
func (x *expressionParams) afterField(name string) error {
	t := catalog.ExpressionType(x.ExpressionType.Value)
	switch name {
	case "expression":
		if t == catalog.ExprTrue || t == catalog.ExprFalse {
			xe := x.expression()
			if err := xe.Check(); err != nil {
				return &valueError{msg: "invalid regular expression"}
			}
		}
	case "exp_delimiter":
		d := string(x.ExpDelimiter.Value)
		switch {
		case t == catalog.ExprAnyIncluded && (d == "" || len(d) != 1 || !strings.Contains(",./", d)):
			return &valueError{msg: `value must be one of ",", ".", "/"`}
		case t != catalog.ExprAnyIncluded && d != "":
			return &valueError{msg: "value must be empty"}
		}
	}
	return nil
}

// expression is x as the catalog keeps it; the delimiter is "," when
// not given, as 6.0 stores it.
func (x *expressionParams) expression() catalog.Expression {
	d := ","
	if x.ExpDelimiter.Set {
		d = string(x.ExpDelimiter.Value)
	}
	return catalog.Expression{Expression: string(x.Expression.Value), Type: catalog.ExpressionType(x.ExpressionType.Value),
		Delimiter: d, CaseSensitive: x.CaseSensitive.Value == 1}
}

// regexpCreateParams and regexpUpdateParams are the objects of
// regexp.create and regexp.update.
type regexpCreateParams struct {
	Name        opt[zstr]                    `json:"name" in:"1:128"`
	TestString  opt[zstr]                    `json:"test_string" in:"0:65535"`
	Expressions opt[zobjs[expressionParams]] `json:"expressions" in:"notempty"`
}

func (*regexpCreateParams) required() []string { return []string{"name", "expressions"} }

type regexpUpdateParams struct {
	RegexpID    opt[uint64]                  `json:"regexpid"`
	Name        opt[zstr]                    `json:"name" in:"1:128"`
	TestString  opt[zstr]                    `json:"test_string" in:"0:65535"`
	Expressions opt[zobjs[expressionParams]] `json:"expressions" in:"notempty"`
}

func (*regexpUpdateParams) required() []string { return []string{"regexpid"} }

// expressionsOf is the catalog's form of a list of expressions.
func expressionsOf(l zobjs[expressionParams]) []catalog.Expression {
	out := make([]catalog.Expression, len(l))
	for i := range l {
		out[i] = l[i].expression()
	}
	return out
}

// uniqExpressions is the validator's second pass over an object's
// expressions: no (expression_type, expression) twice.
func uniqExpressions(path string, l zobjs[expressionParams]) error {
	return uniq(path, len(l), []string{"expression_type", "expression"}, func(i int) []string {
		return []string{i64s(l[i].ExpressionType.Value), string(l[i].Expression.Value)}
	})
}

// decodeRuledList is decodeRuledObjects where an empty object, which
// PHP decodes as an empty array, is an empty list.
func decodeRuledList[T any](raw json.RawMessage, out *[]T) error {
	if ms, ok := objectMembers(raw); ok && len(ms) == 0 {
		return invalid("/", "cannot be empty")
	}
	return decodeRuledObjects(raw, out)
}

func (w *configWriter) regexpCreate(ctx context.Context, c *call) (any, error) {
	if err := superAdminOnly(c, "regexp.create"); err != nil {
		return nil, err
	}
	var ps []regexpCreateParams
	if err := decodeRuledList(c.params, &ps); err != nil {
		return nil, err
	}
	if err := uniq("/", len(ps), []string{"name"}, func(i int) []string { return []string{string(ps[i].Name.Value)} }); err != nil {
		return nil, err
	}
	rs := make([]catalog.GlobalRegexp, len(ps))
	for i := range ps {
		if err := uniqExpressions(objPath(i)+"/expressions", ps[i].Expressions.Value); err != nil {
			return nil, err
		}
		rs[i] = catalog.GlobalRegexp{Name: string(ps[i].Name.Value), TestString: string(ps[i].TestString.Value), Expressions: expressionsOf(ps[i].Expressions.Value)}
	}
	var ids []uint64
	err := w.edit(ctx, c, "regexpid", nil, func(e *catalog.Edit) (err error) {
		ids, err = e.CreateRegexps(rs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("regexpids", ids), nil
}

func (w *configWriter) regexpUpdate(ctx context.Context, c *call) (any, error) {
	if err := superAdminOnly(c, "regexp.update"); err != nil {
		return nil, err
	}
	var ps []regexpUpdateParams
	if err := decodeRuledList(c.params, &ps); err != nil {
		return nil, err
	}
	if err := uniq("/", len(ps), []string{"regexpid"}, func(i int) []string { return []string{id(ps[i].RegexpID.Value)} }); err != nil {
		return nil, err
	}
	if err := uniqGiven("/", len(ps), "name", func(i int) opt[zstr] { return ps[i].Name }); err != nil {
		return nil, err
	}
	ups := make([]catalog.RegexpUpdate, len(ps))
	ids := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		if err := uniqExpressions(objPath(i)+"/expressions", p.Expressions.Value); err != nil {
			return nil, err
		}
		u := catalog.RegexpUpdate{ID: p.RegexpID.Value}
		if p.Name.Set {
			u.Name = new(string(p.Name.Value))
		}
		if p.TestString.Set {
			u.TestString = new(string(p.TestString.Value))
		}
		if p.Expressions.Set {
			u.Expressions = new(expressionsOf(p.Expressions.Value))
		}
		ups[i], ids[i] = u, p.RegexpID.Value
	}
	err := w.edit(ctx, c, "regexpid", nil, func(e *catalog.Edit) error {
		// A regular expression that does not exist is refused before a
		// name taken, as 6.0 does.
		snap := w.cat.Snapshot()
		for _, id := range ids {
			if snap.Regexp(id) == nil {
				return errNoPermissions
			}
		}
		return e.UpdateRegexps(ups)
	})
	if err != nil {
		return nil, err
	}
	return idResult("regexpids", ids), nil
}

func (w *configWriter) regexpDelete(ctx context.Context, c *call) (any, error) {
	if err := superAdminOnly(c, "regexp.delete"); err != nil {
		return nil, err
	}
	ids, err := decodeValidatedIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := w.edit(ctx, c, "regexpid", nil, func(e *catalog.Edit) error { return e.DeleteRegexps(ids) }); err != nil {
		return nil, err
	}
	return idResult("regexpids", ids), nil
}

// decodeValidatedIDs reads the params of a delete 6.0 checks with its
// validator: a list of IDs (an object is a PHP array too: its values),
// not empty, none twice.
func decodeValidatedIDs(raw json.RawMessage) ([]uint64, error) {
	ms, ok := validatorMembers(raw)
	if !ok {
		return nil, invalid("/", "an array is expected")
	}
	if len(ms) == 0 {
		return nil, invalid("/", "cannot be empty")
	}
	out := make([]uint64, len(ms))
	for i, m := range ms {
		v, reason := oneIDParam(m.raw)
		if reason != "" {
			return nil, invalid(objPath(i), reason)
		}
		if slices.Contains(out[:i], v) {
			return nil, invalid(objPath(i), "value ("+id(v)+") already exists")
		}
		out[i] = v
	}
	return out, nil
}
