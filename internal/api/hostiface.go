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

// hostinterfaceGet serves hostinterface.get: the interfaces of the hosts
// the caller may read, selected by hostids, interfaceids and itemids (the
// interfaces those items use), with the common get parameters.
// hostinterfaceGetParams are hostinterface.get's parameters.
type hostinterfaceGetParams struct {
	getParams
	HostIDs      opt[ids] `json:"hostids"`
	InterfaceIDs opt[ids] `json:"interfaceids"`
	ItemIDs      opt[ids] `json:"itemids"`
	SelectHosts  opt[any] `json:"selectHosts"`
	SelectItems  opt[any] `json:"selectItems"`
}

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
	if len(p.ItemIDs.Value) > 0 {
		itemIfaces = map[uint64]bool{}
		for _, iid := range p.ItemIDs.Value {
			if it := snap.Item(iid); it != nil && it.InterfaceID != 0 {
				itemIfaces[it.InterfaceID] = true
			}
		}
	}
	out := p.outputFields()
	var objs []object
	for _, h := range snap.Hosts() {
		if len(h.Interfaces) == 0 || !a.sees(h, p.Editable.Value) || len(p.HostIDs.Value) > 0 && !containsID(p.HostIDs.Value, h.ID) {
			continue
		}
		for i := range h.Interfaces {
			f := &h.Interfaces[i]
			if len(p.InterfaceIDs.Value) > 0 && !containsID(p.InterfaceIDs.Value, f.ID) || itemIfaces != nil && !itemIfaces[f.ID] {
				continue
			}
			o := s.ifaceObject(f, out.has("details"))
			if p.SelectHosts.Given() {
				o["hosts"] = []object{{"hostid": id(h.ID), "host": h.Host, "name": h.Name}}
			}
			if p.SelectItems.Given() {
				items := []object{}
				for _, it := range h.Items() {
					if it.InterfaceID == f.ID {
						items = append(items, object{"itemid": id(it.ID), "key_": it.Key, "name": it.Name})
					}
				}
				o["items"] = p.limitSelect(items)
			}
			objs = append(objs, o)
		}
	}
	return p.apply(objs, "interfaceid", "interfaceid", "dns", "ip")
}
