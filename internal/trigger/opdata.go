package trigger

import "github.com/peregrine-mon/peregrine/internal/catalog"

// opdata expands t's operational data. {ITEM.VALUE} and {ITEM.LASTVALUE}
// there show the item's value through its value map, "Up (1)", as
// Zabbix's frontend shows operational data (Zabbix 6.0's
// CValueMapHelper format: the mapped text, the value in parentheses); a
// value no mapping matches, or of an item without a map, is shown as it
// is. Names and tags keep the plain value, unchanged: alert texts and
// tag correlation read them, and changing what they hold is a separate
// decision.
//
// It is here, not in MacroResolver, so that the resolver (shared by
// names, tags and opdata) stays as it is and only the opdata path pays
// for the map lookups, and only when the trigger has operational data.
func (m *Machine) opdata(t *catalog.Trigger, mc *MacroContext) string {
	if t.Opdata == "" {
		return ""
	}
	if r := mappedValues(mc.Snapshot, mc.Result); r != mc.Result {
		c := *mc
		c.Result = r
		mc = &c
	}
	return m.res.Expand(t.Opdata, mc)
}

// mappedValues returns r with its item values passed through their
// items' value maps, or r itself when no value maps to anything (no
// copy on the common path).
func mappedValues(snap *catalog.Snapshot, r *Result) *Result {
	if snap == nil || r == nil || len(r.ItemIDs) != len(r.ItemValues) {
		return r
	}
	var vals []string
	for i, id := range r.ItemIDs {
		it := snap.Item(id)
		if it == nil || it.ValueMapID == 0 {
			continue
		}
		vm := snap.ValueMap(it.ValueMapID)
		if vm == nil {
			continue
		}
		v := r.ItemValues[i]
		if v == "UNKNOWN" {
			continue
		}
		mapped, ok := vm.Map(v)
		if !ok {
			continue
		}
		if vals == nil {
			vals = append([]string(nil), r.ItemValues...)
		}
		vals[i] = mapped + " (" + v + ")"
	}
	if vals == nil {
		return r
	}
	c := *r
	c.ItemValues = vals
	return &c
}
