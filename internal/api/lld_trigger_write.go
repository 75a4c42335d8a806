package api

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
)

// Trigger and host prototypes' write side (see lld_protos_write.go).

// triggerProtoParams are a trigger prototype object.
type triggerProtoParams struct {
	triggerParams
	Discover opt[int64] `json:"discover"`
}

// triggerProtoOf finds trigger prototype id in the snapshot's rules.
func triggerProtoOf(snap *catalog.Snapshot, id uint64) (*catalog.TriggerPrototype, *catalog.Item) {
	for _, r := range snap.Rules() {
		for i := range r.Ext().LLD.TriggerPrototypes {
			if r.Ext().LLD.TriggerPrototypes[i].ID == id {
				return &r.Ext().LLD.TriggerPrototypes[i], r
			}
		}
	}
	return nil, nil
}

// protoRuleOf finds the rule whose item prototypes an expression reads,
// refusing a key that is neither an item's nor a prototype's of its
// host, and an expression that reads no prototype, as 6.0 does.
func protoRuleOf(snap *catalog.Snapshot, description, expression string) (*catalog.Item, error) {
	x, err := expr.Parse(expression)
	if err != nil {
		return nil, errParams(`Invalid parameter "/1/expression": incorrect trigger expression.`)
	}
	var rule *catalog.Item
	for _, ref := range x.ItemRefs() {
		h := snap.Host(ref.Host)
		if h == nil {
			h = snap.TemplateByName(ref.Host)
		}
		if h == nil {
			return nil, errParams(`Incorrect trigger expression. Host "%s" does not exist or you have no access to this host.`, ref.Host)
		}
		found := false
		for _, it := range h.Items() {
			if it.Key == ref.Key && it.Ext().LLD == nil {
				found = true
			}
			if it.Ext().LLD != nil {
				for _, p := range it.Ext().LLD.ItemPrototypes {
					if p.Item.Key == ref.Key {
						found = true
						if rule == nil {
							rule = it
						}
					}
				}
			}
		}
		if !found {
			return nil, errParams(`Incorrect item key "%s" provided for trigger expression on "%s".`, ref.Key, h.Host)
		}
	}
	if rule == nil {
		return nil, errParams(`Trigger prototype "%s" must contain at least one item prototype.`, description)
	}
	return rule, nil
}

// depRefs turns dependencies by ID into references by name and
// expression, as a prototype keeps them.
func depRefs(snap *catalog.Snapshot, deps []uint64) ([]catalog.TriggerRefSpec, error) {
	var out []catalog.TriggerRefSpec
	for _, d := range deps {
		if tp, _ := triggerProtoOf(snap, d); tp != nil {
			out = append(out, catalog.TriggerRefSpec{Name: tp.Fields.Description, Expression: tp.Fields.Expression, RecoveryExpression: tp.Fields.RecoveryExpression})
			continue
		}
		t := snap.Trigger(d)
		if t == nil {
			t = snap.TemplateTrigger(d)
		}
		if t == nil {
			return nil, errNoPermissionsParams
		}
		out = append(out, catalog.TriggerRefSpec{Name: t.Description, Expression: t.Expression, RecoveryExpression: t.RecoveryExpression})
	}
	return out, nil
}

func (w *configWriter) triggerprototypeCreate(ctx context.Context, c *call) (any, error) {
	var ps []triggerProtoParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	rules := make([]uint64, len(ps))
	protos := make([]catalog.TriggerPrototype, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case !p.Description.Set:
			return nil, missing(i, "description")
		case !p.Expression.Set:
			return nil, missing(i, "expression")
		}
		if err := p.check(i); err != nil {
			return nil, err
		}
		if p.Discover.Given() && p.Discover.Value != 0 && p.Discover.Value != 1 {
			return nil, oneOf(i, "discover", "0, 1")
		}
		rule, err := protoRuleOf(snap, p.Description.Value, p.Expression.Value)
		if err != nil {
			return nil, err
		}
		deps, err := depRefs(snap, p.Dependencies.Value)
		if err != nil {
			return nil, err
		}
		rules[i] = rule.ID
		protos[i] = catalog.TriggerPrototype{Discover: int(p.Discover.Value), Dependencies: deps, Fields: catalog.TriggerFields{
			Description: p.Description.Value, Expression: p.Expression.Value,
			RecoveryMode: catalog.RecoveryMode(p.RecoveryMode.Value), RecoveryExpression: p.RecoveryExpression.Value,
			Priority: uint8(p.Priority.Value), Enabled: p.Status.Value == 0, Multiple: p.Type.Value == 1, ManualClose: p.ManualClose.Value == 1,
			Opdata: p.Opdata.Value, Comments: p.Comments.Value, URL: p.URL.Value, EventName: p.EventName.Value,
			CorrelationMode: uint8(p.CorrelationMode.Value), CorrelationTag: p.CorrelationTag.Value, Tags: p.Tags.Value,
		}}
	}
	var ids []uint64
	err := w.edit(ctx, c, "triggerid", itemsWritable(rules), func(e *catalog.Edit) error {
		for i, rid := range rules {
			r := e.Rule(rid)
			if r == nil {
				return errNoPermissions
			}
			l := r.Ext().LLD.Clone()
			l.TriggerPrototypes = append(l.TriggerPrototypes, protos[i])
			if err := e.UpdateRule(rid, l); err != nil {
				return err
			}
			tps := e.Rule(rid).Ext().LLD.TriggerPrototypes
			ids = append(ids, tps[len(tps)-1].ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("triggerids", ids), nil
}

func (w *configWriter) triggerprototypeUpdate(ctx context.Context, c *call) (any, error) {
	var ps []triggerProtoParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	ids := make([]uint64, len(ps))
	rules := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		if !p.TriggerID.Set {
			return nil, missing(i, "triggerid")
		}
		tp, rule := triggerProtoOf(snap, p.TriggerID.Value)
		if tp == nil {
			return nil, errNoPermissions
		}
		if err := p.check(i); err != nil {
			return nil, err
		}
		if p.Discover.Given() && p.Discover.Value != 0 && p.Discover.Value != 1 {
			return nil, oneOf(i, "discover", "0, 1")
		}
		if f := p.templatedProtoField(); tp.TemplateID != 0 && f != "" {
			name := tp.Fields.Description
			if p.Description.Set {
				name = p.Description.Value
			}
			return nil, errParams(`Cannot update "%s" for templated trigger prototype "%s".`, f, name) // lld_inherited.go
		}
		ids[i], rules[i] = tp.ID, rule.ID
	}
	err := w.edit(ctx, c, "triggerid", itemsWritable(rules), func(e *catalog.Edit) error {
		for i := range ps {
			p := &ps[i]
			l := e.Rule(rules[i]).Ext().LLD.Clone()
			j := slices.IndexFunc(l.TriggerPrototypes, func(t catalog.TriggerPrototype) bool { return t.ID == ids[i] })
			if j < 0 {
				return errNoPermissions
			}
			t := &l.TriggerPrototypes[j]
			f := &t.Fields
			set := func(dst *string, o opt[string]) {
				if o.Set {
					*dst = o.Value
				}
			}
			set(&f.Description, p.Description)
			set(&f.Expression, p.Expression)
			set(&f.RecoveryExpression, p.RecoveryExpression)
			set(&f.Opdata, p.Opdata)
			set(&f.Comments, p.Comments)
			set(&f.URL, p.URL)
			set(&f.CorrelationTag, p.CorrelationTag)
			set(&f.EventName, p.EventName)
			if p.RecoveryMode.Given() {
				f.RecoveryMode = catalog.RecoveryMode(p.RecoveryMode.Value)
			}
			if p.Priority.Given() {
				f.Priority = uint8(p.Priority.Value)
			}
			if p.CorrelationMode.Given() {
				f.CorrelationMode = uint8(p.CorrelationMode.Value)
			}
			if p.Status.Given() {
				f.Enabled = p.Status.Value == 0
			}
			if p.Type.Given() {
				f.Multiple = p.Type.Value == 1
			}
			if p.ManualClose.Given() {
				f.ManualClose = p.ManualClose.Value == 1
			}
			if p.Discover.Given() {
				t.Discover = int(p.Discover.Value)
			}
			if p.Tags.Set {
				f.Tags = p.Tags.Value
			}
			if p.Dependencies.Set {
				deps, err := depRefs(w.cat.Snapshot(), p.Dependencies.Value)
				if err != nil {
					return err
				}
				t.Dependencies = deps
			}
			if err := e.UpdateRule(rules[i], l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("triggerids", ids), nil
}

func (w *configWriter) triggerprototypeDelete(ctx context.Context, c *call) (any, error) {
	return deletePrototypes(w, ctx, c, "triggerid", func(l *catalog.LLDRule) *[]catalog.TriggerPrototype { return &l.TriggerPrototypes },
		func(t *catalog.TriggerPrototype) (uint64, uint64) { return t.ID, t.TemplateID },
		func(t *catalog.TriggerPrototype, _ int) error {
			// Recorded from 6.0.14 (conformance case inherited_edits).
			return errParams(`Cannot delete templated trigger prototype "%s:%s".`, t.Fields.Description, t.Fields.Expression)
		})
}

// deletePrototypes serves the delete of one kind of prototype: the rules
// holding ids (protoRules' checks: each known, none a template's copy),
// then each of those rules without them, in one edit; the answer names
// the ids under idName+"s". list gives a rule's prototypes of the kind,
// ids a prototype's ID and template ID, templated the refusal of a
// template's copy (the ith ID).
func deletePrototypes[T any](w *configWriter, ctx context.Context, c *call, idName string, list func(*catalog.LLDRule) *[]T, idsOf func(*T) (id, templateID uint64),
	templated func(p *T, i int) error) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	rules, err := protoRules(w.cat.Snapshot(), ids, func(l *catalog.LLDRule, id uint64) (int, uint64) {
		ps := *list(l)
		j := slices.IndexFunc(ps, func(p T) bool { pid, _ := idsOf(&p); return pid == id })
		if j < 0 {
			return -1, 0
		}
		_, tid := idsOf(&ps[j])
		return j, tid
	}, func(r *catalog.Item, j, i int) error { return templated(&(*list(r.Ext().LLD))[j], i) })
	if err != nil {
		return nil, err
	}
	err = w.edit(ctx, c, idName, itemsWritable(rules), func(e *catalog.Edit) error {
		for _, rid := range rules {
			l := e.Rule(rid).Ext().LLD.Clone()
			*list(l) = slices.DeleteFunc(*list(l), func(p T) bool { pid, _ := idsOf(&p); return slices.Contains(ids, pid) })
			if err := e.UpdateRule(rid, l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult(idName+"s", ids), nil
}

// hostProtoParams are a host prototype object.
type hostProtoParams struct {
	HostID           opt[uint64]          `json:"hostid"`
	RuleID           opt[uint64]          `json:"ruleid"`
	Host             opt[string]          `json:"host"`
	Name             opt[string]          `json:"name"`
	Status           opt[int64]           `json:"status"`
	Discover         opt[int64]           `json:"discover"`
	InventoryMode    opt[int64]           `json:"inventory_mode"`
	CustomInterfaces opt[int64]           `json:"custom_interfaces"`
	GroupLinks       opt[json.RawMessage] `json:"groupLinks" as:"json"`
	GroupPrototypes  opt[json.RawMessage] `json:"groupPrototypes" as:"json"`
	Templates        opt[json.RawMessage] `json:"templates" as:"json"`
	Macros           opt[json.RawMessage] `json:"macros" as:"json"`
	Tags             opt[json.RawMessage] `json:"tags" as:"json"`
	Interfaces       opt[json.RawMessage] `json:"interfaces" as:"json"`
	UUID             opt[ignored]         `json:"uuid"`
}

// apply sets what p gives on hp.
func (p *hostProtoParams) apply(snap *catalog.Snapshot, i int, hp *catalog.HostPrototype) error {
	in := func(o opt[int64], lo, hi int64, name, list string) error {
		if o.Given() && (o.Value < lo || o.Value > hi) {
			return oneOf(i, name, list)
		}
		return nil
	}
	for _, err := range []error{in(p.Status, 0, 1, "status", "0, 1"), in(p.Discover, 0, 1, "discover", "0, 1"),
		in(p.InventoryMode, -1, 1, "inventory_mode", "-1, 0, 1"), in(p.CustomInterfaces, 0, 1, "custom_interfaces", "0, 1")} {
		if err != nil {
			return err
		}
	}
	if p.Host.Set {
		if p.Host.Value == "" {
			return empty(i, "host")
		}
		if !strings.Contains(p.Host.Value, "{#") {
			return errParams(`Invalid parameter "/%d/host": must contain at least one low-level discovery macro.`, i+1)
		}
		hp.Host = p.Host.Value
	}
	if p.Name.Set {
		hp.Name = p.Name.Value
	}
	if hp.Name == "" {
		hp.Name = hp.Host
	}
	if p.Status.Given() {
		hp.Status = int(p.Status.Value)
	}
	if p.Discover.Given() {
		hp.Discover = int(p.Discover.Value)
	}
	if p.InventoryMode.Given() {
		if p.InventoryMode.Value == -1 {
			hp.InventoryMode = nil
		} else {
			hp.InventoryMode = new(int(p.InventoryMode.Value))
		}
	}
	if p.CustomInterfaces.Given() {
		hp.CustomInterfaces = int(p.CustomInterfaces.Value)
	}
	type idRef struct {
		GroupID    json.Number `json:"groupid"`
		TemplateID json.Number `json:"templateid"`
	}
	if p.GroupLinks.Set {
		var l []idRef
		if err := json.Unmarshal(p.GroupLinks.Value, &l); err != nil {
			return errParams(`Invalid parameter "/%d/groupLinks": an array is expected.`, i+1)
		}
		if len(l) == 0 {
			return empty(i, "groupLinks")
		}
		hp.GroupLinks = nil
		for _, g := range l {
			id, _ := strconv.ParseUint(g.GroupID.String(), 10, 64)
			if snap.GroupByID(id) == nil {
				return errNoPermissionsParams
			}
			hp.GroupLinks = append(hp.GroupLinks, id)
		}
	}
	if p.GroupPrototypes.Set {
		var l []struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(p.GroupPrototypes.Value, &l); err != nil {
			return errParams(`Invalid parameter "/%d/groupPrototypes": an array is expected.`, i+1)
		}
		hp.GroupPrototypes = nil
		for _, g := range l {
			hp.GroupPrototypes = append(hp.GroupPrototypes, g.Name)
		}
	}
	if p.Templates.Set {
		var l []idRef
		if err := json.Unmarshal(p.Templates.Value, &l); err != nil {
			return errParams(`Invalid parameter "/%d/templates": an array is expected.`, i+1)
		}
		hp.Templates = nil
		for _, t := range l {
			id, _ := strconv.ParseUint(t.TemplateID.String(), 10, 64)
			if snap.Template(id) == nil {
				return errNoPermissionsParams
			}
			hp.Templates = append(hp.Templates, id)
		}
	}
	if p.Macros.Set {
		var l []struct {
			Macro       string  `json:"macro"`
			Value       string  `json:"value"`
			Type        jsonInt `json:"type"`
			Description string  `json:"description"`
		}
		if err := json.Unmarshal(p.Macros.Value, &l); err != nil {
			return errParams(`Invalid parameter "/%d/macros": an array is expected.`, i+1)
		}
		hp.Macros = nil
		for _, m := range l {
			hp.Macros = append(hp.Macros, catalog.HostProtoMacro{Macro: m.Macro, Value: m.Value, Type: int(m.Type), Description: m.Description})
		}
	}
	if p.Tags.Set {
		var l []apiTag
		if err := json.Unmarshal(p.Tags.Value, &l); err != nil {
			return errParams(`Invalid parameter "/%d/tags": an array is expected.`, i+1)
		}
		hp.Tags = nil
		for _, t := range l {
			hp.Tags = append(hp.Tags, catalog.Tag(t))
		}
	}
	if p.Interfaces.Set {
		var l []struct {
			Type    jsonInt           `json:"type"`
			Main    jsonInt           `json:"main"`
			UseIP   jsonInt           `json:"useip"`
			IP      string            `json:"ip"`
			DNS     string            `json:"dns"`
			Port    json.Number       `json:"port"`
			Details map[string]string `json:"details"`
		}
		if err := json.Unmarshal(p.Interfaces.Value, &l); err != nil {
			return errParams(`Invalid parameter "/%d/interfaces": an array is expected.`, i+1)
		}
		hp.Interfaces = nil
		for _, f := range l {
			hp.Interfaces = append(hp.Interfaces, catalog.HostProtoInterface{Type: int(f.Type), Main: int(f.Main), UseIP: int(f.UseIP),
				IP: f.IP, DNS: f.DNS, Port: f.Port.String(), Details: f.Details})
		}
	}
	return nil
}

// hostProtoOf finds host prototype id in the snapshot's rules.
func hostProtoOf(snap *catalog.Snapshot, id uint64) (*catalog.HostPrototype, *catalog.Item) {
	for _, r := range snap.Rules() {
		for i := range r.Ext().LLD.HostPrototypes {
			if r.Ext().LLD.HostPrototypes[i].ID == id {
				return &r.Ext().LLD.HostPrototypes[i], r
			}
		}
	}
	return nil, nil
}

func (w *configWriter) hostprototypeCreate(ctx context.Context, c *call) (any, error) {
	var ps []hostProtoParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	rules := make([]uint64, len(ps))
	protos := make([]catalog.HostPrototype, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case !p.RuleID.Set:
			return nil, missing(i, "ruleid")
		case !p.Host.Set:
			return nil, missing(i, "host")
		}
		if p.Host.Value != "" && !strings.Contains(p.Host.Value, "{#") {
			return nil, errParams(`Invalid parameter "/%d/host": must contain at least one low-level discovery macro.`, i+1)
		}
		if !p.GroupLinks.Set {
			return nil, missing(i, "groupLinks")
		}
		rule := snap.AnyItem(p.RuleID.Value)
		if rule == nil || rule.Ext().LLD == nil {
			return nil, errNoPermissionsParams
		}
		hp := catalog.HostPrototype{}
		if err := p.apply(snap, i, &hp); err != nil {
			return nil, err
		}
		dup := slices.ContainsFunc(rule.Ext().LLD.HostPrototypes, func(q catalog.HostPrototype) bool { return q.Host == hp.Host })
		for j := range i {
			dup = dup || rules[j] == rule.ID && protos[j].Host == hp.Host
		}
		if dup {
			// Recorded from 6.0.14.
			return nil, errParams(`Host prototype with host name "%s" already exists in discovery rule "%s".`, hp.Host, rule.Name)
		}
		rules[i], protos[i] = rule.ID, hp
	}
	var ids []uint64
	err := w.edit(ctx, c, "hostid", itemsWritable(rules), func(e *catalog.Edit) error {
		for i, rid := range rules {
			r := e.Rule(rid)
			if r == nil {
				return errNoPermissions
			}
			l := r.Ext().LLD.Clone()
			l.HostPrototypes = append(l.HostPrototypes, protos[i])
			if err := e.UpdateRule(rid, l); err != nil {
				return err
			}
			hps := e.Rule(rid).Ext().LLD.HostPrototypes
			ids = append(ids, hps[len(hps)-1].ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("hostids", ids), nil
}

func (w *configWriter) hostprototypeUpdate(ctx context.Context, c *call) (any, error) {
	var ps []hostProtoParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	objs := objectsOf(c.params)
	snap := w.cat.Snapshot()
	ids := make([]uint64, len(ps))
	rules := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		if !p.HostID.Set {
			return nil, missing(i, "hostid")
		}
		hp, rule := hostProtoOf(snap, p.HostID.Value)
		if hp == nil {
			return nil, errNoPermissions
		}
		if hp.TemplateID != 0 {
			// An inherited host prototype: its owner changes only its
			// status and discover, any other member refused, changed or
			// not (recorded from 6.0.14, conformance case inherited_edits).
			if f := memberOutside(objs, i, "hostid", "status", "discover"); f != "" {
				return nil, errParams(`Invalid parameter "/%d": cannot update readonly parameter "%s" of inherited object.`, i+1, f)
			}
		}
		ids[i], rules[i] = hp.ID, rule.ID
	}
	err := w.edit(ctx, c, "hostid", itemsWritable(rules), func(e *catalog.Edit) error {
		for i := range ps {
			l := e.Rule(rules[i]).Ext().LLD.Clone()
			j := slices.IndexFunc(l.HostPrototypes, func(q catalog.HostPrototype) bool { return q.ID == ids[i] })
			if j < 0 {
				return errNoPermissions
			}
			if err := ps[i].apply(w.cat.Snapshot(), i, &l.HostPrototypes[j]); err != nil {
				return err
			}
			if err := e.UpdateRule(rules[i], l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("hostids", ids), nil
}

func (w *configWriter) hostprototypeDelete(ctx context.Context, c *call) (any, error) {
	return deletePrototypes(w, ctx, c, "hostid", func(l *catalog.LLDRule) *[]catalog.HostPrototype { return &l.HostPrototypes },
		func(q *catalog.HostPrototype) (uint64, uint64) { return q.ID, q.TemplateID },
		func(_ *catalog.HostPrototype, i int) error {
			return errParams(`Invalid parameter "/%d": cannot delete templated host prototype.`, i+1) // recorded from 6.0.14
		})
}
