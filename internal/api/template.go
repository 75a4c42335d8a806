package api

import (
	"context"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Templates (template.go, template_write.go, template_mass.go): Zabbix
// 6.0's templates, hosts of status 3 in host groups, whose items and
// triggers the catalog copies to what links them (catalog's inherit.go).
// A template is read and written with the rights on its groups, as a
// host is.

// templateObject is a template in Zabbix 6.0's shape: a host of status
// 3, with 6.0's values for the fields Peregrine does not model (recorded
// from 6.0.14; a template's tls_psk and tls_psk_identity are returned,
// empty).
func templateObject(t *catalog.Host) object {
	return object{"templateid": id(t.ID), "host": t.Host, "name": t.Name, "description": t.Description, "uuid": t.Ext().UUID, "status": "3",
		"flags": "0", "proxy_hostid": "0", "proxy_address": "", "lastaccess": "0", "auto_compress": "1", "custom_interfaces": "0",
		"ipmi_authtype": "-1", "ipmi_privilege": "2", "ipmi_username": "", "ipmi_password": "",
		"maintenanceid": "0", "maintenance_status": "0", "maintenance_type": "0", "maintenance_from": "0",
		"tls_connect": "1", "tls_accept": "1", "tls_issuer": "", "tls_subject": "", "tls_psk_identity": "", "tls_psk": ""}
}

// templateGetParams are template.get's parameters (Zabbix 6.0's). What
// Peregrine has none of on a template (web scenarios) selects what 6.0
// selects when a template has none.
type templateGetParams struct {
	getParams
	TemplateIDs       opt[ids]      `json:"templateids"`
	HostIDs           opt[ids]      `json:"hostids"`
	ParentTemplateIDs opt[ids]      `json:"parentTemplateids"`
	GroupIDs          opt[ids]      `json:"groupids"`
	GraphIDs          opt[ids]      `json:"graphids"`
	ItemIDs           opt[ids]      `json:"itemids"`
	TriggerIDs        opt[ids]      `json:"triggerids"`
	WithItems         opt[bool]     `json:"with_items" as:"isset"`
	WithTriggers      opt[bool]     `json:"with_triggers" as:"isset"`
	WithGraphs        opt[bool]     `json:"with_graphs" as:"isset"`
	WithHTTPTests     opt[bool]     `json:"with_httptests" as:"isset"`
	Tags              opt[tagConds] `json:"tags"`
	EvalType          evalType      `json:"evaltype"`
	// SelectValueMaps is checked by Zabbix 6.0's validator.
	SelectValueMaps       opt[[]string] `json:"selectValueMaps" as:"output" in:"valuemapid,name,mappings,uuid" zbx:"strict,null"`
	SelectGroups          sel           `json:"selectGroups"`
	SelectHosts           sel           `json:"selectHosts"`
	SelectTemplates       sel           `json:"selectTemplates"`
	SelectParentTemplates sel           `json:"selectParentTemplates"`
	SelectItems           sel           `json:"selectItems"`
	SelectDiscoveries     sel           `json:"selectDiscoveries"`
	SelectTriggers        sel           `json:"selectTriggers"`
	SelectGraphs          sel           `json:"selectGraphs"`
	SelectMacros          sel           `json:"selectMacros"`
	SelectDashboards      sel           `json:"selectDashboards"`
	SelectHTTPTests       sel           `json:"selectHttpTests"`
	SelectTags            sel           `json:"selectTags"`
}

// templateSchema is Zabbix 6.0's hosts table as template.get reads it.
var templateSchema = schema{id: "templateid", types: hostSchema.types}

func (s *Server) templateGet(ctx context.Context, c *call) (any, error) {
	var p templateGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	owners := func(want ids, fn func(uint64) (uint64, bool)) map[uint64]bool {
		out := map[uint64]bool{}
		for _, x := range want {
			if t, ok := fn(x); ok {
				out[t] = true
			}
		}
		return out
	}
	var itemTmpls, trigTmpls map[uint64]bool
	if p.ItemIDs.Given() {
		itemTmpls = owners(p.ItemIDs.Value, func(iid uint64) (uint64, bool) {
			if it := snap.TemplateItem(iid); it != nil {
				return it.HostID, true
			}
			return 0, false
		})
	}
	if p.TriggerIDs.Given() {
		trigTmpls = owners(p.TriggerIDs.Value, func(tid uint64) (uint64, bool) {
			if t := snap.TemplateTrigger(tid); t != nil && len(t.HostIDs) > 0 {
				return t.HostIDs[0], true
			}
			return 0, false
		})
	}
	tags := compileTags(p.Tags.Value, p.EvalType.value())
	graphTmpls := graphOwners(snap, p.GraphIDs, p.WithGraphs.Given())
	none := p.WithHTTPTests.Given()
	var objs []object
	for _, t := range snap.Templates() {
		if none || !a.sees(t, p.Editable.Value) || !idsPass(p.TemplateIDs, t.ID) || !idsAny(p.GroupIDs, t.GroupIDs) ||
			!idsAny(p.HostIDs, snap.LinkedTo(t.ID)) || !idsAny(p.ParentTemplateIDs, snap.LinkedTemplates(t.ID)) ||
			itemTmpls != nil && !itemTmpls[t.ID] || trigTmpls != nil && !trigTmpls[t.ID] ||
			graphTmpls != nil && !graphTmpls[t.ID] ||
			p.WithItems.Given() && len(listedItems(t)) == 0 || p.WithTriggers.Given() && len(templateTriggers(snap, t)) == 0 ||
			tags != nil && !tags.match(len(t.Tags), func(i int) (string, string) { return t.Tags[i].Tag, t.Tags[i].Value }) {
			continue
		}
		objs = append(objs, templateObject(t))
	}
	// hostid is the templates' sort column for their ID, as in 6.0.
	sch := templateSchema
	sch.sortValue = func(o object, f string) (string, bool) {
		if f == "hostid" {
			return o["templateid"].(string), true
		}
		return "", false
	}
	res, err := p.applySchema(objs, &sch, "hostid", "host", "name")
	if err != nil || p.CountOutput.Value {
		return res, err
	}
	eachObject(res, func(o object) {
		tid, _ := strconv.ParseUint(o["templateid"].(string), 10, 64)
		if t := snap.Template(tid); t != nil {
			s.templateSelects(o, t, &p, snap, a)
		}
	})
	return res, nil
}

// templateTriggers returns the triggers of a template's items, ascending
// by ID, each once.
func templateTriggers(snap *catalog.Snapshot, t *catalog.Host) []*catalog.Trigger {
	var out []*catalog.Trigger
	seen := map[uint64]bool{}
	for _, it := range t.Items() {
		for _, tr := range snap.TemplateTriggersOfItem(it.ID) {
			if !seen[tr.ID] {
				seen[tr.ID] = true
				out = append(out, tr)
			}
		}
	}
	slices.SortFunc(out, func(a, b *catalog.Trigger) int { return cmpUint(a.ID, b.ID) })
	return out
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// templateSelects adds template.get's selects to o, as Zabbix 6.0
// answers them (recorded from 6.0.14): a list of fields adds the ID of
// groups, hosts, templates, triggers and graphs, not that of items,
// macros, tags and dashboards; "count" counts hosts, templates, items,
// triggers, graphs, dashboards and the web scenarios a template has
// none of here, and leaves groups, macros and tags out.
func (s *Server) templateSelects(o object, t *catalog.Host, p *templateGetParams, snap *catalog.Snapshot, a access) {
	if sl := p.SelectHTTPTests; sl.Count {
		o["httpTests"] = countOf(0)
	} else if sl.Set {
		o["httpTests"] = []object{}
	}
	if sl := p.SelectGraphs; sl.Set {
		var gs []*catalog.Graph
		for i := range snap.Graphs() {
			if g := &snap.Graphs()[i]; g.HostID == t.ID {
				gs = append(gs, g)
			}
		}
		o["graphs"] = graphsSelect(gs, sl, p.limitSelect)
	}
	if sl := p.SelectDashboards; sl.Set {
		var ds []*catalog.Dashboard
		for i := range snap.Dashboards() {
			if d := &snap.Dashboards()[i]; d.TemplateID == t.ID {
				ds = append(ds, d)
			}
		}
		o["dashboards"] = dashboardsSelect(ds, sl, false, p.limitSelect)
	}
	if sl := p.SelectDiscoveries; sl.Set {
		o["discoveries"] = s.discoveriesOf(t, sl, p.limitSelect)
	}
	if sl := p.SelectGroups; sl.list() {
		var groups []object
		for _, gid := range t.GroupIDs {
			if g := snap.GroupByID(gid); g != nil && a.seesGroup(gid, false) {
				groups = append(groups, groupObject(g))
			}
		}
		o["groups"] = nonNil(sl.shape(groups, "groupid"))
	}
	if sl := p.SelectTags; sl.list() {
		tags := make([]object, 0, len(t.Tags))
		for _, tg := range t.Tags {
			tags = append(tags, object{"tag": tg.Tag, "value": tg.Value})
		}
		o["tags"] = sl.shape(tags, "")
	}
	if sl := p.SelectMacros; sl.list() {
		o["macros"] = nonNil(sl.shape(macroObjects(snap.Macros(t.ID), &p.getParams), ""))
	}
	if sl := p.SelectParentTemplates; sl.Set {
		links := snap.LinkedTemplates(t.ID)
		if sl.Count {
			o["parentTemplates"] = countOf(len(links))
		} else {
			o["parentTemplates"] = sl.shape(templateRefs(snap, links, &p.getParams), "templateid")
		}
	}
	var children []uint64
	var hosts []object
	for _, l := range snap.LinkedTo(t.ID) {
		if snap.Template(l) != nil {
			children = append(children, l)
		} else if h := snap.HostByID(l); h != nil && a.sees(h, false) {
			hosts = append(hosts, hostObject(h))
		}
	}
	if sl := p.SelectTemplates; sl.Set {
		if sl.Count {
			o["templates"] = countOf(len(children))
		} else {
			o["templates"] = sl.shape(templateRefs(snap, children, &p.getParams), "templateid")
		}
	}
	if sl := p.SelectHosts; sl.Set {
		if sl.Count {
			o["hosts"] = countOf(len(hosts))
		} else {
			o["hosts"] = nonNil(sl.shape(p.limitSelect(hosts), "hostid"))
		}
	}
	if sl := p.SelectItems; sl.Set {
		items := listedItems(t)
		if sl.Count {
			o["items"] = countOf(len(items))
		} else {
			if p.LimitSelects.Given() && int(p.LimitSelects.Value) < len(items) {
				items = items[:p.LimitSelects.Value]
			}
			o["items"] = s.itemObjects(items, sl)
		}
	}
	if sl := p.SelectTriggers; sl.Set {
		trigs := templateTriggers(snap, t)
		if sl.Count {
			o["triggers"] = countOf(len(trigs))
		} else {
			l := make([]object, 0, len(trigs))
			for _, tr := range trigs {
				l = append(l, triggerObject(tr, s.runtime(tr.ID)))
			}
			o["triggers"] = nonNil(sl.shape(p.limitSelect(l), "triggerid"))
		}
	}
	if sv := p.SelectValueMaps; sv.Given() {
		vo := output{all: len(sv.Value) == 1 && sv.Value[0] == "extend", fields: map[string]bool{}}
		for _, f := range sv.Value {
			vo.fields[f] = true
		}
		l := []object{}
		for _, vm := range snap.ValueMaps() {
			if vm.HostID != t.ID {
				continue
			}
			m := object{}
			for k, v := range map[string]any{"valuemapid": id(vm.ID), "name": vm.Name, "mappings": mappingObjects(vm.Mappings)} {
				if vo.has(k) {
					m[k] = v
				}
			}
			if !vo.all && vo.fields["uuid"] {
				m["uuid"] = vm.UUID
			}
			l = append(l, m)
		}
		o["valuemaps"] = l
	}
}

// templateRefs are the templates tids as template objects.
func templateRefs(snap *catalog.Snapshot, tids []uint64, p *getParams) []object {
	var out []object
	for _, tid := range tids {
		if t := snap.Template(tid); t != nil {
			out = append(out, templateObject(t))
		}
	}
	return nonNil(p.limitSelect(out))
}
