package trigger

import (
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// How {ITEM.VALUE} and {ITEM.LASTVALUE} show a value, as the Zabbix 6.0
// server writes them (recorded from 6.0.14 on 2026-11-29: an unsigned
// item with units "B" and a value map 1 → "Up", a trigger with the macro
// in its name, operational data and a tag value, problem.get read back):
//
//	value  name, tag value   operational data
//	1      "Up (1)"          "Up (1 B)"
//	2048   "2 KB"            "2 KB"
//
// A value its item's value map maps shows as the mapped text with the
// value in parentheses (in operational data the value carries its
// units); any other numeric value carries its units (package zbx/units:
// "1.4 GB", "1h 2m 5s"); text values show as they are.

// display says where a value is shown.
type display int

const (
	inName   display = iota // event names and tag values
	inOpdata                // operational data
)

// name expands t's event name.
func (m *Machine) name(t *catalog.Trigger, mc *MacroContext) string {
	text := eventName(t)
	if !itemMacro(text) {
		return m.res.Expand(text, mc)
	}
	return m.res.Expand(text, withValues(mc, displayValues(mc.Snapshot, mc.Result, inName)))
}

// opdata expands t's operational data.
//
// It is here, not in MacroResolver, so that the resolver (shared by
// names, tags and opdata) stays as it is and only the paths that show
// item values pay for the lookups, and only when the text has one.
func (m *Machine) opdata(t *catalog.Trigger, mc *MacroContext) string {
	if t.Opdata == "" {
		return ""
	}
	if !itemMacro(t.Opdata) {
		return m.res.Expand(t.Opdata, mc)
	}
	return m.res.Expand(t.Opdata, withValues(mc, displayValues(mc.Snapshot, mc.Result, inOpdata)))
}

// ShowValues returns r with its item values shown as in event names, for
// readers that expand names themselves (trigger.get's expandDescription).
func ShowValues(snap *catalog.Snapshot, r *Result) *Result { return displayValues(snap, r, inName) }

// withValues returns mc with r as its result (mc itself if r is its own).
func withValues(mc *MacroContext, r *Result) *MacroContext {
	if r == mc.Result {
		return mc
	}
	c := *mc
	c.Result = r
	return &c
}

// displayValues returns r with its item values shown as Zabbix shows them
// where d says, or r itself when none changes (no copy on the common
// path).
func displayValues(snap *catalog.Snapshot, r *Result, d display) *Result {
	if snap == nil || r == nil || len(r.ItemIDs) != len(r.ItemValues) {
		return r
	}
	var vals []string
	for i, id := range r.ItemIDs {
		v := r.ItemValues[i]
		it := snap.Item(id)
		if it == nil || v == "UNKNOWN" {
			continue
		}
		shown := snap.ValueText(it, v, d == inOpdata, time.Local)
		if shown == v {
			continue
		}
		if vals == nil {
			vals = append([]string(nil), r.ItemValues...)
		}
		vals[i] = shown
	}
	if vals == nil {
		return r
	}
	c := *r
	c.ItemValues = vals
	return &c
}
