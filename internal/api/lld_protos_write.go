package api

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
)

// Low-level discovery's write side for prototypes (Zabbix 6.0's
// itemprototype.*, triggerprototype.* and hostprototype.* create,
// update and delete), checked and worded as 6.0.14 answers
// (internal/conformance case lld). A prototype is part of its rule's
// configuration: each call changes the rule (catalog.Edit.UpdateRule),
// which the catalog hands on to the rule's copies on linked hosts.

// protoParams are an item prototype object: an item's members, its
// rule and discover.
type protoParams struct {
	itemParams
	RuleID   opt[uint64] `json:"ruleid"`
	Discover opt[int64]  `json:"discover"`
}

// hostKeyTaken reports whether key is an item's or an item prototype's
// of host h (6.0's keys are unique across both).
func hostKeyTaken(h *catalog.Host, key string, skip uint64) bool {
	for _, it := range h.Items() {
		if it.Key == key && it.ID != skip {
			return true
		}
		if it.Ext().LLD != nil {
			for _, p := range it.Ext().LLD.ItemPrototypes {
				if p.Item.Key == key && p.ID != skip {
					return true
				}
			}
		}
	}
	return false
}

// protoSpec completes an item prototype's spec from ni (its master and
// value map by name, as a prototype keeps them).
func protoSpec(snap *catalog.Snapshot, rule *catalog.Item, ni catalog.NewItem, p *catalog.ItemPrototype) {
	p.Item = ni.ItemSpec
	if ni.MasterItemID != 0 {
		p.MasterKey = ""
		for _, q := range rule.Ext().LLD.ItemPrototypes {
			if q.ID == ni.MasterItemID {
				p.MasterKey = q.Item.Key
			}
		}
		if m := snap.AnyItem(ni.MasterItemID); m != nil {
			p.MasterKey = m.Key
		}
	}
	if ni.ValueMapID != 0 {
		if vm := snap.ValueMap(ni.ValueMapID); vm != nil {
			p.ValueMap = vm.Name
		}
	}
}

func (w *configWriter) itemprototypeCreate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return idResult("itemids", nil), nil // as 6.0: nothing created
	}
	var ps []protoParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	type made struct {
		rule  uint64
		proto catalog.ItemPrototype
	}
	out := make([]made, len(ps))
	for i := range ps {
		p := &ps[i]
		if !p.RuleID.Set {
			return nil, errIncorrectArguments
		}
		// A prototype's interval and key may hold LLD macros: checked
		// once expanded, on the discovered item.
		delaySet := p.Delay
		if strings.Contains(p.Delay.Value, "{") {
			p.Delay = given("1m")
		}
		if err := p.createChecks(i, snap, a); err != nil {
			return nil, err
		}
		p.Delay = delaySet
		rule := snap.AnyItem(p.RuleID.Value)
		if rule == nil || rule.Ext().LLD == nil || rule.HostID != p.HostID.Value {
			return nil, errNoPermissionsParams
		}
		if p.Discover.Given() && p.Discover.Value != 0 && p.Discover.Value != 1 {
			return nil, oneOf(i, "discover", "0, 1")
		}
		if err := p.typeRules(i, catalog.ItemType(p.Type.Value), false, false); err != nil {
			return nil, err
		}
		taken := hostKeyTaken(rule.Host, p.Key.Value, 0)
		for _, q := range out[:i] {
			taken = taken || q.rule != 0 && q.proto.Item.Key == p.Key.Value
		}
		if taken {
			return nil, errParams(`Item with key "%s" already exists on "%s".`, p.Key.Value, rule.Host.Host)
		}
		steps, err := p.steps(i)
		if err != nil {
			return nil, err
		}
		ni := p.newItem(steps)
		proto := catalog.ItemPrototype{Discover: int(p.Discover.Value)}
		protoSpec(snap, rule, ni, &proto)
		out[i] = made{rule.ID, proto}
	}
	var ids []uint64
	rules := make([]uint64, len(out))
	for i, m := range out {
		rules[i] = m.rule
	}
	err = w.edit(ctx, c, "itemid", itemsWritable(rules), func(e *catalog.Edit) error {
		for _, m := range out {
			r := e.Rule(m.rule)
			if r == nil {
				return errNoPermissionsParams
			}
			l := r.Ext().LLD.Clone()
			l.ItemPrototypes = append(l.ItemPrototypes, m.proto)
			if err := e.UpdateRule(m.rule, l); err != nil {
				return err
			}
			r = e.Rule(m.rule)
			ids = append(ids, r.Ext().LLD.ItemPrototypes[len(r.Ext().LLD.ItemPrototypes)-1].ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}

func (w *configWriter) itemprototypeUpdate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return idResult("itemids", nil), nil
	}
	var ps []protoParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	ids := make([]uint64, len(ps))
	ruleIDs := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		proto, rule := snap.ItemPrototype(p.ItemID.Value)
		if !p.ItemID.Set || proto == nil {
			return nil, errNoPermissions
		}
		if proto.TemplateID != 0 {
			p.dropTemplated(catalog.PrototypeItem(rule, proto).Type)
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		if p.Discover.Given() && p.Discover.Value != 0 && p.Discover.Value != 1 {
			return nil, oneOf(i, "discover", "0, 1")
		}
		if p.Key.Set && hostKeyTaken(rule.Host, p.Key.Value, proto.ID) {
			return nil, errParams(`Item with key "%s" already exists on "%s".`, p.Key.Value, rule.Host.Host)
		}
		ids[i], ruleIDs[i] = proto.ID, rule.ID
	}
	err := w.edit(ctx, c, "itemid", itemsWritable(ruleIDs), func(e *catalog.Edit) error {
		for i := range ps {
			p := &ps[i]
			r := e.Rule(ruleIDs[i])
			if r == nil {
				return errNoPermissions
			}
			l := r.Ext().LLD.Clone()
			j := slices.IndexFunc(l.ItemPrototypes, func(q catalog.ItemPrototype) bool { return q.ID == ids[i] })
			if j < 0 {
				return errNoPermissions
			}
			q := &l.ItemPrototypes[j]
			set := func(dst *string, o opt[string]) {
				if o.Set {
					*dst = o.Value
				}
			}
			is := &q.Item
			set(&is.Name, p.Name)
			set(&is.Key, p.Key)
			set(&is.Units, p.Units)
			set(&is.Delay, p.Delay)
			set(&is.History, p.History)
			set(&is.Trends, p.Trends)
			set(&is.Timeout, p.Timeout)
			set(&is.Params, p.Params)
			set(&is.Description, p.Description)
			set(&is.SNMPOID, p.SNMPOID)
			if p.Type.Given() {
				is.Type = strconv.FormatInt(p.Type.Value, 10)
			}
			if p.ValueType.Given() {
				is.ValueType = strconv.FormatInt(p.ValueType.Value, 10)
			}
			if p.Status.Given() {
				is.Status = itemStatus(p.Status.Value)
			}
			if p.Discover.Given() {
				q.Discover = int(p.Discover.Value)
			}
			if p.Tags.Set {
				is.Tags = nil
				for _, t := range p.Tags.Value {
					is.Tags = append(is.Tags, catalog.TagSpec(t))
				}
			}
			if p.Preprocessing.Set {
				steps, err := p.steps(i)
				if err != nil {
					return err
				}
				is.Preprocessing = *steps
			}
			if p.httpParams.any() {
				p.httpParams.apply(&is.HTTPSpec)
			}
			if err := e.UpdateRule(ruleIDs[i], l); err != nil {
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

// protoRules finds the prototypes ids name in the snapshot's rules
// (find: the prototype's index in a rule, -1 if none, and its template
// ID) and returns the rules concerned; an unknown ID is refused, and a
// copy's prototype with templated's error for it (the prototype's index
// j in rule r, its ID's index i in ids).
func protoRules(snap *catalog.Snapshot, ids []uint64, find func(l *catalog.LLDRule, id uint64) (int, uint64), templated func(r *catalog.Item, j, i int) error) ([]uint64, error) {
	var rules []uint64
	for i, id := range ids {
		found := false
		for _, r := range snap.Rules() {
			if j, tmpl := find(r.Ext().LLD, id); j >= 0 {
				if tmpl != 0 {
					return nil, templated(r, j, i)
				}
				found = true
				if !slices.Contains(rules, r.ID) {
					rules = append(rules, r.ID)
				}
			}
		}
		if !found {
			return nil, errNoPermissions
		}
	}
	return rules, nil
}

func (w *configWriter) itemprototypeDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	rules, err := protoRules(w.cat.Snapshot(), ids, func(l *catalog.LLDRule, id uint64) (int, uint64) {
		j := slices.IndexFunc(l.ItemPrototypes, func(q catalog.ItemPrototype) bool { return q.ID == id })
		if j < 0 {
			return -1, 0
		}
		return j, l.ItemPrototypes[j].TemplateID
	}, func(*catalog.Item, int, int) error {
		return errParams("Cannot delete templated item prototype.") // recorded from 6.0.14
	})
	if err != nil {
		return nil, err
	}
	err = w.edit(ctx, c, "itemid", itemsWritable(rules), func(e *catalog.Edit) error {
		for _, rid := range rules {
			l := e.Rule(rid).Ext().LLD.Clone()
			var gone []string
			l.ItemPrototypes = slices.DeleteFunc(l.ItemPrototypes, func(q catalog.ItemPrototype) bool {
				if slices.Contains(ids, q.ID) {
					gone = append(gone, q.Item.Key)
					return true
				}
				return false
			})
			// Prototypes depending on a deleted one and trigger
			// prototypes over one go with it, as in 6.0.
			for changed := true; changed; {
				changed = false
				l.ItemPrototypes = slices.DeleteFunc(l.ItemPrototypes, func(q catalog.ItemPrototype) bool {
					if q.MasterKey != "" && slices.Contains(gone, q.MasterKey) {
						gone, changed = append(gone, q.Item.Key), true
						return true
					}
					return false
				})
			}
			l.TriggerPrototypes = slices.DeleteFunc(l.TriggerPrototypes, func(t catalog.TriggerPrototype) bool {
				for _, k := range gone {
					if exprUsesKey(t.Fields.Expression, k) || exprUsesKey(t.Fields.RecoveryExpression, k) {
						return true
					}
				}
				return false
			})
			if err := e.UpdateRule(rid, l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// 6.0.14 names the result "prototypeids".
	return idResult("prototypeids", ids), nil
}

// exprUsesKey reports whether a trigger expression reads item key.
func exprUsesKey(s, key string) bool {
	if s == "" {
		return false
	}
	x, err := expr.Parse(s)
	if err != nil {
		return strings.Contains(s, "/"+key+")") || strings.Contains(s, "/"+key+",")
	}
	for _, r := range x.ItemRefs() {
		if r.Key == key {
			return true
		}
	}
	return false
}
