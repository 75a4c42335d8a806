package api

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// correlation.get, .create, .update and .delete: Zabbix 6.0's global
// event correlation rules (catalog.Correlation, part of the
// notification configuration), checked as 6.0.14 checks them (recorded
// from the peer: the conformance case correlation): a name, a filter
// with at least one condition and at least one operation; condition
// types 0-5 with the members each needs (a tag, a tag pair, a host
// group with operator 0 or 1, a tag and value with operator 0-3); and/or
// (0), and (1), or (2) or a custom formula (3) naming every condition's
// formulaid once. Writing needs a Super admin; a get answers a Super
// admin (correlations are administration: others get none). Writes are
// audited (resource 34, audit_spec.go). Package trigger applies the
// rules to new problems (correlate.go).

func (s *Server) registerCorrelations() {
	s.methods["correlation.get"] = &method{role: RoleUser, call: s.correlationGet}
	s.methods["correlation.create"] = &method{role: RoleSuperAdmin, call: s.correlationCreate}
	s.methods["correlation.update"] = &method{role: RoleSuperAdmin, call: s.correlationUpdate}
	s.methods["correlation.delete"] = &method{role: RoleSuperAdmin, call: s.correlationDelete}
}

// correlationParams are the objects of correlation.create and .update.
type correlationParams struct {
	CorrelationID opt[uint64]           `json:"correlationid"`
	Name          opt[string]           `json:"name"`
	Description   opt[string]           `json:"description"`
	Status        opt[int64]            `json:"status"`
	Filter        opt[corrFilterParams] `json:"filter" as:"object"`
	Operations    opt[[]corrOpParams]   `json:"operations" as:"objects"`
}

type corrFilterParams struct {
	EvalType   opt[int64]            `json:"evaltype"`
	Formula    opt[string]           `json:"formula"`
	Conditions opt[[]corrCondParams] `json:"conditions" as:"objects"`
}

type corrCondParams struct {
	Type      opt[int64]  `json:"type"`
	Tag       opt[string] `json:"tag"`
	OldTag    opt[string] `json:"oldtag"`
	NewTag    opt[string] `json:"newtag"`
	Value     opt[string] `json:"value"`
	GroupID   opt[uint64] `json:"groupid"`
	Operator  opt[int64]  `json:"operator"`
	FormulaID opt[string] `json:"formulaid"`
}

type corrOpParams struct {
	Type opt[int64] `json:"type"`
}

var formulaIDRe = regexp.MustCompile(`\b[A-Z]+\b`)

// filter checks and builds the filter at path (/1/filter).
func (f *corrFilterParams) filter(snap *catalog.Snapshot, path string) (ev int, formula string, conds []catalog.CorrCondition, err error) {
	if !f.EvalType.Given() {
		return 0, "", nil, errParams(`Invalid parameter "%s": the parameter "evaltype" is missing.`, path)
	}
	if ev = int(f.EvalType.Value); ev < 0 || ev > 3 {
		return 0, "", nil, errParams(`Invalid parameter "%s/evaltype": value must be one of 0, 1, 2, 3.`, path)
	}
	if !f.Conditions.Set {
		return 0, "", nil, errParams(`Invalid parameter "%s": the parameter "conditions" is missing.`, path)
	}
	if len(f.Conditions.Value) == 0 {
		return 0, "", nil, errParams(`Invalid parameter "%s/conditions": cannot be empty.`, path)
	}
	for j, c := range f.Conditions.Value {
		cp := fmt.Sprintf("%s/conditions/%d", path, j+1)
		if !c.Type.Given() {
			return 0, "", nil, errParams(`Invalid parameter "%s": the parameter "type" is missing.`, cp)
		}
		t := int(c.Type.Value)
		if t < 0 || t > 5 {
			return 0, "", nil, errParams(`Invalid parameter "%s/type": value must be one of 0, 1, 2, 3, 4, 5.`, cp)
		}
		cc := catalog.CorrCondition{Type: t, FormulaID: c.FormulaID.Value}
		need := map[int][]string{0: {"tag"}, 1: {"tag"}, 2: {"groupid"}, 3: {"oldtag", "newtag"}, 4: {"tag"}, 5: {"tag"}}[t]
		given := map[string]bool{"tag": c.Tag.Set, "groupid": c.GroupID.Set, "oldtag": c.OldTag.Set, "newtag": c.NewTag.Set}
		for _, m := range need {
			if !given[m] {
				return 0, "", nil, errParams(`Invalid parameter "%s": the parameter "%s" is missing.`, cp, m)
			}
		}
		for m, v := range map[string]opt[string]{"tag": c.Tag, "oldtag": c.OldTag, "newtag": c.NewTag} {
			if slices.Contains(need, m) && v.Value == "" {
				return 0, "", nil, errParams(`Invalid parameter "%s/%s": cannot be empty.`, cp, m)
			}
		}
		switch t {
		case catalog.CorrOldTag, catalog.CorrNewTag:
			cc.Tag = c.Tag.Value
		case catalog.CorrNewGroup:
			if c.Operator.Given() && (c.Operator.Value < 0 || c.Operator.Value > 1) {
				return 0, "", nil, errParams(`Invalid parameter "%s/operator": value must be one of 0, 1.`, cp)
			}
			if snap.GroupByID(c.GroupID.Value) == nil {
				return 0, "", nil, errNoPermissions
			}
			cc.GroupID, cc.Operator = c.GroupID.Value, int(c.Operator.Value)
		case catalog.CorrTagPair:
			cc.OldTag, cc.NewTag = c.OldTag.Value, c.NewTag.Value
		default:
			if c.Operator.Given() && (c.Operator.Value < 0 || c.Operator.Value > 3) {
				return 0, "", nil, errParams(`Invalid parameter "%s/operator": value must be one of 0, 1, 2, 3.`, cp)
			}
			cc.Tag, cc.Value, cc.Operator = c.Tag.Value, c.Value.Value, int(c.Operator.Value)
		}
		conds = append(conds, cc)
	}
	if ev == 3 {
		formula = f.Formula.Value
		if strings.TrimSpace(formula) == "" {
			return 0, "", nil, errParams(`Invalid parameter "%s/formula": cannot be empty.`, path)
		}
		used := formulaIDRe.FindAllString(formula, -1)
		ids := map[string]bool{}
		for _, c := range conds {
			ids[c.FormulaID] = true
		}
		for _, u := range used {
			if !ids[u] {
				return 0, "", nil, errParams(`Invalid parameter "%s/conditions": incorrect number of conditions.`, path)
			}
		}
		if len(ids) != len(conds) || len(uniqStrings(used)) != len(conds) {
			return 0, "", nil, errParams(`Invalid parameter "%s/conditions": incorrect number of conditions.`, path)
		}
	} else {
		// Recorded from 6.0.14: the conditions are kept by type, then
		// named A, B, ... in that order.
		slices.SortStableFunc(conds, func(a, b catalog.CorrCondition) int { return a.Type - b.Type })
		for j := range conds {
			conds[j].FormulaID = formulaLetters(j)
		}
	}
	return ev, formula, conds, nil
}

func uniqStrings(l []string) []string {
	out := slices.Clone(l)
	slices.Sort(out)
	return slices.Compact(out)
}

// formulaLetters is the j-th formula id: A..Z, AA, AB, ...
func formulaLetters(j int) string {
	s := ""
	for j++; j > 0; j = (j - 1) / 26 {
		s = string(rune('A'+(j-1)%26)) + s
	}
	return s
}

// corrEvalFormula is the formula a filter evaluates, as 6.0 shows it
// ("eval_formula"), by the actions' rule (action.go evalFormula).
func corrEvalFormula(c *catalog.Correlation) string {
	f := catalog.Filter{EvalType: c.EvalType, Formula: c.Formula}
	for _, x := range c.Conditions {
		f.Conditions = append(f.Conditions, catalog.Condition{ConditionType: x.Type, FormulaID: x.FormulaID})
	}
	return evalFormula(&f)
}

// apply sets on c what p gives, checking it (path /i).
func (p *correlationParams) apply(snap *catalog.Snapshot, c *catalog.Correlation, i int) error {
	if p.Name.Set {
		if p.Name.Value == "" {
			return empty(i, "name")
		}
		c.Name = p.Name.Value
	}
	if p.Description.Set {
		c.Description = p.Description.Value
	}
	if p.Status.Given() {
		if p.Status.Value < 0 || p.Status.Value > 1 {
			return errParams(`Invalid parameter "/%d/status": value must be one of 0, 1.`, i+1)
		}
		c.Status = int(p.Status.Value)
	}
	if p.Filter.Set {
		ev, formula, conds, err := p.Filter.Value.filter(snap, fmt.Sprintf("/%d/filter", i+1))
		if err != nil {
			return err
		}
		c.EvalType, c.Formula, c.Conditions = ev, formula, conds
	}
	if p.Operations.Set {
		if len(p.Operations.Value) == 0 {
			return empty(i, "operations")
		}
		c.Operations = c.Operations[:0:0]
		for j, op := range p.Operations.Value {
			if !op.Type.Given() {
				return errParams(`Invalid parameter "/%d/operations/%d": the parameter "type" is missing.`, i+1, j+1)
			}
			if op.Type.Value < 0 || op.Type.Value > 1 {
				return errParams(`Invalid parameter "/%d/operations/%d/type": value must be one of 0, 1.`, i+1, j+1)
			}
			c.Operations = append(c.Operations, int(op.Type.Value))
		}
	}
	return nil
}

// uniqueName refuses a name another correlation has.
func uniqueName(cfg *catalog.AlertConfig, c *catalog.Correlation) error {
	for _, o := range cfg.Correlations {
		if o.ID != c.ID && o.Name == c.Name {
			return errParams(`Correlation "%s" already exists.`, c.Name)
		}
	}
	return nil
}

func (s *Server) correlationCreate(ctx context.Context, c *call) (any, error) {
	objs, err := alertObjects(c.params)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var out []uint64
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		out = out[:0]
		if cfg.Correlations == nil {
			cfg.Correlations = map[uint64]*catalog.Correlation{}
		}
		for i, o := range objs {
			if o.has("correlationid") {
				return errParams(`Invalid parameter "/%d": unexpected parameter "correlationid".`, i+1)
			}
			var p correlationParams
			if err := decodeAlert(o, fmt.Sprintf("/%d", i+1), &p); err != nil {
				return err
			}
			for _, need := range []string{"name", "filter", "operations"} {
				if !o.has(need) {
					return missing(i, need)
				}
			}
			var cr catalog.Correlation
			if err := p.apply(snap, &cr, i); err != nil {
				return err
			}
			if err := tooLong(i, "name", cr.Name, 255); err != nil {
				return err
			}
			if err := uniqueName(cfg, &cr); err != nil {
				return err
			}
			cr.ID = cfg.NextID("correlation")
			cfg.Correlations[cr.ID] = &cr
			out = append(out, cr.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("correlationids", out), nil
}

func (s *Server) correlationUpdate(ctx context.Context, c *call) (any, error) {
	objs, err := alertObjects(c.params)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var out []uint64
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		out = out[:0]
		for i, o := range objs {
			var p correlationParams
			if err := decodeAlert(o, fmt.Sprintf("/%d", i+1), &p); err != nil {
				return err
			}
			if !p.CorrelationID.Given() {
				return missing(i, "correlationid")
			}
			old := cfg.Correlations[p.CorrelationID.Value]
			if old == nil {
				return errNoPermissions
			}
			cr := *old
			cr.Conditions, cr.Operations = slices.Clone(old.Conditions), slices.Clone(old.Operations)
			if err := p.apply(snap, &cr, i); err != nil {
				return err
			}
			if err := tooLong(i, "name", cr.Name, 255); err != nil {
				return err
			}
			if err := uniqueName(cfg, &cr); err != nil {
				return err
			}
			cfg.Correlations[cr.ID] = &cr
			out = append(out, cr.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("correlationids", out), nil
}

func (s *Server) correlationDelete(ctx context.Context, c *call) (any, error) {
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		for _, id := range list {
			if cfg.Correlations[id] == nil {
				return errNoPermissions
			}
			delete(cfg.Correlations, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("correlationids", list), nil
}

// correlationGetParams are correlation.get's parameters.
type correlationGetParams struct {
	CorrelationIDs opt[ids] `json:"correlationids" zbx:"null"`
	validQuery
	SelectFilter     opt[zoutput] `json:"selectFilter" zbx:"null" in:"evaltype,formula,conditions,eval_formula"`
	SelectOperations opt[zoutput] `json:"selectOperations" zbx:"null" in:"type"`
	validPage
	Editable     opt[bool] `json:"editable"`
	PreserveKeys opt[bool] `json:"preservekeys"`
}

var correlationNames = validNames{
	output: []string{"correlationid", "name", "description", "status"},
	filter: []string{"correlationid", "name", "description", "status"},
	search: []string{"name", "description"},
	sort:   []string{"correlationid", "name", "status"},
}

func (p *correlationGetParams) adjustRule(r *fieldRule, _ func(string) bool) {
	correlationNames.adjust(r)
}

var correlationSchema = schema{id: "correlationid", types: fieldTypes(`correlationid:n name:c description:t status:n`)}

func correlationCondObject(x catalog.CorrCondition) object {
	o := object{"type": istr(x.Type), "formulaid": x.FormulaID}
	switch x.Type {
	case catalog.CorrOldTag, catalog.CorrNewTag:
		o["tag"] = x.Tag
	case catalog.CorrNewGroup:
		o["operator"], o["groupid"] = istr(x.Operator), u64(x.GroupID)
	case catalog.CorrTagPair:
		o["oldtag"], o["newtag"] = x.OldTag, x.NewTag
	default:
		o["tag"], o["operator"], o["value"] = x.Tag, istr(x.Operator), x.Value
	}
	return o
}

func (s *Server) correlationGet(ctx context.Context, c *call) (any, error) {
	var p correlationGetParams
	if err := decodeValidated(c.params, &p); err != nil {
		return nil, err
	}
	var objs []object
	want := idSet(p.CorrelationIDs.Value)
	if c.user.Role == RoleSuperAdmin {
		for _, cr := range s.opts.Alerting.AlertConfig().SortedCorrelations() {
			if want != nil && !want[cr.ID] {
				continue
			}
			o := object{"correlationid": u64(cr.ID), "name": cr.Name, "description": cr.Description, "status": istr(cr.Status)}
			if p.SelectFilter.Given() {
				conds := make([]object, len(cr.Conditions))
				for i, x := range cr.Conditions {
					conds[i] = correlationCondObject(x)
				}
				f := object{"evaltype": istr(cr.EvalType), "formula": cr.Formula, "conditions": conds, "eval_formula": corrEvalFormula(cr)}
				for k := range f {
					if !p.SelectFilter.Value.has(k) {
						delete(f, k)
					}
				}
				o["filter"] = f
			}
			if p.SelectOperations.Given() {
				ops := make([]object, len(cr.Operations))
				for i, t := range cr.Operations {
					ops[i] = object{"type": istr(t)}
				}
				o["operations"] = ops
			}
			objs = append(objs, o)
		}
	}
	g := validGet(&p.validQuery, &p.validPage, p.PreserveKeys)
	return g.applySchema(objs, &correlationSchema, correlationNames.sort...)
}
