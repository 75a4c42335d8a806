package catalog

import (
	"fmt"
	"strings"
)

// discoverGraphs creates, updates and loses the rule's discovered
// graphs (ApplyDiscovery's part for graphs). A discovered graph is
// known by its prototype and its items' keys: its name may change on
// rediscovery. A graph whose items are not all on the host (an item
// prototype that failed) is skipped with a message; one no longer
// discovered is lost like an item (TSDelete) and deleted when its time
// comes, or with its items.
func (e *Edit) discoverGraphs(rule *Item, host *Host, r *DiscoveryResult) ([]string, error) {
	if len(rule.Ext().LLD.GraphPrototypes) == 0 && len(r.Graphs) == 0 {
		return nil, nil // none made; those of deleted prototypes go in syncGraphs
	}
	type key struct {
		proto uint64
		items string
	}
	graphKey := func(proto uint64, ids []uint64) key {
		var b strings.Builder
		for _, id := range ids {
			fmt.Fprintf(&b, "%d,", id)
		}
		return key{proto, b.String()}
	}
	have := map[key]*Graph{}
	var mine []*Graph
	for _, g := range e.HostGraphs(host.ID) {
		if d := g.Discovery; d != nil && d.RuleID == rule.ID {
			ids := make([]uint64, len(g.Items))
			for i, gi := range g.Items {
				ids[i] = gi.ItemID
			}
			have[graphKey(d.ProtoID, ids)] = g
			mine = append(mine, g)
		}
	}
	var msgs []string
	wanted := map[uint64]bool{}
	for i := range r.Graphs {
		dg := &r.Graphs[i]
		g := Graph{HostID: host.ID, Name: dg.Name, GraphFields: dg.Fields, Discovery: &Discovery{RuleID: rule.ID, ProtoID: dg.ProtoID}}
		ids := make([]uint64, len(dg.Items))
		missing := ""
		for j, gi := range dg.Items {
			ids[j] = e.itemByKey(host.ID, gi.Key)
			if ids[j] == 0 && missing == "" {
				missing = gi.Key
			}
			item := gi.Item
			item.ItemID, item.GItemID = ids[j], 0
			g.Items = append(g.Items, item)
		}
		g.YMinItemID, g.YMaxItemID = 0, 0
		if g.YMinType == 2 {
			if g.YMinItemID = e.itemByKey(host.ID, dg.YMinKey); g.YMinItemID == 0 {
				g.YMinType = 0
			}
		}
		if g.YMaxType == 2 {
			if g.YMaxItemID = e.itemByKey(host.ID, dg.YMaxKey); g.YMaxItemID == 0 {
				g.YMaxType = 0
			}
		}
		cur := have[graphKey(dg.ProtoID, ids)]
		if missing != "" {
			msgs = append(msgs, fmt.Sprintf("Cannot %s graph %q: item %q does not exist.", createOrUpdateGraph(cur), dg.Name, missing))
			if cur != nil {
				wanted[cur.ID] = true // kept as it was
			}
			continue
		}
		var el errList
		e.checkGraph("graph", &g, &el)
		if o := e.graphByName(host.ID, g.Name); o != nil && (cur == nil || o.ID != cur.ID) {
			// Recorded from 6.0.14's graph.create: a graph's name is unique
			// on its host.
			el.addf("graph.name", "graph with name %q already exists in graphs or graph prototypes", g.Name)
		}
		if err := el.err(); err != nil {
			msgs = append(msgs, fmt.Sprintf("Cannot %s graph: %v.", createOrUpdateGraph(cur), err))
			if cur != nil {
				wanted[cur.ID] = true
			}
			continue
		}
		g.UUID = ""
		if cur == nil {
			id, err := e.insertGraph(&g)
			if err != nil {
				return nil, err
			}
			wanted[id] = true
			continue
		}
		wanted[cur.ID] = true
		g.ID = cur.ID
		if !sameGraph(cur, &g) {
			if err := e.writeGraph(&g); err != nil {
				return nil, err
			}
		}
	}
	for _, g := range mine {
		if wanted[g.ID] {
			continue
		}
		d := *g.Discovery
		switch {
		case r.Lifetime == 0 || d.TSDelete != 0 && r.Now >= d.TSDelete:
			if err := e.removeGraph(g.ID); err != nil {
				return nil, err
			}
		case d.TSDelete == 0:
			d.TSDelete = r.Now + r.Lifetime
			n := *g
			n.Discovery = &d
			if err := e.writeGraph(&n); err != nil {
				return nil, err
			}
		}
	}
	return msgs, nil
}

func createOrUpdateGraph(cur *Graph) string {
	if cur == nil {
		return "create"
	}
	return "update"
}
