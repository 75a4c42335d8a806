package api

import "github.com/peregrine-mon/peregrine/internal/itemstate"

// ItemStates gives the runtime state of items ("state" and "error" in
// item.get). *itemstate.Registry implements it.
type ItemStates interface {
	// ItemState returns the item's state; ok false means normal.
	ItemState(item uint64) (s itemstate.Item, ok bool)
}

// Availabilities gives the runtime availability of host interfaces
// ("available", "error", "errors_from", "disable_until" of host.get's
// interfaces). *itemstate.Registry implements it.
type Availabilities interface {
	// Availability returns the interface's availability; ok false means
	// never checked (Zabbix "unknown", available 0).
	Availability(iface uint64) (a itemstate.Availability, ok bool)
}

// CheckNower schedules immediate checks of items (Zabbix task.create type
// 6, "check now"). The poller implements it.
type CheckNower interface {
	// CheckNow asks for one check of each item as soon as possible. It
	// does not wait for the checks. An error means none was scheduled.
	CheckNow(itemIDs []uint64) error
}
