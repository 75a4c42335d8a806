package api

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/api/zjson"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/expr"
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

// runtime is trigger id's runtime state (zero without TriggerStates).
func (s *Server) runtime(id uint64) event.Runtime {
	if s.opts.TriggerStates == nil {
		return event.Runtime{}
	}
	return s.opts.TriggerStates.Runtime(id)
}

// triggerReadable reports whether the caller may read t: every host it
// references readable (Zabbix's rule for triggers spanning hosts).
func triggerReadable(snap *catalog.Snapshot, a access, t *catalog.Trigger, editable bool) bool {
	if a.all() {
		return true
	}
	for _, hid := range t.HostIDs {
		h := snap.HostOrTemplate(hid)
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
		"opdata": t.Opdata, "comments": t.Comments, "url": t.URL, "event_name": t.EventName, "uuid": t.UUID,
		"correlation_mode": strconv.Itoa(int(t.CorrelationMode)), "correlation_tag": t.CorrelationTag,
		"value": strconv.Itoa(int(rt.Value)), "state": strconv.Itoa(int(rt.State)), "error": rt.Error,
		"lastchange": strconv.FormatInt(rt.LastChange, 10), "templateid": id(t.TemplateID), "flags": triggerFlags(t),
		"max_check_attempts": strconv.Itoa(int(max(t.MaxCheckAttempts, 1))),
	}
}

// functionObjects are selectFunctions' answer: the history function
// calls of the trigger's expressions (the problem one, then the
// recovery one) as 6.0 keeps them in its functions table. Peregrine
// keeps expressions as written, so each call's functionid is made from
// the trigger's ID and its place, stable while the expression is. A
// list of fields selects from functionid, itemid, triggerid and
// parameter ("function" is not one: 6.0 then answers an empty array
// per call, as recorded from 6.0.14).
func functionObjects(snap *catalog.Snapshot, t *catalog.Trigger, sl *sel) []any {
	out := []any{}
	n := 0
	for _, src := range []string{t.Expression, t.RecoveryExpression} {
		if src == "" {
			continue
		}
		e, err := expr.Parse(src)
		if err != nil {
			continue // stored expressions parse; an old one that does not has no functions
		}
		for _, f := range e.Functions() {
			n++
			itemID := "0"
			if it := snap.Lookup(f.Item.Host, f.Item.Key); it != nil {
				itemID = id(it.ID)
			} else if tm := snap.TemplateByName(f.Item.Host); tm != nil {
				if it := tm.Item(f.Item.Key); it != nil {
					itemID = id(it.ID)
				}
			}
			o := object{"functionid": id(t.ID<<20 | uint64(n)), "itemid": itemID, "triggerid": id(t.ID), "parameter": f.Params, "function": f.Name}
			if !sl.All {
				shaped := object{}
				for _, k := range sl.Fields {
					if v, ok := o[k]; ok && k != "function" {
						shaped[k] = v
					}
				}
				if len(shaped) == 0 {
					out = append(out, rawJSON("[]")) // PHP's empty array
					continue
				}
				o = shaped
			}
			out = append(out, o)
		}
	}
	return out
}

// SoftStates gives triggers' Nagios-style soft states
// (*trigger.Machine); when TriggerStates implements it, trigger.get
// returns Peregrine's "state_type" ("1" soft, "0" hard) and "attempt".
type SoftStates interface {
	Soft(id uint64) trigger.SoftState
}

// triggerSchema is Zabbix 6.0's triggers table (description is a
// varchar there, so a filter on it applies: recorded from 6.0.14).
var triggerSchema = schema{id: "triggerid", types: fieldTypes(`triggerid:n expression:c description:c url:c status:n
	value:n priority:n lastchange:n comments:t error:c templateid:n type:n state:n flags:n recovery_mode:n
	recovery_expression:c correlation_mode:n correlation_tag:c manual_close:n opdata:c event_name:c uuid:c`)}

// triggerGetParams are trigger.get's parameters (Zabbix 6.0's). The
// flags that take any value but null (false included) are as:"isset";
// inherited, dependent and templated select one kind when true and the
// other when false.
type triggerGetParams struct {
	getParams
	TriggerIDs  opt[ids]      `json:"triggerids"`
	HostIDs     opt[ids]      `json:"hostids"`
	TemplateIDs opt[ids]      `json:"templateids"` // joined to hostids
	GroupIDs    opt[ids]      `json:"groupids"`
	ItemIDs     opt[ids]      `json:"itemids"`
	Functions   opt[[]string] `json:"functions"`
	Host        opt[string]   `json:"host"`
	Group       opt[string]   `json:"group"`
	// Triggers are not inherited from templates, nor of templates.
	Inherited opt[bool] `json:"inherited"`
	Templated opt[bool] `json:"templated"`
	Dependent opt[bool] `json:"dependent"`
	Monitored opt[bool] `json:"monitored" as:"isset"`
	Active    opt[bool] `json:"active" as:"isset"`
	// Maintenance: any value PHP finds equal to 0 (0, false, "0")
	// selects the enabled triggers of hosts not in maintenance, any
	// other those of hosts in maintenance; Peregrine reports no host in
	// maintenance (maintenance_status "0").
	Maintenance        opt[json.RawMessage] `json:"maintenance" as:"json"`
	OnlyTrue           opt[bool]            `json:"only_true" as:"isset"`
	MinSeverity        opt[int64]           `json:"min_severity"`
	LastChangeSince    opt[int64]           `json:"lastChangeSince"`
	LastChangeTill     opt[int64]           `json:"lastChangeTill"`
	WithUnacknowledged opt[bool]            `json:"withUnacknowledgedEvents" as:"isset"`
	WithAcknowledged   opt[bool]            `json:"withAcknowledgedEvents" as:"isset"`
	WithLastEventUnack opt[bool]            `json:"withLastEventUnacknowledged" as:"isset"`
	SkipDependent      opt[bool]            `json:"skipDependent" as:"isset"`
	Tags               opt[tagConds]        `json:"tags"`
	EvalType           evalType             `json:"evaltype"`
	ExpandDescription  opt[bool]            `json:"expandDescription" as:"isset"`
	ExpandComment      opt[bool]            `json:"expandComment" as:"isset"`
	// Expressions are stored expanded: expandExpression changes nothing.
	ExpandExpression opt[bool] `json:"expandExpression" as:"isset"`

	SelectGroups           sel `json:"selectGroups"`
	SelectHosts            sel `json:"selectHosts"`
	SelectItems            sel `json:"selectItems"`
	SelectFunctions        sel `json:"selectFunctions"`
	SelectDependencies     sel `json:"selectDependencies"`
	SelectDiscoveryRule    sel `json:"selectDiscoveryRule"`
	SelectLastEvent        sel `json:"selectLastEvent"`
	SelectTags             sel `json:"selectTags"`
	SelectTriggerDiscovery sel `json:"selectTriggerDiscovery"`
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
	if p.TemplateIDs.Given() {
		p.HostIDs = given(append(slices.Clone(p.HostIDs.Value), p.TemplateIDs.Value...))
	}
	// filter.host and filter.hostid select by the triggers' hosts.
	var filterHosts []string
	var filterHostIDs opt[ids]
	for _, f := range []string{"host", "hostid"} {
		raw, ok := p.Filter.Value[f]
		if !ok {
			continue
		}
		delete(p.Filter.Value, f)
		if isNull(raw) {
			continue
		}
		if f == "host" {
			filterHosts = append([]string{}, legacyTexts(raw)...)
		} else {
			filterHostIDs = given(ids(legacyIDs(raw)))
		}
	}
	var groupID uint64
	empty := p.noRows || p.Maintenance.Given() && !phpEquals(p.Maintenance.Value, 0)
	if p.Group.Given() {
		if g := snap.Group(p.Group.Value); g != nil {
			groupID = g.ID
		} else {
			empty = true
		}
	}
	tags := compileTags(p.Tags.Value, p.EvalType.value())
	// Triggers with a problem event not acknowledged, for
	// withUnacknowledgedEvents and withAcknowledgedEvents.
	var unacked map[uint64]bool
	if p.WithUnacknowledged.Given() || p.WithAcknowledged.Given() {
		unacked = map[uint64]bool{}
		s.opts.Events.Events(func(e *event.Event) bool {
			if e.Source == 0 && e.Object == 0 && e.Value == event.ValueProblem && !e.Acknowledged {
				unacked[e.ObjectID] = true
			}
			return false
		})
	}
	var objs []object
	// A few triggers by ID (the web UI's problem rows in view, a
	// screenful per scrolled frame) are looked up, not matched against
	// every trigger; ascending by ID, as the snapshot holds them.
	// Templates' triggers (templated) after the hosts' (ascending by
	// ID within each).
	cands := snap.Triggers()
	switch {
	case p.Templated.Given() && p.Templated.Value:
		cands = snap.TemplateTriggers()
	case !p.Templated.Given() && len(snap.TemplateTriggers()) > 0:
		cands = append(slices.Clip(cands), snap.TemplateTriggers()...)
	}
	if n := len(p.TriggerIDs.Value); p.TriggerIDs.Given() && n <= len(cands)/8 {
		cands = make([]catalog.Trigger, 0, n)
		for _, id := range slices.Compact(slices.Sorted(slices.Values(p.TriggerIDs.Value))) {
			if t := snap.AnyTrigger(id); t != nil && (!p.Templated.Given() || (snap.TemplateTrigger(id) != nil) == p.Templated.Value) {
				cands = append(cands, *t)
			}
		}
	}
	if empty {
		cands = nil
	}
	hostOf := func(t *catalog.Trigger, ok func(h *catalog.Host) bool) bool {
		return slices.ContainsFunc(t.HostIDs, func(hid uint64) bool {
			h := snap.HostOrTemplate(hid)
			return h != nil && ok(h)
		})
	}
	for i := range cands {
		t := &cands[i]
		if !idsPass(p.TriggerIDs, t.ID) || p.Inherited.Given() && (t.TemplateID != 0) != p.Inherited.Value || !idsAny(p.HostIDs, t.HostIDs) || !idsAny(filterHostIDs, t.HostIDs) ||
			!idsAny(p.ItemIDs, t.ItemIDs) ||
			p.MinSeverity.Given() && int64(t.Priority) < p.MinSeverity.Value ||
			p.GroupIDs.Given() && !hostOf(t, func(h *catalog.Host) bool { return anyGroup(h.GroupIDs, p.GroupIDs.Value) }) ||
			p.Group.Given() && !hostOf(t, func(h *catalog.Host) bool { return slices.Contains(h.GroupIDs, groupID) }) ||
			p.Host.Given() && !hostOf(t, func(h *catalog.Host) bool { return h.Host == p.Host.Value }) ||
			filterHosts != nil && !hostOf(t, func(h *catalog.Host) bool { return slices.Contains(filterHosts, h.Host) }) ||
			p.Functions.Given() && !usesFunction(t, p.Functions.Value) ||
			p.Dependent.Given() && (len(t.Dependencies) > 0) != p.Dependent.Value ||
			p.Maintenance.Given() && !t.Enabled ||
			unacked != nil && p.WithUnacknowledged.Given() && !unacked[t.ID] ||
			unacked != nil && p.WithAcknowledged.Given() && unacked[t.ID] ||
			tags != nil && !tags.match(len(t.Tags), func(i int) (string, string) { return t.Tags[i].Tag, t.Tags[i].Value }) {
			continue
		}
		if !triggerReadable(snap, a, t, p.Editable.Value) {
			continue
		}
		if (p.Monitored.Value || p.Active.Value) && !triggerActive(snap, t, p.Monitored.Value) {
			continue
		}
		rt := rts.Runtime(t.ID)
		if p.OnlyTrue.Value && rt.Value != event.ValueProblem && rt.LastChange <= now-okPeriod {
			continue
		}
		if p.LastChangeSince.Given() && rt.LastChange <= p.LastChangeSince.Value || p.LastChangeTill.Given() && rt.LastChange >= p.LastChangeTill.Value {
			continue
		}
		if p.SkipDependent.Value && dependsOnProblem(snap, rts, t, 0) {
			continue
		}
		if p.WithLastEventUnack.Value {
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
		if p.ExpandDescription.Value || p.ExpandComment.Value {
			// Item values as Zabbix shows them in names: value maps, units.
			mc := &trigger.MacroContext{Trigger: t, Snapshot: snap, Result: trigger.ShowValues(snap, &trigger.Result{ItemIDs: t.ItemIDs, ItemValues: s.lastValues(snap, t)})}
			if p.ExpandDescription.Value {
				o["description"] = res.Expand(t.Description, mc)
			}
			if p.ExpandComment.Value {
				o["comments"] = res.Expand(t.Comments, mc)
			}
		}
		objs = append(objs, o)
	}
	sch := triggerSchema
	if slices.Contains(p.SortField.Value, "hostname") {
		// Sorting by hostname (the visible name of the trigger's first
		// host) adds it to every trigger, whatever the output, as
		// Zabbix 6.0's query selects it.
		for _, o := range objs {
			tid, _ := strconv.ParseUint(o["triggerid"].(string), 10, 64)
			name := ""
			if t := snap.AnyTrigger(tid); t != nil && len(t.HostIDs) > 0 {
				if h := snap.HostByID(t.HostIDs[0]); h != nil {
					name = h.Name
				}
			}
			o["hostname"] = rawJSON(zjson.AppendString(nil, name))
		}
		sch.sortValue = func(o object, f string) (string, bool) {
			if f != "hostname" {
				return "", false
			}
			var s string
			json.Unmarshal(o["hostname"].(rawJSON), &s)
			return s, true
		}
	}
	r, err := p.applySchema(objs, &sch, "triggerid", "description", "status", "priority", "lastchange", "hostname")
	if err != nil || p.CountOutput.Value {
		return r, err
	}
	eachObject(r, func(o object) {
		tid, _ := strconv.ParseUint(o["triggerid"].(string), 10, 64)
		if t := snap.AnyTrigger(tid); t != nil {
			s.triggerSelects(o, &p, snap, a, t)
		}
	})
	return r, nil
}

// eachObject calls fn with each object of a get's result (a list or,
// with preservekeys, a map).
func eachObject(r any, fn func(o object)) {
	switch x := r.(type) {
	case []object:
		for _, o := range x {
			fn(o)
		}
	case map[string]object:
		for _, o := range x {
			fn(o)
		}
	}
}

// usesFunction reports whether one of t's expressions calls one of the
// functions named.
func usesFunction(t *catalog.Trigger, names []string) bool {
	for _, n := range names {
		if strings.Contains(t.Expression, n+"(") || strings.Contains(t.RecoveryExpression, n+"(") {
			return true
		}
	}
	return false
}

// triggerSelects adds trigger.get's selects, as Zabbix 6.0 answers them
// (recorded from 6.0.14): "count" leaves groups, hosts, items,
// functions, dependencies, tags and the discovery members out; a list of
// fields adds the ID of groups, hosts, items and dependencies, not that
// of tags; lastEvent is the events table's fields of the trigger's
// newest event ([] for none), a list naming the ones wanted besides the
// event's ID.
func (s *Server) triggerSelects(o object, p *triggerGetParams, snap *catalog.Snapshot, a access, t *catalog.Trigger) {
	if sl := p.SelectHosts; sl.list() {
		var l []object
		for _, hid := range t.HostIDs {
			if h := snap.HostOrTemplate(hid); h != nil {
				l = append(l, hostObject(h))
			}
		}
		o["hosts"] = nonNil(sl.shape(p.limitSelect(l), "hostid"))
	}
	if sl := p.SelectGroups; sl.list() {
		var l []object
		var seen []uint64
		for _, hid := range t.HostIDs {
			if h := snap.HostOrTemplate(hid); h != nil {
				for _, gid := range h.GroupIDs {
					if g := snap.GroupByID(gid); g != nil && !slices.Contains(seen, gid) && a.seesGroup(gid, false) {
						seen = append(seen, gid)
						l = append(l, groupObject(g))
					}
				}
			}
		}
		sortByID(l, "groupid")
		o["groups"] = nonNil(sl.shape(p.limitSelect(l), "groupid"))
	}
	if sl := p.SelectItems; sl.list() {
		var items []*catalog.Item
		for _, iid := range t.ItemIDs {
			if it := snap.AnyItem(iid); it != nil {
				items = append(items, it)
			}
		}
		if sl.Fields != nil && !sl.has("itemid") {
			sl.Fields = append(slices.Clone(sl.Fields), "itemid")
		}
		o["items"] = s.itemObjects(items, sl)
	}
	if p.SelectFunctions.list() {
		o["functions"] = functionObjects(snap, t, &p.SelectFunctions)
	}
	if p.SelectDiscoveryRule.list() {
		o["discoveryRule"] = []object{}
	}
	if p.SelectTriggerDiscovery.list() {
		o["triggerDiscovery"] = []object{}
	}
	if sl := p.SelectTags; sl.list() {
		l := make([]object, 0, len(t.Tags))
		for _, tg := range t.Tags {
			l = append(l, object{"tag": tg.Tag, "value": tg.Value})
		}
		o["tags"] = sl.shape(l, "")
	}
	if sl := p.SelectDependencies; sl.list() {
		// The masters the caller may read; "count" leaves the member
		// out, as 6.0 does (recorded).
		var l []object
		for _, did := range t.Dependencies {
			if d := snap.AnyTrigger(did); d != nil && triggerReadable(snap, a, d, false) {
				l = append(l, triggerObject(d, s.runtime(d.ID)))
			}
		}
		o["dependencies"] = nonNil(sl.shape(l, "triggerid"))
	}
	if sl := p.SelectLastEvent; sl.Set {
		e, ok := s.opts.Events.LastEvent(t.ID)
		if !ok {
			o["lastEvent"] = []object{} // Zabbix gives an empty array for none
			return
		}
		ev := object{"eventid": id(e.ID), "source": strconv.Itoa(int(e.Source)), "object": strconv.Itoa(int(e.Object)),
			"objectid": id(e.ObjectID), "clock": strconv.FormatInt(e.Clock, 10), "value": strconv.Itoa(int(e.Value)),
			"acknowledged": boolStr(e.Acknowledged), "ns": strconv.Itoa(int(e.NS)), "name": e.Name,
			"severity": strconv.Itoa(int(e.Severity))}
		if sl.Fields != nil { // a list; any other value is every field
			for k := range ev {
				if k != "eventid" && !sl.has(k) {
					delete(ev, k)
				}
			}
		}
		o["lastEvent"] = ev
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
