package catalog

import (
	"fmt"
	"strconv"
)

// Graph prototypes, as Zabbix 6.0 keeps them (flags 2 in its graphs
// table): part of their discovery rule's configuration (LLDRule), like
// item and trigger prototypes, each with an ID from the graphs'
// sequence (so that a graph prototype's ID is never a graph's, as in
// Zabbix) and, on copies, the template prototype it was copied from.
// A prototype's items are named by key: an item prototype of the rule
// (its key with LLD macros) or an item of the rule's host; a copy
// keeps its template's keys, which name the owner's copies. Discovery
// makes one graph per row (Graph.Discovery set, flags 4).

// GraphPrototype is a graph prototype: a graph whose name may hold LLD
// macros, over item prototypes of its rule (and items of its host).
type GraphPrototype struct {
	ID         uint64 `json:"graphid"`
	TemplateID uint64 `json:"templateid,omitempty"`
	UUID       string `json:"uuid,omitempty"`
	Name       string `json:"name"`
	// Discover 1 makes the prototype create nothing.
	Discover int              `json:"discover,omitempty"`
	Fields   GraphFields      `json:"fields"` // YMinItemID, YMaxItemID unused: YMinKey, YMaxKey
	YMinKey  string           `json:"ymin_key,omitempty"`
	YMaxKey  string           `json:"ymax_key,omitempty"`
	Items    []GraphProtoItem `json:"gitems"`
}

// GraphProtoItem is one item of a graph prototype: its key (an item
// prototype's of the rule or an item's of the host) and its settings
// (GraphItem's, ItemID and GItemID unused).
type GraphProtoItem struct {
	Key  string    `json:"key"`
	Item GraphItem `json:"gitem"`
}

// DiscoveredGraph is one graph a discovery result wants: a graph
// prototype expanded for one row, its items' keys expanded.
type DiscoveredGraph struct {
	ProtoID uint64
	Name    string
	Fields  GraphFields
	YMinKey string
	YMaxKey string
	Items   []GraphProtoItem
}

// checkGraphProtos validates l's graph prototypes under p: a name, one
// item at least of which one is an item prototype of the rule (6.0's
// rule), and graph settings as graphs have them.
func checkGraphProtos(l *LLDRule, p string, el *errList) {
	protoKeys := make(map[string]bool, len(l.ItemPrototypes))
	for i := range l.ItemPrototypes {
		protoKeys[l.ItemPrototypes[i].Item.Key] = true
	}
	names := map[string]int{}
	for i := range l.GraphPrototypes {
		gp := &l.GraphPrototypes[i]
		f := p + ".graph_prototypes[" + strconv.Itoa(i) + "]"
		if gp.Name == "" {
			el.addf(f+".name", "cannot be empty")
		} else if first, dup := names[gp.Name]; dup {
			el.addf(f+".name", "graph prototype %q is declared twice (first at graph_prototypes[%d])", gp.Name, first)
		} else {
			names[gp.Name] = i
		}
		if gp.Discover != 0 && gp.Discover != 1 {
			el.addf(f+".discover", "value must be one of 0, 1")
		}
		g := Graph{Name: gp.Name, GraphFields: gp.Fields}
		checkGraphFields(f, &g, el)
		if len(gp.Items) == 0 {
			el.addf(f+".gitems", "missing items for graph prototype %q", gp.Name)
			continue
		}
		hasProto := false
		for j, gi := range gp.Items {
			ip := f + ".gitems[" + strconv.Itoa(j) + "]"
			if gi.Key == "" {
				el.addf(ip+".key", "cannot be empty")
			}
			hasProto = hasProto || protoKeys[gi.Key]
			checkGraphItemFields(ip, &gi.Item, el)
		}
		if !hasProto {
			// Recorded from 6.0.14 (graphprototype.create over items only):
			// "Graph prototype must have at least one item prototype."
			el.addf(f+".gitems", "graph prototype %q must have at least one item prototype", gp.Name)
		}
	}
}

// checkGraphFields checks a graph's settings (not its items) under p.
func checkGraphFields(p string, g *Graph, el *errList) {
	if n := len([]rune(g.Name)); n > maxGraphNameLen {
		el.addf(p+".name", "value is too long (%d characters, the limit is %d)", n, maxGraphNameLen)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"width", g.Width}, {"height", g.Height}} {
		if f.v < minGraphSize || f.v > maxGraphSize {
			el.addf(p+"."+f.name, "value must be one of %d-%d", minGraphSize, maxGraphSize)
		}
	}
	in := func(name string, v int, ok ...int) {
		for _, o := range ok {
			if v == o {
				return
			}
		}
		el.addf(p+"."+name, "value must be one of %s", joinInts(ok))
	}
	in("graphtype", g.GraphType, 0, 1, 2, 3)
	in("show_work_period", g.ShowWorkPeriod, 0, 1)
	in("show_triggers", g.ShowTriggers, 0, 1)
	in("show_legend", g.ShowLegend, 0, 1)
	in("show_3d", g.Show3D, 0, 1)
	in("ymin_type", g.YMinType, 0, 1, 2)
	in("ymax_type", g.YMaxType, 0, 1, 2)
}

// checkGraphItemFields checks one graph item's settings under p.
func checkGraphItemFields(p string, gi *GraphItem, el *errList) {
	if !validColor(gi.Color) {
		el.addf(p+".color", "a colour of six hexadecimal digits is expected")
	}
	in := func(name string, v int, ok ...int) {
		for _, o := range ok {
			if v == o {
				return
			}
		}
		el.addf(p+"."+name, "value must be one of %s", joinInts(ok))
	}
	in("drawtype", gi.DrawType, 0, 1, 2, 3, 4, 5)
	in("yaxisside", gi.YAxisSide, 0, 1)
	in("calc_fnc", gi.CalcFnc, 1, 2, 4, 7, 9)
	in("type", gi.Type, 0, 2)
}

// allocGraphIDs reserves n IDs from the graphs' sequence and returns
// the first.
func (e *Edit) allocGraphIDs(n int) (uint64, error) {
	if n == 0 {
		return 0, nil
	}
	// max(id) in a scalar subquery of its own, as allocIDs does: with
	// the WHERE on the same SELECT, SQLite scans every graph (a link of
	// 2,000 hosts spent 17 % of its CPU here).
	if _, err := e.exec("INSERT OR IGNORE INTO sqlite_sequence (name, seq) SELECT 'graphs', coalesce((SELECT max(id) FROM graphs), 0) WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'graphs')"); err != nil {
		return 0, e.fail(fmt.Errorf("cannot reserve graph prototype IDs: %w", err))
	}
	if _, err := e.exec("UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT max(id) FROM graphs), 0)) + ? WHERE name = 'graphs'", n); err != nil {
		return 0, e.fail(fmt.Errorf("cannot reserve graph prototype IDs: %w", err))
	}
	var last uint64
	if err := e.tx.QueryRowContext(e.ctx, "SELECT seq FROM sqlite_sequence WHERE name = 'graphs'").Scan(&last); err != nil {
		return 0, e.fail(fmt.Errorf("cannot reserve graph prototype IDs: %w", err))
	}
	return last - uint64(n) + 1, nil
}

// assignGraphProtoIDs gives l's graph prototypes without one an ID,
// and a uuid to those of a template's own rule.
func (e *Edit) assignGraphProtoIDs(l *LLDRule, tmpl bool) error {
	n := 0
	for i := range l.GraphPrototypes {
		if l.GraphPrototypes[i].ID == 0 {
			n++
		}
	}
	next, err := e.allocGraphIDs(n)
	if err != nil {
		return err
	}
	for i := range l.GraphPrototypes {
		p := &l.GraphPrototypes[i]
		if p.ID == 0 {
			p.ID = next
			next++
		}
		if tmpl && p.TemplateID == 0 && p.UUID == "" {
			p.UUID = NewUUID()
		}
		if !tmpl {
			p.UUID = ""
		}
		e.assignProtoGItemIDs(p)
	}
	return nil
}

// copyGraphProtos makes l's graph prototypes (a clone of a template
// rule's) the owner's copies: each with the ID of cur's copy of it or
// none (a new one), TemplateID naming the template's prototype, no
// uuid. Keys stay: the owner's copies of the items have the same.
func copyGraphProtos(l, cur *LLDRule) {
	have := map[uint64]uint64{}
	if cur != nil {
		for _, p := range cur.GraphPrototypes {
			have[p.TemplateID] = p.ID
		}
	}
	for i := range l.GraphPrototypes {
		p := &l.GraphPrototypes[i]
		p.TemplateID, p.ID, p.UUID = p.ID, have[p.ID], ""
		var c *GraphPrototype
		if cur != nil && p.ID != 0 {
			for j := range cur.GraphPrototypes {
				if cur.GraphPrototypes[j].ID == p.ID {
					c = &cur.GraphPrototypes[j]
				}
			}
		}
		keepGItemIDs(p, c)
	}
}

// GraphPrototype returns the graph prototype with the ID and its rule,
// or nils (the API's lookups, not a hot path).
func (s *Snapshot) GraphPrototype(id uint64) (*GraphPrototype, *Item) {
	for _, r := range s.Rules() {
		for i := range r.Ext().LLD.GraphPrototypes {
			if r.Ext().LLD.GraphPrototypes[i].ID == id {
				return &r.Ext().LLD.GraphPrototypes[i], r
			}
		}
	}
	return nil, nil
}

// GraphProtoItemID resolves a graph prototype's item key on rule: the
// item prototype's ID, else the host item's; 0 if neither.
func (s *Snapshot) GraphProtoItemID(rule *Item, key string) uint64 {
	if key == "" {
		return 0
	}
	for i := range rule.Ext().LLD.ItemPrototypes {
		if rule.Ext().LLD.ItemPrototypes[i].Item.Key == key {
			return rule.Ext().LLD.ItemPrototypes[i].ID
		}
	}
	if rule.Host != nil {
		for _, it := range rule.Host.Items() {
			if it.Key == key {
				return it.ID
			}
		}
	}
	return 0
}

// protoOnHost finds, among the rules of host in the Edit's view, the
// item prototype with key (key != "") or the graph prototype with name,
// and returns its ID, or 0.
func (e *Edit) protoOnHost(host uint64, key, name string) uint64 {
	for _, r := range e.hostItems(host) {
		if r.Ext().LLD == nil {
			continue
		}
		if key != "" {
			for _, p := range r.Ext().LLD.ItemPrototypes {
				if p.Item.Key == key {
					return p.ID
				}
			}
			continue
		}
		for _, p := range r.Ext().LLD.GraphPrototypes {
			if p.Name == name {
				return p.ID
			}
		}
	}
	return 0
}

// protoHost returns the host of the item prototype (graph false) or
// graph prototype with the ID among host's rules, or 0 if host has
// none such.
func (e *Edit) protoHost(host, id uint64, graph bool) uint64 {
	for _, r := range e.hostItems(host) {
		if r.Ext().LLD == nil {
			continue
		}
		if graph {
			for _, p := range r.Ext().LLD.GraphPrototypes {
				if p.ID == id {
					return host
				}
			}
			continue
		}
		for _, p := range r.Ext().LLD.ItemPrototypes {
			if p.ID == id {
				return host
			}
		}
	}
	return 0
}

// initLastGItem sets the Edit's highest gitemid handed out, once: that
// of the graphs' and graph prototypes' items (one sequence, as 6.0's
// graphs_items).
func (e *Edit) initLastGItem() {
	x := e.extra()
	if x.lastGItem != 0 {
		return
	}
	for _, o := range e.allGraphs() {
		for _, gi := range o.Items {
			x.lastGItem = max(x.lastGItem, gi.GItemID)
		}
	}
	for _, o := range e.old.Graphs() {
		for _, gi := range o.Items {
			x.lastGItem = max(x.lastGItem, gi.GItemID)
		}
	}
	for _, r := range e.old.Rules() {
		for _, gp := range r.Ext().LLD.GraphPrototypes {
			for _, gi := range gp.Items {
				x.lastGItem = max(x.lastGItem, gi.Item.GItemID)
			}
		}
	}
}

// assignProtoGItemIDs gives gp's items without a gitemid a new one.
func (e *Edit) assignProtoGItemIDs(gp *GraphPrototype) {
	x := e.extra()
	for i := range gp.Items {
		if gp.Items[i].Item.GItemID == 0 {
			e.initLastGItem()
			x.lastGItem++
			gp.Items[i].Item.GItemID = x.lastGItem
		}
	}
}

// keepGItemIDs gives w's items the gitemids of cur's items of the same
// key (in order, each once), none to the others.
func keepGItemIDs(w *GraphPrototype, cur *GraphPrototype) {
	used := map[uint64]bool{}
	for i := range w.Items {
		w.Items[i].Item.GItemID = 0
		if cur == nil {
			continue
		}
		for _, c := range cur.Items {
			if c.Key == w.Items[i].Key && !used[c.Item.GItemID] {
				w.Items[i].Item.GItemID = c.Item.GItemID
				used[c.Item.GItemID] = true
				break
			}
		}
	}
}

// GraphPrototypes returns the graph prototypes of rule id in the
// Edit's view (nil if it is no rule); shared, MUST NOT be modified.
func (e *Edit) GraphPrototypes(id uint64) ([]GraphPrototype, bool) {
	it := e.item(id)
	if it == nil || it.Ext().LLD == nil {
		return nil, false
	}
	return it.Ext().LLD.GraphPrototypes, true
}

// UpdateGraphPrototypes sets rule id's graph prototypes to gps (those
// without an ID new), keeping the rest of its configuration, and makes
// the same change to its copies (UpdateRule).
func (e *Edit) UpdateGraphPrototypes(id uint64, gps []GraphPrototype) error {
	it := e.item(id)
	if it == nil || it.Ext().LLD == nil {
		return &FieldError{Field: "ruleid", Err: notFound("discovery rule", id)}
	}
	l := cloneLLD(it.Ext().LLD)
	l.GraphPrototypes = gps
	e.extra() // graphs of a prototype deleted go (syncGraphs)
	return e.UpdateRule(id, l)
}

// graphProtoLive reports whether a discovered graph's rule still has
// its prototype.
func (e *Edit) graphProtoLive(d *Discovery) bool {
	r := e.item(d.RuleID)
	if r == nil || r.Ext().LLD == nil {
		return false
	}
	for _, gp := range r.Ext().LLD.GraphPrototypes {
		if gp.ID == d.ProtoID {
			return true
		}
	}
	return false
}
