package event

import "slices"

// tagIndex holds the open trigger problems by tag, for event
// correlation: the problems an "old event tag" or "event tag pair"
// condition names are found by lookup, not by scanning every open
// problem for each new one. It is built at the first query (from the
// open problems: O(open problems × tags) once) and kept up to date by
// applyLocked from then on; DropTagIndex frees it when the rules go.
type tagIndex struct {
	// pairs are the open problems carrying each tag pair.
	pairs map[Tag]map[uint64]struct{}
	// values are, per tag name, the values some open problem carries.
	values map[string]map[string]struct{}
}

func newTagIndex(open map[uint64]*Event) *tagIndex {
	x := &tagIndex{pairs: map[Tag]map[uint64]struct{}{}, values: map[string]map[string]struct{}{}}
	for _, e := range open {
		x.add(e)
	}
	return x
}

func (x *tagIndex) add(e *Event) {
	for _, t := range e.Tags {
		ids := x.pairs[t]
		if ids == nil {
			ids = map[uint64]struct{}{}
			x.pairs[t] = ids
			vs := x.values[t.Tag]
			if vs == nil {
				vs = map[string]struct{}{}
				x.values[t.Tag] = vs
			}
			vs[t.Value] = struct{}{}
		}
		ids[e.ID] = struct{}{}
	}
}

func (x *tagIndex) remove(e *Event) {
	for _, t := range e.Tags {
		ids := x.pairs[t]
		if ids == nil {
			continue
		}
		delete(ids, e.ID)
		if len(ids) > 0 {
			continue
		}
		delete(x.pairs, t)
		if vs := x.values[t.Tag]; vs != nil {
			delete(vs, t.Value)
			if len(vs) == 0 {
				delete(x.values, t.Tag)
			}
		}
	}
}

// withIndex runs fn with the tag index under the read lock, building
// the index first (under the write lock) if there is none.
func (s *Store) withIndex(fn func(x *tagIndex)) {
	for {
		s.mu.RLock()
		if x := s.tags; x != nil {
			fn(x)
			s.mu.RUnlock()
			return
		}
		s.mu.RUnlock()
		s.mu.Lock()
		if s.tags == nil {
			s.tags = newTagIndex(s.open)
		}
		s.mu.Unlock()
	}
}

// OpenTagged appends to dst, ascending and each once, the IDs of the
// open trigger problems that carry tag with a value for which match
// returns true (any value when match is nil). It reads the tag index
// (built at the first call): the cost is that of the values of tag and
// the problems returned, not of every open problem. match runs under
// the store's read lock and must not call the Store.
func (s *Store) OpenTagged(tag string, match func(value string) bool, dst []uint64) []uint64 {
	start := len(dst)
	s.withIndex(func(x *tagIndex) {
		for v := range x.values[tag] {
			if match != nil && !match(v) {
				continue
			}
			for id := range x.pairs[Tag{tag, v}] {
				dst = append(dst, id)
			}
		}
	})
	out := dst[start:]
	slices.Sort(out)
	return dst[:start+len(slices.Compact(out))]
}

// OpenTaggedValue appends to dst, ascending, the IDs of the open trigger
// problems carrying the tag pair (tag, value): one lookup in the tag
// index.
func (s *Store) OpenTaggedValue(tag, value string, dst []uint64) []uint64 {
	start := len(dst)
	s.withIndex(func(x *tagIndex) {
		for id := range x.pairs[Tag{tag, value}] {
			dst = append(dst, id)
		}
	})
	slices.Sort(dst[start:])
	return dst
}

// OpenIDs appends the IDs of every open trigger problem to dst,
// ascending: what a correlation condition true of every old problem
// (a negated one) needs.
func (s *Store) OpenIDs(dst []uint64) []uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, e := range s.order {
		if e.REventID == 0 {
			dst = append(dst, e.ID)
		}
	}
	return dst
}

// OpenTriggerOf returns the trigger of open problem id, and whether it
// is open.
func (s *Store) OpenTriggerOf(id uint64) (uint64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.open[id]; e != nil {
		return e.ObjectID, true
	}
	return 0, false
}

// DropTagIndex frees the tag index (no correlation rule left); the next
// OpenTagged builds it again.
func (s *Store) DropTagIndex() {
	s.mu.Lock()
	s.tags = nil
	s.mu.Unlock()
}
