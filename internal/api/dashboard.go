package api

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/auth"
)

// dashboard.get, .create, .update and .delete, as Zabbix 6.0's
// CDashboard: global dashboards of pages of widgets on a 24×64 grid,
// owned by a user, private or public, shared with users and user groups
// read-only (2) or read-write (3). They are kept in the auth store,
// beside the users and groups they are shared with (auth.Dashboard).
// Checked as 6.0's validator checks them, in its words (recorded from
// 6.0.14: the conformance case "dashboards"). Who sees one: a super
// admin every dashboard; anybody else the ones they own, the public ones
// and those shared with them or one of their groups; who changes one:
// a super admin, its owner, and a read-write share. Widget fields that
// name objects (host groups, hosts, items, graphs, services, SLAs) must
// name ones the caller may read; item prototypes, graph prototypes and
// maps Peregrine does not have, so a field naming one is refused as
// 6.0 refuses an ID that does not exist.

func (s *Server) registerDashboards() {
	s.methods["dashboard.get"] = &method{role: RoleUser, call: s.dashboardGet}
	s.methods["dashboard.create"] = &method{role: RoleUser, call: s.dashboardCreate}
	s.methods["dashboard.update"] = &method{role: RoleUser, call: s.dashboardUpdate}
	s.methods["dashboard.delete"] = &method{role: RoleUser, call: s.dashboardDelete}
}

// dashboardGetParams are dashboard.get's parameters, in 6.0's order.
type dashboardGetParams struct {
	DashboardIDs     opt[ids]                 `json:"dashboardids"`
	Filter           opt[map[string][]string] `json:"filter" as:"filter" in:"dashboardid,name,userid,private"`
	Search           opt[map[string][]string] `json:"search" as:"filter" in:"name"`
	SearchByAny      opt[bool]                `json:"searchByAny"`
	StartSearch      opt[bool]                `json:"startSearch" as:"flag"`
	ExcludeSearch    opt[bool]                `json:"excludeSearch" as:"flag"`
	SearchWildcards  opt[bool]                `json:"searchWildcardsEnabled"`
	Output           opt[zoutput]             `json:"output" in:"dashboardid,name,userid,private,display_period,auto_start"`
	SelectPages      opt[zoutput]             `json:"selectPages" zbx:"null" in:"dashboard_pageid,name,display_period,widgets"`
	SelectUsers      opt[zoutput]             `json:"selectUsers" zbx:"null" in:"userid,permission"`
	SelectUserGroups opt[zoutput]             `json:"selectUserGroups" zbx:"null" in:"usrgrpid,permission"`
	CountOutput      opt[bool]                `json:"countOutput" as:"flag"`
	SortField        opt[zwords]              `json:"sortfield" in:"dashboardid,name"`
	SortOrder        opt[zorder]              `json:"sortorder"`
	Limit            opt[int64]               `json:"limit" in:"1:2147483647" zbx:"null"`
	Editable         opt[bool]                `json:"editable"`
	PreserveKeys     opt[bool]                `json:"preservekeys"`
}

// dashboardFields are a dashboard's members, in 6.0's order; output
// "extend" adds uuid, which an output list cannot name.
var dashboardFields = []string{"dashboardid", "name", "userid", "private", "display_period", "auto_start"}

func dashboardText(d *auth.Dashboard, f string) string {
	switch f {
	case "dashboardid":
		return id(d.ID)
	case "name":
		return d.Name
	case "userid":
		return id(d.UserID)
	case "private":
		return strconv.Itoa(d.Private)
	case "display_period":
		return strconv.Itoa(d.DisplayPeriod)
	case "auto_start":
		return strconv.Itoa(d.AutoStart)
	case "uuid":
		return d.UUID
	}
	return ""
}

// dashboardViewer is what the caller may do with dashboards: their ID
// and user groups.
type dashboardViewer struct {
	super  bool
	user   uint64
	groups map[uint64]bool
}

func (s *Server) dashboardViewer(ctx context.Context, c *call) (dashboardViewer, error) {
	v := dashboardViewer{super: c.user.Role == RoleSuperAdmin, user: c.user.ID, groups: map[uint64]bool{}}
	if v.super {
		return v, nil
	}
	acc, err := s.accounts()
	if err != nil {
		return v, err
	}
	gs, err := acc.UserGroups(ctx)
	if err != nil {
		return v, s.accountErr(err, "/", c)
	}
	for _, g := range gs {
		if slices.Contains(g.UserIDs, c.user.ID) {
			v.groups[g.ID] = true
		}
	}
	return v, nil
}

// may reports whether the viewer reads (or, with write, changes) d.
func (v dashboardViewer) may(d *auth.Dashboard, write bool) bool {
	if v.super || d.UserID == v.user {
		return true
	}
	need := auth.PermRead
	if write {
		need = auth.PermReadWrite
	} else if d.Private == 0 {
		return true
	}
	for _, sh := range d.Users {
		if sh.ID == v.user && sh.Permission >= need {
			return true
		}
	}
	for _, sh := range d.UserGroups {
		if v.groups[sh.ID] && sh.Permission >= need {
			return true
		}
	}
	return false
}

func (s *Server) dashboardGet(ctx context.Context, c *call) (any, error) {
	var p dashboardGetParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	acc, err := s.accounts()
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
	search := searchOpts{terms: p.Search.Value, byAny: p.SearchByAny.Value, start: p.StartSearch.Value, wildcards: p.SearchWildcards.Value}
	var list []*auth.Dashboard
	for i := range all {
		d := &all[i]
		field := func(f string) string { return dashboardText(d, f) }
		switch {
		case !v.may(d, p.Editable.Value),
			p.DashboardIDs.Given() && !slices.Contains(p.DashboardIDs.Value, d.ID),
			!filterMatch(p.Filter.Value, field),
			!search.match(field):
			continue
		}
		list = append(list, d)
	}
	slices.SortStableFunc(list, func(a, b *auth.Dashboard) int {
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
		for _, f := range dashboardFields {
			if p.Output.Value.has(f) {
				o[f] = dashboardText(d, f)
			}
		}
		if p.Output.Value.fields == nil && !p.Output.Value.count {
			o["uuid"] = d.UUID
		}
		if sel := &p.SelectPages; sel.Given() {
			o["pages"] = selectList(sel.Value, len(d.Pages), func(i int, f string) any {
				pg := &d.Pages[i]
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
		if sel := &p.SelectUsers; sel.Given() {
			o["users"] = selectList(sel.Value, len(d.Users), func(i int, f string) any {
				if f == "userid" {
					return id(d.Users[i].ID)
				}
				return strconv.Itoa(int(d.Users[i].Permission))
			}, "userid", "permission")
		}
		if sel := &p.SelectUserGroups; sel.Given() {
			o["userGroups"] = selectList(sel.Value, len(d.UserGroups), func(i int, f string) any {
				if f == "usrgrpid" {
					return id(d.UserGroups[i].ID)
				}
				return strconv.Itoa(int(d.UserGroups[i].Permission))
			}, "usrgrpid", "permission")
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

func widgetsJSON(ws []auth.Widget) []object {
	out := make([]object, 0, len(ws))
	for _, w := range ws {
		fields := make([]object, 0, len(w.Fields))
		for _, f := range w.Fields {
			fields = append(fields, object{"type": strconv.Itoa(f.Type), "name": f.Name, "value": f.Value})
		}
		out = append(out, object{"widgetid": id(w.ID), "type": w.Type, "name": w.Name,
			"x": strconv.Itoa(w.X), "y": strconv.Itoa(w.Y), "width": strconv.Itoa(w.Width),
			"height": strconv.Itoa(w.Height), "view_mode": strconv.Itoa(w.ViewMode), "fields": fields})
	}
	return out
}

// Widget field types that name objects (6.0's numbers).
const (
	wfInt       = 0
	wfStr       = 1
	wfGroup     = 2
	wfHost      = 3
	wfItem      = 4
	wfItemProto = 5
	wfGraph     = 6
	wfGraphProt = 7
	wfMap       = 8
	wfService   = 9
	wfSLA       = 10
)

// wfObject is how 6.0 names the object of a field type in "... with ID
// "x" is not available.".
var wfObject = map[int]string{wfGroup: "Host group", wfHost: "Host", wfItem: "Item", wfItemProto: "Item prototype",
	wfGraph: "Graph", wfGraphProt: "Graph prototype", wfMap: "Map", wfService: "Service", wfSLA: "SLA"}

// rawValue keeps a member's JSON for a check that depends on another
// member (a widget field's value, by its type).
type rawValue []byte

func (r *rawValue) decodeParam(raw []byte, _ *fieldCtx) error {
	*r = append(rawValue(nil), raw...)
	return nil
}

// widgetFieldParam is one field of a widget.
type widgetFieldParam struct {
	Type  opt[int64]    `json:"type" in:"0,1,2,3,4,5,6,7,8,9,10"`
	Name  opt[zstr]     `json:"name" in:"0:255"`
	Value opt[rawValue] `json:"value"`
	text  string
}

func (*widgetFieldParam) required() []string { return []string{"type", "value"} }

// afterField reads the value as its type says: an integer, a string,
// or an object's ID.
func (f *widgetFieldParam) afterField(name string) error {
	if name != "value" {
		return nil
	}
	raw := []byte(f.Value.Value)
	switch f.Type.Value {
	case wfInt:
		var n int64
		if err := int32Param(raw, &fieldRule{}, &n); err != nil {
			return errors.New(err.(*valueError).msg)
		}
		f.text = strconv.FormatInt(n, 10)
	case wfStr:
		s, ok := strValue(raw)
		if jsonKindOf(raw) != 's' || !ok {
			return errors.New("a character string is expected")
		}
		if len([]rune(s)) > 255 {
			return errors.New("value is too long")
		}
		f.text = s
	default:
		v, reason := oneIDParam(raw)
		if reason != "" {
			return errors.New(reason)
		}
		f.text = id(v)
	}
	return nil
}

type userShareParam struct {
	UserID     opt[uint64] `json:"userid"`
	Permission opt[int64]  `json:"permission" in:"2,3"`
}

func (*userShareParam) required() []string { return []string{"userid", "permission"} }

type groupShareParam struct {
	UsrgrpID   opt[uint64] `json:"usrgrpid"`
	Permission opt[int64]  `json:"permission" in:"2,3"`
}

func (*groupShareParam) required() []string { return []string{"usrgrpid", "permission"} }

// dashboardFieldsParams are the members dashboard.create and .update
// share, in 6.0's order.
type dashboardFieldsParams struct {
	Name          opt[zstr]                   `json:"name" in:"1:255"`
	UserID        opt[uint64]                 `json:"userid"`
	Private       opt[int64]                  `json:"private" in:"0,1"`
	DisplayPeriod opt[int64]                  `json:"display_period" in:"10,30,60,120,600,1800,3600"`
	AutoStart     opt[int64]                  `json:"auto_start" in:"0,1"`
	Users         opt[zobjs[userShareParam]]  `json:"users"`
	UserGroups    opt[zobjs[groupShareParam]] `json:"userGroups"`
}

type dashboardCreateParams struct {
	dashboardFieldsParams
	Pages opt[zobjs[createPageParam]] `json:"pages" in:"notempty"`
}

func (*dashboardCreateParams) required() []string { return []string{"name", "pages"} }

// createPageParam is a page of dashboard.create: no IDs.
type createPageParam struct {
	Name          opt[zstr]                     `json:"name" in:"0:255"`
	DisplayPeriod opt[int64]                    `json:"display_period" in:"0,10,30,60,120,600,1800,3600"`
	Widgets       opt[zobjs[createWidgetParam]] `json:"widgets"`
}

// createWidgetParam is a widget of dashboard.create: no ID.
type createWidgetParam struct {
	Type     opt[zstr]                    `json:"type" in:"1:255"`
	Name     opt[zstr]                    `json:"name" in:"0:255"`
	X        opt[int64]                   `json:"x" in:"0:23"`
	Y        opt[int64]                   `json:"y" in:"0:62"`
	Width    opt[int64]                   `json:"width" in:"1:24"`
	Height   opt[int64]                   `json:"height" in:"2:32"`
	ViewMode opt[int64]                   `json:"view_mode" in:"0,1"`
	Fields   opt[zobjs[widgetFieldParam]] `json:"fields"`
}

func (*createWidgetParam) required() []string { return []string{"type"} }

type dashboardUpdateParams struct {
	DashboardID opt[uint64] `json:"dashboardid"`
	dashboardFieldsParams
	Pages opt[zobjs[updatePageParam]] `json:"pages" in:"notempty"`
}

func (*dashboardUpdateParams) required() []string { return []string{"dashboardid"} }

// updatePageParam is a page of dashboard.update: an ID keeps a page.
type updatePageParam struct {
	PageID        opt[uint64]                   `json:"dashboard_pageid"`
	Name          opt[zstr]                     `json:"name" in:"0:255"`
	DisplayPeriod opt[int64]                    `json:"display_period" in:"0,10,30,60,120,600,1800,3600"`
	Widgets       opt[zobjs[updateWidgetParam]] `json:"widgets"`
}

// updateWidgetParam is a widget of dashboard.update: an ID keeps a
// widget and the members not given.
type updateWidgetParam struct {
	WidgetID opt[uint64]                  `json:"widgetid"`
	Type     opt[zstr]                    `json:"type" in:"1:255"`
	Name     opt[zstr]                    `json:"name" in:"0:255"`
	X        opt[int64]                   `json:"x" in:"0:23"`
	Y        opt[int64]                   `json:"y" in:"0:62"`
	Width    opt[int64]                   `json:"width" in:"1:24"`
	Height   opt[int64]                   `json:"height" in:"2:32"`
	ViewMode opt[int64]                   `json:"view_mode" in:"0,1"`
	Fields   opt[zobjs[widgetFieldParam]] `json:"fields"`
}

// applyWidget sets the given members on w (a new widget's defaults, or
// the stored one).
func applyWidget(w *auth.Widget, typ, name opt[zstr], x, y, width, height, viewMode opt[int64], fields opt[zobjs[widgetFieldParam]]) {
	if typ.Set {
		w.Type = string(typ.Value)
	}
	if name.Set {
		w.Name = string(name.Value)
	}
	for _, m := range []struct {
		o opt[int64]
		p *int
	}{{x, &w.X}, {y, &w.Y}, {width, &w.Width}, {height, &w.Height}, {viewMode, &w.ViewMode}} {
		if m.o.Set {
			*m.p = int(m.o.Value)
		}
	}
	if fields.Set {
		w.Fields = make([]auth.WidgetField, 0, len(fields.Value))
		for _, f := range fields.Value {
			w.Fields = append(w.Fields, auth.WidgetField{Type: int(f.Type.Value), Name: string(f.Name.Value), Value: f.text})
		}
	}
}

// newWidget is a widget with 6.0's defaults: 1×2 at 0,0.
func newWidget() auth.Widget { return auth.Widget{Width: 1, Height: 2} }

// apply sets the given dashboard members on d.
func (p *dashboardFieldsParams) apply(d *auth.Dashboard) {
	if p.Name.Set {
		d.Name = string(p.Name.Value)
	}
	if p.UserID.Set {
		d.UserID = p.UserID.Value
	}
	if p.Private.Set {
		d.Private = int(p.Private.Value)
	}
	if p.DisplayPeriod.Set {
		d.DisplayPeriod = int(p.DisplayPeriod.Value)
	}
	if p.AutoStart.Set {
		d.AutoStart = int(p.AutoStart.Value)
	}
	if p.Users.Set {
		d.Users = nil
		for _, u := range p.Users.Value {
			d.Users = append(d.Users, auth.DashboardShare{ID: u.UserID.Value, Permission: auth.Permission(u.Permission.Value)})
		}
	}
	if p.UserGroups.Set {
		d.UserGroups = nil
		for _, g := range p.UserGroups.Value {
			d.UserGroups = append(d.UserGroups, auth.DashboardShare{ID: g.UsrgrpID.Value, Permission: auth.Permission(g.Permission.Value)})
		}
	}
}

// uniqShares is the validator's second pass over the shares.
func (p *dashboardFieldsParams) uniqShares(path string) error {
	us := p.Users.Value
	if err := uniq(path+"/users", len(us), []string{"userid"}, func(i int) []string { return []string{id(us[i].UserID.Value)} }); err != nil {
		return err
	}
	gs := p.UserGroups.Value
	return uniq(path+"/userGroups", len(gs), []string{"usrgrpid"}, func(i int) []string { return []string{id(gs[i].UsrgrpID.Value)} })
}
