package catalog

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ImportRule is one object kind's rule of configuration.import: create
// what the document has and the catalog lacks, update what both have,
// delete (from the document's templates) what the document lacks.
type ImportRule struct {
	CreateMissing, UpdateExisting, DeleteMissing bool
}

// ImportRules are configuration.import's rules for the kinds Peregrine
// stores. TemplateLinkage's UpdateExisting and MediaTypes'
// DeleteMissing are unused (6.0 has neither).
type ImportRules struct {
	Groups, Templates, Items, Triggers, Graphs, ValueMaps, TemplateLinkage, TemplateDashboards ImportRule
	HTTPTests, MediaTypes                                                                      ImportRule
	// CheckMediaType, if set, validates each media type the import
	// creates or updates as the API's mediatype.create and .update do;
	// without it the catalog converts the document's values only.
	CheckMediaType MediaTypeCheck
	// Hosts is the rule of a Zabbix export's hosts' own properties
	// (export_host.go): Peregrine applies neither of its options yet.
	Hosts ImportRule
}

// AllCreateUpdate are the rules `peregrine import` and Apply use:
// create and update everything, delete nothing.
var AllCreateUpdate = func() ImportRules {
	r := ImportRule{CreateMissing: true, UpdateExisting: true}
	return ImportRules{Groups: r, Templates: r, Items: r, Triggers: r, Graphs: r, ValueMaps: r, TemplateLinkage: r,
		TemplateDashboards: r, HTTPTests: r, MediaTypes: r}
}()

// Import applies a Zabbix export document (a Spec whose ZabbixExport is
// set, from ParseExport or ParseSpec) under rules, in one transaction:
// every change or none. Errors name the element by its path in the
// document (FieldError). Media types go to the notification
// configuration (AlertConfig), written in the same transaction.
func (c *Catalog) Import(ctx context.Context, spec Spec, rules ImportRules) (ApplyResult, error) {
	if len(spec.Hosts)+len(spec.Groups)+len(spec.Templates)+len(spec.Macros) > 0 {
		return ApplyResult{}, fmt.Errorf("catalog: Import takes a Zabbix export only; use Apply for the import format's hosts")
	}
	sm, err := spec.macroSpecs()
	if err != nil {
		return ApplyResult{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var res ApplyResult
	er, err := c.editImport(ctx, sm.mediaTypes, rules.MediaTypes, rules.CheckMediaType, &res, func(e *Edit) error {
		if err := e.filterImport(&sm, &rules); err != nil {
			return err
		}
		if err := e.applyMacros(&sm, &res); err != nil {
			return err
		}
		return e.deleteMissing(&sm, &rules)
	})
	if err != nil {
		return ApplyResult{}, err
	}
	res.GroupsCreated = er.GroupsCreated
	res.TemplatesCreated, res.TemplatesUpdated = er.TemplatesCreated, er.TemplatesUpdated
	res.ItemsCreated, res.ItemsUpdated = er.ItemsCreated, er.ItemsUpdated
	res.TriggersCreated, res.TriggersUpdated = er.TriggersCreated, er.TriggersUpdated
	res.ValueMapsCreated, res.ValueMapsUpdated = er.ValueMapsCreated, er.ValueMapsUpdated
	res.GraphsCreated, res.GraphsUpdated = er.GraphsCreated, er.GraphsUpdated
	res.DashboardsCreated, res.DashboardsUpdated = er.DashboardsCreated, er.DashboardsUpdated
	if er.ItemsDeleted+er.TriggersDeleted+er.GraphsDeleted+er.DashboardsDeleted+er.ValueMapsDeleted > 0 {
		res.MacrosChanged++ // something was deleted: the import changed the catalog
	}
	return res, nil
}

// keep filters s in place.
func keep[T any](s []T, ok func(*T) bool) []T {
	out := s[:0]
	for i := range s {
		if ok(&s[i]) {
			out = append(out, s[i])
		}
	}
	return out
}

func (r ImportRule) allows(exists bool) bool {
	if exists {
		return r.UpdateExisting
	}
	return r.CreateMissing
}

// filterImport drops from sm what the rules do not let the import
// create or update.
func (e *Edit) filterImport(sm *specMacros, r *ImportRules) error {
	if err := e.filterImportHosts(sm, r); err != nil {
		return err
	}
	var el errList
	if !r.Groups.CreateMissing {
		check := func(field, g string) {
			if e.groupByName(g) == 0 {
				el.addf(field, "group %q does not exist", g)
			}
		}
		for i, g := range sm.groups {
			check("zabbix_export.groups["+strconv.Itoa(i)+"].name", g)
		}
		for _, st := range sm.templates {
			for i, g := range st.groups {
				check(st.field+".groups["+strconv.Itoa(i)+"].name", g)
			}
		}
	}
	if err := el.err(); err != nil {
		return err
	}
	dropped := map[string]bool{} // template fields
	sm.templates = keep(sm.templates, func(st *specTemplate) bool {
		id := e.templateByName(st.host)
		if id == 0 && !r.Templates.CreateMissing {
			dropped[st.field] = true
			return false
		}
		if id != 0 && !r.Templates.UpdateExisting {
			cur := e.host(id)
			st.name, st.description, st.tags, st.groups = cur.Name, cur.Description, cur.Tags, nil
			st.macrosSet = false
		}
		// Links: those the document names if createMissing, those it
		// does not name kept unless deleteMissing.
		var want []string
		if id != 0 {
			for _, l := range e.links(id) {
				if h := e.host(l); h != nil && (!r.TemplateLinkage.DeleteMissing || slices.Contains(st.links, h.Host)) {
					want = append(want, h.Host)
				}
			}
		}
		if r.TemplateLinkage.CreateMissing {
			for _, l := range st.links {
				if !slices.Contains(want, l) {
					want = append(want, l)
				}
			}
		}
		st.links = want
		st.items = keep(st.items, func(si *specTemplateItem) bool {
			return r.Items.allows(id != 0 && e.itemByKey(id, si.it.Key) != 0)
		})
		st.valueMaps = keep(st.valueMaps, func(m *ValueMap) bool {
			return r.ValueMaps.allows(id != 0 && e.valueMapByName(id, m.Name) != 0)
		})
		st.dashboards = keep(st.dashboards, func(d *specDashboard) bool {
			return r.TemplateDashboards.allows(id != 0 && e.dashboardByName(id, d.d.Name) != nil)
		})
		st.httptests = keep(st.httptests, func(t *specHTTPTest) bool {
			return r.HTTPTests.allows(id != 0 && e.HTTPTestByName(id, t.t.Name) != nil)
		})
		return true
	})
	under := func(field string) bool {
		for f := range dropped {
			if strings.HasPrefix(field, f+".") {
				return true
			}
		}
		return false
	}
	type tkey struct{ name, expr string }
	existing := map[tkey]bool{}
	for _, part := range []*Snapshot{e.old, e.old.part()} {
		for i := range part.triggers {
			if t := e.trigger(part.triggers[i].ID); t != nil {
				existing[tkey{t.Description, t.Expression}] = true
			}
		}
	}
	for _, id := range e.newTriggers {
		if t := e.trigger(id); t != nil {
			existing[tkey{t.Description, t.Expression}] = true
		}
	}
	sm.triggers = keep(sm.triggers, func(t *specTrigger) bool {
		return !under(t.field) && r.Triggers.allows(existing[tkey{t.f.Description, t.f.Expression}])
	})
	sm.graphs = keep(sm.graphs, func(g *specGraph) bool {
		host := uint64(0)
		if len(g.items) > 0 {
			host = e.hostByName(g.items[0].Host)
		}
		return r.Graphs.allows(host != 0 && e.graphByName(host, g.g.Name) != nil)
	})
	return nil
}

// deleteMissing deletes from the document's templates what the
// document lacks, for the kinds whose rule says deleteMissing.
func (e *Edit) deleteMissing(sm *specMacros, r *ImportRules) error {
	for _, st := range sm.templates {
		id := e.templateByName(st.host)
		if id == 0 {
			continue
		}
		if r.Items.DeleteMissing {
			var del []uint64
			for _, it := range e.hostItems(id) {
				if it.TemplateID == 0 && !slices.ContainsFunc(st.items, func(si specTemplateItem) bool { return si.it.Key == it.Key }) {
					del = append(del, it.ID)
				}
			}
			if err := e.DeleteItems(del); err != nil {
				return wrapField(err, st.field+".items")
			}
		}
		if r.Triggers.DeleteMissing {
			var del []uint64
			for _, t := range e.hostTriggers(id) {
				if t.TemplateID == 0 && !slices.ContainsFunc(sm.triggers, func(s specTrigger) bool {
					return s.f.Description == t.Description && s.f.Expression == t.Expression
				}) {
					del = append(del, t.ID)
				}
			}
			if err := e.DeleteTriggers(del); err != nil {
				return wrapField(err, st.field+".triggers")
			}
		}
		if r.Graphs.DeleteMissing {
			var del []uint64
			for _, g := range e.HostGraphs(id) {
				if g.TemplateID == 0 && !slices.ContainsFunc(sm.graphs, func(s specGraph) bool {
					return s.g.Name == g.Name && len(s.items) > 0 && s.items[0].Host == st.host
				}) {
					del = append(del, g.ID)
				}
			}
			if err := e.DeleteGraphs(del); err != nil {
				return wrapField(err, "zabbix_export.graphs")
			}
		}
		if r.ValueMaps.DeleteMissing {
			var del []uint64
			for _, m := range e.hostValueMaps(id) {
				if !slices.ContainsFunc(st.valueMaps, func(v ValueMap) bool { return v.Name == m.Name }) {
					del = append(del, m.ID)
				}
			}
			if err := e.DeleteValueMaps(del); err != nil {
				return wrapField(err, st.field+".valuemaps")
			}
		}
		if r.HTTPTests.DeleteMissing {
			var del []uint64
			for _, t := range e.HostHTTPTests(id) {
				if t.TemplateID == 0 && !slices.ContainsFunc(st.httptests, func(s specHTTPTest) bool { return s.t.Name == t.Name }) {
					del = append(del, t.ID)
				}
			}
			if err := e.DeleteHTTPTests(del); err != nil {
				return wrapField(err, st.field+".httptests")
			}
		}
		if r.TemplateDashboards.DeleteMissing {
			var del []uint64
			for _, d := range e.TemplateDashboards(id) {
				if !slices.ContainsFunc(st.dashboards, func(s specDashboard) bool { return s.d.Name == d.Name }) {
					del = append(del, d.ID)
				}
			}
			if err := e.DeleteDashboards(del); err != nil {
				return wrapField(err, st.field+".dashboards")
			}
		}
	}
	return nil
}

// wrapField names field as the place of err.
func wrapField(err error, field string) error {
	if err == nil {
		return nil
	}
	return &FieldError{Field: field, Err: err}
}

// IsZabbixExport reports whether s holds a Zabbix export and nothing
// else, which Import takes.
func (s *Spec) IsZabbixExport() bool {
	return s.ZabbixExport != nil && len(s.Hosts)+len(s.Groups)+len(s.Templates)+len(s.Macros) == 0
}
