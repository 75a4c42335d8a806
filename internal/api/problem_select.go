package api

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"

	"github.com/peregrine-mon/peregrine/internal/event"
)

// OpenScanner is the part of the event store problem.get selects from
// without copying every open problem (*event.Store implements it). An
// Events without it is read through OpenProblems.
type OpenScanner interface {
	// ScanOpen calls fn with each open problem in ID order (newest first
	// when desc) until fn returns false; fn must not keep the pointer.
	ScanOpen(desc bool, fn func(*event.Event) bool)
	// ScanOpenOf calls fn with the open problems of the triggers, in no
	// particular order, until fn returns false.
	ScanOpenOf(triggers []uint64, fn func(*event.Event) bool)
	// OpenCount is the number of open problems.
	OpenCount() int
	// OpenCountOf is the number of open problems of the triggers.
	OpenCountOf(triggers []uint64) int
}

// indexShare is how small a share of the open problems the host index
// must narrow a request to (in triggers, then in their problems) before
// it is used instead of the ordered scan: the index path copies and
// sorts every candidate, the scan stops at the limit, so the index only
// pays when candidates are few.
const indexShare = 8

// selectProblems returns the problems (open, and resolved recently when
// recent) that pass p's filter, ascending by ID. When the request sorts
// by eventid (or not at all) and has neither filter nor search, only the
// ones the limit keeps are returned: the store's open problems are
// walked in ID order from the end the sort order starts at and the walk
// stops at the limit, so 1,000 of 100,000 open problems cost 1,000
// matches and copies instead of 100,000 copies and a sort. When the
// request names hosts, groups or triggers and their triggers hold few of
// the open problems, the problems are read through the store's index by
// trigger instead. count is set instead for countOutput.
func (s *Server) selectProblems(p *getParams, f *eventFilter, sc *eventScope, recent bool) (evs []event.Event, count int) {
	scan, ok := s.opts.Events.(OpenScanner)
	var rec []event.Event
	if recent {
		rec = s.opts.Events.Recent(time.Now().Unix() - okPeriod)
	}
	if !ok {
		evs = append(s.opts.Events.OpenProblems(), rec...)
		kept := evs[:0]
		for i := range evs {
			if f.match(&evs[i], sc) {
				kept = append(kept, evs[i])
			}
		}
		return kept, len(kept)
	}
	plain := len(p.Filter.Value) == 0 && len(p.Search.Value) == 0
	limit := -1
	if plain && !p.CountOutput.Value && (len(p.SortField.Value) == 0 || p.SortField.Value[0] == "eventid") && p.Limit.Given() && p.Limit.Value >= 0 {
		limit = int(p.Limit.Value)
	}
	countOnly := plain && p.CountOutput.Value
	emit := func(e *event.Event) bool {
		if limit >= 0 && len(evs) >= limit {
			return false
		}
		if f.match(e, sc) {
			if countOnly {
				count++
			} else {
				evs = append(evs, *e)
			}
		}
		return true
	}
	share := scan.OpenCount() / indexShare
	if !recent && len(f.EventIDs.Value) > 0 && len(f.EventIDs.Value) <= share {
		// A few problems by ID (the web UI's rows in view, a screenful
		// at a time while scrolling a storm): looked up one by one
		// instead of matching every open problem against the list.
		for _, id := range slices.Compact(slices.Sorted(slices.Values(f.EventIDs.Value))) {
			e, ok := s.opts.Events.Event(id)
			if ok && e.Open() && f.match(&e, sc) {
				if countOnly {
					count++
				} else {
					evs = append(evs, e)
				}
			}
		}
		return cutToLimit(p, evs, limit), max(count, len(evs))
	}
	if cands, ok := sc.candidates(share); ok && scan.OpenCountOf(cands) <= share {
		// Few candidates: read them through the index, then order
		// and cut them as the scan would have.
		lim := limit
		limit = -1
		scan.ScanOpenOf(cands, emit)
		for i := range rec {
			emit(&rec[i])
		}
		slices.SortFunc(evs, func(a, b event.Event) int { return cmp.Compare(a.ID, b.ID) })
		return cutToLimit(p, evs, lim), max(count, len(evs))
	}
	if limit < 0 && !countOnly {
		// Sized once: 100,000 open problems would otherwise be copied
		// some twenty times while the slice doubles.
		evs = make([]event.Event, 0, scan.OpenCount()+len(rec))
	}
	// rec is ascending by ID; merge it into the walk so the limit cuts
	// the union in order.
	desc := descOrder(p)
	ri, step := 0, 1
	if desc {
		ri, step = len(rec)-1, -1
	}
	before := func(id uint64) bool { // rec[ri] comes before id in the walk
		if desc {
			return rec[ri].ID > id
		}
		return rec[ri].ID < id
	}
	scan.ScanOpen(desc, func(e *event.Event) bool {
		for ri >= 0 && ri < len(rec) && before(e.ID) {
			if !emit(&rec[ri]) {
				return false
			}
			ri += step
		}
		return emit(e)
	})
	for ri >= 0 && ri < len(rec) && emit(&rec[ri]) {
		ri += step
	}
	if desc {
		slices.Reverse(evs)
	}
	return evs, max(count, len(evs))
}

// cutToLimit keeps the limit's share of evs (ascending by ID) from the
// end p's order starts at; lim < 0: all.
func cutToLimit(p *getParams, evs []event.Event, lim int) []event.Event {
	if lim >= 0 && lim < len(evs) {
		if descOrder(p) {
			return evs[len(evs)-lim:]
		}
		return evs[:lim]
	}
	return evs
}

// descOrder reports whether p sorts newest first.
func descOrder(p *getParams) bool {
	return p.SortOrder.Value.desc(0)
}

// candidates returns the triggers a request naming hosts, groups or
// triggers can see problems of, when there are at most limit of them:
// the index by host (through the catalog's triggers of each host's
// items) or the trigger IDs given. ok is false when the request names
// none or they are more than limit.
func (sc *eventScope) candidates(limit int) ([]uint64, bool) {
	f := sc.f
	if len(f.ObjectIDs.Value) > 0 {
		if len(f.ObjectIDs.Value) > limit {
			return nil, false
		}
		return slices.Compact(slices.Sorted(slices.Values(f.ObjectIDs.Value))), true
	}
	if len(f.HostIDs.Value) == 0 && len(f.GroupIDs.Value) == 0 {
		return nil, false
	}
	if sc.cands == nil {
		return sc.hostCandidates(limit)
	}
	key := candKey(f)
	if ids, ok, known := sc.cands.get(sc.snap, key, limit); known {
		return ids, ok
	}
	ids, ok := sc.hostCandidates(limit)
	sc.cands.put(sc.snap, key, limit, ids, ok)
	return ids, ok
}

// hostCandidates walks the triggers of the request's hosts (or of the
// hosts of its groups), giving up past limit.
func (sc *eventScope) hostCandidates(limit int) ([]uint64, bool) {
	f := sc.f
	var hosts []uint64
	if len(f.HostIDs.Value) > 0 {
		hosts = f.HostIDs.Value
	} else {
		for _, h := range sc.snap.Hosts() {
			if anyGroup(h.GroupIDs, f.GroupIDs.Value) {
				hosts = append(hosts, h.ID)
			}
		}
	}
	seen := map[uint64]bool{}
	var out []uint64
	for _, hid := range hosts {
		h := sc.snap.HostByID(hid)
		if h == nil {
			continue
		}
		for _, it := range h.Items() {
			for _, t := range sc.snap.TriggersOfItem(it.ID) {
				if !seen[t.ID] {
					seen[t.ID] = true
					out = append(out, t.ID)
					if len(out) > limit {
						return nil, false
					}
				}
			}
		}
	}
	return out, true
}

// candCache remembers, for the current catalog snapshot, the candidate
// triggers of the host and group scopes problem.get was asked for: a
// dashboard or the storm bench polls the same request many times a
// second, and walking 100 hosts' items for their triggers cost more than
// the count itself. Entries are a function of the snapshot alone (which
// triggers the hosts have), so they are dropped when it changes. A walk
// that gave up past its limit is remembered as such: a later request
// with a limit no higher gives up at once.
type candCache struct {
	mu   sync.Mutex
	snap *catalog.Snapshot
	m    map[string]candEntry
}

// candEntry is one scope's walk: ids when complete, else the limit it
// gave up past.
type candEntry struct {
	ids      []uint64
	complete bool
	over     int
}

// maxCandScopes bounds the scopes remembered per snapshot; past it the
// cache starts over (requests naming ever new host sets only cost their
// walk, as without the cache).
const maxCandScopes = 64

func (c *candCache) get(snap *catalog.Snapshot, key string, limit int) (ids []uint64, ok, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != snap {
		return nil, false, false
	}
	e, found := c.m[key]
	switch {
	case !found:
		return nil, false, false
	case e.complete:
		if len(e.ids) > limit {
			return nil, false, true
		}
		return e.ids, true, true
	case limit <= e.over:
		return nil, false, true
	}
	return nil, false, false
}

func (c *candCache) put(snap *catalog.Snapshot, key string, limit int, ids []uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != snap || len(c.m) >= maxCandScopes {
		c.snap, c.m = snap, map[string]candEntry{}
	}
	if ok {
		c.m[key] = candEntry{ids: ids, complete: true}
	} else {
		c.m[key] = candEntry{over: limit}
	}
}

// candKey names a request's host and group scope.
func candKey(f *eventFilter) string {
	b := make([]byte, 0, 8*(len(f.HostIDs.Value)+len(f.GroupIDs.Value))+1)
	for _, h := range slices.Sorted(slices.Values(f.HostIDs.Value)) {
		b = strconv.AppendUint(b, h, 36)
		b = append(b, ',')
	}
	b = append(b, '|')
	for _, g := range slices.Sorted(slices.Values(f.GroupIDs.Value)) {
		b = strconv.AppendUint(b, g, 36)
		b = append(b, ',')
	}
	return string(b)
}
