package poll

import (
	"time"

	"github.com/peregrine-mon/peregrine/internal/itemstate"
)

// ifaceState is the availability of one interface as the loop tracks it
// (Zabbix 6.0 semantics); every change is published to the itemstate.Registry.
type ifaceState struct {
	available    uint8 // 0 unknown, 1 available, 2 unavailable
	err          string
	errorsFrom   int64 // unix seconds of the first failure in a row; 0 = none
	disableUntil int64 // no checks before this (unix seconds) while in error
	probing      bool  // the one probe check is in flight
}

// inError reports whether the interface is failing: reachable checks
// wait and one probe at a time tests it.
func (st *ifaceState) inError() bool { return st.errorsFrom != 0 }

func (st *ifaceState) publish(r *itemstate.Registry, id uint64) {
	r.SetAvailability(id, itemstate.Availability{
		Available: st.available, Error: st.err, ErrorsFrom: st.errorsFrom, DisableUntil: st.disableUntil,
	})
}

// availability applies one check's outcome to its interface. As Zabbix:
// any answer (a value or "not supported") makes the interface available
// and clears its errors; a network error starts or continues a run of
// failures: for UnreachablePeriod the interface is "unreachable" (its
// checks wait UnreachableDelay between probes), after that it is
// unavailable (available 2) and probed once per UnavailableDelay.
func (s *Scheduler) availability(c completion, probe bool, sec int64) {
	if c.iface == 0 {
		return // a check without an interface (internal items)
	}
	st := s.ifaces[c.iface]
	if st == nil {
		st = &ifaceState{}
		s.ifaces[c.iface] = st
	}
	if probe {
		st.probing = false
	}
	if c.status == LocalError {
		return // says nothing of the interface
	}
	if c.status != NetworkError {
		if st.available != 1 || st.inError() {
			if st.available == 2 {
				s.m.recovered.Inc()
				if n, ok := s.throttle.Allow("iface:recovered"); ok {
					s.opts.Logger.Info("interface available again", "interfaceid", c.iface, "others_suppressed", n)
				}
			}
			*st = ifaceState{available: 1, probing: st.probing}
			st.publish(s.opts.ItemStates, c.iface)
		}
		return
	}
	when := c.clock
	if when == 0 {
		when = sec
	}
	st.err = c.err
	switch {
	case !st.inError():
		st.errorsFrom = when
		st.disableUntil = when + secs(s.opts.UnreachableDelay)
		// Throttled: a switch going down makes thousands of interfaces
		// unreachable at once; the counters and host.get have them all.
		if n, ok := s.throttle.Allow("iface:unreachable"); ok {
			s.opts.Logger.Warn("interface unreachable: its checks wait for a probe", "interfaceid", c.iface, "err", c.err, "probe_in", s.opts.UnreachableDelay, "others_suppressed", n)
		}
	case when-st.errorsFrom < secs(s.opts.UnreachablePeriod):
		st.disableUntil = max(st.disableUntil, when+secs(s.opts.UnreachableDelay))
	default:
		if st.available != 2 {
			s.m.unavailable.Inc()
			if n, ok := s.throttle.Allow("iface:unavailable"); ok {
				s.opts.Logger.Warn("interface unavailable", "interfaceid", c.iface, "err", c.err, "failing_since", time.Unix(st.errorsFrom, 0), "probe_every", s.opts.UnavailableDelay, "others_suppressed", n)
			}
		}
		st.available = 2
		st.disableUntil = max(st.disableUntil, when+secs(s.opts.UnavailableDelay))
	}
	st.publish(s.opts.ItemStates, c.iface)
}

func secs(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }
