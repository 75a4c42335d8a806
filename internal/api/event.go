package api

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// eventGetParams are event.get's parameters (Zabbix 6.0's).
type eventGetParams struct {
	getParams
	eventFilter
	Value opt[intList] `json:"value"`
	// ProblemTimeFrom and ProblemTimeTill are accepted and not applied:
	// Peregrine keeps no history of problem states to select by.
	ProblemTimeFrom    opt[int64] `json:"problem_time_from"`
	ProblemTimeTill    opt[int64] `json:"problem_time_till"`
	SelectAcknowledges sel        `json:"select_acknowledges"`
	SelectTags         sel        `json:"selectTags"`
	SelectHosts        sel        `json:"selectHosts"`
	SelectRelated      sel        `json:"selectRelatedObject"`
	SelectAlerts       sel        `json:"select_alerts"`
	SelectSuppression  sel        `json:"selectSuppressionData"`
}

func (s *Server) eventGet(ctx context.Context, c *call) (any, error) {
	var p eventGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	ok, err := p.check([]int64{0, 1, 2, 3, 4}, []int64{0, 1, 2, 3, 4, 5, 6})
	if err != nil {
		return nil, err
	}
	if !ok {
		p.markNoRows()
	}
	if _, _, err := p.sortFields([]string{"eventid", "objectid", "clock"}); err != nil {
		return nil, err
	}
	p.plainConditions(&eventSchema)
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	sc := &eventScope{snap: snap, a: a, f: &p.eventFilter, cache: map[uint64]bool{}}
	// The filter runs under the store's read lock: it must not call the
	// store (eventScope only reads the snapshot).
	keep := func(e *event.Event) bool {
		return (!p.Value.Given() || slices.Contains(p.Value.Value, int64(e.Value))) && p.match(e, sc)
	}
	var evs []event.Event
	switch scan, ok := s.opts.Events.(EventScanner); {
	case p.noRows:
	case ok && newestOnly(&p.getParams):
		// The newest few events (the web UI's watermark, event.get
		// limit 1, every few seconds): walked from the newest, stopped
		// at the limit, instead of copying every retained event.
		n := int(p.Limit.Value)
		scan.ScanEventsDesc(func(e *event.Event) bool {
			if len(evs) >= n {
				return false
			}
			if keep(e) {
				evs = append(evs, *e)
			}
			return true
		})
		slices.Reverse(evs) // ascending, as Events returns them
	default:
		evs = s.opts.Events.Events(keep)
	}
	users := s.ackUsers(ctx)
	return s.eventResult(&p.getParams, &eventSchema, evs, func(e *event.Event) object {
		o := eventObject(e)
		if p.SelectAcknowledges.Set {
			o["acknowledges"] = s.ackSelect(p.SelectAcknowledges, e.ID, users)
		}
		if t := tagSelect(p.SelectTags, e.Tags); p.SelectTags.Set && t != nil {
			o["tags"] = t
		}
		if p.SelectSuppression.list() {
			o["suppression_data"] = []object{}
		}
		if p.SelectAlerts.list() {
			o["alerts"] = []object{}
		}
		t := snap.Trigger(e.ObjectID)
		if sl := p.SelectHosts; sl.list() {
			var hosts []object
			if t != nil {
				for _, hid := range t.HostIDs {
					if h := snap.HostByID(hid); h != nil {
						hosts = append(hosts, hostObject(h))
					}
				}
			}
			o["hosts"] = nonNil(sl.shape(hosts, "hostid"))
		}
		if sl := p.SelectRelated; sl.list() {
			if t != nil {
				o["relatedObject"] = sl.shape([]object{triggerObject(t, s.runtime(t.ID))}, "triggerid")[0]
			} else {
				o["relatedObject"] = []object{}
			}
		}
		return o
	}, "eventid", "objectid", "clock")
}

// eventAcknowledge serves event.acknowledge: the caller needs read access
// to the events' triggers, as in Zabbix; the state machine applies the
// actions with Zabbix's rules.
// eventAcknowledgeParams are event.acknowledge's parameters.
type eventAcknowledgeParams struct {
	EventIDs opt[ids]    `json:"eventids"`
	Action   opt[int64]  `json:"action"`
	Message  opt[string] `json:"message"`
	Severity opt[int64]  `json:"severity"`
}

func (s *Server) eventAcknowledge(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return nil, errParams("Incorrect arguments passed to function.") // 6.0's words
	}
	var p eventAcknowledgeParams
	// Zabbix 6.0 reads event.acknowledge's parameters as its legacy gets
	// read theirs: unknown members are ignored.
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	switch {
	case len(p.EventIDs.Value) == 0:
		return nil, errParams(`Invalid parameter "/": the parameter "eventids" is missing.`)
	case !p.Action.Given():
		return nil, errParams(`Invalid parameter "/": the parameter "action" is missing.`)
	case p.Action.Value < 0 || p.Action.Value > 31:
		return nil, errParams(`Invalid parameter "/action": value must be one of 1-31.`)
	case p.Action.Value&event.ActionSeverity != 0 && !p.Severity.Given():
		return nil, errParams(`Invalid parameter "/": the parameter "severity" is missing.`)
	case p.Severity.Given() && (p.Severity.Value < 0 || p.Severity.Value > 5):
		return nil, errParams(`Invalid parameter "/severity": value must be one of 0-5.`)
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	eids := slices.Compact(slices.Sorted(slices.Values(p.EventIDs.Value)))
	for _, eid := range eids {
		e, ok := s.opts.Events.Event(eid)
		if !ok {
			return nil, errNoPermissions
		}
		t := snap.Trigger(e.ObjectID)
		if t == nil || !triggerReadable(snap, a, t, false) {
			return nil, errNoPermissions
		}
	}
	err = s.opts.TriggerStates.Acknowledge(snap, trigger.AckRequest{
		EventIDs: eids, Action: uint32(p.Action.Value), Message: p.Message.Value, Severity: uint8(p.Severity.Value),
		UserID: c.user.ID, Clock: time.Now().Unix(),
	})
	var ae *trigger.AckError
	switch {
	case errors.As(err, &ae):
		if ae.Msg == errNoPermissions.Data {
			return nil, errNoPermissions
		}
		return nil, errParams("%s", ae.Msg)
	case err != nil:
		s.opts.Logger.Error("api: event.acknowledge failed", "user", c.user.Username, "remote", c.remote, "err", err)
		return nil, errApp("Cannot store the acknowledgement: %v", err)
	}
	// The IDs as numbers, in the request's order, as Zabbix 6.0 answers
	// (recorded from 6.0.14).
	out := make([]uint64, 0, len(eids))
	for _, e := range p.EventIDs.Value {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return object{"eventids": out}, nil
}

// EventScanner is the part of the event store event.get reads the newest
// events through without copying the others (*event.Store implements
// it).
type EventScanner interface {
	// ScanEventsDesc calls fn with each retained event, newest first,
	// until fn returns false; fn must not keep the pointer.
	ScanEventsDesc(fn func(*event.Event) bool)
}

// newestOnly reports whether p asks for the newest events only: sorted
// by eventid, newest first, with a limit, no filter or search (which
// work on the built objects) and no count.
func newestOnly(p *getParams) bool {
	return len(p.SortField.Value) > 0 && p.SortField.Value[0] == "eventid" && descOrder(p) &&
		p.Limit.Given() && p.Limit.Value >= 0 && !p.CountOutput.Value && !p.Filter.Given() && !p.Search.Given()
}
