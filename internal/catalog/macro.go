package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// macroSchema holds user macros and templates (schema version 10).
//
//   - usermacros: global macros (owner_id 0), host macros and template
//     macros (owner_id the host's or template's ID), with Zabbix's
//     fields. Uniqueness per owner is by the macro's canonical spelling
//     ({$A:x} and {$A:"x"} are one macro), which only the Go side
//     computes, so it checks it.
//   - templates: the templates of versions 10 to 19, which kept only
//     names, macros and links, with IDs above 2^40. Version 20 moved
//     them into hosts (templateSchema) and dropped the table.
//   - template_links: the templates linked to a host or a template, the
//     owner being either.
const macroSchema = `
CREATE TABLE IF NOT EXISTS usermacros (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	owner_id    INTEGER NOT NULL,
	macro       TEXT NOT NULL,
	value       TEXT NOT NULL,
	type        INTEGER NOT NULL,
	description TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS usermacros_owner ON usermacros (owner_id);
CREATE TABLE IF NOT EXISTS templates (
	id   INTEGER PRIMARY KEY AUTOINCREMENT,
	host TEXT NOT NULL UNIQUE,
	name TEXT NOT NULL
);
INSERT INTO sqlite_sequence (name, seq) SELECT 'templates', 1099511627776
	WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'templates');
CREATE TABLE IF NOT EXISTS template_links (
	owner_id    INTEGER NOT NULL,
	template_id INTEGER NOT NULL,
	PRIMARY KEY (owner_id, template_id)
) WITHOUT ROWID;
`

// softHardSchema adds Peregrine's soft and hard states (schema version
// 10, with the macros): the triggers' max_check_attempts (1, Zabbix's
// behaviour, for existing ones) and the items' retry_delay ("" for none:
// a soft trigger's items keep their interval).
const softHardSchema = `
ALTER TABLE triggers ADD COLUMN max_check_attempts INTEGER NOT NULL DEFAULT 1;
ALTER TABLE items ADD COLUMN retry_delay TEXT NOT NULL DEFAULT '';
`

// Macro is a user macro definition: global (HostID 0), of a host or of
// a template (HostID the template's ID), Zabbix's usermacro object.
type Macro struct {
	ID          uint64
	HostID      uint64
	Macro       string // as written when created or updated
	Value       string // secret values too: callers must not show them
	Type        usermacro.Type
	Description string
	def         usermacro.Def
}

// Ref returns the parsed macro name and context.
func (m Macro) Ref() usermacro.Ref { return m.def.Ref }

// macroSet is a snapshot's macros and template links, immutable once
// built.
type macroSet struct {
	byID     map[uint64]*Macro
	byOwner  map[uint64][]*Macro // 0: global; sorted by ID
	links    map[uint64][]uint64 // host or template → linked templates, ascending
	linkedTo map[uint64][]uint64 // template → hosts and templates linking it, ascending
	// scopes holds the resolution scope of every host and template that
	// has macros or templates of its own; the others see global.
	scopes map[uint64]*usermacro.Scope
	global *usermacro.Scope
	// levels holds every owner's definitions (0: global), for scopes
	// built on demand (UserMacrosOfHosts).
	levels map[uint64]*usermacro.Level
}

// macroState is the mutable form of a macroSet, for Edit's overlay and
// loading.
type macroState struct {
	macros map[uint64]Macro
	links  map[uint64][]uint64
}

func (ms *macroSet) state() *macroState {
	st := &macroState{macros: map[uint64]Macro{}, links: map[uint64][]uint64{}}
	if ms == nil {
		return st
	}
	for id, m := range ms.byID {
		st.macros[id] = *m
	}
	for o, l := range ms.links {
		st.links[o] = slices.Clone(l)
	}
	return st
}

// build makes the immutable set. Owners' levels follow Zabbix's order:
// the owner's macros, then its templates level by level, each level in
// ascending template ID order, then global.
func (st *macroState) build() *macroSet {
	ms := &macroSet{
		byID:     make(map[uint64]*Macro, len(st.macros)),
		byOwner:  map[uint64][]*Macro{},
		links:    map[uint64][]uint64{},
		linkedTo: map[uint64][]uint64{},
		scopes:   map[uint64]*usermacro.Scope{},
	}
	for _, m := range st.macros {
		p := new(Macro)
		*p = m
		ms.byID[m.ID] = p
		ms.byOwner[m.HostID] = append(ms.byOwner[m.HostID], p)
	}
	for _, l := range ms.byOwner {
		slices.SortFunc(l, func(a, b *Macro) int { return cmp.Compare(a.ID, b.ID) })
	}
	for o, l := range st.links {
		if len(l) > 0 {
			ms.links[o] = slices.Sorted(slices.Values(l))
			for _, t := range l {
				ms.linkedTo[t] = append(ms.linkedTo[t], o)
			}
		}
	}
	for _, l := range ms.linkedTo {
		slices.Sort(l)
	}
	// One Level per owner, shared by every scope that includes it: the
	// scopes of 100,000 hosts linked to one template hold 100,000
	// pointers to its Level, not 100,000 copies of its macros.
	levels := make(map[uint64]*usermacro.Level, len(ms.byOwner))
	for o := range ms.byOwner {
		levels[o] = usermacro.NewLevel(ms.defs(o))
	}
	global := levels[0]
	ms.global = usermacro.NewScope(global)
	owners := map[uint64]bool{}
	for o := range ms.byOwner {
		owners[o] = true
	}
	for o := range ms.links {
		owners[o] = true
	}
	delete(owners, 0)
	ms.levels = levels
	for o := range owners {
		ms.scopes[o] = ms.scopeOf([]uint64{o})
	}
	return ms
}

// scopeOf chains the levels of owners (in the order given), then of
// their templates depth by depth (each depth in ascending ID, every
// template once), then global.
func (ms *macroSet) scopeOf(owners []uint64) *usermacro.Scope {
	var chain []*usermacro.Level
	seen := map[uint64]bool{}
	level := owners
	for len(level) > 0 {
		var next []uint64
		for _, t := range level {
			if seen[t] {
				continue
			}
			seen[t] = true
			chain = append(chain, ms.levels[t])
			next = append(next, ms.links[t]...)
		}
		slices.Sort(next)
		level = slices.Compact(next)
	}
	chain = append(chain, ms.levels[0])
	return usermacro.NewScope(chain...)
}

func (ms *macroSet) defs(owner uint64) []usermacro.Def {
	l := ms.byOwner[owner]
	if len(l) == 0 {
		return nil
	}
	out := make([]usermacro.Def, len(l))
	for i, m := range l {
		out[i] = m.def
	}
	return out
}

// UserMacros returns the macro scope of a host or template: what
// {$MACRO} means in its items, triggers and event names. Unknown IDs
// (and 0) see the global macros only. It does not allocate.
func (s *Snapshot) UserMacros(hostID uint64) *usermacro.Scope {
	return s.macroSet().scope(hostID)
}

// scope returns the host's scope.
func (ms *macroSet) scope(hostID uint64) *usermacro.Scope {
	if sc := ms.scopes[hostID]; sc != nil {
		return sc
	}
	return ms.global
}

// UserMacrosOfHosts returns the scope of a trigger over several hosts:
// Zabbix resolves the user macros of its expression that are no item
// function's parameters (constants such as the threshold in
// last(/a/k)>{$MAX} or last(/b/k)>{$MAX}) over all of its hosts at
// once: the hosts' own macros (in the order given), then their templates
// depth by depth, then global, the first definition found winning and a
// definition with the macro's context preferred at any depth. A function's
// parameters use its item's host's scope (UserMacros). With one host it
// is UserMacros; with more it allocates the scope.
func (s *Snapshot) UserMacrosOfHosts(hostIDs []uint64) *usermacro.Scope {
	if len(hostIDs) == 1 {
		return s.UserMacros(hostIDs[0])
	}
	ms := s.macroSet()
	if len(hostIDs) == 0 {
		return ms.global
	}
	return ms.scopeOf(hostIDs)
}

var emptyMacroSet = (&macroState{}).build()

func (s *Snapshot) macroSet() *macroSet {
	if s.mcell == nil || s.mcell.ms == nil {
		return emptyMacroSet
	}
	return s.mcell.ms
}

// Macros returns the macros defined on a host or template (0: the
// global macros), sorted by ID. The slice is shared and read-only.
func (s *Snapshot) Macros(ownerID uint64) []*Macro { return s.macroSet().byOwner[ownerID] }

// Macro returns the macro with the ID, or nil.
func (s *Snapshot) Macro(id uint64) *Macro { return s.macroSet().byID[id] }

// AllMacros returns every host and template macro (not the global
// ones), in no particular order.
func (s *Snapshot) AllMacros() []*Macro {
	var out []*Macro
	for o, l := range s.macroSet().byOwner {
		if o != 0 {
			out = append(out, l...)
		}
	}
	return out
}

// LinkedTemplates returns the templates linked directly to a host or
// template, ascending; shared and read-only.
func (s *Snapshot) LinkedTemplates(ownerID uint64) []uint64 { return s.macroSet().links[ownerID] }

// loadMacros reads the macros and template links; isTemplate tells the
// templates' IDs.
func loadMacros(ctx context.Context, tx *sql.Tx, isTemplate func(uint64) bool) (*macroSet, error) {
	st := &macroState{macros: map[uint64]Macro{}, links: map[uint64][]uint64{}}
	err := queryEach(ctx, tx, "SELECT owner_id, template_id FROM template_links", func(r *sql.Rows) error {
		var o, t uint64
		if err := r.Scan(&o, &t); err != nil {
			return err
		}
		if !isTemplate(t) {
			return fmt.Errorf("%w: link to unknown template %d", ErrCorrupt, t)
		}
		st.links[o] = append(st.links[o], t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load template links: %w", err)
	}
	err = queryEach(ctx, tx, "SELECT id, owner_id, macro, value, type, description FROM usermacros", func(r *sql.Rows) error {
		var m Macro
		var typ int
		if err := r.Scan(&m.ID, &m.HostID, &m.Macro, &m.Value, &typ, &m.Description); err != nil {
			return err
		}
		t, err := usermacro.CheckType(typ)
		if err != nil {
			return fmt.Errorf("%w: macro %d: %v", ErrCorrupt, m.ID, err)
		}
		if err := m.setDef(t); err != nil {
			return fmt.Errorf("%w: macro %d: %v", ErrCorrupt, m.ID, err)
		}
		st.macros[m.ID] = m
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load user macros: %w", err)
	}
	return st.build(), nil
}

// setDef parses m.Macro and makes m's definition of type t.
func (m *Macro) setDef(t usermacro.Type) error {
	r, err := usermacro.CheckDefinition(m.Macro)
	if err != nil {
		return err
	}
	m.Type = t
	m.def, err = usermacro.NewDef(r, m.Value, t)
	return err
}

// UserMacros returns the host's macro scope (Snapshot.UserMacros).
func (h *Host) UserMacros() *usermacro.Scope {
	if h.mc == nil || h.mc.ms == nil {
		return emptyMacroSet.scope(h.ID)
	}
	return h.mc.ms.scope(h.ID)
}

// Expand returns h with the user macros of sc resolved in the fields
// Zabbix resolves them in: URL, query fields, posts, headers, status
// codes, user name, password and proxy. h itself is returned when none
// holds a macro.
func (h *HTTPItem) Expand(sc *usermacro.Scope) *HTTPItem {
	has := func(s string) bool { return strings.Contains(s, "{$") }
	fieldsHave := func(fs []HTTPField) bool {
		return slices.ContainsFunc(fs, func(f HTTPField) bool { return has(f.Name) || has(f.Value) })
	}
	if !has(h.URL) && !has(h.Posts) && !has(h.StatusCodes) && !has(h.Username) && !has(h.Password) && !has(h.HTTPProxy) &&
		!fieldsHave(h.QueryFields) && !fieldsHave(h.Headers) {
		return h
	}
	c := *h
	c.URL, c.Posts, c.StatusCodes = sc.Expand(h.URL), sc.Expand(h.Posts), sc.Expand(h.StatusCodes)
	c.Username, c.Password, c.HTTPProxy = sc.Expand(h.Username), sc.Expand(h.Password), sc.Expand(h.HTTPProxy)
	expandFields := func(fs []HTTPField) []HTTPField {
		out := make([]HTTPField, len(fs))
		for i, f := range fs {
			out[i] = HTTPField{Name: sc.Expand(f.Name), Value: sc.Expand(f.Value)}
		}
		return out
	}
	c.QueryFields, c.Headers = expandFields(h.QueryFields), expandFields(h.Headers)
	return &c
}

// StepsHaveMacros reports whether a step's parameters or error handler
// parameters hold a user macro.
func StepsHaveMacros(steps []PreprocStep) bool {
	return slices.ContainsFunc(steps, func(s PreprocStep) bool {
		return strings.Contains(s.Params, "{$") || strings.Contains(s.ErrorHandlerParams, "{$")
	})
}

// ExpandSteps returns a copy of steps with the user macros of sc
// resolved in their parameters and error handler parameters.
func ExpandSteps(steps []PreprocStep, sc *usermacro.Scope) []PreprocStep {
	out := slices.Clone(steps)
	for i := range out {
		out[i].Params = sc.Expand(out[i].Params)
		out[i].ErrorHandlerParams = sc.Expand(out[i].ErrorHandlerParams)
	}
	return out
}
