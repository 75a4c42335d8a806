package trigger

import (
	"slices"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/expr"
)

// An event's tags, as Zabbix 6.0 makes them (recorded from 6.0.14 with
// zabbix_sender; tags_test.go and the API's item tag golden file hold
// its answers):
//
//   - first the trigger's tags, names and values expanded with the
//     evaluation ({ITEM.VALUE} shown as in event names);
//   - then, for each item of the problem expression in order of first
//     appearance, the item's tags followed by its host's tags; the
//     recovery expression's items add none. These are expanded in the
//     context of the item's host ({HOST.*} and user macros are that
//     host's), with {ITEM.*} macros left as written;
//   - a (tag, value) pair already there is not added again.
//
// Zabbix takes an item's tags in the order of its configuration cache,
// which after the item's tags were edited may differ from the order
// item.get lists them in; Peregrine always takes item.get's order.

// itemMacro reports whether text has a macro whose value comes from the
// evaluation ({ITEM.VALUE}, {ITEM.LASTVALUE} and their indexed forms).
func itemMacro(text string) bool { return strings.Contains(text, "{ITEM.") }

// tagItemMacro reports whether t's own tags have such a macro (its
// items' and hosts' tags leave them as written).
func tagItemMacro(t *catalog.Trigger) bool {
	for _, tg := range t.Tags {
		if itemMacro(tg.Tag) || itemMacro(tg.Value) {
			return true
		}
	}
	return false
}

// tags are the tags of an event of t (see above).
// m.mu is held.
func (m *Machine) tags(snap *catalog.Snapshot, t *catalog.Trigger, mc *MacroContext) []event.Tag {
	var out []event.Tag
	add := func(tg catalog.Tag, mc *MacroContext) {
		e := event.Tag{Tag: m.res.Expand(tg.Tag, mc), Value: m.res.Expand(tg.Value, mc)}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	shown := mc
	for _, tg := range t.Tags {
		vmc := mc
		if itemMacro(tg.Tag) || itemMacro(tg.Value) {
			if shown == mc {
				shown = withValues(mc, displayValues(mc.Snapshot, mc.Result, inName))
			}
			vmc = shown
		}
		add(tg, vmc)
	}
	if snap == nil {
		return out
	}
	var hmc *MacroContext
	for _, id := range m.exprItems(snap, t) {
		it := snap.Item(id)
		if it == nil {
			continue
		}
		h := snap.HostByID(it.HostID)
		if len(it.Tags) == 0 && (h == nil || len(h.Tags) == 0) {
			continue
		}
		if hmc == nil {
			hmc = &MacroContext{Trigger: t, Snapshot: snap}
		}
		hmc.Host = it.HostID
		for _, tg := range it.Tags {
			add(tg, hmc)
		}
		if h != nil {
			for _, tg := range h.Tags {
				add(tg, hmc)
			}
		}
	}
	return out
}

// itemOrder caches, for one snapshot, the items of the problem
// expressions of the triggers that need parsing (more than one item, or
// a recovery expression), in order of first appearance.
type itemOrder struct {
	snap *catalog.Snapshot
	m    map[uint64][]uint64
}

// exprItems returns the items of t's problem expression in order of
// first appearance. A trigger with one item and no recovery expression
// needs no parsing; the others are parsed once per snapshot.
// m.mu is held.
func (m *Machine) exprItems(snap *catalog.Snapshot, t *catalog.Trigger) []uint64 {
	if len(t.ItemIDs) == 1 && t.RecoveryExpression == "" {
		return t.ItemIDs
	}
	if m.order.snap != snap {
		m.order = itemOrder{snap: snap, m: map[uint64][]uint64{}}
	}
	if ids, ok := m.order.m[t.ID]; ok {
		return ids
	}
	ids := t.ItemIDs // if the expression cannot be read (it was when stored)
	if e, err := expr.Parse(t.Expression); err == nil {
		refs := e.ItemRefs()
		ids = make([]uint64, 0, len(refs))
		for _, r := range refs {
			if it := snap.Lookup(r.Host, r.Key); it != nil && !slices.Contains(ids, it.ID) {
				ids = append(ids, it.ID)
			}
		}
	}
	m.order.m[t.ID] = ids
	return ids
}
