package catalog

import (
	"strconv"

	"gopkg.in/yaml.v3"
)

// DashboardSpec is a template's dashboard in Zabbix 6.0's export form
// (templates[].dashboards).
type DashboardSpec struct {
	UUID          string               `yaml:"uuid"`
	Name          string               `yaml:"name"`
	DisplayPeriod string               `yaml:"display_period"`
	AutoStart     string               `yaml:"auto_start"`
	Pages         []DashboardPageSpec  `yaml:"pages"`
	Unsupported   map[string]yaml.Node `yaml:",inline"`
}

// DashboardPageSpec is one page of a DashboardSpec.
type DashboardPageSpec struct {
	Name          string               `yaml:"name"`
	DisplayPeriod string               `yaml:"display_period"`
	Widgets       []WidgetSpec         `yaml:"widgets"`
	Unsupported   map[string]yaml.Node `yaml:",inline"`
}

// WidgetSpec is a widget in the export's form: its type by the export's
// name (GRAPH_CLASSIC, PLAIN_TEXT...), hide_header for view_mode.
type WidgetSpec struct {
	Type        string               `yaml:"type"`
	Name        string               `yaml:"name"`
	X           string               `yaml:"x"`
	Y           string               `yaml:"y"`
	Width       string               `yaml:"width"`
	Height      string               `yaml:"height"`
	HideHeader  string               `yaml:"hide_header"`
	Fields      []WidgetFieldSpec    `yaml:"fields"`
	Unsupported map[string]yaml.Node `yaml:",inline"`
}

// WidgetFieldSpec is a widget's field: type by the export's name, value
// a scalar or, for ITEM and GRAPH fields, {host, key} or {host, name}.
type WidgetFieldSpec struct {
	Type  string    `yaml:"type"`
	Name  string    `yaml:"name"`
	Value yaml.Node `yaml:"value"`
}

// widgetTypes maps the export's widget type names to the API's.
var widgetTypes = map[string]string{
	"CLOCK": "clock", "GRAPH_CLASSIC": "graph", "GRAPH_PROTOTYPE": "graphprototype", "ITEM": "item",
	"PLAIN_TEXT": "plaintext", "URL": "url", "SVG_GRAPH": "svggraph",
}

// widgetFieldTypes are the export's widget field type names by Zabbix's
// number.
var widgetFieldTypes = []string{"INTEGER", "STRING", "HOST_GROUP", "HOST", "ITEM", "ITEM_PROTOTYPE", "GRAPH", "GRAPH_PROTOTYPE"}

// specDashboard is a validated dashboard; widget fields naming items
// and graphs hold their references until applied.
type specDashboard struct {
	field string
	d     Dashboard
	refs  []widgetRef
}

type widgetRef struct {
	page, widget, fld int
	field             string
	host, key, name   string
	proto             bool // an item or graph prototype
}

func dashboardSpecs(ds []DashboardSpec, p string, el *errList) []specDashboard {
	var out []specDashboard
	for i := range ds {
		x := &ds[i]
		f := p + "[" + strconv.Itoa(i) + "]"
		refuseUnsupported(f, x.Unsupported, el)
		sd := specDashboard{field: f, d: Dashboard{UUID: x.UUID, Name: x.Name}}
		var err error
		if sd.d.DisplayPeriod, err = exportInt(x.DisplayPeriod, 30); err != nil {
			el.add(f+".display_period", err)
		}
		if sd.d.AutoStart, err = exportEnum(x.AutoStart, yesNoNames, 1); err != nil {
			el.add(f+".auto_start", err)
		}
		for pi := range x.Pages {
			xp := &x.Pages[pi]
			pf := f + ".pages[" + strconv.Itoa(pi) + "]"
			refuseUnsupported(pf, xp.Unsupported, el)
			pg := DashboardPage{Name: xp.Name}
			if pg.DisplayPeriod, err = exportInt(xp.DisplayPeriod, 0); err != nil {
				el.add(pf+".display_period", err)
			}
			for wi := range xp.Widgets {
				xw := &xp.Widgets[wi]
				wf := pf + ".widgets[" + strconv.Itoa(wi) + "]"
				refuseUnsupported(wf, xw.Unsupported, el)
				w := Widget{Name: xw.Name}
				typ, ok := widgetTypes[xw.Type]
				if !ok {
					el.addf(wf+".type", "widget type %q is not supported on template dashboards", xw.Type)
				}
				w.Type = typ
				num := func(name, v string, def int) int {
					n, err := exportInt(v, def)
					if err != nil {
						el.add(wf+"."+name, err)
					}
					return n
				}
				w.X, w.Y = num("x", xw.X, 0), num("y", xw.Y, 0)
				w.Width, w.Height = num("width", xw.Width, 1), num("height", xw.Height, 2)
				if w.ViewMode, err = exportEnum(xw.HideHeader, yesNoNames, 0); err != nil {
					el.add(wf+".hide_header", err)
				}
				for fi := range xw.Fields {
					xf := &xw.Fields[fi]
					ff := wf + ".fields[" + strconv.Itoa(fi) + "]"
					ft, err := exportEnum(xf.Type, widgetFieldTypes, 0)
					if err != nil {
						el.add(ff+".type", err)
						continue
					}
					fld := WidgetField{Type: ft, Name: xf.Name}
					switch ft {
					case WidgetFieldInt, WidgetFieldStr:
						fld.Value = xf.Value.Value
					case WidgetFieldItem, WidgetFieldGraph, WidgetFieldItemPrototype, WidgetFieldGraphPrototype:
						var r struct{ Host, Key, Name string }
						if err := xf.Value.Decode(&r); err != nil || r.Host == "" {
							el.addf(ff+".value", "an item is named by host and key, a graph by host and name")
							continue
						}
						sd.refs = append(sd.refs, widgetRef{page: pi, widget: wi, fld: len(w.Fields), field: ff + ".value",
							host: r.Host, key: r.Key, name: r.Name, proto: ft == WidgetFieldItemPrototype || ft == WidgetFieldGraphPrototype})
					default:
						el.addf(ff+".type", "%s fields are not supported on template dashboards", xf.Type)
						continue
					}
					w.Fields = append(w.Fields, fld)
				}
				pg.Widgets = append(pg.Widgets, w)
			}
			sd.d.Pages = append(sd.d.Pages, pg)
		}
		out = append(out, sd)
	}
	return out
}

// applyDashboards creates or updates template tmpl's dashboards, by uuid
// else by name.
func (e *Edit) applyDashboards(tmpl uint64, ds []specDashboard) error {
	var el errList
	var creates, updates []Dashboard
	var createAt, updateAt []string
	for i := range ds {
		sd := &ds[i]
		d := sd.d
		d.TemplateID = tmpl
		d.Pages = clonePages(d.Pages)
		for _, r := range sd.refs {
			h := e.hostByName(r.host)
			var id uint64
			switch {
			case h == 0:
				el.addf(r.field+".host", "no template %q", r.host)
				continue
			case r.proto:
				if id = e.protoOnHost(h, r.key, r.name); id == 0 && r.key != "" {
					el.addf(r.field+".key", "no item prototype %q on %q", r.key, r.host)
				} else if id == 0 {
					el.addf(r.field+".name", "no graph prototype %q on %q", r.name, r.host)
				}
			case r.name != "":
				if g := e.graphByName(h, r.name); g != nil {
					id = g.ID
				} else {
					el.addf(r.field+".name", "no graph %q on %q", r.name, r.host)
				}
			default:
				if id = e.itemByKey(h, r.key); id == 0 {
					el.addf(r.field+".key", "no item %q on %q", r.key, r.host)
				}
			}
			d.Pages[r.page].Widgets[r.widget].Fields[r.fld].Value = strconv.FormatUint(id, 10)
		}
		var cur *Dashboard
		for _, o := range e.TemplateDashboards(tmpl) {
			if d.UUID != "" && o.UUID == d.UUID || cur == nil && o.Name == d.Name {
				cur = o
			}
		}
		if cur == nil {
			creates = append(creates, d)
			createAt = append(createAt, sd.field)
			continue
		}
		d.ID, d.UUID = cur.ID, cur.UUID
		if encodeDashboard(withoutIDs(&d)) != encodeDashboard(withoutIDs(cur)) || d.Name != cur.Name {
			updates = append(updates, d)
			updateAt = append(updateAt, sd.field)
		}
	}
	if err := el.err(); err != nil {
		return err
	}
	if _, err := e.CreateDashboards(creates); err != nil {
		return renameBatchErr(err, "dashboards[", createAt)
	}
	if err := e.UpdateDashboards(updates); err != nil {
		return renameBatchErr(err, "dashboards[", updateAt)
	}
	return nil
}

func clonePages(ps []DashboardPage) []DashboardPage {
	out := make([]DashboardPage, len(ps))
	for i, p := range ps {
		out[i] = p
		out[i].Widgets = make([]Widget, len(p.Widgets))
		for j, w := range p.Widgets {
			out[i].Widgets[j] = w
			out[i].Widgets[j].Fields = append([]WidgetField(nil), w.Fields...)
		}
	}
	return out
}
