package catalog

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"iter"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// Snapshot is an immutable view of the whole catalog. Any number of
// goroutines may use a Snapshot concurrently without locking; it never
// changes after it is published. Nothing reachable from it (hosts, items,
// groups, their slices) may be modified by callers.
//
// Memory layout, chosen for ten million items and edits that do not copy
// them (derive, snapshot_derive.go):
//   - each host holds its items in a slice of its own and a small
//     open-addressing key table of uint32 local indexes (8-16 bytes per
//     item) instead of a Go map per host; a Host and its items are
//     immutable and shared by every snapshot in which neither changed,
//     so an edit rebuilds only the hosts it touched;
//   - hosts by name and ID, interfaces by ID and items by ID are cowMaps
//     (cowmap.go): maps split into shards, of which an edit copies only
//     those it changes; items by ID are pages of 64 consecutive IDs.
type Snapshot struct {
	version uint64

	groups      []Group // sorted by name
	groupsByID  map[uint64]*Group
	groupByName map[string]*Group

	hosts      []*Host // sorted by technical name
	hostByName cowMap[string, *Host]
	hostByID   cowMap[uint64, *Host]
	ifaceByID  cowMap[uint64, *Interface] // into the hosts' Interfaces slices

	ids    itemIndex // item ID → item
	nItems int

	// Triggers (trigger.go): a slab sorted by ID, indexed by ID and by
	// referenced item.
	triggers   []Trigger
	trigByID   map[uint64]int32
	trigByItem map[uint64][]*Trigger

	// mcell holds user macros and templates (macro.go); its hosts point
	// to it (Host.UserMacros), so it changes only with every host.
	mcell *macroCell
	// maints are the maintenances ascending by ID (maintenance.go).
	maints []Maintenance
	// Value maps (valuemap.go), sorted by ID, indexed by ID.
	valueMaps []ValueMap
	vmByID    map[uint64]int
	// regexps are the global regular expressions ascending by ID
	// (regexp.go).
	regexps []GlobalRegexp
	// ext holds graphs and templates' dashboards (graph.go).
	ext *extras
	// proxies ascending by ID (proxy.go).
	proxies []Proxy

	// tmpl is the templates' part (template.go): a snapshot of its own
	// whose hosts are the templates and whose items and triggers are
	// theirs, so that nothing walking this one's hosts, items or
	// triggers meets a template's. nil: no templates.
	tmpl *Snapshot
	// inh maps an item of a template to its copies in this part
	// (Item.TemplateID), built on first use (Copies); trigInherited a
	// template's trigger to its copies' IDs. Only items and triggers
	// with copies have an entry.
	inh           *inheritIndex
	trigInherited map[uint64][]uint64
	// psk maps a PSK identity to its hosts, built on first use
	// (PSKHosts); shared by snapshots that share the hosts.
	psk *pskIndex
}

// macroCell holds the user macros of the snapshots that share hosts.
type macroCell struct{ ms *macroSet }

// inheritIndex maps a template's item to its copies, built on first use.
type inheritIndex struct {
	once sync.Once
	m    map[uint64][]*Item
}

// PSKKey returns the key a server uses for a client that presents
// identity: that of the newest host (highest ID) with the identity,
// which is the one the Zabbix 6.0 server used when two hosts shared an
// identity with different keys (recorded from 6.0.14: the older host's
// key then fails the handshake). ok is false for an unknown identity.
func (s *Snapshot) PSKKey(identity string) (key []byte, ok bool) {
	hs := s.PSKHosts(identity)
	if len(hs) == 0 {
		return nil, false
	}
	k, ok := hs[len(hs)-1].Ext().TLS.PSKKey()
	return k.Secret, ok
}

// pskIndex maps a PSK identity to its hosts ascending by ID.
type pskIndex struct {
	once sync.Once
	m    map[string][]*Host
}

// Version returns the catalog revision the snapshot shows. It starts at 0
// for an empty catalog and grows by one with every Apply that changed
// anything; it is persisted, so it never goes back across restarts.
func (s *Snapshot) Version() uint64 { return s.version }

// Host returns the host with the given technical name, or nil. It does
// not allocate and does not retain name.
func (s *Snapshot) Host(name string) *Host { return s.hostByName.get(name) }

// HostByID returns the host with the given ID, or nil.
func (s *Snapshot) HostByID(id uint64) *Host { return s.hostByID.get(id) }

// PSKHosts returns the hosts whose tls_psk_identity is identity,
// ascending by ID, or nil. Zabbix 6.0 lets hosts share an identity, even
// with different keys; the trapper then uses the newest host's key, as
// the Zabbix server does. The index is built on first use (a trapper
// asks once per PSK handshake).
func (s *Snapshot) PSKHosts(identity string) []*Host {
	x := s.psk
	if x == nil {
		x = &pskIndex{} // a snapshot not made by buildSnapshot (tests)
	}
	x.once.Do(func() {
		for _, h := range s.hosts {
			if h.Ext().TLS.UsesPSK() && h.Ext().TLS.PSKIdentity != "" {
				if x.m == nil {
					x.m = map[string][]*Host{}
				}
				x.m[h.Ext().TLS.PSKIdentity] = append(x.m[h.Ext().TLS.PSKIdentity], h)
			}
		}
		for _, hs := range x.m {
			slices.SortFunc(hs, func(a, b *Host) int { return cmp.Compare(a.ID, b.ID) })
		}
	})
	return x.m[identity]
}

// Item returns the item with the given ID, or nil.
func (s *Snapshot) Item(id uint64) *Item { return s.ids.get(id) }

// Lookup returns the item with the given key on the host with the given
// technical name, or nil if either is unknown. This is the ingest hot
// path: it takes no lock, does not allocate and does not retain host or
// key, so callers may pass strings that alias reused byte buffers.
func (s *Snapshot) Lookup(host, key string) *Item {
	h := s.hostByName.get(host)
	if h == nil {
		return nil
	}
	return h.Item(key)
}

// lookupIndex returns the index in h.items of h's item with key, or -1.
func (h *Host) lookupIndex(key string) int {
	t := h.table
	if len(t) == 0 {
		return -1
	}
	tagMask := ^uint32(0) << bits.Len32(uint32(len(h.items)))
	hash := maphash.String(keySeed, key)
	mask := uint64(len(t) - 1)
	tag := uint32(hash>>32) & tagMask
	for p := hash & mask; ; p = (p + 1) & mask {
		e := t[p]
		if e == 0 {
			return -1
		}
		if e&tagMask != tag {
			continue // another key: skip without touching its item
		}
		if i := int(e&^tagMask) - 1; h.items[i].Key == key {
			return i
		}
	}
}

// Hosts returns all hosts sorted by technical name. The slice is freshly
// allocated; the hosts are shared and read-only.
func (s *Snapshot) Hosts() []*Host { return slices.Clone(s.hosts) }

// HostCount returns the number of hosts.
func (s *Snapshot) HostCount() int { return len(s.hosts) }

// Groups returns all host groups sorted by name. The slice is freshly
// allocated; the groups are shared and read-only.
func (s *Snapshot) Groups() []*Group {
	out := make([]*Group, len(s.groups))
	for i := range s.groups {
		out[i] = &s.groups[i]
	}
	return out
}

// Group returns the group with the given name, or nil.
func (s *Snapshot) Group(name string) *Group { return s.groupByName[name] }

// GroupByID returns the group with the given ID, or nil.
func (s *Snapshot) GroupByID(id uint64) *Group { return s.groupsByID[id] }

// ItemCount returns the number of items of all hosts.
func (s *Snapshot) ItemCount() int { return s.nItems }

// allItems yields every item of the part, host by host in name order.
func (s *Snapshot) allItems(yield func(*Item) bool) {
	for _, h := range s.hosts {
		for i := range h.items {
			if !yield(&h.items[i]) {
				return
			}
		}
	}
}

// itemSource is the input of buildSnapshot: the rows Open read (extra),
// or items made elsewhere (created).
type itemSource struct {
	extra   []Item
	created []*Item
}

// all yields every item.
func (src *itemSource) all() iter.Seq2[int, *Item] {
	return func(yield func(int, *Item) bool) {
		k := 0
		for i := range src.extra {
			if !yield(k, &src.extra[i]) {
				return
			}
			k++
		}
		for _, it := range src.created {
			if !yield(k, it) {
				return
			}
			k++
		}
	}
}

// buildSnapshot makes a snapshot from hosts and items in any order. It
// takes ownership of groups and copies the hosts; it only reads the
// items, copying them into their hosts' slices; Item.Host in the input
// is ignored. It fails, naming the row, if the input is inconsistent (an
// item of an unknown host, a duplicate key), which only a damaged
// database can cause.
func buildSnapshot(version uint64, groups []Group, hosts []Host, src itemSource) (*Snapshot, error) {
	n := len(src.extra) + len(src.created)
	if uint64(n) >= math.MaxUint32 {
		return nil, fmt.Errorf("catalog: %d items is more than a snapshot can index", n)
	}
	s := &Snapshot{version: version, psk: &pskIndex{}, mcell: &macroCell{}}
	s.setGroups(groups)
	// Group the items by host with a counting sort, copying each item
	// once, to its final place. Within a host the items keep their input
	// order; Host.Items sorts on its first call and keeps the result, so
	// building never sorts (sorting a million keys took a third of the
	// build time).
	hostIdx := make(map[uint64]int32, len(hosts))
	for i := range hosts {
		hostIdx[hosts[i].ID] = int32(i)
	}
	count := make([]int, len(hosts))
	hi := make([]int32, n)
	lastID, lastIdx := uint64(0), int32(-1)
	for i, it := range src.all() {
		h := lastIdx
		if it.HostID != lastID || h < 0 {
			var ok bool
			if h, ok = hostIdx[it.HostID]; !ok {
				return nil, fmt.Errorf("%w: item %d belongs to unknown host %d", ErrCorrupt, it.ID, it.HostID)
			}
			lastID, lastIdx = it.HostID, h
		}
		hi[i] = h
		count[h]++
	}
	items := make([][]Item, len(hosts))
	slab := itemSlab{left: n}
	for i, c := range count {
		items[i] = slab.take(c)
	}
	for i, it := range src.all() {
		items[hi[i]] = append(items[hi[i]], *it)
	}
	s.hosts = make([]*Host, len(hosts))
	for i := range hosts {
		h := new(Host)
		*h = hosts[i]
		if err := finishHost(h, items[i], s.mcell); err != nil {
			return nil, err
		}
		s.hosts[i] = h
	}
	slices.SortFunc(s.hosts, func(a, b *Host) int { return cmp.Compare(a.Host, b.Host) })
	for i := 1; i < len(s.hosts); i++ {
		if s.hosts[i].Host == s.hosts[i-1].Host {
			return nil, fmt.Errorf("%w: duplicate host %q", ErrCorrupt, s.hosts[i].Host)
		}
	}
	s.hostByName = buildCowMap(hashName, len(s.hosts), func(set func(string, *Host)) {
		for _, h := range s.hosts {
			set(h.Host, h)
		}
	})
	s.hostByID = buildCowMap(hashID, len(s.hosts), func(set func(uint64, *Host)) {
		for _, h := range s.hosts {
			set(h.ID, h)
		}
	})
	nIf := 0
	for _, h := range s.hosts {
		nIf += len(h.Interfaces)
	}
	s.ifaceByID = buildCowMap(hashID, nIf, func(set func(uint64, *Interface)) {
		for _, h := range s.hosts {
			for j := range h.Interfaces {
				set(h.Interfaces[j].ID, &h.Interfaces[j])
			}
		}
	})
	w := itemIndex{pages: newCowMap[uint64, *idPage](hashID, n>>idPageBits)}.writer()
	for it := range s.allItems {
		w.set(it)
	}
	s.ids = w.done()
	s.nItems = n
	s.inh = &inheritIndex{}
	return s, nil
}

// setGroups sorts groups by name and indexes them.
func (s *Snapshot) setGroups(groups []Group) {
	s.groups, s.groupsByID, s.groupByName = groups, make(map[uint64]*Group, len(groups)), make(map[string]*Group, len(groups))
	slices.SortFunc(s.groups, func(a, b Group) int { return cmp.Compare(a.Name, b.Name) })
	for i := range s.groups {
		g := &s.groups[i]
		s.groupsByID[g.ID] = g
		s.groupByName[g.Name] = g
	}
}

// finishHost makes h, a copy of its own, hold items (which it takes
// over): it points them to h, builds the key table and the dependents
// index, reporting duplicate keys.
func finishHost(h *Host, items []Item, mc *macroCell) error {
	if len(items) == 0 {
		items = nil
	}
	h.mc, h.items, h.table, h.deps = mc, items, nil, nil
	h.shareHostExtra()
	h.sorted = new(atomic.Pointer[[]*Item])
	var masters bool
	for i := range items {
		items[i].Host = h
		items[i].hasDeps = false // set below from this host's items
		items[i].trimExtra()
		masters = masters || items[i].MasterItemID != 0
	}
	if len(items) > 0 {
		if err := h.buildTable(); err != nil {
			return err
		}
	}
	if masters {
		h.buildDeps()
	}
	return nil
}

// buildDeps indexes h's dependent items by master. A dependent whose
// master is missing (which Edit and Apply never leave behind) is left
// out: it gets no values. Masters are on their dependents' host.
func (h *Host) buildDeps() {
	byID := make(map[uint64]int, len(h.items))
	for i := range h.items {
		byID[h.items[i].ID] = i
	}
	for i := range h.items {
		it := &h.items[i]
		if it.MasterItemID == 0 {
			continue
		}
		m, ok := byID[it.MasterItemID]
		if !ok {
			continue
		}
		if h.deps == nil {
			h.deps = map[uint64][]*Item{}
		}
		h.items[m].hasDeps = true
		h.deps[it.MasterItemID] = append(h.deps[it.MasterItemID], it)
	}
}

// copies returns the part's copies of the template item with the ID,
// indexing every copy on the first call.
func (s *Snapshot) copies(id uint64) []*Item {
	x := s.inh
	if x == nil {
		return nil
	}
	x.once.Do(func() {
		for it := range s.allItems {
			if it.TemplateID == 0 {
				continue
			}
			if x.m == nil {
				x.m = map[uint64][]*Item{}
			}
			x.m[it.TemplateID] = append(x.m[it.TemplateID], it)
		}
	})
	return x.m[id]
}

// Dependents returns the dependent items whose master is the item with
// the given ID, in no particular order, or nil. The slice is shared and
// read-only; the call does not allocate.
func (s *Snapshot) Dependents(id uint64) []*Item {
	if it := s.Item(id); it != nil && it.Host != nil {
		return it.Host.deps[id]
	}
	return nil
}

// Root returns the top of it's master chain: it itself unless it is a
// dependent item, else the master of its master... (at most 3 levels
// up). A dependent whose master is missing is its own root.
func (s *Snapshot) Root(it *Item) *Item {
	for range maxDependentLevels + 1 {
		if it.MasterItemID == 0 {
			return it
		}
		m := s.Item(it.MasterItemID)
		if m == nil {
			return it
		}
		it = m
	}
	return it
}

// buildTable builds h's key index, reporting duplicate keys. Entries
// hold local index+1 in the low bits and a hash tag in the rest, so a
// probe that meets another key's entry rarely has to read that item.
func (h *Host) buildTable() error {
	tagMask := ^uint32(0) << bits.Len32(uint32(len(h.items)))
	n := tableSize(len(h.items))
	t := make([]uint32, n)
	h.table = t
	mask := uint64(n - 1)
	for j := range h.items {
		it := &h.items[j]
		hash := maphash.String(keySeed, it.Key)
		tag := uint32(hash>>32) & tagMask
		p := hash & mask
		for ; t[p] != 0; p = (p + 1) & mask {
			if e := t[p]; e&tagMask == tag {
				if o := &h.items[e&^tagMask-1]; o.Key == it.Key {
					return fmt.Errorf("%w: host %q has two items with key %q (IDs %d and %d)", ErrCorrupt, h.Host, it.Key, o.ID, it.ID)
				}
			}
		}
		t[p] = tag | uint32(j+1)
	}
	return nil
}

// tableSize returns the number of slots for n keys: a power of two
// above 1.5 n (at most two thirds full), or 0 for none. A host of 10
// items has 16 slots, one cache line (issue 30: at twice n it had 32,
// 13 bytes per item); the tags keep a probe from touching other keys'
// items, so a fuller table costs a few slot reads within that line.
func tableSize(n int) int {
	if n == 0 {
		return 0
	}
	return 1 << bits.Len(uint(n+n/2))
}
