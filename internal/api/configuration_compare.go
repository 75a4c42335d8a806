package api

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// configuration.importcompare (Zabbix 6.0's): what configuration.import
// would change, without changing it. The document is checked as the
// import checks it (the same params, ParseExport's refusals), then its
// groups, templates, top-level triggers and graphs are compared with
// the export (catalog.Snapshot.Export) of the groups and templates it
// names by uuid or name, as 6.0.14 compares them (recorded from the
// peer: the conformance case graphs):
//
//   - objects are paired by uuid, or by their unique fields (an item's
//     name and key, a trigger's name and expressions, a graph's name and
//     its items' hosts...); an object of the document without a uuid is
//     left out;
//   - a pair differs when any member but uuid differs, values compared
//     as written (a default written out counts as a change, members'
//     order does not); a changed template or item is split: its own
//     members under "before" and "after", its items, triggers,
//     dashboards... compared the same way beneath it;
//   - the rules keep what the import would do: "added" only with
//     createMissing, "removed" only with deleteMissing, an "updated"
//     object's "after" is its "before" without updateExisting, and a
//     template's linked templates follow templateLinkage.
//
// Nothing changed is [] (PHP's empty array). A rule kind the params do
// not name counts as all false (6.0.14 fails with an HTTP 500 there).

// oMap is a map that keeps its members' order, as PHP's arrays do.
type oMap struct {
	keys []string
	m    map[string]any
}

func newOMap() *oMap { return &oMap{m: map[string]any{}} }

func (o *oMap) get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.m[k]
	return v, ok
}

func (o *oMap) set(k string, v any) {
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

func (o *oMap) del(k string) {
	if _, ok := o.m[k]; !ok {
		return
	}
	delete(o.m, k)
	o.keys = slices.DeleteFunc(o.keys, func(x string) bool { return x == k })
}

func (o *oMap) clone() *oMap {
	n := &oMap{keys: slices.Clone(o.keys), m: make(map[string]any, len(o.m))}
	for k, v := range o.m {
		n.m[k] = v
	}
	return n
}

func (o *oMap) empty() bool { return o == nil || len(o.keys) == 0 }

func (o *oMap) MarshalJSON() ([]byte, error) {
	if o.empty() {
		return []byte("[]"), nil // PHP's empty array
	}
	b := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.m[k])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}

// nodeValue turns a YAML tree into oMaps, []any and strings.
func nodeValue(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return nodeValue(n.Content[0])
		}
		return newOMap()
	case yaml.MappingNode:
		o := newOMap()
		for i := 0; i+1 < len(n.Content); i += 2 {
			o.set(n.Content[i].Value, nodeValue(n.Content[i+1]))
		}
		return o
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			l = append(l, nodeValue(c))
		}
		return l
	case yaml.AliasNode:
		if n.Alias != nil {
			return nodeValue(n.Alias)
		}
	}
	return n.Value
}

// compareNode is one level of what importcompare compares: the lists
// of objects under an object, each with what is under its objects.
type compareNode struct {
	key  string
	subs []compareNode
}

// compareStructure is 6.0's: groups; templates with their items (and
// those's triggers), discovery rules (and their prototypes),
// dashboards, web scenarios and value maps; triggers and graphs.
var compareStructure = []compareNode{
	{key: "groups"},
	{key: "templates", subs: []compareNode{
		{key: "items", subs: []compareNode{{key: "triggers"}}},
		{key: "discovery_rules", subs: []compareNode{
			{key: "item_prototypes", subs: []compareNode{{key: "trigger_prototypes"}}},
			{key: "trigger_prototypes"}, {key: "graph_prototypes"}, {key: "host_prototypes"}}},
		{key: "dashboards"}, {key: "httptests"}, {key: "valuemaps"}}},
	{key: "triggers"},
	{key: "graphs"},
}

// compareRule names the rules that govern each list.
var compareRule = map[string]string{
	"groups": "groups", "templates": "templates", "items": "items", "triggers": "triggers",
	"discovery_rules": "discoveryRules", "item_prototypes": "discoveryRules", "trigger_prototypes": "discoveryRules",
	"graph_prototypes": "discoveryRules", "host_prototypes": "discoveryRules", "dashboards": "templateDashboards",
	"httptests": "httptests", "valuemaps": "valueMaps", "graphs": "graphs",
}

// uniqueFields are the members that pair objects without a common uuid.
var uniqueFields = map[string][]string{
	"groups": {"name"}, "templates": {"template"}, "items": {"name", "key"},
	"triggers": {"name", "expression", "recovery_expression"}, "dashboards": {"name"}, "httptests": {"name"},
	"valuemaps": {"name"}, "discovery_rules": {"name", "key"}, "item_prototypes": {"name", "key"},
	"trigger_prototypes": {"name", "expression", "recovery_expression"}, "host_prototypes": {"host"},
	"graph_prototypes": {"name", "graph_items/item/host"}, "graphs": {"name", "graph_items/item/host"},
}

// uniqueness is an object's pairing key: the distinct values of its
// unique fields, sorted, joined by "/".
func uniqueness(o *oMap, kind string) string {
	var vals []string
	for _, f := range uniqueFields[kind] {
		if path := strings.Split(f, "/"); len(path) == 3 {
			l, _ := o.m[path[0]].([]any)
			for _, e := range l {
				if em, ok := e.(*oMap); ok {
					if im, ok := em.m[path[1]].(*oMap); ok {
						if s, ok := im.m[path[2]].(string); ok {
							vals = append(vals, s)
						}
					}
				}
			}
			continue
		}
		if s, ok := o.m[f].(string); ok {
			vals = append(vals, s)
		}
	}
	slices.Sort(vals)
	return strings.Join(slices.Compact(vals), "/")
}

// looseEqual is PHP's == on the values: members in any order, numeric
// strings as numbers.
func looseEqual(a, b any) bool {
	switch x := a.(type) {
	case *oMap:
		y, ok := b.(*oMap)
		if !ok {
			l, isList := b.([]any)
			return isList && len(l) == 0 && x.empty()
		}
		if len(x.keys) != len(y.keys) {
			return false
		}
		for k, v := range x.m {
			w, ok := y.m[k]
			if !ok || !looseEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			m, isMap := b.(*oMap)
			return isMap && len(x) == 0 && m.empty()
		}
		return slices.EqualFunc(x, y, looseEqual)
	case string:
		y, ok := b.(string)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, ex := strconv.ParseFloat(x, 64)
		fy, ey := strconv.ParseFloat(y, 64)
		return ex == nil && ey == nil && fx == fy
	}
	return a == b
}

// strictEqual is PHP's === on the values: members in the same order.
func strictEqual(a, b any) bool {
	switch x := a.(type) {
	case *oMap:
		y, ok := b.(*oMap)
		if !ok {
			l, isList := b.([]any)
			return isList && len(l) == 0 && x.empty()
		}
		if !slices.Equal(x.keys, y.keys) {
			return false
		}
		for _, k := range x.keys {
			if !strictEqual(x.m[k], y.m[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			m, isMap := b.(*oMap)
			return isMap && len(x) == 0 && m.empty()
		}
		return slices.EqualFunc(x, y, strictEqual)
	}
	return a == b
}

func objects(v any) []*oMap {
	l, _ := v.([]any)
	out := make([]*oMap, 0, len(l))
	for _, e := range l {
		if m, ok := e.(*oMap); ok {
			out = append(out, m)
		}
	}
	return out
}

// listDiff is one list's differences.
type listDiff struct {
	added, removed []*oMap
	updated        []*oMap // {before, after, sublists...}
}

func diffList(before, after []*oMap, kind string) listDiff {
	var d listDiff
	bs := slices.Clone(before)
	var pairs [][2]*oMap
	for _, a := range after {
		au, ok := a.m["uuid"]
		if !ok {
			continue // an object without uuid is left out
		}
		ua := uniqueness(a, kind)
		for i, b := range bs {
			if b == nil {
				continue
			}
			if looseEqual(b.m["uuid"], au) || uniqueness(b, kind) == ua {
				nb := b.clone()
				nb.set("uuid", au)
				pairs = append(pairs, [2]*oMap{nb, a})
				bs[i] = nil
				a = nil
				break
			}
		}
		if a != nil {
			d.added = append(d.added, a)
		}
	}
	for _, b := range bs {
		if b != nil {
			d.removed = append(d.removed, b)
		}
	}
	for _, p := range pairs {
		b, a := p[0].clone(), p[1].clone()
		b.del("uuid")
		a.del("uuid")
		if !looseEqual(b, a) {
			u := newOMap()
			u.set("before", p[0])
			u.set("after", p[1])
			d.updated = append(d.updated, u)
		}
	}
	return d
}

// compareLevel compares before and after (objects, or the documents)
// list by list as structure says; what is left of them goes under
// "before" and "after".
func compareLevel(structure []compareNode, before, after *oMap, rules map[string]catalog.ImportRule) *oMap {
	before, after = before.clone(), after.clone()
	res := newOMap()
	for _, node := range structure {
		bl, _ := before.get(node.key)
		al, _ := after.get(node.key)
		if isEmptyValue(bl) && isEmptyValue(al) {
			continue
		}
		d := diffList(objects(bl), objects(al), node.key)
		for i, e := range d.added {
			d.added[i] = compareLevel(node.subs, newOMap(), e, rules)
		}
		for i, e := range d.removed {
			d.removed[i] = compareLevel(node.subs, e, newOMap(), rules)
		}
		if len(node.subs) > 0 {
			for i, e := range d.updated {
				b, _ := e.m["before"].(*oMap)
				a, _ := e.m["after"].(*oMap)
				d.updated[i] = compareLevel(node.subs, b, a, rules)
			}
		}
		out := applyCompareRules(rules, node.key, d)
		before.del(node.key)
		after.del(node.key)
		if !out.empty() {
			res.set(node.key, out)
		}
	}
	obj := newOMap()
	if !before.empty() {
		obj.set("before", before)
	}
	if !after.empty() {
		obj.set("after", after)
	}
	for _, k := range res.keys {
		obj.set(k, res.m[k])
	}
	return obj
}

func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0
	case *oMap:
		return x.empty()
	case string:
		return x == "" || x == "0"
	}
	return false
}

// applyCompareRules keeps of a list's differences what the rules let
// the import do.
func applyCompareRules(rules map[string]catalog.ImportRule, kind string, d listDiff) *oMap {
	r := rules[compareRule[kind]]
	linked := map[*oMap]any{}
	if kind == "templates" {
		link := rules["templateLinkage"]
		kept := d.updated[:0:0]
		for _, e := range d.updated {
			b, _ := e.m["before"].(*oMap)
			a, _ := e.m["after"].(*oMap)
			bt, hasB := b.get("templates")
			at, hasA := a.get("templates")
			if !hasB && !hasA {
				kept = append(kept, e)
				continue
			}
			if !hasB {
				bt = []any{}
			}
			if !hasA {
				at = []any{}
			}
			if strictEqual(bt, at) {
				kept = append(kept, e)
				continue
			}
			bl, _ := bt.([]any)
			al, _ := at.([]any)
			in := func(l []any, x any) bool {
				return slices.ContainsFunc(l, func(y any) bool { return strictEqual(x, y) })
			}
			switch {
			case !link.CreateMissing && !link.DeleteMissing:
				al = bl
			case link.CreateMissing && !link.DeleteMissing:
				n := slices.Clone(bl)
				for _, x := range al {
					if !in(bl, x) {
						n = append(n, x)
					}
				}
				al = n
			case link.DeleteMissing && !link.CreateMissing:
				var n []any
				for _, x := range al {
					if in(bl, x) {
						n = append(n, x)
					}
				}
				al = n
			}
			na := a.clone()
			if hasA || len(al) > 0 {
				na.set("templates", al)
			}
			if len(e.keys) == 2 && strictEqual(b, na) {
				continue // nothing left to change
			}
			linked[e] = al
			kept = append(kept, e)
		}
		d.updated = kept
	}
	out := newOMap()
	if r.CreateMissing && len(d.added) > 0 {
		out.set("added", toAny(d.added))
	}
	if r.DeleteMissing && len(d.removed) > 0 {
		out.set("removed", toAny(d.removed))
	}
	var updated []any
	for _, e := range d.updated {
		b, _ := e.m["before"].(*oMap)
		a, _ := e.m["after"].(*oMap)
		l, hasLinked := linked[e]
		if len(e.keys) <= 2 && !hasLinked && strictEqual(a, b) {
			continue
		}
		e = e.clone()
		if !r.UpdateExisting {
			a = b
		}
		if ll, _ := l.([]any); hasLinked && len(ll) > 0 {
			a = a.clone()
			a.set("templates", l)
		}
		// After's members in before's order, then its own.
		na := newOMap()
		if b != nil {
			for _, k := range b.keys {
				if v, ok := a.get(k); ok {
					na.set(k, v)
				}
			}
		}
		if a != nil {
			for _, k := range a.keys {
				na.set(k, a.m[k])
			}
		}
		e.set("after", na)
		updated = append(updated, e)
	}
	if len(updated) > 0 {
		out.set("updated", updated)
	}
	return out
}

func toAny(l []*oMap) []any {
	out := make([]any, len(l))
	for i, x := range l {
		out[i] = x
	}
	return out
}

func (s *Server) configurationImportcompare(ctx context.Context, c *call) (any, error) {
	p, err := decodeImportParams(c.params)
	if err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	if !a.all() {
		return nil, errNoPermissions // configuration.import's rule
	}
	if _, err := parseImportSource(p); err != nil {
		return nil, err
	}
	tree, err := catalog.ParseExportTree(p.format, []byte(p.source))
	if err != nil {
		return nil, importError(err)
	}
	doc, _ := nodeValue(tree).(*oMap)
	imp, _ := doc.get("zabbix_export")
	after, _ := imp.(*oMap)
	if after == nil {
		after = newOMap()
	}
	snap := s.opts.Catalog.Snapshot()
	var groups, tmpls []uint64
	for _, g := range objects(after.m["groups"]) {
		name, _ := g.m["name"].(string)
		if gr := snap.Group(name); gr != nil {
			groups = append(groups, gr.ID)
		}
	}
	for _, t := range objects(after.m["templates"]) {
		name, _ := t.m["template"].(string)
		uuid, _ := t.m["uuid"].(string)
		for _, h := range snap.Templates() {
			if h.Host == name || uuid != "" && h.Ext().UUID == uuid {
				tmpls = append(tmpls, h.ID)
			}
		}
	}
	before := newOMap()
	if len(groups)+len(tmpls) > 0 {
		raw, err := snap.Export(catalog.ExportOptions{Groups: groups, Templates: tmpls, Format: catalog.FormatJSON})
		if err != nil {
			return nil, errApp("%v", err)
		}
		var n yaml.Node
		if err := yaml.Unmarshal(raw, &n); err != nil {
			return nil, errApp("%v", err)
		}
		if d, ok := nodeValue(&n).(*oMap); ok {
			if x, ok := d.get("zabbix_export"); ok {
				before, _ = x.(*oMap)
			}
		}
	}
	res := compareLevel(compareStructure, keep(before), keep(after), p.rules)
	if res.empty() {
		return []any{}, nil
	}
	return rawJSON(compareJSON(res)), nil
}

// keep is a document's members that importcompare compares.
func keep(doc *oMap) *oMap {
	out := newOMap()
	for _, n := range compareStructure {
		if v, ok := doc.get(n.key); ok {
			out.set(n.key, v)
		}
	}
	return out
}

func compareJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("BUG: importcompare's answer does not encode: " + err.Error())
	}
	return bytes.TrimSpace(b.Bytes())
}
