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
// Memory layout, chosen for one million items and more:
//   - all items live in one slab ([]Item), grouped by host in host-name
//     order, so a Host's items are a window of the slab and need no
//     per-host index;
//   - key lookups go through a small open-addressing table per host, of
//     uint32 slab indexes (8-16 bytes per item), instead of a Go map per
//     host (about 40 bytes per item plus a map header per host). The
//     per-host tables are windows of one allocation; keeping a host's
//     table, items and keys together makes a batch of one host's values
//     cache-friendly, where one global table would cost a cache miss per
//     lookup;
//   - item IDs index a dense []uint32 when IDs are dense, as SQLite assigns
//     them, and a map otherwise.
type Snapshot struct {
	version uint64

	groups      []Group // sorted by name
	groupsByID  map[uint64]*Group
	groupByName map[string]*Group

	hosts      []Host // slab, sorted by technical name
	hostByName map[string]*Host
	hostByID   map[uint64]*Host
	ifaceByID  map[uint64]*Interface // into the hosts' Interfaces slices

	items []Item // slab, grouped by host, see above
	// sorted holds each host's Items cache, by index in hosts.
	sorted []atomic.Pointer[[]*Item]

	// Item ID index: if dense != nil, dense[id-idBase] is slab index+1
	// (0: no such item); otherwise sparse maps ID to slab index.
	idBase uint64
	dense  []uint32
	sparse map[uint64]uint32

	// deps maps a master item's ID to its dependent items (pointers into
	// items); only masters have an entry.
	deps map[uint64][]*Item

	// Each host's key index (Host.table) uses linear probing over a power
	// of two number of slots, at most half full, holding slab index+1
	// (0: empty) and, in the bits of tagMask, more bits of the key's hash.
	tagMask uint32
	seed    maphash.Seed

	// Triggers (trigger.go): a slab sorted by ID, indexed by ID and by
	// referenced item.
	triggers   []Trigger
	trigByID   map[uint64]int32
	trigByItem map[uint64][]*Trigger

	// macros holds user macros and templates (macro.go); nil: none.
	macros *macroSet
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
	// inherited maps an item of a template to its copies in this part
	// (Item.TemplateID); trigInherited a template's trigger to its
	// copies' IDs. Only items and triggers with copies have an entry.
	inherited     map[uint64][]*Item
	trigInherited map[uint64][]uint64
	// psk maps a PSK identity to its hosts, built on first use
	// (PSKHosts); shared by snapshots that share the hosts.
	psk *pskIndex
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
	k, ok := hs[len(hs)-1].TLS.PSKKey()
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
func (s *Snapshot) Host(name string) *Host { return s.hostByName[name] }

// HostByID returns the host with the given ID, or nil.
func (s *Snapshot) HostByID(id uint64) *Host { return s.hostByID[id] }

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
		for i := range s.hosts {
			h := &s.hosts[i]
			if h.TLS.UsesPSK() && h.TLS.PSKIdentity != "" {
				if x.m == nil {
					x.m = map[string][]*Host{}
				}
				x.m[h.TLS.PSKIdentity] = append(x.m[h.TLS.PSKIdentity], h)
			}
		}
		for _, hs := range x.m {
			slices.SortFunc(hs, func(a, b *Host) int { return cmp.Compare(a.ID, b.ID) })
		}
	})
	return x.m[identity]
}

// Item returns the item with the given ID, or nil.
func (s *Snapshot) Item(id uint64) *Item {
	if i := s.itemIndex(id); i >= 0 {
		return &s.items[i]
	}
	return nil
}

// itemIndex returns the slab index of the item with the given ID, or -1.
func (s *Snapshot) itemIndex(id uint64) int {
	if s.dense != nil {
		if id < s.idBase || id-s.idBase >= uint64(len(s.dense)) {
			return -1
		}
		return int(s.dense[id-s.idBase]) - 1
	}
	if i, ok := s.sparse[id]; ok {
		return int(i)
	}
	return -1
}

// Lookup returns the item with the given key on the host with the given
// technical name, or nil if either is unknown. This is the ingest hot
// path: it takes no lock, does not allocate and does not retain host or
// key, so callers may pass strings that alias reused byte buffers.
func (s *Snapshot) Lookup(host, key string) *Item {
	h := s.hostByName[host]
	if h == nil {
		return nil
	}
	return h.Item(key)
}

// lookupIndex returns the slab index of h's item with key, or -1.
func (h *Host) lookupIndex(key string) int {
	t := h.table
	if len(t) == 0 {
		return -1
	}
	s := h.snap
	hash := maphash.String(s.seed, key)
	mask := uint64(len(t) - 1)
	tag := uint32(hash>>32) & s.tagMask
	for p := hash & mask; ; p = (p + 1) & mask {
		e := t[p]
		if e == 0 {
			return -1
		}
		if e&s.tagMask != tag {
			continue // another key: skip without touching its item
		}
		if i := int(e&^s.tagMask) - 1; s.items[i].Key == key {
			return i
		}
	}
}

// Hosts returns all hosts sorted by technical name. The slice is freshly
// allocated; the hosts are shared and read-only.
func (s *Snapshot) Hosts() []*Host {
	out := make([]*Host, len(s.hosts))
	for i := range s.hosts {
		out[i] = &s.hosts[i]
	}
	return out
}

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
func (s *Snapshot) ItemCount() int { return len(s.items) }

// itemSource is the input of buildSnapshot: base with some elements
// replaced by patches and some left out (skip, skipHosts), followed by
// extra and created. Apply and Catalog.Edit pass the old snapshot's slab
// as base and their new items as created; Open passes the rows it read as
// extra. Either way each item is copied once, into the new slab.
type itemSource struct {
	base    []Item      // read-only
	patches []itemPatch // sorted by idx
	// skip lists base indexes to leave out, ascending; skipHosts the IDs
	// of hosts whose base items are all left out (deleted hosts). Neither
	// may name an index that patches also names.
	skip      []int
	skipHosts map[uint64]bool
	extra     []Item
	created   []*Item
}

// len returns the number of items all yields.
func (src *itemSource) len() int {
	if len(src.skip) == 0 && len(src.skipHosts) == 0 {
		return len(src.base) + len(src.extra) + len(src.created)
	}
	n := 0
	for range src.all() {
		n++ // one pass rather than a second formula to keep in sync with all
	}
	return n
}

// all yields every item with its position in the source, counting from
// 0 without gaps.
func (src *itemSource) all() iter.Seq2[int, *Item] {
	return func(yield func(int, *Item) bool) {
		p, sk := src.patches, src.skip
		k := 0
		var lastHost uint64
		lastDead, first := false, true
		for i := range src.base {
			it := &src.base[i]
			for len(p) > 0 && p[0].idx < i {
				p = p[1:] // a patch of a skipped item; callers do not make them
			}
			if len(sk) > 0 && sk[0] == i {
				sk = sk[1:]
				continue
			}
			if len(src.skipHosts) > 0 {
				if first || it.HostID != lastHost {
					first, lastHost, lastDead = false, it.HostID, src.skipHosts[it.HostID]
				}
				if lastDead {
					continue
				}
			}
			if len(p) > 0 && p[0].idx == i {
				it = &p[0].it
				p = p[1:]
			}
			if !yield(k, it) {
				return
			}
			k++
		}
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
// takes ownership of hosts and groups (it sorts them and overwrites the
// hosts' unexported fields) but only reads the items, copying them into a
// fresh slab; Item.Host in the input is ignored. It fails, naming the row,
// if the input is inconsistent (an item of an unknown host, a duplicate
// key), which only a damaged database can cause.
func buildSnapshot(version uint64, groups []Group, hosts []Host, src itemSource) (*Snapshot, error) {
	n := src.len()
	if uint64(n) >= math.MaxUint32 {
		return nil, fmt.Errorf("catalog: %d items is more than a snapshot can index", n)
	}
	s := &Snapshot{
		version:     version,
		groups:      groups,
		groupsByID:  make(map[uint64]*Group, len(groups)),
		groupByName: make(map[string]*Group, len(groups)),
		hosts:       hosts,
		hostByName:  make(map[string]*Host, len(hosts)),
		hostByID:    make(map[uint64]*Host, len(hosts)),
		ifaceByID:   map[uint64]*Interface{},
		psk:         &pskIndex{},
		seed:        maphash.MakeSeed(),
		sorted:      make([]atomic.Pointer[[]*Item], len(hosts)),
	}
	slices.SortFunc(s.groups, func(a, b Group) int { return cmp.Compare(a.Name, b.Name) })
	for i := range s.groups {
		g := &s.groups[i]
		s.groupsByID[g.ID] = g
		s.groupByName[g.Name] = g
	}
	slices.SortFunc(s.hosts, func(a, b Host) int { return cmp.Compare(a.Host, b.Host) })
	hostIdx := make(map[uint64]int32, len(hosts))
	for i := range s.hosts {
		h := &s.hosts[i]
		// A host copied from an older snapshot still points into it.
		h.items, h.table = nil, nil
		h.sorted = &s.sorted[i]
		if _, dup := s.hostByName[h.Host]; dup {
			return nil, fmt.Errorf("%w: duplicate host %q", ErrCorrupt, h.Host)
		}
		h.snap = s
		s.hostByName[h.Host] = h
		s.hostByID[h.ID] = h
		hostIdx[h.ID] = int32(i)
		for j := range h.Interfaces {
			s.ifaceByID[h.Interfaces[j].ID] = &h.Interfaces[j]
		}
	}

	// Group the items by host with a counting sort, copying each item
	// once, to its final place. Within a host the items keep their input
	// order; Host.Items sorts on its first call and keeps the result, so
	// building never sorts (sorting a million keys took a third of the
	// build time).
	start := make([]int, len(s.hosts)+1)
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
		start[h+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	s.items = make([]Item, n)
	next := slices.Clone(start[:len(s.hosts)])
	for i, it := range src.all() {
		h := hi[i]
		p := &s.items[next[h]]
		*p = *it
		p.Host = &s.hosts[h]
		p.hasDeps = false // set below from this snapshot's items
		next[h]++
	}
	for i := range s.hosts {
		s.hosts[i].items = s.items[start[i]:start[i+1]:start[i+1]]
	}

	s.buildIDIndex()
	s.buildDeps()
	s.buildInherited()
	if err := s.buildTable(start); err != nil {
		return nil, err
	}
	return s, nil
}

// buildDeps indexes dependent items by master. A dependent whose master
// is missing (which Edit and Apply never leave behind) is left out: it
// gets no values.
func (s *Snapshot) buildDeps() {
	for i := range s.items {
		it := &s.items[i]
		if it.MasterItemID == 0 {
			continue
		}
		m := s.itemIndex(it.MasterItemID)
		if m < 0 {
			continue
		}
		if s.deps == nil {
			s.deps = map[uint64][]*Item{}
		}
		s.items[m].hasDeps = true
		s.deps[it.MasterItemID] = append(s.deps[it.MasterItemID], it)
	}
}

// buildInherited indexes the copies of templates' items by the item
// they were copied from.
func (s *Snapshot) buildInherited() {
	for i := range s.items {
		it := &s.items[i]
		if it.TemplateID == 0 {
			continue
		}
		if s.inherited == nil {
			s.inherited = map[uint64][]*Item{}
		}
		s.inherited[it.TemplateID] = append(s.inherited[it.TemplateID], it)
	}
}

// Dependents returns the dependent items whose master is the item with
// the given ID, in no particular order, or nil. The slice is shared and
// read-only; the call does not allocate.
func (s *Snapshot) Dependents(id uint64) []*Item { return s.deps[id] }

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

func (s *Snapshot) buildIDIndex() {
	if len(s.items) == 0 {
		s.dense = []uint32{}
		return
	}
	lo, hi := s.items[0].ID, s.items[0].ID
	for i := range s.items {
		lo, hi = min(lo, s.items[i].ID), max(hi, s.items[i].ID)
	}
	// SQLite hands out IDs in sequence, so they are dense unless many
	// items were deleted; fall back to a map if they are not.
	if span := hi - lo + 1; span <= 2*uint64(len(s.items))+1024 {
		s.idBase = lo
		s.dense = make([]uint32, span)
		for i := range s.items {
			s.dense[s.items[i].ID-lo] = uint32(i + 1)
		}
		return
	}
	s.sparse = make(map[uint64]uint32, len(s.items))
	for i := range s.items {
		s.sparse[s.items[i].ID] = uint32(i)
	}
}

// buildTable builds every host's key index, reporting duplicate keys.
// start[i] is the slab index of the first item of s.hosts[i].
func (s *Snapshot) buildTable(start []int) error {
	if len(s.items) == 0 {
		return nil
	}
	// Entries hold index+1 in the low bits and a hash tag in the rest
	// (12 bits for a million items), so a probe that meets another key's
	// entry rarely has to read that item from the slab.
	s.tagMask = ^uint32(0) << bits.Len32(uint32(len(s.items)))
	total := 0
	for i := range s.hosts {
		total += tableSize(len(s.hosts[i].items))
	}
	table := make([]uint32, total)
	off := 0
	for hi := range s.hosts {
		h := &s.hosts[hi]
		n := tableSize(len(h.items))
		if n == 0 {
			continue
		}
		t := table[off : off+n : off+n]
		off += n
		h.table = t
		mask := uint64(n - 1)
		base := start[hi]
		for j := range h.items {
			it := &h.items[j]
			hash := maphash.String(s.seed, it.Key)
			tag := uint32(hash>>32) & s.tagMask
			p := hash & mask
			for ; t[p] != 0; p = (p + 1) & mask {
				if e := t[p]; e&s.tagMask == tag {
					if o := &s.items[e&^s.tagMask-1]; o.Key == it.Key {
						return fmt.Errorf("%w: host %q has two items with key %q (IDs %d and %d)", ErrCorrupt, h.Host, it.Key, o.ID, it.ID)
					}
				}
			}
			t[p] = tag | uint32(base+j+1)
		}
	}
	return nil
}

// tableSize returns the number of slots for n keys: a power of two at
// least twice n, or 0 for none.
func tableSize(n int) int {
	if n == 0 {
		return 0
	}
	return 1 << bits.Len(uint(2*n-1))
}
