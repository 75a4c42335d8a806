package trigger

import (
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/zbx/units"
)

// opdata expands t's operational data. {ITEM.VALUE} and {ITEM.LASTVALUE}
// there show the item's value through its value map, "Up (1)", as
// Zabbix's frontend shows operational data (Zabbix 6.0's
// CValueMapHelper format: the mapped text, the value in parentheses); a
// value no mapping matches, or of an item without a map, is shown with
// its units as in names.
//
// It is here, not in MacroResolver, so that the resolver (shared by
// names, tags and opdata) stays as it is and only the opdata path pays
// for the map lookups, and only when the trigger has operational data.
func (m *Machine) opdata(t *catalog.Trigger, mc *MacroContext) string {
	if t.Opdata == "" {
		return ""
	}
	return m.res.Expand(t.Opdata, withValues(mc, unitValues(mc.Snapshot, mappedValues(mc.Snapshot, mc.Result), mc.Result)))
}

// name expands t's event name. {ITEM.VALUE} and {ITEM.LASTVALUE} there
// show the value with its item's units, as the Zabbix 6.0 server writes
// them into problem names ("Low memory (1.4 GB left)"; package
// zbx/units has the rules, recorded from it). Tags keep the plain value:
// tag correlation and tag filters compare it.
func (m *Machine) name(t *catalog.Trigger, mc *MacroContext) string {
	text := eventName(t)
	if !itemMacro(text) {
		return m.res.Expand(text, mc)
	}
	return m.res.Expand(text, withValues(mc, unitValues(mc.Snapshot, mc.Result, nil)))
}

// withValues returns mc with r as its result (mc itself if r is its own).
func withValues(mc *MacroContext, r *Result) *MacroContext {
	if r == mc.Result {
		return mc
	}
	c := *mc
	c.Result = r
	return &c
}

// unitValues returns r with the numeric values of items that have units
// formatted with them, or r itself when there are none (no copy on the
// common path). A value that differs from the same position of skip
// (already mapped by a value map) is left as it is.
func unitValues(snap *catalog.Snapshot, r, skip *Result) *Result {
	if snap == nil || r == nil || len(r.ItemIDs) != len(r.ItemValues) {
		return r
	}
	var vals []string
	for i, id := range r.ItemIDs {
		if skip != nil && skip != r && r.ItemValues[i] != skip.ItemValues[i] {
			continue
		}
		it := snap.Item(id)
		if it == nil || it.Units == "" || (it.ValueType != history.Float && it.ValueType != history.Uint) {
			continue
		}
		v := r.ItemValues[i]
		f := units.Format(v, it.Units, time.Local)
		if f == v {
			continue
		}
		if vals == nil {
			vals = append([]string(nil), r.ItemValues...)
		}
		vals[i] = f
	}
	if vals == nil {
		return r
	}
	c := *r
	c.ItemValues = vals
	return &c
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
