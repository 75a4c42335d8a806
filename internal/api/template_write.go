package api

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// templateParams are the objects of template.create and template.update,
// which Zabbix 6.0 checks with its API input validator: an unknown
// member is refused, host and groups are required on create. Templates
// link templates ("templates"; "templates_clear" on update unlinks and
// deletes the copies), macros replace the template's.
type templateParams struct {
	TemplateID  opt[uint64]    `json:"templateid"`
	UUID        opt[string]    `json:"uuid"`
	Host        opt[string]    `json:"host"`
	Name        opt[string]    `json:"name"`
	Description opt[string]    `json:"description"`
	Groups      opt[refs]      `json:"groups" key:"groupid"`
	Tags        opt[hostTags]  `json:"tags"`
	Templates   opt[refs]      `json:"templates" key:"templateid"`
	TemplClear  opt[refs]      `json:"templates_clear" key:"templateid"`
	Macros      opt[macroList] `json:"macros"`
}

// check validates p in the order of 6.0's rules: its members, then the
// host name and groups (create: required).
// maxTemplateNameLen is the length of 6.0's hosts.host.
const maxTemplateNameLen = 128

func (p *templateParams) check(i int, create bool) error {
	path := "/" + strconv.Itoa(i+1)
	switch {
	case create && p.TemplateID.Set:
		return errParams(`Invalid parameter "%s": unexpected parameter "templateid".`, path)
	case create && p.TemplClear.Set:
		return errParams(`Invalid parameter "%s": unexpected parameter "templates_clear".`, path)
	case !create && !p.TemplateID.Set:
		return missing(i, "templateid")
	case p.UUID.Set && !create:
		return errParams(`Invalid parameter "%s": unexpected parameter "uuid".`, path)
	case p.UUID.Set && !isUUID(p.UUID.Value):
		return errParams(`Invalid parameter "%s/uuid": UUIDv4 is expected.`, path)
	case create && !p.Host.Set:
		return missing(i, "host")
	case p.Host.Set && utf8.RuneCountInString(p.Host.Value) > maxTemplateNameLen:
		// 6.0.14 checks the length before the characters.
		return errParams(`Invalid parameter "%s/host": value is too long.`, path)
	case p.Host.Set && hostNameProblem(p.Host.Value) != nil:
		return errParams(`Invalid parameter "%s/host": invalid host name.`, path)
	case p.Name.Set && p.Name.Value == "":
		return empty(i, "name")
	case create && !p.Groups.Set:
		return missing(i, "groups")
	case p.Groups.Set && len(p.Groups.Value) == 0:
		return errParams(`Invalid parameter "%s/groups": cannot be empty.`, path)
	}
	return nil
}

// isUUID reports a uuid as Zabbix 6.0's validator takes one: 32
// hexadecimal digits of a version 4 UUID.
func isUUID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s[12] == '4'
}

// templateRefsExist refuses, as 6.0 does, groups and templates that do
// not exist (the rights on those that do are checked in the edit).
func templateRefsExist(snap *catalog.Snapshot, groups, tmpls []uint64) error {
	for _, g := range groups {
		if snap.GroupByID(g) == nil {
			return errNoPermissions
		}
	}
	for _, t := range tmpls {
		if snap.Template(t) == nil {
			return errNoPermissions
		}
	}
	return nil
}

// templateEditError is editError with 6.0's words for a template's name
// that is taken: template.create and .update word it otherwise than
// host.create does (recorded from 6.0.14).
func templateEditError(err error) error {
	var ce *catalog.ConflictError
	if errors.As(err, &ce) {
		what := "Host"
		if ce.Template {
			what = "Template"
		}
		switch ce.Kind {
		case catalog.HostExists:
			return errParams(`%s with host name "%s" already exists.`, what, ce.Host)
		case catalog.VisibleNameExists:
			return errParams(`%s with visible name "%s" already exists.`, what, ce.Name)
		}
	}
	return editError(err, "templateid")
}

// tmplEdit runs fn in one catalog Edit with the rights needed, as edit
// does, wording errors as templateEditError.
func (w *configWriter) tmplEdit(ctx context.Context, c *call, ok permits, fn func(e *catalog.Edit) error) error {
	var a access
	if ok != nil {
		var err error
		if a, err = w.s.access(ctx, c); err != nil {
			return err
		}
	}
	_, err := w.ed.Edit(ctx, func(e *catalog.Edit) error {
		if ok != nil && !a.all() && !ok(w.cat.Snapshot(), a) {
			return errNoPermissions
		}
		return fn(e)
	})
	if err == nil {
		return nil
	}
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	return templateEditError(err)
}

// templatesWritable needs read-write on each template, through its
// groups, as a host.
func templatesWritable(ids []uint64) permits {
	return func(snap *catalog.Snapshot, a access) bool {
		for _, id := range ids {
			if t := snap.Template(id); t != nil && !a.canWrite(t) {
				return false
			}
		}
		return true
	}
}

func (w *configWriter) templateCreate(ctx context.Context, c *call) (any, error) {
	var ps []templateParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	var groups, links []uint64
	hosts := make([]catalog.NewHost, len(ps))
	macros := make([][]catalog.MacroFields, len(ps))
	for i := range ps {
		p := &ps[i]
		if err := p.check(i, true); err != nil {
			return nil, err
		}
		var err error
		if macros[i], err = p.Macros.Value.fields(i, nil, 0); err != nil {
			return nil, err
		}
		groups = append(groups, p.Groups.Value...)
		links = append(links, p.Templates.Value...)
		hosts[i] = catalog.NewHost{Host: p.Host.Value, Name: p.Name.Value, Template: true, GroupIDs: p.Groups.Value,
			Tags: p.Tags.Value, Description: p.Description.Value, UUID: p.UUID.Value}
	}
	if err := templateRefsExist(w.cat.Snapshot(), groups, links); err != nil {
		return nil, err
	}
	var ids []uint64
	err := w.tmplEdit(ctx, c, groupsWritable(groups), func(e *catalog.Edit) (err error) {
		if ids, err = e.CreateHosts(hosts); err != nil {
			return err
		}
		for i := range ps {
			if err := ps[i].setLinksAndMacros(e, i, ids[i], macros[i], nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("templateids", ids), nil
}

func (w *configWriter) templateUpdate(ctx context.Context, c *call) (any, error) {
	var ps []templateParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	var groups, links, ids []uint64
	ups := make([]catalog.HostUpdate, len(ps))
	macros := make([][]catalog.MacroFields, len(ps))
	for i := range ps {
		p := &ps[i]
		if err := p.check(i, false); err != nil {
			return nil, err
		}
		var err error
		if macros[i], err = p.Macros.Value.fields(i, snap, p.TemplateID.Value); err != nil {
			return nil, err
		}
		if snap.Template(p.TemplateID.Value) == nil {
			return nil, errNoPermissions
		}
		ids = append(ids, p.TemplateID.Value)
		groups = append(groups, p.Groups.Value...)
		links = append(links, p.Templates.Value...)
		links = append(links, p.TemplClear.Value...)
		u := catalog.HostUpdate{ID: p.TemplateID.Value}
		if p.Host.Set {
			u.Host = &p.Host.Value
		}
		switch {
		case p.Name.Set:
			u.Name = &p.Name.Value
		case p.Host.Set:
			// A template's visible name stays when its technical name
			// changes (recorded from 6.0.14), where a host's follows.
			u.Name = &snap.Template(p.TemplateID.Value).Name
		}
		if p.Description.Set {
			u.Description = &p.Description.Value
		}
		if p.Groups.Set {
			u.GroupIDs = p.Groups.Value
		}
		if p.Tags.Set {
			u.Tags = (*[]catalog.Tag)(&p.Tags.Value)
		}
		ups[i] = u
	}
	if err := templateRefsExist(snap, groups, links); err != nil {
		return nil, err
	}
	err := w.tmplEdit(ctx, c, allOf(templatesWritable(ids), groupsWritable(groups)), func(e *catalog.Edit) error {
		if err := e.UpdateHosts(ups); err != nil {
			return err
		}
		for i := range ps {
			if err := ps[i].setLinksAndMacros(e, i, ids[i], macros[i], snap.LinkedTemplates(ids[i])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("templateids", ids), nil
}

// setLinksAndMacros applies "macros" (replacing the template's),
// "templates" (replacing its links) and "templates_clear" (unlinking
// and clearing from cur, its links before the call).
func (p *templateParams) setLinksAndMacros(e *catalog.Edit, i int, id uint64, macros []catalog.MacroFields, cur []uint64) error {
	field := "templates[" + strconv.Itoa(i) + "]"
	if p.Macros.Set {
		if _, err := e.SetMacros(id, macros, field+".macros"); err != nil {
			return err
		}
	}
	links, set := cur, false
	if p.Templates.Set {
		links, set = p.Templates.Value, true
	}
	if p.TemplClear.Set {
		links = slices.DeleteFunc(slices.Clone(links), func(t uint64) bool { return slices.Contains(p.TemplClear.Value, t) })
		set = true
	}
	if set {
		if _, err := e.SetTemplates(id, links, p.TemplClear.Value, field+".templates"); err != nil {
			return err
		}
	}
	return nil
}

func (w *configWriter) templateDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	for _, id := range ids {
		if snap.Template(id) == nil {
			return nil, errNoPermissions
		}
	}
	if err := w.tmplEdit(ctx, c, templatesWritable(ids), func(e *catalog.Edit) error { return e.DeleteHosts(ids) }); err != nil {
		return nil, err
	}
	return idResult("templateids", ids), nil
}
