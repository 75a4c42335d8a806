package itemstate

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Item is the runtime state of one item as Zabbix's item.get shows
// it: state 0 ("normal") or 1 ("not supported") and the error text.
type Item struct {
	NotSupported bool
	Error        string // why the item is not supported; "" when normal
	Clock        int64  // unix seconds of the check that set the state; 0 = never
}

// Availability is the runtime availability of one host interface as
// Zabbix 6.0 shows it in host.get's interfaces.
type Availability struct {
	// Available is 0 unknown, 1 available, 2 unavailable (Zabbix host
	// interface "available").
	Available uint8
	// Error is the last failure ("" when available); ErrorsFrom is when
	// the failures began and DisableUntil when the next probe is due,
	// both unix seconds, 0 = none.
	Error        string
	ErrorsFrom   int64
	DisableUntil int64
}

// stripes is the number of lock stripes of a Registry. A power of
// two so that the shard is a mask of the ID; 64 stripes keep pollers
// and active-agent handlers writing different items from meeting on one
// lock while costing 64 small maps.
const stripes = 64

// Registry is the registry of item states and interface availabilities
// that pollers and the active-agent server write and the API reads. It
// is safe for concurrent use: IDs are striped over stripes locks,
// there is no global lock.
//
// It is not persisted here (a cluster node copies it to PostgreSQL,
// pg.go): after a restart every item is normal and every interface
// unknown (Available 0) until it is checked again, which is also what
// Zabbix shows for an interface not yet checked. Only items
// that are not supported and interfaces that were checked take memory;
// a normal item has no entry.
type Registry struct {
	items  [stripes]itemStripe
	ifaces [stripes]ifaceStripe
	// notSupported counts the states set to not supported: every check
	// or agent row that left its item not supported, as Zabbix's
	// zabbix[wcache,values,not supported] counts them.
	notSupported atomic.Uint64
	// onChange, if set, hears an item becoming not supported and normal
	// again (internal events); called outside the locks.
	onChange atomic.Pointer[func(item uint64, notSupported bool, err string)]
}

// OnChange sets the function told when an item becomes not supported
// (with the error) or normal again; it must not block. Set it before
// states are written.
func (r *Registry) OnChange(fn func(item uint64, notSupported bool, err string)) {
	r.onChange.Store(&fn)
}

func (r *Registry) changed(item uint64, notSupported bool, err string) {
	if fn := r.onChange.Load(); fn != nil {
		(*fn)(item, notSupported, err)
	}
}

// The stripes are padded to a cache line so that writers of neighbouring
// stripes do not invalidate each other's line.
type itemStripe struct {
	mu sync.RWMutex
	m  map[uint64]Item
	// n is len(m), kept so that the success path of every value (the
	// pipeline's preprocessing clears states per value) costs an atomic
	// load while no item of the stripe is in trouble, not a lock.
	n atomic.Int64
	_ [64 - 40]byte
}

type ifaceStripe struct {
	mu sync.RWMutex
	m  map[uint64]Availability
	_  [64 - 32]byte
}

// New returns an empty registry.
func New() *Registry {
	r := &Registry{}
	for i := range r.items {
		r.items[i].m = map[uint64]Item{}
		r.ifaces[i].m = map[uint64]Availability{}
	}
	return r
}

// SetItemState records the state of an item. Setting the zero Item
// (normal) removes the entry; for an item that is already normal it takes
// a shared lock only, so the success path of every check may call it.
func (r *Registry) SetItemState(item uint64, s Item) {
	st := &r.items[item&(stripes-1)]
	if !s.NotSupported && s.Error == "" {
		if st.n.Load() == 0 {
			return
		}
		st.mu.RLock()
		_, ok := st.m[item]
		st.mu.RUnlock()
		if !ok {
			return
		}
		st.mu.Lock()
		old, had := st.m[item]
		delete(st.m, item)
		st.n.Store(int64(len(st.m)))
		st.mu.Unlock()
		if had && old.NotSupported {
			r.changed(item, false, "")
		}
		return
	}
	if s.NotSupported {
		r.notSupported.Add(1)
	}
	st.mu.Lock()
	old := st.m[item]
	st.m[item] = s
	st.n.Store(int64(len(st.m)))
	st.mu.Unlock()
	if s.NotSupported != old.NotSupported {
		r.changed(item, s.NotSupported, s.Error)
	}
}

// NotSupportedTotal is how many times an item was set not supported
// since the start (one per check or agent row that left it so).
func (r *Registry) NotSupportedTotal() uint64 { return r.notSupported.Load() }

// CountNotSupported returns how many items are not supported now, of
// those for which keep returns true (the caller's enabled catalog
// items: states of items that left are dropped lazily). It visits every
// recorded state, one stripe lock at a time.
func (r *Registry) CountNotSupported(keep func(item uint64) bool) int {
	n := 0
	for i := range r.items {
		st := &r.items[i]
		st.mu.RLock()
		for id, s := range st.m {
			if s.NotSupported && keep(id) {
				n++
			}
		}
		st.mu.RUnlock()
	}
	return n
}

// ItemState returns the recorded state of an item; ok is false (and the
// state the zero, normal one) if nothing is recorded.
func (r *Registry) ItemState(item uint64) (s Item, ok bool) {
	st := &r.items[item&(stripes-1)]
	st.mu.RLock()
	s, ok = st.m[item]
	st.mu.RUnlock()
	return s, ok
}

// SetAvailability records the availability of a host interface.
func (r *Registry) SetAvailability(iface uint64, a Availability) {
	st := &r.ifaces[iface&(stripes-1)]
	st.mu.Lock()
	st.m[iface] = a
	st.mu.Unlock()
}

// Availability returns the recorded availability of a host interface; ok
// is false (and Available 0, unknown) if it was never checked.
func (r *Registry) Availability(iface uint64) (a Availability, ok bool) {
	st := &r.ifaces[iface&(stripes-1)]
	st.mu.RLock()
	a, ok = st.m[iface]
	st.mu.RUnlock()
	return a, ok
}

// Forget drops what is recorded for deleted items and interfaces, so the
// registry does not keep state of objects that no longer exist. Callers
// pass IDs that left the catalog; unknown IDs are ignored. Prune does the
// same for callers that only know what still exists.
func (r *Registry) Forget(items, ifaces []uint64) {
	for _, id := range items {
		st := &r.items[id&(stripes-1)]
		st.mu.Lock()
		delete(st.m, id)
		st.n.Store(int64(len(st.m)))
		st.mu.Unlock()
	}
	for _, id := range ifaces {
		st := &r.ifaces[id&(stripes-1)]
		st.mu.Lock()
		delete(st.m, id)
		st.mu.Unlock()
	}
}

// Prune drops the entries of items and interfaces for which the keep
// functions return false (typically: not in the current catalog
// snapshot). It takes one stripe lock at a time, so writers of other
// stripes go on; the cost is one call per recorded entry, and only items
// that are not supported and interfaces that were checked have entries.
func (r *Registry) Prune(keepItem, keepIface func(id uint64) bool) (items, ifaces int) {
	for i := range r.items {
		st := &r.items[i]
		st.mu.Lock()
		for id := range st.m {
			if !keepItem(id) {
				delete(st.m, id)
				items++
			}
		}
		st.n.Store(int64(len(st.m)))
		st.mu.Unlock()
	}
	for i := range r.ifaces {
		st := &r.ifaces[i]
		st.mu.Lock()
		for id := range st.m {
			if !keepIface(id) {
				delete(st.m, id)
				ifaces++
			}
		}
		st.mu.Unlock()
	}
	return items, ifaces
}

// Items returns a copy of every recorded item state (the items that are
// not supported, and those with an error), one stripe lock at a time.
func (r *Registry) Items() map[uint64]Item {
	return copyStripes(func(i int) (*sync.RWMutex, map[uint64]Item) { return &r.items[i].mu, r.items[i].m })
}

// Availabilities returns a copy of every recorded interface
// availability, one stripe lock at a time.
func (r *Registry) Availabilities() map[uint64]Availability {
	return copyStripes(func(i int) (*sync.RWMutex, map[uint64]Availability) { return &r.ifaces[i].mu, r.ifaces[i].m })
}

// copyStripes copies the entries of every stripe, whose lock and map at
// returns, taking one stripe's read lock at a time.
func copyStripes[V any](at func(i int) (*sync.RWMutex, map[uint64]V)) map[uint64]V {
	out := map[uint64]V{}
	for i := range stripes {
		mu, m := at(i)
		mu.RLock()
		maps.Copy(out, m)
		mu.RUnlock()
	}
	return out
}

// byStripe sorts the entries of src that keep accepts by stripe.
func byStripe[V any](src map[uint64]V, keep func(V) bool) (out [stripes]map[uint64]V) {
	for id, v := range src {
		if !keep(v) {
			continue
		}
		k := id & (stripes - 1)
		if out[k] == nil {
			out[k] = map[uint64]V{}
		}
		out[k][id] = v
	}
	return out
}

// restoreInto sets the entries of add that m has no entry for, after
// emptying m with replace; the caller holds m's stripe lock.
func restoreInto[V any](m, add map[uint64]V, replace bool) {
	if replace {
		clear(m)
	}
	for id, v := range add {
		if _, ok := m[id]; !ok {
			m[id] = v
		}
	}
}

// Restore records states and availabilities read back from a copy
// (package itemstate's PostgreSQL rows) without telling OnChange or
// counting NotSupportedTotal: they are not new checks. With replace,
// every entry not in items or ifaces is dropped (a follower's registry
// becomes the copy); without it, only IDs that have no entry yet are
// set (a node taking over keeps what its own checks already found).
func (r *Registry) Restore(items map[uint64]Item, ifaces map[uint64]Availability, replace bool) {
	its := byStripe(items, func(s Item) bool { return s.NotSupported || s.Error != "" })
	ifs := byStripe(ifaces, func(Availability) bool { return true })
	// One lock per stripe: a reader sees a stripe before or after, never
	// emptied.
	for i := range r.items {
		st := &r.items[i]
		st.mu.Lock()
		restoreInto(st.m, its[i], replace)
		st.n.Store(int64(len(st.m)))
		st.mu.Unlock()
	}
	for i := range r.ifaces {
		st := &r.ifaces[i]
		st.mu.Lock()
		restoreInto(st.m, ifs[i], replace)
		st.mu.Unlock()
	}
}
