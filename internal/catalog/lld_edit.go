package catalog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// lldMacroRe is an LLD macro's syntax: {#NAME}, NAME of upper-case
// letters, digits, '_' and '.'.
var lldMacroRe = regexp.MustCompile(`^\{#[A-Z0-9_.]+\}$`)

// checkRule validates a discovery rule's configuration for the item it
// (on h) and makes the item a rule: text, no history, no trends.
func (e *Edit) checkRule(it *Item, l *LLDRule, h *Host, p string, el *errList) {
	it.MutExt().LLD = l
	it.ValueType = history.Text
	it.History, it.HistorySeconds, it.Trends, it.TrendsSeconds = "0", 0, "0", 0
	checkLLDRule(l, it.Key, p, el)
}

// checkLLDRule validates l (a rule with key key) under p.
func checkLLDRule(l *LLDRule, key, p string, el *errList) {
	if l.Lifetime == "" {
		l.Lifetime = DefaultLifetime
	}
	if !strings.Contains(l.Lifetime, "{$") {
		if secs, err := delay.ParseSeconds(l.Lifetime); err != nil {
			el.addf(p+".lifetime", "invalid lifetime %q: %v", l.Lifetime, err)
		} else if secs != 0 && (secs < 3600 || secs > 25*365*86400) {
			// Recorded from 6.0.14: "Incorrect value for field "lifetime":
			// value must be one of 0, 3600-788400000."
			el.addf(p+".lifetime", "value must be one of 0, 3600-788400000")
		}
	}
	checkLLDFilter(&l.Filter, p+".filter", el)
	for i, mp := range l.MacroPaths {
		f := p + ".lld_macro_paths[" + strconv.Itoa(i) + "]"
		if !lldMacroRe.MatchString(mp.Macro) {
			el.addf(f+".lld_macro", "%q is not an LLD macro such as {#FSNAME}", mp.Macro)
		}
		if mp.Path == "" {
			el.addf(f+".path", "cannot be empty")
		}
		for j := range i {
			if l.MacroPaths[j].Macro == mp.Macro {
				el.addf(f+".lld_macro", "macro %q is mapped twice", mp.Macro)
			}
		}
	}
	for i := range l.Overrides {
		o := &l.Overrides[i]
		f := p + ".overrides[" + strconv.Itoa(i) + "]"
		if o.Name == "" {
			el.addf(f+".name", "cannot be empty")
		}
		checkLLDFilter(&o.Filter, f+".filter", el)
		for j, op := range o.Operations {
			if op.Object < OpObjectItem || op.Object > OpObjectHost {
				el.addf(f+".operations["+strconv.Itoa(j)+"].operationobject", "must be 0 (item), 1 (trigger), 2 (graph) or 3 (host), not %d", op.Object)
			}
		}
	}
	slices.SortStableFunc(l.Overrides, func(a, b LLDOverride) int { return a.Step - b.Step })
	keys := map[string]int{}
	for i := range l.ItemPrototypes {
		ip := &l.ItemPrototypes[i]
		f := p + ".item_prototypes[" + strconv.Itoa(i) + "]"
		if first, dup := keys[ip.Item.Key]; dup {
			el.addf(f+".key", "item prototype %q is declared twice (first at item_prototypes[%d])", ip.Item.Key, first)
		}
		keys[ip.Item.Key] = i
		if ip.Item.Key == key {
			el.addf(f+".key", "an item prototype cannot have the key of its discovery rule %q", key)
		}
		// A key without an LLD macro is taken, as 6.0.14's
		// itemprototype.create takes it (internal/conformance case lld);
		// two discovered rows then make the same key, which the LLD
		// engine reports on the rule.
		is := ip.Item
		is.Delay = macroFree(is.Delay, "1m")
		is.History = macroFree(is.History, "")
		is.Trends = macroFree(is.Trends, "")
		is.SNMPOID = macroFree(is.SNMPOID, "1.3.6.1")
		normItem(&is, f, el, nil, ip.MasterKey != "")
	}
	for i := range l.TriggerPrototypes {
		tp := &l.TriggerPrototypes[i]
		f := p + ".trigger_prototypes[" + strconv.Itoa(i) + "]"
		if tp.Fields.Description == "" {
			el.addf(f+".name", "is required")
		}
		if tp.Fields.Expression == "" {
			el.addf(f+".expression", "is required")
		}
	}
	for i, hp := range l.HostPrototypes {
		if hp.Host == "" {
			el.addf(p+".host_prototypes["+strconv.Itoa(i)+"].host", "is required")
		}
	}
	checkGraphProtos(l, p, el)
}

// macroFree returns s, or def when s holds a user or LLD macro (checked
// once expanded, when the item is discovered).
func macroFree(s, def string) string {
	if strings.Contains(s, "{#") || strings.Contains(s, "{$") {
		return def
	}
	return s
}

func checkLLDFilter(f *LLDFilter, p string, el *errList) {
	if f.EvalType < EvalAndOr || f.EvalType > EvalCustom {
		el.addf(p+".evaltype", "must be 0 (and/or), 1 (and), 2 (or) or 3 (custom expression), not %d", f.EvalType)
	}
	ids := map[string]bool{}
	for i := range f.Conditions {
		c := &f.Conditions[i]
		cp := p + ".conditions[" + strconv.Itoa(i) + "]"
		if !lldMacroRe.MatchString(c.Macro) {
			el.addf(cp+".macro", "%q is not an LLD macro such as {#FSNAME}", c.Macro)
		}
		if c.Operator == 0 {
			c.Operator = OpMatches
		}
		switch c.Operator {
		case OpMatches, OpNotMatches, OpExists, OpNotExists:
		default:
			el.addf(cp+".operator", "must be 8 (matches), 9 (does not match), 12 (exists) or 13 (does not exist), not %d", c.Operator)
		}
		if c.FormulaID == "" {
			c.FormulaID = formulaID(i)
		}
		ids[c.FormulaID] = true
	}
	if f.EvalType == EvalCustom {
		if f.Formula == "" {
			el.addf(p+".formula", "cannot be empty for a custom expression")
		}
		for id := range ids {
			if !strings.Contains(f.Formula, id) {
				el.addf(p+".formula", "condition %q is not used in the formula", id)
			}
		}
	}
}

// formulaID is the i-th condition's default formula ID: A, B, ..., Z,
// AA, ...
func formulaID(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

// allocIDs reserves n IDs from the items' sequence and returns the
// first: prototypes take item IDs, so an item prototype's ID is never
// an item's, as in Zabbix.
func (e *Edit) allocIDs(n int) (uint64, error) {
	if n == 0 {
		return 0, nil
	}
	// max(id) in a scalar subquery of its own: SQLite's one-step
	// max() lookup does not apply to "SELECT max(id) FROM items WHERE
	// ...", which scans every item (a link of 10,000 hosts spent its
	// time there).
	if _, err := e.exec("INSERT OR IGNORE INTO sqlite_sequence (name, seq) SELECT 'items', coalesce((SELECT max(id) FROM items), 0) WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'items')"); err != nil {
		return 0, e.fail(fmt.Errorf("cannot reserve prototype IDs: %w", err))
	}
	if _, err := e.exec("UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT max(id) FROM items), 0)) + ? WHERE name = 'items'", n); err != nil {
		return 0, e.fail(fmt.Errorf("cannot reserve prototype IDs: %w", err))
	}
	var last uint64
	if err := e.tx.QueryRowContext(e.ctx, "SELECT seq FROM sqlite_sequence WHERE name = 'items'").Scan(&last); err != nil {
		return 0, e.fail(fmt.Errorf("cannot reserve prototype IDs: %w", err))
	}
	return last - uint64(n) + 1, nil
}

// assignProtoIDs gives l's prototypes without one an ID, and a uuid to
// those of a template's own rule.
func (e *Edit) assignProtoIDs(l *LLDRule, tmpl bool) error {
	n := 0
	for i := range l.ItemPrototypes {
		if l.ItemPrototypes[i].ID == 0 {
			n++
		}
	}
	for i := range l.TriggerPrototypes {
		if l.TriggerPrototypes[i].ID == 0 {
			n++
		}
	}
	for i := range l.HostPrototypes {
		if l.HostPrototypes[i].ID == 0 {
			n++
		}
	}
	next, err := e.allocIDs(n)
	if err != nil {
		return err
	}
	take := func(id *uint64, uuid *string, templated uint64) {
		if *id == 0 {
			*id = next
			next++
		}
		if uuid != nil && tmpl && templated == 0 && *uuid == "" {
			*uuid = NewUUID()
		}
	}
	for i := range l.ItemPrototypes {
		p := &l.ItemPrototypes[i]
		take(&p.ID, &p.UUID, p.TemplateID)
	}
	for i := range l.TriggerPrototypes {
		p := &l.TriggerPrototypes[i]
		take(&p.ID, &p.Fields.UUID, p.TemplateID)
	}
	for i := range l.HostPrototypes {
		p := &l.HostPrototypes[i]
		take(&p.ID, &p.UUID, p.TemplateID)
	}
	return e.assignGraphProtoIDs(l, tmpl)
}

// cloneLLD deep-copies l through its JSON form.
func cloneLLD(l *LLDRule) *LLDRule {
	var c LLDRule
	if err := json.Unmarshal([]byte(encodeLLD(l)), &c); err != nil {
		panic("BUG: LLDRule does not round-trip: " + err.Error())
	}
	compact(&c, nil)
	return &c
}

// copyLLD makes owner's copy of template rule ti's configuration: the
// same, each prototype with the ID of cur's copy of it (cur: the copy
// the owner has, or nil) or a new one, TemplateID naming the
// template's prototype, no uuid, and the template's name in trigger
// prototypes' expressions replaced by the owner's.
func (e *Edit) copyLLD(ti *Item, cur *LLDRule, owner *Host) (*LLDRule, error) {
	l := cloneLLD(ti.Ext().LLD)
	shareStrings(l, ti.Ext().LLD) // the copies on a million hosts hold the template's texts once
	have := map[uint64]uint64{}   // template prototype → the owner's copy
	if cur != nil {
		for _, p := range cur.ItemPrototypes {
			have[p.TemplateID] = p.ID
		}
		for _, p := range cur.TriggerPrototypes {
			have[p.TemplateID] = p.ID
		}
		for _, p := range cur.HostPrototypes {
			have[p.TemplateID] = p.ID
		}
	}
	tmplName := ""
	if th := e.host(ti.HostID); th != nil {
		tmplName = th.Host
	}
	names := map[string]string{tmplName: owner.Host}
	for i := range l.ItemPrototypes {
		p := &l.ItemPrototypes[i]
		p.TemplateID, p.ID, p.UUID = p.ID, have[p.ID], ""
	}
	for i := range l.TriggerPrototypes {
		p := &l.TriggerPrototypes[i]
		p.TemplateID, p.ID, p.Fields.UUID = p.ID, have[p.ID], ""
		p.Fields.Expression = rewriteRefs(p.Fields.Expression, names)
		p.Fields.RecoveryExpression = rewriteRefs(p.Fields.RecoveryExpression, names)
		for j := range p.Dependencies {
			d := &p.Dependencies[j]
			d.Expression = rewriteRefs(d.Expression, names)
			d.RecoveryExpression = rewriteRefs(d.RecoveryExpression, names)
		}
	}
	for i := range l.HostPrototypes {
		p := &l.HostPrototypes[i]
		p.TemplateID, p.ID, p.UUID = p.ID, have[p.ID], ""
	}
	copyGraphProtos(l, cur)
	if err := e.assignProtoIDs(l, owner.IsTemplate); err != nil {
		return nil, err
	}
	return l, nil
}

// UpdateRule replaces the configuration of discovery rule id (its
// prototypes are matched by ID; those without one are new) and makes
// the same change to its copies, down the levels. A copy's
// configuration accepts it only from its template, but for what the
// copy's owner may change on its prototypes (ownerChangesOnly).
func (e *Edit) UpdateRule(id uint64, l *LLDRule) error {
	if e.err != nil {
		return e.err
	}
	cur := e.item(id)
	if cur == nil || cur.Ext().LLD == nil {
		return &FieldError{Field: "itemid", Err: notFound("discovery rule", id)}
	}
	if cur.TemplateID != 0 && !e.propagating && !ownerChangesOnly(cur.Ext().LLD, l) {
		return &FieldError{Field: "itemid", Err: &TemplatedError{Kind: "discovery rule", Name: cur.Key, Field: "prototypes"}}
	}
	var el errList
	l = cloneLLD(l)
	h := e.host(cur.HostID)
	retextProtoKeys(cur.Ext().LLD, l, h.Host)
	checkLLDRule(l, cur.Key, "discoveryrule", &el)
	if err := el.err(); err != nil {
		return err
	}
	if err := e.assignProtoIDs(l, h.IsTemplate); err != nil {
		return err
	}
	if cur.Ext().LLD.equal(l) {
		return nil
	}
	n := *cur
	n.MutExt().LLD = l
	if err := e.writeItem(&n, cur); err != nil {
		return err
	}
	e.res.ItemsUpdated++
	return e.propagate(func() error {
		for _, c := range e.copiesOf(id) {
			owner := e.host(c.HostID)
			cl, err := e.copyLLD(e.item(id), c.Ext().LLD, owner)
			if err != nil {
				return err
			}
			if err := e.UpdateRule(c.ID, cl); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeLLD writes a new item's item_lld and item_discovery rows.
func (e *Edit) writeLLD(it *Item, _ bool) error {
	if it.Ext().LLD != nil {
		if _, err := e.exec("INSERT INTO item_lld (item_id, config) VALUES (?, ?)", it.ID, encodeLLD(it.Ext().LLD)); err != nil {
			return e.fail(fmt.Errorf("cannot store discovery rule %q: %w", it.Key, err))
		}
	}
	if d := it.Discovery; d != nil {
		if _, err := e.exec("INSERT INTO item_discovery (item_id, rule_id, proto_id, ts_delete) VALUES (?, ?, ?, ?)", it.ID, d.RuleID, d.ProtoID, d.TSDelete); err != nil {
			return e.fail(fmt.Errorf("cannot store discovered item %q: %w", it.Key, err))
		}
	}
	return nil
}

// writeLLDRows replaces an updated item's item_lld and item_discovery
// rows.
func (e *Edit) writeLLDRows(n, cur *Item) error {
	if err := e.deleteLLDRows(cur); err != nil {
		return err
	}
	return e.writeLLD(n, true)
}

// deleteLLDRows deletes an item's item_lld and item_discovery rows.
func (e *Edit) deleteLLDRows(it *Item) error {
	if it.Ext().LLD != nil {
		if _, err := e.exec("DELETE FROM item_lld WHERE item_id = ?", it.ID); err != nil {
			return e.fail(fmt.Errorf("cannot delete discovery rule %q: %w", it.Key, err))
		}
	}
	if it.Discovery != nil {
		if _, err := e.exec("DELETE FROM item_discovery WHERE item_id = ?", it.ID); err != nil {
			return e.fail(fmt.Errorf("cannot delete discovered item %q: %w", it.Key, err))
		}
	}
	return nil
}

// writeTriggerDiscovery writes a trigger's trigger_discovery row,
// replacing the one it had if replace.
func (e *Edit) writeTriggerDiscovery(t *Trigger, replace bool) error {
	if replace {
		if _, err := e.exec("DELETE FROM trigger_discovery WHERE trigger_id = ?", t.ID); err != nil {
			return e.fail(fmt.Errorf("cannot update trigger %d: %w", t.ID, err))
		}
	}
	if d := t.Discovery; d != nil {
		if _, err := e.exec("INSERT INTO trigger_discovery (trigger_id, rule_id, proto_id, ts_delete) VALUES (?, ?, ?, ?)", t.ID, d.RuleID, d.ProtoID, d.TSDelete); err != nil {
			return e.fail(fmt.Errorf("cannot store discovered trigger %q: %w", t.Description, err))
		}
	}
	return nil
}

// withDiscovered returns ids followed by the items discovered by the
// rules among them.
func (e *Edit) withDiscovered(ids []uint64) []uint64 {
	var rules map[uint64]bool
	for _, id := range ids {
		if it := e.item(id); it != nil && it.Ext().LLD != nil {
			initMap(&rules)
			rules[id] = true
		}
	}
	if len(rules) == 0 {
		return ids
	}
	in := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		in[id] = true
	}
	hosts := map[uint64]bool{}
	for id := range rules {
		hosts[e.item(id).HostID] = true
	}
	for h := range hosts {
		for _, it := range e.hostItems(h) {
			if d := it.Discovery; d != nil && rules[d.RuleID] && !in[it.ID] {
				in[it.ID] = true
				ids = append(ids, it.ID)
			}
		}
	}
	return ids
}

// Rule returns discovery rule id as the Edit has it, nil if id is not
// a rule. It belongs to the Edit and MUST NOT be modified: change it
// with UpdateRule on a Clone of its LLD.
func (e *Edit) Rule(id uint64) *Item {
	if it := e.item(id); it != nil && it.Ext().LLD != nil {
		return it
	}
	return nil
}

// Clone returns a deep copy of l, for a change through UpdateRule.
func (l *LLDRule) Clone() *LLDRule { return cloneLLD(l) }

// SetRuleLifetime changes the lifetime of a rule copied from a template,
// which its owner may set (recorded from 6.0.14: discoveryrule.update
// takes a copy's lifetime); a change of the template's rule resets it.
func (e *Edit) SetRuleLifetime(id uint64, lifetime string) error {
	if e.err != nil {
		return e.err
	}
	cur := e.item(id)
	if cur == nil || cur.Ext().LLD == nil {
		return &FieldError{Field: "itemid", Err: notFound("discovery rule", id)}
	}
	if cur.TemplateID == 0 {
		l := cloneLLD(cur.Ext().LLD)
		l.Lifetime = lifetime
		return e.UpdateRule(id, l)
	}
	l := cloneLLD(cur.Ext().LLD)
	l.Lifetime = lifetime
	var el errList
	checkLLDRule(l, cur.Key, "discoveryrule", &el)
	if err := el.err(); err != nil {
		return err
	}
	if cur.Ext().LLD.equal(l) {
		return nil
	}
	n := *cur
	n.MutExt().LLD = l
	if err := e.writeItem(&n, cur); err != nil {
		return err
	}
	e.res.ItemsUpdated++
	return nil
}

// CopyRule copies discovery rule id, with its prototypes, to host (a
// host or template) as the host's own rule (discoveryrule.copy): its
// interface the host's main one of the type it needs, a dependent
// rule's master the host's item of the same key, trigger prototypes'
// expressions naming the host. It returns the new rule's ID.
func (e *Edit) CopyRule(id, host uint64) (uint64, error) {
	if e.err != nil {
		return 0, e.err
	}
	src := e.Rule(id)
	if src == nil {
		return 0, &FieldError{Field: "discoveryids", Err: notFound("discovery rule", id)}
	}
	h := e.host(host)
	if h == nil {
		return 0, &FieldError{Field: "hostids", Err: notFound("host", host)}
	}
	l := cloneLLD(src.Ext().LLD)
	names := map[string]string{}
	if sh := e.host(src.HostID); sh != nil {
		names[sh.Host] = h.Host
	}
	for i := range l.ItemPrototypes {
		p := &l.ItemPrototypes[i]
		p.ID, p.TemplateID, p.UUID = 0, 0, ""
	}
	for i := range l.TriggerPrototypes {
		p := &l.TriggerPrototypes[i]
		p.ID, p.TemplateID, p.Fields.UUID = 0, 0, ""
		p.Fields.Expression = rewriteRefs(p.Fields.Expression, names)
		p.Fields.RecoveryExpression = rewriteRefs(p.Fields.RecoveryExpression, names)
		for j := range p.Dependencies {
			d := &p.Dependencies[j]
			d.Expression = rewriteRefs(d.Expression, names)
			d.RecoveryExpression = rewriteRefs(d.RecoveryExpression, names)
		}
	}
	for i := range l.HostPrototypes {
		p := &l.HostPrototypes[i]
		p.ID, p.TemplateID, p.UUID = 0, 0, ""
	}
	ni := NewItem{HostID: host, ItemSpec: specOf(src), LLD: l}
	if src.MasterItemID != 0 {
		if m := e.item(src.MasterItemID); m != nil {
			ni.MasterItem = &MasterItemSpec{Key: m.Key}
		}
	}
	ids, err := e.CreateItems([]NewItem{ni})
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}
