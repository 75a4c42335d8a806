package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// graph.create, graph.update and graph.delete as Zabbix 6.0's CGraph
// checks them with its own code (recorded from 6.0.14): [] and {} are
// no graphs (`{"graphids": []}`), members it does not know are ignored,
// its own texts ("Missing items for graph", `No "color" given for
// graph.`...). Peregrine also refuses what 6.0 stores without a check
// (a width of 5, a graphtype of 7, items of two hosts), in the
// catalog's words: docs/compat.md lists these.

// numParam is a number given as a JSON number or a numeric string, as
// PHP takes one.
type numParam float64

func (n *numParam) decodeParam(raw []byte, _ *fieldCtx) error {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return &valueError{msg: "a number is expected"}
		}
	} else {
		s = string(raw)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return &valueError{msg: "a number is expected"}
	}
	*n = numParam(f)
	return nil
}

// gitemParams is one of a graph's "gitems".
type gitemParams struct {
	GItemID   opt[uint64]  `json:"gitemid"`
	ItemID    opt[uint64]  `json:"itemid"`
	Color     opt[string]  `json:"color"`
	DrawType  opt[int64]   `json:"drawtype"`
	SortOrder opt[int64]   `json:"sortorder"`
	YAxisSide opt[int64]   `json:"yaxisside"`
	CalcFnc   opt[int64]   `json:"calc_fnc"`
	Type      opt[int64]   `json:"type"`
	GraphID   opt[ignored] `json:"graphid"`
}

// graphParams is a graph object of graph.create and graph.update.
type graphParams struct {
	GraphID        opt[uint64]        `json:"graphid"`
	Name           opt[string]        `json:"name"`
	Width          opt[int64]         `json:"width"`
	Height         opt[int64]         `json:"height"`
	YAxisMin       opt[numParam]      `json:"yaxismin"`
	YAxisMax       opt[numParam]      `json:"yaxismax"`
	ShowWorkPeriod opt[int64]         `json:"show_work_period"`
	ShowTriggers   opt[int64]         `json:"show_triggers"`
	GraphType      opt[int64]         `json:"graphtype"`
	ShowLegend     opt[int64]         `json:"show_legend"`
	Show3D         opt[int64]         `json:"show_3d"`
	PercentLeft    opt[numParam]      `json:"percent_left"`
	PercentRight   opt[numParam]      `json:"percent_right"`
	YMinType       opt[int64]         `json:"ymin_type"`
	YMaxType       opt[int64]         `json:"ymax_type"`
	YMinItemID     opt[uint64]        `json:"ymin_itemid"`
	YMaxItemID     opt[uint64]        `json:"ymax_itemid"`
	TemplateID     opt[uint64]        `json:"templateid"`
	UUID           opt[string]        `json:"uuid"`
	GItems         opt[[]gitemParams] `json:"gitems" as:"objects"`
}

// apply puts the members given onto g (a new graph's defaults, or the
// graph updated); create numbers the items' sortorder by position where
// it is not given, as 6.0's create does.
func (p *graphParams) apply(g *catalog.Graph, create bool) {
	f := &g.GraphFields
	setInt := func(o opt[int64], dst *int) {
		if o.Given() {
			*dst = int(o.Value)
		}
	}
	setNum := func(o opt[numParam], dst *float64) {
		if o.Given() {
			*dst = float64(o.Value)
		}
	}
	if p.Name.Given() {
		g.Name = p.Name.Value
	}
	setInt(p.Width, &f.Width)
	setInt(p.Height, &f.Height)
	setNum(p.YAxisMin, &f.YAxisMin)
	setNum(p.YAxisMax, &f.YAxisMax)
	setInt(p.ShowWorkPeriod, &f.ShowWorkPeriod)
	setInt(p.ShowTriggers, &f.ShowTriggers)
	setInt(p.GraphType, &f.GraphType)
	setInt(p.ShowLegend, &f.ShowLegend)
	setInt(p.Show3D, &f.Show3D)
	setNum(p.PercentLeft, &f.PercentLeft)
	setNum(p.PercentRight, &f.PercentRight)
	setInt(p.YMinType, &f.YMinType)
	setInt(p.YMaxType, &f.YMaxType)
	if p.YMinItemID.Given() {
		f.YMinItemID = p.YMinItemID.Value
	}
	if p.YMaxItemID.Given() {
		f.YMaxItemID = p.YMaxItemID.Value
	}
	if f.YMinType != 2 {
		f.YMinItemID = 0
	}
	if f.YMaxType != 2 {
		f.YMaxItemID = 0
	}
	if p.UUID.Given() {
		g.UUID = p.UUID.Value
	}
	if !p.GItems.Given() {
		return
	}
	var keep map[uint64]bool
	if !create {
		keep = map[uint64]bool{}
		for _, gi := range g.Items {
			keep[gi.GItemID] = true
		}
	}
	items := make([]catalog.GraphItem, len(p.GItems.Value))
	for j, q := range p.GItems.Value {
		gi := catalog.GraphItem{ItemID: q.ItemID.Value, Color: q.Color.Value, CalcFnc: 2}
		if q.GItemID.Given() && keep[q.GItemID.Value] {
			gi.GItemID = q.GItemID.Value
		}
		if create {
			gi.SortOrder = j
		}
		setInt(q.DrawType, &gi.DrawType)
		setInt(q.SortOrder, &gi.SortOrder)
		setInt(q.YAxisSide, &gi.YAxisSide)
		setInt(q.CalcFnc, &gi.CalcFnc)
		setInt(q.Type, &gi.Type)
		items[j] = gi
	}
	g.Items = items
}

// checkGraph makes 6.0's own checks of a graph object, in its order and
// words; name is the graph's name (the stored one on an update).
func checkGraphParams(snap *catalog.Snapshot, i int, p *graphParams, name string, create bool) error {
	switch {
	case create && !p.Name.Given():
		return errParams(`Missing "name" field for graph.`)
	case p.Name.Given() && p.Name.Value == "":
		return empty(i, "name")
	case create && p.TemplateID.Given():
		return errParams(`Cannot set "templateid" for graph "%s".`, name)
	case (create || p.GItems.Set) && len(p.GItems.Value) == 0:
		return errParams(`Missing items for graph "%s".`, name)
	}
	for _, q := range p.GItems.Value {
		switch {
		case !q.ItemID.Given():
			return errParams(`Missing "itemid" field for item.`)
		case !q.Color.Given():
			return errParams(`No "color" given for graph.`)
		case !colorRE.MatchString(q.Color.Value):
			return errParams(`Color "%s" is not correct: expecting hexadecimal color code (6 symbols).`, q.Color.Value)
		}
	}
	templated, other := false, false
	host := uint64(0)
	for _, q := range p.GItems.Value {
		it := snap.AnyItem(q.ItemID.Value)
		if it == nil {
			return errParams("No permissions to referred object or it does not exist!")
		}
		if it.ValueType != history.Float && it.ValueType != history.Uint {
			return errParams(`Cannot add a non-numeric item "%s" to graph "%s".`, it.Name, name)
		}
		if h := snap.HostOrTemplate(it.HostID); h != nil && h.IsTemplate {
			templated = true
		}
		if host != 0 && host != it.HostID {
			other = true
		}
		host = it.HostID
	}
	if templated && other {
		return errParams(`Graph "%s" with templated items cannot contain items from other hosts.`, name)
	}
	for _, y := range []struct {
		typ  opt[int64]
		id   opt[uint64]
		name string
	}{{p.YMinType, p.YMinItemID, "ymin_itemid"}, {p.YMaxType, p.YMaxItemID, "ymax_itemid"}} {
		if y.typ.Given() && y.typ.Value == 2 {
			if !y.id.Given() {
				return errParams(`Invalid parameter "%s": a number is expected.`, y.name)
			}
			if snap.AnyItem(y.id.Value) == nil {
				return errParams("No permissions to referred object or it does not exist!")
			}
		}
	}
	return nil
}

func (w *configWriter) graphCreate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return idResult("graphids", nil), nil // recorded from 6.0.14
	}
	var ps []graphParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	gs := make([]catalog.Graph, len(ps))
	var hosts []uint64
	for i := range ps {
		p := &ps[i]
		if err := checkGraphParams(snap, i, p, p.Name.Value, true); err != nil {
			return nil, err
		}
		g := catalog.Graph{GraphFields: catalog.DefaultGraphFields}
		p.apply(&g, true)
		gs[i] = g
		host := snap.AnyItem(g.Items[0].ItemID).HostID
		if graphNameOnHost(snap, host, g.Name, 0) { // a graph prototype's name too (graphprototype.go)
			return nil, errParams(`Graph with name "%s" already exists in graphs or graph prototypes.`, g.Name)
		}
		hosts = append(hosts, host)
		for j := range ps[:i] {
			if gs[j].Name == g.Name && hosts[j] == host {
				return nil, errParams(`More than one graph with name "%s" within host.`, g.Name)
			}
		}
	}
	var ids []uint64
	err := w.edit(ctx, c, "graphid", hostsWritable(hosts), func(e *catalog.Edit) (err error) {
		ids, err = e.CreateGraphs(gs)
		return graphNameTaken(err)
	})
	if err != nil {
		return nil, graphError(err)
	}
	return idResult("graphids", ids), nil
}

func (w *configWriter) graphUpdate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return idResult("graphids", nil), nil // recorded from 6.0.14
	}
	var ps []graphParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	gs := make([]catalog.Graph, len(ps))
	ids := make([]uint64, len(ps))
	var hosts []uint64
	for i := range ps {
		p := &ps[i]
		cur := snap.Graph(p.GraphID.Value)
		if !p.GraphID.Given() || cur == nil {
			return nil, errParams("No permissions to referred object or it does not exist!")
		}
		if h := snap.HostOrTemplate(cur.HostID); h == nil || !a.canWrite(h) {
			return nil, errParams("No permissions to referred object or it does not exist!")
		}
		if cur.Discovery != nil {
			return nil, &Error{Code: codeApplication, Data: "Cannot update a discovered graph."} // recorded from 6.0.14
		}
		if cur.TemplateID != 0 {
			// Recorded from 6.0.14: the name given, else the stored one.
			return nil, errParams(`Cannot update a templated graph "%s".`, cmp.Or(p.Name.Value, cur.Name))
		}
		if err := checkGraphParams(snap, i, p, cur.Name, false); err != nil {
			return nil, err
		}
		g := *cur
		p.apply(&g, false)
		gs[i], ids[i] = g, g.ID
		hosts = append(hosts, cur.HostID)
		if len(g.Items) > 0 {
			hosts = append(hosts, snap.AnyItem(g.Items[0].ItemID).HostID)
		}
	}
	err = w.edit(ctx, c, "graphid", hostsWritable(hosts), func(e *catalog.Edit) error { return graphNameTaken(e.UpdateGraphs(gs)) })
	if err != nil {
		return nil, graphError(err)
	}
	return idResult("graphids", ids), nil
}

func (w *configWriter) graphDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	for _, gid := range ids {
		g := snap.Graph(gid)
		if g == nil {
			return nil, errNoPermissions
		}
		if h := snap.HostOrTemplate(g.HostID); h == nil || !a.canWrite(h) {
			return nil, errNoPermissions
		}
		if g.TemplateID != 0 {
			return nil, errParams("Cannot delete templated graph.") // recorded from 6.0.14
		}
	}
	if err := w.edit(ctx, c, "graphid", nil, func(e *catalog.Edit) error { return e.DeleteGraphs(ids) }); err != nil {
		return nil, graphError(err)
	}
	return idResult("graphids", ids), nil
}

// graphError words the catalog's refusals of a graph as 6.0 does where
// it has words for them (a name taken); others keep the catalog's,
// which name the member.
func graphError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		err = j.Unwrap()[0]
	}
	var fe *catalog.FieldError
	if errors.As(err, &fe) {
		if msg := fe.Err.Error(); strings.HasPrefix(msg, "graph with name ") {
			return errParams("G%s.", msg[1:])
		}
	}
	return editError(err, "graphid")
}

// graphNameTaken words the catalog's refusal of a graph's name taken on
// its host as 6.0 does (recorded from 6.0.14); other errors are err.
func graphNameTaken(err error) error {
	var fe *catalog.FieldError
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		err = j.Unwrap()[0]
	}
	if errors.As(err, &fe) {
		if msg := fe.Err.Error(); strings.HasPrefix(msg, "graph with name ") {
			return errParams("G%s.", msg[1:])
		}
	}
	return err
}

func (w *configWriter) registerGraphs() {
	w.s.methods["graph.create"] = &method{role: RoleAdmin, call: w.graphCreate}
	w.s.methods["graph.update"] = &method{role: RoleAdmin, call: w.graphUpdate}
	w.s.methods["graph.delete"] = &method{role: RoleAdmin, call: w.graphDelete}
	w.registerGraphPrototypes() // graphprototype_write.go
}
