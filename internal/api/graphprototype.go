package api

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// Graph prototypes (Zabbix 6.0's graphprototype.get/create/update/
// delete): part of their discovery rule's configuration in the catalog
// (catalog/graph_proto.go), their items named by key there and by ID
// here (an item prototype of the rule or an item of its host). Checks
// and texts recorded from 6.0.14 (conformance case graph_prototypes);
// a write replaces the rule's configuration (catalog.Edit.UpdateRule),
// so a rule copied from a template takes graph prototypes only from
// its template.

// graphProtoSchema is 6.0's graphs table as graphprototype.get reads it.
var graphProtoSchema = schema{id: "graphid", types: fieldTypes(`graphid:n name:c width:n height:n yaxismin:n yaxismax:n
	templateid:n show_work_period:n show_triggers:n graphtype:n show_legend:n show_3d:n percent_left:n percent_right:n
	ymin_type:n ymax_type:n ymin_itemid:n ymax_itemid:n flags:n discover:n uuid:c`)}

// protoAsGraph is a graph prototype as a catalog.Graph of the rule's
// host, its items' keys resolved to IDs, for graph.get's shapes and
// graph.update's logic.
func protoAsGraph(snap *catalog.Snapshot, rule *catalog.Item, gp *catalog.GraphPrototype) catalog.Graph {
	g := catalog.Graph{ID: gp.ID, HostID: rule.HostID, TemplateID: gp.TemplateID, UUID: gp.UUID, Name: gp.Name, GraphFields: gp.Fields}
	g.YMinItemID = snap.GraphProtoItemID(rule, gp.YMinKey)
	g.YMaxItemID = snap.GraphProtoItemID(rule, gp.YMaxKey)
	for _, gi := range gp.Items {
		x := gi.Item
		x.ItemID = snap.GraphProtoItemID(rule, gi.Key)
		g.Items = append(g.Items, x)
	}
	return g
}

func graphProtoObject(snap *catalog.Snapshot, rule *catalog.Item, gp *catalog.GraphPrototype) object {
	g := protoAsGraph(snap, rule, gp)
	o := graphObject(&g)
	o["flags"] = "2"
	o["discover"] = strconv.Itoa(gp.Discover)
	return o
}

// graphprototypeGetParams are graphprototype.get's parameters (6.0's
// CGraphPrototype, a legacy get).
type graphprototypeGetParams struct {
	lldGetParams
	GraphIDs            opt[ids] `json:"graphids"`
	DiscoveryIDs        opt[ids] `json:"discoveryids"`
	ItemIDs             opt[ids] `json:"itemids"`
	SelectGroups        sel      `json:"selectGroups"`
	SelectTemplates     sel      `json:"selectTemplates"`
	SelectItems         sel      `json:"selectItems"`
	SelectGraphItems    sel      `json:"selectGraphItems"`
	SelectDiscoveryRule sel      `json:"selectDiscoveryRule"`
}

func (s *Server) graphprototypeGet(ctx context.Context, c *call) (any, error) {
	var p graphprototypeGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	type found struct {
		rule *catalog.Item
		gp   *catalog.GraphPrototype
	}
	byID := map[string]found{}
	var objs []object
	for _, r := range s.rulesVisible(snap, a, &p.lldGetParams) {
		if !idsPass(p.DiscoveryIDs, r.ID) {
			continue
		}
		for i := range r.Ext().LLD.GraphPrototypes {
			gp := &r.Ext().LLD.GraphPrototypes[i]
			if !idsPass(p.GraphIDs, gp.ID) {
				continue
			}
			if p.ItemIDs.Given() && !slices.ContainsFunc(gp.Items, func(gi catalog.GraphProtoItem) bool {
				return containsID(p.ItemIDs.Value, snap.GraphProtoItemID(r, gi.Key))
			}) {
				continue
			}
			o := graphProtoObject(snap, r, gp)
			byID[o["graphid"].(string)] = found{r, gp}
			objs = append(objs, o)
		}
	}
	slices.SortFunc(objs, func(a, b object) int { return cmp.Compare(a["graphid"].(string), b["graphid"].(string)) })
	res, err := p.applySchema(objs, &graphProtoSchema, "graphid", "name", "graphtype", "discover")
	if err != nil || p.CountOutput.Value {
		return res, err
	}
	eachObject(res, func(o object) {
		f, ok := byID[o["graphid"].(string)]
		if !ok {
			return
		}
		g := protoAsGraph(snap, f.rule, f.gp)
		h := f.rule.Host
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
			o["items"] = s.graphProtoItems(snap, f.rule, f.gp, sl)
		}
		if sl := p.SelectGraphItems; sl.list() {
			o["gitems"] = sl.shape(graphItemObjects(&g), "")
		}
		if sl := p.SelectDiscoveryRule; sl.list() {
			o["discoveryRule"] = sl.shape(s.ruleObjects([]*catalog.Item{f.rule}), "itemid")[0]
		}
	})
	return res, nil
}

// graphProtoItems is graphprototype.get's selectItems: its item
// prototypes and items, ascending by ID.
func (s *Server) graphProtoItems(snap *catalog.Snapshot, rule *catalog.Item, gp *catalog.GraphPrototype, sl sel) any {
	seen := map[string]bool{}
	var items []catalog.Item
	for _, gi := range gp.Items {
		if seen[gi.Key] {
			continue
		}
		seen[gi.Key] = true
		id := snap.GraphProtoItemID(rule, gi.Key)
		if ip, _ := snap.ItemPrototype(id); ip != nil {
			it := catalog.PrototypeItem(rule, ip)
			items = append(items, it)
		} else if it := snap.AnyItem(id); it != nil {
			items = append(items, *it)
		}
	}
	slices.SortFunc(items, func(a, b catalog.Item) int { return cmp.Compare(a.ID, b.ID) })
	ptrs := make([]*catalog.Item, len(items))
	for i := range items {
		ptrs[i] = &items[i]
	}
	if !sl.All && !slices.Contains(sl.Fields, "itemid") {
		sl.Fields = append(slices.Clone(sl.Fields), "itemid")
	}
	return s.itemObjects(ptrs, sl)
}

// graphProtoParams is a graph prototype object of graphprototype.create
// and graphprototype.update: a graph's members and discover.
type graphProtoParams struct {
	graphParams
	Discover opt[int64] `json:"discover" in:"0,1"`
}

// protoItemRef is what a graph prototype's item ID names: an item
// prototype (and its rule) or an item of a host.
type protoItemRef struct {
	key       string
	rule      *catalog.Item // set for an item prototype
	hostID    uint64
	valueType history.ValueType
	name      string
}

func resolveProtoItem(snap *catalog.Snapshot, id uint64) (protoItemRef, bool) {
	if ip, rule := snap.ItemPrototype(id); ip != nil {
		it := catalog.PrototypeItem(rule, ip)
		return protoItemRef{key: ip.Item.Key, rule: rule, hostID: rule.HostID, valueType: it.ValueType, name: ip.Item.Name}, true
	}
	if it := snap.AnyItem(id); it != nil {
		return protoItemRef{key: it.Key, hostID: it.HostID, valueType: it.ValueType, name: it.Name}, true
	}
	return protoItemRef{}, false
}

// checkGraphProtoParams makes 6.0's checks of a graph prototype object
// in its order and words (recorded from 6.0.14) and returns the rule
// its item prototypes belong to.
func checkGraphProtoParams(snap *catalog.Snapshot, i int, p *graphProtoParams, name string, create bool) (*catalog.Item, error) {
	switch {
	case create && !p.Name.Given():
		return nil, errParams(`Missing "name" field for graph prototype.`)
	case p.Name.Given() && p.Name.Value == "":
		return nil, empty(i, "name")
	case p.Discover.Given() && p.Discover.Value != 0 && p.Discover.Value != 1:
		return nil, errParams(`Invalid parameter "/%d/discover": value must be one of 0, 1.`, i+1)
	case create && p.TemplateID.Given():
		return nil, errParams(`Cannot set "templateid" for graph prototype "%s".`, name)
	case (create || p.GItems.Set) && len(p.GItems.Value) == 0:
		return nil, errParams(`Missing items for graph prototype "%s".`, name)
	}
	for _, q := range p.GItems.Value {
		switch {
		case !q.ItemID.Given():
			return nil, errParams(`Missing "itemid" field for item.`)
		case !q.Color.Given():
			return nil, errParams(`No "color" given for graph prototype.`)
		case !colorRE.MatchString(q.Color.Value):
			return nil, errParams(`Color "%s" is not correct: expecting hexadecimal color code (6 symbols).`, q.Color.Value)
		}
	}
	var rule *catalog.Item
	host := uint64(0)
	for _, q := range p.GItems.Value {
		ref, ok := resolveProtoItem(snap, q.ItemID.Value)
		if !ok {
			return nil, errParams("No permissions to referred object or it does not exist!")
		}
		if ref.valueType != history.Float && ref.valueType != history.Uint {
			return nil, errParams(`Cannot add a non-numeric item "%s" to graph prototype "%s".`, ref.name, name)
		}
		if host != 0 && host != ref.hostID {
			return nil, errParams(`Graph prototype "%s" with templated items cannot contain items from other hosts.`, name)
		}
		host = ref.hostID
		if ref.rule != nil {
			if rule != nil && rule.ID != ref.rule.ID {
				return nil, errParams(`Graph prototype "%s" contains item prototypes from multiple discovery rules.`, name)
			}
			rule = ref.rule
		}
	}
	if p.GItems.Given() && rule == nil {
		return nil, errParams(`Graph prototype "%s" must have at least one item prototype.`, name)
	}
	return rule, nil
}

// toProto makes g (a graph built by graphParams.apply over item and
// item prototype IDs) a graph prototype of rule, its items by key.
func toProto(snap *catalog.Snapshot, g *catalog.Graph, discover int) catalog.GraphPrototype {
	gp := catalog.GraphPrototype{ID: g.ID, TemplateID: g.TemplateID, UUID: g.UUID, Name: g.Name, Discover: discover, Fields: g.GraphFields}
	gp.Fields.YMinItemID, gp.Fields.YMaxItemID = 0, 0
	if ref, ok := resolveProtoItem(snap, g.YMinItemID); ok && g.YMinType == 2 {
		gp.YMinKey = ref.key
	}
	if ref, ok := resolveProtoItem(snap, g.YMaxItemID); ok && g.YMaxType == 2 {
		gp.YMaxKey = ref.key
	}
	for _, gi := range g.Items {
		ref, _ := resolveProtoItem(snap, gi.ItemID)
		x := gi
		x.ItemID = 0
		gp.Items = append(gp.Items, catalog.GraphProtoItem{Key: ref.key, Item: x})
	}
	return gp
}

// graphNameOnHost reports whether a graph or graph prototype other than
// except has the name on the host (6.0's names are unique over both).
func graphNameOnHost(snap *catalog.Snapshot, host uint64, name string, except uint64) bool {
	for i := range snap.Graphs() {
		if g := &snap.Graphs()[i]; g.HostID == host && g.Name == name && g.ID != except {
			return true
		}
	}
	for _, r := range snap.Rules() {
		if r.HostID != host {
			continue
		}
		for _, gp := range r.Ext().LLD.GraphPrototypes {
			if gp.Name == name && gp.ID != except {
				return true
			}
		}
	}
	return false
}

// graphFlags is a graph's flags: 4 discovered, else 0.
func graphFlags(g *catalog.Graph) string {
	if g.Discovery != nil {
		return "4"
	}
	return "0"
}

// graphDiscoverySelects answers graph.get's selectDiscoveryRule and
// selectGraphDiscovery (recorded from 6.0.14): a discovered graph's rule
// and its link to its prototype; PHP's empty array for other graphs.
// lastcheck is not kept (0).
func (s *Server) graphDiscoverySelects(snap *catalog.Snapshot, g *catalog.Graph, o object, rule, link sel) {
	var r *catalog.Item
	if g.Discovery != nil {
		if r = snap.Item(g.Discovery.RuleID); r != nil && r.Ext().LLD == nil {
			r = nil
		}
	}
	if rule.Set {
		if r != nil && rule.list() {
			o["discoveryRule"] = rule.shape(s.ruleObjects([]*catalog.Item{r}), "")[0]
		} else {
			o["discoveryRule"] = []object{}
		}
	}
	if link.Set {
		if d := g.Discovery; d != nil && link.list() {
			o["graphDiscovery"] = link.shape([]object{{"graphid": id(g.ID), "parent_graphid": id(d.ProtoID),
				"lastcheck": "0", "ts_delete": strconv.FormatInt(d.TSDelete, 10)}}, "")[0]
		} else {
			o["graphDiscovery"] = []object{}
		}
	}
}
