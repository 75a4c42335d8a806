package api

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// templatedashboard.get, .create, .update and .delete, as Zabbix 6.0's
// CTemplateDashboard: a template's dashboards (catalog.Dashboard), which
// hosts linked to the template show; pages and widgets as dashboard.*'s
// (dashboard.go), checked by the same validator rules and texts
// (recorded from 6.0.14: the conformance case graphs). Reading needs
// read access to the template, writing read-write. A widget field may
// name the template's items and graphs; a host group, host, service or
// SLA field is checked as 6.0 checks it and then refused by the catalog
// (Peregrine keeps only fields of types 0, 1, 4 and 6 on a template's
// dashboards: docs/compat.md).

func (s *Server) registerTemplateDashboards() {
	s.methods["templatedashboard.get"] = &method{role: RoleUser, call: s.templatedashboardGet}
	ed, ok := s.opts.Catalog.(CatalogEditor)
	if !ok {
		return
	}
	w := &configWriter{s: s, ed: ed, cat: s.opts.Catalog}
	s.methods["templatedashboard.create"] = &method{role: RoleAdmin, call: w.templatedashboardCreate}
	s.methods["templatedashboard.update"] = &method{role: RoleAdmin, call: w.templatedashboardUpdate}
	s.methods["templatedashboard.delete"] = &method{role: RoleAdmin, call: w.templatedashboardDelete}
}

// templateDashboardGetParams are templatedashboard.get's parameters.
type templateDashboardGetParams struct {
	DashboardIDs    opt[ids]                 `json:"dashboardids"`
	TemplateIDs     opt[ids]                 `json:"templateids"`
	Filter          opt[map[string][]string] `json:"filter" as:"filter" in:"dashboardid,name,templateid,display_period,auto_start,uuid"`
	Search          opt[map[string][]string] `json:"search" as:"filter" in:"name"`
	SearchByAny     opt[bool]                `json:"searchByAny"`
	StartSearch     opt[bool]                `json:"startSearch" as:"flag"`
	ExcludeSearch   opt[bool]                `json:"excludeSearch" as:"flag"`
	SearchWildcards opt[bool]                `json:"searchWildcardsEnabled"`
	Output          opt[zoutput]             `json:"output" in:"dashboardid,name,templateid,display_period,auto_start,uuid"`
	SelectPages     opt[zoutput]             `json:"selectPages" zbx:"null" in:"dashboard_pageid,name,display_period,widgets"`
	CountOutput     opt[bool]                `json:"countOutput" as:"flag"`
	SortField       opt[zwords]              `json:"sortfield" in:"dashboardid,name"`
	SortOrder       opt[zorder]              `json:"sortorder"`
	Limit           opt[int64]               `json:"limit" in:"1:2147483647" zbx:"null"`
	Editable        opt[bool]                `json:"editable"`
	PreserveKeys    opt[bool]                `json:"preservekeys"`
}

var templateDashboardFields = []string{"dashboardid", "name", "templateid", "display_period", "auto_start", "uuid"}

func templateDashboardText(d *catalog.Dashboard, f string) string {
	switch f {
	case "dashboardid":
		return id(d.ID)
	case "name":
		return d.Name
	case "templateid":
		return id(d.TemplateID)
	case "display_period":
		return strconv.Itoa(d.DisplayPeriod)
	case "auto_start":
		return strconv.Itoa(d.AutoStart)
	case "uuid":
		return d.UUID
	}
	return ""
}

func (s *Server) templatedashboardGet(ctx context.Context, c *call) (any, error) {
	var p templateDashboardGetParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	search := searchOpts{terms: p.Search.Value, byAny: p.SearchByAny.Value, start: p.StartSearch.Value, wildcards: p.SearchWildcards.Value}
	var list []*catalog.Dashboard
	for i := range snap.Dashboards() {
		d := &snap.Dashboards()[i]
		t := snap.HostOrTemplate(d.TemplateID)
		field := func(f string) string { return templateDashboardText(d, f) }
		switch {
		case t == nil || !a.sees(t, p.Editable.Value),
			p.DashboardIDs.Given() && !slices.Contains(p.DashboardIDs.Value, d.ID),
			p.TemplateIDs.Given() && !slices.Contains(p.TemplateIDs.Value, d.TemplateID),
			!filterMatch(p.Filter.Value, field),
			!search.match(field):
			continue
		}
		list = append(list, d)
	}
	slices.SortStableFunc(list, func(a, b *catalog.Dashboard) int {
		for i, f := range p.SortField.Value {
			r := cmp.Compare(a.ID, b.ID)
			if f == "name" {
				r = strings.Compare(a.Name, b.Name)
			}
			if p.SortOrder.Value.at(i) {
				r = -r
			}
			if r != 0 {
				return r
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if p.CountOutput.Value {
		return strconv.Itoa(len(list)), nil
	}
	if p.Limit.Given() && int(p.Limit.Value) < len(list) {
		list = list[:p.Limit.Value]
	}
	out := make([]object, 0, len(list))
	for _, d := range list {
		o := object{}
		for _, f := range templateDashboardFields {
			if p.Output.Value.has(f) {
				o[f] = templateDashboardText(d, f)
			}
		}
		if sel := &p.SelectPages; sel.Given() {
			pages := toAuthPages(d.Pages)
			o["pages"] = selectList(sel.Value, len(pages), func(i int, f string) any {
				pg := &pages[i]
				switch f {
				case "dashboard_pageid":
					return id(pg.ID)
				case "name":
					return pg.Name
				case "display_period":
					return strconv.Itoa(pg.DisplayPeriod)
				}
				return widgetsJSON(pg.Widgets)
			}, "dashboard_pageid", "name", "display_period", "widgets")
		}
		out = append(out, o)
	}
	if p.PreserveKeys.Value {
		m := make(map[string]object, len(out))
		for i, o := range out {
			m[id(list[i].ID)] = o
		}
		return m, nil
	}
	return out, nil
}

// toAuthPages and fromAuthPages convert a template dashboard's pages to
// and from a global dashboard's, which share their checks.
func toAuthPages(ps []catalog.DashboardPage) []auth.DashboardPage {
	out := make([]auth.DashboardPage, len(ps))
	for i, p := range ps {
		ws := make([]auth.Widget, len(p.Widgets))
		for j, w := range p.Widgets {
			fs := make([]auth.WidgetField, len(w.Fields))
			for k, f := range w.Fields {
				fs[k] = auth.WidgetField{Type: f.Type, Name: f.Name, Value: f.Value}
			}
			ws[j] = auth.Widget{ID: w.ID, Type: w.Type, Name: w.Name, X: w.X, Y: w.Y, Width: w.Width, Height: w.Height, ViewMode: w.ViewMode, Fields: fs}
		}
		out[i] = auth.DashboardPage{ID: p.ID, Name: p.Name, DisplayPeriod: p.DisplayPeriod, Widgets: ws}
	}
	return out
}

func fromAuthPages(ps []auth.DashboardPage) []catalog.DashboardPage {
	out := make([]catalog.DashboardPage, len(ps))
	for i, p := range ps {
		ws := make([]catalog.Widget, len(p.Widgets))
		for j, w := range p.Widgets {
			fs := make([]catalog.WidgetField, len(w.Fields))
			for k, f := range w.Fields {
				fs[k] = catalog.WidgetField{Type: f.Type, Name: f.Name, Value: f.Value}
			}
			ws[j] = catalog.Widget{ID: w.ID, Type: w.Type, Name: w.Name, X: w.X, Y: w.Y, Width: w.Width, Height: w.Height, ViewMode: w.ViewMode, Fields: fs}
		}
		out[i] = catalog.DashboardPage{ID: p.ID, Name: p.Name, DisplayPeriod: p.DisplayPeriod, Widgets: ws}
	}
	return out
}

// templateDashboardFieldsParams are the members templatedashboard.create
// and .update share, in 6.0's order.
type templateDashboardFieldsParams struct {
	Name          opt[zstr]  `json:"name" in:"1:255"`
	DisplayPeriod opt[int64] `json:"display_period" in:"10,30,60,120,600,1800,3600"`
	AutoStart     opt[int64] `json:"auto_start" in:"0,1"`
}

func (p *templateDashboardFieldsParams) apply(d *catalog.Dashboard) {
	if p.Name.Set {
		d.Name = string(p.Name.Value)
	}
	if p.DisplayPeriod.Set {
		d.DisplayPeriod = int(p.DisplayPeriod.Value)
	}
	if p.AutoStart.Set {
		d.AutoStart = int(p.AutoStart.Value)
	}
}

type templateDashboardCreateParams struct {
	UUID       opt[zstr]   `json:"uuid"`
	TemplateID opt[uint64] `json:"templateid"`
	templateDashboardFieldsParams
	Pages opt[zobjs[createPageParam]] `json:"pages" in:"notempty"`
}

func (*templateDashboardCreateParams) required() []string {
	return []string{"templateid", "name", "pages"}
}

type templateDashboardUpdateParams struct {
	DashboardID opt[uint64] `json:"dashboardid"`
	templateDashboardFieldsParams
	Pages opt[zobjs[updatePageParam]] `json:"pages" in:"notempty"`
}

func (*templateDashboardUpdateParams) required() []string { return []string{"dashboardid"} }

func (w *configWriter) templatedashboardCreate(ctx context.Context, c *call) (any, error) {
	var ps []templateDashboardCreateParams
	if err := decodeRuledObjects(c.params, &ps); err != nil {
		return nil, err
	}
	if err := uniq("/", len(ps), []string{"templateid", "name"}, func(i int) []string {
		return []string{id(ps[i].TemplateID.Value), string(ps[i].Name.Value)}
	}); err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	ds := make([]catalog.Dashboard, len(ps))
	for i := range ps {
		p := &ps[i]
		if t := snap.HostOrTemplate(p.TemplateID.Value); t == nil || !t.IsTemplate || !a.canWrite(t) {
			return nil, errNoPermissions
		}
		d := catalog.Dashboard{TemplateID: p.TemplateID.Value, UUID: string(p.UUID.Value), DisplayPeriod: 30, AutoStart: 1}
		p.apply(&d)
		var pages []auth.DashboardPage
		for _, pg := range p.Pages.Value {
			page := auth.DashboardPage{Name: string(pg.Name.Value), DisplayPeriod: int(pg.DisplayPeriod.Value), Widgets: []auth.Widget{}}
			for _, wp := range pg.Widgets.Value {
				nw := newWidget()
				applyWidget(&nw, wp.Type, wp.Name, wp.X, wp.Y, wp.Width, wp.Height, wp.ViewMode, wp.Fields)
				page.Widgets = append(page.Widgets, nw)
			}
			pages = append(pages, page)
		}
		d.Pages = fromAuthPages(pages)
		ds[i] = d
	}
	if err := w.checkTemplateDashboards(snap, a, ds, func(i int) bool { return true }); err != nil {
		return nil, err
	}
	var ids []uint64
	err = w.edit(ctx, c, "dashboardid", nil, func(e *catalog.Edit) (err error) {
		ids, err = e.CreateDashboards(ds)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("dashboardids", ids), nil
}

func (w *configWriter) templatedashboardUpdate(ctx context.Context, c *call) (any, error) {
	var ps []templateDashboardUpdateParams
	if err := decodeRuledObjects(c.params, &ps); err != nil {
		return nil, err
	}
	if err := uniq("/", len(ps), []string{"dashboardid"}, func(i int) []string { return []string{id(ps[i].DashboardID.Value)} }); err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	ds := make([]catalog.Dashboard, len(ps))
	ids := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		cur := snap.Dashboard(p.DashboardID.Value)
		if cur == nil {
			return nil, errNoPermissions
		}
		if t := snap.HostOrTemplate(cur.TemplateID); t == nil || !a.canWrite(t) {
			return nil, errNoPermissions
		}
		d := *cur
		p.apply(&d)
		if p.Pages.Set {
			pages, err := updatePages(toAuthPages(cur.Pages), p.Pages.Value)
			if err != nil {
				return nil, err
			}
			d.Pages = fromAuthPages(pages)
		}
		ds[i], ids[i] = d, d.ID
	}
	if err := w.checkTemplateDashboards(snap, a, ds, func(i int) bool { return ps[i].Name.Set }); err != nil {
		return nil, err
	}
	if err := w.edit(ctx, c, "dashboardid", nil, func(e *catalog.Edit) error { return e.UpdateDashboards(ds) }); err != nil {
		return nil, err
	}
	return idResult("dashboardids", ids), nil
}

func (w *configWriter) templatedashboardDelete(ctx context.Context, c *call) (any, error) {
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	for _, did := range list {
		d := snap.Dashboard(did)
		if d == nil {
			return nil, errNoPermissions
		}
		if t := snap.HostOrTemplate(d.TemplateID); t == nil || !a.canWrite(t) {
			return nil, errNoPermissions
		}
	}
	if err := w.edit(ctx, c, "dashboardid", nil, func(e *catalog.Edit) error { return e.DeleteDashboards(list) }); err != nil {
		return nil, err
	}
	return idResult("dashboardids", list), nil
}

// checkTemplateDashboards makes 6.0's checks after the validator, in
// its order: names on the template (named(i): dashboard i's name was
// given), the widgets' places, the objects their fields name (an item
// or graph of the dashboard's own template).
func (w *configWriter) checkTemplateDashboards(snap *catalog.Snapshot, a access, ds []catalog.Dashboard, named func(i int) bool) error {
	for i := range ds {
		if !named(i) {
			continue
		}
		for _, o := range snap.Dashboards() {
			if o.TemplateID == ds[i].TemplateID && o.Name == ds[i].Name && o.ID != ds[i].ID {
				return errParams(`Dashboard "%s" already exists.`, ds[i].Name)
			}
		}
	}
	for i := range ds {
		ad := auth.Dashboard{Name: ds[i].Name, Pages: toAuthPages(ds[i].Pages)}
		if err := checkWidgetPlaces(&ad); err != nil {
			return err
		}
	}
	for i := range ds {
		for _, pg := range ds[i].Pages {
			for _, wd := range pg.Widgets {
				for _, f := range wd.Fields {
					oid, _ := strconv.ParseUint(f.Value, 10, 64)
					switch f.Type {
					case wfItem:
						if it := snap.AnyItem(oid); it == nil || it.HostID != ds[i].TemplateID {
							return errParams(`Item with ID "%s" is not available.`, f.Value)
						}
					case wfGraph:
						if g := snap.Graph(oid); g == nil || g.HostID != ds[i].TemplateID {
							return errParams(`Graph with ID "%s" is not available.`, f.Value)
						}
					default:
						if err := w.s.checkWidgetField(a, auth.WidgetField{Type: f.Type, Name: f.Name, Value: f.Value}); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}
