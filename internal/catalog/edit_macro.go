package catalog

import (
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// Zabbix's field lengths (hostmacro, globalmacro).
const (
	maxMacroValueLen = 2048
	maxMacroDescLen  = 65535
)

// MacroFields are the fields of a new macro. HostID 0 makes a global
// macro; otherwise it names a host or a template.
type MacroFields struct {
	HostID      uint64
	Macro       string
	Value       string
	Type        int // usermacro.Text or usermacro.Secret
	Description string
}

// MacroUpdate changes the given fields of a macro.
type MacroUpdate struct {
	ID          uint64
	Macro       *string
	Value       *string
	Type        *int
	Description *string
}

// macros returns the Edit's macro overlay, copied from the old
// snapshot on first use: macros are few next to items, so a copy per
// Edit that touches them is cheap and keeps the snapshot's set simple.
func (e *Edit) macros() *macroState {
	if e.mst == nil {
		e.mst = e.old.macroSet().state()
	}
	return e.mst
}

// ownerName names a host or template for errors, as Zabbix 6.0's
// errors name them: a host by its technical name, a template by its
// visible one; "" if neither exists.
func (e *Edit) ownerName(id uint64) string {
	if h := e.host(id); h != nil {
		if h.IsTemplate {
			return h.Name
		}
		return h.Host
	}
	return ""
}

// checkMacro validates one macro's fields, naming them under p.
func checkMacro(m *Macro, p string, el *errList) bool {
	n := len(el.errs)
	if _, err := usermacro.CheckDefinition(m.Macro); err != nil {
		el.add(p+".macro", err)
	}
	if utf8.RuneCountInString(m.Value) > maxMacroValueLen {
		el.addf(p+".value", "longer than %d characters", maxMacroValueLen)
	}
	if utf8.RuneCountInString(m.Description) > maxMacroDescLen {
		el.addf(p+".description", "longer than %d characters", maxMacroDescLen)
	}
	if len(el.errs) == n {
		if err := m.setDef(m.Type); err != nil {
			el.add(p+".macro", err)
		}
	}
	return len(el.errs) == n
}

// macroConflicts reports macros defined twice on one owner, among the
// state's macros, naming the later one.
func (e *Edit) macroConflicts(ids []uint64, field string, el *errList) {
	st := e.macros()
	taken := map[uint64]map[string]uint64{}
	for _, m := range st.macros {
		if taken[m.HostID] == nil {
			taken[m.HostID] = map[string]uint64{}
		}
		if !slices.Contains(ids, m.ID) {
			taken[m.HostID][m.def.Ref.Key()] = m.ID
		}
	}
	for i, id := range ids {
		m := st.macros[id]
		k := m.def.Ref.Key()
		if other, dup := taken[m.HostID][k]; dup && other != id {
			el.add(field+"["+strconv.Itoa(i)+"].macro", &ConflictError{Kind: MacroExists, Host: e.ownerName(m.HostID), Name: m.Macro})
			continue
		}
		taken[m.HostID][k] = id
	}
}

// CreateMacros creates macros: global ones (HostID 0) and those of hosts
// and templates. A macro already defined on its owner (in any spelling
// of its context) is a MacroExists conflict.
func (e *Edit) CreateMacros(ms []MacroFields) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	st := e.macros()
	rows := make([]Macro, len(ms))
	for i, f := range ms {
		p := "macros[" + strconv.Itoa(i) + "]"
		if f.HostID != 0 && e.ownerName(f.HostID) == "" {
			el.add(p+".hostid", notFound("host or template", f.HostID))
			continue
		}
		t, err := usermacro.CheckType(f.Type)
		if err != nil {
			el.add(p+".type", err)
			continue
		}
		rows[i] = Macro{HostID: f.HostID, Macro: f.Macro, Value: f.Value, Type: t, Description: f.Description}
		checkMacro(&rows[i], p, &el)
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	// Placeholder IDs above any SQLite ID let the conflict check see the
	// batch; the real IDs replace them once inserted.
	ids := make([]uint64, len(rows))
	for i := range rows {
		ids[i] = placeholderIface + uint64(i)
		rows[i].ID = ids[i]
		st.macros[ids[i]] = rows[i]
	}
	e.macroConflicts(ids, "macros", &el)
	for _, id := range ids {
		delete(st.macros, id)
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	for i := range rows {
		m := &rows[i]
		id, err := e.exec("INSERT INTO usermacros (owner_id, macro, value, type, description) VALUES (?, ?, ?, ?, ?)",
			m.HostID, m.Macro, m.Value, int(m.Type), m.Description)
		if err != nil {
			// The value is not in the message: it may be secret.
			return nil, e.fail(fmt.Errorf("cannot insert macro %s: %w", m.Macro, err))
		}
		m.ID, ids[i] = id, id
		st.macros[id] = *m
	}
	e.res.MacrosCreated += len(rows)
	return ids, nil
}

// UpdateMacros changes macros' fields. A macro keeps its owner; changing
// a secret macro's type to text without a value keeps the value, as
// Zabbix does.
func (e *Edit) UpdateMacros(ups []MacroUpdate) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	st := e.macros()
	ids := make([]uint64, len(ups))
	next := make([]Macro, len(ups))
	for i, u := range ups {
		p := "macros[" + strconv.Itoa(i) + "]"
		ids[i] = u.ID
		m, ok := st.macros[u.ID]
		if !ok {
			el.add(p, notFound("macro", u.ID))
			continue
		}
		setp(&m.Macro, u.Macro)
		setp(&m.Value, u.Value)
		setp(&m.Description, u.Description)
		if u.Type != nil {
			t, err := usermacro.CheckType(*u.Type)
			if err != nil {
				el.add(p+".type", err)
				continue
			}
			m.Type = t
		}
		if checkMacro(&m, p, &el) {
			next[i] = m
		}
	}
	dupIDs("macros", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	old := make([]Macro, len(ups))
	for i := range next {
		old[i] = st.macros[ids[i]]
		st.macros[ids[i]] = next[i]
	}
	e.macroConflicts(ids, "macros", &el)
	if err := el.err(); err != nil {
		for i := range old {
			st.macros[ids[i]] = old[i]
		}
		return err
	}
	for i := range next {
		m := &next[i]
		if _, err := e.exec("UPDATE usermacros SET macro = ?, value = ?, type = ?, description = ? WHERE id = ?",
			m.Macro, m.Value, int(m.Type), m.Description, m.ID); err != nil {
			return e.fail(fmt.Errorf("cannot update macro %s: %w", m.Macro, err))
		}
	}
	e.res.MacrosUpdated += len(ups)
	return nil
}

// DeleteMacros deletes macros by ID.
func (e *Edit) DeleteMacros(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	st := e.macros()
	for i, id := range ids {
		if _, ok := st.macros[id]; !ok {
			el.add("macros["+strconv.Itoa(i)+"]", notFound("macro", id))
		}
	}
	dupIDs("macros", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := e.exec("DELETE FROM usermacros WHERE id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete macro %d: %w", id, err))
		}
		delete(st.macros, id)
	}
	e.res.MacrosDeleted += len(ids)
	return nil
}

// SetMacros makes the macros of a host or template (0: global) equal
// to ms: a macro of the same name and context keeps its ID and takes
// the new value, type and description; the others are deleted or
// created. host.update's "macros" and the import use it. It reports
// whether anything changed.
func (e *Edit) SetMacros(owner uint64, ms []MacroFields, field string) (bool, error) {
	if e.err != nil {
		return false, e.err
	}
	st := e.macros()
	cur := map[string]Macro{}
	for _, m := range st.macros {
		if m.HostID == owner {
			cur[m.def.Ref.Key()] = m
		}
	}
	var (
		el      errList
		creates []MacroFields
		ups     []MacroUpdate
		seen    = map[string]int{}
	)
	for i, f := range ms {
		p := field + "[" + strconv.Itoa(i) + "]"
		r, err := usermacro.CheckDefinition(f.Macro)
		if err != nil {
			el.add(p+".macro", err)
			continue
		}
		k := r.Key()
		if first, dup := seen[k]; dup {
			el.add(p+".macro", fmt.Errorf("%w (first at %s[%d])", &ConflictError{Kind: MacroExists, Host: e.ownerName(owner), Name: f.Macro}, field, first))
			continue
		}
		seen[k] = i
		f.HostID = owner
		m, ok := cur[k]
		if !ok {
			creates = append(creates, f)
			continue
		}
		delete(cur, k)
		if m.Macro != f.Macro || m.Value != f.Value || int(m.Type) != f.Type || m.Description != f.Description {
			ups = append(ups, MacroUpdate{ID: m.ID, Macro: &f.Macro, Value: &f.Value, Type: &f.Type, Description: &f.Description})
		}
	}
	if err := el.err(); err != nil {
		return false, err
	}
	var del []uint64
	for _, m := range cur {
		del = append(del, m.ID)
	}
	slices.Sort(del)
	if len(del) > 0 {
		if err := e.DeleteMacros(del); err != nil {
			return false, err
		}
	}
	if len(ups) > 0 {
		if err := e.UpdateMacros(ups); err != nil {
			return false, prefixField(err, field)
		}
	}
	if len(creates) > 0 {
		if _, err := e.CreateMacros(creates); err != nil {
			return false, prefixField(err, field)
		}
	}
	return len(del)+len(ups)+len(creates) > 0, nil
}

// prefixField renames "macros[i]" fields of a batch error to field[i];
// the index is the batch's, which is good enough to find the macro.
func prefixField(err error, field string) error {
	if fe, ok := err.(*FieldError); ok && field != "macros" && len(fe.Field) > len("macros") {
		return &FieldError{Field: field + fe.Field[len("macros"):], Err: fe.Err}
	}
	return err
}

// dropOwner forgets the macros and links of a deleted host or template
// (the rows are deleted by the caller).
func (e *Edit) dropOwner(id uint64) {
	if len(e.old.Macros(id)) == 0 && len(e.old.LinkedTemplates(id)) == 0 && e.mst == nil {
		return
	}
	st := e.macros()
	for mid, m := range st.macros {
		if m.HostID == id {
			delete(st.macros, mid)
		}
	}
	delete(st.links, id)
}
