package api

import (
	"context"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Value maps (Zabbix 6.0's valuemap.*): per-host maps of values to their
// meaning, which items name by valuemapid. Reading needs read access to
// the map's host, writing read-write, as for the host's items.

func valueMapObject(m *catalog.ValueMap) object {
	return object{"valuemapid": id(m.ID), "hostid": id(m.HostID), "name": m.Name, "uuid": m.UUID}
}

func mappingObjects(ms []catalog.Mapping) []object {
	out := make([]object, len(ms))
	for i, m := range ms {
		out[i] = object{"type": strconv.Itoa(int(m.Type)), "value": m.Value, "newvalue": m.NewValue}
	}
	return out
}

// valuemapGetParams are valuemap.get's parameters, a validated get
// (get_valid.go) in the order of 6.0's rules. selectMappings is
// "extend", "count" (recorded from 6.0.14: the count as a string) or a
// list of the mapping's fields, without an ID.
type valuemapGetParams struct {
	ValueMapIDs opt[ids] `json:"valuemapids" zbx:"null"`
	HostIDs     opt[ids] `json:"hostids" zbx:"null"`
	validQuery
	SelectMappings sel `json:"selectMappings" in:"type,value,newvalue" zbx:"null"`
	validPage
	Editable     opt[bool] `json:"editable"`
	PreserveKeys opt[bool] `json:"preservekeys"`
}

var valuemapNames = validNames{
	output: []string{"valuemapid", "uuid", "name", "hostid"},
	filter: []string{"valuemapid", "hostid", "name"},
	search: []string{"name"},
	sort:   []string{"valuemapid", "name"},
}

func (p *valuemapGetParams) adjustRule(r *fieldRule, _ func(string) bool) { valuemapNames.adjust(r) }

// valuemapSchema is Zabbix 6.0's valuemap table, which filter and
// search read.
var valuemapSchema = schema{id: "valuemapid", named: true, types: fieldTypes(`valuemapid:n hostid:n name:c uuid:c`)}

func (s *Server) valuemapGet(ctx context.Context, c *call) (any, error) {
	var p valuemapGetParams
	if err := decodeValidated(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var objs []object
	for _, m := range snap.ValueMaps() {
		h := snap.HostOrTemplate(m.HostID)
		if h == nil || !a.canRead(h) || p.Editable.Value && !a.canWrite(h) ||
			!idsPass(p.ValueMapIDs, m.ID) || !idsPass(p.HostIDs, m.HostID) {
			continue
		}
		o := valueMapObject(&m)
		if sl := p.SelectMappings; sl.Count {
			o["mappings"] = countOf(len(m.Mappings))
		} else if sl.Set {
			o["mappings"] = sl.shape(mappingObjects(m.Mappings), "")
		}
		objs = append(objs, o)
	}
	g := validGet(&p.validQuery, &p.validPage, p.PreserveKeys)
	return g.applySchema(objs, &valuemapSchema, valuemapNames.sort...)
}

// mappingParams is one of a value map's "mappings".
type mappingParams struct {
	Type     opt[int64]  `json:"type"`
	Value    opt[string] `json:"value"`
	NewValue opt[string] `json:"newvalue"`
}

type valuemapParams struct {
	ValueMapID opt[uint64]  `json:"valuemapid"`
	HostID     opt[uint64]  `json:"hostid"`
	Name       opt[string]  `json:"name"`
	UUID       opt[ignored] `json:"uuid"`
	// Mappings not given (absent or null): an update without them
	// keeps the map's mappings.
	Mappings opt[[]mappingParams] `json:"mappings" as:"objects"`
}

func (p *valuemapParams) mappings(i int) ([]catalog.Mapping, error) {
	out := make([]catalog.Mapping, len(p.Mappings.Value))
	for j, m := range p.Mappings.Value {
		if m.Type.Value < 0 || m.Type.Value > int64(catalog.MapDefault) {
			return nil, errParams(`Invalid parameter "/%d/mappings/%d/type": value must be one of 0, 1, 2, 3, 4, 5.`, i+1, j+1)
		}
		out[j] = catalog.Mapping{Type: catalog.MappingType(m.Type.Value), Value: m.Value.Value, NewValue: m.NewValue.Value}
	}
	return out, nil
}

func (w *configWriter) valuemapCreate(ctx context.Context, c *call) (any, error) {
	var ps []valuemapParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	maps := make([]catalog.ValueMap, len(ps))
	hosts := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.ValueMapID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "valuemapid".`, i+1)
		case !p.HostID.Set:
			return nil, missing(i, "hostid")
		case !p.Name.Set:
			return nil, missing(i, "name")
		case !p.Mappings.Given():
			return nil, missing(i, "mappings")
		}
		ms, err := p.mappings(i)
		if err != nil {
			return nil, err
		}
		maps[i] = catalog.ValueMap{HostID: p.HostID.Value, Name: p.Name.Value, Mappings: ms}
		hosts[i] = p.HostID.Value
	}
	var ids []uint64
	err := w.edit(ctx, c, "valuemapid", hostsWritable(hosts), func(e *catalog.Edit) (err error) {
		ids, err = e.CreateValueMaps(maps)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("valuemapids", ids), nil
}

func (w *configWriter) valuemapUpdate(ctx context.Context, c *call) (any, error) {
	var ps []valuemapParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ups := make([]catalog.ValueMapUpdate, len(ps))
	ids := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case !p.ValueMapID.Set:
			return nil, missing(i, "valuemapid")
		case p.HostID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "hostid".`, i+1)
		}
		u := catalog.ValueMapUpdate{ID: p.ValueMapID.Value}
		if p.Name.Set {
			u.Name = &p.Name.Value
		}
		if p.Mappings.Given() {
			ms, err := p.mappings(i)
			if err != nil {
				return nil, err
			}
			u.Mappings = &ms
		}
		ups[i], ids[i] = u, p.ValueMapID.Value
	}
	err := w.edit(ctx, c, "valuemapid", valueMapsWritable(ids), func(e *catalog.Edit) error { return e.UpdateValueMaps(ups) })
	if err != nil {
		return nil, err
	}
	return idResult("valuemapids", ids), nil
}

func (w *configWriter) valuemapDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := w.edit(ctx, c, "valuemapid", valueMapsWritable(ids), func(e *catalog.Edit) error { return e.DeleteValueMaps(ids) }); err != nil {
		return nil, err
	}
	return idResult("valuemapids", ids), nil
}

// valueMapsWritable needs read-write on each map's host.
func valueMapsWritable(ids []uint64) permits {
	return func(snap *catalog.Snapshot, a access) bool {
		for _, id := range ids {
			if m := snap.ValueMap(id); m != nil {
				if h := snap.HostOrTemplate(m.HostID); h != nil && !a.canWrite(h) {
					return false
				}
			}
		}
		return true
	}
}
