package api

import (
	"cmp"
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// eventFilter holds the parameters problem.get and event.get share and
// selects events by them, before any object is built: problem.get over
// 100,000 open problems builds only the objects it returns.
type eventFilter struct {
	EventIDs     opt[ids]         `json:"eventids"`
	ObjectIDs    opt[ids]         `json:"objectids"`
	HostIDs      opt[ids]         `json:"hostids"`
	GroupIDs     opt[ids]         `json:"groupids"`
	Source       opt[int64]       `json:"source"`
	Object       opt[int64]       `json:"object"`
	Severities   opt[intList]     `json:"severities"`
	Acknowledged opt[flexBool]    `json:"acknowledged"`
	Suppressed   opt[flexBool]    `json:"suppressed"`
	TimeFrom     opt[int64]       `json:"time_from"`
	TimeTill     opt[int64]       `json:"time_till"`
	EventIDFrom  opt[uint64]      `json:"eventid_from"`
	EventIDTill  opt[uint64]      `json:"eventid_till"`
	Tags         opt[[]tagFilter] `json:"tags" as:"objects"`
	EvalType     opt[int64]       `json:"evaltype"`
}

// tagFilter is one element of "tags": operator 0 contains, 1 equals,
// 2 does not contain, 3 does not equal, 4 exists, 5 does not exist.
type tagFilter struct {
	Tag      opt[string] `json:"tag" as:"json"`
	Value    opt[string] `json:"value" as:"json"`
	Operator opt[int64]  `json:"operator"`
}

// flexBool is a boolean as Zabbix clients send them: true or false,
// "true" or "false" (Grafana's datasource sends recent: "true"), 1 or 0
// as a number or a string (the frontend's preprocessing test sends
// "single": "true"). null and "" leave it unset.
type flexBool struct{ set, v bool }

func (f *flexBool) decodeParam(b []byte, _ *fieldCtx) error {
	switch strings.TrimSpace(string(b)) {
	case "null", `""`:
		return nil
	case "true", `"true"`, "1", `"1"`:
		f.set, f.v = true, true
	case "false", `"false"`, "0", `"0"`:
		f.set, f.v = true, false
	default:
		return kindError{kind: reflect.Bool}
	}
	return nil
}

// intList is a number or a list of numbers ("severities").
type intList []int64

func (l *intList) decodeParam(b []byte, _ *fieldCtx) error {
	elems, ok := arrayElems(b)
	if !ok {
		if isNull(b) {
			return nil
		}
		elems = [][]byte{b}
	}
	for _, r := range elems {
		if isNull(r) {
			continue
		}
		n, err := strconv.ParseInt(unquote(r), 10, 64)
		if err != nil {
			return kindError{kind: reflect.Int64}
		}
		*l = append(*l, n)
	}
	return nil
}

func (f *eventFilter) check() error {
	for i, t := range f.Tags.Value {
		if t.Operator.Value < 0 || t.Operator.Value > 5 {
			return errParams(`Invalid parameter "/tags/%d/operator": value must be one of 0, 1, 2, 3, 4, 5.`, i+1)
		}
	}
	if f.EvalType.Given() && f.EvalType.Value != 0 && f.EvalType.Value != 2 {
		return errParams(`Invalid parameter "/evaltype": value must be one of 0, 2.`)
	}
	return nil
}

// eventScope is what a request may see: triggers readable by the caller,
// with the host and group restrictions of the request applied; the
// answer is cached per trigger.
type eventScope struct {
	cands *candCache // nil: candidates are not remembered
	snap  *catalog.Snapshot
	a     access
	f     *eventFilter
	cache map[uint64]bool
	hosts map[uint64]bool // see hostSet
}

func (sc *eventScope) trigger(id uint64) bool {
	if len(sc.f.GroupIDs.Value) == 0 && sc.a.all() {
		// Nothing costlier than the trigger's lookup and its hosts:
		// answered directly, without filling the cache, since a
		// storm's problems are one per trigger and its poll would
		// insert 100,000 entries to read none of them again.
		t := sc.snap.Trigger(id)
		if t == nil {
			return false
		}
		if len(sc.f.HostIDs.Value) == 0 {
			return true
		}
		hs := sc.hostSet()
		return slices.ContainsFunc(t.HostIDs, func(h uint64) bool { return hs[h] })
	}
	if v, ok := sc.cache[id]; ok {
		return v
	}
	t := sc.snap.Trigger(id)
	ok := t != nil && triggerReadable(sc.snap, sc.a, t, false)
	if ok && len(sc.f.HostIDs.Value) > 0 {
		hs := sc.hostSet()
		ok = slices.ContainsFunc(t.HostIDs, func(h uint64) bool { return hs[h] })
	}
	if ok && len(sc.f.GroupIDs.Value) > 0 {
		ok = slices.ContainsFunc(t.HostIDs, func(hid uint64) bool {
			h := sc.snap.HostByID(hid)
			return h != nil && anyGroup(h.GroupIDs, sc.f.GroupIDs.Value)
		})
	}
	sc.cache[id] = ok
	return ok
}

// hostSet is the request's hostids as a set, built at the first use:
// a storm's problem.get names 100 hosts for 100,000 triggers.
func (sc *eventScope) hostSet() map[uint64]bool {
	if sc.hosts == nil {
		sc.hosts = make(map[uint64]bool, len(sc.f.HostIDs.Value))
		for _, h := range sc.f.HostIDs.Value {
			sc.hosts[h] = true
		}
	}
	return sc.hosts
}

// match reports whether e passes the filter. Permissions and host and
// group restrictions come from sc.
func (f *eventFilter) match(e *event.Event, sc *eventScope) bool {
	switch {
	case len(f.EventIDs.Value) > 0 && !containsID(f.EventIDs.Value, e.ID),
		len(f.ObjectIDs.Value) > 0 && !containsID(f.ObjectIDs.Value, e.ObjectID),
		f.Source.Given() && f.Source.Value != int64(e.Source),
		f.Object.Given() && f.Object.Value != int64(e.Object),
		len(f.Severities.Value) > 0 && !slices.Contains(f.Severities.Value, int64(e.Severity)),
		f.Acknowledged.Value.set && f.Acknowledged.Value.v != e.Acknowledged,
		f.Suppressed.Value.set && f.Suppressed.Value.v != e.Suppressed,
		f.TimeFrom.Given() && e.Clock < f.TimeFrom.Value,
		f.TimeTill.Given() && e.Clock > f.TimeTill.Value,
		f.EventIDFrom.Set && e.ID < f.EventIDFrom.Value,
		f.EventIDTill.Set && e.ID > f.EventIDTill.Value,
		len(f.Tags.Value) > 0 && !f.tagsMatch(e.Tags):
		return false
	}
	return sc.trigger(e.ObjectID)
}

// tagsMatch applies "tags" with "evaltype": 0 (and/or: conditions on the
// same tag name are or-ed, different names and-ed) or 2 (or).
func (f *eventFilter) tagsMatch(tags []event.Tag) bool {
	one := func(c tagFilter) bool {
		tag, value, op := c.Tag.Value, c.Value.Value, c.Operator.Value
		has := false
		for _, t := range tags {
			if t.Tag != tag {
				continue
			}
			has = true
			switch op {
			case 0:
				if strings.Contains(strings.ToLower(t.Value), strings.ToLower(value)) {
					return true
				}
			case 1:
				if t.Value == value {
					return true
				}
			case 4:
				return true
			}
		}
		switch op {
		case 2:
			return !slices.ContainsFunc(tags, func(t event.Tag) bool {
				return t.Tag == tag && strings.Contains(strings.ToLower(t.Value), strings.ToLower(value))
			})
		case 3:
			return !slices.ContainsFunc(tags, func(t event.Tag) bool { return t.Tag == tag && t.Value == value })
		case 5:
			return !has
		}
		return false
	}
	if f.EvalType.Value == 2 {
		return slices.ContainsFunc(f.Tags.Value, one)
	}
	byName := map[string]bool{}
	for _, c := range f.Tags.Value {
		byName[c.Tag.Value] = byName[c.Tag.Value] || one(c)
	}
	for _, ok := range byName {
		if !ok {
			return false
		}
	}
	return true
}

func problemObject(e *event.Event) object {
	return object{
		"eventid": id(e.ID), "source": strconv.Itoa(int(e.Source)), "object": strconv.Itoa(int(e.Object)),
		"objectid": id(e.ObjectID), "clock": strconv.FormatInt(e.Clock, 10), "ns": strconv.Itoa(int(e.NS)),
		"r_eventid": id(e.REventID), "r_clock": strconv.FormatInt(e.RClock, 10), "r_ns": strconv.Itoa(int(e.RNS)),
		"correlationid": "0", "userid": id(e.UserID), "name": e.Name, "acknowledged": boolStr(e.Acknowledged),
		"severity": strconv.Itoa(int(e.Severity)), "opdata": e.Opdata, "suppressed": boolStr(e.Suppressed),
		"urls": []object{},
	}
}

func eventObject(e *event.Event) object {
	return object{
		"eventid": id(e.ID), "source": strconv.Itoa(int(e.Source)), "object": strconv.Itoa(int(e.Object)),
		"objectid": id(e.ObjectID), "clock": strconv.FormatInt(e.Clock, 10), "ns": strconv.Itoa(int(e.NS)),
		"value": strconv.Itoa(int(e.Value)), "acknowledged": boolStr(e.Acknowledged), "name": e.Name,
		"severity": strconv.Itoa(int(e.Severity)), "r_eventid": id(e.REventID), "c_eventid": id(e.CEventID),
		"correlationid": "0", "userid": id(e.UserID), "opdata": e.Opdata, "suppressed": boolStr(e.Suppressed),
		"urls": []object{},
	}
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func ackObjects(acks []event.Ack) []object {
	out := make([]object, 0, len(acks))
	for _, a := range acks {
		out = append(out, object{
			"acknowledgeid": id(a.ID), "userid": id(a.UserID), "eventid": id(a.EventID),
			"clock": strconv.FormatInt(a.Clock, 10), "message": a.Message, "action": strconv.Itoa(int(a.Action)),
			"old_severity": strconv.Itoa(int(a.OldSeverity)), "new_severity": strconv.Itoa(int(a.NewSeverity)),
		})
	}
	return out
}

func tagObjects(tags []event.Tag) []object {
	out := make([]object, 0, len(tags))
	for _, t := range tags {
		out = append(out, object{"tag": t.Tag, "value": t.Value})
	}
	return out
}

// problemGetParams are problem.get's parameters.
type problemGetParams struct {
	getParams
	eventFilter
	Recent                opt[flexBool] `json:"recent"`
	SelectAcknowledges    opt[any]      `json:"selectAcknowledges"`
	SelectTags            opt[any]      `json:"selectTags"`
	SelectSuppressionData opt[any]      `json:"selectSuppressionData"`
}

func (s *Server) problemGet(ctx context.Context, c *call) (any, error) {
	var p problemGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	for i, f := range p.SortField.Value {
		if f != "eventid" {
			return nil, errParams(`Invalid parameter "/sortfield/%d": value must be one of "eventid".`, i+1)
		}
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	sc := &eventScope{cands: &s.cands, snap: s.opts.Catalog.Snapshot(), a: a, f: &p.eventFilter, cache: map[uint64]bool{}}
	kept, n := s.selectProblems(&p.getParams, &p.eventFilter, sc, p.Recent.Value.v)
	if p.CountOutput.Value && len(p.Filter.Value) == 0 && len(p.Search.Value) == 0 {
		return strconv.Itoa(n), nil
	}
	if fastProblems(&p.getParams) {
		sortLimit(&p.getParams, kept)
		if p.Limit.Given() && p.Limit.Value >= 0 && int(p.Limit.Value) < len(kept) {
			kept = kept[:p.Limit.Value]
		}
		sel := problemSelects{acks: p.SelectAcknowledges.Given(), tags: p.SelectTags.Given(), suppression: p.SelectSuppressionData.Given()}
		return rawJSON(s.appendProblems(nil, kept, sel)), nil
	}
	if fields := shortProblems(&p.getParams, p.SelectAcknowledges.Value, p.SelectTags.Value, p.SelectSuppressionData.Value); fields != nil {
		sortLimit(&p.getParams, kept)
		if p.Limit.Given() && p.Limit.Value >= 0 && int(p.Limit.Value) < len(kept) {
			kept = kept[:p.Limit.Value]
		}
		return rawJSON(appendShortProblems(nil, kept, fields)), nil
	}
	return s.eventResult(&p.getParams, kept, func(e *event.Event) object {
		o := problemObject(e)
		if p.SelectAcknowledges.Given() {
			o["acknowledges"] = ackObjects(s.opts.Events.Acks(e.ID))
		}
		if p.SelectTags.Given() {
			o["tags"] = tagObjects(e.Tags)
		}
		if p.SelectSuppressionData.Given() {
			o["suppression_data"] = []object{}
		}
		return o
	}, "eventid")
}

// eventResult sorts, limits and shapes events. Without filter or search
// (which work on the objects' fields) the events are sorted and cut to
// the limit before any object is built.
func (s *Server) eventResult(p *getParams, evs []event.Event, build func(*event.Event) object, sortable ...string) (any, error) {
	if len(p.Filter.Value) == 0 && len(p.Search.Value) == 0 {
		if p.CountOutput.Value {
			return strconv.Itoa(len(evs)), nil
		}
		if sortLimit(p, evs) {
			if p.Limit.Given() && p.Limit.Value >= 0 && int(p.Limit.Value) < len(evs) {
				evs = evs[:p.Limit.Value]
			}
			// Done here on typed IDs: apply would sort again by
			// parsing the strings of every object.
			q := *p
			q.SortField, q.Limit = opt[[]string]{}, opt[int64]{}
			p = &q
		}
	}
	objs := make([]object, len(evs))
	for i := range evs {
		objs[i] = build(&evs[i])
	}
	return p.apply(objs, "eventid", sortable...)
}

// sortLimit sorts evs by event ID as p asks (ascending unless sortorder
// is DESC) when p sorts by eventid or not at all, and reports whether it
// did.
func sortLimit(p *getParams, evs []event.Event) bool {
	if len(p.SortField.Value) > 0 && p.SortField.Value[0] != "eventid" {
		return false
	}
	desc := len(p.SortOrder.Value) > 0 && strings.EqualFold(p.SortOrder.Value[0], "DESC")
	byID := func(a, b event.Event) int { return cmp.Compare(a.ID, b.ID) }
	// The store returns events in ID order (recent problems appended
	// after the open ones are the exception): check before sorting.
	if !slices.IsSortedFunc(evs, byID) {
		slices.SortFunc(evs, byID)
	}
	if desc {
		slices.Reverse(evs)
	}
	return true
}
