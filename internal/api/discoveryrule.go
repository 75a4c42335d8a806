package api

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// Low-level discovery's read side (Zabbix 6.0's discoveryrule.get,
// itemprototype.get, triggerprototype.get, hostprototype.get), shapes
// recorded from 6.0.14. Rules are catalog items with Item.LLD; their
// prototypes are part of the rule (catalog/lld.go). Reading needs read
// access to the rule's host, as for its items.

// lldGetParams are the parameters the four gets share.
type lldGetParams struct {
	getParams
	HostIDs     opt[ids]    `json:"hostids"`
	TemplateIDs opt[ids]    `json:"templateids"` // joined to hostids, as for items
	GroupIDs    opt[ids]    `json:"groupids"`
	Inherited   opt[bool]   `json:"inherited"`
	Templated   opt[bool]   `json:"templated"`
	Monitored   opt[bool]   `json:"monitored"`
	Host        opt[string] `json:"host"`
	SelectHosts sel         `json:"selectHosts"`
}

// rulesVisible returns the rules of the hosts and templates p selects
// that the caller can read, ascending by host then ID.
func (s *Server) rulesVisible(snap *catalog.Snapshot, a access, p *lldGetParams) []*catalog.Item {
	if p.TemplateIDs.Given() {
		p.HostIDs = given(append(append(ids{}, p.HostIDs.Value...), p.TemplateIDs.Value...))
	}
	var out []*catalog.Item
	visit := func(h *catalog.Host) {
		if !idsPass(p.HostIDs, h.ID) || !idsAny(p.GroupIDs, h.GroupIDs) || !a.sees(h, p.Editable.Value) ||
			p.Templated.Given() && h.IsTemplate != p.Templated.Value || p.Host.Given() && h.Host != p.Host.Value ||
			p.Monitored.Given() && (h.Enabled && !h.IsTemplate) != p.Monitored.Value {
			return
		}
		for _, r := range hostRules(h) {
			if p.Inherited.Given() && (r.TemplateID != 0) != p.Inherited.Value ||
				p.Monitored.Given() && p.Monitored.Value && !r.Enabled {
				continue
			}
			out = append(out, r)
		}
	}
	if p.HostIDs.Given() {
		for _, hid := range p.HostIDs.Value {
			if h := snap.HostOrTemplate(hid); h != nil {
				visit(h)
			}
		}
		return out
	}
	for _, h := range snap.Hosts() {
		visit(h)
	}
	for _, h := range snap.Templates() {
		visit(h)
	}
	return out
}

// discoveryruleGetParams are discoveryrule.get's parameters.
type discoveryruleGetParams struct {
	lldGetParams
	ItemIDs              opt[ids] `json:"itemids"`
	InterfaceIDs         opt[ids] `json:"interfaceids"`
	SelectItems          sel      `json:"selectItems"`
	SelectTriggers       sel      `json:"selectTriggers"`
	SelectGraphs         sel      `json:"selectGraphs"`
	SelectHostPrototypes sel      `json:"selectHostPrototypes"`
	SelectFilter         sel      `json:"selectFilter"`
	SelectLLDMacroPaths  sel      `json:"selectLLDMacroPaths"`
	SelectOverrides      sel      `json:"selectOverrides"`
	SelectPreprocessing  sel      `json:"selectPreprocessing"`
}

func (s *Server) discoveryruleGet(ctx context.Context, c *call) (any, error) {
	var p discoveryruleGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var rules []*catalog.Item
	for _, r := range s.rulesVisible(snap, a, &p.lldGetParams) {
		if idsPass(p.ItemIDs, r.ID) && idsPass(p.InterfaceIDs, r.InterfaceID) {
			rules = append(rules, r)
		}
	}
	byID := map[string]*catalog.Item{}
	for _, r := range rules {
		byID[id(r.ID)] = r
	}
	res, err := p.applySchema(s.ruleObjects(rules), &itemSchema, "itemid", "name", "key_", "delay", "type", "status")
	if err != nil || p.CountOutput.Value {
		return res, err
	}
	eachObject(res, func(o object) {
		r := byID[o["itemid"].(string)]
		if r == nil {
			return
		}
		if sl := p.SelectHosts; sl.list() {
			o["hosts"] = sl.shape([]object{hostObject(r.Host)}, "hostid")
		}
		counted := func(name string, sl sel, l []object, idField string) {
			switch {
			case sl.Count:
				o[name] = countOf(len(l))
			case sl.Set:
				o[name] = nonNil(sl.shape(p.limitSelect(l), idField))
			}
		}
		counted("items", p.SelectItems, s.itemPrototypeObjects(r), "itemid")
		counted("triggers", p.SelectTriggers, triggerPrototypeObjects(snap, r), "triggerid")
		var gps []object
		if p.SelectGraphs.Set {
			for i := range r.Ext().LLD.GraphPrototypes {
				gps = append(gps, graphProtoObject(snap, r, &r.Ext().LLD.GraphPrototypes[i]))
			}
		}
		counted("graphs", p.SelectGraphs, gps, "graphid")
		counted("hostPrototypes", p.SelectHostPrototypes, hostPrototypeObjects(r), "hostid")
		if sl := p.SelectFilter; sl.list() {
			o["filter"] = shapeOne(sl, filterObject(r.Ext().LLD.Filter))
		}
		if sl := p.SelectLLDMacroPaths; sl.list() {
			paths := make([]object, 0, len(r.Ext().LLD.MacroPaths))
			for i, mp := range r.Ext().LLD.MacroPaths {
				// Peregrine keeps no row per path: its ID is made of the
				// rule's and its place.
				pid := strconv.FormatUint(r.ID*1000+uint64(i)+1, 10)
				paths = append(paths, object{"lld_macro_pathid": pid, "lld_macro": mp.Macro, "path": mp.Path})
			}
			o["lld_macro_paths"] = sl.shape(paths, "")
		}
		if sl := p.SelectOverrides; sl.list() {
			o["overrides"] = sl.shape(overrideObjects(snap, r.Ext().LLD.Overrides), "")
		}
		if sl := p.SelectPreprocessing; sl.list() {
			o["preprocessing"] = sl.shape(preprocObjects(r.Preprocessing), "")
		}
	})
	return res, nil
}

// shapeOne shapes one object by a select's fields.
func shapeOne(sl sel, o object) object { return sl.shape([]object{o}, "")[0] }

// preprocObjects are a rule's steps as selectPreprocessing gives them.
func preprocObjects(steps []catalog.PreprocStep) []object {
	out := make([]object, 0, len(steps))
	for _, st := range steps {
		out = append(out, object{"type": strconv.Itoa(st.Type), "params": st.Params,
			"error_handler": strconv.Itoa(st.ErrorHandler), "error_handler_params": st.ErrorHandlerParams})
	}
	return out
}

// filterObject is a rule's or override's filter as 6.0 returns it:
// numbers as strings and eval_formula, the formula the evaluation type
// makes of the conditions' formulaids (recorded from 6.0.14: "A and B"
// for and, for and/or the conditions on one macro or'ed, the macros
// and'ed).
func filterObject(f catalog.LLDFilter) object {
	conds := make([]object, 0, len(f.Conditions))
	for _, c := range f.Conditions {
		conds = append(conds, object{"macro": c.Macro, "value": c.Value, "operator": strconv.Itoa(c.Operator), "formulaid": c.FormulaID})
	}
	return object{"evaltype": strconv.Itoa(f.EvalType), "formula": f.Formula, "conditions": conds, "eval_formula": lldEvalFormula(f)}
}

func lldEvalFormula(f catalog.LLDFilter) string {
	var ids []string
	for _, c := range f.Conditions {
		ids = append(ids, c.FormulaID)
	}
	switch f.EvalType {
	case catalog.EvalCustom:
		return f.Formula
	case catalog.EvalAnd:
		return strings.Join(ids, " and ")
	case catalog.EvalOr:
		return strings.Join(ids, " or ")
	}
	var order []string
	groups := map[string][]string{}
	for _, c := range f.Conditions {
		if _, ok := groups[c.Macro]; !ok {
			order = append(order, c.Macro)
		}
		groups[c.Macro] = append(groups[c.Macro], c.FormulaID)
	}
	parts := make([]string, 0, len(order))
	for _, m := range order {
		g := groups[m]
		if len(g) > 1 {
			parts = append(parts, "("+strings.Join(g, " or ")+")")
		} else {
			parts = append(parts, g[0])
		}
	}
	return strings.Join(parts, " and ")
}

// overrideObjects are a rule's overrides as 6.0 returns them: each
// operation's settings in its own object (opstatus {status}, ...).
func overrideObjects(snap *catalog.Snapshot, ovs []catalog.LLDOverride) []object {
	out := make([]object, 0, len(ovs))
	for _, ov := range ovs {
		ops := make([]object, 0, len(ov.Operations))
		for _, op := range ov.Operations {
			o := object{"operationobject": strconv.Itoa(op.Object), "operator": strconv.Itoa(op.Operator), "value": op.Value}
			num := func(name, member string, v *int) {
				if v != nil {
					o[name] = object{member: strconv.Itoa(*v)}
				}
			}
			str := func(name, member string, v *string) {
				if v != nil {
					o[name] = object{member: *v}
				}
			}
			num("opstatus", "status", op.Status)
			num("opdiscover", "discover", op.Discover)
			str("opperiod", "delay", op.Delay)
			str("ophistory", "history", op.History)
			str("optrends", "trends", op.Trends)
			num("opseverity", "severity", op.Severity)
			num("opinventory", "inventory_mode", op.Inventory)
			if len(op.Tags) > 0 {
				o["optag"] = lldTagObjects(op.Tags)
			}
			if len(op.Templates) > 0 {
				var l []object
				for _, name := range op.Templates {
					if t := snap.TemplateByName(name); t != nil {
						l = append(l, object{"templateid": id(t.ID)})
					}
				}
				o["optemplate"] = nonNil(l)
			}
			ops = append(ops, o)
		}
		out = append(out, object{"name": ov.Name, "step": strconv.Itoa(ov.Step), "stop": strconv.Itoa(ov.Stop),
			"filter": filterObject(ov.Filter), "operations": ops})
	}
	return out
}

func lldTagObjects(tags []catalog.Tag) []object {
	out := make([]object, 0, len(tags))
	for _, t := range tags {
		out = append(out, object{"tag": t.Tag, "value": t.Value})
	}
	return out
}

// itemPrototypeObjects are a rule's item prototypes as itemprototype.get
// returns them with every field: an item's fields (itemObjects of the
// prototype as an Item) with flags "2", discover and lifetime "30d" (an
// item's default; recorded from 6.0.14), without an item's values.
func (s *Server) itemPrototypeObjects(rule *catalog.Item) []object {
	ps := rule.Ext().LLD.ItemPrototypes
	if len(ps) == 0 {
		return []object{}
	}
	items := make([]catalog.Item, len(ps))
	ptrs := make([]*catalog.Item, len(ps))
	for i := range ps {
		items[i] = catalog.PrototypeItem(rule, &ps[i])
		ptrs[i] = &items[i]
	}
	raw := s.itemObjects(ptrs, sel{Set: true, All: true})
	var out []object
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != len(ps) {
		panic("BUG: item objects do not decode: " + string(raw))
	}
	for i, o := range out {
		for _, f := range []string{"lastclock", "lastns", "lastvalue", "prevvalue", "state", "error"} {
			delete(o, f)
		}
		o["flags"] = "2"
		o["discover"] = strconv.Itoa(ps[i].Discover)
		if o["timeout"] == "" {
			o["timeout"] = "3s" // as 6.0 stores it for every type
		}
		wrapLists(o)
	}
	return out
}

// triggerPrototypeObjects are a rule's trigger prototypes as
// triggerprototype.get returns them (expressions as written, as
// Peregrine's trigger.get gives them).
func triggerPrototypeObjects(snap *catalog.Snapshot, rule *catalog.Item) []object {
	out := make([]object, 0, len(rule.Ext().LLD.TriggerPrototypes))
	for i := range rule.Ext().LLD.TriggerPrototypes {
		tp := &rule.Ext().LLD.TriggerPrototypes[i]
		f := &tp.Fields
		t := catalog.Trigger{ID: tp.ID, Description: f.Description, EventName: f.EventName, Expression: f.Expression,
			RecoveryMode: f.RecoveryMode, RecoveryExpression: f.RecoveryExpression, Priority: f.Priority, Enabled: f.Enabled,
			Multiple: f.Multiple, ManualClose: f.ManualClose, Opdata: f.Opdata, Comments: f.Comments, URL: f.URL,
			CorrelationMode: f.CorrelationMode, CorrelationTag: f.CorrelationTag, TemplateID: tp.TemplateID, UUID: f.UUID}
		o := triggerObject(&t, event.Runtime{})
		delete(o, "max_check_attempts")
		o["flags"] = "2"
		o["discover"] = strconv.Itoa(tp.Discover)
		out = append(out, o)
	}
	return out
}

// hostPrototypeObjects are a rule's host prototypes (their own fields;
// recorded from 6.0.14: no flags).
func hostPrototypeObjects(rule *catalog.Item) []object {
	out := make([]object, 0, len(rule.Ext().LLD.HostPrototypes))
	for _, hp := range rule.Ext().LLD.HostPrototypes {
		inv := "-1"
		if hp.InventoryMode != nil {
			inv = strconv.Itoa(*hp.InventoryMode)
		}
		out = append(out, object{"hostid": id(hp.ID), "host": hp.Host, "name": hp.Name, "status": strconv.Itoa(hp.Status),
			"templateid": id(hp.TemplateID), "discover": strconv.Itoa(hp.Discover), "uuid": hp.UUID,
			"custom_interfaces": strconv.Itoa(hp.CustomInterfaces), "inventory_mode": inv})
	}
	return out
}

// hostProtoSelects adds hostprototype.get's selects to a prototype
// object.
func hostProtoSelects(snap *catalog.Snapshot, p *prototypeGetParams, o object, hp *catalog.HostPrototype, rule *catalog.Item) {
	if sl := p.SelectGroupLinks; sl.list() {
		links := slices.Clone(hp.GroupLinks)
		for _, name := range hp.GroupLinkNames { // an import's, by name
			if g := snap.Group(name); g != nil && !slices.Contains(links, g.ID) {
				links = append(links, g.ID)
			}
		}
		l := make([]object, 0, len(links))
		for _, g := range links {
			l = append(l, object{"group_prototypeid": id(g), "hostid": id(hp.ID), "name": "", "groupid": id(g), "templateid": "0"})
		}
		o["groupLinks"] = sl.shape(l, "")
	}
	if sl := p.SelectGroupPrototypes; sl.list() {
		l := make([]object, 0, len(hp.GroupPrototypes))
		for _, g := range hp.GroupPrototypes {
			l = append(l, object{"hostid": id(hp.ID), "name": g, "groupid": "0", "templateid": "0"})
		}
		o["groupPrototypes"] = sl.shape(l, "")
	}
	if sl := p.SelectTemplates; sl.list() {
		tmpls := slices.Clone(hp.Templates)
		for _, name := range hp.TemplateNames {
			if t := snap.TemplateByName(name); t != nil && !slices.Contains(tmpls, t.ID) {
				tmpls = append(tmpls, t.ID)
			}
		}
		l := make([]object, 0, len(tmpls))
		for _, t := range tmpls {
			if th := snap.Template(t); th != nil {
				l = append(l, object{"templateid": id(t), "host": th.Host, "name": th.Name})
			}
		}
		o["templates"] = sl.shape(l, "")
	}
	if sl := p.SelectMacros; sl.list() {
		l := make([]object, 0, len(hp.Macros))
		for _, m := range hp.Macros {
			v := m.Value
			if m.Type == 1 {
				v = "" // secrets never returned
			}
			l = append(l, object{"hostid": id(hp.ID), "macro": m.Macro, "value": v, "type": strconv.Itoa(m.Type), "description": m.Description})
		}
		o["macros"] = sl.shape(l, "")
	}
	if sl := p.SelectTags; sl.list() {
		o["tags"] = sl.shape(lldTagObjects(hp.Tags), "")
	}
	if sl := p.SelectInterfaces; sl.list() {
		l := make([]object, 0, len(hp.Interfaces))
		for _, f := range hp.Interfaces {
			io := object{"type": strconv.Itoa(f.Type), "main": strconv.Itoa(f.Main), "useip": strconv.Itoa(f.UseIP), "ip": f.IP, "dns": f.DNS, "port": f.Port}
			if f.Details != nil {
				d := object{}
				for k, v := range f.Details {
					d[k] = v
				}
				io["details"] = d
			} else {
				io["details"] = []object{}
			}
			l = append(l, io)
		}
		o["interfaces"] = sl.shape(l, "")
	}
	if sl := p.SelectParentHost; sl.list() && rule.Host != nil {
		o["parentHost"] = shapeOne(sl, hostObject(rule.Host))
	}
}

// prototypeGetParams are itemprototype.get's, triggerprototype.get's
// and hostprototype.get's parameters.
type prototypeGetParams struct {
	lldGetParams
	DiscoveryIDs        opt[ids] `json:"discoveryids"`
	ItemIDs             opt[ids] `json:"itemids"`
	TriggerIDs          opt[ids] `json:"triggerids"`
	HostPrototypeIDs    opt[ids] `json:"hostids_proto"`
	SelectDiscoveryRule sel      `json:"selectDiscoveryRule"`
	SelectTriggers      sel      `json:"selectTriggers"`
	SelectItems         sel      `json:"selectItems"`
	SelectTags          sel      `json:"selectTags"`
	SelectPreprocessing sel      `json:"selectPreprocessing"`
	// Trigger prototypes' and host prototypes' selects.
	SelectDependencies    sel `json:"selectDependencies"`
	SelectGroupLinks      sel `json:"selectGroupLinks"`
	SelectGroupPrototypes sel `json:"selectGroupPrototypes"`
	SelectMacros          sel `json:"selectMacros"`
	SelectTemplates       sel `json:"selectTemplates"`
	SelectInterfaces      sel `json:"selectInterfaces"`
	SelectParentHost      sel `json:"selectParentHost"`
}

// protoGet runs one of the prototype gets: objs makes a rule's
// prototype objects, idField names their ID.
func (s *Server) protoGet(ctx context.Context, c *call, idField string, sch *schema, objs func(snap *catalog.Snapshot, r *catalog.Item) []object,
	wantID func(p *prototypeGetParams, id uint64) bool, sortable ...string) (any, error) {
	var p prototypeGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	if idField == "hostid" {
		// hostprototype.get's hostids are host prototypes' IDs.
		p.HostPrototypeIDs, p.HostIDs = p.HostIDs, opt[ids]{}
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var all []object
	ruleOf := map[string]*catalog.Item{}
	for _, r := range s.rulesVisible(snap, a, &p.lldGetParams) {
		if !idsPass(p.DiscoveryIDs, r.ID) {
			continue
		}
		for _, o := range objs(snap, r) {
			oid, _ := strconv.ParseUint(o[idField].(string), 10, 64)
			if !wantID(&p, oid) {
				continue
			}
			ruleOf[o[idField].(string)] = r
			all = append(all, o)
		}
	}
	res, err := p.applySchema(all, sch, sortable...)
	if err != nil || p.CountOutput.Value {
		return res, err
	}
	eachObject(res, func(o object) {
		oid, _ := o[idField].(string)
		r := ruleOf[oid]
		if r == nil {
			return
		}
		if sl := p.SelectDiscoveryRule; sl.list() {
			o["discoveryRule"] = sl.shape(s.ruleObjects([]*catalog.Item{r}), "itemid")[0]
		}
		if sl := p.SelectHosts; sl.list() {
			o["hosts"] = sl.shape([]object{hostObject(r.Host)}, "hostid")
		}
		oid64, _ := strconv.ParseUint(oid, 10, 64)
		switch idField {
		case "hostid":
			for i := range r.Ext().LLD.HostPrototypes {
				if hp := &r.Ext().LLD.HostPrototypes[i]; hp.ID == oid64 {
					hostProtoSelects(snap, &p, o, hp, r)
				}
			}
		case "triggerid":
			for i := range r.Ext().LLD.TriggerPrototypes {
				if tp := &r.Ext().LLD.TriggerPrototypes[i]; tp.ID == oid64 {
					triggerProtoSelects(snap, &p, o, tp, r)
				}
			}
		}
	})
	return res, nil
}

// triggerProtoSelects adds triggerprototype.get's selectTags and
// selectDependencies (the prototypes and triggers it depends on, by
// name and expression) to a prototype object.
func triggerProtoSelects(snap *catalog.Snapshot, p *prototypeGetParams, o object, tp *catalog.TriggerPrototype, rule *catalog.Item) {
	if sl := p.SelectTags; sl.list() {
		o["tags"] = sl.shape(lldTagObjects(tp.Fields.Tags), "")
	}
	if sl := p.SelectDependencies; sl.list() {
		var l []object
		for _, d := range tp.Dependencies {
			for _, q := range triggerPrototypeObjects(snap, rule) {
				if q["description"] == d.Name && q["expression"] == d.Expression {
					l = append(l, q)
				}
			}
		}
		o["dependencies"] = nonNil(sl.shape(l, "triggerid"))
	}
}

func (s *Server) itemprototypeGet(ctx context.Context, c *call) (any, error) {
	var p prototypeGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	res, err := s.protoGet(ctx, c, "itemid", &itemSchema,
		func(_ *catalog.Snapshot, r *catalog.Item) []object { return s.itemPrototypeObjects(r) },
		func(p *prototypeGetParams, id uint64) bool { return idsPass(p.ItemIDs, id) }, "itemid", "name", "key_", "delay", "type", "status")
	if err != nil || p.CountOutput.Value {
		return res, err
	}
	eachObject(res, func(o object) {
		pid, _ := strconv.ParseUint(o["itemid"].(string), 10, 64)
		proto, rule := snap.ItemPrototype(pid)
		if proto == nil {
			return
		}
		if sl := p.SelectTags; sl.list() {
			tags := make([]object, 0, len(proto.Item.Tags))
			for _, t := range proto.Item.Tags {
				tags = append(tags, object{"tag": t.Tag, "value": t.Value})
			}
			o["tags"] = sl.shape(tags, "")
		}
		if sl := p.SelectPreprocessing; sl.list() {
			it := catalog.PrototypeItem(rule, proto)
			o["preprocessing"] = sl.shape(preprocObjects(it.Preprocessing), "")
		}
		if sl := p.SelectTriggers; sl.Set {
			var l []object
			for _, t := range triggerPrototypeObjects(snap, rule) {
				if strings.Contains(t["expression"].(string), "/"+proto.Item.Key+")") || strings.Contains(t["expression"].(string), "/"+proto.Item.Key+",") {
					l = append(l, t)
				}
			}
			if sl.Count {
				o["triggers"] = countOf(len(l))
			} else {
				o["triggers"] = nonNil(sl.shape(l, "triggerid"))
			}
		}
	})
	return res, nil
}

var triggerProtoSchema = schema{id: "triggerid", types: fieldTypes(`triggerid:n expression:c description:c url:c status:n value:n
	priority:n lastchange:n comments:t error:c templateid:n type:n state:n flags:n recovery_mode:n recovery_expression:c
	correlation_mode:n correlation_tag:c manual_close:n opdata:c discover:n event_name:c uuid:c`)}

func (s *Server) triggerprototypeGet(ctx context.Context, c *call) (any, error) {
	return s.protoGet(ctx, c, "triggerid", &triggerProtoSchema, triggerPrototypeObjects,
		func(p *prototypeGetParams, id uint64) bool { return idsPass(p.TriggerIDs, id) }, "triggerid", "description", "status", "priority")
}

var hostProtoSchema = schema{id: "hostid", types: fieldTypes(`hostid:n host:c name:c status:n templateid:n discover:n uuid:c custom_interfaces:n inventory_mode:n`)}

func (s *Server) hostprototypeGet(ctx context.Context, c *call) (any, error) {
	return s.protoGet(ctx, c, "hostid", &hostProtoSchema, func(_ *catalog.Snapshot, r *catalog.Item) []object { return hostPrototypeObjects(r) },
		func(p *prototypeGetParams, id uint64) bool { return idsPass(p.HostPrototypeIDs, id) }, "hostid", "host", "name", "status")
}

// discoveriesOf is host.get's and template.get's selectDiscoveries: the
// host's rules as discoveryrule.get gives them.
func (s *Server) discoveriesOf(h *catalog.Host, sl sel, limit func([]object) []object) any {
	rules := hostRules(h)
	if sl.Count {
		return countOf(len(rules))
	}
	return nonNil(sl.shape(limit(s.ruleObjects(rules)), "itemid"))
}
