package api

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/auth"
)

// The grid of 6.0's dashboards: 24 columns, 64 rows.
const (
	dashboardColumns = 24
	dashboardRows    = 64
)

func (s *Server) dashboardCreate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []dashboardCreateParams
	if err := decodeRuledObjects(c.params, &ps); err != nil {
		return nil, err
	}
	if err := uniq("/", len(ps), []string{"name"}, func(i int) []string { return []string{string(ps[i].Name.Value)} }); err != nil {
		return nil, err
	}
	for i := range ps {
		if err := ps[i].uniqShares("/" + strconv.Itoa(i+1)); err != nil {
			return nil, err
		}
	}
	all, err := acc.Dashboards(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	ds := make([]auth.Dashboard, len(ps))
	for i := range ps {
		d := auth.Dashboard{UserID: c.user.ID, Private: 1, DisplayPeriod: 30, AutoStart: 1}
		ps[i].apply(&d)
		for _, pg := range ps[i].Pages.Value {
			page := auth.DashboardPage{Name: string(pg.Name.Value), DisplayPeriod: int(pg.DisplayPeriod.Value), Widgets: []auth.Widget{}}
			for _, w := range pg.Widgets.Value {
				nw := newWidget()
				applyWidget(&nw, w.Type, w.Name, w.X, w.Y, w.Width, w.Height, w.ViewMode, w.Fields)
				page.Widgets = append(page.Widgets, nw)
			}
			d.Pages = append(d.Pages, page)
		}
		ds[i] = d
	}
	if err := s.checkDashboards(ctx, c, acc, all, ds, ps2fields(ps)); err != nil {
		return nil, err
	}
	created, err := acc.CreateDashboards(ctx, ds)
	if err != nil {
		return nil, s.dashboardStoreErr(err, c)
	}
	return idResult("dashboardids", created), nil
}

func ps2fields(ps []dashboardCreateParams) []*dashboardFieldsParams {
	out := make([]*dashboardFieldsParams, len(ps))
	for i := range ps {
		out[i] = &ps[i].dashboardFieldsParams
	}
	return out
}

func (s *Server) dashboardUpdate(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	var ps []dashboardUpdateParams
	if err := decodeRuledObjects(c.params, &ps); err != nil {
		return nil, err
	}
	if err := uniq("/", len(ps), []string{"dashboardid"}, func(i int) []string { return []string{id(ps[i].DashboardID.Value)} }); err != nil {
		return nil, err
	}
	if err := uniqGiven("/", len(ps), "name", func(i int) opt[zstr] { return ps[i].Name }); err != nil {
		return nil, err
	}
	for i := range ps {
		if err := ps[i].uniqShares("/" + strconv.Itoa(i+1)); err != nil {
			return nil, err
		}
	}
	all, err := acc.Dashboards(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	v, err := s.dashboardViewer(ctx, c)
	if err != nil {
		return nil, err
	}
	ds := make([]auth.Dashboard, len(ps))
	fields := make([]*dashboardFieldsParams, len(ps))
	ids := make([]uint64, len(ps))
	for i := range ps {
		j := slices.IndexFunc(all, func(d auth.Dashboard) bool { return d.ID == ps[i].DashboardID.Value })
		if j < 0 || !v.may(&all[j], true) {
			return nil, errNoPermissions
		}
		d := all[j]
		d.Pages = slices.Clone(d.Pages)
		ps[i].apply(&d)
		if ps[i].Pages.Set {
			pages, err := updatePages(all[j].Pages, ps[i].Pages.Value)
			if err != nil {
				return nil, err
			}
			d.Pages = pages
		}
		ds[i], fields[i], ids[i] = d, &ps[i].dashboardFieldsParams, d.ID
	}
	if err := s.checkDashboards(ctx, c, acc, all, ds, fields); err != nil {
		return nil, err
	}
	if err := acc.UpdateDashboards(ctx, ds); err != nil {
		return nil, s.dashboardStoreErr(err, c)
	}
	return idResult("dashboardids", ids), nil
}

// updatePages is an update's pages: those with an ID must be the
// dashboard's and keep what is not given, widgets likewise.
func updatePages(have []auth.DashboardPage, want []updatePageParam) ([]auth.DashboardPage, error) {
	widgets := map[uint64]auth.Widget{}
	for _, p := range have {
		for _, w := range p.Widgets {
			widgets[w.ID] = w
		}
	}
	out := make([]auth.DashboardPage, 0, len(want))
	for _, pp := range want {
		page := auth.DashboardPage{Widgets: []auth.Widget{}}
		if pp.PageID.Set {
			k := slices.IndexFunc(have, func(p auth.DashboardPage) bool { return p.ID == pp.PageID.Value })
			if k < 0 {
				return nil, errNoPermissions
			}
			page = have[k]
		}
		if pp.Name.Set {
			page.Name = string(pp.Name.Value)
		}
		if pp.DisplayPeriod.Set {
			page.DisplayPeriod = int(pp.DisplayPeriod.Value)
		}
		if pp.Widgets.Set {
			page.Widgets = make([]auth.Widget, 0, len(pp.Widgets.Value))
			for _, w := range pp.Widgets.Value {
				nw := newWidget()
				if w.WidgetID.Set {
					old, ok := widgets[w.WidgetID.Value]
					if !ok {
						return nil, errNoPermissions
					}
					nw = old
				} else if !w.Type.Set {
					return nil, errParams(`Invalid parameter "widgets": the parameter "type" is missing.`)
				}
				applyWidget(&nw, w.Type, w.Name, w.X, w.Y, w.Width, w.Height, w.ViewMode, w.Fields)
				page.Widgets = append(page.Widgets, nw)
			}
		}
		out = append(out, page)
	}
	return out, nil
}

func (s *Server) dashboardDelete(ctx context.Context, c *call) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	all, err := acc.Dashboards(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	v, err := s.dashboardViewer(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, did := range list {
		j := slices.IndexFunc(all, func(d auth.Dashboard) bool { return d.ID == did })
		if j < 0 || !v.may(&all[j], true) {
			return nil, errNoPermissions
		}
	}
	if err := acc.DeleteDashboards(ctx, list); err != nil {
		return nil, s.dashboardStoreErr(err, c)
	}
	return idResult("dashboardids", list), nil
}

func (s *Server) dashboardStoreErr(err error, c *call) error {
	if errors.Is(err, auth.ErrNotFound) {
		return errNoPermissions
	}
	return s.accountErr(err, "/", c)
}

// checkDashboards makes 6.0's checks after the validator, in its order:
// names, owner, shares, the widgets' places, the objects their fields
// name. all is every stored dashboard (an update's own keeps its name).
func (s *Server) checkDashboards(ctx context.Context, c *call, acc *auth.Store, all, ds []auth.Dashboard, ps []*dashboardFieldsParams) error {
	for i := range ds {
		if !ps[i].Name.Set {
			continue
		}
		for j := range all {
			if all[j].Name == ds[i].Name && all[j].ID != ds[i].ID {
				return errParams(`Dashboard "%s" already exists.`, ds[i].Name)
			}
		}
	}
	users, err := acc.Users(ctx)
	if err != nil {
		return s.accountErr(err, "/", c)
	}
	groups, err := acc.UserGroups(ctx)
	if err != nil {
		return s.accountErr(err, "/", c)
	}
	userOK := func(uid uint64) bool {
		return slices.ContainsFunc(users, func(u auth.User) bool { return u.ID == uid })
	}
	for i := range ds {
		p := ps[i]
		if p.UserID.Set {
			if p.UserID.Value != c.user.ID && c.user.Role != RoleSuperAdmin {
				return errParams("Only super admins can set dashboard owner.")
			}
			if !userOK(p.UserID.Value) {
				return errParams(`User with ID "%s" is not available.`, id(p.UserID.Value))
			}
		}
		for _, u := range p.Users.Value {
			if !userOK(u.UserID.Value) {
				return errParams(`User with ID "%s" is not available.`, id(u.UserID.Value))
			}
		}
		for _, g := range p.UserGroups.Value {
			if !slices.ContainsFunc(groups, func(ug auth.UserGroup) bool { return ug.ID == g.UsrgrpID.Value }) {
				return errParams(`User group with ID "%s" is not available.`, id(g.UsrgrpID.Value))
			}
		}
	}
	for i := range ds {
		if err := checkWidgetPlaces(&ds[i]); err != nil {
			return err
		}
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return err
	}
	for i := range ds {
		for _, pg := range ds[i].Pages {
			for _, w := range pg.Widgets {
				for _, f := range w.Fields {
					if err := s.checkWidgetField(a, f); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// checkWidgetPlaces refuses a widget beyond the grid or over another.
func checkWidgetPlaces(d *auth.Dashboard) error {
	for pi, pg := range d.Pages {
		for wi, w := range pg.Widgets {
			if w.X+w.Width > dashboardColumns || w.Y+w.Height > dashboardRows {
				return errParams(`Widget at X:%d, Y:%d on page #%d of dashboard "%s" is out of bounds.`, w.X, w.Y, pi+1, d.Name)
			}
			for _, o := range pg.Widgets[:wi] {
				if w.X < o.X+o.Width && o.X < w.X+w.Width && w.Y < o.Y+o.Height && o.Y < w.Y+w.Height {
					return errParams(`Overlapping widgets at X:%d, Y:%d on page #%d of dashboard "%s".`, w.X, w.Y, pi+1, d.Name)
				}
			}
		}
	}
	return nil
}

// checkWidgetField refuses a field naming an object the caller may not
// read or that does not exist.
func (s *Server) checkWidgetField(a access, f auth.WidgetField) error {
	what, ok := wfObject[f.Type]
	if !ok {
		return nil
	}
	oid, _ := strconv.ParseUint(f.Value, 10, 64)
	var found bool
	snap := s.opts.Catalog.Snapshot()
	switch f.Type {
	case wfGroup:
		found = snap.GroupByID(oid) != nil && a.seesGroup(oid, false)
	case wfHost:
		h := snap.HostByID(oid)
		found = h != nil && a.canRead(h)
	case wfItem:
		it := snap.Item(oid)
		found = it != nil && it.Host != nil && a.canRead(it.Host)
	case wfGraph:
		g := snap.Graph(oid)
		if g != nil {
			h := snap.HostByID(cmp.Or(g.HostID, g.TemplateID))
			found = h != nil && a.canRead(h)
		}
	case wfItemProto:
		_, r := snap.ItemPrototype(oid)
		found = r != nil && r.Host != nil && a.canRead(r.Host)
	case wfGraphProt:
		_, r := snap.GraphPrototype(oid)
		found = r != nil && r.Host != nil && a.canRead(r.Host)
	case wfService:
		found = s.opts.Services != nil && s.opts.Services.Config().Service(oid) != nil
	case wfSLA:
		found = s.opts.Services != nil && s.opts.Services.Config().SLA(oid) != nil
	}
	if !found {
		return errParams(`%s with ID "%s" is not available.`, what, f.Value)
	}
	return nil
}
