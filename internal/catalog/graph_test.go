package catalog

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"
)

// hostGraphs returns the graphs of host in c's snapshot.
func hostGraphs(c *Catalog, host uint64) []Graph {
	var out []Graph
	for _, g := range c.Snapshot().Graphs() {
		if g.HostID == host {
			out = append(out, g)
		}
	}
	return out
}

// reloadGraphs reopens f's catalog and checks that graphs and
// dashboards load as they were published.
func (f *tmplFixture) reloadGraphs(t *testing.T) {
	t.Helper()
	g, d := f.c.Snapshot().Graphs(), f.c.Snapshot().Dashboards()
	f.reload(t)
	if g2 := f.c.Snapshot().Graphs(); !reflect.DeepEqual(g, g2) {
		t.Fatalf("reloaded graphs differ:\n%+v\n%+v", g, g2)
	}
	if d2 := f.c.Snapshot().Dashboards(); !reflect.DeepEqual(d, d2) {
		t.Fatalf("reloaded dashboards differ:\n%+v\n%+v", d, d2)
	}
}

// TestGraphInheritance: a template's graph is copied to what links the
// template (items mapped by key, templateid set), follows its
// template's changes, cannot be changed or deleted alone, stays the
// host's own after unlink, goes with clear, and a graph whose items are
// all deleted is deleted.
func TestGraphInheritance(t *testing.T) {
	f := newTmplFixture(t)
	var gid, dash uint64
	mustEdit(t, f.c, func(e *Edit) error {
		g := Graph{Name: "ping", GraphFields: DefaultGraphFields, Items: []GraphItem{
			{ItemID: f.ping, Color: "1A7C11", CalcFnc: 2}, {ItemID: f.trap, Color: "F63100", CalcFnc: 2, SortOrder: 1}}}
		ids, err := e.CreateGraphs([]Graph{g})
		if err != nil {
			return err
		}
		gid = ids[0]
		d, err := e.CreateDashboards([]Dashboard{{TemplateID: f.tmpl, Name: "D", DisplayPeriod: 30, AutoStart: 1,
			Pages: []DashboardPage{{Widgets: []Widget{{Type: "graph", Width: 12, Height: 5,
				Fields: []WidgetField{{Type: WidgetFieldGraph, Name: "graphid", Value: strconv.FormatUint(gid, 10)}}}}}}}})
		if err != nil {
			return err
		}
		dash = d[0]
		return nil
	})
	if g := f.c.Snapshot().Graph(gid); g == nil || g.HostID != f.tmpl || g.UUID == "" {
		t.Fatalf("template graph: %+v", g)
	}
	f.link(t, f.h1, f.tmpl)
	hg := hostGraphs(f.c, f.h1)
	h1 := f.c.Snapshot().Host("h1")
	if len(hg) != 1 || hg[0].TemplateID != gid || hg[0].UUID != "" || hg[0].Items[0].ItemID != h1.Item("agent.ping").ID ||
		hg[0].Items[1].ItemID != h1.Item("trap").ID {
		t.Fatalf("copy: %+v", hg)
	}
	if ds := f.c.Snapshot().HostDashboards(f.h1); len(ds) != 1 || ds[0].ID != dash {
		t.Fatalf("host dashboards: %+v", ds)
	}
	// The template's change reaches the copy; the copy refuses its own.
	mustEdit(t, f.c, func(e *Edit) error {
		g := *e.graph(gid)
		g.Width = 600
		return e.UpdateGraphs([]Graph{g})
	})
	if hg = hostGraphs(f.c, f.h1); hg[0].Width != 600 {
		t.Fatalf("copy after the template's change: %+v", hg[0])
	}
	err := editErr(f.c, func(e *Edit) error { return e.DeleteGraphs([]uint64{hg[0].ID}) })
	if err == nil {
		t.Fatal("deleted a copy alone")
	}
	f.reloadGraphs(t)
	// Unlink keeps it as the host's own; relink takes it over again.
	f.link(t, f.h1)
	if hg = hostGraphs(f.c, f.h1); len(hg) != 1 || hg[0].TemplateID != 0 {
		t.Fatalf("after unlink: %+v", hg)
	}
	f.link(t, f.h1, f.tmpl)
	if hg2 := hostGraphs(f.c, f.h1); len(hg2) != 1 || hg2[0].ID != hg[0].ID || hg2[0].TemplateID != gid {
		t.Fatalf("after relink: %+v", hg2)
	}
	// Clear deletes it with the items.
	mustEdit(t, f.c, func(e *Edit) error { _, err := e.SetTemplates(f.h1, nil, []uint64{f.tmpl}, "templates"); return err })
	if hg = hostGraphs(f.c, f.h1); len(hg) != 0 {
		t.Fatalf("after clear: %+v", hg)
	}
	// Deleting one item leaves the graph the other; deleting both
	// deletes it and empties the dashboard's widget field.
	f.link(t, f.h1, f.tmpl)
	mustEdit(t, f.c, func(e *Edit) error { return e.DeleteItems([]uint64{f.trap}) })
	if g := f.c.Snapshot().Graph(gid); g == nil || len(g.Items) != 1 || len(hostGraphs(f.c, f.h1)[0].Items) != 1 {
		t.Fatalf("after deleting an item: %+v", g)
	}
	mustEdit(t, f.c, func(e *Edit) error { return e.DeleteItems([]uint64{f.dep, f.ping}) })
	if g := f.c.Snapshot().Graph(gid); g != nil || len(hostGraphs(f.c, f.h1)) != 0 {
		t.Fatalf("after deleting every item: %+v", g)
	}
	if d := f.c.Snapshot().Dashboard(dash); d == nil || len(d.Pages[0].Widgets[0].Fields) != 0 {
		t.Fatalf("dashboard after its graph went: %+v", d)
	}
	f.reloadGraphs(t)
	mustEdit(t, f.c, func(e *Edit) error { return e.DeleteHosts([]uint64{f.tmpl}) })
	if len(f.c.Snapshot().Dashboards()) != 0 {
		t.Fatal("the template's dashboard outlived it")
	}
	f.reloadGraphs(t)
}

func TestGraphChecks(t *testing.T) {
	f := newTmplFixture(t)
	err := editErr(f.c, func(e *Edit) error {
		_, err := e.CreateGraphs([]Graph{{Name: "", GraphFields: DefaultGraphFields, Items: []GraphItem{{ItemID: f.ping, Color: "zz", CalcFnc: 3}}}})
		return err
	})
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("bad graph: %v", err)
	}
	for _, want := range []string{"graphs[0].name", "graphs[0].gitems[0].color", "graphs[0].gitems[0].calc_fnc"} {
		found := false
		for _, x := range err.(interface{ Unwrap() []error }).Unwrap() {
			if x.(*FieldError).Field == want {
				found = true
			}
		}
		if !found {
			t.Errorf("no error for %s in %v", want, err)
		}
	}
}

func editErr(c *Catalog, fn func(e *Edit) error) error {
	_, err := c.Edit(context.Background(), fn)
	return err
}
