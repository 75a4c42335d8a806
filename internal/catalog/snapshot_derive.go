package catalog

import (
	"cmp"
	"fmt"
	"slices"
)

// partChange is what an Edit or an Apply changed in one part of a
// snapshot (the hosts' or the templates').
type partChange struct {
	// hosts holds the new state of changed and created hosts by ID;
	// nil: deleted. Hosts of the other part are ignored.
	hosts map[uint64]*Host
	// items holds the new state of changed items by ID; nil: deleted.
	// Items the old part does not hold are ignored: created lists them.
	items map[uint64]*Item
	// created are the new items of the part, in order.
	created []*Item
	// mc is the macro cell of the new part; all makes every host anew
	// (when user macros or template links changed, every host's scope
	// may have).
	mc  *macroCell
	all bool
}

// derive makes the part that follows old with the changes of pc: the
// hosts pc touches (changed, created, deleted, or holding an item that
// changed) are made anew with their items; every other host and its
// items are shared with old, as are the shards and pages of the indexes
// that no touched host appears in. An edit of one item thus costs
// O(items of its host) plus the copy of a few shards and of the sorted
// host list (8 bytes per host), instead of O(items).
// TestEditSharedTriggersMatchReload and TestDeriveMatchesReload compare
// what it makes with a reload.
func derive(old *Snapshot, version uint64, groups []Group, pc *partChange, tmpl bool) (*Snapshot, error) {
	mc := pc.mc
	if mc == nil {
		mc = old.mcell
	}
	touched := map[uint64]bool{}
	if pc.all {
		for _, h := range old.hosts {
			touched[h.ID] = true
		}
	}
	for id, h := range pc.hosts {
		if old.hostByID.get(id) != nil || h != nil && h.IsTemplate == tmpl {
			touched[id] = true
		}
	}
	incoming := map[uint64][]*Item{}
	var moved []*Item
	for id, it := range pc.items {
		o := old.Item(id)
		if o == nil {
			continue
		}
		touched[o.HostID] = true
		if it != nil && it.HostID != o.HostID {
			moved = append(moved, it)
		}
	}
	slices.SortFunc(moved, func(a, b *Item) int { return cmp.Compare(a.ID, b.ID) })
	for _, it := range append(moved, pc.created...) {
		incoming[it.HostID] = append(incoming[it.HostID], it)
		touched[it.HostID] = true
	}

	// The touched hosts made anew, in ascending ID for a deterministic
	// error.
	ids := make([]uint64, 0, len(touched))
	for id := range touched {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	made := make([]*Host, 0, len(ids))
	names := false // a host was created, deleted or renamed
	slab := itemSlab{}
	for _, id := range ids {
		if oh := old.hostByID.get(id); oh != nil {
			slab.left += len(oh.items)
		}
		slab.left += len(incoming[id])
	}
	for _, id := range ids {
		oh := old.hostByID.get(id)
		base := oh
		if h, ok := pc.hosts[id]; ok {
			base = h
		}
		if base == nil || base.IsTemplate != tmpl {
			if len(incoming[id]) > 0 {
				it := incoming[id][0]
				return nil, fmt.Errorf("%w: item %d belongs to unknown host %d", ErrCorrupt, it.ID, it.HostID)
			}
			names = names || oh != nil
			continue
		}
		n := len(incoming[id])
		if oh != nil {
			n += len(oh.items)
		}
		items := slab.take(n)
		if oh != nil {
			for i := range oh.items {
				o := &oh.items[i]
				it, ok := pc.items[o.ID]
				switch {
				case !ok:
					items = append(items, *o)
				case it != nil && it.HostID == id:
					items = append(items, *it)
				}
			}
		}
		for _, it := range incoming[id] {
			items = append(items, *it)
		}
		nh := new(Host)
		*nh = *base
		if len(nh.GroupIDs) == 0 {
			nh.GroupIDs = nil // as loadSnapshot leaves it
		}
		if len(nh.Tags) == 0 {
			nh.Tags = nil
		}
		if err := finishHost(nh, items, mc); err != nil {
			return nil, err
		}
		names = names || oh == nil || oh.Host != nh.Host
		made = append(made, nh)
	}

	s := &Snapshot{version: version, mcell: mc, inh: &inheritIndex{}, psk: old.psk}
	s.setGroups(groups)
	hbn, hbi, ifw, idw := old.hostByName.writer(), old.hostByID.writer(), old.ifaceByID.writer(), old.ids.writer()
	nItems := old.nItems
	psk := false
	for _, id := range ids {
		oh := old.hostByID.get(id)
		if oh == nil {
			continue
		}
		psk = psk || oh.Ext().TLS.UsesPSK()
		hbn.del(oh.Host)
		hbi.del(id)
		for j := range oh.Interfaces {
			ifw.del(oh.Interfaces[j].ID)
		}
		for j := range oh.items {
			idw.del(oh.items[j].ID)
		}
		nItems -= len(oh.items)
	}
	for _, h := range made {
		psk = psk || h.Ext().TLS.UsesPSK()
		if hbn.get(h.Host) != nil {
			return nil, fmt.Errorf("%w: duplicate host %q", ErrCorrupt, h.Host)
		}
		hbn.set(h.Host, h)
		hbi.set(h.ID, h)
		for j := range h.Interfaces {
			ifw.set(h.Interfaces[j].ID, &h.Interfaces[j])
		}
		for j := range h.items {
			idw.set(&h.items[j])
		}
		nItems += len(h.items)
	}
	s.hostByName, s.hostByID, s.ifaceByID, s.ids, s.nItems = hbn.done(), hbi.done(), ifw.done(), idw.done(), nItems
	if psk || s.psk == nil {
		s.psk = &pskIndex{}
	}
	s.hosts = mergeHosts(old.hosts, made, touched, names)
	return s, nil
}

// mergeHosts returns the sorted host list of a derived part: old's
// hosts with the touched ones replaced by made. When no name changed
// (names false), made hosts take their old places.
func mergeHosts(old, made []*Host, touched map[uint64]bool, names bool) []*Host {
	byName := func(a, b *Host) int { return cmp.Compare(a.Host, b.Host) }
	if !names {
		out := slices.Clone(old)
		for _, h := range made {
			if i, ok := slices.BinarySearchFunc(out, h, byName); ok {
				out[i] = h
			}
		}
		return out
	}
	slices.SortFunc(made, byName)
	out := make([]*Host, 0, len(old)+len(made))
	for _, h := range old {
		if touched[h.ID] {
			continue
		}
		for len(made) > 0 && made[0].Host < h.Host {
			out = append(out, made[0])
			made = made[1:]
		}
		out = append(out, h)
	}
	return append(out, made...)
}
