package api

import (
	"context"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

func groupObject(g *catalog.Group) object {
	// uuid: Zabbix 6.0 gives each host group one for the export; Peregrine
	// keeps none and exports nothing.
	internal := "0"
	if g.ID == discoveredHostsGroup {
		internal = "1"
	}
	return object{"groupid": id(g.ID), "name": g.Name, "flags": "0", "internal": internal, "uuid": ""}
}

// discoveredHostsGroup is 6.0's "Discovered hosts" (ID 5 in a fresh
// database, as Peregrine seeds it), the one internal host group.
const discoveredHostsGroup = 5

// hostgroupSchema is Zabbix 6.0's hstgrp table.
var hostgroupSchema = schema{id: "groupid", types: fieldTypes("groupid:n name:c internal:n flags:n uuid:c")}

// hostgroupGetParams are hostgroup.get's parameters (Zabbix 6.0's).
// The flags are set by any value but null, false included, as 6.0 tests
// them.
type hostgroupGetParams struct {
	getParams
	GroupIDs       opt[ids] `json:"groupids"`
	HostIDs        opt[ids] `json:"hostids"`
	TemplateIDs    opt[ids] `json:"templateids"`
	GraphIDs       opt[ids] `json:"graphids"`
	TriggerIDs     opt[ids] `json:"triggerids"`
	MaintenanceIDs opt[ids] `json:"maintenanceids"`
	// The host a group must have: monitored_hosts, real_hosts (any
	// host), templated_hosts (a template) or with_hosts_and_templates,
	// the first given; with items, triggers, web scenarios or graphs,
	// all of one host or template.
	MonitoredHosts       opt[bool] `json:"monitored_hosts" as:"isset"`
	RealHosts            opt[bool] `json:"real_hosts" as:"isset"`
	TemplatedHosts       opt[bool] `json:"templated_hosts" as:"isset"`
	WithHostsTmpl        opt[bool] `json:"with_hosts_and_templates" as:"isset"`
	WithItems            opt[bool] `json:"with_items" as:"isset"`
	WithMonItems         opt[bool] `json:"with_monitored_items" as:"isset"`
	WithSimpleGraphItems opt[bool] `json:"with_simple_graph_items" as:"isset"`
	WithTriggers         opt[bool] `json:"with_triggers" as:"isset"`
	WithMonTriggers      opt[bool] `json:"with_monitored_triggers" as:"isset"`
	WithHTTPTests        opt[bool] `json:"with_httptests" as:"isset"`
	WithMonHTTPTests     opt[bool] `json:"with_monitored_httptests" as:"isset"`
	WithGraphs           opt[bool] `json:"with_graphs" as:"isset"`
	// Prototypes: Peregrine has no discovery, so none.
	WithItemPrototypes    opt[bool] `json:"with_item_prototypes" as:"isset"`
	WithSimpleGraphProtos opt[bool] `json:"with_simple_graph_item_prototypes" as:"isset"`
	WithGraphPrototypes   opt[bool] `json:"with_graph_prototypes" as:"isset"`

	SelectHosts          sel `json:"selectHosts"`
	SelectTemplates      sel `json:"selectTemplates"`
	SelectGroupDiscovery sel `json:"selectGroupDiscovery"`
	SelectDiscoveryRule  sel `json:"selectDiscoveryRule"`
	SelectHostPrototype  sel `json:"selectHostPrototype"`

	// graphHosts are the hosts and templates with graphs (with_graphs),
	// set before hostMatches runs.
	graphHosts map[uint64]bool
}

// asksHost reports whether the parameters ask a group to have a host
// of some kind (hostMatches).
func (p *hostgroupGetParams) asksHost() bool {
	return p.MonitoredHosts.Given() || p.RealHosts.Given() || p.TemplatedHosts.Given() || p.WithHostsTmpl.Given() ||
		p.WithItems.Given() || p.WithMonItems.Given() || p.WithSimpleGraphItems.Given() ||
		p.WithTriggers.Given() || p.WithMonTriggers.Given() ||
		p.WithHTTPTests.Given() || p.WithMonHTTPTests.Given() || p.WithGraphs.Given()
}

// hostMatches reports whether h is a host the with_* and *_hosts
// parameters ask a group to have, one host meeting them all as Zabbix
// 6.0 asks.
func (p *hostgroupGetParams) hostMatches(snap *catalog.Snapshot, h *catalog.Host) bool {
	switch {
	case p.MonitoredHosts.Given():
		if !h.Enabled {
			return false
		}
	case p.RealHosts.Given(), p.WithHostsTmpl.Given():
	case p.TemplatedHosts.Given():
		if !h.IsTemplate {
			return false
		}
	}
	if p.WithHTTPTests.Given() || p.WithMonHTTPTests.Given() {
		return false // there are no web scenarios
	}
	if p.WithGraphs.Given() && !p.graphHosts[h.ID] {
		return false
	}
	switch {
	case p.WithItems.Given():
		if len(listedItems(h)) == 0 {
			return false
		}
	case p.WithMonItems.Given():
		if !h.Enabled || !slices.ContainsFunc(listedItems(h), func(it *catalog.Item) bool { return it.Enabled }) {
			return false
		}
	case p.WithSimpleGraphItems.Given():
		if !slices.ContainsFunc(listedItems(h), func(it *catalog.Item) bool { return it.Enabled && it.ValueType.Numeric() }) {
			return false
		}
	}
	if p.WithTriggers.Given() || p.WithMonTriggers.Given() {
		mon := !p.WithTriggers.Given()
		if mon && !h.Enabled {
			return false
		}
		return slices.ContainsFunc(listedItems(h), func(it *catalog.Item) bool {
			return slices.ContainsFunc(triggersOfItem(snap, it), func(t *catalog.Trigger) bool {
				return !mon || it.Enabled && t.Enabled
			})
		})
	}
	return true
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
	// shown by selectHosts nor counted by real_hosts and the like.
	members := map[uint64][]*catalog.Host{}
	for _, h := range snap.Hosts() {
		if !a.canRead(h) {
			continue
		}
		for _, g := range h.GroupIDs {
			members[g] = append(members[g], h)
		}
	}
	// Templates are in host groups too (6.0 has no template groups).
	tmembers := map[uint64][]*catalog.Host{}
	for _, t := range snap.Templates() {
		if !a.canRead(t) {
			continue
		}
		for _, g := range t.GroupIDs {
			tmembers[g] = append(tmembers[g], t)
		}
	}
	var trigHosts, maintHosts, maintGroups map[uint64]bool
	if p.TriggerIDs.Given() {
		trigHosts = map[uint64]bool{}
		for _, tid := range p.TriggerIDs.Value {
			if t := snap.Trigger(tid); t != nil {
				for _, h := range t.HostIDs {
					trigHosts[h] = true
				}
			}
		}
	}
	if p.MaintenanceIDs.Given() {
		maintHosts, maintGroups = map[uint64]bool{}, map[uint64]bool{}
		for _, m := range snap.Maintenances() {
			if containsID(p.MaintenanceIDs.Value, m.ID) {
				for _, h := range m.HostIDs {
					maintHosts[h] = true
				}
				for _, g := range m.GroupIDs {
					maintGroups[g] = true
				}
			}
		}
	}
	p.graphHosts = graphOwners(snap, opt[ids]{}, p.WithGraphs.Given())
	graphHosts := graphOwners(snap, p.GraphIDs, false)
	none := p.WithItemPrototypes.Given() || p.WithSimpleGraphProtos.Given() || p.WithGraphPrototypes.Given()
	var objs []object
	for _, g := range snap.Groups() {
		if none || !idsPass(p.GroupIDs, g.ID) || !a.seesGroup(g.ID, p.Editable.Value) {
			continue
		}
		hs := members[g.ID]
		if p.HostIDs.Given() && !anyHost(hs, p.HostIDs.Value) ||
			p.TemplateIDs.Given() && !anyHost(tmembers[g.ID], p.TemplateIDs.Value) ||
			trigHosts != nil && !slices.ContainsFunc(hs, func(h *catalog.Host) bool { return trigHosts[h.ID] }) ||
			graphHosts != nil && !slices.ContainsFunc(append(slices.Clip(hs), tmembers[g.ID]...), func(h *catalog.Host) bool { return graphHosts[h.ID] }) ||
			maintGroups != nil && !maintGroups[g.ID] && !slices.ContainsFunc(hs, func(h *catalog.Host) bool { return maintHosts[h.ID] }) {
			continue
		}
		// with_items and with_triggers find templates too (recorded
		// from 6.0.14); real and monitored hosts are hosts.
		cands := append(slices.Clip(hs), tmembers[g.ID]...)
		switch {
		case p.TemplatedHosts.Given():
			cands = tmembers[g.ID]
		case p.RealHosts.Given(), p.MonitoredHosts.Given(), p.WithMonItems.Given(), p.WithMonTriggers.Given():
			cands = hs
		}
		if p.asksHost() && !slices.ContainsFunc(cands, func(h *catalog.Host) bool { return p.hostMatches(snap, h) }) {
			continue
		}
		o := groupObject(g)
		if sl := p.SelectHosts; sl.Set {
			if sl.Count {
				o["hosts"] = countOf(len(hs))
			} else {
				var list []object
				for _, h := range hs {
					list = append(list, hostObject(h))
				}
				o["hosts"] = nonNil(sl.shape(p.limitSelect(list), "hostid"))
			}
		}
		if sl := p.SelectTemplates; sl.Set {
			ts := tmembers[g.ID]
			if sl.Count {
				o["templates"] = countOf(len(ts))
			} else {
				list := make([]object, 0, len(ts))
				for _, t := range ts {
					list = append(list, templateObject(t))
				}
				o["templates"] = nonNil(sl.shape(p.limitSelect(list), "templateid"))
			}
		}
		if p.SelectGroupDiscovery.Set {
			o["groupDiscovery"] = []object{}
		}
		if p.SelectDiscoveryRule.list() {
			o["discoveryRule"] = []object{}
		}
		if p.SelectHostPrototype.Set {
			o["hostPrototype"] = []object{}
		}
		objs = append(objs, o)
	}
	sortByID(objs, "groupid")
	return p.applySchema(objs, &hostgroupSchema, "groupid", "name")
}

func anyHost(hs []*catalog.Host, want ids) bool {
	for _, h := range hs {
		if containsID(want, h.ID) {
			return true
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
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
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
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
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
