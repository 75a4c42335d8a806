package api

import (
	"context"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// template.massadd, template.massremove and template.massupdate as
// Zabbix 6.0 does them (recorded from 6.0.14): checked by its API input
// validator (decodeRuled: an unknown member such as "hosts" refused;
// 6.0 links templates to hosts with host.mass*), then the templates,
// groups and linked templates must exist and the caller must be able
// to change the templates. Each call is one catalog Edit; links copy
// and unlinks keep or clear as host.update's do.

// templateMassParams are template.massadd's and massupdate's.
type templateMassParams struct {
	Templates      opt[refList[massTemplateRef]] `json:"templates" in:"notempty"`
	Groups         opt[refList[massGroupRef]]    `json:"groups"`
	Macros         opt[zobjs[massMacroParams]]   `json:"macros"`
	TemplatesLink  opt[refList[massTemplateRef]] `json:"templates_link"`
	TemplatesClear opt[refList[massTemplateRef]] `json:"templates_clear"`

	update bool // massupdate: templates_clear is taken
}

func (*templateMassParams) required() []string { return []string{"templates"} }

func tmplRefIDs(l refList[massTemplateRef]) []uint64 {
	out := make([]uint64, 0, len(l.zobjs))
	for _, t := range l.zobjs {
		out = append(out, t.TemplateID.Value)
	}
	return out
}

// massTemplatesExist checks the templates, groups and linked templates
// a mass call names, and that the caller may change the templates.
func massTemplatesExist(snap *catalog.Snapshot, a access, tmpls, groups, links []uint64) error {
	for _, t := range tmpls {
		if h := snap.Template(t); h == nil || !a.all() && !a.canWrite(h) {
			return errNoPermissions
		}
	}
	if err := massGroupsWritable(snap, a, groups); err != nil {
		return err
	}
	for _, t := range links {
		if snap.Template(t) == nil {
			return errNoPermissions
		}
	}
	return nil
}

func (p *templateMassParams) macroFields() []catalog.MacroFields {
	out := make([]catalog.MacroFields, 0, len(p.Macros.Value))
	for _, m := range p.Macros.Value {
		t := usermacro.Text
		if m.Type.Given() {
			t = usermacro.Type(m.Type.Value)
		}
		out = append(out, catalog.MacroFields{Macro: string(m.Macro.Value), Value: string(m.Value.Value), Type: int(t), Description: string(m.Description.Value)})
	}
	return out
}

func (w *configWriter) templateMassAdd(ctx context.Context, c *call) (any, error) {
	var p templateMassParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	if p.TemplatesClear.Set {
		return nil, errParams(`Invalid parameter "/": unexpected parameter "templates_clear".`)
	}
	tmpls, links := tmplRefIDs(p.Templates.Value), tmplRefIDs(p.TemplatesLink.Value)
	var groups []uint64
	for _, g := range p.Groups.Value.zobjs {
		groups = append(groups, g.GroupID.Value)
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	err = w.tmplEdit(ctx, c, nil, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		if err := massTemplatesExist(snap, a, tmpls, groups, links); err != nil {
			return err
		}
		for _, t := range tmpls {
			cur := snap.Template(t)
			if len(groups) > 0 {
				gs := slices.Clone(cur.GroupIDs)
				for _, g := range groups {
					if !slices.Contains(gs, g) {
						gs = append(gs, g)
					}
				}
				if len(gs) != len(cur.GroupIDs) {
					if err := e.UpdateHosts([]catalog.HostUpdate{{ID: t, GroupIDs: gs}}); err != nil {
						return err
					}
				}
			}
			if p.Macros.Set {
				ms := p.macroFields()
				for i := range ms {
					ms[i].HostID = t
				}
				if _, err := e.CreateMacros(ms); err != nil {
					return err
				}
			}
			if len(links) > 0 {
				want := slices.Clone(snap.LinkedTemplates(t))
				for _, l := range links {
					if !slices.Contains(want, l) {
						want = append(want, l)
					}
				}
				if _, err := e.SetTemplates(t, want, nil, "templates_link"); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("templateids", tmpls), nil
}

// templateMassRemoveParams are template.massremove's.
type templateMassRemoveParams struct {
	TemplateIDs      opt[zids]  `json:"templateids" in:"notempty"`
	GroupIDs         opt[zids]  `json:"groupids"`
	Macros           opt[zstrs] `json:"macros"`
	TemplateIDsLink  opt[zids]  `json:"templateids_link"`
	TemplateIDsClear opt[zids]  `json:"templateids_clear"`
}

func (*templateMassRemoveParams) required() []string { return []string{"templateids"} }

// zstrs is a list of strings as 6.0's validator reads API_STRINGS with
// API_NORMALIZE: one string stands for a list of one.
type zstrs []string

func (l *zstrs) decodeParam(raw []byte, _ *fieldCtx) error {
	elems := [][]byte{raw}
	switch jsonKindOf(raw) {
	case 'a', 'o':
		elems = listValues(raw)
	case 's':
	default:
		return &valueError{msg: "an array is expected"}
	}
	out := make(zstrs, 0, len(elems))
	for i, e := range elems {
		v, ok := strValue(e)
		if jsonKindOf(e) != 's' || !ok {
			return &valueError{sub: strconv.Itoa(i + 1), msg: "a character string is expected"}
		}
		out = append(out, v)
	}
	*l = out
	return nil
}

func (w *configWriter) templateMassRemove(ctx context.Context, c *call) (any, error) {
	var p templateMassRemoveParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	tmpls, groups := []uint64(p.TemplateIDs.Value), []uint64(p.GroupIDs.Value)
	unlink := append(slices.Clone([]uint64(p.TemplateIDsLink.Value)), p.TemplateIDsClear.Value...)
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	err = w.tmplEdit(ctx, c, nil, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		if err := massTemplatesExist(snap, a, tmpls, groups, unlink); err != nil {
			return err
		}
		for _, t := range tmpls {
			cur := snap.Template(t)
			if len(groups) > 0 {
				gs := slices.DeleteFunc(slices.Clone(cur.GroupIDs), func(g uint64) bool { return slices.Contains(groups, g) })
				if len(gs) == 0 {
					return errParams(`Template "%s" cannot be without host group.`, cur.Host)
				}
				if len(gs) != len(cur.GroupIDs) {
					if err := e.UpdateHosts([]catalog.HostUpdate{{ID: t, GroupIDs: gs}}); err != nil {
						return err
					}
				}
			}
			if len(p.Macros.Value) > 0 {
				var del []uint64
				for _, m := range snap.Macros(t) {
					for _, name := range p.Macros.Value {
						if r, err := usermacro.ParseRef(name); err == nil && r.Key() == m.Ref().Key() {
							del = append(del, m.ID)
						}
					}
				}
				if len(del) > 0 {
					if err := e.DeleteMacros(del); err != nil {
						return err
					}
				}
			}
			if len(unlink) > 0 {
				want := slices.DeleteFunc(slices.Clone(snap.LinkedTemplates(t)), func(l uint64) bool { return slices.Contains(unlink, l) })
				if _, err := e.SetTemplates(t, want, p.TemplateIDsClear.Value, "templateids_link"); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("templateids", tmpls), nil
}

func (w *configWriter) templateMassUpdate(ctx context.Context, c *call) (any, error) {
	p := templateMassParams{update: true}
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	tmpls, links, clear := tmplRefIDs(p.Templates.Value), tmplRefIDs(p.TemplatesLink.Value), tmplRefIDs(p.TemplatesClear.Value)
	var groups []uint64
	for _, g := range p.Groups.Value.zobjs {
		groups = append(groups, g.GroupID.Value)
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	err = w.tmplEdit(ctx, c, nil, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		if err := massTemplatesExist(snap, a, tmpls, groups, append(slices.Clone(links), clear...)); err != nil {
			return err
		}
		for _, t := range tmpls {
			if p.Groups.Set {
				if len(groups) == 0 {
					return errParams(`Template "%s" cannot be without host group.`, snap.Template(t).Host)
				}
				if err := e.UpdateHosts([]catalog.HostUpdate{{ID: t, GroupIDs: groups}}); err != nil {
					return err
				}
			}
			if p.Macros.Set {
				if _, err := e.SetMacros(t, p.macroFields(), "macros"); err != nil {
					return err
				}
			}
			if p.TemplatesLink.Set || p.TemplatesClear.Set {
				want := links
				if !p.TemplatesLink.Set {
					want = slices.DeleteFunc(slices.Clone(snap.LinkedTemplates(t)), func(l uint64) bool { return slices.Contains(clear, l) })
				}
				if _, err := e.SetTemplates(t, want, clear, "templates_link"); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("templateids", tmpls), nil
}
