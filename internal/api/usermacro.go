package api

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// registerMacros registers usermacro.* and template.* (template.go).
// Reading needs a user; host and template macros are read and written
// with the rights on the host's or template's groups; global macros are
// written by super admins, as in Zabbix.
func (s *Server) registerMacros() {
	s.methods["usermacro.get"] = &method{role: RoleUser, call: s.usermacroGet}
	s.methods["template.get"] = &method{role: RoleUser, call: s.templateGet}
	ed, ok := s.opts.Catalog.(CatalogEditor)
	if !ok {
		return
	}
	w := &configWriter{s: s, ed: ed, cat: s.opts.Catalog}
	s.methods["usermacro.create"] = &method{role: RoleAdmin, call: w.usermacroCreate}
	s.methods["usermacro.update"] = &method{role: RoleAdmin, call: w.usermacroUpdate}
	s.methods["usermacro.delete"] = &method{role: RoleAdmin, call: w.usermacroDelete}
	s.methods["usermacro.createglobal"] = &method{role: RoleSuperAdmin, call: w.globalmacroCreate}
	s.methods["usermacro.updateglobal"] = &method{role: RoleSuperAdmin, call: w.globalmacroUpdate}
	s.methods["usermacro.deleteglobal"] = &method{role: RoleSuperAdmin, call: w.globalmacroDelete}
	s.methods["template.create"] = &method{role: RoleAdmin, call: w.templateCreate}
	s.methods["template.update"] = &method{role: RoleAdmin, call: w.templateUpdate}
	s.methods["template.delete"] = &method{role: RoleAdmin, call: w.templateDelete}
	s.methods["template.massadd"] = &method{role: RoleAdmin, call: w.templateMassAdd}
	s.methods["template.massremove"] = &method{role: RoleAdmin, call: w.templateMassRemove}
	s.methods["template.massupdate"] = &method{role: RoleAdmin, call: w.templateMassUpdate}
}

// macroObject is a macro in Zabbix 6.0's shape. A secret macro's value
// is never returned, as Zabbix omits it.
func macroObject(m *catalog.Macro) object {
	o := object{"macro": m.Macro, "type": strconv.Itoa(int(m.Type)), "description": m.Description}
	if m.HostID == 0 {
		o["globalmacroid"] = id(m.ID)
	} else {
		o["hostmacroid"], o["hostid"] = id(m.ID), id(m.HostID)
	}
	if m.Type == usermacro.Text {
		o["value"] = m.Value
	}
	return o
}

func macroObjects(ms []*catalog.Macro, p *getParams) []object {
	out := make([]object, 0, len(ms))
	for _, m := range ms {
		out = append(out, macroObject(m))
	}
	return p.limitSelect(out)
}

// macroOwnerVisible reports whether the caller may read (or, editable,
// write) the macros of a host or template.
func macroOwnerVisible(snap *catalog.Snapshot, a access, owner uint64, editable bool) bool {
	if h := snap.HostOrTemplate(owner); h != nil {
		return a.sees(h, editable)
	}
	return false
}

// usermacroSchema and globalmacroSchema are Zabbix 6.0's hostmacro and
// globalmacro tables.
var (
	usermacroSchema   = schema{id: "hostmacroid", types: fieldTypes("hostmacroid:n hostid:n macro:c value:c description:t type:n")}
	globalmacroSchema = schema{id: "globalmacroid", types: fieldTypes("globalmacroid:n macro:c value:c description:t type:n")}
)

// usermacroGetParams are usermacro.get's parameters (Zabbix 6.0's).
type usermacroGetParams struct {
	getParams
	// GlobalMacro, set to any value but null (false included), asks for
	// global macros; the host parameters are then ignored, and
	// globalmacroids applies only then.
	GlobalMacro     opt[bool] `json:"globalmacro" as:"isset"`
	GlobalMacroIDs  opt[ids]  `json:"globalmacroids"`
	HostMacroIDs    opt[ids]  `json:"hostmacroids"`
	HostIDs         opt[ids]  `json:"hostids"`
	TemplateIDs     opt[ids]  `json:"templateids"`
	GroupIDs        opt[ids]  `json:"groupids"`
	Inherited       opt[bool] `json:"inherited"` // no host is discovered from a prototype
	SelectHosts     sel       `json:"selectHosts"`
	SelectGroups    sel       `json:"selectGroups"`
	SelectTemplates sel       `json:"selectTemplates"`
}

func (s *Server) usermacroGet(ctx context.Context, c *call) (any, error) {
	var p usermacroGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	if p.GlobalMacro.Value {
		var objs []object
		for _, m := range snap.Macros(0) {
			if idsPass(p.GlobalMacroIDs, m.ID) {
				objs = append(objs, macroObject(m))
			}
		}
		sortByID(objs, "globalmacroid")
		return p.applySchema(objs, &globalmacroSchema, "macro")
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	var objs []object
	if !(p.Inherited.Given() && p.Inherited.Value) {
		for _, m := range snap.AllMacros() {
			if m.HostID == 0 || !idsPass(p.HostMacroIDs, m.ID) || !idsPass(p.HostIDs, m.HostID) ||
				!idsAny(p.TemplateIDs, snap.LinkedTemplates(m.HostID)) ||
				!macroOwnerVisible(snap, a, m.HostID, p.Editable.Value) {
				continue
			}
			if p.GroupIDs.Given() {
				h := snap.HostOrTemplate(m.HostID)
				if h == nil || !anyGroup(h.GroupIDs, p.GroupIDs.Value) {
					continue
				}
			}
			o := macroObject(m)
			h := snap.HostByID(m.HostID)
			if sl := p.SelectHosts; sl.list() {
				var hs []object
				if h != nil {
					hs = append(hs, hostObject(h))
				}
				o["hosts"] = nonNil(sl.shape(hs, "hostid"))
			}
			if sl := p.SelectGroups; sl.list() {
				var gs []object
				if h := snap.HostOrTemplate(m.HostID); h != nil {
					for _, gid := range h.GroupIDs {
						if g := snap.GroupByID(gid); g != nil && a.seesGroup(gid, false) {
							gs = append(gs, groupObject(g))
						}
					}
				}
				o["groups"] = nonNil(sl.shape(gs, "groupid"))
			}
			if sl := p.SelectTemplates; sl.list() {
				var ts []object
				if t := snap.Template(m.HostID); t != nil {
					ts = append(ts, templateObject(t))
				}
				o["templates"] = nonNil(sl.shape(ts, "templateid"))
			}
			objs = append(objs, o)
		}
	}
	sortByID(objs, "hostmacroid")
	return p.applySchema(objs, &usermacroSchema, "macro")
}

// sortByID orders objects by a numeric ID member, the default order of
// Zabbix's get methods.
func sortByID(objs []object, field string) {
	num := func(o object) uint64 { v, _ := strconv.ParseUint(o[field].(string), 10, 64); return v }
	for i := 1; i < len(objs); i++ {
		for j := i; j > 0 && num(objs[j]) < num(objs[j-1]); j-- {
			objs[j], objs[j-1] = objs[j-1], objs[j]
		}
	}
}

// macroParams are the members of a usermacro object that the write
// methods take.
type macroParams struct {
	HostMacroID   opt[uint64]  `json:"hostmacroid"`
	GlobalMacroID opt[uint64]  `json:"globalmacroid"`
	HostID        opt[uint64]  `json:"hostid"`
	Macro         opt[string]  `json:"macro"`
	Value         opt[string]  `json:"value"`
	Type          opt[int64]   `json:"type"`
	Description   opt[string]  `json:"description"`
	Automatic     opt[ignored] `json:"automatic"`
}

// check validates what the catalog does not word as Zabbix does; path
// is the object's ("/1", or "/1/macros/2" in a host). The order is 6.0's
// (recorded from 6.0.14): the macro, its type, then a missing value.
func (p *macroParams) check(path string, create bool) error {
	switch {
	case create && !p.Macro.Set:
		return errParams(`Invalid parameter "%s": the parameter "macro" is missing.`, path)
	case p.Macro.Set && p.Macro.Value == "":
		return errParams(`Invalid parameter "%s/macro": cannot be empty.`, path)
	}
	if p.Macro.Set {
		if _, err := usermacro.CheckDefinition(p.Macro.Value); err != nil {
			// A name that does not parse in 6.0's words (`incorrect
			// syntax near "bad"`).
			var se *usermacro.SyntaxError
			if errors.As(err, &se) {
				return errParams(`Invalid parameter "%s/macro": %s.`, path, se.Zabbix())
			}
			return errParams(`Invalid parameter "%s/macro": %s.`, path, err.Error())
		}
	}
	switch {
	case p.Type.Given() && p.Type.Value == int64(usermacro.Vault):
		return errParams(`Invalid parameter "%s/type": vault secret macros are not supported by Peregrine: store the value as a secret text macro (type 1).`, path)
	case p.Type.Given() && p.Type.Value != 0 && p.Type.Value != 1:
		return errParams(`Invalid parameter "%s/type": value must be one of 0, 1, 2.`, path)
	case create && !p.Value.Set:
		return errParams(`Invalid parameter "%s": the parameter "value" is missing.`, path)
	}
	return nil
}

func objPath(i int) string { return "/" + strconv.Itoa(i+1) }

// macroTwice refuses p's macro if an earlier object of the same call
// (before) has it, as 6.0 does (recorded from 6.0.14: `Invalid parameter
// "/2": value (macro)=({$A}) already exists.`); path is p's.
func macroTwice(before []macroParams, p *macroParams, path string) error {
	for _, q := range before {
		if q.Macro.Value == p.Macro.Value {
			return errParams(`Invalid parameter "%s": value (macro)=(%s) already exists.`, path, p.Macro.Value)
		}
	}
	return nil
}

func (p *macroParams) fields(owner uint64) catalog.MacroFields {
	return catalog.MacroFields{HostID: owner, Macro: p.Macro.Value, Value: p.Value.Value, Type: int(p.Type.Value), Description: p.Description.Value}
}

func (p *macroParams) update(mid uint64) catalog.MacroUpdate {
	u := catalog.MacroUpdate{ID: mid}
	if p.Macro.Set {
		u.Macro = &p.Macro.Value
	}
	if p.Value.Set {
		u.Value = &p.Value.Value
	}
	if p.Type.Given() {
		u.Type = new(int(p.Type.Value))
	}
	if p.Description.Set {
		u.Description = &p.Description.Value
	}
	return u
}

// macroOwnersWritable needs write access to each macro owner: read-write
// on a host's or template's groups.
func macroOwnersWritable(owners []uint64) permits {
	return func(snap *catalog.Snapshot, a access) bool {
		for _, o := range owners {
			if h := snap.HostOrTemplate(o); h != nil && !a.canWrite(h) {
				return false
			}
		}
		return true
	}
}

func (w *configWriter) usermacroCreate(ctx context.Context, c *call) (any, error) {
	var ps []macroParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	fs := make([]catalog.MacroFields, len(ps))
	owners := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		if !p.HostID.Set {
			return nil, missing(i, "hostid")
		}
		if err := p.check(objPath(i), true); err != nil {
			return nil, err
		}
		for _, q := range ps[:i] {
			if q.HostID.Value == p.HostID.Value && q.Macro.Value == p.Macro.Value {
				// Recorded from 6.0.14: a macro twice in one call.
				return nil, errParams(`Invalid parameter "/%d": value (hostid, macro)=(%d, %s) already exists.`, i+1, p.HostID.Value, p.Macro.Value)
			}
		}
		fs[i], owners[i] = p.fields(p.HostID.Value), p.HostID.Value
	}
	var ids []uint64
	err := w.edit(ctx, c, "hostmacroid", macroOwnersWritable(owners), func(e *catalog.Edit) (err error) {
		ids, err = e.CreateMacros(fs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("hostmacroids", ids), nil
}

// macroIDsOf checks that each ID is a macro of the wanted kind (global
// or not) and returns the owners; a wrong kind is "no permissions", as
// for an ID that does not exist.
func macroIDsOf(snap *catalog.Snapshot, mids []uint64, global bool) ([]uint64, error) {
	owners := make([]uint64, len(mids))
	for i, mid := range mids {
		m := snap.Macro(mid)
		if m == nil || (m.HostID == 0) != global {
			return nil, errNoPermissions
		}
		owners[i] = m.HostID
	}
	return owners, nil
}

func (w *configWriter) usermacroUpdate(ctx context.Context, c *call) (any, error) {
	return w.macroUpdate(ctx, c, false)
}

func (w *configWriter) globalmacroUpdate(ctx context.Context, c *call) (any, error) {
	return w.macroUpdate(ctx, c, true)
}

func (w *configWriter) macroUpdate(ctx context.Context, c *call, global bool) (any, error) {
	var ps []macroParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	idField := "hostmacroid"
	if global {
		idField = "globalmacroid"
	}
	ups := make([]catalog.MacroUpdate, len(ps))
	mids := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		mid := p.HostMacroID
		if global {
			mid = p.GlobalMacroID
		}
		switch {
		case !mid.Set:
			return nil, missing(i, idField)
		case p.HostID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "hostid".`, i+1)
		}
		if err := p.check(objPath(i), false); err != nil {
			return nil, err
		}
		ups[i], mids[i] = p.update(mid.Value), mid.Value
	}
	owners, err := macroIDsOf(w.cat.Snapshot(), mids, global)
	if err != nil {
		return nil, err
	}
	if err := w.edit(ctx, c, idField, macroOwnersWritable(owners), func(e *catalog.Edit) error { return e.UpdateMacros(ups) }); err != nil {
		return nil, err
	}
	return idResult(idField+"s", mids), nil
}

func (w *configWriter) usermacroDelete(ctx context.Context, c *call) (any, error) {
	return w.macroDelete(ctx, c, false)
}

func (w *configWriter) globalmacroDelete(ctx context.Context, c *call) (any, error) {
	return w.macroDelete(ctx, c, true)
}

func (w *configWriter) macroDelete(ctx context.Context, c *call, global bool) (any, error) {
	mids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	owners, err := macroIDsOf(w.cat.Snapshot(), mids, global)
	if err != nil {
		return nil, err
	}
	idField := "hostmacroid"
	if global {
		idField = "globalmacroid"
	}
	if err := w.edit(ctx, c, idField, macroOwnersWritable(owners), func(e *catalog.Edit) error { return e.DeleteMacros(mids) }); err != nil {
		return nil, err
	}
	return idResult(idField+"s", mids), nil
}

func (w *configWriter) globalmacroCreate(ctx context.Context, c *call) (any, error) {
	var ps []macroParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	fs := make([]catalog.MacroFields, len(ps))
	for i := range ps {
		p := &ps[i]
		if p.HostID.Set {
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "hostid".`, i+1)
		}
		if err := p.check(objPath(i), true); err != nil {
			return nil, err
		}
		if err := macroTwice(ps[:i], p, objPath(i)); err != nil {
			return nil, err
		}
		fs[i] = p.fields(0)
	}
	var ids []uint64
	err := w.edit(ctx, c, "globalmacroid", nil, func(e *catalog.Edit) (err error) {
		ids, err = e.CreateMacros(fs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("globalmacroids", ids), nil
}

// macroList is host.create/update's "macros": usermacro objects
// without hostid.
type macroList []macroParams

func (l *macroList) decodeParam(b []byte, _ *fieldCtx) error {
	elems, ok := arrayElems(b)
	if !ok {
		return &valueError{msg: "an array is expected"}
	}
	*l = make(macroList, len(elems))
	for j, el := range elems {
		if isNull(el) {
			continue // an object with no members, as encoding/json took it
		}
		ms, ok := objectMembers(el)
		if !ok {
			return &valueError{msg: "an array of macro objects (macro, value, type, description) is expected"}
		}
		if err := decodeMembers(ms, "", &(*l)[j], &writeRules); err != nil {
			var pe *pathError
			if errors.As(err, &pe) && strings.HasPrefix(pe.msg, "unexpected parameter") {
				// Recorded from 6.0.14: `"/1/macros/1": unexpected parameter "x"`.
				return &valueError{sub: strconv.Itoa(j + 1), msg: pe.msg}
			}
			return &valueError{msg: "an array of macro objects (macro, value, type, description) is expected"}
		}
	}
	return nil
}

// fields checks the list of object i and returns its macros. On update
// (snap set, owner the host or template updated) a macro naming one of
// the owner's stored macros by hostmacroid without a value keeps the
// stored value, and its type unless given: 6.0's frontend sends a
// secret macro it never read that way (recorded from 6.0.14: host.update
// with {"hostmacroid", "macro", "type": 1} and no value keeps the secret).
func (l macroList) fields(i int, snap *catalog.Snapshot, owner uint64) ([]catalog.MacroFields, error) {
	out := make([]catalog.MacroFields, len(l))
	for j := range l {
		p := &l[j]
		path := objPath(i) + "/macros" + objPath(j)
		if p.HostID.Set {
			return nil, errParams(`Invalid parameter "%s": unexpected parameter "hostid".`, path)
		}
		if snap != nil && p.HostMacroID.Given() && !p.Value.Set {
			if m := snap.Macro(p.HostMacroID.Value); m != nil && m.HostID == owner {
				p.Value = opt[string]{Set: true, Value: m.Value}
				if !p.Type.Given() {
					p.Type = opt[int64]{Set: true, Value: int64(m.Type)}
				}
			}
		}
		if err := p.check(path, true); err != nil {
			return nil, err
		}
		if err := macroTwice(l[:j], p, path); err != nil {
			return nil, err
		}
		out[j] = p.fields(0)
	}
	return out, nil
}
