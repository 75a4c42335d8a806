package poll

import (
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestTarget is a polled item as the external tests describe it, for
// catalogs that cannot hold interfaces yet.
type TestTarget struct {
	ItemID, HostID, InterfaceID uint64
	Type                        catalog.ItemType
	Key, Addr, Delay            string
	Timeout                     time.Duration
}

// UseTargets makes the scheduler poll the targets fn returns (at each
// catalog swap, and at start) instead of reading them from the catalog.
func (s *Scheduler) UseTargets(fn func() []TestTarget) {
	s.targetsFn = func(*catalog.Snapshot) []target {
		var out []target
		for _, t := range fn() {
			out = append(out, target{id: t.ItemID, hostID: t.HostID, ifaceID: t.InterfaceID, typ: t.Type,
				key: t.Key, addr: t.Addr, delay: t.Delay, timeout: t.Timeout})
		}
		return out
	}
}
