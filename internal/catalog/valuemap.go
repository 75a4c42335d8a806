package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ValueMap is a host's value map (Zabbix 6.0): a name, unique on its
// host, and mappings from values to their meaning ("1" → "Up"). Items
// of the host name one by ID (Item.ValueMapID); readers show a value as
// "Up (1)". It MUST NOT be modified.
type ValueMap struct {
	ID       uint64
	HostID   uint64
	Name     string
	Mappings []Mapping
	// UUID is the uuid of a template's value map (what an export
	// matches maps by); "" for hosts' maps, as in Zabbix 6.0.
	UUID string
}

// MappingType is how a Mapping matches, with Zabbix 6.0's numbers.
type MappingType uint8

// Mapping types. Zabbix tries the mappings in order and the first match
// wins, except that MapDefault applies only when no other matches.
const (
	MapEqual          MappingType = 0 // the value equals Value (as text)
	MapGreaterOrEqual MappingType = 1 // a number ≥ Value
	MapLessOrEqual    MappingType = 2 // a number ≤ Value
	MapRange          MappingType = 3 // a number in one of Value's ranges ("1-10,20,-5--1")
	MapRegexp         MappingType = 4 // the value matches the regular expression Value
	MapDefault        MappingType = 5 // no other mapping matched; Value is empty
)

// Mapping is one line of a value map.
type Mapping struct {
	Type     MappingType
	Value    string
	NewValue string
}

// Limits from the Zabbix 6.0 database schema (valuemap.name,
// valuemap_mapping.value and newvalue).
const (
	maxValueMapNameLen = 64
	maxMappingValueLen = 64
	maxNewValueLen     = 64
)

// valueMapSchema holds value maps (schema version 10): one row per map,
// its mappings as a JSON array in order ([{"type":0,"value":"1",
// "newvalue":"Up"}]: read and written whole, with their map), and the
// items' valuemap_id (0 for none, no foreign key, as interface_id, so
// that the Go side clears it when a map is deleted). IF NOT EXISTS: the
// migration tests of older versions downgrade other tables and leave
// this one.
const valueMapSchema = `
CREATE TABLE IF NOT EXISTS valuemaps (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	host_id  INTEGER NOT NULL REFERENCES hosts (id),
	name     TEXT NOT NULL,
	mappings TEXT NOT NULL,
	UNIQUE (host_id, name)
);
ALTER TABLE items ADD COLUMN valuemap_id INTEGER NOT NULL DEFAULT 0;
`

// ValueMap returns the value map with the ID, or nil.
func (s *Snapshot) ValueMap(id uint64) *ValueMap {
	if i, ok := s.vmByID[id]; ok {
		return &s.valueMaps[i]
	}
	return nil
}

// ValueMaps returns every value map, sorted by ID. The slice is shared
// and read-only.
func (s *Snapshot) ValueMaps() []ValueMap { return s.valueMaps }

// setValueMaps installs the value maps once the hosts are final,
// dropping those of hosts that no longer exist.
func (s *Snapshot) setValueMaps(vms []ValueMap) {
	s.valueMaps = make([]ValueMap, 0, len(vms))
	for _, m := range vms {
		if s.HostOrTemplate(m.HostID) != nil {
			s.valueMaps = append(s.valueMaps, m)
		}
	}
	slices.SortFunc(s.valueMaps, func(a, b ValueMap) int { return cmp.Compare(a.ID, b.ID) })
	s.vmByID = make(map[uint64]int, len(s.valueMaps))
	for i := range s.valueMaps {
		s.vmByID[s.valueMaps[i].ID] = i
	}
}

// Map returns what the map makes of value, with Zabbix 6.0's rules: the
// mappings are tried in order, the first that matches wins; a default
// mapping applies only when none does. ok is false when nothing matched
// (the value is shown as it is).
func (m *ValueMap) Map(value string) (string, bool) {
	def, hasDef := "", false
	num, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	isNum := err == nil
	for _, mp := range m.Mappings {
		switch mp.Type {
		case MapEqual:
			if mp.Value == value || isNum && numEqual(mp.Value, num) {
				return mp.NewValue, true
			}
		case MapGreaterOrEqual, MapLessOrEqual:
			b, err := strconv.ParseFloat(mp.Value, 64)
			if isNum && err == nil && (mp.Type == MapGreaterOrEqual && num >= b || mp.Type == MapLessOrEqual && num <= b) {
				return mp.NewValue, true
			}
		case MapRange:
			if isNum && inRanges(mp.Value, num) {
				return mp.NewValue, true
			}
		case MapRegexp:
			if re, err := regexp.Compile(mp.Value); err == nil && re.MatchString(value) {
				return mp.NewValue, true
			}
		case MapDefault:
			def, hasDef = mp.NewValue, true
		}
	}
	return def, hasDef
}

// numEqual compares a numeric value with an exact mapping's value as
// numbers, as Zabbix does for numeric items ("1.0" maps like "1").
func numEqual(v string, n float64) bool {
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f == n
}

// inRanges reports whether n is in one of the comma-separated ranges of
// s: "10", "1-10", "-5--1" (negative bounds).
func inRanges(s string, n float64) bool {
	for _, r := range strings.Split(s, ",") {
		lo, hi, ok := parseRange(strings.TrimSpace(r))
		if ok && n >= lo && n <= hi {
			return true
		}
	}
	return false
}

func parseRange(r string) (lo, hi float64, ok bool) {
	if r == "" {
		return 0, 0, false
	}
	// The separator is a '-' that is not a sign: not at the start and
	// not right after another '-'.
	for i := 1; i < len(r); i++ {
		if r[i] == '-' && r[i-1] != '-' && r[i-1] != 'e' && r[i-1] != 'E' {
			// Zabbix allows spaces around the separator ("0 - 11.24",
			// in the official templates).
			a, err1 := strconv.ParseFloat(strings.TrimSpace(r[:i]), 64)
			b, err2 := strconv.ParseFloat(strings.TrimSpace(r[i+1:]), 64)
			return a, b, err1 == nil && err2 == nil && a <= b
		}
	}
	v, err := strconv.ParseFloat(r, 64)
	return v, v, err == nil
}

// checkMappings validates a map's mappings with Zabbix 6.0's rules, as
// errors under field ("valuemaps[0].mappings[2].value").
func checkMappings(field string, ms []Mapping, el *errList) {
	if len(ms) == 0 {
		el.addf(field, "a value map needs at least one mapping")
		return
	}
	seen := map[[2]string]bool{}
	defaults := 0
	for i, m := range ms {
		f := field + "[" + strconv.Itoa(i) + "]"
		switch {
		case m.Type > MapDefault:
			el.addf(f+".type", "value must be one of 0 (equal), 1 (greater or equal), 2 (less or equal), 3 (in range), 4 (regular expression), 5 (default)")
			continue
		case utf8.RuneCountInString(m.Value) > maxMappingValueLen:
			el.addf(f+".value", "value is too long (at most %d characters)", maxMappingValueLen)
		case m.NewValue == "":
			el.addf(f+".newvalue", "cannot be empty")
		case utf8.RuneCountInString(m.NewValue) > maxNewValueLen:
			el.addf(f+".newvalue", "value is too long (at most %d characters)", maxNewValueLen)
		}
		switch m.Type {
		case MapGreaterOrEqual, MapLessOrEqual:
			if _, err := strconv.ParseFloat(m.Value, 64); err != nil {
				el.addf(f+".value", "a number is expected, not %q", m.Value)
			}
		case MapRange:
			for _, r := range strings.Split(m.Value, ",") {
				if _, _, ok := parseRange(strings.TrimSpace(r)); !ok {
					el.addf(f+".value", "a range or list of ranges (\"1-10,20\") is expected, not %q", m.Value)
					break
				}
			}
		case MapRegexp:
			if _, err := regexp.Compile(m.Value); err != nil || m.Value == "" {
				el.addf(f+".value", "a regular expression is expected: %q", m.Value)
			}
		case MapDefault:
			if defaults++; defaults > 1 {
				el.addf(f+".type", "a value map has at most one default mapping")
			}
			if m.Value != "" {
				el.addf(f+".value", "a default mapping has no value")
			}
		}
		k := [2]string{strconv.Itoa(int(m.Type)), m.Value}
		if m.Type != MapDefault && seen[k] {
			el.addf(f+".value", "mapping for %q is listed twice", m.Value)
		}
		seen[k] = true
	}
}

func checkValueMapName(field, name string, el *errList) {
	switch {
	case strings.TrimSpace(name) == "":
		el.addf(field, "cannot be empty")
	case utf8.RuneCountInString(name) > maxValueMapNameLen:
		el.addf(field, "value is too long (at most %d characters)", maxValueMapNameLen)
	}
}

type mappingJSON struct {
	Type     MappingType `json:"type"`
	Value    string      `json:"value"`
	NewValue string      `json:"newvalue"`
}

func encodeMappings(ms []Mapping) string {
	out := make([]mappingJSON, len(ms))
	for i, m := range ms {
		out[i] = mappingJSON(m)
	}
	b, _ := json.Marshal(out) // strings and small ints only: cannot fail
	return string(b)
}

func decodeMappings(s string) ([]Mapping, error) {
	var in []mappingJSON
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, err
	}
	out := make([]Mapping, len(in))
	for i, m := range in {
		if m.Type > MapDefault {
			return nil, fmt.Errorf("mapping %d has type %d", i, m.Type)
		}
		out[i] = Mapping(m)
	}
	return out, nil
}

// loadValueMaps reads every value map.
func loadValueMaps(ctx context.Context, tx *sql.Tx) ([]ValueMap, error) {
	var out []ValueMap
	err := queryEach(ctx, tx, "SELECT id, host_id, name, mappings, uuid FROM valuemaps", func(r *sql.Rows) error {
		var m ValueMap
		var js string
		if err := r.Scan(&m.ID, &m.HostID, &m.Name, &js, &m.UUID); err != nil {
			return err
		}
		var err error
		if m.Mappings, err = decodeMappings(js); err != nil {
			return fmt.Errorf("%w: value map %d: %v", ErrCorrupt, m.ID, err)
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load value maps: %w", err)
	}
	return out, nil
}

// ValueMapUpdate changes the fields of value map ID that are set.
type ValueMapUpdate struct {
	ID       uint64
	Name     *string
	Mappings *[]Mapping
}

// valueMap returns the current value map with the ID (nil if none, or
// its host is gone).
func (e *Edit) valueMap(id uint64) *ValueMap {
	m, ok := e.valueMaps[id]
	if !ok {
		m = e.old.ValueMap(id)
	}
	if m == nil || e.host(m.HostID) == nil {
		return nil
	}
	return m
}

// valueMapByName returns the ID of host's value map named name, or 0.
func (e *Edit) valueMapByName(host uint64, name string) uint64 {
	for id, m := range e.valueMaps {
		if m != nil && m.HostID == host && m.Name == name {
			return id
		}
	}
	for i := range e.old.valueMaps {
		m := &e.old.valueMaps[i]
		if _, ok := e.valueMaps[m.ID]; ok {
			continue // changed or deleted in this Edit: seen above
		}
		if m.HostID == host && m.Name == name && e.host(host) != nil {
			return m.ID
		}
	}
	return 0
}

// CreateValueMaps creates value maps and returns their IDs in order.
// Names are unique per host.
func (e *Edit) CreateValueMaps(maps []ValueMap) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	batch := map[string]bool{}
	for i, m := range maps {
		p := "valuemaps[" + strconv.Itoa(i) + "]"
		if e.host(m.HostID) == nil {
			el.add(p+".hostid", notFound("host", m.HostID))
			continue
		}
		checkValueMapName(p+".name", m.Name, &el)
		checkMappings(p+".mappings", m.Mappings, &el)
		k := strconv.FormatUint(m.HostID, 10) + "\x00" + m.Name
		if batch[k] || e.valueMapByName(m.HostID, m.Name) != 0 {
			el.addf(p+".name", "value map %q already exists on host %q", m.Name, e.host(m.HostID).Host)
		}
		batch[k] = true
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	initMap(&e.valueMaps)
	ids := make([]uint64, len(maps))
	for i, m := range maps {
		m.Mappings = slices.Clone(m.Mappings)
		m.UUID = ""
		if e.host(m.HostID).IsTemplate {
			m.UUID = cmp.Or(strings.Clone(maps[i].UUID), NewUUID())
		}
		id, err := e.exec("INSERT INTO valuemaps (host_id, name, mappings, uuid) VALUES (?, ?, ?, ?)", m.HostID, m.Name, encodeMappings(m.Mappings), m.UUID)
		if err != nil {
			return nil, e.fail(fmt.Errorf("cannot create value map %q on host %d: %w", m.Name, m.HostID, err))
		}
		m.ID = id
		e.valueMaps[id] = &m
		e.newValueMaps = append(e.newValueMaps, id)
		ids[i] = id
	}
	e.res.ValueMapsCreated += len(maps)
	return ids, nil
}

// UpdateValueMaps changes value maps by ID.
func (e *Edit) UpdateValueMaps(ups []ValueMapUpdate) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	next := make([]ValueMap, len(ups))
	ids := make([]uint64, len(ups))
	for i, u := range ups {
		p := "valuemaps[" + strconv.Itoa(i) + "]"
		ids[i] = u.ID
		cur := e.valueMap(u.ID)
		if cur == nil {
			el.add(p+".valuemapid", notFound("value map", u.ID))
			continue
		}
		n := *cur
		if u.Name != nil {
			n.Name = *u.Name
			checkValueMapName(p+".name", n.Name, &el)
			if other := e.valueMapByName(n.HostID, n.Name); other != 0 && other != n.ID {
				el.addf(p+".name", "value map %q already exists on host %q", n.Name, e.host(n.HostID).Host)
			}
		}
		if u.Mappings != nil {
			n.Mappings = slices.Clone(*u.Mappings)
			checkMappings(p+".mappings", n.Mappings, &el)
		}
		next[i] = n
	}
	dupIDs("valuemaps", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	initMap(&e.valueMaps)
	for i := range next {
		n := next[i]
		if _, err := e.exec("UPDATE valuemaps SET name = ?, mappings = ? WHERE id = ?", n.Name, encodeMappings(n.Mappings), n.ID); err != nil {
			return e.fail(fmt.Errorf("cannot update value map %d: %w", n.ID, err))
		}
		e.valueMaps[n.ID] = &n
	}
	e.res.ValueMapsUpdated += len(ups)
	return nil
}

// DeleteValueMaps deletes value maps by ID; the items that used one are
// left without a value map, as in Zabbix.
func (e *Edit) DeleteValueMaps(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		if e.valueMap(id) == nil {
			el.add("valuemaps["+strconv.Itoa(i)+"]", notFound("value map", id))
		}
	}
	dupIDs("valuemaps", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	initMap(&e.valueMaps)
	initMap(&e.items)
	for _, id := range ids {
		m := e.valueMap(id)
		if _, err := e.exec("DELETE FROM valuemaps WHERE id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete value map %d: %w", id, err))
		}
		if e.host(m.HostID).IsTemplate {
			// Its copies name it too, on any host.
			if err := e.clearValueMapRefs([]uint64{id}, 0); err != nil {
				return err
			}
			e.valueMaps[id] = nil
			continue
		}
		if _, err := e.exec("UPDATE items SET valuemap_id = 0 WHERE valuemap_id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot clear value map %d from its items: %w", id, err))
		}
		// The overlay follows: the host's items that named the map.
		for _, it := range e.hostItems(m.HostID) {
			if it.ValueMapID == id {
				n := *it
				n.ValueMapID = 0
				e.items[n.ID] = &n
			}
		}
		e.valueMaps[id] = nil
	}
	e.res.ValueMapsDeleted += len(ids)
	return nil
}

// checkItemValueMap reports a value map ID that is not one of the item's
// host's maps.
func (e *Edit) checkItemValueMap(field string, host, id uint64, el *errList) {
	if id == 0 {
		return
	}
	if e.propagating {
		return // a copy names its template's map
	}
	if m := e.valueMap(id); m == nil || m.HostID != host {
		el.addf(field, "value map %d is not a value map of the item's host", id)
	}
}

// buildValueMaps is the value maps after the Edit: old with the overlay
// applied (setValueMaps drops those of deleted hosts).
func (e *Edit) buildValueMaps() []ValueMap {
	if e.valueMaps == nil {
		return e.old.valueMaps
	}
	out := make([]ValueMap, 0, len(e.old.valueMaps)+len(e.newValueMaps))
	for i := range e.old.valueMaps {
		m := &e.old.valueMaps[i]
		if o, ok := e.valueMaps[m.ID]; ok {
			if o != nil {
				out = append(out, *o)
			}
			continue
		}
		out = append(out, *m)
	}
	for _, id := range e.newValueMaps {
		if m := e.valueMaps[id]; m != nil {
			out = append(out, *m)
		}
	}
	return out
}
