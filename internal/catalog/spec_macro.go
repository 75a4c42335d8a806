package catalog

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// MacroSpec declares a user macro in the form of Zabbix's YAML export:
// macro, value, type (TEXT, the default, or SECRET_TEXT; VAULT is
// refused; the API's numbers 0 and 1 are accepted) and description.
type MacroSpec struct {
	Macro       string `yaml:"macro"`
	Value       string `yaml:"value"`
	Type        string `yaml:"type"`
	Description string `yaml:"description"`
}

// TemplateRef names a linked template, as Zabbix's export does
// (templates: [{name: ...}]); the name is the template's technical name.
type TemplateRef struct {
	Name string `yaml:"name"`
}

var macroTypeNames = []string{"TEXT", "SECRET_TEXT"}

// specMacros is the validated macro and template part of a Spec.
type specMacros struct {
	global    []MacroFields // created or updated, never deleted
	groups    []string      // a Zabbix export's host groups, created if missing
	templates []specTemplate
	// triggers are the templates' triggers, under their items and at
	// the export's top level (over several items).
	triggers []specTrigger
	hosts    []specHostMacros
	// graphs are a Zabbix export's graphs (graph_spec.go).
	graphs []specGraph
	// mediaTypes are a Zabbix export's media types (mediatype_import.go).
	mediaTypes []MediaTypeSpec
	// hostContents are a Zabbix export's hosts' contents
	// (export_host.go).
	hostContents []specTemplate
}

type specTemplate struct {
	field     string
	host      string
	name      string
	macrosSet bool
	macros    []MacroFields
	links     []string
	// What the template holds (spec_template.go).
	uuid, description string
	groups            []string
	tags              []Tag
	valueMaps         []ValueMap
	items             []specTemplateItem
	triggers          []specTrigger
	dashboards        []specDashboard // dashboard_spec.go
	httptests         []specHTTPTest  // httptest_spec.go
	// isHost: a Zabbix export's host, whose contents only are imported,
	// its items' interfaces named by ifaces (export_host.go).
	isHost bool
	ifaces map[string]ExportInterface
}

type specHostMacros struct {
	field     string
	host      string
	macrosSet bool // the host lists macros: they replace its macros
	macros    []MacroFields
	linksSet  bool // the host lists templates: they replace its links
	links     []string
}

func macroFields(ms []MacroSpec, p string, el *errList) []MacroFields {
	out := make([]MacroFields, 0, len(ms))
	for i, m := range ms {
		f := p + "[" + strconv.Itoa(i) + "]"
		if _, err := usermacro.CheckDefinition(m.Macro); err != nil {
			el.add(f+".macro", err)
			continue
		}
		if m.Type == "VAULT" {
			el.add(f+".type", usermacro.ErrVault)
			continue
		}
		t, err := enumValue(m.Type, macroTypeNames, 0)
		if err != nil {
			el.add(f+".type", err)
			continue
		}
		out = append(out, MacroFields{Macro: m.Macro, Value: m.Value, Type: t, Description: m.Description})
	}
	return out
}

// macroSpecs validates the macros and templates of s.
func (s Spec) macroSpecs() (specMacros, error) {
	var el errList
	var sm specMacros
	sm.global = macroFields(s.Macros, "macros", &el)
	tmpls := s.Templates
	tfield := "templates"
	if s.ZabbixExport != nil {
		tmpls = append(tmpls[:len(tmpls):len(tmpls)], s.ZabbixExport.Templates...)
	}
	if x := s.ZabbixExport; x != nil {
		if x.Version != "" && !strings.HasPrefix(x.Version, "6.0") && !strings.HasPrefix(x.Version, "5.") {
			el.addf("zabbix_export.version", "version %q: Peregrine imports Zabbix 6.0's exports (and 5.x's, their subset); export from Zabbix 6.0", x.Version)
		}
		for i, g := range x.Groups {
			if err := checkGroupName(g.Name); err != nil {
				el.add("zabbix_export.groups["+strconv.Itoa(i)+"].name", err)
				continue
			}
			sm.groups = append(sm.groups, g.Name)
		}
		for i := range x.Triggers {
			sm.triggers = append(sm.triggers, triggerSpec(&x.Triggers[i], "zabbix_export.triggers["+strconv.Itoa(i)+"]", &el))
		}
		sm.graphs = graphSpecs(x.Graphs, "zabbix_export.graphs", &el)
		for i := range x.Hosts {
			p := "zabbix_export.hosts[" + strconv.Itoa(i) + "]"
			if err := checkHostName(x.Hosts[i].Host); err != nil {
				el.add(p+".host", err)
				continue
			}
			var st specTemplate
			st.field = p
			hostContent(&x.Hosts[i], p, &st, &el)
			sm.triggers = append(sm.triggers, st.triggers...)
			sm.hostContents = append(sm.hostContents, st)
		}
	}
	seen := map[string]int{}
	for i := range tmpls {
		t := &tmpls[i]
		p := tfield + "[" + strconv.Itoa(i) + "]"
		if s.ZabbixExport != nil && i >= len(s.Templates) {
			p = "zabbix_export.templates[" + strconv.Itoa(i-len(s.Templates)) + "]"
		}
		if err := checkHostName(t.Template); err != nil {
			el.add(p+".template", err)
			continue
		}
		if first, dup := seen[t.Template]; dup {
			el.addf(p+".template", "duplicate template %q (first at templates[%d])", t.Template, first)
			continue
		}
		seen[t.Template] = i
		st := specTemplate{field: p, host: t.Template, name: t.Name, macrosSet: t.Macros != nil,
			macros: macroFields(t.Macros, p+".macros", &el)}
		for _, l := range t.Templates {
			st.links = append(st.links, l.Name)
		}
		templateContent(t, p, &st, &el)
		sm.triggers = append(sm.triggers, st.triggers...)
		sm.templates = append(sm.templates, st)
	}
	if x := s.ZabbixExport; x != nil {
		// After the templates: a template's first dashboard or graph is
		// the first thing its file is refused for.
		refuseUnsupported("zabbix_export", x.Unsupported, &el)
		validateMediaTypes(x.MediaTypes, &el)
		sm.mediaTypes = x.MediaTypes
	}
	for i, h := range s.Hosts {
		if h.Macros == nil && h.Templates == nil {
			continue
		}
		p := "hosts[" + strconv.Itoa(i) + "]"
		hm := specHostMacros{field: p, host: h.Host, macrosSet: h.Macros != nil, linksSet: h.Templates != nil,
			macros: macroFields(h.Macros, p+".macros", &el)}
		for _, l := range h.Templates {
			hm.links = append(hm.links, l.Name)
		}
		sm.hosts = append(sm.hosts, hm)
	}
	return sm, el.err()
}

func (sm *specMacros) empty() bool {
	return len(sm.global) == 0 && len(sm.templates) == 0 && len(sm.hosts) == 0 && len(sm.groups) == 0 && len(sm.triggers) == 0 && len(sm.graphs) == 0 &&
		len(sm.mediaTypes) == 0 && len(sm.hostContents) == 0
}

// applyMacrosAfter applies the spec's macros and templates once its
// hosts are in the snapshot, in one more transaction (as triggers are):
// templates first (all of them, so that links may name templates later
// in the document), then their links, macros, global macros, then the
// hosts' links and macros. c.mu is held.
func (c *Catalog) applyMacrosAfter(ctx context.Context, res ApplyResult, sm specMacros) (ApplyResult, error) {
	if sm.empty() {
		return res, nil
	}
	er, err := c.editImport(ctx, sm.mediaTypes, AllCreateUpdate.MediaTypes, nil, &res, func(e *Edit) error { return e.applyMacros(&sm, &res) })
	if err != nil {
		return ApplyResult{}, fmt.Errorf("catalog: hosts, items and triggers were applied, macros and templates were not: %w", err)
	}
	res.TemplatesCreated, res.TemplatesUpdated = er.TemplatesCreated, er.TemplatesUpdated
	// The templates' own items, triggers, value maps and groups, and the
	// copies their links made.
	res.GroupsCreated += er.GroupsCreated
	res.ItemsCreated += er.ItemsCreated
	res.ItemsUpdated += er.ItemsUpdated
	res.TriggersCreated += er.TriggersCreated
	res.TriggersUpdated += er.TriggersUpdated
	res.ValueMapsCreated += er.ValueMapsCreated
	res.ValueMapsUpdated += er.ValueMapsUpdated
	res.GraphsCreated += er.GraphsCreated
	res.GraphsUpdated += er.GraphsUpdated
	res.DashboardsCreated += er.DashboardsCreated
	res.DashboardsUpdated += er.DashboardsUpdated
	return res, nil
}

func (e *Edit) applyMacros(sm *specMacros, res *ApplyResult) error {
	for _, g := range sm.groups {
		if e.groupByName(g) == 0 {
			if _, err := e.CreateGroups([]string{g}); err != nil {
				return prefixSpecField("zabbix_export.groups", err)
			}
		}
	}
	ids := make([]uint64, len(sm.templates))
	for i, t := range sm.templates {
		id, err := e.upsertTemplate(t.host, t.name, t.uuid)
		if err != nil {
			return prefixField(err, t.field)
		}
		ids[i] = id
	}
	// What the templates hold, then their triggers (which may span
	// templates), before the links copy any of it.
	for i := range sm.templates {
		if err := e.applyTemplateContent(ids[i], &sm.templates[i]); err != nil {
			return err
		}
	}
	for i := range sm.hostContents {
		st := &sm.hostContents[i]
		id := e.hostByName(st.host)
		if id == 0 || e.host(id).IsTemplate {
			return &FieldError{Field: st.field + ".host", Err: fmt.Errorf("%w: host %q", ErrNotFound, st.host)}
		}
		if err := e.applyTemplateContent(id, st); err != nil {
			return err
		}
	}
	if len(sm.triggers) > 0 {
		if _, _, err := e.applyTriggers(sm.triggers); err != nil {
			return err // counted with the Edit's
		}
	}
	links := func(names []string, field string) ([]uint64, error) {
		out := make([]uint64, 0, len(names))
		for j, n := range names {
			t := e.templateByName(n)
			if t == 0 {
				return nil, &FieldError{Field: field + "[" + strconv.Itoa(j) + "].name", Err: fmt.Errorf("%w: template %q (import it first or in the same document)", ErrNotFound, n)}
			}
			out = append(out, t)
		}
		return out, nil
	}
	for i, t := range sm.templates {
		l, err := links(t.links, t.field+".templates")
		if err != nil {
			return err
		}
		if ch, err := e.LinkTemplates(ids[i], l, t.field+".templates"); err != nil {
			return err
		} else if ch {
			res.MacrosChanged++
		}
		if t.macrosSet {
			ch, err := e.SetMacros(ids[i], t.macros, t.field+".macros")
			if err != nil {
				return err
			}
			if ch {
				res.MacrosChanged++
			}
		}
	}
	// Graphs over the templates' items (their links made: a graph may show an
	// inherited item), then the dashboards showing
	// them.
	if err := e.applyGraphs(sm.graphs); err != nil {
		return err
	}
	for i := range sm.templates {
		if err := e.applyDashboards(ids[i], sm.templates[i].dashboards); err != nil {
			return err
		}
		if err := e.applyHTTPTests(ids[i], sm.templates[i].httptests); err != nil {
			return err
		}
	}
	for i := range sm.hostContents {
		if err := e.applyHTTPTests(e.hostByName(sm.hostContents[i].host), sm.hostContents[i].httptests); err != nil {
			return err
		}
	}
	// Global macros are created or updated by name, never deleted.
	if len(sm.global) > 0 {
		all := sm.global
		for _, m := range e.old.Macros(0) {
			found := false
			for _, f := range sm.global {
				if r, err := usermacro.ParseRef(f.Macro); err == nil && r.Key() == m.Ref().Key() {
					found = true
				}
			}
			if !found {
				all = append(all, MacroFields{Macro: m.Macro, Value: m.Value, Type: int(m.Type), Description: m.Description})
			}
		}
		ch, err := e.SetMacros(0, all, "macros")
		if err != nil {
			return err
		}
		if ch {
			res.MacrosChanged++
		}
	}
	for _, h := range sm.hosts {
		id := e.hostByName(h.host)
		if id == 0 {
			return &FieldError{Field: h.field + ".host", Err: fmt.Errorf("BUG: host %q was not applied", h.host)}
		}
		if h.linksSet {
			l, err := links(h.links, h.field+".templates")
			if err != nil {
				return err
			}
			ch, err := e.LinkTemplates(id, l, h.field+".templates")
			if err != nil {
				return err
			}
			if ch {
				res.MacrosChanged++
			}
		}
		if h.macrosSet {
			ch, err := e.SetMacros(id, h.macros, h.field+".macros")
			if err != nil {
				return err
			}
			if ch {
				res.MacrosChanged++
			}
		}
	}
	return nil
}

// templateByName returns the ID of the template with the technical
// name in the Edit's view, or 0.
func (e *Edit) templateByName(name string) uint64 {
	if id := e.hostByName(name); id != 0 && e.host(id).IsTemplate {
		return id
	}
	return 0
}
