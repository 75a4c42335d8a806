package api

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// Events reads the event store (*event.Store implements it).
type Events interface {
	OpenProblems() []event.Event
	Recent(since int64) []event.Event
	Events(keep func(*event.Event) bool) []event.Event
	Event(id uint64) (event.Event, bool)
	LastEvent(trigger uint64) (event.Event, bool)
	Acks(eventID uint64) []event.Ack
}

// TriggerStates gives triggers' runtime and takes acknowledge actions
// (*trigger.Machine implements it).
type TriggerStates interface {
	Runtime(id uint64) event.Runtime
	Acknowledge(snap *catalog.Snapshot, req trigger.AckRequest) error
}

// okPeriod is Zabbix's default "display OK triggers for": how long a
// recovered trigger counts for only_true and a resolved problem for
// problem.get's recent.
const okPeriod = 5 * 60

// registerTriggers registers trigger.*, problem.get, event.get and
// event.acknowledge when the event store and the state machine are
// wired; trigger.create/update/delete also need an editable catalog.
func (s *Server) registerTriggers() {
	if s.opts.Events == nil || s.opts.TriggerStates == nil {
		return
	}
	s.methods["trigger.get"] = &method{role: RoleUser, call: s.triggerGet}
	s.methods["problem.get"] = &method{role: RoleUser, call: s.problemGet}
	s.methods["event.get"] = &method{role: RoleUser, call: s.eventGet}
	s.methods["event.acknowledge"] = &method{role: RoleUser, call: s.eventAcknowledge}
	if ed, ok := s.opts.Catalog.(CatalogEditor); ok {
		w := &configWriter{s: s, ed: ed, cat: s.opts.Catalog}
		s.methods["trigger.create"] = &method{role: RoleAdmin, call: w.triggerCreate}
		s.methods["trigger.update"] = &method{role: RoleAdmin, call: w.triggerUpdate}
		s.methods["trigger.delete"] = &method{role: RoleAdmin, call: w.triggerDelete}
		s.methods["trigger.adddependencies"] = &method{role: RoleAdmin, call: w.triggerAddDependencies}
		s.methods["trigger.deletedependencies"] = &method{role: RoleAdmin, call: w.triggerDeleteDependencies}
	}
}

// triggerReadable reports whether the caller may read t: every host it
// references readable (Zabbix's rule for triggers spanning hosts).
func triggerReadable(snap *catalog.Snapshot, a access, t *catalog.Trigger, editable bool) bool {
	if a.all() {
		return true
	}
	for _, hid := range t.HostIDs {
		h := snap.HostByID(hid)
		if h == nil || !a.sees(h, editable) {
			return false
		}
	}
	return true
}

func triggerObject(t *catalog.Trigger, rt event.Runtime) object {
	typ := "0"
	if t.Multiple {
		typ = "1"
	}
	mc := "0"
	if t.ManualClose {
		mc = "1"
	}
	return object{
		"triggerid": id(t.ID), "description": t.Description, "expression": t.Expression,
		"recovery_mode": strconv.Itoa(int(t.RecoveryMode)), "recovery_expression": t.RecoveryExpression,
		"priority": strconv.Itoa(int(t.Priority)), "status": status(t.Enabled), "type": typ, "manual_close": mc,
		"opdata": t.Opdata, "comments": t.Comments, "url": t.URL, "event_name": t.EventName, "uuid": "",
		"correlation_mode": strconv.Itoa(int(t.CorrelationMode)), "correlation_tag": t.CorrelationTag,
		"value": strconv.Itoa(int(rt.Value)), "state": strconv.Itoa(int(rt.State)), "error": rt.Error,
		"lastchange": strconv.FormatInt(rt.LastChange, 10), "templateid": "0", "flags": "0",
		"max_check_attempts": strconv.Itoa(int(max(t.MaxCheckAttempts, 1))),
	}
}

// SoftStates gives triggers' Nagios-style soft states
// (*trigger.Machine); when TriggerStates implements it, trigger.get
// returns Peregrine's "state_type" ("1" soft, "0" hard) and "attempt".
type SoftStates interface {
	Soft(id uint64) trigger.SoftState
}

// triggerGetParams are trigger.get's parameters.
type triggerGetParams struct {
	getParams
	TriggerIDs         opt[ids]   `json:"triggerids"`
	HostIDs            opt[ids]   `json:"hostids"`
	GroupIDs           opt[ids]   `json:"groupids"`
	ItemIDs            opt[ids]   `json:"itemids"`
	OnlyTrue           opt[bool]  `json:"only_true"`
	MinSeverity        opt[int64] `json:"min_severity"`
	ExpandDescription  opt[bool]  `json:"expandDescription"`
	ExpandExpression   opt[bool]  `json:"expandExpression"` // expressions are stored expanded
	ExpandData         opt[bool]  `json:"expandData"`       // deprecated; macros of the description are expanded with expandDescription
	ExpandComment      opt[bool]  `json:"expandComment"`
	SelectHosts        opt[any]   `json:"selectHosts"`
	SelectGroups       opt[any]   `json:"selectGroups"`
	SelectItems        opt[any]   `json:"selectItems"`
	SelectTags         opt[any]   `json:"selectTags"`
	SelectLastEvent    opt[any]   `json:"selectLastEvent"`
	SelectDependencies opt[any]   `json:"selectDependencies"`
	SkipDependent      opt[bool]  `json:"skipDependent"`
	LastChangeSince    opt[int64] `json:"lastChangeSince"`
	LastChangeTill     opt[int64] `json:"lastChangeTill"`
	Monitored          opt[bool]  `json:"monitored"`
	Active             opt[bool]  `json:"active"`
	WithUnacknowledged opt[bool]  `json:"withUnacknowledgedEvents"`
	WithLastEventUnack opt[bool]  `json:"withLastEventUnacknowledged"`
}

func (s *Server) triggerGet(ctx context.Context, c *call) (any, error) {
	var p triggerGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	now := time.Now().Unix()
	rts := s.opts.TriggerStates
	res := trigger.MacroResolver{}
	var objs []object
	// A few triggers by ID (the web UI's problem rows in view, a
	// screenful per scrolled frame) are looked up, not matched against
	// every trigger; ascending by ID, as the snapshot holds them.
	cands := snap.Triggers()
	if n := len(p.TriggerIDs.Value); n > 0 && n <= len(cands)/8 {
		cands = make([]catalog.Trigger, 0, n)
		for _, id := range slices.Compact(slices.Sorted(slices.Values(p.TriggerIDs.Value))) {
			if t := snap.Trigger(id); t != nil {
				cands = append(cands, *t)
			}
		}
	}
	for i := range cands {
		t := &cands[i]
		if len(p.TriggerIDs.Value) > 0 && !containsID(p.TriggerIDs.Value, t.ID) ||
			len(p.HostIDs.Value) > 0 && !slices.ContainsFunc(t.HostIDs, func(h uint64) bool { return containsID(p.HostIDs.Value, h) }) ||
			len(p.ItemIDs.Value) > 0 && !slices.ContainsFunc(t.ItemIDs, func(it uint64) bool { return containsID(p.ItemIDs.Value, it) }) ||
			p.MinSeverity.Given() && int64(t.Priority) < p.MinSeverity.Value {
			continue
		}
		if len(p.GroupIDs.Value) > 0 && !slices.ContainsFunc(t.HostIDs, func(hid uint64) bool {
			h := snap.HostByID(hid)
			return h != nil && anyGroup(h.GroupIDs, p.GroupIDs.Value)
		}) {
			continue
		}
		if !triggerReadable(snap, a, t, p.Editable.Value) {
			continue
		}
		if (p.Monitored.Value || p.Active.Value) && !triggerActive(snap, t, p.Monitored.Value) {
			continue
		}
		rt := rts.Runtime(t.ID)
		if p.OnlyTrue.Value && rt.Value != event.ValueProblem && rt.LastChange < now-okPeriod {
			continue
		}
		if p.LastChangeSince.Given() && rt.LastChange < p.LastChangeSince.Value || p.LastChangeTill.Given() && rt.LastChange > p.LastChangeTill.Value {
			continue
		}
		if p.SkipDependent.Value && dependsOnProblem(snap, rts, t, 0) {
			continue
		}
		if p.WithUnacknowledged.Value || p.WithLastEventUnack.Value {
			last, ok := s.opts.Events.LastEvent(t.ID)
			if !ok || last.Value != event.ValueProblem || last.Acknowledged {
				continue
			}
		}
		o := triggerObject(t, rt)
		if ss, ok := s.opts.TriggerStates.(SoftStates); ok {
			st := ss.Soft(t.ID)
			o["state_type"], o["attempt"] = "0", strconv.Itoa(int(st.Attempt))
			if st.Soft {
				o["state_type"] = "1"
			}
		}
		if p.ExpandDescription.Value || p.ExpandData.Value || p.ExpandComment.Value {
			mc := &trigger.MacroContext{Trigger: t, Snapshot: snap, Result: &trigger.Result{ItemValues: s.lastValues(snap, t)}}
			if p.ExpandDescription.Value || p.ExpandData.Value {
				o["description"] = res.Expand(t.Description, mc)
			}
			if p.ExpandComment.Value {
				o["comments"] = res.Expand(t.Comments, mc)
			}
		}
		s.triggerSelects(o, &p.getParams, snap, a, t, p.SelectHosts.Value, p.SelectGroups.Value, p.SelectItems.Value, p.SelectTags.Value, p.SelectLastEvent.Value, p.SelectDependencies.Value)
		objs = append(objs, o)
	}
	return p.apply(objs, "triggerid", "triggerid", "description", "status", "priority", "lastchange", "value", "state")
}

// triggerSelects adds the selectX members of trigger.get.
func (s *Server) triggerSelects(o object, p *getParams, snap *catalog.Snapshot, a access, t *catalog.Trigger, hosts, groups, items, tags, last, deps any) {
	if hosts != nil {
		var l []object
		for _, hid := range t.HostIDs {
			if h := snap.HostByID(hid); h != nil {
				l = append(l, hostObject(h))
			}
		}
		o["hosts"] = nonNil(p.limitSelect(l))
	}
	if groups != nil {
		var l []object
		var seen []uint64
		for _, hid := range t.HostIDs {
			if h := snap.HostByID(hid); h != nil {
				for _, gid := range h.GroupIDs {
					if g := snap.GroupByID(gid); g != nil && !slices.Contains(seen, gid) && a.seesGroup(gid, false) {
						seen = append(seen, gid)
						l = append(l, groupObject(g))
					}
				}
			}
		}
		o["groups"] = nonNil(p.limitSelect(l))
	}
	if items != nil {
		var l []object
		for _, iid := range t.ItemIDs {
			if it := snap.Item(iid); it != nil {
				l = append(l, object{"itemid": id(it.ID), "hostid": id(it.HostID), "key_": it.Key, "name": it.Name,
					"value_type": strconv.Itoa(int(it.ValueType)), "status": status(it.Enabled), "units": it.Units, "valuemapid": id(it.ValueMapID)})
			}
		}
		o["items"] = nonNil(p.limitSelect(l))
	}
	if tags != nil {
		l := make([]object, 0, len(t.Tags))
		for _, tg := range t.Tags {
			l = append(l, object{"tag": tg.Tag, "value": tg.Value})
		}
		o["tags"] = l
	}
	if deps != nil {
		if l, ok := s.selectDependencies(deps, snap, a, t); ok {
			o["dependencies"] = l
		}
	}
	if last != nil {
		if e, ok := s.opts.Events.LastEvent(t.ID); ok {
			o["lastEvent"] = eventObject(&e)
		} else {
			o["lastEvent"] = []object{} // Zabbix gives an empty array for none
		}
	}
}

// lastValues are the last values of t's items, for {ITEM.VALUE<N>}.
func (s *Server) lastValues(snap *catalog.Snapshot, t *catalog.Trigger) []string {
	if s.opts.Last == nil {
		return nil
	}
	out := make([]string, 0, len(t.ItemIDs))
	for _, iid := range t.ItemIDs {
		last, _, ok := s.opts.Last.Last(iid)
		it := snap.Item(iid)
		if !ok || it == nil {
			out = append(out, "*UNKNOWN*")
			continue
		}
		out = append(out, string(appendSampleValue(nil, &last)))
	}
	return out
}

// triggerActive: the trigger and its hosts are enabled, and with
// monitored its items too.
func triggerActive(snap *catalog.Snapshot, t *catalog.Trigger, monitored bool) bool {
	if !t.Enabled {
		return false
	}
	for _, hid := range t.HostIDs {
		if h := snap.HostByID(hid); h == nil || !h.Enabled {
			return false
		}
	}
	if monitored {
		for _, iid := range t.ItemIDs {
			if it := snap.Item(iid); it == nil || !it.Enabled {
				return false
			}
		}
	}
	return true
}

// dependsOnProblem reports whether a master of t, up the chain, is in
// PROBLEM (skipDependent).
func dependsOnProblem(snap *catalog.Snapshot, rts TriggerStates, t *catalog.Trigger, depth int) bool {
	if depth > 32 {
		return false
	}
	for _, did := range t.Dependencies {
		d := snap.Trigger(did)
		if d == nil {
			continue
		}
		if rts.Runtime(did).Value == event.ValueProblem || dependsOnProblem(snap, rts, d, depth+1) {
			return true
		}
	}
	return false
}
