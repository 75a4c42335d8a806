package api

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

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
		if t := catalog.MappingType(m.Type.Value); t == catalog.MapGreaterOrEqual || t == catalog.MapLessOrEqual {
			// 6.0.14's words (recorded); the catalog checks the same.
			if _, err := strconv.ParseFloat(strings.TrimSpace(m.Value.Value), 64); err != nil {
				return nil, errParams(`Invalid parameter "/%d/mappings/%d/value": a floating point value is expected.`, i+1, j+1)
			}
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
		if err := valueMapNameProblem(i, p.Name.Value); err != nil {
			return nil, err
		}
		ms, err := p.mappings(i)
		if err != nil {
			return nil, err
		}
		maps[i] = catalog.ValueMap{HostID: p.HostID.Value, Name: p.Name.Value, Mappings: ms}
		hosts[i] = p.HostID.Value
	}
	named := make([]namedMap, len(maps))
	for i, m := range maps {
		named[i] = namedMap{host: m.HostID, name: m.Name}
	}
	if err := valueMapsUnique(w.cat.Snapshot(), named); err != nil {
		return nil, err
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
			if err := valueMapNameProblem(i, p.Name.Value); err != nil {
				return nil, err
			}
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
	snap := w.cat.Snapshot()
	var named []namedMap
	for _, u := range ups {
		if m := snap.ValueMap(u.ID); m != nil && u.Name != nil {
			named = append(named, namedMap{id: u.ID, host: m.HostID, name: *u.Name})
		}
	}
	if err := valueMapsUnique(snap, named); err != nil {
		return nil, err
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

// valueMapNameProblem is 6.0's validator's refusal of the name of the
// i-th value map (recorded from 6.0.14): empty, or longer than 64
// characters. The catalog checks the same, in its own words, when the
// edit is made.
func valueMapNameProblem(i int, name string) error {
	switch {
	case name == "":
		return errParams(`Invalid parameter "/%d/name": cannot be empty.`, i+1)
	case utf8.RuneCountInString(name) > 64:
		return errParams(`Invalid parameter "/%d/name": value is too long.`, i+1)
	}
	return nil
}

// namedMap is a value map a call creates (id 0) or renames.
type namedMap struct {
	id, host uint64
	name     string
}

// valueMapsUnique refuses a name given twice for a host in one call
// (`Invalid parameter "/2": value (hostid, name)=(10562, x1) already
// exists.`) or one another value map of the host has (`Value map "x1"
// already exists.`), as 6.0.14 refuses them (recorded); maps renamed by
// the same call do not count with their old names.
func valueMapsUnique(snap *catalog.Snapshot, maps []namedMap) error {
	seen := map[namedMap]bool{}
	for i, m := range maps {
		k := namedMap{host: m.host, name: m.name}
		if seen[k] {
			return errParams(`Invalid parameter "/%d": value (hostid, name)=(%d, %s) already exists.`, i+1, m.host, m.name)
		}
		seen[k] = true
	}
	renamed := map[uint64]bool{}
	for _, m := range maps {
		renamed[m.id] = m.id != 0
	}
	for _, m := range maps {
		for _, o := range snap.ValueMaps() {
			if o.HostID == m.host && o.Name == m.name && o.ID != m.id && !renamed[o.ID] {
				return errParams(`Value map "%s" already exists.`, m.name)
			}
		}
	}
	return nil
}
