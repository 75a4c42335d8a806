package lld

import (
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// ExpandGraphs computes the graphs a rule's rows want: each graph
// prototype expanded for each row that passes the filter (its name's
// LLD macros replaced, its item prototypes' keys expanded), unless the
// prototype or an override's graph operation says not to discover, or
// one of its item prototypes is not among items (what Expand made for
// the rows): 6.0 creates a graph only over items that exist.
func ExpandGraphs(snap *catalog.Snapshot, rule *catalog.Item, rows []Row, exp expander, items []catalog.DiscoveredItem) []catalog.DiscoveredGraph {
	l := rule.Ext().LLD
	if len(l.GraphPrototypes) == 0 {
		return nil
	}
	if exp == nil {
		exp = func(s string) string { return s }
	}
	m := &matcher{snap: snap}
	protoKey := make(map[string]bool, len(l.ItemPrototypes))
	for i := range l.ItemPrototypes {
		protoKey[l.ItemPrototypes[i].Item.Key] = true
	}
	made := make(map[string]bool, len(items))
	for i := range items {
		made[items[i].Item.Key] = true
	}
	var out []catalog.DiscoveredGraph
	seen := map[string]bool{}
	for ri := range rows {
		row := &rows[ri]
		if !m.pass(&l.Filter, row, exp) {
			continue
		}
		discover := m.graphOverrides(l, row, exp)
	protos:
		for gi := range l.GraphPrototypes {
			gp := &l.GraphPrototypes[gi]
			d := gp.Discover
			if o, ok := discover[gi]; ok {
				d = o
			}
			if d == 1 {
				continue
			}
			key := func(k string) (string, bool) {
				if !protoKey[k] {
					return k, true // an item of the host
				}
				x := substKey(k, row)
				return x, made[x]
			}
			dg := catalog.DiscoveredGraph{ProtoID: gp.ID, Name: subst(gp.Name, row), Fields: gp.Fields}
			var sig strings.Builder
			sig.WriteString(dg.Name)
			for _, it := range gp.Items {
				k, ok := key(it.Key)
				if !ok {
					continue protos
				}
				sig.WriteString("\x00" + k)
				dg.Items = append(dg.Items, catalog.GraphProtoItem{Key: k, Item: it.Item})
			}
			if gp.YMinKey != "" {
				dg.YMinKey, _ = key(gp.YMinKey)
			}
			if gp.YMaxKey != "" {
				dg.YMaxKey, _ = key(gp.YMaxKey)
			}
			s := strconv.Itoa(gi) + "\x00" + sig.String()
			if seen[s] {
				continue // two rows giving one graph: the first wins
			}
			seen[s] = true
			out = append(out, dg)
		}
	}
	return out
}

// graphOverrides returns, per graph prototype (by index), the discover
// setting the rule's overrides give it for the row (6.0's graph
// prototype operations set discover only).
func (m *matcher) graphOverrides(l *catalog.LLDRule, row *Row, exp expander) map[int]int {
	var out map[int]int
	for oi := range l.Overrides {
		o := &l.Overrides[oi]
		if !m.pass(&o.Filter, row, exp) {
			continue
		}
		for pi := range o.Operations {
			op := &o.Operations[pi]
			if op.Object != catalog.OpObjectGraph || op.Discover == nil {
				continue
			}
			for i := range l.GraphPrototypes {
				if m.opMatches(op, l.GraphPrototypes[i].Name) {
					if out == nil {
						out = map[int]int{}
					}
					out[i] = *op.Discover
				}
			}
		}
		if o.Stop == 1 {
			break
		}
	}
	return out
}
