package alert

import (
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// Actions of event sources 2 (auto-registration) and 3 (internal
// events). An auto-registration action's filter is checked by
// Options.Autoreg (package autoreg knows the registrations); an internal
// action's here: event type (item not supported, LLD rule not
// supported, trigger unknown), host group, host, template and tags, the
// hosts being the item's or the trigger's.

// matchesSource checks an action's filter against an event of the
// action's source.
func (e *Engine) matchesSource(a *catalog.Action, ev *event.Event, in *matchInput) bool {
	switch ev.Source {
	case event.SourceTrigger:
		return e.matches(a, in)
	case event.SourceAutoreg:
		return e.opts.Autoreg != nil && e.opts.Autoreg(a, ev)
	case event.SourceDiscovery:
		return e.opts.Discovery != nil && e.opts.Discovery(a, ev)
	case event.SourceInternal:
		if ev.Value != event.ValueProblem {
			return false
		}
		hosts := eventHosts(in.snap, ev)
		fake := &matchInput{ev: ev, snap: in.snap, trig: &catalog.Trigger{HostIDs: hosts}}
		return FilterHolds(&a.Filter, func(c *catalog.Condition) bool {
			switch c.ConditionType {
			case catalog.CondEventType:
				return eventType(ev) == c.Value
			case catalog.CondTemplate:
				var tmpls []uint64
				if in.snap != nil {
					for _, h := range hosts {
						tmpls = append(tmpls, in.snap.LinkedTemplates(h)...)
					}
				}
				want, _ := strconv.ParseUint(c.Value, 10, 64)
				return slices.Contains(tmpls, want) == (c.Operator == catalog.OpEqual)
			}
			return condTrue(c, fake)
		})
	}
	return false
}

// runsOnce reports whether actions of the event's source run their
// operations once, without escalation or recovery: auto-registration
// and discovery.
func runsOnce(src uint8) bool { return src == event.SourceAutoreg || src == event.SourceDiscovery }

// eventType is an internal event's type as condition 23 names it.
func eventType(ev *event.Event) string {
	switch ev.Object {
	case event.ObjectItem:
		return strconv.Itoa(catalog.EventTypeItemNotSupported)
	case event.ObjectLLDRule:
		return strconv.Itoa(catalog.EventTypeLLDRuleNotSupported)
	case event.ObjectTrigger:
		return strconv.Itoa(catalog.EventTypeTriggerUnknown)
	}
	return ""
}

// eventHosts returns the hosts of an event's object: a trigger's, or
// an item's (or LLD rule's) host; nil if gone.
func eventHosts(snap *catalog.Snapshot, ev *event.Event) []uint64 {
	if snap == nil {
		return nil
	}
	if ev.Source == event.SourceInternal && ev.Object != event.ObjectTrigger {
		if it := snap.Item(ev.ObjectID); it != nil {
			return []uint64{it.HostID}
		}
		return nil
	}
	if t := snap.Trigger(ev.ObjectID); t != nil {
		return t.HostIDs
	}
	return nil
}

// internalMacros are an internal event's macros: its host's, and its
// item's or trigger's with their state and error (the event's name).
func internalMacros(snap *catalog.Snapshot, ev *event.Event) map[string]string {
	m := map[string]string{}
	hosts := eventHosts(snap, ev)
	if len(hosts) > 0 {
		if h := snap.HostByID(hosts[0]); h != nil {
			m["HOST.HOST"], m["HOST.NAME"], m["HOST.ID"] = h.Host, h.Name, strconv.FormatUint(h.ID, 10)
		}
	}
	state := "Normal"
	if ev.Value == event.ValueProblem {
		state = "Not supported"
		if ev.Object == event.ObjectTrigger {
			state = "Unknown"
		}
	}
	switch ev.Object {
	case event.ObjectItem, event.ObjectLLDRule:
		if it := snap.Item(ev.ObjectID); it != nil {
			m["ITEM.NAME"], m["ITEM.KEY"], m["ITEM.ID"] = it.Name, it.Key, strconv.FormatUint(it.ID, 10)
			if ev.Object == event.ObjectLLDRule {
				m["LLDRULE.NAME"], m["LLDRULE.KEY"], m["LLDRULE.ID"] = it.Name, it.Key, strconv.FormatUint(it.ID, 10)
				m["LLDRULE.STATE"], m["LLDRULE.STATE.ERROR"] = state, ev.Name
			}
		}
		m["ITEM.STATE"], m["ITEM.STATE.ERROR"] = state, ev.Name
	case event.ObjectTrigger:
		m["TRIGGER.STATE"], m["TRIGGER.STATE.ERROR"] = state, ev.Name
		if t := snap.Trigger(ev.ObjectID); t != nil {
			m["TRIGGER.ID"], m["TRIGGER.NAME"] = strconv.FormatUint(t.ID, 10), t.Description
		}
	}
	return m
}
