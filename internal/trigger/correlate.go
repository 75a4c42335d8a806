package trigger

import (
	"slices"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// Global event correlation (Zabbix 6.0's "Event correlation"): each new
// problem event a trigger makes is matched against the enabled rules
// of catalog.AlertConfig.Correlations, in ID order, and their
// operations close old problems ("close old events") or the new one
// ("close new event"). The semantics are Zabbix 6.0's server's,
// recorded from 6.0.14 (correlate_test.go):
//
//   - A rule is first matched against the new event alone, the
//     conditions on old events unknown: false → skipped; true and the
//     rule does not close old events → its operations run at once;
//     otherwise the open trigger problems the filter is true of are
//     found, and for each (not already closed by an earlier rule) the
//     operations run. With no open problem at all, the rule is matched
//     again with old conditions false, and if then true its operations
//     run without old events.
//   - Conditions: new event tag (a tag of that name), new event tag
//     value (a tag of that name whose value is equal / not equal /
//     contains / does not contain the value), new event host group (a
//     host of the trigger in the group or a group nested under it, or
//     not), old event tag, old event tag value (equal, like: some tag
//     of the name with that value; not equal, not like: no tag of the
//     name with that value, so also an old problem without the tag),
//     event tag pair (the old problem's tag oldtag has a value the new
//     event's tag newtag has).
//   - "Close old events" makes, per old problem, an OK event of its
//     trigger at the new event's time, without tags, naming the rule
//     (correlationid) and the new problem (c_eventid); the trigger
//     becomes OK when it has no open problem left. "Close new event"
//     makes the new problem's OK event at its own time (c_eventid the
//     problem itself) and marks both NoAction; the trigger becomes OK
//     unless it has other open problems. The new problem is made all
//     the same. Only the first rule closes a given event.
//   - Problems made in the same batch do not see each other (Zabbix
//     looks at the problem table, which holds them only after its
//     batch); problems being resolved in the batch are not old events.
//
// Everything a new event causes is in the commit that stores it: one
// log record, so a crash keeps all of it or none (event.Store.Commit).
// Old problems are found through the event store's tag index, never by
// scanning every open problem, except for a filter true of every old
// problem not carrying some tag (a negated condition), which needs the
// list of all open problems.

// CorrelationStore is what correlation needs from the event store
// besides Store (*event.Store implements it).
type CorrelationStore interface {
	OpenTagged(tag string, match func(value string) bool, dst []uint64) []uint64
	OpenTaggedValue(tag, value string, dst []uint64) []uint64
	OpenIDs(dst []uint64) []uint64
	OpenTriggerOf(id uint64) (uint64, bool)
	OpenIDsOf(trigger uint64, dst []uint64) []uint64
	OpenCount() int
	DropTagIndex()
}

// corrRules are the enabled rules compiled for one notification
// configuration and catalog snapshot (host groups nest by name).
type corrRules struct {
	cfg   *catalog.AlertConfig
	snap  *catalog.Snapshot
	rules []corrRule
}

type corrRule struct {
	id                 uint64
	closeOld, closeNew bool
	conds              []corrCond
	tree               *corrNode
}

type corrCond struct {
	catalog.CorrCondition
	// groups are, for a host group condition, the group and the groups
	// nested under it.
	groups map[uint64]bool
}

// corrState is a Process batch's correlation state.
type corrState struct {
	rules *corrRules
	store CorrelationStore
	// closing are the old problems closed in this batch; resolving the
	// problems OK events of the batch resolve.
	closing, resolving map[uint64]bool
	// newOpen counts, per trigger, the batch's new problems left open.
	newOpen map[uint64]int
	// closeNew and closeOld are the OK events correlation made, added
	// to the batch at its flush (close-new first, as 6.0 numbers them).
	closeNew, closeOld []event.Event
	anyOpen            int // -1: not asked yet; else the store's open count > 0
}

func (c *corrState) reset() {
	clear(c.closing)
	clear(c.resolving)
	clear(c.newOpen)
	c.closeNew, c.closeOld = nil, nil
	c.anyOpen = -1
}

// corrFor returns the correlation state for a batch on snap, nil when
// there is no enabled rule (then correlation costs nothing more). m.mu
// is held.
func (m *Machine) corrFor(snap *catalog.Snapshot) *corrState {
	if m.corrCfg == nil {
		return nil
	}
	cs, ok := m.store.(CorrelationStore)
	if !ok {
		return nil
	}
	cfg := m.corrCfg()
	if cfg == nil || len(cfg.Correlations) == 0 {
		if m.corr != nil {
			m.corr = nil
			cs.DropTagIndex()
			m.log.Info("event correlation: no rules left")
		}
		return nil
	}
	if m.corr == nil || m.corr.cfg != cfg || m.corr.snap != snap {
		changed := m.corr == nil || m.corr.cfg != cfg
		m.corr = m.compileCorr(cfg, snap)
		if changed {
			m.log.Info("event correlation: rules loaded", "enabled", len(m.corr.rules), "rules", len(cfg.Correlations))
		}
	}
	if len(m.corr.rules) == 0 {
		return nil
	}
	return &corrState{rules: m.corr, store: cs, closing: map[uint64]bool{}, resolving: map[uint64]bool{},
		newOpen: map[uint64]int{}, anyOpen: -1}
}

// compileCorr compiles the enabled rules of cfg for snap.
func (m *Machine) compileCorr(cfg *catalog.AlertConfig, snap *catalog.Snapshot) *corrRules {
	out := &corrRules{cfg: cfg, snap: snap}
	var groups []*catalog.Group
	for _, c := range cfg.SortedCorrelations() {
		if c.Status != catalog.CorrStatusActive {
			continue
		}
		tree, err := corrTree(c)
		if err != nil {
			m.log.Warn("event correlation: rule skipped", "correlationid", c.ID, "name", c.Name, "err", err)
			continue
		}
		r := corrRule{id: c.ID, tree: tree}
		for _, op := range c.Operations {
			switch op {
			case catalog.CorrCloseOld:
				r.closeOld = true
			case catalog.CorrCloseNew:
				r.closeNew = true
			}
		}
		for _, x := range c.Conditions {
			cc := corrCond{CorrCondition: x}
			if x.Type == catalog.CorrNewGroup {
				if groups == nil {
					groups = snap.Groups()
				}
				cc.groups = nestedGroups(groups, snap.GroupByID(x.GroupID), x.GroupID)
			}
			r.conds = append(r.conds, cc)
		}
		out.rules = append(out.rules, r)
	}
	return out
}

// nestedGroups is group id and the groups nested under it by name
// ("Servers/Linux" under "Servers"), as 6.0 matches a host group
// condition.
func nestedGroups(all []*catalog.Group, g *catalog.Group, id uint64) map[uint64]bool {
	out := map[uint64]bool{id: true}
	if g == nil {
		return out
	}
	prefix := g.Name + "/"
	for _, o := range all {
		if strings.HasPrefix(o.Name, prefix) {
			out[o.ID] = true
		}
	}
	return out
}

// strMatch is 6.0's operators on a tag value: 0 equal, 1 not equal, 2
// contains, 3 does not contain.
func strMatch(value, pattern string, op int) bool {
	switch op {
	case 1:
		return value != pattern
	case 2:
		return strings.Contains(value, pattern)
	case 3:
		return !strings.Contains(value, pattern)
	}
	return value == pattern
}

// matchNew is condition c on the new event e of trigger t: old-event
// conditions (and a tag pair whose new tag e has) are unknown when
// oldMay, else false.
func matchNew(snap *catalog.Snapshot, c *corrCond, t *catalog.Trigger, e *event.Event, oldMay bool) tri {
	old := triFalse
	if oldMay {
		old = triUnknown
	}
	hasTag := func(ok func(event.Tag) bool) tri {
		for _, tg := range e.Tags {
			if ok(tg) {
				return triTrue
			}
		}
		return triFalse
	}
	switch c.Type {
	case catalog.CorrOldTag, catalog.CorrOldTagValue:
		return old
	case catalog.CorrNewTag:
		return hasTag(func(tg event.Tag) bool { return tg.Tag == c.Tag })
	case catalog.CorrNewTagValue:
		return hasTag(func(tg event.Tag) bool { return tg.Tag == c.Tag && strMatch(tg.Value, c.Value, c.Operator) })
	case catalog.CorrNewGroup:
		in := false
		for _, h := range t.HostIDs {
			if host := snap.HostByID(h); host != nil && slices.ContainsFunc(host.GroupIDs, func(g uint64) bool { return c.groups[g] }) {
				in = true
				break
			}
		}
		if in != (c.Operator == 1) {
			return triTrue
		}
		return triFalse
	case catalog.CorrTagPair:
		if hasTag(func(tg event.Tag) bool { return tg.Tag == c.NewTag }) == triTrue {
			return old
		}
	}
	return triFalse
}

// oldSet is the set of open problems condition c is true of, for the
// new event e (whose own conditions are constants here).
func (cs *corrState) oldSet(snap *catalog.Snapshot, c *corrCond, t *catalog.Trigger, e *event.Event) idSet {
	all := idSet{neg: true}
	switch c.Type {
	case catalog.CorrOldTag:
		return idSet{ids: cs.store.OpenTagged(c.Tag, nil, nil)}
	case catalog.CorrOldTagValue:
		var s idSet
		if c.Operator == 0 || c.Operator == 1 {
			s.ids = cs.store.OpenTaggedValue(c.Tag, c.Value, nil)
		} else {
			s.ids = cs.store.OpenTagged(c.Tag, func(v string) bool { return strings.Contains(v, c.Value) }, nil)
		}
		// Not equal and not like: no tag of the name with such a value
		// (6.0's "not exists"), so also the problems without the tag.
		s.neg = c.Operator == 1 || c.Operator == 3
		return s
	case catalog.CorrTagPair:
		var ids []uint64
		for _, tg := range e.Tags {
			if tg.Tag == c.NewTag {
				ids = union(ids, cs.store.OpenTaggedValue(c.OldTag, tg.Value, nil))
			}
		}
		return idSet{ids: ids}
	}
	if matchNew(snap, c, t, e, true) == triTrue {
		return all
	}
	return idSet{}
}

// correlate applies the rules to the new problem at index i of the
// batch, made by trigger t. m.mu is held.
func (m *Machine) correlate(snap *catalog.Snapshot, t *catalog.Trigger, p *pending, i int) {
	cs := p.corr
	e := &p.batch.Events[i]
	cs.newOpen[t.ID]++
	newClosed := false
	closeNew := func(r *corrRule) {
		if newClosed || !r.closeNew {
			return
		}
		newClosed = true
		e.NoAction = true
		ok := event.Event{Source: event.SourceTrigger, Object: event.ObjectTrigger, ObjectID: t.ID,
			Clock: e.Clock, NS: e.NS, Value: event.ValueOK, Name: m.okName(snap, t),
			CorrelationID: r.id, NoAction: true, Cause: i + 1}
		cs.closeNew = append(cs.closeNew, ok)
		cs.newOpen[t.ID]--
		m.corrSettle(p, t.ID, e.Clock, e.NS)
	}
	closeOld := func(r *corrRule, id uint64) {
		if !r.closeOld || cs.closing[id] {
			return
		}
		trig, open := cs.store.OpenTriggerOf(id)
		ot := snap.Trigger(trig)
		if !open || ot == nil {
			return // resolved meanwhile, or its trigger deleted: 6.0 skips it
		}
		cs.closing[id] = true
		ok := event.Event{Source: event.SourceTrigger, Object: event.ObjectTrigger, ObjectID: trig,
			Clock: e.Clock, NS: e.NS, Value: event.ValueOK, Name: m.okName(snap, ot),
			Resolves: []uint64{id}, CorrelationID: r.id, Cause: i + 1}
		cs.closeOld = append(cs.closeOld, ok)
		// The trigger's next result must see this close committed.
		p.touched[trig] = true
		m.corrSettle(p, trig, e.Clock, e.NS)
	}
	var olds []*corrRule
	var direct []*corrRule
	for k := range cs.rules.rules {
		r := &cs.rules.rules[k]
		v := r.tree.eval3(func(c int) tri { return matchNew(snap, &r.conds[c], t, e, true) })
		switch {
		case v == triFalse:
			continue
		case v == triTrue && !r.closeOld:
			direct = append(direct, r)
			continue
		}
		if cs.anyOpen < 0 {
			cs.anyOpen = min(cs.store.OpenCount(), 1)
		}
		if cs.anyOpen == 0 {
			// No open problem: conditions on old events are false.
			if r.tree.eval3(func(c int) tri { return matchNew(snap, &r.conds[c], t, e, false) }) == triTrue {
				direct = append(direct, r)
			}
			continue
		}
		olds = append(olds, r)
	}
	// Rules decided by the new event alone run first, as in 6.0.
	for _, r := range direct {
		closeNew(r)
	}
	for _, r := range olds {
		set := r.tree.evalSet(func(c int) idSet { return cs.oldSet(snap, &r.conds[c], t, e) })
		ids := set.ids
		if set.neg {
			ids = minus(cs.store.OpenIDs(nil), set.ids)
		}
		for _, id := range ids {
			if cs.closing[id] || cs.resolving[id] {
				continue // closed by an earlier rule, or recovering in this batch
			}
			closeNew(r)
			closeOld(r, id)
		}
	}
}

// corrSettle makes trigger id OK, at the new event's time, once
// correlation left it no open problem. m.mu is held.
func (m *Machine) corrSettle(p *pending, id uint64, clock int64, ns int32) {
	cs := p.corr
	if cs.newOpen[id] > 0 {
		return
	}
	for _, pid := range cs.store.OpenIDsOf(id, nil) {
		if !cs.closing[pid] && !cs.resolving[pid] {
			return
		}
	}
	r := m.rt(p, id)
	if r.Value != event.ValueProblem {
		return
	}
	r.Value, r.LastChange, r.LastChangeNS = event.ValueOK, clock, ns
	p.setRT(r)
}

// okName is the name of t's OK events.
func (m *Machine) okName(snap *catalog.Snapshot, t *catalog.Trigger) string {
	if x := m.cached(snap, t); x != nil {
		return x.okName
	}
	return m.name(t, &MacroContext{Trigger: t, Snapshot: snap})
}
