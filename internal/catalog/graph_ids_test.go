package catalog

import (
	"testing"
)

// gitemIDs returns the gitemids of graph g, in its items' order.
func gitemIDs(t *testing.T, c *Catalog, g uint64) []uint64 {
	t.Helper()
	gr := c.Snapshot().Graph(g)
	if gr == nil {
		t.Fatalf("graph %d is gone", g)
	}
	var out []uint64
	for _, gi := range gr.Items {
		out = append(out, gi.GItemID)
	}
	return out
}

// TestGraphItemIDs: every graph item has a gitemid unique over all
// graphs (copies included), kept while its graph keeps the item (an
// update naming the same items, a change propagated to the copies) and
// new for an item added; dashboard pages and widgets likewise keep
// their IDs across an update and get new ones when added. The IDs
// survive a reload (reloadGraphs).
func TestGraphItemIDs(t *testing.T) {
	f := newTmplFixture(t)
	var gid, did uint64
	mustEdit(t, f.c, func(e *Edit) error {
		ids, err := e.CreateGraphs([]Graph{{Name: "g", GraphFields: DefaultGraphFields, Items: []GraphItem{
			{ItemID: f.ping, Color: "1A7C11", CalcFnc: 2}}}})
		if err != nil {
			return err
		}
		gid = ids[0]
		ds, err := e.CreateDashboards([]Dashboard{{TemplateID: f.tmpl, Name: "D", DisplayPeriod: 30, AutoStart: 1,
			Pages: []DashboardPage{{Widgets: []Widget{{Type: "clock", Width: 4, Height: 2}}}}}})
		if err != nil {
			return err
		}
		did = ds[0]
		return nil
	})
	f.link(t, f.h1, f.tmpl)
	seen := map[uint64]bool{}
	for _, g := range f.c.Snapshot().Graphs() {
		for _, gi := range g.Items {
			if gi.GItemID == 0 || seen[gi.GItemID] {
				t.Fatalf("gitemid %d of graph %d is zero or taken: %+v", gi.GItemID, g.ID, f.c.Snapshot().Graphs())
			}
			seen[gi.GItemID] = true
		}
	}
	copyOf := func() uint64 {
		for _, g := range f.c.Snapshot().Graphs() {
			if g.TemplateID == gid {
				return g.ID
			}
		}
		t.Fatal("no copy of the template's graph")
		return 0
	}
	before, copyBefore := gitemIDs(t, f.c, gid), gitemIDs(t, f.c, copyOf())
	mustEdit(t, f.c, func(e *Edit) error {
		g := *e.graph(gid)
		g.Height = 300
		g.Items = append(append([]GraphItem(nil), g.Items...), GraphItem{ItemID: f.trap, Color: "F63100", CalcFnc: 2})
		return e.UpdateGraphs([]Graph{g})
	})
	after, copyAfter := gitemIDs(t, f.c, gid), gitemIDs(t, f.c, copyOf())
	if len(after) != 2 || after[0] != before[0] || after[1] == 0 || after[1] == before[0] {
		t.Fatalf("gitemids %v after the update, want %v kept and a new one", after, before)
	}
	if len(copyAfter) != 2 || copyAfter[0] != copyBefore[0] || copyAfter[1] == copyAfter[0] {
		t.Fatalf("copy's gitemids %v after the update, want %v kept and a new one", copyAfter, copyBefore)
	}
	page, widget := f.c.Snapshot().Dashboard(did).Pages[0].ID, f.c.Snapshot().Dashboard(did).Pages[0].Widgets[0].ID
	mustEdit(t, f.c, func(e *Edit) error {
		d := *e.dashboard(did)
		d.Pages = clonePages(d.Pages)
		d.Pages[0].Widgets = append(d.Pages[0].Widgets, Widget{Type: "clock", X: 4, Width: 4, Height: 2})
		d.Pages = append(d.Pages, DashboardPage{})
		return e.UpdateDashboards([]Dashboard{d})
	})
	d := f.c.Snapshot().Dashboard(did)
	switch {
	case d.Pages[0].ID != page || d.Pages[0].Widgets[0].ID != widget:
		t.Fatalf("page/widget IDs %d/%d became %d/%d", page, widget, d.Pages[0].ID, d.Pages[0].Widgets[0].ID)
	case d.Pages[0].Widgets[1].ID <= widget || d.Pages[1].ID <= page:
		t.Fatalf("new widget %d or page %d not above %d/%d", d.Pages[0].Widgets[1].ID, d.Pages[1].ID, widget, page)
	}
	f.reloadGraphs(t)
}
