package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/peregrine-mon/peregrine/internal/history"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Graph is a Zabbix 6.0 graph of a host or template: its fields with
// Zabbix's numbers (graph.get's), and its items (gitems). HostID is the
// host or template whose items it shows; a template's graph is copied
// to what links the template (TemplateID: the template's graph the
// copy follows). It MUST NOT be modified.
type Graph struct {
	ID         uint64 `json:"-"`
	HostID     uint64 `json:"-"`
	TemplateID uint64 `json:"-"`
	UUID       string `json:"-"` // templates' graphs only, as in 6.0
	Name       string `json:"-"`
	GraphFields
	Items []GraphItem `json:"gitems"`
	// Discovery is set on a discovered graph (flags 4): the rule and
	// graph prototype it came from (graph_proto_apply.go).
	Discovery *Discovery `json:"discovery,omitempty"`
}

// GraphFields are a graph's settings, with graph.get's names and
// Zabbix 6.0's defaults (DefaultGraphFields).
type GraphFields struct {
	Width          int     `json:"width"`
	Height         int     `json:"height"`
	YAxisMin       float64 `json:"yaxismin"`
	YAxisMax       float64 `json:"yaxismax"`
	ShowWorkPeriod int     `json:"show_work_period"`
	ShowTriggers   int     `json:"show_triggers"`
	GraphType      int     `json:"graphtype"` // 0 normal, 1 stacked, 2 pie, 3 exploded
	ShowLegend     int     `json:"show_legend"`
	Show3D         int     `json:"show_3d"`
	PercentLeft    float64 `json:"percent_left"`
	PercentRight   float64 `json:"percent_right"`
	YMinType       int     `json:"ymin_type"` // 0 calculated, 1 fixed, 2 item
	YMaxType       int     `json:"ymax_type"`
	YMinItemID     uint64  `json:"ymin_itemid"`
	YMaxItemID     uint64  `json:"ymax_itemid"`
}

// DefaultGraphFields are Zabbix 6.0's defaults of a new graph (recorded
// from 6.0.14's graph.create and its export, which omits them).
var DefaultGraphFields = GraphFields{Width: 900, Height: 200, YAxisMax: 100, ShowWorkPeriod: 1, ShowTriggers: 1, ShowLegend: 1}

// GraphItem is one item of a graph, with graph.get's gitems fields.
type GraphItem struct {
	// GItemID is the item's gitemid, unique over all graphs: kept while
	// the graph keeps the item, new for an item added (assignGItemIDs).
	GItemID   uint64 `json:"gitemid,omitempty"`
	ItemID    uint64 `json:"itemid"`
	DrawType  int    `json:"drawtype"` // 0 line, 1 filled region, 2 bold line, 3 dot, 4 dashed line, 5 gradient line
	SortOrder int    `json:"sortorder"`
	Color     string `json:"color"`     // six hexadecimal digits
	YAxisSide int    `json:"yaxisside"` // 0 left, 1 right
	CalcFnc   int    `json:"calc_fnc"`  // 1 min, 2 avg, 4 max, 7 all, 9 last
	Type      int    `json:"type"`      // 0 simple, 2 graph sum
}

// Limits of Zabbix 6.0's graphs table and graph.create's checks.
const (
	maxGraphNameLen = 128
	minGraphSize    = 20
	maxGraphSize    = 65535
)

// graphSchema holds graphs (its own migration, migrateGraphs): one row
// per graph, its settings and items as JSON (read once per snapshot
// load, never queried by field). IF NOT EXISTS: downgrade chains of the
// migration tests leave it.
const graphSchema = `
CREATE TABLE IF NOT EXISTS graphs (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	host_id     INTEGER NOT NULL,
	template_id INTEGER NOT NULL DEFAULT 0,
	uuid        TEXT NOT NULL DEFAULT '',
	name        TEXT NOT NULL,
	config      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graphs_host ON graphs (host_id);
`

// migrateGraphs is the migration to the version with graphs and
// templates' dashboards (dashboard.go), kept on
// its own so that schema changes made in parallel renumber cleanly.
func migrateGraphs() string { return graphSchema + dashboardSchema }

// extras are the objects the snapshot keeps beside hosts and items:
// graphs, and templates' dashboards (dashboard.go). It MUST NOT be
// modified once published.
type extras struct {
	graphs    []Graph // ascending by ID
	graphByID map[uint64]int
	// byHost indexes graphs by their host (HostGraphs, discovery).
	byHost     map[uint64][]int
	dashboards []Dashboard // ascending by ID
	webs       []HTTPTest  // ascending by ID (httptest.go)
	webByID    map[uint64]int
	webByFail  map[uint64]int // by the web.test.fail item's ID
}

func (x *extras) index() {
	x.graphByID = make(map[uint64]int, len(x.graphs))
	x.byHost = map[uint64][]int{}
	for i := range x.graphs {
		x.graphByID[x.graphs[i].ID] = i
		x.byHost[x.graphs[i].HostID] = append(x.byHost[x.graphs[i].HostID], i)
	}
	x.webByID = make(map[uint64]int, len(x.webs))
	x.webByFail = make(map[uint64]int, len(x.webs))
	for i := range x.webs {
		x.webByID[x.webs[i].ID] = i
		if id := x.webs[i].ItemIDs[WebScenarioFail]; id != 0 {
			x.webByFail[id] = i
		}
	}
}

// Graphs returns every graph of hosts and templates, ascending by ID.
// The slice MUST NOT be modified.
func (s *Snapshot) Graphs() []Graph {
	if s.ext == nil {
		return nil
	}
	return s.ext.graphs
}

// Graph returns the graph with the ID, or nil.
func (s *Snapshot) Graph(id uint64) *Graph {
	if s.ext == nil {
		return nil
	}
	if i, ok := s.ext.graphByID[id]; ok {
		return &s.ext.graphs[i]
	}
	return nil
}

func loadExtras(ctx context.Context, tx *sql.Tx) (*extras, error) {
	x := &extras{}
	err := queryEach(ctx, tx, "SELECT id, host_id, template_id, uuid, name, config FROM graphs ORDER BY id", func(r *sql.Rows) error {
		var g Graph
		var config string
		if err := r.Scan(&g.ID, &g.HostID, &g.TemplateID, &g.UUID, &g.Name, &config); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(config), &g); err != nil {
			return fmt.Errorf("%w: graph %d: %v", ErrCorrupt, g.ID, err)
		}
		x.graphs = append(x.graphs, g)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load graphs: %w", err)
	}
	if x.dashboards, err = loadDashboards(ctx, tx); err != nil {
		return nil, err
	}
	x.numberLegacyGItems()
	if x.webs, err = loadHTTPTests(ctx, tx); err != nil {
		return nil, err
	}
	x.index()
	return x, nil
}

// numberLegacyGItems gives the graph items stored before gitemids were
// (schema 27's first rows) IDs above every stored one, in graph order;
// the next change of their graph stores them.
func (x *extras) numberLegacyGItems() {
	var top uint64
	for i := range x.graphs {
		for _, gi := range x.graphs[i].Items {
			top = max(top, gi.GItemID)
		}
	}
	for i := range x.graphs {
		for j := range x.graphs[i].Items {
			if x.graphs[i].Items[j].GItemID == 0 {
				top++
				x.graphs[i].Items[j].GItemID = top
			}
		}
	}
}

// assignGItemIDs gives g's items without a gitemid one: that of the
// item of the same itemid prev had (in order, each once), else a new
// one.
func (e *Edit) assignGItemIDs(g *Graph, prev *Graph) {
	x := e.extra()
	e.initLastGItem() // graph_proto.go
	used := map[uint64]bool{}
	for _, gi := range g.Items {
		if gi.GItemID != 0 {
			used[gi.GItemID] = true
		}
	}
	for i := range g.Items {
		gi := &g.Items[i]
		if gi.GItemID != 0 {
			continue
		}
		if prev != nil {
			for _, pi := range prev.Items {
				if pi.ItemID == gi.ItemID && pi.GItemID != 0 && !used[pi.GItemID] {
					gi.GItemID = pi.GItemID
					break
				}
			}
		}
		if gi.GItemID == 0 {
			x.lastGItem++
			gi.GItemID = x.lastGItem
		}
		used[gi.GItemID] = true
	}
}

// extraEdit is an Edit's overlay of graphs and dashboards, nil until one
// changes.
type extraEdit struct {
	graphs    map[uint64]*Graph // nil value: deleted
	newGraphs []uint64
	// ownGraphs is set once a graph that is not discovered changes:
	// only then (or when links or items changed) can a template's
	// graphs need copying again (syncGraphs); discovery's own changes
	// do not cost a pass over every graph.
	ownGraphs bool
	// newByHost are newGraphs by host, and graphs written with another
	// host than they had.
	newByHost map[uint64][]uint64
	dash      map[uint64]*Dashboard
	newDash   []uint64
	// lastGItem is the highest gitemid handed out, 0 until one is.
	lastGItem uint64
	// lastPage and lastWidget are the highest template dashboard page
	// and widget IDs handed out (dashboard.go).
	lastPage, lastWidget uint64
	web                  *webEdit // web scenarios, nil until one changes (httptest.go)
}

func (e *Edit) extra() *extraEdit {
	if e.ext == nil {
		e.ext = &extraEdit{graphs: map[uint64]*Graph{}, dash: map[uint64]*Dashboard{}}
	}
	return e.ext
}

// graph returns the current graph with the ID, or nil.
func (e *Edit) graph(id uint64) *Graph {
	if e.ext != nil {
		if g, ok := e.ext.graphs[id]; ok {
			return g
		}
	}
	return e.old.Graph(id)
}

// allGraphs returns the current graphs, ascending by ID.
func (e *Edit) allGraphs() []*Graph {
	var out []*Graph
	for i := range e.old.Graphs() {
		if g := e.graph(e.old.ext.graphs[i].ID); g != nil {
			out = append(out, g)
		}
	}
	if e.ext != nil {
		for _, id := range e.ext.newGraphs {
			if g := e.ext.graphs[id]; g != nil {
				out = append(out, g)
			}
		}
	}
	return out
}

// HostGraphs returns the graphs of a host or template in the Edit's
// view.
func (e *Edit) HostGraphs(host uint64) []*Graph {
	var out []*Graph
	seen := map[uint64]bool{}
	add := func(g *Graph) {
		if g != nil && g.HostID == host && !seen[g.ID] {
			seen[g.ID] = true
			out = append(out, g)
		}
	}
	if x := e.old.ext; x != nil {
		for _, i := range x.byHost[host] {
			add(e.graph(x.graphs[i].ID))
		}
	}
	if e.ext != nil {
		// New graphs, and graphs moved to the host (writeGraph).
		for _, id := range e.ext.newByHost[host] {
			add(e.ext.graphs[id])
		}
	}
	slices.SortFunc(out, func(a, b *Graph) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func (e *Edit) graphByName(host uint64, name string) *Graph {
	for _, g := range e.HostGraphs(host) {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// checkGraph validates g (its host set from its items) and reports
// errors under p.
func (e *Edit) checkGraph(p string, g *Graph, el *errList) {
	if g.Name == "" {
		el.addf(p+".name", "cannot be empty")
	} else if n := utf8.RuneCountInString(g.Name); n > maxGraphNameLen || !utf8.ValidString(g.Name) {
		el.addf(p+".name", "value is too long (%d characters, the limit is %d)", n, maxGraphNameLen)
	}
	if len(g.Items) == 0 {
		el.addf(p+".gitems", "missing items for graph %q", g.Name)
		return
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"width", g.Width}, {"height", g.Height}} {
		if f.v < minGraphSize || f.v > maxGraphSize {
			el.addf(p+"."+f.name, "value must be one of %d-%d", minGraphSize, maxGraphSize)
		}
	}
	in := func(name string, v int, ok ...int) {
		if !slices.Contains(ok, v) {
			el.addf(p+"."+name, "value must be one of %s", joinInts(ok))
		}
	}
	in("graphtype", g.GraphType, 0, 1, 2, 3)
	in("show_work_period", g.ShowWorkPeriod, 0, 1)
	in("show_triggers", g.ShowTriggers, 0, 1)
	in("show_legend", g.ShowLegend, 0, 1)
	in("show_3d", g.Show3D, 0, 1)
	in("ymin_type", g.YMinType, 0, 1, 2)
	in("ymax_type", g.YMaxType, 0, 1, 2)
	g.HostID = 0
	for i, gi := range g.Items {
		ip := p + ".gitems[" + strconv.Itoa(i) + "]"
		it := e.item(gi.ItemID)
		if it == nil {
			el.add(ip+".itemid", notFound("item", gi.ItemID))
			continue
		}
		switch {
		case g.HostID == 0:
			g.HostID = it.HostID
		case g.HostID != it.HostID:
			el.addf(ip+".itemid", "the items of a graph must be of one host or template")
		}
		if vt := it.ValueType; vt != history.Float && vt != history.Uint {
			el.addf(ip+".itemid", "cannot add a non-numeric item %q to graph %q", it.Key, g.Name)
		}
		if !validColor(gi.Color) {
			el.addf(ip+".color", "a colour of six hexadecimal digits is expected")
		}
		in := func(name string, v int, ok ...int) {
			if !slices.Contains(ok, v) {
				el.addf(ip+"."+name, "value must be one of %s", joinInts(ok))
			}
		}
		in("drawtype", gi.DrawType, 0, 1, 2, 3, 4, 5)
		in("yaxisside", gi.YAxisSide, 0, 1)
		in("calc_fnc", gi.CalcFnc, 1, 2, 4, 7, 9)
		in("type", gi.Type, 0, 2)
	}
	for _, y := range []struct {
		name string
		typ  int
		id   uint64
	}{{"ymin_itemid", g.YMinType, g.YMinItemID}, {"ymax_itemid", g.YMaxType, g.YMaxItemID}} {
		if y.typ == 2 && e.item(y.id) == nil {
			el.add(p+"."+y.name, notFound("item", y.id))
		}
	}
	if g.HostID != 0 {
		if h := e.host(g.HostID); h != nil && !h.IsTemplate {
			g.UUID = ""
		}
	}
}

func joinInts(v []int) string {
	s := ""
	for i, n := range v {
		if i > 0 {
			s += ", "
		}
		s += strconv.Itoa(n)
	}
	return s
}

func validColor(c string) bool {
	if len(c) != 6 {
		return false
	}
	for _, r := range c {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

// CreateGraphs creates graphs (ID, HostID and TemplateID ignored: the
// host is that of the items) and returns their IDs in order. A graph's
// name is unique on its host.
func (e *Edit) CreateGraphs(gs []Graph) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	batch := map[string]bool{}
	for i := range gs {
		p := "graphs[" + strconv.Itoa(i) + "]"
		g := &gs[i]
		g.TemplateID = 0
		e.checkGraph(p, g, &el)
		if g.HostID == 0 {
			continue
		}
		k := strconv.FormatUint(g.HostID, 10) + "\x00" + g.Name
		if batch[k] || e.graphByName(g.HostID, g.Name) != nil {
			el.addf(p+".name", "graph with name %q already exists in graphs or graph prototypes", g.Name)
		}
		batch[k] = true
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	ids := make([]uint64, len(gs))
	made := make([]*Graph, len(gs))
	for i := range gs {
		g := gs[i]
		if e.host(g.HostID).IsTemplate {
			g.UUID = cmp.Or(g.UUID, NewUUID())
		}
		id, err := e.insertGraph(&g)
		if err != nil {
			return nil, err
		}
		ids[i], made[i] = id, e.ext.graphs[id]
	}
	return ids, nil
}

func (e *Edit) insertGraph(g *Graph) (uint64, error) {
	g.Items = slices.Clone(g.Items)
	for i := range g.Items {
		g.Items[i].GItemID = 0
	}
	e.assignGItemIDs(g, nil)
	id, err := e.exec("INSERT INTO graphs (host_id, template_id, uuid, name, config) VALUES (?, ?, ?, ?, ?)",
		g.HostID, g.TemplateID, g.UUID, g.Name, encodeGraph(g))
	if err != nil {
		return 0, e.fail(fmt.Errorf("cannot create graph %q: %w", g.Name, err))
	}
	g.ID = id
	x := e.extra()
	x.graphs[id] = g
	x.newGraphs = append(x.newGraphs, id)
	x.ownGraphs = x.ownGraphs || g.Discovery == nil
	if x.newByHost == nil {
		x.newByHost = map[uint64][]uint64{}
	}
	x.newByHost[g.HostID] = append(x.newByHost[g.HostID], id)
	e.res.GraphsCreated++
	return id, nil
}

func (e *Edit) writeGraph(g *Graph) error {
	prev := e.graph(g.ID)
	e.assignGItemIDs(g, prev)
	x := e.extra()
	x.ownGraphs = x.ownGraphs || g.Discovery == nil || prev == nil || prev.Discovery == nil
	if prev != nil && prev.HostID != g.HostID {
		if x.newByHost == nil {
			x.newByHost = map[uint64][]uint64{}
		}
		x.newByHost[g.HostID] = append(x.newByHost[g.HostID], g.ID)
	}
	_, err := e.exec("UPDATE graphs SET host_id = ?, template_id = ?, uuid = ?, name = ?, config = ? WHERE id = ?",
		g.HostID, g.TemplateID, g.UUID, g.Name, encodeGraph(g), g.ID)
	if err != nil {
		return e.fail(fmt.Errorf("cannot update graph %d: %w", g.ID, err))
	}
	e.extra().graphs[g.ID] = g
	e.res.GraphsUpdated++
	return nil
}

func (e *Edit) removeGraph(id uint64) error {
	prev := e.graph(id)
	if _, err := e.exec("DELETE FROM graphs WHERE id = ?", id); err != nil {
		return e.fail(fmt.Errorf("cannot delete graph %d: %w", id, err))
	}
	x := e.extra()
	x.ownGraphs = x.ownGraphs || prev == nil || prev.Discovery == nil
	x.graphs[id] = nil
	e.res.GraphsDeleted++
	return nil
}

// UpdateGraphs replaces graphs by ID with gs (each gs[i].ID set): a
// copy of a template's graph is refused (6.0 lets no field of one be
// changed but through its template).
func (e *Edit) UpdateGraphs(gs []Graph) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i := range gs {
		p := "graphs[" + strconv.Itoa(i) + "]"
		g := &gs[i]
		cur := e.graph(g.ID)
		if cur == nil {
			el.add(p+".graphid", notFound("graph", g.ID))
			continue
		}
		if cur.TemplateID != 0 && !e.propagating {
			el.addf(p, "cannot update templated graph %q", cur.Name)
			continue
		}
		g.TemplateID, g.UUID = cur.TemplateID, cur.UUID
		e.checkGraph(p, g, &el)
		if o := e.graphByName(g.HostID, g.Name); o != nil && o.ID != g.ID {
			el.addf(p+".name", "graph with name %q already exists in graphs or graph prototypes", g.Name)
		}
	}
	if err := el.err(); err != nil {
		return err
	}
	for i := range gs {
		g := gs[i]
		g.Items = slices.Clone(g.Items)
		if err := e.writeGraph(&g); err != nil {
			return err
		}
	}
	return nil
}

// DeleteGraphs deletes graphs by ID with their copies; a copy of a
// template's graph cannot be deleted alone (6.0's rule).
func (e *Edit) DeleteGraphs(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		g := e.graph(id)
		if g == nil {
			el.add("graphs["+strconv.Itoa(i)+"]", notFound("graph", id))
		} else if g.TemplateID != 0 {
			el.addf("graphs["+strconv.Itoa(i)+"]", "cannot delete templated graph %q", g.Name)
		}
	}
	dupIDs("graphs", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	for _, id := range ids {
		if err := e.removeGraph(id); err != nil {
			return err
		}
	}
	return nil // copies go in syncGraphs
}

func encodeGraph(g *Graph) string {
	b, err := json.Marshal(g)
	if err != nil {
		panic("BUG: Graph does not marshal: " + err.Error())
	}
	return string(b)
}

// syncExtras makes graphs follow the Edit's other changes before it
// commits: items deleted leave their graphs (a graph left with none is
// deleted, as 6.0 deletes it), graphs of deleted hosts go, and each
// template's graphs are copied to what links the template, their items
// mapped by key (inherit.go's rules for items: a copy follows its
// template's graph, an owner's own graph of the same name is taken
// over, unlinking keeps the copy as the owner's own, clearing deletes
// its items and so the copy).
func (e *Edit) syncExtras() error {
	if e.err != nil {
		return e.err
	}
	if e.ext == nil && e.mst == nil && !e.itemsGone {
		return nil
	}
	if err := e.syncGraphs(); err != nil {
		return err
	}
	if err := e.syncHTTPTests(); err != nil {
		return err
	}
	return e.syncDashboards()
}

// syncGraphs is syncExtras' part for graphs.
func (e *Edit) syncGraphs() error {
	if len(e.old.Graphs()) == 0 && (e.ext == nil || len(e.ext.newGraphs) == 0) {
		return nil
	}
	// Cascade of deleted items and hosts.
	for _, g := range e.allGraphs() {
		if e.host(g.HostID) == nil || g.Discovery != nil && !e.graphProtoLive(g.Discovery) {
			if err := e.removeGraph(g.ID); err != nil {
				return err
			}
			continue
		}
		n, changed := *g, false
		n.Items = nil
		for _, gi := range g.Items {
			if e.item(gi.ItemID) != nil {
				n.Items = append(n.Items, gi)
			} else {
				changed = true
			}
		}
		for _, y := range []struct {
			typ *int
			id  *uint64
		}{{&n.YMinType, &n.YMinItemID}, {&n.YMaxType, &n.YMaxItemID}} {
			if *y.typ == 2 && e.item(*y.id) == nil {
				*y.typ, *y.id, changed = 0, 0, true
			}
		}
		switch {
		case len(n.Items) == 0:
			if err := e.removeGraph(g.ID); err != nil {
				return err
			}
		case changed:
			if err := e.writeGraph(&n); err != nil {
				return err
			}
		}
	}
	// Inheritance, level by level (nested templates): at most as many
	// rounds as links may be deep.
	if e.mst == nil && !e.itemsGone && (e.ext == nil || !e.ext.ownGraphs) {
		return nil
	}
	for round := 0; round < 16; round++ {
		changed, err := e.inheritGraphsOnce()
		if err != nil || !changed {
			return err
		}
	}
	return nil
}

// inheritGraphsOnce makes one pass of copies and reports whether it
// changed any.
func (e *Edit) inheritGraphsOnce() (bool, error) {
	all := e.allGraphs()
	// copies: template graph → owner → its copy there. Keyed by owner,
	// not listed: a template linked to 10,000 hosts has 10,000 copies of
	// each graph, and looking an owner's up in a list made linking
	// quadratic in the fleet.
	copies := map[uint64]map[uint64]*Graph{}
	byOwner := map[uint64][]*Graph{}    // host → its graphs
	tmplGraphs := map[uint64][]*Graph{} // template → its graphs
	live := make(map[uint64]bool, len(all))
	for _, g := range all {
		live[g.ID] = true
		byOwner[g.HostID] = append(byOwner[g.HostID], g)
		if g.TemplateID != 0 {
			m := copies[g.TemplateID]
			if m == nil {
				m = map[uint64]*Graph{}
				copies[g.TemplateID] = m
			}
			m[g.HostID] = g // the last of any twins, as the list's scan took
		}
		if h := e.host(g.HostID); h != nil && h.IsTemplate {
			tmplGraphs[g.HostID] = append(tmplGraphs[g.HostID], g)
		}
	}
	changed := false
	// Copies whose template graph is gone, or whose owner no longer
	// links the template, stop being copies (deleted, or kept as the
	// owner's own).
	for _, g := range all {
		if g.TemplateID == 0 {
			continue
		}
		tg := e.graph(g.TemplateID)
		if tg == nil || !live[tg.ID] {
			if err := e.removeGraph(g.ID); err != nil {
				return false, err
			}
			changed = true
			continue
		}
		if !slices.Contains(e.links(g.HostID), tg.HostID) {
			n := *g
			n.TemplateID = 0
			if err := e.writeGraph(&n); err != nil {
				return false, err
			}
			changed = true
		}
	}
	tmpls := make([]uint64, 0, len(tmplGraphs))
	for t := range tmplGraphs {
		tmpls = append(tmpls, t)
	}
	slices.Sort(tmpls)
	for _, t := range tmpls {
		for _, owner := range e.childrenOf(t) {
			if e.host(owner) == nil {
				continue
			}
			for _, tg := range tmplGraphs[t] {
				want, ok := e.graphCopy(tg, owner)
				if !ok {
					continue // its items are not copied yet
				}
				cur := copies[tg.ID][owner]
				if cur == nil {
					for _, c := range byOwner[owner] {
						if c.Name == tg.Name && c.Discovery == nil && (c.TemplateID == 0 || !live[c.TemplateID]) {
							cur = c // the owner's own, taken over
						}
					}
				}
				if cur == nil {
					if _, err := e.insertGraph(want); err != nil {
						return false, err
					}
					changed = true
					continue
				}
				want.ID = cur.ID
				if !sameGraph(cur, want) {
					if err := e.writeGraph(want); err != nil {
						return false, err
					}
					changed = true
				}
			}
		}
	}
	return changed, nil
}

// graphCopy is tg as a copy on owner, its items those of owner with the
// same keys; ok is false if owner lacks one.
func (e *Edit) graphCopy(tg *Graph, owner uint64) (*Graph, bool) {
	n := *tg
	n.ID, n.HostID, n.TemplateID = 0, owner, tg.ID
	n.UUID = ""
	mapItem := func(id uint64) (uint64, bool) {
		it := e.item(id)
		if it == nil {
			return 0, false
		}
		oid := e.itemByKey(owner, it.Key)
		return oid, oid != 0 && e.item(oid) != nil
	}
	n.Items = make([]GraphItem, len(tg.Items))
	for i, gi := range tg.Items {
		id, ok := mapItem(gi.ItemID)
		if !ok {
			return nil, false
		}
		gi.ItemID, gi.GItemID = id, 0
		n.Items[i] = gi
	}
	for _, y := range []struct {
		typ int
		id  *uint64
	}{{n.YMinType, &n.YMinItemID}, {n.YMaxType, &n.YMaxItemID}} {
		if y.typ == 2 {
			id, ok := mapItem(*y.id)
			if !ok {
				return nil, false
			}
			*y.id = id
		}
	}
	return &n, true
}

func sameGraph(a, b *Graph) bool {
	return a.HostID == b.HostID && a.TemplateID == b.TemplateID && a.UUID == b.UUID && a.Name == b.Name && a.Discovery.equal(b.Discovery) &&
		a.GraphFields == b.GraphFields && slices.EqualFunc(a.Items, b.Items, func(x, y GraphItem) bool {
		x.GItemID, y.GItemID = 0, 0
		return x == y
	})
}

// buildExtras puts the graphs and dashboards after the Edit into s.
func (e *Edit) buildExtras(s *Snapshot) {
	if e.ext == nil {
		s.ext = e.old.ext
		return
	}
	x := &extras{}
	for _, g := range e.allGraphs() {
		if e.host(g.HostID) != nil {
			x.graphs = append(x.graphs, *g)
		}
	}
	slices.SortFunc(x.graphs, func(a, b Graph) int { return cmp.Compare(a.ID, b.ID) })
	x.dashboards = e.buildDashboards()
	e.buildWebs(x)
	x.index()
	s.ext = x
}
