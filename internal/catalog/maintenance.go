package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// maintenanceSchema holds maintenance periods (schema version 10, with
// the macros): one row per maintenance, its fields as JSON, as
// item_http holds HTTP requests: they are read and written whole.
const maintenanceSchema = `
CREATE TABLE IF NOT EXISTS maintenances (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	name   TEXT NOT NULL UNIQUE,
	config TEXT NOT NULL
);
`

// Maintenance is Zabbix's maintenance in the reduced form Peregrine
// supports: with data collection (type 0) only, periods one time (0),
// daily (2) and weekly (3). Problems of its hosts (and the hosts of its
// groups) raised while a period is active are suppressed; see package
// maintenance.
type Maintenance struct {
	ID          uint64              `json:"-"`
	Name        string              `json:"-"`
	Description string              `json:"description"`
	ActiveSince int64               `json:"active_since"`
	ActiveTill  int64               `json:"active_till"`
	TagsEval    uint8               `json:"tags_evaltype"` // 0 and/or, 2 or
	HostIDs     []uint64            `json:"hostids"`
	GroupIDs    []uint64            `json:"groupids"`
	Periods     []MaintenancePeriod `json:"timeperiods"`
	Tags        []MaintenanceTag    `json:"tags,omitempty"`
}

// MaintenancePeriod is a Zabbix time period.
type MaintenancePeriod struct {
	Type      uint8 `json:"timeperiod_type"` // 0 one time, 2 daily, 3 weekly
	StartDate int64 `json:"start_date"`      // one time: when it starts
	StartTime int64 `json:"start_time"`      // daily, weekly: seconds after midnight
	Period    int64 `json:"period"`          // seconds
	Every     int   `json:"every"`           // daily: every N days; weekly: every N weeks
	DayOfWeek uint8 `json:"dayofweek"`       // weekly: bit 0 Monday .. bit 6 Sunday
}

// MaintenanceTag is a problem tag condition: operator 0 equals, 2
// contains (Zabbix's numbers).
type MaintenanceTag struct {
	Tag      string `json:"tag"`
	Operator uint8  `json:"operator"`
	Value    string `json:"value"`
}

// Maintenance period types, Zabbix's numbers.
const (
	PeriodOnce    = 0
	PeriodDaily   = 2
	PeriodWeekly  = 3
	PeriodMonthly = 4
)

// Maintenances returns the maintenances ascending by ID; shared and
// read-only.
func (s *Snapshot) Maintenances() []Maintenance { return s.maints }

// Maintenance returns the maintenance with the ID, or nil.
func (s *Snapshot) Maintenance(id uint64) *Maintenance {
	i, ok := slices.BinarySearchFunc(s.maints, id, func(m Maintenance, id uint64) int { return cmp.Compare(m.ID, id) })
	if !ok {
		return nil
	}
	return &s.maints[i]
}

func loadMaintenances(ctx context.Context, tx *sql.Tx) ([]Maintenance, error) {
	var out []Maintenance
	err := queryEach(ctx, tx, "SELECT id, name, config FROM maintenances ORDER BY id", func(r *sql.Rows) error {
		var m Maintenance
		var config string
		if err := r.Scan(&m.ID, &m.Name, &config); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(config), &m); err != nil {
			return fmt.Errorf("%w: maintenance %d: %v", ErrCorrupt, m.ID, err)
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load maintenances: %w", err)
	}
	return out, nil
}

// checkMaintenance validates m with Zabbix's rules (and Peregrine's
// reductions), naming fields under p.
func (e *Edit) checkMaintenance(m *Maintenance, p string, el *errList) {
	if m.Name == "" {
		el.addf(p+".name", "cannot be empty")
	} else if err := checkText(m.Name, 128); err != nil {
		el.add(p+".name", err)
	}
	if m.ActiveTill <= m.ActiveSince {
		el.addf(p+".active_till", "must be after active_since")
	}
	if m.TagsEval != 0 && m.TagsEval != 2 {
		el.addf(p+".tags_evaltype", "must be 0 (and/or) or 2 (or)")
	}
	if len(m.HostIDs)+len(m.GroupIDs) == 0 {
		el.add(p, ErrMaintenanceEmpty)
	}
	for i, h := range m.HostIDs {
		if e.host(h) == nil {
			el.add(p+".hostids["+strconv.Itoa(i)+"]", notFound("host", h))
		}
	}
	for i, g := range m.GroupIDs {
		if e.group(g) == nil {
			el.add(p+".groupids["+strconv.Itoa(i)+"]", notFound("host group", g))
		}
	}
	if len(m.Periods) == 0 {
		el.addf(p+".timeperiods", "at least one time period is required")
	}
	for i := range m.Periods {
		tp := &m.Periods[i]
		f := p + ".timeperiods[" + strconv.Itoa(i) + "]"
		switch tp.Type {
		case PeriodOnce, PeriodDaily, PeriodWeekly:
		case PeriodMonthly:
			el.addf(f+".timeperiod_type", "monthly periods (4) are not supported by Peregrine: use one time (0), daily (2) or weekly (3) periods")
			continue
		default:
			el.addf(f+".timeperiod_type", "must be 0 (one time), 2 (daily) or 3 (weekly)")
			continue
		}
		// Zabbix rounds down to minutes and needs at least 5 of them.
		tp.Period -= tp.Period % 60
		tp.StartTime -= tp.StartTime % 60
		tp.StartDate -= tp.StartDate % 60
		if tp.Period < 300 {
			el.addf(f+".period", "must be at least 300 seconds")
		}
		if tp.Type != PeriodOnce {
			if tp.Every < 1 {
				el.addf(f+".every", "must be 1 or more")
			}
			if tp.StartTime < 0 || tp.StartTime >= 86400 {
				el.addf(f+".start_time", "must be 0..86399 seconds after midnight")
			}
		}
		if tp.Type == PeriodWeekly && (tp.DayOfWeek == 0 || tp.DayOfWeek > 127) {
			el.addf(f+".dayofweek", "must be a bitmask of days 1 (Monday) .. 64 (Sunday)")
		}
	}
	for i, tg := range m.Tags {
		f := p + ".tags[" + strconv.Itoa(i) + "]"
		if tg.Tag == "" {
			el.addf(f+".tag", "cannot be empty")
		}
		if tg.Operator != 0 && tg.Operator != 2 {
			el.addf(f+".operator", "must be 0 (equals) or 2 (contains)")
		}
	}
	if utf8.RuneCountInString(m.Description) > 65535 {
		el.addf(p+".description", "is too long")
	}
	m.ActiveSince -= m.ActiveSince % 60
	m.ActiveTill -= m.ActiveTill % 60
	slices.Sort(m.HostIDs)
	m.HostIDs = slices.Compact(m.HostIDs)
	slices.Sort(m.GroupIDs)
	m.GroupIDs = slices.Compact(m.GroupIDs)
}

func (e *Edit) maints() []Maintenance {
	if e.mnt == nil {
		e.mnt = slices.Clone(e.old.maints)
		if e.mnt == nil {
			e.mnt = []Maintenance{}
		}
	}
	return e.mnt
}

func (e *Edit) maintIndex(id uint64) int {
	return slices.IndexFunc(e.maints(), func(m Maintenance) bool { return m.ID == id })
}

func (e *Edit) maintNameTaken(name string, except uint64) bool {
	return slices.ContainsFunc(e.maints(), func(m Maintenance) bool { return m.Name == name && m.ID != except })
}

// CreateMaintenances creates maintenances; ActiveSince, ActiveTill and
// the periods' times are rounded down to minutes, as Zabbix does.
func (e *Edit) CreateMaintenances(ms []Maintenance) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	for i := range ms {
		p := "maintenances[" + strconv.Itoa(i) + "]"
		e.checkMaintenance(&ms[i], p, &el)
		if e.maintNameTaken(ms[i].Name, 0) || slices.ContainsFunc(ms[:i], func(o Maintenance) bool { return o.Name == ms[i].Name }) {
			el.add(p+".name", &ConflictError{Kind: MaintenanceExists, Name: ms[i].Name})
		}
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	ids := make([]uint64, len(ms))
	for i := range ms {
		m := ms[i]
		id, err := e.exec("INSERT INTO maintenances (name, config) VALUES (?, ?)", m.Name, encodeMaintenance(&m))
		if err != nil {
			return nil, e.fail(fmt.Errorf("cannot insert maintenance %q: %w", m.Name, err))
		}
		m.ID, ids[i] = id, id
		e.mnt = append(e.maints(), m)
	}
	return ids, nil
}

// UpdateMaintenances replaces maintenances by ID (the caller merges the
// fields not given with the current ones).
func (e *Edit) UpdateMaintenances(ms []Maintenance) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	ids := make([]uint64, len(ms))
	for i := range ms {
		p := "maintenances[" + strconv.Itoa(i) + "]"
		ids[i] = ms[i].ID
		if e.maintIndex(ms[i].ID) < 0 {
			el.add(p, notFound("maintenance", ms[i].ID))
			continue
		}
		e.checkMaintenance(&ms[i], p, &el)
		if e.maintNameTaken(ms[i].Name, ms[i].ID) {
			el.add(p+".name", &ConflictError{Kind: MaintenanceExists, Name: ms[i].Name})
		}
	}
	dupIDs("maintenances", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	for i := range ms {
		m := ms[i]
		if _, err := e.exec("UPDATE maintenances SET name = ?, config = ? WHERE id = ?", m.Name, encodeMaintenance(&m), m.ID); err != nil {
			return e.fail(fmt.Errorf("cannot update maintenance %q: %w", m.Name, err))
		}
		e.maints()[e.maintIndex(m.ID)] = m
	}
	return nil
}

// DeleteMaintenances deletes maintenances by ID.
func (e *Edit) DeleteMaintenances(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		if e.maintIndex(id) < 0 {
			el.add("maintenances["+strconv.Itoa(i)+"]", notFound("maintenance", id))
		}
	}
	dupIDs("maintenances", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := e.exec("DELETE FROM maintenances WHERE id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete maintenance %d: %w", id, err))
		}
		e.mnt = slices.Delete(e.maints(), e.maintIndex(id), e.maintIndex(id)+1)
	}
	return nil
}

func encodeMaintenance(m *Maintenance) string {
	b, err := json.Marshal(m)
	if err != nil {
		panic("BUG: Maintenance does not marshal: " + err.Error())
	}
	return string(b)
}
