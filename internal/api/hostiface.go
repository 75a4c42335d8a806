package api

import (
	"context"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Host interfaces in the Zabbix 6.0 shape. Zabbix 6.0 keeps availability
// on the interface ("available", "error", "errors_from",
// "disable_until"), not on the host; those come from
// Options.Availability and are "0"/"" for an interface never checked.

// ifaceObject returns the API object of f; details only if withDetails
// (Zabbix shows an SNMP interface's details as an object, the others'
// as []).
func (s *Server) ifaceObject(f *catalog.Interface, withDetails bool) object {
	o := object{
		"interfaceid": id(f.ID), "hostid": id(f.HostID), "type": strconv.Itoa(int(f.Type)),
		"main": boolNum(f.Main), "useip": boolNum(f.UseIP), "ip": f.IP, "dns": f.DNS, "port": f.Port,
		"available": "0", "error": "", "errors_from": "0", "disable_until": "0",
	}
	if s.opts.Availability != nil {
		if a, ok := s.opts.Availability.Availability(f.ID); ok {
			o["available"] = strconv.Itoa(int(a.Available))
			o["error"] = a.Error
			o["errors_from"] = strconv.FormatInt(a.ErrorsFrom, 10)
			o["disable_until"] = strconv.FormatInt(a.DisableUntil, 10)
		}
	}
	if withDetails {
		if f.Type == catalog.InterfaceSNMP {
			d := make(map[string]string, len(f.Details))
			for k, v := range f.Details {
				d[k] = v
			}
			o["details"] = d
		} else {
			o["details"] = []any{}
		}
	}
	return o
}

func boolNum(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// hostinterfaceGetParams are hostinterface.get's parameters, a legacy
// get (params_legacy.go). Recorded from 6.0.14: hostids, interfaceids,
// itemids (the interfaces those items use) and triggerids (the
// interfaces of the hosts of those triggers) given as [] or holding
// garbage match nothing, null matches everything; selectHosts gives
// host.get's objects (hostid added to a list of fields) and leaves
// "count" out; selectItems gives item.get's (no itemid added) or, as
// "count", their number.
type hostinterfaceGetParams struct {
	getParams
	HostIDs      opt[ids] `json:"hostids"`
	InterfaceIDs opt[ids] `json:"interfaceids"`
	ItemIDs      opt[ids] `json:"itemids"`
	TriggerIDs   opt[ids] `json:"triggerids"`
	SelectHosts  sel      `json:"selectHosts"`
	SelectItems  sel      `json:"selectItems"`
}

// hostinterfaceGet serves hostinterface.get: the interfaces of the hosts
// the caller may read, with the common get parameters.
func (s *Server) hostinterfaceGet(ctx context.Context, c *call) (any, error) {
	var p hostinterfaceGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var itemIfaces map[uint64]bool
	if p.ItemIDs.Given() {
		itemIfaces = map[uint64]bool{}
		for _, iid := range p.ItemIDs.Value {
			if it := snap.Item(iid); it != nil && it.InterfaceID != 0 {
				itemIfaces[it.InterfaceID] = true
			}
		}
	}
	var trigHosts map[uint64]bool
	if p.TriggerIDs.Given() {
		trigHosts = map[uint64]bool{}
		for _, tid := range p.TriggerIDs.Value {
			if t := snap.Trigger(tid); t != nil {
				for _, hid := range t.HostIDs {
					trigHosts[hid] = true
				}
			}
		}
	}
	out := p.outputFields()
	var objs []object
	for _, h := range snap.Hosts() {
		if len(h.Interfaces) == 0 || !a.sees(h, p.Editable.Value) || !idsPass(p.HostIDs, h.ID) || trigHosts != nil && !trigHosts[h.ID] {
			continue
		}
		for i := range h.Interfaces {
			f := &h.Interfaces[i]
			if !idsPass(p.InterfaceIDs, f.ID) || itemIfaces != nil && !itemIfaces[f.ID] {
				continue
			}
			o := s.ifaceObject(f, out.has("details"))
			if sl := p.SelectHosts; sl.list() {
				o["hosts"] = sl.shape([]object{hostObject(h)}, "hostid")
			}
			if sl := p.SelectItems; sl.Set {
				var items []*catalog.Item
				for _, it := range h.Items() {
					if it.InterfaceID == f.ID {
						items = append(items, it)
					}
				}
				if sl.Count {
					o["items"] = countOf(len(items))
				} else {
					if p.LimitSelects.Given() && int(p.LimitSelects.Value) < len(items) {
						items = items[:p.LimitSelects.Value]
					}
					o["items"] = s.itemObjects(items, sl)
				}
			}
			objs = append(objs, o)
		}
	}
	return p.apply(objs, "interfaceid", "interfaceid", "dns", "ip")
}
