package api

import (
	"context"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

func groupObject(g *catalog.Group) object {
	return object{"groupid": id(g.ID), "name": g.Name, "flags": "0", "internal": "0"}
}

// hostgroupGetParams are hostgroup.get's parameters.
type hostgroupGetParams struct {
	getParams
	GroupIDs       opt[ids]  `json:"groupids"`
	HostIDs        opt[ids]  `json:"hostids"`
	RealHosts      opt[bool] `json:"real_hosts"`
	WithHosts      opt[bool] `json:"with_hosts"`
	WithHostsTmpl  opt[bool] `json:"with_hosts_and_templates"` // no templates: as with_hosts
	MonitoredHosts opt[bool] `json:"monitored_hosts"`
	WithItems      opt[bool] `json:"with_items"`
	WithMonItems   opt[bool] `json:"with_monitored_items"`
	SelectHosts    opt[any]  `json:"selectHosts"`
}

func (s *Server) hostgroupGet(ctx context.Context, c *call) (any, error) {
	var p hostgroupGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	// Members are the hosts the caller may read: the others are not
	// shown by selectHosts nor counted by with_hosts and the like.
	members := map[uint64][]*catalog.Host{}
	for _, h := range snap.Hosts() {
		if !a.canRead(h) {
			continue
		}
		for _, g := range h.GroupIDs {
			members[g] = append(members[g], h)
		}
	}
	var objs []object
	for _, g := range snap.Groups() {
		if len(p.GroupIDs.Value) > 0 && !containsID(p.GroupIDs.Value, g.ID) || !a.seesGroup(g.ID, p.Editable.Value) {
			continue
		}
		hs := members[g.ID]
		if (p.RealHosts.Value || p.WithHosts.Value || p.WithHostsTmpl.Value) && len(hs) == 0 {
			continue
		}
		if p.MonitoredHosts.Value && !slices.ContainsFunc(hs, func(h *catalog.Host) bool { return h.Enabled }) {
			continue
		}
		if p.WithItems.Value && !slices.ContainsFunc(hs, func(h *catalog.Host) bool { return len(h.Items()) > 0 }) {
			continue
		}
		if len(p.HostIDs.Value) > 0 && !anyHost(hs, p.HostIDs.Value) {
			continue
		}
		if p.WithMonItems.Value && !anyMonitoredItem(hs) {
			continue
		}
		o := groupObject(g)
		if p.SelectHosts.Given() {
			var list []object
			for _, h := range hs {
				list = append(list, hostObject(h))
			}
			o["hosts"] = nonNil(p.limitSelect(list))
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

// hostgroupParams are the objects of hostgroup.create and .update.
type hostgroupParams struct {
	GroupID  opt[uint64]  `json:"groupid"`
	Name     opt[string]  `json:"name"`
	UUID     opt[ignored] `json:"uuid"`     // accepted, not stored
	Flags    opt[ignored] `json:"flags"`    // read-only in Zabbix; accepted as hostgroup.get returns it
	Internal opt[ignored] `json:"internal"` // likewise
}

func (w *configWriter) hostgroupCreate(ctx context.Context, c *call) (any, error) {
	var ps []hostgroupParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		switch {
		case p.GroupID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "groupid".`, i+1)
		case !p.Name.Set:
			return nil, missing(i, "name")
		case p.Name.Value == "":
			return nil, empty(i, "name")
		}
		names[i] = p.Name.Value
	}
	var ids []uint64
	err := w.edit(ctx, c, "groupid", nil, func(e *catalog.Edit) (err error) {
		ids, err = e.CreateGroups(names)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("groupids", ids), nil
}

func (w *configWriter) hostgroupUpdate(ctx context.Context, c *call) (any, error) {
	var ps []hostgroupParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	var renames []catalog.Group
	ids := make([]uint64, len(ps))
	for i, p := range ps {
		if !p.GroupID.Set {
			return nil, missing(i, "groupid")
		}
		ids[i] = p.GroupID.Value
		if p.Name.Set {
			if p.Name.Value == "" {
				return nil, empty(i, "name")
			}
			renames = append(renames, catalog.Group{ID: p.GroupID.Value, Name: p.Name.Value})
		}
	}
	err := w.edit(ctx, c, "groupid", groupsWritable(ids), func(e *catalog.Edit) error {
		if len(renames) < len(ids) {
			// Groups named by ID only must exist all the same.
			for i, id := range ids {
				if w.cat.Snapshot().GroupByID(id) == nil && !slices.ContainsFunc(renames, func(g catalog.Group) bool { return g.ID == id }) {
					return &catalog.FieldError{Field: "groups[" + strconv.Itoa(i) + "].id", Err: catalog.ErrNotFound}
				}
			}
		}
		return e.RenameGroups(renames)
	})
	if err != nil {
		return nil, err
	}
	return idResult("groupids", ids), nil
}

func (w *configWriter) hostgroupDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := w.edit(ctx, c, "groupid", groupsWritable(ids), func(e *catalog.Edit) error { return e.DeleteGroups(ids) }); err != nil {
		return nil, err
	}
	return idResult("groupids", ids), nil
}
