package catalog

import (
	"cmp"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// GraphSpec is a graph in Zabbix 6.0's export form (zabbix_export.graphs):
// names for enumerations, numbers as strings, defaults omitted, items
// named by host and key. The graph belongs to the host or template its
// items are of.
type GraphSpec struct {
	UUID           string          `yaml:"uuid"`
	Name           string          `yaml:"name"`
	Width          string          `yaml:"width"`
	Height         string          `yaml:"height"`
	YAxisMin       string          `yaml:"yaxismin"`
	YAxisMax       string          `yaml:"yaxismax"`
	ShowWorkPeriod string          `yaml:"show_work_period"`
	ShowTriggers   string          `yaml:"show_triggers"`
	Type           string          `yaml:"type"`
	ShowLegend     string          `yaml:"show_legend"`
	Show3D         string          `yaml:"show_3d"`
	PercentLeft    string          `yaml:"percent_left"`
	PercentRight   string          `yaml:"percent_right"`
	YMinType       string          `yaml:"ymin_type_1"`
	YMaxType       string          `yaml:"ymax_type_1"`
	YMinItem       *ItemRefSpec    `yaml:"ymin_item_1"`
	YMaxItem       *ItemRefSpec    `yaml:"ymax_item_1"`
	GraphItems     []GraphItemSpec `yaml:"graph_items"`
	// Discover is a graph prototype's (DISCOVER, NO_DISCOVER); a
	// graph's is refused.
	Discover string `yaml:"discover"`
	// Unsupported collects every other member, to be refused by name.
	Unsupported map[string]yaml.Node `yaml:",inline"`
}

// GraphItemSpec is one of a graph's items in the export's form.
type GraphItemSpec struct {
	SortOrder   string               `yaml:"sortorder"`
	DrawType    string               `yaml:"drawtype"`
	Color       string               `yaml:"color"`
	YAxisSide   string               `yaml:"yaxisside"`
	CalcFnc     string               `yaml:"calc_fnc"`
	Type        string               `yaml:"type"`
	Item        ItemRefSpec          `yaml:"item"`
	Unsupported map[string]yaml.Node `yaml:",inline"`
}

// ItemRefSpec names an item by its host's (or template's) technical name
// and its key, as Zabbix's export does.
type ItemRefSpec struct {
	Host string `yaml:"host"`
	Key  string `yaml:"key"`
}

// The export's names of graph enumerations, by Zabbix's number (index);
// "" marks a number with no name.
var (
	graphTypeNames  = []string{"NORMAL", "STACKED", "PIE", "EXPLODED"}
	yesNoNames      = []string{"NO", "YES"}
	yTypeNames      = []string{"CALCULATED", "FIXED", "ITEM"}
	drawTypeNames   = []string{"SINGLE_LINE", "FILLED_REGION", "BOLD_LINE", "DOTTED_LINE", "DASHED_LINE", "GRADIENT_LINE"}
	yAxisSideNames  = []string{"LEFT", "RIGHT"}
	calcFncNames    = []string{"", "MIN", "AVG", "", "MAX", "", "", "ALL", "", "LAST"}
	gitemTypeNames  = []string{"SIMPLE", "", "GRAPH_SUM"}
	exportEnumError = "%q is not one of the export's names"
)

// exportEnum reads an export enumeration: a name of names, or its
// number; "" is def.
func exportEnum(s string, names []string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	for i, n := range names {
		if n != "" && n == s {
			return i, nil
		}
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n < len(names) && names[n] != "" {
		return n, nil
	}
	return 0, fmt.Errorf(exportEnumError, s)
}

func exportInt(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	return strconv.Atoi(s)
}

func exportFloat(s string, def float64) (float64, error) {
	if s == "" {
		return def, nil
	}
	return strconv.ParseFloat(s, 64)
}

// specGraph is a validated graph of an import, its items by reference.
type specGraph struct {
	field      string
	g          Graph // items' IDs unset
	items      []ItemRefSpec
	ymin, ymax *ItemRefSpec
}

// graphSpecs validates an export's graphs.
func graphSpecs(gs []GraphSpec, p string, el *errList) []specGraph {
	var out []specGraph
	for i := range gs {
		x := &gs[i]
		f := p + "[" + strconv.Itoa(i) + "]"
		refuseUnsupported(f, x.Unsupported, el)
		if x.Discover != "" {
			el.addf(f+".discover", "not supported: a graph has no discover (a graph prototype has)")
		}
		sg := specGraph{field: f, g: Graph{UUID: x.UUID, Name: x.Name, GraphFields: DefaultGraphFields}}
		gf := &sg.g.GraphFields
		set := func(name string, err error) {
			if err != nil {
				el.add(f+"."+name, err)
			}
		}
		var err error
		gf.Width, err = exportInt(x.Width, gf.Width)
		set("width", err)
		gf.Height, err = exportInt(x.Height, gf.Height)
		set("height", err)
		gf.YAxisMin, err = exportFloat(x.YAxisMin, gf.YAxisMin)
		set("yaxismin", err)
		gf.YAxisMax, err = exportFloat(x.YAxisMax, gf.YAxisMax)
		set("yaxismax", err)
		gf.PercentLeft, err = exportFloat(x.PercentLeft, 0)
		set("percent_left", err)
		gf.PercentRight, err = exportFloat(x.PercentRight, 0)
		set("percent_right", err)
		gf.ShowWorkPeriod, err = exportEnum(x.ShowWorkPeriod, yesNoNames, 1)
		set("show_work_period", err)
		gf.ShowTriggers, err = exportEnum(x.ShowTriggers, yesNoNames, 1)
		set("show_triggers", err)
		gf.ShowLegend, err = exportEnum(x.ShowLegend, yesNoNames, 1)
		set("show_legend", err)
		gf.Show3D, err = exportEnum(x.Show3D, yesNoNames, 0)
		set("show_3d", err)
		gf.GraphType, err = exportEnum(x.Type, graphTypeNames, 0)
		set("type", err)
		gf.YMinType, err = exportEnum(x.YMinType, yTypeNames, 0)
		set("ymin_type_1", err)
		gf.YMaxType, err = exportEnum(x.YMaxType, yTypeNames, 0)
		set("ymax_type_1", err)
		if gf.YMinType == 2 {
			if sg.ymin = x.YMinItem; sg.ymin == nil {
				el.addf(f+".ymin_item_1", "required when ymin_type_1 is ITEM")
			}
		}
		if gf.YMaxType == 2 {
			if sg.ymax = x.YMaxItem; sg.ymax == nil {
				el.addf(f+".ymax_item_1", "required when ymax_type_1 is ITEM")
			}
		}
		if len(x.GraphItems) == 0 {
			el.addf(f+".graph_items", "missing items for graph %q", x.Name)
		}
		for j := range x.GraphItems {
			xi := &x.GraphItems[j]
			fi := f + ".graph_items[" + strconv.Itoa(j) + "]"
			refuseUnsupported(fi, xi.Unsupported, el)
			var gi GraphItem
			var err error
			gi.SortOrder, err = exportInt(xi.SortOrder, 0)
			set("graph_items["+strconv.Itoa(j)+"].sortorder", err)
			gi.DrawType, err = exportEnum(xi.DrawType, drawTypeNames, 0)
			set("graph_items["+strconv.Itoa(j)+"].drawtype", err)
			gi.YAxisSide, err = exportEnum(xi.YAxisSide, yAxisSideNames, 0)
			set("graph_items["+strconv.Itoa(j)+"].yaxisside", err)
			gi.CalcFnc, err = exportEnum(xi.CalcFnc, calcFncNames, 2)
			set("graph_items["+strconv.Itoa(j)+"].calc_fnc", err)
			gi.Type, err = exportEnum(xi.Type, gitemTypeNames, 0)
			set("graph_items["+strconv.Itoa(j)+"].type", err)
			// An export omits a colour that is 6.0's default (its
			// graphs_items.color column's, 009600), as it omits every
			// default.
			gi.Color = cmp.Or(xi.Color, "009600")
			if xi.Item.Host == "" || xi.Item.Key == "" {
				el.addf(fi+".item", "an item is named by host and key")
			}
			sg.g.Items = append(sg.g.Items, gi)
			sg.items = append(sg.items, xi.Item)
		}
		out = append(out, sg)
	}
	return out
}

// applyGraphs creates or updates the import's graphs: matched by uuid
// on templates, else by name on the host of their items.
func (e *Edit) applyGraphs(gs []specGraph) error {
	var el errList
	var creates, updates []Graph
	var createAt, updateAt []string
	ref := func(f string, r ItemRefSpec) uint64 {
		h := e.hostByName(r.Host)
		if h == 0 {
			el.addf(f+".host", "no host or template %q", r.Host)
			return 0
		}
		id := e.itemByKey(h, r.Key)
		if id == 0 {
			el.addf(f+".key", "no item %q on %q", r.Key, r.Host)
		}
		return id
	}
	for i := range gs {
		sg := &gs[i]
		g := sg.g
		g.Items = make([]GraphItem, len(sg.g.Items))
		copy(g.Items, sg.g.Items)
		host := uint64(0)
		for j, r := range sg.items {
			g.Items[j].ItemID = ref(sg.field+".graph_items["+strconv.Itoa(j)+"].item", r)
			if it := e.item(g.Items[j].ItemID); it != nil && host == 0 {
				host = it.HostID
			}
		}
		if sg.ymin != nil {
			g.YMinItemID = ref(sg.field+".ymin_item_1", *sg.ymin)
		}
		if sg.ymax != nil {
			g.YMaxItemID = ref(sg.field+".ymax_item_1", *sg.ymax)
		}
		if host == 0 {
			continue
		}
		var cur *Graph
		if g.UUID != "" {
			for _, o := range e.HostGraphs(host) {
				if o.UUID == g.UUID {
					cur = o
				}
			}
		}
		if cur == nil {
			cur = e.graphByName(host, g.Name)
		}
		if cur == nil {
			creates = append(creates, g)
			createAt = append(createAt, sg.field)
			continue
		}
		if cur.TemplateID != 0 {
			el.addf(sg.field+".name", "graph %q on %q is inherited from a template: change it there", g.Name, e.host(host).Host)
			continue
		}
		g.ID, g.HostID, g.TemplateID = cur.ID, cur.HostID, cur.TemplateID
		if g.UUID == "" || !e.host(host).IsTemplate {
			g.UUID = cur.UUID
		}
		if !sameGraph(cur, &g) {
			updates = append(updates, g)
			updateAt = append(updateAt, sg.field)
		}
	}
	if err := el.err(); err != nil {
		return err
	}
	if _, err := e.CreateGraphs(creates); err != nil {
		return renameBatchErr(err, "graphs[", createAt)
	}
	if err := e.UpdateGraphs(updates); err != nil {
		return renameBatchErr(err, "graphs[", updateAt)
	}
	return nil
}

// renameBatchErr is err with a batch's field paths (prefix "graphs[3]")
// replaced by the import's, at[3].
func renameBatchErr(err error, prefix string, at []string) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, x := range j.Unwrap() {
			out = append(out, renameBatchErr(x, prefix, at))
		}
		return joinErrs(out)
	}
	fe, ok := err.(*FieldError)
	if !ok || len(fe.Field) < len(prefix) || fe.Field[:len(prefix)] != prefix {
		return err
	}
	rest := fe.Field[len(prefix):]
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	i, perr := strconv.Atoi(rest[:end])
	if perr != nil || i >= len(at) || end >= len(rest) || rest[end] != ']' {
		return err
	}
	return &FieldError{Field: at[i] + rest[end+1:], Err: fe.Err}
}

func joinErrs(errs []error) error {
	var el errList
	el.errs = append(el.errs, errs...)
	return el.err()
}
