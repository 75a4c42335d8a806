package catalog

import "strconv"

// exportGraphProtos validates a discovery rule's graph_prototypes (the
// graphs' export form with discover) into GraphPrototypes, their items
// by key (checkGraphProtoHosts checks the hosts they name).
func exportGraphProtos(xs []GraphSpec, p string, el *errList) []GraphPrototype {
	if len(xs) == 0 {
		return nil
	}
	plain := make([]GraphSpec, len(xs))
	copy(plain, xs)
	disc := make([]int, len(xs))
	for i := range plain {
		d, err := enumValue(plain[i].Discover, discoverNames, 0)
		if err != nil {
			el.add(p+"["+strconv.Itoa(i)+"].discover", err)
		}
		disc[i], plain[i].Discover = d, ""
	}
	sgs := graphSpecs(plain, p, el)
	out := make([]GraphPrototype, 0, len(sgs))
	for i, sg := range sgs {
		gp := GraphPrototype{UUID: sg.g.UUID, Name: sg.g.Name, Discover: disc[i], Fields: sg.g.GraphFields}
		if sg.ymin != nil {
			gp.YMinKey = sg.ymin.Key
		}
		if sg.ymax != nil {
			gp.YMaxKey = sg.ymax.Key
		}
		for j, gi := range sg.g.Items {
			gp.Items = append(gp.Items, GraphProtoItem{Key: sg.items[j].Key, Item: gi})
		}
		out = append(out, gp)
	}
	return out
}

// checkGraphProtoHosts checks that the graph prototypes of a template's
// discovery rule name items of the template itself (tmpl), as 6.0's
// exports do.
func checkGraphProtoHosts(xs []GraphSpec, tmpl, p string, el *errList) {
	for i := range xs {
		f := p + "[" + strconv.Itoa(i) + "]"
		for j, gi := range xs[i].GraphItems {
			if gi.Item.Host != "" && gi.Item.Host != tmpl {
				el.addf(f+".graph_items["+strconv.Itoa(j)+"].item.host", "a graph prototype of template %q can show only its items and item prototypes, not %q's", tmpl, gi.Item.Host)
			}
		}
		for _, y := range []struct {
			name string
			r    *ItemRefSpec
		}{{"ymin_item_1", xs[i].YMinItem}, {"ymax_item_1", xs[i].YMaxItem}} {
			if y.r != nil && y.r.Host != tmpl {
				el.addf(f+"."+y.name+".host", "a graph prototype of template %q can name only its items and item prototypes, not %q's", tmpl, y.r.Host)
			}
		}
	}
}

// matchGraphProtos gives w's graph prototypes the IDs of cur's of the
// same name: an import updates them in place.
func matchGraphProtos(w, cur *LLDRule) {
	for i := range w.GraphPrototypes {
		g := &w.GraphPrototypes[i]
		for j := range cur.GraphPrototypes {
			c := &cur.GraphPrototypes[j]
			if c.Name == g.Name {
				g.ID, g.TemplateID = c.ID, c.TemplateID
				if g.UUID == "" {
					g.UUID = c.UUID
				}
				keepGItemIDs(g, c)
			}
		}
	}
}

// protoRef names an item prototype ({host, key}) or graph prototype
// ({host, name}) for an export, or nil.
func (x *exporter) protoRef(id uint64, graph bool) *exportNode {
	if graph {
		gp, rule := x.s.GraphPrototype(id)
		if gp == nil || rule.Host == nil {
			return nil
		}
		m := newMap()
		m.req("host", rule.Host.Host)
		m.req("name", gp.Name)
		return m
	}
	ip, rule := x.s.ItemPrototype(id)
	if ip == nil || rule.Host == nil {
		return nil
	}
	m := newMap()
	m.req("host", rule.Host.Host)
	m.req("key", ip.Item.Key)
	return m
}

// graphPrototypes writes a rule's graph prototypes as 6.0.14 exports
// them (recorded from the peer): sorted by name, a graph's members,
// items named by the rule's host and their key, discover last.
func (x *exporter) graphPrototypes(h *Host, l *LLDRule) *exportNode {
	gs := make([]*GraphPrototype, 0, len(l.GraphPrototypes))
	for i := range l.GraphPrototypes {
		gs = append(gs, &l.GraphPrototypes[i])
	}
	out := newList()
	for _, gp := range natSorted(gs, func(g *GraphPrototype) string { return g.Name }) {
		// The graph's items are numbered by position; ref names them.
		keys := make([]string, 0, len(gp.Items)+2)
		g := Graph{UUID: gp.UUID, Name: gp.Name, GraphFields: gp.Fields}
		for _, gi := range gp.Items {
			it := gi.Item
			keys = append(keys, gi.Key)
			it.ItemID = uint64(len(keys))
			g.Items = append(g.Items, it)
		}
		if gp.YMinKey != "" {
			keys = append(keys, gp.YMinKey)
			g.YMinItemID = uint64(len(keys))
		}
		if gp.YMaxKey != "" {
			keys = append(keys, gp.YMaxKey)
			g.YMaxItemID = uint64(len(keys))
		}
		m := x.graphNode(&g, func(i uint64) *exportNode {
			if i == 0 || int(i) > len(keys) {
				return nil
			}
			r := newMap()
			r.req("host", h.Host)
			r.req("key", keys[i-1])
			return r
		})
		if gp.Discover == 1 {
			m.req("discover", "NO_DISCOVER")
		}
		out.add(m)
	}
	return out
}
