package api

import (
	"context"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// LastValues gives the newest and previous value of an item (the
// pipeline's per-item state).
type LastValues interface {
	Last(item uint64) (last, prev history.Sample, ok bool)
}

func (s *Server) registerConfig() {
	s.methods["hostgroup.get"] = &method{role: RoleUser, call: s.hostgroupGet}
	s.methods["host.get"] = &method{role: RoleUser, call: s.hostGet}
	s.methods["item.get"] = &method{role: RoleUser, call: s.itemGet}
	s.registerConfigWrite()
}

func id(v uint64) string { return strconv.FormatUint(v, 10) }

func status(enabled bool) string {
	if enabled {
		return "0"
	}
	return "1"
}

func hostObject(h *catalog.Host) object {
	return object{"hostid": id(h.ID), "host": h.Host, "name": h.Name, "status": status(h.Enabled), "available": "0", "flags": "0"}
}

func groupObject(g *catalog.Group) object {
	return object{"groupid": id(g.ID), "name": g.Name, "flags": "0", "internal": "0"}
}

func (s *Server) hostgroupGet(_ context.Context, c *call) (any, error) {
	var p struct {
		getParams
		GroupIDs     ids  `json:"groupids"`
		HostIDs      ids  `json:"hostids"`
		RealHosts    bool `json:"real_hosts"`
		WithHosts    bool `json:"with_hosts"`
		WithMonItems bool `json:"with_monitored_items"`
		SelectHosts  any  `json:"selectHosts"`
	}
	if err := decodeParams(c.params, &p); err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	members := map[uint64][]*catalog.Host{}
	for _, h := range snap.Hosts() {
		for _, g := range h.GroupIDs {
			members[g] = append(members[g], h)
		}
	}
	var objs []object
	for _, g := range snap.Groups() {
		if len(p.GroupIDs) > 0 && !containsID(p.GroupIDs, g.ID) {
			continue
		}
		hs := members[g.ID]
		if (p.RealHosts || p.WithHosts) && len(hs) == 0 {
			continue
		}
		if len(p.HostIDs) > 0 && !anyHost(hs, p.HostIDs) {
			continue
		}
		if p.WithMonItems && !anyMonitoredItem(hs) {
			continue
		}
		o := groupObject(g)
		if p.SelectHosts != nil {
			var list []object
			for _, h := range hs {
				list = append(list, hostObject(h))
			}
			o["hosts"] = nonNil(list)
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "groupid", "groupid", "name")
}

func anyHost(hs []*catalog.Host, want ids) bool {
	for _, h := range hs {
		if containsID(want, h.ID) {
			return true
		}
	}
	return false
}

func anyMonitoredItem(hs []*catalog.Host) bool {
	for _, h := range hs {
		if !h.Enabled {
			continue
		}
		for _, it := range h.Items() {
			if it.Enabled {
				return true
			}
		}
	}
	return false
}

func nonNil(l []object) []object {
	if l == nil {
		return []object{}
	}
	return l
}

func (s *Server) hostGet(_ context.Context, c *call) (any, error) {
	var p struct {
		getParams
		GroupIDs         ids  `json:"groupids"`
		HostIDs          ids  `json:"hostids"`
		MonitoredHosts   bool `json:"monitored_hosts"`
		SelectGroups     any  `json:"selectGroups"`
		SelectHostGroups any  `json:"selectHostGroups"`
		SelectInterfaces any  `json:"selectInterfaces"`
		SelectTags       any  `json:"selectTags"`
		SelectItems      any  `json:"selectItems"`
	}
	if err := decodeParams(c.params, &p); err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var objs []object
	for _, h := range snap.Hosts() {
		if len(p.HostIDs) > 0 && !containsID(p.HostIDs, h.ID) {
			continue
		}
		if len(p.GroupIDs) > 0 && !anyGroup(h.GroupIDs, p.GroupIDs) {
			continue
		}
		if p.MonitoredHosts && !h.Enabled {
			continue
		}
		o := hostObject(h)
		var groups []object
		for _, gid := range h.GroupIDs {
			if g := snap.GroupByID(gid); g != nil {
				groups = append(groups, groupObject(g))
			}
		}
		if p.SelectGroups != nil {
			o["groups"] = nonNil(groups)
		}
		if p.SelectHostGroups != nil {
			o["hostgroups"] = nonNil(groups)
		}
		if p.SelectInterfaces != nil {
			o["interfaces"] = []object{}
		}
		if p.SelectTags != nil {
			tags := make([]object, 0, len(h.Tags))
			for _, t := range h.Tags {
				tags = append(tags, object{"tag": t.Tag, "value": t.Value})
			}
			o["tags"] = tags
		}
		if p.SelectItems != nil {
			var items []object
			for _, it := range h.Items() {
				items = append(items, object{"itemid": id(it.ID), "key_": it.Key, "name": it.Name})
			}
			o["items"] = nonNil(items)
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "hostid", "hostid", "host", "name", "status")
}

func anyGroup(have []uint64, want ids) bool {
	for _, g := range have {
		if containsID(want, g) {
			return true
		}
	}
	return false
}

func (s *Server) itemGet(_ context.Context, c *call) (any, error) {
	var p struct {
		getParams
		ItemIDs     ids  `json:"itemids"`
		HostIDs     ids  `json:"hostids"`
		GroupIDs    ids  `json:"groupids"`
		WebItems    bool `json:"webitems"`
		Monitored   bool `json:"monitored"`
		SelectHosts any  `json:"selectHosts"`
		SelectTags  any  `json:"selectTags"`
	}
	if err := decodeParams(c.params, &p); err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	rs := &itemRows{lv: s.opts.Last}
	visit := func(h *catalog.Host) {
		if len(p.GroupIDs) > 0 && !anyGroup(h.GroupIDs, p.GroupIDs) {
			return
		}
		for _, it := range h.Items() {
			if len(p.ItemIDs) > 0 && !containsID(p.ItemIDs, it.ID) {
				continue
			}
			if p.Monitored && !(it.Enabled && h.Enabled) {
				continue
			}
			rs.rows = append(rs.rows, itemRow{it: it})
		}
	}
	switch {
	case len(p.HostIDs) > 0:
		for _, hid := range p.HostIDs {
			if h := snap.HostByID(hid); h != nil {
				visit(h)
			}
		}
	case len(p.ItemIDs) > 0:
		seen := map[uint64]bool{}
		for _, iid := range p.ItemIDs {
			if it := snap.Item(iid); it != nil && !seen[it.HostID] {
				seen[it.HostID] = true
				visit(snap.HostByID(it.HostID))
			}
		}
	default:
		rs.rows = make([]itemRow, 0, snap.ItemCount())
		for _, h := range snap.Hosts() {
			visit(h)
		}
	}
	return p.applyItems(rs, itemSelect{hosts: p.SelectHosts != nil, tags: p.SelectTags != nil})
}
