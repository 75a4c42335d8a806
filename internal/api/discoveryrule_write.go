package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// Low-level discovery's write side for rules (Zabbix 6.0's
// discoveryrule.create/update/delete/copy), checked and worded as
// 6.0.14 answers (internal/conformance case lld). A rule is an item
// with its discovery configuration (catalog.LLDRule): the item members
// are item.create's and item.update's (itemParams), the rest its
// lifetime, filter, LLD macro paths and overrides. A template's rule
// reaches the hosts linked to it as its items do (the catalog).

func (s *Server) registerLLDWrite(w *configWriter) {
	s.methods["discoveryrule.create"] = &method{role: RoleAdmin, call: w.discoveryruleCreate}
	s.methods["discoveryrule.update"] = &method{role: RoleAdmin, call: w.discoveryruleUpdate}
	s.methods["discoveryrule.delete"] = &method{role: RoleAdmin, call: w.discoveryruleDelete}
	s.methods["discoveryrule.copy"] = &method{role: RoleAdmin, call: w.discoveryruleCopy}
	s.methods["itemprototype.create"] = &method{role: RoleAdmin, call: w.itemprototypeCreate}
	s.methods["itemprototype.update"] = &method{role: RoleAdmin, call: w.itemprototypeUpdate}
	s.methods["itemprototype.delete"] = &method{role: RoleAdmin, call: w.itemprototypeDelete}
	s.methods["triggerprototype.create"] = &method{role: RoleAdmin, call: w.triggerprototypeCreate}
	s.methods["triggerprototype.update"] = &method{role: RoleAdmin, call: w.triggerprototypeUpdate}
	s.methods["triggerprototype.delete"] = &method{role: RoleAdmin, call: w.triggerprototypeDelete}
	s.methods["hostprototype.create"] = &method{role: RoleAdmin, call: w.hostprototypeCreate}
	s.methods["hostprototype.update"] = &method{role: RoleAdmin, call: w.hostprototypeUpdate}
	s.methods["hostprototype.delete"] = &method{role: RoleAdmin, call: w.hostprototypeDelete}
}

// ruleParams are a discovery rule object: an item's members and the
// rule's own.
type ruleParams struct {
	itemParams
	Lifetime   opt[string]          `json:"lifetime" as:"timeunit"`
	Filter     opt[json.RawMessage] `json:"filter" as:"json"`
	MacroPaths opt[json.RawMessage] `json:"lld_macro_paths" as:"json"`
	Overrides  opt[json.RawMessage] `json:"overrides" as:"json"`
}

// ruleTypes60 are the types 6.0 takes for a rule (no calculated, SNMP
// trap or web items; recorded from 6.0.14).
const ruleTypes60 = "0, 2, 3, 5, 7, 10, 11, 12, 13, 14, 16, 18, 19, 20, 21"

// jsonInt reads a number or a numeric string, as PHP does.
type jsonInt int

func (n *jsonInt) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	v, err := strconv.Atoi(string(b))
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	*n = jsonInt(v)
	return nil
}

type apiCondition struct {
	Macro     string   `json:"macro"`
	Value     string   `json:"value"`
	Operator  *jsonInt `json:"operator"`
	FormulaID string   `json:"formulaid"`
}

type apiFilter struct {
	EvalType   *jsonInt       `json:"evaltype"`
	Formula    string         `json:"formula"`
	Conditions []apiCondition `json:"conditions"`
}

type apiMacroPath struct {
	Macro *string `json:"lld_macro"`
	Path  *string `json:"path"`
}

type apiTag struct {
	Tag   string `json:"tag"`
	Value string `json:"value"`
}

type apiOperation struct {
	Object   *jsonInt `json:"operationobject"`
	Operator jsonInt  `json:"operator"`
	Value    string   `json:"value"`
	Status   *struct {
		V jsonInt `json:"status"`
	} `json:"opstatus"`
	Discover *struct {
		V jsonInt `json:"discover"`
	} `json:"opdiscover"`
	Period *struct {
		V string `json:"delay"`
	} `json:"opperiod"`
	History *struct {
		V string `json:"history"`
	} `json:"ophistory"`
	Trends *struct {
		V string `json:"trends"`
	} `json:"optrends"`
	Severity *struct {
		V jsonInt `json:"severity"`
	} `json:"opseverity"`
	Tags      []apiTag `json:"optag"`
	Templates []struct {
		ID json.Number `json:"templateid"`
	} `json:"optemplate"`
	Inventory *struct {
		V jsonInt `json:"inventory_mode"`
	} `json:"opinventory"`
}

type apiOverride struct {
	Name       *string        `json:"name"`
	Step       *jsonInt       `json:"step"`
	Stop       jsonInt        `json:"stop"`
	Filter     *apiFilter     `json:"filter"`
	Operations []apiOperation `json:"operations"`
}

var lldMacroSyntax = regexp.MustCompile(`^\{#[A-Z0-9_.]+\}$`)

// filterOf checks a filter as 6.0 does for rule name and returns it
// in the catalog's form.
func filterOf(raw json.RawMessage, name string) (catalog.LLDFilter, error) {
	var f apiFilter
	var out catalog.LLDFilter
	if err := json.Unmarshal(raw, &f); err != nil {
		return out, errApp(`Incorrect filter for discovery rule "%s".`, name)
	}
	if f.EvalType != nil {
		out.EvalType = int(*f.EvalType)
	}
	if out.EvalType < catalog.EvalAndOr || out.EvalType > catalog.EvalCustom {
		return out, errApp(`Incorrect type of calculation for discovery rule "%s".`, name)
	}
	for i, c := range f.Conditions {
		if !lldMacroSyntax.MatchString(c.Macro) {
			return out, errApp(`Incorrect filter condition macro for discovery rule "%s".`, name)
		}
		op := catalog.OpMatches
		if c.Operator != nil {
			op = int(*c.Operator)
		}
		switch op {
		case catalog.OpMatches, catalog.OpNotMatches, catalog.OpExists, catalog.OpNotExists:
		default:
			return out, errApp(`Incorrect filter condition operator for discovery rule "%s".`, name)
		}
		id := c.FormulaID
		if out.EvalType != catalog.EvalCustom || id == "" {
			id = formulaLetter(i)
		}
		out.Conditions = append(out.Conditions, catalog.LLDCondition{Macro: c.Macro, Value: c.Value, Operator: op, FormulaID: id})
	}
	if out.EvalType == catalog.EvalCustom {
		if f.Formula == "" {
			return out, errApp(`Formula missing for discovery rule "%s".`, name)
		}
		for _, c := range out.Conditions {
			if !strings.Contains(f.Formula, c.FormulaID) {
				return out, errApp(`Condition "%s" is not used in formula "%s" for discovery rule "%s".`, c.FormulaID, f.Formula, name)
			}
		}
		out.Formula = f.Formula
	}
	return out, nil
}

// formulaLetter is the i-th condition's formula ID: A, B, ..., Z, AA.
func formulaLetter(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

// lifetimeCheck checks a rule's lifetime as 6.0 does.
func lifetimeCheck(v string) error {
	if strings.Contains(v, "{$") {
		return nil
	}
	secs, err := delay.ParseSeconds(v)
	if err != nil {
		return errParams(`Incorrect value for field "lifetime": a time unit is expected.`)
	}
	if secs != 0 && (secs < 3600 || secs > 788400000) {
		return errParams(`Incorrect value for field "lifetime": value must be one of 0, 3600-788400000.`)
	}
	return nil
}

// apply sets the rule members p gives on l (i: the object's index,
// name: the rule's name for 6.0's messages).
func (p *ruleParams) apply(snap *catalog.Snapshot, i int, name string, l *catalog.LLDRule) error {
	if p.Lifetime.Set {
		if err := lifetimeCheck(p.Lifetime.Value); err != nil {
			return err
		}
		l.Lifetime = p.Lifetime.Value
	}
	if p.Filter.Set {
		f, err := filterOf(p.Filter.Value, name)
		if err != nil {
			return err
		}
		l.Filter = f
	}
	if p.MacroPaths.Set {
		var mps []apiMacroPath
		if err := json.Unmarshal(p.MacroPaths.Value, &mps); err != nil {
			return errParams(`Invalid parameter "/%d/lld_macro_paths": an array is expected.`, i+1)
		}
		l.MacroPaths = nil
		seen := map[string]bool{}
		for j, mp := range mps {
			at := fmt.Sprintf("/%d/lld_macro_paths/%d", i+1, j+1)
			switch {
			case mp.Macro == nil:
				return errParams(`Invalid parameter "%s": the parameter "lld_macro" is missing.`, at)
			case mp.Path == nil:
				return errParams(`Invalid parameter "%s": the parameter "path" is missing.`, at)
			case !lldMacroSyntax.MatchString(*mp.Macro):
				return errParams(`Invalid parameter "%s/lld_macro": a low-level discovery macro is expected.`, at)
			case seen[*mp.Macro]:
				return errParams(`Invalid parameter "%s/lld_macro": value "%s" already exists.`, at, *mp.Macro)
			case *mp.Path == "":
				return errParams(`Invalid parameter "%s/path": cannot be empty.`, at)
			}
			seen[*mp.Macro] = true
			l.MacroPaths = append(l.MacroPaths, catalog.LLDMacroPath{Macro: *mp.Macro, Path: *mp.Path})
		}
	}
	if p.Overrides.Set {
		var ovs []apiOverride
		if err := json.Unmarshal(p.Overrides.Value, &ovs); err != nil {
			return errParams(`Invalid parameter "/%d/overrides": an array is expected.`, i+1)
		}
		l.Overrides = nil
		for j, ov := range ovs {
			at := fmt.Sprintf("/%d/overrides/%d", i+1, j+1)
			switch {
			case ov.Name == nil:
				return errParams(`Invalid parameter "%s": the parameter "name" is missing.`, at)
			case ov.Step == nil:
				return errParams(`Invalid parameter "%s": the parameter "step" is missing.`, at)
			case *ov.Name == "":
				return errParams(`Invalid parameter "%s/name": cannot be empty.`, at)
			}
			o := catalog.LLDOverride{Name: *ov.Name, Step: int(*ov.Step), Stop: int(ov.Stop)}
			if ov.Filter != nil {
				raw, _ := json.Marshal(ov.Filter)
				f, err := filterOf(raw, name)
				if err != nil {
					return err
				}
				o.Filter = f
			}
			for k, op := range ov.Operations {
				oat := fmt.Sprintf("%s/operations/%d", at, k+1)
				if op.Object == nil {
					return errParams(`Invalid parameter "%s": the parameter "operationobject" is missing.`, oat)
				}
				if *op.Object < catalog.OpObjectItem || *op.Object > catalog.OpObjectHost {
					return errParams(`Invalid parameter "%s/operationobject": value must be one of 0, 1, 2, 3.`, oat)
				}
				lo := catalog.LLDOperation{Object: int(*op.Object), Operator: int(op.Operator), Value: op.Value}
				num := func(v jsonInt) *int { n := int(v); return &n }
				if op.Status != nil {
					lo.Status = num(op.Status.V)
				}
				if op.Discover != nil {
					lo.Discover = num(op.Discover.V)
				}
				if op.Severity != nil {
					lo.Severity = num(op.Severity.V)
				}
				if op.Inventory != nil {
					lo.Inventory = num(op.Inventory.V)
				}
				if op.Period != nil {
					lo.Delay = &op.Period.V
				}
				if op.History != nil {
					lo.History = &op.History.V
				}
				if op.Trends != nil {
					lo.Trends = &op.Trends.V
				}
				for _, t := range op.Tags {
					lo.Tags = append(lo.Tags, catalog.Tag(t))
				}
				for _, t := range op.Templates {
					id, _ := strconv.ParseUint(t.ID.String(), 10, 64)
					h := snap.Template(id)
					if h == nil {
						return errNoPermissionsParams
					}
					lo.Templates = append(lo.Templates, h.Host)
				}
				o.Operations = append(o.Operations, lo)
			}
			l.Overrides = append(l.Overrides, o)
		}
	}
	return nil
}

func (w *configWriter) discoveryruleCreate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return idResult("itemids", nil), nil // as 6.0: nothing created
	}
	var ps []ruleParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	items := make([]catalog.NewItem, len(ps))
	for i := range ps {
		p := &ps[i]
		p.InventoryLink = opt[int64]{} // a rule fills no inventory field: taken and ignored
		// A rule's values are text whatever value_type says (recorded
		// from 6.0.14: value_type 3 is taken and stored as 4).
		p.ValueType = given(int64(4))
		if p.Type.Given() && (p.Type.Value == int64(catalog.Calculated) || p.Type.Value == 17 || p.Type.Value == 9) {
			return nil, oneOf(i, "type", ruleTypes60)
		}
		if p.Type.Given() && p.checkType(i) != nil {
			return nil, oneOf(i, "type", ruleTypes60)
		}
		if err := p.createChecks(i, snap, a); err != nil {
			return nil, err
		}
		if err := p.typeRules(i, catalog.ItemType(p.Type.Value), false, false); err != nil {
			return nil, err
		}
		l := &catalog.LLDRule{Lifetime: catalog.DefaultLifetime}
		if err := p.apply(snap, i, p.Name.Value, l); err != nil {
			return nil, err
		}
		steps, err := p.steps(i)
		if err != nil {
			return nil, err
		}
		items[i] = p.newItem(steps)
		items[i].LLD = l
	}
	var ids []uint64
	hosts := make([]uint64, len(items))
	for i, it := range items {
		hosts[i] = it.HostID
	}
	err = w.edit(ctx, c, "itemid", hostsWritable(hosts), func(e *catalog.Edit) (err error) {
		ids, err = e.CreateItems(items)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}

func (w *configWriter) discoveryruleUpdate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return idResult("itemids", nil), nil
	}
	var ps []ruleParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	ups := make([]catalog.ItemUpdate, len(ps))
	ids := make([]uint64, len(ps))
	rules := make([]*catalog.LLDRule, len(ps))
	for i := range ps {
		p := &ps[i]
		p.InventoryLink = opt[int64]{} // as in create
		cur := snap.AnyItem(p.ItemID.Value)
		if !p.ItemID.Set || cur == nil || cur.Ext().LLD == nil {
			return nil, errNoPermissions
		}
		p.ValueType = opt[int64]{}
		lifetime := p.Lifetime
		if cur.TemplateID != 0 {
			p.dropTemplated(cur.Type)
			p.Filter, p.MacroPaths, p.Overrides = opt[json.RawMessage]{}, opt[json.RawMessage]{}, opt[json.RawMessage]{}
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		typ := cur.Type
		if p.Type.Given() {
			typ = catalog.ItemType(p.Type.Value)
		}
		if err := p.typeRules(i, typ, cur.MasterItemID != 0, cur.Ext().Params != ""); err != nil {
			return nil, err
		}
		if err := p.updateChecks(cur); err != nil {
			return nil, err
		}
		name := cur.Name
		if p.Name.Set {
			name = p.Name.Value
		}
		l := cur.Ext().LLD.Clone()
		p.Lifetime = lifetime
		if err := p.apply(snap, i, name, l); err != nil {
			return nil, err
		}
		if p.Lifetime.Set || p.Filter.Set || p.MacroPaths.Set || p.Overrides.Set {
			rules[i] = l
		}
		steps, err := p.steps(i)
		if err != nil {
			return nil, err
		}
		ups[i], ids[i] = p.update(snap, steps), p.ItemID.Value
	}
	err := w.edit(ctx, c, "itemid", itemsWritable(ids), func(e *catalog.Edit) error {
		if err := e.UpdateItems(ups); err != nil {
			return err
		}
		for i, l := range rules {
			if l == nil {
				continue
			}
			var err error
			if r := e.Rule(ids[i]); r != nil && r.TemplateID != 0 {
				err = e.SetRuleLifetime(ids[i], l.Lifetime)
			} else {
				// Keep the prototypes as the Edit has them.
				if r != nil {
					l.ItemPrototypes, l.TriggerPrototypes, l.HostPrototypes = r.Ext().LLD.ItemPrototypes, r.Ext().LLD.TriggerPrototypes, r.Ext().LLD.HostPrototypes
				}
				err = e.UpdateRule(ids[i], l)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}

func (w *configWriter) discoveryruleDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	for _, id := range ids {
		r := snap.AnyItem(id)
		switch {
		case r == nil || r.Ext().LLD == nil:
			return nil, errNoPermissions
		case r.TemplateID != 0:
			// Recorded from 6.0.14.
			return nil, errParams("Cannot delete templated items.")
		}
	}
	if err := w.edit(ctx, c, "itemid", itemsWritable(ids), func(e *catalog.Edit) error { return e.DeleteItems(ids) }); err != nil {
		return nil, err
	}
	return idResult("ruleids", ids), nil
}

// ruleCopyParams are discoveryrule.copy's parameters.
type ruleCopyParams struct {
	DiscoveryIDs opt[ids] `json:"discoveryids"`
	HostIDs      opt[ids] `json:"hostids"`
}

func (w *configWriter) discoveryruleCopy(ctx context.Context, c *call) (any, error) {
	var p ruleCopyParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	if len(p.DiscoveryIDs.Value) == 0 {
		return nil, errParams("No discovery rule IDs given.")
	}
	if len(p.HostIDs.Value) == 0 {
		return nil, errParams("No host IDs given.")
	}
	snap := w.cat.Snapshot()
	for _, id := range p.DiscoveryIDs.Value {
		if r := snap.AnyItem(id); r == nil || r.Ext().LLD == nil {
			return nil, errNoPermissions
		}
	}
	err := w.edit(ctx, c, "itemid", hostsWritable(p.HostIDs.Value), func(e *catalog.Edit) error {
		for _, h := range p.HostIDs.Value {
			for _, id := range p.DiscoveryIDs.Value {
				if _, err := e.CopyRule(id, h); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return true, nil
}
