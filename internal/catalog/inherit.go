package catalog

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Inheritance, as Zabbix 6.0 has it (recorded from 6.0.14):
//
//   - Linking a template to a host or template copies the template's
//     items (its own and the copies it holds of its own templates') and
//     its triggers to the owner; each copy names the item or trigger it
//     was copied from (TemplateID), one level up: a host linked to T2,
//     which links T1, holds copies of T2's copies of T1's items.
//   - The owner's own item with a copy's key is taken over (merged): it
//     keeps its ID and history and takes every field of the template's
//     item. An item already copied from another template with that key
//     refuses the link. An own trigger with the copy's name and
//     expression is taken over the same way.
//   - Value maps are not copied: a copy names its template's value map.
//     Macros and tags are not copied either; a host resolves its
//     templates' macros through its links (macro.go).
//   - A change of a template's item or trigger is made to every copy,
//     down the levels, field by field: the fields the change names
//     overwrite the copies', whatever a host set; the others keep the
//     host's values. A copy accepts from its owner only the fields an
//     owner may set (templatedField, templatedTriggerField); a copy
//     cannot be deleted alone.
//   - Unlinking keeps the copies as the owner's own (TemplateID 0);
//     clearing deletes them. Deleting a template clears it from every
//     owner.
//
// All of it is done inside one Edit: linking a template of 41 items to
// 10,000 hosts is one transaction and one snapshot build. Copies are
// made from the validated template item without validating each again:
// only what differs per owner (key collisions, the interface) is
// checked.

// ErrMixedTrigger refuses a trigger whose expressions reference items of
// templates and of hosts.
var ErrMixedTrigger = errors.New("a trigger cannot reference items of templates and of hosts at once")

// TemplatedError refuses a change a copy does not accept from its owner:
// a field only its template sets (Field), or deleting it (Op "delete").
// Kind is "item" or "trigger"; Name the item's key or the trigger's
// name, Expression the trigger's.
type TemplatedError struct {
	Kind, Name, Expression, Field, Op string
}

func (e *TemplatedError) Error() string {
	if e.Op == "delete" {
		return fmt.Sprintf("%s %q is inherited from a template: unlink the template or delete it there", e.Kind, e.Name)
	}
	return fmt.Sprintf("%s %q is inherited from a template: change its %s on the template", e.Kind, e.Name, e.Field)
}

// LinkError refuses a link: a template linked twice to one owner through
// others (Twice), a template that would reach itself through the links
// (Cycle: the technical names from Template, linked now, through Host,
// the owner, and what links it back to Template), a trigger naming a
// template the owner does not link (Template), an item that needs an
// interface of a type the host has none of (Key, Host).
type LinkError struct {
	Twice    bool
	Cycle    []string
	Template string
	Host     string
	Key      string
}

func (e *LinkError) Error() string {
	switch {
	case len(e.Cycle) > 0:
		return fmt.Sprintf("template %q cannot be linked to %q: the links would form a cycle %s", e.Template, e.Host, strings.Join(e.Cycle, " -> "))
	case e.Twice:
		return "a template cannot be linked to a host or template more than once, even through other templates"
	case e.Template != "":
		return fmt.Sprintf("a trigger has items of template %q, which is not linked to %q", e.Template, e.Host)
	}
	return fmt.Sprintf("%q has no interface for item %q of the template: add one", e.Host, e.Key)
}

// templatedField returns the first field u sets to a new value that a
// copy does not accept from its owner, or "". Zabbix 6.0 lets an owner
// set a copy's interval, retention, status, description, tags and
// interface (and its API ignores the rest; the API drops them before
// calling); so does Peregrine, with its retry interval and timestamp
// precision.
func templatedField(u *ItemUpdate, cur *Item) string {
	differs := func(v *string, c string) bool { return v != nil && *v != c }
	switch {
	case differs(u.Key, cur.Key):
		return "key"
	case differs(u.Name, cur.Name):
		return "name"
	case u.Type != nil && *u.Type != cur.Type.String() && *u.Type != fmt.Sprint(int(cur.Type)):
		return "type"
	case u.ValueType != nil && *u.ValueType != ValueTypeName(cur.ValueType) && *u.ValueType != fmt.Sprint(int(cur.ValueType)):
		return "value_type"
	case differs(u.Units, cur.Units):
		return "units"
	case differs(u.Timeout, cur.Ext().Timeout):
		return "timeout"
	case differs(u.SNMPOID, cur.Ext().SNMPOID):
		return "snmp_oid"
	case u.Preprocessing != nil:
		return "preprocessing"
	case u.MasterItemID != nil && *u.MasterItemID != cur.MasterItemID:
		return "master_itemid"
	case u.HTTP != nil && httpBeyondLogin(u.HTTP, cur):
		return "http"
	case u.ValueMapID != nil && *u.ValueMapID != cur.ValueMapID:
		return "valuemapid"
	}
	return ""
}

// httpBeyondLogin reports whether change alters a copy's HTTP fields
// beyond its login (authtype, username, password): Zabbix 6.0 lets a
// copy's owner change its params and login, on every item type, and
// nothing else of its request (recorded from 6.0.14).
func httpBeyondLogin(change func(*HTTPSpec), cur *Item) bool {
	before := specOf(cur).HTTPSpec // the HTTP request, or the login of other types
	after := before
	after.QueryFields, after.Headers = slices.Clone(before.QueryFields), slices.Clone(before.Headers)
	change(&after)
	after.AuthType, after.Username, after.Password = before.AuthType, before.Username, before.Password
	return !reflect.DeepEqual(before, after)
}

// templatedSpecField is templatedField for an import's item: the first
// field the spec's item it gives a copy cur that the copy takes from its
// template only, or "".
func templatedSpecField(cur, it *Item) string {
	switch {
	case it.Name != cur.Name:
		return "name"
	case it.Type != cur.Type:
		return "type"
	case it.ValueType != cur.ValueType:
		return "value_type"
	case it.Units != cur.Units:
		return "units"
	case it.Ext().Timeout != cur.Ext().Timeout:
		return "timeout"
	case it.Ext().SNMPOID != cur.Ext().SNMPOID:
		return "snmp_oid"
	case it.Ext().Params != cur.Ext().Params:
		return "params"
	case !sameSteps(it.Preprocessing, cur.Preprocessing):
		return "preprocessing"
	case !it.Ext().HTTP.equal(cur.Ext().HTTP):
		return "http"
	}
	return ""
}

// templatedTriggerField returns the first field u sets that a copy
// takes from its template only, in Zabbix 6.0's order, or "".
func templatedTriggerField(u *TriggerUpdate) string {
	switch {
	case u.Description != nil:
		return "description"
	case u.Expression != nil:
		return "expression"
	case u.RecoveryMode != nil:
		return "recovery_mode"
	case u.RecoveryExpression != nil:
		return "recovery_expression"
	case u.CorrelationMode != nil:
		return "correlation_mode"
	case u.CorrelationTag != nil:
		return "correlation_tag"
	case u.ManualClose != nil:
		return "manual_close"
	}
	return ""
}

// propagate runs fn as propagation from a template: copies accept every
// field and may be deleted.
func (e *Edit) propagate(fn func() error) error {
	was := e.propagating
	e.propagating = true
	defer func() { e.propagating = was }()
	return fn()
}

// indexCopy records that it is (or is no longer) a copy, for copiesOf.
func (e *Edit) indexCopy(it *Item) {
	if it.TemplateID == 0 {
		return
	}
	initMap(&e.copyIdx)
	e.copyIdx[it.TemplateID] = append(e.copyIdx[it.TemplateID], it.ID)
}

// copiesOf returns the current copies of the item with the ID, one level
// down.
func (e *Edit) copiesOf(id uint64) []*Item {
	var out []*Item
	seen := map[uint64]bool{}
	add := func(cid uint64) {
		if seen[cid] {
			return
		}
		seen[cid] = true
		if c := e.item(cid); c != nil && c.TemplateID == id {
			out = append(out, c)
		}
	}
	for _, c := range e.old.Copies(id) {
		add(c.ID)
	}
	for _, cid := range e.copyIdx[id] {
		add(cid)
	}
	return out
}

// withCopies returns ids followed by the copies of their items, at
// every level below, each once.
func (e *Edit) withCopies(ids []uint64) []uint64 {
	out := slices.Clone(ids)
	seen := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	for i := 0; i < len(out); i++ {
		for _, c := range e.copiesOf(out[i]) {
			if !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, c.ID)
			}
		}
	}
	return out
}

// indexTrigger records t under its items, for triggersOf.
func (e *Edit) indexTrigger(t *Trigger) {
	initMap(&e.trigIdx)
	for _, id := range t.ItemIDs {
		e.trigIdx[id] = append(e.trigIdx[id], t.ID)
	}
	if t.TemplateID != 0 {
		initMap(&e.trigCopyIdx)
		e.trigCopyIdx[t.TemplateID] = append(e.trigCopyIdx[t.TemplateID], t.ID)
	}
}

// triggersOf returns the current triggers referencing the item, each
// once.
func (e *Edit) triggersOf(itemID uint64) []*Trigger {
	var out []*Trigger
	seen := map[uint64]bool{}
	add := func(id uint64) {
		if seen[id] {
			return
		}
		seen[id] = true
		if t := e.trigger(id); t != nil && slices.Contains(t.ItemIDs, itemID) {
			out = append(out, t)
		}
	}
	for _, t := range e.old.TriggersOfItem(itemID) {
		add(t.ID)
	}
	for _, t := range e.old.TemplateTriggersOfItem(itemID) {
		add(t.ID)
	}
	for _, id := range e.trigIdx[itemID] {
		add(id)
	}
	return out
}

// hostTriggers returns the current triggers referencing items of the
// host or template, ascending by ID.
func (e *Edit) hostTriggers(host uint64) []*Trigger {
	var out []*Trigger
	seen := map[uint64]bool{}
	for _, it := range e.hostItems(host) {
		for _, t := range e.triggersOf(it.ID) {
			if !seen[t.ID] {
				seen[t.ID] = true
				out = append(out, t)
			}
		}
	}
	slices.SortFunc(out, func(a, b *Trigger) int { return cmpID(a.ID, b.ID) })
	return out
}

// triggerCopiesOf returns the current copies of the trigger, one level
// down.
func (e *Edit) triggerCopiesOf(id uint64) []*Trigger {
	var out []*Trigger
	seen := map[uint64]bool{}
	for _, cid := range append(e.old.TriggerCopies(id), e.trigCopyIdx[id]...) {
		if seen[cid] {
			continue
		}
		seen[cid] = true
		if c := e.trigger(cid); c != nil && c.TemplateID == id {
			out = append(out, c)
		}
	}
	return out
}

// withTriggerCopies returns ids followed by the copies of their
// triggers at every level below, each once.
func (e *Edit) withTriggerCopies(ids []uint64) []uint64 {
	out := slices.Clone(ids)
	seen := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	for i := 0; i < len(out); i++ {
		for _, c := range e.triggerCopiesOf(out[i]) {
			if !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, c.ID)
			}
		}
	}
	return out
}

// isTemplateTrigger reports whether t's items are a template's.
func (e *Edit) isTemplateTrigger(t *Trigger) bool {
	if len(t.ItemIDs) == 0 {
		return false
	}
	it := e.item(t.ItemIDs[0])
	return it != nil && e.host(it.HostID).IsTemplate
}

// links returns the templates linked to owner directly, ascending.
func (e *Edit) links(owner uint64) []uint64 {
	if e.mst == nil {
		return e.old.LinkedTemplates(owner)
	}
	return e.mst.links[owner]
}

// childrenOf returns the hosts and templates that link the template
// directly, ascending.
func (e *Edit) childrenOf(tmpl uint64) []uint64 {
	if e.mst == nil {
		return e.old.LinkedTo(tmpl)
	}
	if e.rlinks == nil {
		e.rlinks = map[uint64][]uint64{}
		for o, l := range e.mst.links {
			for _, t := range l {
				e.rlinks[t] = append(e.rlinks[t], o)
			}
		}
		for _, l := range e.rlinks {
			slices.Sort(l)
		}
	}
	return e.rlinks[tmpl]
}

// setLinks records owner's new links in the overlay (the rows are the
// caller's).
func (e *Edit) setLinks(owner uint64, want []uint64) {
	st := e.macros()
	if e.rlinks != nil {
		for _, t := range st.links[owner] {
			e.rlinks[t] = slices.DeleteFunc(e.rlinks[t], func(o uint64) bool { return o == owner })
		}
		for _, t := range want {
			l := append(e.rlinks[t], owner)
			slices.Sort(l)
			e.rlinks[t] = l
		}
	}
	if len(want) == 0 {
		delete(st.links, owner)
		return
	}
	st.links[owner] = want
}

// mastersFirst orders items so that a master comes before its
// dependents.
func mastersFirst(items []*Item) []*Item {
	in := make(map[uint64]bool, len(items))
	for _, it := range items {
		in[it.ID] = true
	}
	out := make([]*Item, 0, len(items))
	done := make(map[uint64]bool, len(items))
	var visit func(it *Item, depth int)
	byID := make(map[uint64]*Item, len(items))
	for _, it := range items {
		byID[it.ID] = it
	}
	visit = func(it *Item, depth int) {
		if done[it.ID] || depth > maxDependentLevels+1 {
			return
		}
		if m := byID[it.MasterItemID]; m != nil {
			visit(m, depth+1)
		}
		if !done[it.ID] {
			done[it.ID] = true
			out = append(out, it)
		}
	}
	for _, it := range items {
		visit(it, 0)
	}
	return out
}

// copyIface sets a copy's interface on a host: the one it has if it is
// of the type the item needs, else the host's main one of that type.
func copyIface(n *Item, owner *Host) error {
	want, uses, required := ItemInterfaceType(n.Type)
	if owner.IsTemplate || !uses {
		n.InterfaceID = 0
		return nil
	}
	if f := findIface(owner.Interfaces, n.InterfaceID); f != nil && (want == 0 || f.Type == want) {
		return nil
	}
	n.InterfaceID = 0
	if want != 0 {
		if f := owner.MainInterface(want); f != nil {
			n.InterfaceID = f.ID
		}
	} else if required {
		// An item that needs an interface of any type (SSH, Telnet)
		// takes the host's main one, in Zabbix's order of types: agent,
		// SNMP, JMX, IPMI.
		for _, t := range []InterfaceType{InterfaceAgent, InterfaceSNMP, InterfaceJMX, InterfaceIPMI} {
			if f := owner.MainInterface(t); f != nil {
				n.InterfaceID = f.ID
				break
			}
		}
	}
	if n.InterfaceID == 0 && required {
		return &LinkError{Host: owner.Host, Key: n.Key}
	}
	return nil
}

// copyTo copies template items tis and template triggers tts to owner,
// merging the owner's own items and triggers as Zabbix does, and
// returns the owner's copies made or taken over (to be copied on to
// what links the owner). A copy the owner already has is left.
func (e *Edit) copyTo(tis []*Item, tts []*Trigger, owner *Host, field string) ([]*Item, []*Trigger, error) {
	fail := func(err error) ([]*Item, []*Trigger, error) {
		return nil, nil, &FieldError{Field: field, Err: err}
	}
	// The copies to make are written in one batch (edit_batch.go), the
	// items taken over one by one after it: a new copy's master may be
	// new too, and a taken-over item's master too.
	mapped := make(map[uint64]*Item, len(tis))
	var fresh, merged, made []*Item
	var curOf map[*Item]*Item
	var masterOf map[*Item]*Item
	for _, ti := range mastersFirst(tis) {
		if ti.Type == WebItem {
			continue // made with the scenario's copy (httptest_sync.go)
		}
		var cur *Item
		if cid := e.itemByKey(owner.ID, ti.Key); cid != 0 {
			cur = e.item(cid)
		}
		if cur != nil && cur.TemplateID == ti.ID {
			mapped[ti.ID] = cur
			continue
		}
		if cur != nil && cur.TemplateID != 0 {
			return fail(&ConflictError{Kind: ItemExists, Host: owner.Host, Name: ti.Key, Template: true})
		}
		n := new(Item)
		*n = *ti
		n.ID, n.HostID, n.Host, n.TemplateID, n.hasDeps = 0, owner.ID, nil, ti.ID, false
		if n.Ext().UUID != "" {
			n.MutExt().UUID = ""
		}
		e.shareExtra(n)
		if ti.Ext().LLD != nil {
			var cl *LLDRule
			if cur != nil {
				cl = cur.Ext().LLD
			}
			l, err := e.copyLLD(ti, cl, owner)
			if err != nil {
				return fail(err)
			}
			n.MutExt().LLD = l
		}
		if ti.MasterItemID != 0 {
			m := mapped[ti.MasterItemID]
			if m == nil {
				if mi := e.item(ti.MasterItemID); mi != nil {
					m = e.item(e.itemByKey(owner.ID, mi.Key))
				}
			}
			if m == nil {
				return fail(fmt.Errorf("BUG: the master of item %q has no copy on %q", ti.Key, owner.Host))
			}
			initMap(&masterOf)
			masterOf[n] = m
			n.MasterItemID = m.ID
		}
		n.InterfaceID = 0
		if cur != nil {
			n.InterfaceID = cur.InterfaceID
		}
		if err := copyIface(n, owner); err != nil {
			return fail(err)
		}
		mapped[ti.ID] = n
		if cur != nil {
			n.ID = cur.ID
			initMap(&curOf)
			curOf[n] = cur
			merged = append(merged, n)
		} else {
			fresh = append(fresh, n)
		}
		made = append(made, n)
	}
	if len(fresh) > 0 {
		if err := e.insertItemsBatch(fresh, masterOf); err != nil {
			return nil, nil, err
		}
		e.res.ItemsCreated += len(fresh)
	}
	for _, n := range merged {
		if m := masterOf[n]; m != nil {
			n.MasterItemID = m.ID
		}
		if err := e.writeItem(n, curOf[n]); err != nil {
			return nil, nil, err
		}
		e.res.ItemsUpdated++
	}
	for i, n := range made {
		if cur := curOf[n]; cur != nil {
			made[i] = e.item(cur.ID) // writeItem stored a copy of n
		}
	}
	ids := make(map[uint64]uint64, len(mapped))
	for tid, n := range mapped {
		ids[tid] = n.ID
	}
	trigs, err := e.copyTriggers(tts, owner, ids)
	if err != nil {
		return fail(err)
	}
	return made, trigs, nil
}

// copyOfTrigger returns owner's copy of template trigger tt, or nil.
func (e *Edit) copyOfTrigger(tt *Trigger, owner uint64) *Trigger {
	ti := e.item(tt.ItemIDs[0])
	if ti == nil {
		return nil
	}
	oid := e.itemByKey(owner, ti.Key)
	if oid == 0 {
		return nil
	}
	for _, t := range e.triggersOf(oid) {
		if t.TemplateID == tt.ID {
			return t
		}
	}
	return nil
}

// copyTriggers copies template triggers to owner, whose copies of their
// items mapped gives (others are looked up by key), then sets the
// copies' dependencies.
func (e *Edit) copyTriggers(tts []*Trigger, owner *Host, mapped map[uint64]uint64) ([]*Trigger, error) {
	type pair struct{ src, dst *Trigger }
	var pairs []pair
	var fresh []*Trigger
	seen := map[uint64]bool{}
	for _, tt := range tts {
		if seen[tt.ID] {
			continue
		}
		seen[tt.ID] = true
		itemIDs := make([]uint64, 0, len(tt.ItemIDs))
		names := map[string]string{}
		for _, iid := range tt.ItemIDs {
			oid, ok := mapped[iid]
			ti := e.item(iid)
			if ti == nil {
				return nil, fmt.Errorf("BUG: item %d of trigger %d is gone", iid, tt.ID)
			}
			th := e.host(ti.HostID)
			if !ok {
				if oid = e.itemByKey(owner.ID, ti.Key); oid == 0 {
					return nil, &LinkError{Template: th.Host, Host: owner.Host}
				}
			}
			itemIDs = append(itemIDs, oid)
			names[th.Host] = owner.Host
		}
		slices.Sort(itemIDs)
		itemIDs = slices.Compact(itemIDs)
		expr, rexpr := rewriteRefs(tt.Expression, names), rewriteRefs(tt.RecoveryExpression, names)
		var cur *Trigger
		for _, t := range e.triggersOf(itemIDs[0]) {
			if t.TemplateID == tt.ID {
				cur = t
				break
			}
			if t.TemplateID == 0 && t.Description == tt.Description && t.Expression == expr {
				cur = t
			}
		}
		if cur != nil && cur.TemplateID == tt.ID {
			pairs = append(pairs, pair{tt, cur})
			continue
		}
		n := new(Trigger)
		*n = *tt
		n.ID, n.Expression, n.RecoveryExpression, n.ItemIDs, n.HostIDs = 0, expr, rexpr, itemIDs, nil
		n.TemplateID, n.UUID, n.Dependencies = tt.ID, "", nil
		if cur != nil {
			n.ID = cur.ID
			n.Dependencies = cur.Dependencies
			if err := e.updateTrigger(n); err != nil {
				return nil, err
			}
			e.res.TriggersUpdated++
		} else {
			fresh = append(fresh, n)
		}
		pairs = append(pairs, pair{tt, n})
	}
	if len(fresh) > 0 {
		if err := e.insertTriggersBatch(fresh); err != nil {
			return nil, err
		}
		e.res.TriggersCreated += len(fresh)
	}
	isFresh := make(map[*Trigger]bool, len(fresh))
	for _, t := range fresh {
		isFresh[t] = true
	}
	var out, freshDeps []*Trigger
	for _, p := range pairs {
		deps := e.mapDeps(p.src.Dependencies, owner.ID)
		switch {
		case slices.Equal(deps, p.dst.Dependencies):
		case isFresh[p.dst]:
			p.dst.Dependencies = deps // not written yet: the overlay holds p.dst
			freshDeps = append(freshDeps, p.dst)
		default:
			n := new(Trigger)
			*n = *p.dst
			n.Dependencies = deps
			if err := e.updateTrigger(n); err != nil {
				return nil, err
			}
			p.dst = n
		}
		out = append(out, p.dst)
	}
	if err := e.insertTriggerDeps(freshDeps); err != nil {
		return nil, err
	}
	return out, nil
}

// mapDeps maps a template trigger's dependencies to owner: a template
// trigger to owner's copy of it, a host's trigger to itself; a template
// trigger owner has no copy of is dropped.
func (e *Edit) mapDeps(deps []uint64, owner uint64) []uint64 {
	var out []uint64
	for _, d := range deps {
		dt := e.trigger(d)
		if dt == nil {
			continue
		}
		if !e.isTemplateTrigger(dt) {
			out = append(out, d)
			continue
		}
		if c := e.copyOfTrigger(dt, owner); c != nil {
			out = append(out, c.ID)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rewriteRefs rewrites the host of every item reference of expr
// (a function's first parameter, "(/host/key") that names gives a new
// name for.
func rewriteRefs(expr string, names map[string]string) string {
	if expr == "" || len(names) == 0 {
		return expr
	}
	return replaceAtRefs(expr, func(ref string) (int, int, string, bool) {
		k := strings.IndexByte(ref[1:], '/')
		if k < 0 {
			return 0, 0, "", false
		}
		to, ok := names[ref[1:1+k]]
		return 1, 1 + k, to, ok
	})
}

// replaceAtRefs walks the item references of expr (a function's first
// parameter: "(", white space, then "/host/key...") and, where fn
// reports ok for the text from the reference's '/' on, replaces that
// text's bytes [from, to) with repl. The host renames and key changes
// share it.
func replaceAtRefs(expr string, fn func(ref string) (from, to int, repl string, ok bool)) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(expr); i++ {
		if expr[i] != '(' {
			continue
		}
		j := i + 1
		for j < len(expr) && (expr[j] == ' ' || expr[j] == '\t' || expr[j] == '\n' || expr[j] == '\r') {
			j++
		}
		if j >= len(expr) || expr[j] != '/' {
			continue
		}
		from, to, repl, ok := fn(expr[j:])
		if !ok {
			continue
		}
		b.WriteString(expr[last : j+from])
		b.WriteString(repl)
		last = j + to
	}
	if last == 0 {
		return expr
	}
	b.WriteString(expr[last:])
	return b.String()
}

// inheritDown copies an owner's new copies (or new items and triggers
// of a template) to everything linking the owner, level by level.
func (e *Edit) inheritDown(owner *Host, items []*Item, trigs []*Trigger) error {
	if !owner.IsTemplate || len(items)+len(trigs) == 0 {
		return nil
	}
	for _, c := range e.childrenOf(owner.ID) {
		ch := e.host(c)
		if ch == nil {
			continue
		}
		ci, ct, err := e.copyTo(items, trigs, ch, "templates")
		if err != nil {
			return err
		}
		if err := e.inheritDown(ch, ci, ct); err != nil {
			return err
		}
	}
	return nil
}

// inheritCreated copies items just created on templates to what links
// those templates.
func (e *Edit) inheritCreated(made []Item) error {
	byHost := map[uint64][]*Item{}
	var order []uint64
	for i := range made {
		it := e.item(made[i].ID)
		if it == nil || !e.host(it.HostID).IsTemplate || len(e.childrenOf(it.HostID)) == 0 {
			continue
		}
		if byHost[it.HostID] == nil {
			order = append(order, it.HostID)
		}
		byHost[it.HostID] = append(byHost[it.HostID], it)
	}
	return e.propagate(func() error {
		for _, h := range order {
			if err := e.inheritDown(e.host(h), byHost[h], nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// inheritCreatedTriggers copies triggers just created on templates to
// what links their template; a trigger over several templates goes to
// the owners that link all of them.
func (e *Edit) inheritCreatedTriggers(made []Trigger) error {
	return e.propagate(func() error {
		for i := range made {
			t := e.trigger(made[i].ID)
			if t == nil || !e.isTemplateTrigger(t) {
				continue
			}
			owner := e.host(e.item(t.ItemIDs[0]).HostID)
			for _, c := range e.childrenOf(owner.ID) {
				ch := e.host(c)
				if ch == nil || !e.hasItemsOf(t, ch.ID) {
					continue
				}
				_, ct, err := e.copyTo(nil, []*Trigger{t}, ch, "triggers")
				if err != nil {
					return err
				}
				if err := e.inheritDown(ch, nil, ct); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// hasItemsOf reports whether owner has an item with the key of each of
// t's items.
func (e *Edit) hasItemsOf(t *Trigger, owner uint64) bool {
	for _, id := range t.ItemIDs {
		it := e.item(id)
		if it == nil || e.itemByKey(owner, it.Key) == 0 {
			return false
		}
	}
	return true
}

// propagateItemUpdates makes the changes ups named on templates' items
// to their copies: every field given, whatever the copy had, except the
// interface (each owner's own); a master is mapped to the copy's host.
func (e *Edit) propagateItemUpdates(ups []ItemUpdate) error {
	var next []ItemUpdate
	for i := range ups {
		u := &ups[i]
		src := e.item(u.ID)
		if src == nil {
			continue
		}
		for _, c := range e.copiesOf(u.ID) {
			cu := *u
			cu.ID, cu.InterfaceID = c.ID, nil
			if u.MasterItemID != nil {
				m := uint64(0)
				if *u.MasterItemID != 0 {
					if mi := e.item(*u.MasterItemID); mi != nil {
						m = e.itemByKey(c.HostID, mi.Key)
					}
				}
				cu.MasterItemID = &m
			}
			next = append(next, cu)
		}
	}
	if len(next) == 0 {
		return nil
	}
	return e.propagate(func() error { return e.UpdateItems(next) })
}

// propagateTriggerUpdates makes the changes ups named on templates'
// triggers to their copies, expressions rewritten to each copy's host
// and dependencies mapped.
func (e *Edit) propagateTriggerUpdates(ups []TriggerUpdate) error {
	var next []TriggerUpdate
	for i := range ups {
		u := &ups[i]
		src := e.trigger(u.ID)
		if src == nil {
			continue
		}
		for _, c := range e.triggerCopiesOf(u.ID) {
			cu := *u
			cu.ID = c.ID
			owner := e.item(c.ItemIDs[0]).HostID
			names := map[string]string{}
			for _, iid := range src.ItemIDs {
				if it := e.item(iid); it != nil {
					names[e.host(it.HostID).Host] = e.host(owner).Host
				}
			}
			if u.Expression != nil {
				x := rewriteRefs(*u.Expression, names)
				cu.Expression = &x
			}
			if u.RecoveryExpression != nil {
				x := rewriteRefs(*u.RecoveryExpression, names)
				cu.RecoveryExpression = &x
			}
			if u.Dependencies != nil {
				d := e.mapDeps(*u.Dependencies, owner)
				cu.Dependencies = &d
			}
			next = append(next, cu)
		}
	}
	if len(next) == 0 {
		return nil
	}
	return e.propagate(func() error { return e.UpdateTriggers(next) })
}
