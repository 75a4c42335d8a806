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

// Dashboard is a template's dashboard (Zabbix 6.0's templatedashboard):
// pages of widgets whose fields name items and graphs of the template by
// ID. Zabbix 6.0 does not copy them: a host shows the dashboards of the
// templates it is linked to, directly or through other templates
// (Snapshot.HostDashboards). It MUST NOT be modified.
type Dashboard struct {
	ID            uint64          `json:"-"`
	TemplateID    uint64          `json:"-"`
	UUID          string          `json:"-"`
	Name          string          `json:"-"`
	DisplayPeriod int             `json:"display_period"` // 10, 30, 60, 120, 600, 1800 or 3600 s
	AutoStart     int             `json:"auto_start"`     // 0 or 1
	Pages         []DashboardPage `json:"pages"`
}

// DashboardPage is one page of a dashboard.
type DashboardPage struct {
	// ID is the page's dashboard_pageid, Widget.ID its widgetid: kept
	// while the dashboard keeps them, new for one added (0 in a create
	// or update; assignDashboardIDs).
	ID            uint64   `json:"id,omitempty"`
	Name          string   `json:"name"`
	DisplayPeriod int      `json:"display_period"` // 0: the dashboard's
	Widgets       []Widget `json:"widgets"`
}

// Widget is one widget of a page: type ("graph", "graphprototype",
// "plaintext", ...), position and size on the 24-column grid, and its
// fields.
type Widget struct {
	ID       uint64        `json:"id,omitempty"`
	Type     string        `json:"type"`
	Name     string        `json:"name"`
	X        int           `json:"x"`
	Y        int           `json:"y"`
	Width    int           `json:"width"`
	Height   int           `json:"height"`
	ViewMode int           `json:"view_mode"`
	Fields   []WidgetField `json:"fields"`
}

// WidgetField is one field of a widget, with Zabbix 6.0's field types:
// 0 integer, 1 string, 2 host group, 3 host, 4 item, 5 item prototype,
// 6 graph, 7 graph prototype. Value holds the number or text; for types
// 2-7 an object's ID.
type WidgetField struct {
	Type  int    `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Widget field types (Zabbix 6.0's numbers).
const (
	WidgetFieldInt            = 0
	WidgetFieldStr            = 1
	WidgetFieldGroup          = 2
	WidgetFieldHost           = 3
	WidgetFieldItem           = 4
	WidgetFieldItemPrototype  = 5
	WidgetFieldGraph          = 6
	WidgetFieldGraphPrototype = 7
)

// Limits of 6.0's dashboard tables and checks.
const (
	maxDashboardNameLen = 255
	maxWidgetX          = 23
	maxWidgetY          = 62
	maxWidgetWidth      = 24
	maxWidgetHeight     = 32
	maxDashboardPages   = 50
)

// dashboardSchema holds templates' dashboards (migrated with graphs,
// migrateGraphs): one row per dashboard, pages as JSON.
const dashboardSchema = `
CREATE TABLE IF NOT EXISTS template_dashboards (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	template_id INTEGER NOT NULL,
	uuid        TEXT NOT NULL DEFAULT '',
	name        TEXT NOT NULL,
	config      TEXT NOT NULL
);
`

func loadDashboards(ctx context.Context, tx *sql.Tx) ([]Dashboard, error) {
	var out []Dashboard
	err := queryEach(ctx, tx, "SELECT id, template_id, uuid, name, config FROM template_dashboards ORDER BY id", func(r *sql.Rows) error {
		var d Dashboard
		var config string
		if err := r.Scan(&d.ID, &d.TemplateID, &d.UUID, &d.Name, &config); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(config), &d); err != nil {
			return fmt.Errorf("%w: dashboard %d: %v", ErrCorrupt, d.ID, err)
		}
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load template dashboards: %w", err)
	}
	numberLegacyDashboards(out)
	return out, nil
}

// Dashboards returns the templates' dashboards, ascending by ID.
func (s *Snapshot) Dashboards() []Dashboard {
	if s.ext == nil {
		return nil
	}
	return s.ext.dashboards
}

// Dashboard returns the template dashboard with the ID, or nil.
func (s *Snapshot) Dashboard(id uint64) *Dashboard {
	ds := s.Dashboards()
	i, ok := slices.BinarySearchFunc(ds, id, func(d Dashboard, id uint64) int { return cmp.Compare(d.ID, id) })
	if !ok {
		return nil
	}
	return &ds[i]
}

// HostDashboards returns the dashboards a host or template shows: those
// of every template it links, directly or not (6.0's host dashboards),
// ascending by ID.
func (s *Snapshot) HostDashboards(host uint64) []*Dashboard {
	tmpls := map[uint64]bool{}
	var walk func(uint64)
	walk = func(id uint64) {
		for _, t := range s.LinkedTemplates(id) {
			if !tmpls[t] {
				tmpls[t] = true
				walk(t)
			}
		}
	}
	walk(host)
	var out []*Dashboard
	ds := s.Dashboards()
	for i := range ds {
		if tmpls[ds[i].TemplateID] {
			out = append(out, &ds[i])
		}
	}
	return out
}

func (e *Edit) dashboard(id uint64) *Dashboard {
	if e.ext != nil {
		if d, ok := e.ext.dash[id]; ok {
			return d
		}
	}
	return e.old.Dashboard(id)
}

func (e *Edit) allDashboards() []*Dashboard {
	var out []*Dashboard
	for _, d := range e.old.Dashboards() {
		if c := e.dashboard(d.ID); c != nil {
			out = append(out, c)
		}
	}
	if e.ext != nil {
		for _, id := range e.ext.newDash {
			if d := e.ext.dash[id]; d != nil {
				out = append(out, d)
			}
		}
	}
	return out
}

// TemplateDashboards returns a template's dashboards in the Edit's view.
func (e *Edit) TemplateDashboards(tmpl uint64) []*Dashboard {
	var out []*Dashboard
	for _, d := range e.allDashboards() {
		if d.TemplateID == tmpl {
			out = append(out, d)
		}
	}
	return out
}

func (e *Edit) checkDashboard(p string, d *Dashboard, el *errList) {
	if h := e.host(d.TemplateID); h == nil || !h.IsTemplate {
		el.add(p+".templateid", notFound("template", d.TemplateID))
		return
	}
	if d.Name == "" {
		el.addf(p+".name", "cannot be empty")
	} else if n := utf8.RuneCountInString(d.Name); n > maxDashboardNameLen {
		el.addf(p+".name", "value is too long")
	}
	if !slices.Contains([]int{10, 30, 60, 120, 600, 1800, 3600}, d.DisplayPeriod) {
		el.addf(p+".display_period", "value must be one of 10, 30, 60, 120, 600, 1800, 3600")
	}
	if d.AutoStart != 0 && d.AutoStart != 1 {
		el.addf(p+".auto_start", "value must be one of 0, 1")
	}
	if len(d.Pages) > maxDashboardPages {
		el.addf(p+".pages", "too many pages (the limit is %d)", maxDashboardPages)
	}
	for pi, pg := range d.Pages {
		pp := p + ".pages[" + strconv.Itoa(pi) + "]"
		if !slices.Contains([]int{0, 10, 30, 60, 120, 600, 1800, 3600}, pg.DisplayPeriod) {
			el.addf(pp+".display_period", "value must be one of 0, 10, 30, 60, 120, 600, 1800, 3600")
		}
		for wi, w := range pg.Widgets {
			wp := pp + ".widgets[" + strconv.Itoa(wi) + "]"
			if w.Type == "" {
				el.addf(wp+".type", "cannot be empty")
			}
			if w.X < 0 || w.X > maxWidgetX || w.Y < 0 || w.Y > maxWidgetY ||
				w.Width < 1 || w.Width > maxWidgetWidth || w.Height < 2 || w.Height > maxWidgetHeight || w.X+w.Width > maxWidgetWidth {
				el.addf(wp, "widget position or size out of the 24-column grid")
			}
			for fi, f := range w.Fields {
				fp := wp + ".fields[" + strconv.Itoa(fi) + "]"
				switch f.Type {
				case WidgetFieldInt, WidgetFieldStr:
				case WidgetFieldItem, WidgetFieldGraph:
					id, _ := strconv.ParseUint(f.Value, 10, 64)
					if f.Type == WidgetFieldItem {
						if it := e.item(id); it == nil || it.HostID != d.TemplateID {
							el.addf(fp+".value", "item %s is not an item of the dashboard's template", f.Value)
						}
					} else if g := e.graph(id); g == nil || g.HostID != d.TemplateID {
						el.addf(fp+".value", "graph %s is not a graph of the dashboard's template", f.Value)
					}
				case WidgetFieldItemPrototype, WidgetFieldGraphPrototype:
					id, _ := strconv.ParseUint(f.Value, 10, 64)
					if e.protoHost(d.TemplateID, id, f.Type == WidgetFieldGraphPrototype) == 0 {
						el.addf(fp+".value", "%s %s is not a prototype of the dashboard's template", map[bool]string{false: "item prototype", true: "graph prototype"}[f.Type == WidgetFieldGraphPrototype], f.Value)
					}
				default:
					el.addf(fp+".type", "value must be one of 0, 1, 4, 5, 6, 7")
				}
			}
		}
	}
}

// CreateDashboards creates template dashboards and returns their IDs.
// Names are unique per template.
func (e *Edit) CreateDashboards(ds []Dashboard) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	batch := map[string]bool{}
	for i := range ds {
		p := "dashboards[" + strconv.Itoa(i) + "]"
		e.checkDashboard(p, &ds[i], &el)
		k := strconv.FormatUint(ds[i].TemplateID, 10) + "\x00" + ds[i].Name
		if batch[k] || e.dashboardByName(ds[i].TemplateID, ds[i].Name) != nil {
			el.addf(p+".name", "dashboard %q already exists", ds[i].Name)
		}
		batch[k] = true
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	ids := make([]uint64, len(ds))
	for i := range ds {
		d := ds[i]
		d.UUID = cmp.Or(d.UUID, NewUUID())
		d.Pages = clonePages(d.Pages)
		e.assignDashboardIDs(&d, nil)
		id, err := e.exec("INSERT INTO template_dashboards (template_id, uuid, name, config) VALUES (?, ?, ?, ?)",
			d.TemplateID, d.UUID, d.Name, encodeDashboard(&d))
		if err != nil {
			return nil, e.fail(fmt.Errorf("cannot create dashboard %q: %w", d.Name, err))
		}
		d.ID, ids[i] = id, id
		x := e.extra()
		x.dash[id] = &d
		x.newDash = append(x.newDash, id)
		e.res.DashboardsCreated++
	}
	return ids, nil
}

func (e *Edit) dashboardByName(tmpl uint64, name string) *Dashboard {
	for _, d := range e.allDashboards() {
		if d.TemplateID == tmpl && d.Name == name {
			return d
		}
	}
	return nil
}

// UpdateDashboards replaces dashboards by ID (TemplateID and UUID kept).
func (e *Edit) UpdateDashboards(ds []Dashboard) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i := range ds {
		p := "dashboards[" + strconv.Itoa(i) + "]"
		cur := e.dashboard(ds[i].ID)
		if cur == nil {
			el.add(p+".dashboardid", notFound("dashboard", ds[i].ID))
			continue
		}
		ds[i].TemplateID, ds[i].UUID = cur.TemplateID, cur.UUID
		e.checkDashboard(p, &ds[i], &el)
		if o := e.dashboardByName(cur.TemplateID, ds[i].Name); o != nil && o.ID != cur.ID {
			el.addf(p+".name", "dashboard %q already exists", ds[i].Name)
		}
	}
	if err := el.err(); err != nil {
		return err
	}
	for i := range ds {
		if err := e.writeDashboard(&ds[i]); err != nil {
			return err
		}
	}
	return nil
}

func (e *Edit) writeDashboard(d *Dashboard) error {
	n := *d
	n.Pages = clonePages(n.Pages)
	e.assignDashboardIDs(&n, e.dashboard(n.ID))
	if _, err := e.exec("UPDATE template_dashboards SET name = ?, config = ? WHERE id = ?", n.Name, encodeDashboard(&n), n.ID); err != nil {
		return e.fail(fmt.Errorf("cannot update dashboard %d: %w", n.ID, err))
	}
	e.extra().dash[n.ID] = &n
	e.res.DashboardsUpdated++
	return nil
}

// DeleteDashboards deletes template dashboards by ID.
func (e *Edit) DeleteDashboards(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		if e.dashboard(id) == nil {
			el.add("dashboards["+strconv.Itoa(i)+"]", notFound("dashboard", id))
		}
	}
	dupIDs("dashboards", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	for _, id := range ids {
		if err := e.removeDashboard(id); err != nil {
			return err
		}
	}
	return nil
}

func (e *Edit) removeDashboard(id uint64) error {
	if _, err := e.exec("DELETE FROM template_dashboards WHERE id = ?", id); err != nil {
		return e.fail(fmt.Errorf("cannot delete dashboard %d: %w", id, err))
	}
	e.extra().dash[id] = nil
	e.res.DashboardsDeleted++
	return nil
}

// dashboardTops are the highest page and widget IDs of every template
// dashboard in the Edit's view and before it.
func (e *Edit) dashboardTops() (page, widget uint64) {
	scan := func(d *Dashboard) {
		for _, p := range d.Pages {
			page = max(page, p.ID)
			for _, w := range p.Widgets {
				widget = max(widget, w.ID)
			}
		}
	}
	for _, d := range e.allDashboards() {
		scan(d)
	}
	for i := range e.old.Dashboards() {
		scan(&e.old.ext.dashboards[i])
	}
	return page, widget
}

// assignDashboardIDs gives d's pages and widgets an ID where they have
// none, or one prev (the stored dashboard) does not have.
func (e *Edit) assignDashboardIDs(d *Dashboard, prev *Dashboard) {
	x := e.extra()
	if x.lastPage == 0 && x.lastWidget == 0 {
		x.lastPage, x.lastWidget = e.dashboardTops()
	}
	pages, widgets := map[uint64]bool{}, map[uint64]bool{}
	if prev != nil {
		for _, p := range prev.Pages {
			pages[p.ID] = true
			for _, w := range p.Widgets {
				widgets[w.ID] = true
			}
		}
	}
	for i := range d.Pages {
		p := &d.Pages[i]
		if p.ID == 0 || !pages[p.ID] {
			x.lastPage++
			p.ID = x.lastPage
		}
		pages[p.ID] = false // each once
		for j := range p.Widgets {
			w := &p.Widgets[j]
			if w.ID == 0 || !widgets[w.ID] {
				x.lastWidget++
				w.ID = x.lastWidget
			}
			widgets[w.ID] = false
		}
	}
}

// withoutIDs is d with its pages' and widgets' IDs cleared: what an
// import compares.
func withoutIDs(d *Dashboard) *Dashboard {
	n := *d
	n.Pages = clonePages(d.Pages)
	for i := range n.Pages {
		n.Pages[i].ID = 0
		for j := range n.Pages[i].Widgets {
			n.Pages[i].Widgets[j].ID = 0
		}
	}
	return &n
}

// numberLegacyDashboards gives the pages and widgets stored before they
// had IDs (schema 27's first rows) IDs above every stored one.
func numberLegacyDashboards(ds []Dashboard) {
	var page, widget uint64
	for _, d := range ds {
		for _, p := range d.Pages {
			page = max(page, p.ID)
			for _, w := range p.Widgets {
				widget = max(widget, w.ID)
			}
		}
	}
	for i := range ds {
		for j := range ds[i].Pages {
			p := &ds[i].Pages[j]
			if p.ID == 0 {
				page++
				p.ID = page
			}
			for k := range p.Widgets {
				if p.Widgets[k].ID == 0 {
					widget++
					p.Widgets[k].ID = widget
				}
			}
		}
	}
}

func encodeDashboard(d *Dashboard) string {
	b, err := json.Marshal(d)
	if err != nil {
		panic("BUG: Dashboard does not marshal: " + err.Error())
	}
	return string(b)
}

// syncDashboards deletes the dashboards of deleted templates and the
// widget fields naming deleted items or graphs (as 6.0 deletes them).
func (e *Edit) syncDashboards() error {
	for _, d := range e.allDashboards() {
		if h := e.host(d.TemplateID); h == nil {
			if err := e.removeDashboard(d.ID); err != nil {
				return err
			}
			continue
		}
		n, changed := *d, false
		n.Pages = slices.Clone(d.Pages)
		for pi := range n.Pages {
			n.Pages[pi].Widgets = slices.Clone(n.Pages[pi].Widgets)
			for wi := range n.Pages[pi].Widgets {
				w := &n.Pages[pi].Widgets[wi]
				keep := w.Fields[:0:0]
				for _, f := range w.Fields {
					id, _ := strconv.ParseUint(f.Value, 10, 64)
					switch {
					case f.Type == WidgetFieldItem && e.item(id) == nil,
						f.Type == WidgetFieldGraph && e.graph(id) == nil,
						f.Type == WidgetFieldItemPrototype && e.protoHost(d.TemplateID, id, false) == 0,
						f.Type == WidgetFieldGraphPrototype && e.protoHost(d.TemplateID, id, true) == 0:
						changed = true
						continue
					}
					keep = append(keep, f)
				}
				w.Fields = keep
			}
		}
		if changed {
			if err := e.writeDashboard(&n); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *Edit) buildDashboards() []Dashboard {
	var out []Dashboard
	for _, d := range e.allDashboards() {
		if e.host(d.TemplateID) != nil {
			out = append(out, *d)
		}
	}
	slices.SortFunc(out, func(a, b Dashboard) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
