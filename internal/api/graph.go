package api

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Graphs (Zabbix 6.0's graph.get and graphitem.get; graph_write.go has
// graph.create/update/delete): the catalog's graphs of hosts and
// templates, a template's copied to what links it (templateid). A graph
// is visible when its host or template is readable. Shapes recorded
// from 6.0.14 (conformance case graphs).

// graphSchema is Zabbix 6.0's graphs table, which filter and search
// read.
var graphSchema = schema{id: "graphid", types: fieldTypes(`graphid:n name:c width:n height:n yaxismin:n yaxismax:n
	templateid:n show_work_period:n show_triggers:n graphtype:n show_legend:n show_3d:n percent_left:n percent_right:n
	ymin_type:n ymax_type:n ymin_itemid:n ymax_itemid:n flags:n uuid:c`)}

// pgFloat writes a float as 6.0's PostgreSQL writes a double precision
// column (recorded from 6.0.14: "0.5", "100", "1e+21"): the shortest
// form, with an exponent from 1e15 up and under 1e-4.
func pgFloat(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e15 || a < 1e-4 {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// graphObject is a graph with graph.get's fields.
func graphObject(g *catalog.Graph) object {
	f := &g.GraphFields
	n := func(v int) string { return strconv.Itoa(v) }
	return object{"graphid": id(g.ID), "name": g.Name, "width": n(f.Width), "height": n(f.Height),
		"yaxismin": pgFloat(f.YAxisMin), "yaxismax": pgFloat(f.YAxisMax), "templateid": id(g.TemplateID),
		"show_work_period": n(f.ShowWorkPeriod), "show_triggers": n(f.ShowTriggers), "graphtype": n(f.GraphType),
		"show_legend": n(f.ShowLegend), "show_3d": n(f.Show3D), "percent_left": pgFloat(f.PercentLeft),
		"percent_right": pgFloat(f.PercentRight), "ymin_type": n(f.YMinType), "ymax_type": n(f.YMaxType),
		"ymin_itemid": id(f.YMinItemID), "ymax_itemid": id(f.YMaxItemID), "flags": graphFlags(g), "uuid": g.UUID}
}

// graphItemObjects are a graph's items with graphitem.get's fields,
// ascending by gitemid as 6.0 returns them.
func graphItemObjects(g *catalog.Graph) []object {
	items := slices.SortedFunc(slices.Values(g.Items), func(a, b catalog.GraphItem) int { return cmp.Compare(a.GItemID, b.GItemID) })
	out := make([]object, 0, len(items))
	for _, gi := range items {
		out = append(out, object{"gitemid": id(gi.GItemID), "graphid": id(g.ID), "itemid": id(gi.ItemID),
			"drawtype": strconv.Itoa(gi.DrawType), "sortorder": strconv.Itoa(gi.SortOrder), "color": gi.Color,
			"yaxisside": strconv.Itoa(gi.YAxisSide), "calc_fnc": strconv.Itoa(gi.CalcFnc), "type": strconv.Itoa(gi.Type)})
	}
	return out
}

// graphGetParams are graph.get's parameters (6.0's CGraph, a legacy
// get). selectHosts, selectItems and selectGraphItems "count" add
// nothing, as in 6.0 (recorded from 6.0.14); the discovery selects give
// a discovered graph's rule and link, PHP's empty array for others.
type graphGetParams struct {
	getParams
	GroupIDs             opt[ids]  `json:"groupids"`
	TemplateIDs          opt[ids]  `json:"templateids"`
	HostIDs              opt[ids]  `json:"hostids"`
	GraphIDs             opt[ids]  `json:"graphids"`
	ItemIDs              opt[ids]  `json:"itemids"`
	Templated            opt[bool] `json:"templated"`
	Inherited            opt[bool] `json:"inherited"`
	ExpandName           opt[bool] `json:"expandName"`
	SelectGroups         sel       `json:"selectGroups"`
	SelectTemplates      sel       `json:"selectTemplates"`
	SelectHosts          sel       `json:"selectHosts"`
	SelectItems          sel       `json:"selectItems"`
	SelectGraphItems     sel       `json:"selectGraphItems"`
	SelectDiscoveryRule  sel       `json:"selectDiscoveryRule"`
	SelectGraphDiscovery sel       `json:"selectGraphDiscovery"`
}

// graphsVisible returns the graphs p selects that the caller sees, with
// their hosts.
func (s *Server) graphsVisible(snap *catalog.Snapshot, a access, p *graphGetParams) []*catalog.Graph {
	hostIDs := p.HostIDs
	if p.TemplateIDs.Given() {
		hostIDs = given(append(append(ids{}, p.HostIDs.Value...), p.TemplateIDs.Value...))
	}
	// filter's host and hostid name the graphs' hosts, as in 6.0.
	var fHost, fHostID []string
	if p.Filter.Given() {
		fHost = legacyTexts(p.Filter.Value["host"])
		fHostID = legacyTexts(p.Filter.Value["hostid"])
	}
	var out []*catalog.Graph
	for i := range snap.Graphs() {
		g := &snap.Graphs()[i]
		h := snap.HostOrTemplate(g.HostID)
		if h == nil || !a.sees(h, p.Editable.Value) || !idsPass(p.GraphIDs, g.ID) || !idsPass(hostIDs, h.ID) ||
			!idsAny(p.GroupIDs, h.GroupIDs) ||
			p.Templated.Given() && p.Templated.Value != h.IsTemplate ||
			p.Inherited.Given() && p.Inherited.Value != (g.TemplateID != 0) ||
			len(fHost) > 0 && !slices.Contains(fHost, h.Host) || len(fHostID) > 0 && !slices.Contains(fHostID, id(h.ID)) {
			continue
		}
		if p.ItemIDs.Given() && !slices.ContainsFunc(g.Items, func(gi catalog.GraphItem) bool { return containsID(p.ItemIDs.Value, gi.ItemID) }) {
			continue
		}
		out = append(out, g)
	}
	return out
}

func (s *Server) graphGet(ctx context.Context, c *call) (any, error) {
	var p graphGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	byID := map[string]*catalog.Graph{}
	var objs []object
	for _, g := range s.graphsVisible(snap, a, &p) {
		byID[id(g.ID)] = g
		objs = append(objs, graphObject(g))
	}
	if p.Filter.Given() {
		delete(p.Filter.Value, "host")
		delete(p.Filter.Value, "hostid")
	}
	res, err := p.applySchema(objs, &graphSchema, "graphid", "name", "graphtype")
	if err != nil || p.CountOutput.Value {
		return res, err
	}
	eachObject(res, func(o object) {
		g := byID[o["graphid"].(string)]
		if g == nil {
			return
		}
		h := snap.HostOrTemplate(g.HostID)
		if sl := p.SelectGroups; sl.list() {
			var l []object
			for _, gid := range h.GroupIDs {
				if gr := snap.GroupByID(gid); gr != nil {
					l = append(l, groupObject(gr))
				}
			}
			o["groups"] = nonNil(sl.shape(l, "groupid"))
		}
		if sl := p.SelectHosts; sl.list() {
			o["hosts"] = sl.shape([]object{hostObject(h)}, "hostid")
		}
		if sl := p.SelectTemplates; sl.list() {
			l := []object{}
			if h.IsTemplate {
				l = sl.shape([]object{templateObject(h)}, "templateid")
			}
			o["templates"] = l
		}
		if sl := p.SelectItems; sl.list() {
			o["items"] = s.graphItems(snap, g, sl)
		}
		if sl := p.SelectGraphItems; sl.list() {
			o["gitems"] = sl.shape(graphItemObjects(g), "")
		}
		s.graphDiscoverySelects(snap, g, o, p.SelectDiscoveryRule, p.SelectGraphDiscovery) // graphprototype.go
	})
	return res, nil
}

// graphItems is selectItems: the graph's items (each once, by ID) as
// item.get gives them, with the ID.
func (s *Server) graphItems(snap *catalog.Snapshot, g *catalog.Graph, sl sel) any {
	var items []*catalog.Item
	seen := map[uint64]bool{}
	for _, gi := range g.Items {
		if it := snap.AnyItem(gi.ItemID); it != nil && !seen[it.ID] {
			seen[it.ID] = true
			items = append(items, it)
		}
	}
	slices.SortFunc(items, func(a, b *catalog.Item) int { return cmp.Compare(a.ID, b.ID) })
	if !sl.All && !slices.Contains(sl.Fields, "itemid") {
		sl.Fields = append(slices.Clone(sl.Fields), "itemid")
	}
	return s.itemObjects(items, sl)
}

// graphitemGetParams are graphitem.get's parameters (6.0's CGraphItem,
// a legacy get).
type graphitemGetParams struct {
	getParams
	GraphIDs     opt[ids]   `json:"graphids"`
	ItemIDs      opt[ids]   `json:"itemids"`
	GItemIDs     opt[ids]   `json:"gitemids"`
	Type         opt[int64] `json:"type"`
	ExpandData   opt[bool]  `json:"expandData"`
	SelectGraphs sel        `json:"selectGraphs"`
}

var graphitemSchema = schema{id: "gitemid", types: fieldTypes(`gitemid:n graphid:n itemid:n drawtype:n sortorder:n color:c
	yaxisside:n calc_fnc:n type:n`)}

func (s *Server) graphitemGet(ctx context.Context, c *call) (any, error) {
	var p graphitemGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	graphOf := map[string]*catalog.Graph{}
	var objs []object
	for i := range snap.Graphs() {
		g := &snap.Graphs()[i]
		h := snap.HostOrTemplate(g.HostID)
		if h == nil || !a.sees(h, p.Editable.Value) || !idsPass(p.GraphIDs, g.ID) {
			continue
		}
		for _, o := range graphItemObjects(g) {
			iid, _ := strconv.ParseUint(o["itemid"].(string), 10, 64)
			gid, _ := strconv.ParseUint(o["gitemid"].(string), 10, 64)
			if !idsPass(p.ItemIDs, iid) || !idsPass(p.GItemIDs, gid) || p.Type.Given() && o["type"] != strconv.FormatInt(p.Type.Value, 10) {
				continue
			}
			graphOf[o["gitemid"].(string)] = g
			objs = append(objs, o)
		}
	}
	res, err := p.applySchema(objs, &graphitemSchema, "gitemid")
	if err != nil || p.CountOutput.Value {
		return res, err
	}
	eachObject(res, func(o object) {
		g := graphOf[o["gitemid"].(string)]
		if sl := p.SelectGraphs; g != nil && sl.list() {
			o["graphs"] = sl.shape([]object{graphObject(g)}, "graphid")
		}
	})
	return res, nil
}

// graphIndex is the graphs of each host or template and of each item,
// built once per request for the selectGraphs of host.get, template.get
// and item.get.
type graphIndex struct {
	byHost, byItem map[uint64][]*catalog.Graph
}

func newGraphIndex(snap *catalog.Snapshot) *graphIndex {
	x := &graphIndex{byHost: map[uint64][]*catalog.Graph{}, byItem: map[uint64][]*catalog.Graph{}}
	for i := range snap.Graphs() {
		g := &snap.Graphs()[i]
		x.byHost[g.HostID] = append(x.byHost[g.HostID], g)
		seen := map[uint64]bool{}
		for _, gi := range g.Items {
			if !seen[gi.ItemID] {
				seen[gi.ItemID] = true
				x.byItem[gi.ItemID] = append(x.byItem[gi.ItemID], g)
			}
		}
	}
	return x
}

// graphsSelect answers a selectGraphs over gs (ascending by ID): the
// count, or the graphs with their ID (recorded from 6.0.14).
func graphsSelect(gs []*catalog.Graph, sl sel, limit func([]object) []object) any {
	if sl.Count {
		return countOf(len(gs))
	}
	l := make([]object, 0, len(gs))
	for _, g := range gs {
		l = append(l, graphObject(g))
	}
	if limit != nil {
		l = limit(l)
	}
	return nonNil(sl.shape(l, "graphid"))
}

// templateDashboardObject is a template dashboard as the selectDashboards
// of template.get and host.get give it.
func templateDashboardObject(d *catalog.Dashboard) object {
	o := object{}
	for _, f := range templateDashboardFields {
		o[f] = templateDashboardText(d, f)
	}
	return o
}

// dashboardsSelect answers a selectDashboards over ds; withTemplate adds
// templateid to a list of fields, as host.get's does (recorded from
// 6.0.14; template.get's does not).
func dashboardsSelect(ds []*catalog.Dashboard, sl sel, withTemplate bool, limit func([]object) []object) any {
	if sl.Count {
		return countOf(len(ds))
	}
	l := make([]object, 0, len(ds))
	for _, d := range ds {
		l = append(l, templateDashboardObject(d))
	}
	if limit != nil {
		l = limit(l)
	}
	idField := ""
	if withTemplate {
		idField = "templateid"
	}
	return nonNil(sl.shape(l, idField))
}

// graphOwners is the hosts (and templates) having a graph that passes
// graphids (with_graphs: any graph), or nil when neither is given: the
// graphids and with_graphs of host.get and template.get.
func graphOwners(snap *catalog.Snapshot, graphIDs opt[ids], withGraphs bool) map[uint64]bool {
	if !graphIDs.Given() && !withGraphs {
		return nil
	}
	out := map[uint64]bool{}
	for i := range snap.Graphs() {
		if g := &snap.Graphs()[i]; idsPass(graphIDs, g.ID) {
			out[g.HostID] = true
		}
	}
	return out
}
