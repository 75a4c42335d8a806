package catalog

import (
	"hash/maphash"
	"maps"
	"math/bits"
	"slices"
	"unsafe"
)

// cowMap is an immutable map split into shards by key hash, so that a
// snapshot derived from another (derive) copies only the shards its
// changes touch: an edit of one host at a million hosts copies a shard
// of a few hundred entries instead of the whole map. A cowMap is never
// changed once a snapshot holding it is published; cowWriter makes the
// next one.
type cowMap[K comparable, V any] struct {
	shards []map[K]V // a power of two of them; nil shards are empty
	n      int
	hash   func(K) uint64
}

// shardTarget is the number of entries a shard holds when the map is
// made; a map resharded when shards hold 4 times that on average.
const shardTarget = 256

func hashID(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> 20 }

// keySeed seeds every hash of names and keys in every snapshot, so that
// hosts shared between snapshots keep valid key tables.
var keySeed = maphash.MakeSeed()

func hashName(k string) uint64 { return maphash.String(keySeed, k) }

func newCowMap[K comparable, V any](hash func(K) uint64, n int) cowMap[K, V] {
	ns := 1
	if n > shardTarget {
		ns = 1 << bits.Len(uint(n/shardTarget))
	}
	return cowMap[K, V]{shards: make([]map[K]V, ns), hash: hash}
}

func (m *cowMap[K, V]) get(k K) V {
	var zero V
	if len(m.shards) == 0 {
		return zero
	}
	return m.shards[m.hash(k)&uint64(len(m.shards)-1)][k]
}

func (m *cowMap[K, V]) len() int { return m.n }

// all yields every entry, in no particular order.
func (m *cowMap[K, V]) all(yield func(K, V) bool) {
	for _, sh := range m.shards {
		for k, v := range sh {
			if !yield(k, v) {
				return
			}
		}
	}
}

// cowWriter makes a new cowMap from an old one, copying a shard the
// first time it changes it.
type cowWriter[K comparable, V any] struct {
	m     cowMap[K, V]
	owned []bool
}

func (m cowMap[K, V]) writer() *cowWriter[K, V] {
	if len(m.shards) == 0 {
		m.shards = make([]map[K]V, 1)
	} else {
		m.shards = slices.Clone(m.shards)
	}
	return &cowWriter[K, V]{m: m, owned: make([]bool, len(m.shards))}
}

func (w *cowWriter[K, V]) shard(k K) map[K]V {
	i := w.m.hash(k) & uint64(len(w.m.shards)-1)
	if !w.owned[i] {
		w.owned[i] = true
		if w.m.shards[i] == nil {
			w.m.shards[i] = map[K]V{}
		} else {
			w.m.shards[i] = maps.Clone(w.m.shards[i])
		}
	}
	return w.m.shards[i]
}

func (w *cowWriter[K, V]) get(k K) V { return w.m.get(k) }

func (w *cowWriter[K, V]) set(k K, v V) {
	sh := w.shard(k)
	if _, ok := sh[k]; !ok {
		w.m.n++
	}
	sh[k] = v
}

func (w *cowWriter[K, V]) del(k K) {
	i := w.m.hash(k) & uint64(len(w.m.shards)-1)
	if _, ok := w.m.shards[i][k]; !ok {
		return
	}
	delete(w.shard(k), k)
	w.m.n--
}

// done returns the new map. One that outgrew its shards is resharded:
// O(entries), once per fourfold growth.
func (w *cowWriter[K, V]) done() cowMap[K, V] {
	if w.m.n <= 4*shardTarget*len(w.m.shards) {
		return w.m
	}
	r := newCowMap[K, V](w.m.hash, w.m.n)
	rw := &cowWriter[K, V]{m: r, owned: make([]bool, len(r.shards))}
	for k, v := range w.m.all {
		rw.set(k, v)
	}
	return rw.m
}

// fill returns a new map of the entries yield gives.
func buildCowMap[K comparable, V any](hash func(K) uint64, n int, fill func(set func(K, V))) cowMap[K, V] {
	m := newCowMap[K, V](hash, n)
	w := &cowWriter[K, V]{m: m, owned: make([]bool, len(m.shards))}
	for i := range w.owned {
		w.owned[i] = true
		w.m.shards[i] = make(map[K]V, n/len(w.m.shards)+1)
	}
	fill(w.set)
	return w.m
}

// idPageBits: item IDs are indexed in pages of 64 consecutive IDs
// (SQLite hands IDs out in sequence), 8 bytes per ID of a page that
// holds at least one item.
const idPageBits = 6

type idPage [1 << idPageBits]*Item

// itemIndex maps item IDs to items: pages of consecutive IDs in a
// cowMap by page number; an edit copies the pages of the items it
// changed.
type itemIndex struct {
	pages cowMap[uint64, *idPage]
}

func (x *itemIndex) get(id uint64) *Item {
	p := x.pages.get(id >> idPageBits)
	if p == nil {
		return nil
	}
	return p[id&(1<<idPageBits-1)]
}

// itemIndexWriter makes a new itemIndex, copying a page the first time
// it changes it.
type itemIndexWriter struct {
	w     *cowWriter[uint64, *idPage]
	owned map[*idPage]bool
}

func (x itemIndex) writer() *itemIndexWriter {
	return &itemIndexWriter{w: x.pages.writer(), owned: map[*idPage]bool{}}
}

func (w *itemIndexWriter) page(id uint64, create bool) *idPage {
	pn := id >> idPageBits
	p := w.w.get(pn)
	switch {
	case p == nil && !create:
		return nil
	case p == nil:
		p = new(idPage)
	case !w.owned[p]:
		c := *p
		p = &c
	default:
		return p
	}
	w.owned[p] = true
	w.w.set(pn, p)
	return p
}

func (w *itemIndexWriter) set(it *Item) { w.page(it.ID, true)[it.ID&(1<<idPageBits-1)] = it }

func (w *itemIndexWriter) del(id uint64) {
	p := w.page(id, false)
	if p == nil {
		return
	}
	p[id&(1<<idPageBits-1)] = nil
	if *p == (idPage{}) {
		w.w.del(id >> idPageBits)
	}
}

func (w *itemIndexWriter) done() itemIndex { return itemIndex{pages: w.w.done()} }

// slabItems is how many items one chunk of an itemSlab holds (about
// 256 KiB).
const slabItems = 256 << 10 / int(unsafe.Sizeof(Item{}))

// itemSlab hands out hosts' item slices from shared chunks, so that
// each host's slice does not round up to a size class of its own (10
// items of 440 bytes took 4,864, a 100-item host 8 KiB pages): a chunk
// of at most slabItems, and no bigger than what the build still needs.
// A chunk is freed when every host in it is gone from every snapshot.
type itemSlab struct {
	free []Item // len: what is left of the current chunk
	left int    // items still to hand out after the current chunk
}

// take returns an empty slice of capacity n, which the caller fills.
func (a *itemSlab) take(n int) []Item {
	if n == 0 {
		return nil
	}
	if len(a.free) < n {
		c := max(n, min(slabItems, a.left))
		a.free = make([]Item, c)
		a.left -= c
	}
	out := a.free[:n:n][:0]
	a.free = a.free[n:]
	return out
}
