package catalog

import (
	"fmt"
	"slices"
)

// DiscoveredItem is one item a discovery result wants on the rule's
// host: an item prototype expanded for one row.
type DiscoveredItem struct {
	ProtoID uint64
	Item    ItemSpec // the prototype's, LLD macros expanded
	// MasterKey is a dependent item's master on the host, expanded.
	MasterKey string
	// ValueMap names a value map of the rule's host or of the template
	// the rule came from.
	ValueMap string
}

// DiscoveredTrigger is one trigger a discovery result wants: a trigger
// prototype expanded for one row.
type DiscoveredTrigger struct {
	ProtoID uint64
	Fields  TriggerFields
}

// DiscoveryResult is what one value of a discovery rule wants on its
// host (package lld computes it; ApplyDiscovery makes it so).
type DiscoveryResult struct {
	RuleID uint64
	// Now and Lifetime (resolved, seconds) place lost resources'
	// deletion.
	Now, Lifetime int64
	Items         []DiscoveredItem
	Triggers      []DiscoveredTrigger
	Graphs        []DiscoveredGraph // graph_proto.go
	Hosts         []DiscoveredHost
}

// ApplyDiscovery makes the rule's discovered items and triggers what r
// wants: creates the missing, updates the changed, marks those no longer
// discovered lost (TSDelete now + lifetime) and deletes the lost whose
// time came. An object that cannot be made is skipped and its error
// returned in Zabbix 6.0's words (the rule's error); the others are
// made. Only a database error fails the Edit.
func (e *Edit) ApplyDiscovery(r *DiscoveryResult) ([]string, error) {
	if e.err != nil {
		return nil, e.err
	}
	rule := e.item(r.RuleID)
	if rule == nil || rule.Ext().LLD == nil {
		return nil, nil // deleted meanwhile
	}
	host := e.host(rule.HostID)
	var msgs []string
	have := map[string]*Item{}
	var mine []*Item
	for _, it := range e.hostItems(host.ID) {
		if d := it.Discovery; d != nil && d.RuleID == rule.ID {
			have[it.Key] = it
			mine = append(mine, it)
		}
	}
	wanted := map[uint64]bool{}
	// Masters first: a dependent's master may be discovered in this
	// result too.
	pending := slices.Clone(r.Items)
	// Two prototypes whose keys are one once expanded: the first makes
	// the item, the others are reported on the rule.
	madeBy := map[string]uint64{}
	pending = slices.DeleteFunc(pending, func(di DiscoveredItem) bool {
		if p, ok := madeBy[di.Item.Key]; ok && p != di.ProtoID {
			// Recorded from 6.0.14 (two prototypes, one key once expanded).
			msgs = append(msgs, fmt.Sprintf("Cannot create item: item with the same key \"%s\" already exists.", di.Item.Key))
			return true
		}
		madeBy[di.Item.Key] = di.ProtoID
		return false
	})
	for len(pending) > 0 {
		var next []DiscoveredItem
		progress := false
		for i := range pending {
			di := &pending[i]
			if di.MasterKey != "" && e.itemByKey(host.ID, di.MasterKey) == 0 {
				next = append(next, *di)
				continue
			}
			progress = true
			id, msg, err := e.discoverItem(rule, host, di, have[di.Item.Key])
			if err != nil {
				return nil, err
			}
			if msg != "" {
				msgs = append(msgs, msg)
			}
			if id != 0 {
				wanted[id] = true
			}
		}
		if !progress {
			for _, di := range next {
				msgs = append(msgs, fmt.Sprintf("Cannot create item: master item %q does not exist.", di.MasterKey))
			}
			break
		}
		pending = next
	}
	var gone []uint64
	for _, it := range mine {
		if wanted[it.ID] {
			continue
		}
		id, del, err := e.loseItem(it, r)
		if err != nil {
			return nil, err
		}
		if del {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		if err := e.propagate(func() error { return e.DeleteItems(e.existing(gone)) }); err != nil {
			return nil, err
		}
	}
	tm, err := e.discoverTriggers(rule, host, r)
	if err != nil {
		return nil, err
	}
	hm, err := e.applyDiscoveredHosts(rule, host, r)
	if err != nil {
		return nil, err
	}
	gm, err := e.discoverGraphs(rule, host, r) // graph_proto_apply.go
	if err != nil {
		return nil, err
	}
	return append(append(append(msgs, tm...), hm...), gm...), nil
}

// existing returns the IDs of ids whose item still exists (a dependent
// goes with its master).
func (e *Edit) existing(ids []uint64) []uint64 {
	out := ids[:0]
	for _, id := range ids {
		if e.item(id) != nil {
			out = append(out, id)
		}
	}
	return out
}

// discoverItem creates or updates the item di wants; cur is the item of
// its key the rule discovered before, if any.
func (e *Edit) discoverItem(rule *Item, host *Host, di *DiscoveredItem, cur *Item) (uint64, string, error) {
	var el errList
	want, ok := normItem(&di.Item, "item", &el, e.ck, di.MasterKey != "")
	if !ok {
		return 0, fmt.Sprintf("Cannot %s item: %v.", createOrUpdate(cur), el.err()), nil
	}
	if cur == nil {
		if id := e.itemByKey(host.ID, di.Item.Key); id != 0 {
			// Recorded from 6.0.14.
			return 0, fmt.Sprintf("Cannot create item: item with the same key \"%s\" already exists.", di.Item.Key), nil
		}
	}
	if di.MasterKey != "" {
		want.MasterItemID = e.itemByKey(host.ID, di.MasterKey)
	}
	want.HostID = host.ID
	if cur != nil && cur.Type == want.Type {
		want.InterfaceID = cur.InterfaceID
	}
	itemIface(&want, host, "", "item", "interfaceid", false, &el)
	if err := el.err(); err != nil {
		return 0, fmt.Sprintf("Cannot %s item: %v.", createOrUpdate(cur), err), nil
	}
	want.ValueMapID = e.ruleValueMap(rule, di.ValueMap)
	want.Discovery = &Discovery{RuleID: rule.ID, ProtoID: di.ProtoID}
	if cur == nil {
		e.internItem(&want)
		if err := e.insertItem(&want); err != nil {
			return 0, "", err
		}
		e.res.ItemsCreated++
		return want.ID, "", nil
	}
	want.ID, want.Enabled = cur.ID, cur.Enabled
	if cur.sameConfig(&want) && cur.ValueMapID == want.ValueMapID {
		return cur.ID, "", nil
	}
	e.internItem(&want)
	if err := e.writeItem(&want, cur); err != nil {
		return 0, "", err
	}
	e.res.ItemsUpdated++
	return cur.ID, "", nil
}

func createOrUpdate(cur *Item) string {
	if cur == nil {
		return "create"
	}
	return "update"
}

// internItem owns it's strings as CreateItems does.
func (e *Edit) internItem(it *Item) {
	it.Key, it.Name = e.text(it.Key), e.text(it.Name)
	it.Units, it.Delay, it.History, it.Trends = e.str(it.Units), e.str(it.Delay), e.str(it.History), e.str(it.Trends)
	if it.Extra != nil {
		x := it.MutExt()
		x.Timeout, x.SNMPOID, x.Params = e.str(x.Timeout), e.text(x.SNMPOID), e.text(x.Params)
		x.Description = e.text(x.Description)
	}
	e.shareExtra(it)
	it.Preprocessing = e.steps.get(it.Preprocessing)
	it.Tags = e.tags(it.Tags)
}

// ruleValueMap finds a value map by name on the rule's host, else on
// the templates its rule was copied from, up the levels (copies name
// their template's maps, as Zabbix's do).
func (e *Edit) ruleValueMap(rule *Item, name string) uint64 {
	if name == "" {
		return 0
	}
	for r, n := rule, 0; r != nil && n < 16; n++ {
		if id := e.valueMapByName(r.HostID, name); id != 0 {
			return id
		}
		if r.TemplateID == 0 {
			break
		}
		r = e.item(r.TemplateID)
	}
	return 0
}

// loseItem marks an item no longer discovered: lost from now until
// lifetime has passed, then deleted (del).
func (e *Edit) loseItem(it *Item, r *DiscoveryResult) (uint64, bool, error) {
	d := *it.Discovery
	switch {
	case r.Lifetime == 0:
		return it.ID, true, nil
	case d.TSDelete != 0 && r.Now >= d.TSDelete:
		return it.ID, true, nil
	case d.TSDelete != 0:
		return 0, false, nil
	}
	d.TSDelete = r.Now + r.Lifetime
	n := *it
	n.Discovery = &d
	if err := e.writeItem(&n, it); err != nil {
		return 0, false, err
	}
	return 0, false, nil
}

// discoverTriggers creates, updates and loses the rule's discovered
// triggers.
func (e *Edit) discoverTriggers(rule *Item, host *Host, r *DiscoveryResult) ([]string, error) {
	type key struct {
		proto uint64
		expr  string
	}
	have := map[key]*Trigger{}
	var mine []*Trigger
	for _, it := range e.hostItems(host.ID) {
		for _, t := range e.triggersOf(it.ID) {
			if d := t.Discovery; d != nil && d.RuleID == rule.ID {
				k := key{d.ProtoID, t.Expression}
				if have[k] == nil {
					have[k] = t
					mine = append(mine, t)
				}
			}
		}
	}
	var msgs []string
	wanted := map[uint64]bool{}
	for i := range r.Triggers {
		dt := &r.Triggers[i]
		d := &Discovery{RuleID: rule.ID, ProtoID: dt.ProtoID}
		cur := have[key{dt.ProtoID, dt.Fields.Expression}]
		if cur == nil {
			ids, err := e.CreateTriggers([]TriggerFields{dt.Fields})
			if err != nil {
				if e.err != nil {
					return nil, e.err
				}
				msgs = append(msgs, fmt.Sprintf("Cannot create trigger: %v.", err))
				continue
			}
			t := e.triggers[ids[0]]
			t.Discovery = d
			if err := e.writeTriggerDiscovery(t, false); err != nil {
				return nil, err
			}
			wanted[t.ID] = true
			continue
		}
		wanted[cur.ID] = true
		f := dt.Fields
		if cur.TSDeleteZero() && sameTriggerFields(fieldsOf(cur), f) {
			continue
		}
		n := *cur
		n.Description, n.EventName, n.RecoveryMode, n.RecoveryExpression = f.Description, f.EventName, f.RecoveryMode, f.RecoveryExpression
		n.Priority, n.Enabled, n.Multiple, n.ManualClose = f.Priority, f.Enabled, f.Multiple, f.ManualClose
		n.Opdata, n.Comments, n.URL, n.CorrelationMode, n.CorrelationTag, n.Tags = f.Opdata, f.Comments, f.URL, f.CorrelationMode, f.CorrelationTag, f.Tags
		n.Discovery = d
		if err := e.updateTrigger(&n); err != nil {
			return nil, err
		}
		e.res.TriggersUpdated++
	}
	var gone []uint64
	for _, t := range mine {
		if wanted[t.ID] {
			continue
		}
		d := *t.Discovery
		switch {
		case r.Lifetime == 0 || d.TSDelete != 0 && r.Now >= d.TSDelete:
			gone = append(gone, t.ID)
		case d.TSDelete == 0:
			d.TSDelete = r.Now + r.Lifetime
			n := *t
			n.Discovery = &d
			if err := e.updateTrigger(&n); err != nil {
				return nil, err
			}
		}
	}
	if len(gone) > 0 {
		var live []uint64
		for _, id := range gone {
			if e.trigger(id) != nil {
				live = append(live, id)
			}
		}
		if err := e.DeleteTriggers(live); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// TSDeleteZero reports whether a discovered trigger is not lost.
func (t *Trigger) TSDeleteZero() bool { return t.Discovery == nil || t.Discovery.TSDelete == 0 }
