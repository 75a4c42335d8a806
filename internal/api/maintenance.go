package api

import (
	"context"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// registerMaintenance registers maintenance.*: Zabbix's maintenance in
// the reduced form the catalog keeps (with data collection; one time,
// daily and weekly periods). Reading needs read access to every host and
// group of a maintenance, writing an admin with read-write on them, as
// Zabbix checks.
func (s *Server) registerMaintenance() {
	s.methods["maintenance.get"] = &method{role: RoleUser, call: s.maintenanceGet}
	ed, ok := s.opts.Catalog.(CatalogEditor)
	if !ok {
		return
	}
	w := &configWriter{s: s, ed: ed, cat: s.opts.Catalog}
	s.methods["maintenance.create"] = &method{role: RoleAdmin, call: w.maintenanceCreate}
	s.methods["maintenance.update"] = &method{role: RoleAdmin, call: w.maintenanceUpdate}
	s.methods["maintenance.delete"] = &method{role: RoleAdmin, call: w.maintenanceDelete}
}

func periodObject(p *catalog.MaintenancePeriod) object {
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	return object{"timeperiod_type": strconv.Itoa(int(p.Type)), "every": strconv.Itoa(max(p.Every, 1)), "month": "0",
		"dayofweek": strconv.Itoa(int(p.DayOfWeek)), "day": "0", "start_time": i64(p.StartTime), "period": i64(p.Period),
		"start_date": i64(p.StartDate)}
}

// maintenanceReadable needs read access to every host and group of m.
func maintenanceReadable(snap *catalog.Snapshot, a access, m *catalog.Maintenance, editable bool) bool {
	for _, hid := range m.HostIDs {
		if h := snap.HostByID(hid); h != nil && !a.sees(h, editable) {
			return false
		}
	}
	for _, g := range m.GroupIDs {
		if !a.seesGroup(g, editable) {
			return false
		}
	}
	return true
}

// maintenanceSchema is Zabbix 6.0's maintenances table.
var maintenanceSchema = schema{id: "maintenanceid", types: fieldTypes(`maintenanceid:n name:c maintenance_type:n
	description:t active_since:n active_till:n tags_evaltype:n`)}

// maintenanceGetParams are maintenance.get's parameters (Zabbix 6.0's).
type maintenanceGetParams struct {
	getParams
	MaintenanceIDs    opt[ids] `json:"maintenanceids"`
	HostIDs           opt[ids] `json:"hostids"`
	GroupIDs          opt[ids] `json:"groupids"`
	SelectHosts       sel      `json:"selectHosts"`
	SelectGroups      sel      `json:"selectGroups"`
	SelectTimeperiods sel      `json:"selectTimeperiods"`
	SelectTags        sel      `json:"selectTags"`
}

// matches applies hostids and groupids as Zabbix 6.0 does: a maintenance
// of one of the groups, or of a host (one of the hostids, when given) in
// one of the groups (when given).
func (p *maintenanceGetParams) matches(snap *catalog.Snapshot, m *catalog.Maintenance) bool {
	if !p.HostIDs.Given() && !p.GroupIDs.Given() {
		return true
	}
	if p.GroupIDs.Given() && anyGroup(m.GroupIDs, p.GroupIDs.Value) {
		return true
	}
	for _, hid := range m.HostIDs {
		h := snap.HostByID(hid)
		if h != nil && idsPass(p.HostIDs, hid) && idsAny(p.GroupIDs, h.GroupIDs) {
			return true
		}
	}
	return false
}

func (s *Server) maintenanceGet(ctx context.Context, c *call) (any, error) {
	var p maintenanceGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var objs []object
	for _, m := range snap.Maintenances() {
		if !idsPass(p.MaintenanceIDs, m.ID) || !p.matches(snap, &m) || !maintenanceReadable(snap, a, &m, p.Editable.Value) {
			continue
		}
		o := object{"maintenanceid": id(m.ID), "name": m.Name, "description": m.Description,
			"active_since": strconv.FormatInt(m.ActiveSince, 10), "active_till": strconv.FormatInt(m.ActiveTill, 10),
			"maintenance_type": "0", "tags_evaltype": strconv.Itoa(int(m.TagsEval))}
		// Selects as Zabbix 6.0 answers them: "count" leaves each out; a
		// list adds the ID of hosts and groups, not of tags and periods.
		if sl := p.SelectHosts; sl.list() {
			var hs []object
			for _, hid := range m.HostIDs {
				if h := snap.HostByID(hid); h != nil {
					hs = append(hs, hostObject(h))
				}
			}
			o["hosts"] = nonNil(sl.shape(p.limitSelect(hs), "hostid"))
		}
		if sl := p.SelectGroups; sl.list() {
			var gs []object
			for _, gid := range m.GroupIDs {
				if g := snap.GroupByID(gid); g != nil {
					gs = append(gs, groupObject(g))
				}
			}
			o["groups"] = nonNil(sl.shape(p.limitSelect(gs), "groupid"))
		}
		if sl := p.SelectTimeperiods; sl.list() {
			tps := make([]object, 0, len(m.Periods))
			for i := range m.Periods {
				tps = append(tps, periodObject(&m.Periods[i]))
			}
			o["timeperiods"] = sl.shape(tps, "")
		}
		if sl := p.SelectTags; sl.list() {
			tags := make([]object, 0, len(m.Tags))
			for _, tg := range m.Tags {
				tags = append(tags, object{"tag": tg.Tag, "operator": strconv.Itoa(int(tg.Operator)), "value": tg.Value})
			}
			o["tags"] = sl.shape(tags, "")
		}
		objs = append(objs, o)
	}
	sortByID(objs, "maintenanceid")
	return p.applySchema(objs, &maintenanceSchema, "maintenanceid", "name", "maintenance_type", "active_till", "active_since")
}

// maintenanceParams are the members maintenance.create and .update take.
type maintenanceParams struct {
	MaintenanceID opt[uint64]              `json:"maintenanceid"`
	Name          opt[string]              `json:"name"`
	Description   opt[string]              `json:"description"`
	ActiveSince   opt[int64]               `json:"active_since"`
	ActiveTill    opt[int64]               `json:"active_till"`
	Type          opt[int64]               `json:"maintenance_type"`
	TagsEval      opt[int64]               `json:"tags_evaltype"`
	GroupIDs      opt[ids]                 `json:"groupids"`
	HostIDs       opt[ids]                 `json:"hostids"`
	Groups        opt[groupRefs]           `json:"groups"`
	Hosts         opt[refs]                `json:"hosts" key:"hostid"`
	Periods       opt[[]maintenancePeriod] `json:"timeperiods" as:"objects"`
	Tags          opt[[]maintenanceTag]    `json:"tags" as:"objects"`
}

// maintenancePeriod is one of "timeperiods".
type maintenancePeriod struct {
	Type      opt[int64]   `json:"timeperiod_type"`
	Every     opt[int64]   `json:"every"`
	DayOfWeek opt[int64]   `json:"dayofweek"`
	Day       opt[int64]   `json:"day"`
	Month     opt[int64]   `json:"month"`
	StartTime opt[int64]   `json:"start_time"`
	StartDate opt[int64]   `json:"start_date"`
	Period    opt[int64]   `json:"period"`
	ID        opt[ignored] `json:"timeperiodid"`
}

// maintenanceTag is one of "tags".
type maintenanceTag struct {
	Tag      opt[string] `json:"tag"`
	Operator opt[int64]  `json:"operator"`
	Value    opt[string] `json:"value"`
}

// apply sets the given members on m and reports what Zabbix words
// itself; the catalog validates the rest.
func (p *maintenanceParams) apply(i int, m *catalog.Maintenance) error {
	// Refused in 6.0's words (recorded from 6.0.14) where the object
	// says it all; the catalog checks the result again.
	switch {
	case p.ActiveSince.Given() && p.ActiveTill.Given() && p.ActiveTill.Value <= p.ActiveSince.Value:
		return errParams(`Invalid parameter "/%[1]d/active_till": cannot be less than or equal to the value of parameter "/%[1]d/active_since".`, i+1)
	case p.Periods.Given() && len(p.Periods.Value) == 0:
		return errParams(`Invalid parameter "/%d/timeperiods": cannot be empty.`, i+1)
	}
	if p.Type.Given() && p.Type.Value != 0 {
		return errParams(`Invalid parameter "/%d/maintenance_type": maintenance without data collection (1) is not supported by Peregrine: use 0 (with data collection), whose problems are suppressed.`, i+1)
	}
	if p.Name.Set {
		m.Name = p.Name.Value
	}
	if p.Description.Set {
		m.Description = p.Description.Value
	}
	if p.ActiveSince.Given() {
		m.ActiveSince = p.ActiveSince.Value
	}
	if p.ActiveTill.Given() {
		m.ActiveTill = p.ActiveTill.Value
	}
	if p.TagsEval.Given() {
		m.TagsEval = uint8(min(max(p.TagsEval.Value, 0), 255))
	}
	switch {
	case p.Groups.Set:
		m.GroupIDs = p.Groups.Value
	case p.GroupIDs.Given():
		m.GroupIDs = p.GroupIDs.Value
	}
	switch {
	case p.Hosts.Set:
		m.HostIDs = p.Hosts.Value
	case p.HostIDs.Given():
		m.HostIDs = p.HostIDs.Value
	}
	if p.Periods.Given() {
		m.Periods = nil
		for j, tp := range p.Periods.Value {
			if !tp.Period.Given() {
				tp.Period.Value = 3600 // Zabbix's default
			}
			every := int(tp.Every.Value)
			if !tp.Every.Given() {
				every = 1
			}
			typ := tp.Type.Value
			if typ < 0 || typ > 255 {
				return errParams(`Invalid parameter "/%d/timeperiods/%d/timeperiod_type": value must be one of 0, 2, 3.`, i+1, j+1)
			}
			m.Periods = append(m.Periods, catalog.MaintenancePeriod{Type: uint8(typ), Every: every,
				DayOfWeek: uint8(min(max(tp.DayOfWeek.Value, 0), 255)), StartTime: tp.StartTime.Value, StartDate: tp.StartDate.Value, Period: tp.Period.Value})
		}
	}
	if p.Tags.Given() {
		m.Tags = nil
		for _, tg := range p.Tags.Value {
			op := uint8(2) // Zabbix's default: contains
			if tg.Operator.Given() {
				op = uint8(min(max(tg.Operator.Value, 0), 255))
			}
			m.Tags = append(m.Tags, catalog.MaintenanceTag{Tag: tg.Tag.Value, Operator: op, Value: tg.Value.Value})
		}
	}
	return nil
}

// maintenancesWritable needs read-write on the hosts and groups of each
// maintenance, before and after the change.
func maintenancesWritable(ms []catalog.Maintenance, ids []uint64) permits {
	return func(snap *catalog.Snapshot, a access) bool {
		for i := range ms {
			if !maintenanceReadable(snap, a, &ms[i], true) {
				return false
			}
		}
		for _, mid := range ids {
			if m := snap.Maintenance(mid); m != nil && !maintenanceReadable(snap, a, m, true) {
				return false
			}
		}
		return true
	}
}

// maintenanceError words the catalog's errors as Zabbix's API does.
func maintenanceError(err error) error { return editError(err, "maintenanceid") }

func (w *configWriter) maintenanceCreate(ctx context.Context, c *call) (any, error) {
	var ps []maintenanceParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ms := make([]catalog.Maintenance, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.MaintenanceID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "maintenanceid".`, i+1)
		case !p.Name.Set:
			return nil, missing(i, "name")
		case !p.ActiveSince.Given():
			return nil, missing(i, "active_since")
		case !p.ActiveTill.Given():
			return nil, missing(i, "active_till")
		case !p.Periods.Given():
			return nil, missing(i, "timeperiods")
		}
		if err := p.apply(i, &ms[i]); err != nil {
			return nil, err
		}
	}
	var ids []uint64
	_, err := w.ed.Edit(ctx, func(e *catalog.Edit) (err error) {
		if err := w.permitted(ctx, c, maintenancesWritable(ms, nil)); err != nil {
			return err
		}
		ids, err = e.CreateMaintenances(ms)
		return err
	})
	if err != nil {
		return nil, maintenanceError(err)
	}
	return idResult("maintenanceids", ids), nil
}

// permitted checks ok for the caller on the current snapshot.
func (w *configWriter) permitted(ctx context.Context, c *call, ok permits) error {
	a, err := w.s.access(ctx, c)
	if err != nil {
		return err
	}
	if !a.all() && !ok(w.cat.Snapshot(), a) {
		return errNoPermissions
	}
	return nil
}

func (w *configWriter) maintenanceUpdate(ctx context.Context, c *call) (any, error) {
	var ps []maintenanceParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ids := make([]uint64, len(ps))
	for i := range ps {
		if !ps[i].MaintenanceID.Set {
			return nil, missing(i, "maintenanceid")
		}
		ids[i] = ps[i].MaintenanceID.Value
	}
	_, err := w.ed.Edit(ctx, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		ms := make([]catalog.Maintenance, len(ps))
		for i := range ps {
			cur := snap.Maintenance(ids[i])
			if cur == nil {
				return errNoPermissions
			}
			ms[i] = *cur
			if err := ps[i].apply(i, &ms[i]); err != nil {
				return err
			}
		}
		if err := w.permitted(ctx, c, maintenancesWritable(ms, ids)); err != nil {
			return err
		}
		return e.UpdateMaintenances(ms)
	})
	if err != nil {
		return nil, maintenanceError(err)
	}
	return idResult("maintenanceids", ids), nil
}

func (w *configWriter) maintenanceDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	_, err = w.ed.Edit(ctx, func(e *catalog.Edit) error {
		if err := w.permitted(ctx, c, maintenancesWritable(nil, ids)); err != nil {
			return err
		}
		return e.DeleteMaintenances(ids)
	})
	if err != nil {
		return nil, maintenanceError(err)
	}
	return idResult("maintenanceids", ids), nil
}
