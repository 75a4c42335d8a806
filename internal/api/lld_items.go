package api

import (
	"encoding/json"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Zabbix 6.0 keeps discovery rules (flags 1) and item prototypes
// (flags 2) in its items table, and item.get, host.get's selectItems,
// template.get's and zabbix[items] see only flags 0 and 4 (ordinary and
// discovered items), recorded from 6.0.14. In Peregrine a rule is a
// catalog item (Item.LLD) and a prototype is part of its rule; these
// helpers give the API's views the items 6.0 shows.

// listedItems returns a host's or template's items as item.get lists
// them: its discovery rules left out. The host's own slice is returned
// when it has no rule.
func listedItems(h *catalog.Host) []*catalog.Item {
	all := h.Items()
	n := 0
	for _, it := range all {
		if it.Ext().LLD == nil {
			n++
		}
	}
	if n == len(all) {
		return all
	}
	out := make([]*catalog.Item, 0, n)
	for _, it := range all {
		if it.Ext().LLD == nil {
			out = append(out, it)
		}
	}
	return out
}

// hostRules returns a host's or template's discovery rules, ascending
// by ID as its items are.
func hostRules(h *catalog.Host) []*catalog.Item {
	var out []*catalog.Item
	for _, it := range h.Items() {
		if it.Ext().LLD != nil {
			out = append(out, it)
		}
	}
	return out
}

// itemUpdatable reports whether item.update may change an item: 6.0
// refuses discovery rules (they are discoveryrule.update's) with "No
// permissions to referred object or it does not exist!" (recorded from
// 6.0.14); a discovered item takes its status only (lld_inherited.go).
// item.delete deletes a discovered item but refuses a rule
// (itemDeletable).
func itemUpdatable(it *catalog.Item) bool {
	return it == nil || it.Ext().LLD == nil && it.Type != catalog.WebItem
}

// itemDeletable: neither a discovery rule nor a web scenario's item,
// which go with their rule or scenario (6.0.14 answers both with
// errNoPermissions).
func itemDeletable(it *catalog.Item) bool {
	return it == nil || it.Ext().LLD == nil && it.Type != catalog.WebItem
}

// RuleErrors gives a discovery rule's error when its last value was
// applied but some objects could not be made (lld.Engine.RuleError).
type RuleErrors interface {
	RuleError(rule uint64) string
}

// ruleNotFields are the item fields a discovery rule object of 6.0 does
// not have (recorded from 6.0.14's discoveryrule.get "extend"): a rule
// keeps no values, and its evaltype and formula are its filter's.
var ruleNotFields = []string{"lastclock", "lastns", "lastvalue", "prevvalue", "evaltype", "formula", "output_format"}

// ruleObjects returns discovery rules as 6.0's discoveryrule.get
// objects with every field ("extend"): the item's fields (itemObjects)
// less what rules lack, with discover "0" and the engine's error.
func (s *Server) ruleObjects(rules []*catalog.Item) []object {
	if len(rules) == 0 {
		return []object{}
	}
	raw := s.itemObjects(rules, sel{Set: true, All: true})
	var out []object
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != len(rules) {
		panic("BUG: item objects do not decode: " + string(raw))
	}
	for i, o := range out {
		for _, f := range ruleNotFields {
			delete(o, f)
		}
		o["discover"] = "0"
		// A rule keeps no values: its history is the column's default
		// and its timeout the default one when its type has none, as
		// 6.0 stores them (recorded from 6.0.14).
		o["history"] = "90d"
		if o["timeout"] == "" {
			o["timeout"] = "3s"
		}
		wrapLists(o)
		if s.opts.RuleErrors != nil && o["state"] == "0" {
			o["error"] = s.opts.RuleErrors.RuleError(rules[i].ID)
		}
	}
	return out
}

// discoveryRuleOf is item.get's selectDiscoveryRule of an item: the
// rule of a discovered item (its fields as discoveryrule.get gives
// them, "itemid" always), [] for any other item (recorded from 6.0.14).
func (s *Server) discoveryRuleOf(snap *catalog.Snapshot, it *catalog.Item, sd sel) any {
	if it.Discovery == nil {
		return []object{}
	}
	rule := snap.AnyItem(it.Discovery.RuleID)
	if rule == nil {
		return []object{}
	}
	o := s.ruleObjects([]*catalog.Item{rule})
	return sd.shape(o, "itemid")[0]
}

// itemDiscoveryOf is item.get's selectItemDiscovery: for a discovered
// item its rule's prototype (parent_itemid, the prototype's key_), when
// it was last discovered (lastcheck: the rule's newest value, Peregrine
// stores no per-item time) and when it goes (ts_delete); [] for other
// items. itemdiscoveryid is the item's ID (Peregrine has no separate
// row).
func (s *Server) itemDiscoveryOf(snap *catalog.Snapshot, it *catalog.Item, sd sel) any {
	d := it.Discovery
	if d == nil {
		return []object{}
	}
	key := ""
	if rule := snap.AnyItem(d.RuleID); rule != nil && rule.Ext().LLD != nil {
		for i := range rule.Ext().LLD.ItemPrototypes {
			if p := &rule.Ext().LLD.ItemPrototypes[i]; p.ID == d.ProtoID {
				key = p.Item.Key
			}
		}
	}
	var lastcheck int64
	if s.opts.Last != nil {
		if last, _, ok := s.opts.Last.Last(d.RuleID); ok {
			lastcheck = last.Clock
		}
	}
	id := strconv.FormatUint(it.ID, 10)
	o := object{"itemdiscoveryid": id, "itemid": id, "parent_itemid": strconv.FormatUint(d.ProtoID, 10),
		"key_": key, "lastcheck": strconv.FormatInt(lastcheck, 10), "ts_delete": strconv.FormatInt(d.TSDelete, 10)}
	return sd.shape([]object{o}, "")[0]
}

// triggerFlags is a trigger's Zabbix flags: "4" for a discovered one.
func triggerFlags(t *catalog.Trigger) string {
	if t.Discovery != nil {
		return "4"
	}
	return "0"
}

// wrapLists marks an item object's list fields as fields (not nested
// selections), so that output shapes them as the fields they are.
func wrapLists(o object) {
	for _, f := range []string{"headers", "query_fields", "parameters"} {
		if v, ok := o[f]; ok {
			o[f] = field{v}
		}
	}
}
