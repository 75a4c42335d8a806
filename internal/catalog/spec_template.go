package catalog

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// TemplateSpec declares a template in the form of Zabbix 6.0's YAML
// export (zabbix_export.templates[], or the import format's templates):
// names, description, host groups, tags, macros, linked templates, value
// maps, and items with their triggers. Apply creates the template or
// updates the one with the technical name; items are matched by key,
// value maps by name, triggers by name and expression, and nothing
// absent is deleted.
//
// What Peregrine cannot store yet is refused, naming the element:
// graph prototypes and any other member it does
// not know (Unsupported). Nothing is dropped in silence.
type TemplateSpec struct {
	UUID        string         `yaml:"uuid"`
	Template    string         `yaml:"template"` // technical name, required
	Name        string         `yaml:"name"`     // visible name, default Template
	Description string         `yaml:"description"`
	Groups      []GroupSpec    `yaml:"groups"` // host groups (6.0 keeps templates in them); created if missing
	Tags        []TagSpec      `yaml:"tags"`
	Items       []ExportItem   `yaml:"items"`
	ValueMaps   []ValueMapSpec `yaml:"valuemaps"`
	// DiscoveryRules are the template's low-level discovery rules with
	// their prototypes (lld_spec.go).
	DiscoveryRules []ExportDiscoveryRule `yaml:"discovery_rules"`
	// Macros, if present, is the complete list of the template's macros.
	Macros    []MacroSpec   `yaml:"macros"`
	Templates []TemplateRef `yaml:"templates"`
	// Dashboards are the template's dashboards (dashboard_spec.go).
	Dashboards []DashboardSpec `yaml:"dashboards"`
	// HTTPTests are the template's web scenarios (httptest_spec.go).
	HTTPTests []HTTPTestSpec `yaml:"httptests"`
	// Unsupported collects every other member, to be refused by name.
	Unsupported map[string]yaml.Node `yaml:",inline"`
}

// ExportItem is a template's item in Zabbix 6.0's export form: the
// fields of ItemSpec with the export's names and defaults (type
// ZABBIX_PASSIVE, value_type UNSIGNED, ...), its uuid, and the triggers
// over it alone. Members Peregrine does not store (logtimefmt, ...)
// are refused by name.
type ExportItem struct {
	ItemSpec `yaml:",inline"`
	UUID     string        `yaml:"uuid"`
	Triggers []TriggerSpec `yaml:"triggers"`
	// InterfaceRef is a host's item's interface (export_host.go).
	InterfaceRef string               `yaml:"interface_ref"`
	Unsupported  map[string]yaml.Node `yaml:",inline"`
}

// ZabbixExport is the top level of a Zabbix 6.0 YAML export file: its
// host groups are created, its templates, top-level triggers (those
// over several items), graphs and media types imported. Anything else
// is refused by name, as are the exports of other versions' own
// members (template_groups is 6.2's).
type ZabbixExport struct {
	Version   string         `yaml:"version"`
	Date      string         `yaml:"date"`
	Groups    []GroupSpec    `yaml:"groups"`
	Templates []TemplateSpec `yaml:"templates"`
	Triggers  []TriggerSpec  `yaml:"triggers"`
	Graphs    []GraphSpec    `yaml:"graphs"` // graph_spec.go
	// MediaTypes are media types (mediatype_import.go), imported into
	// the notification configuration.
	MediaTypes  []MediaTypeSpec      `yaml:"media_types"`
	Hosts       []ExportHost         `yaml:"hosts"` // export_host.go
	Unsupported map[string]yaml.Node `yaml:",inline"`
}

// exportItemTypes maps the export's item type names to Zabbix's numbers;
// ParseItemType says which numbers Peregrine collects.
var exportItemTypes = map[string]string{
	"ZABBIX_PASSIVE": "0", "TRAP": "2", "SIMPLE": "3", "INTERNAL": "5", "ZABBIX_ACTIVE": "7",
	"EXTERNAL": "10", "ODBC": "11", "IPMI": "12", "SSH": "13", "TELNET": "14", "CALCULATED": "15",
	"JMX": "16", "SNMP_TRAP": "17", "DEPENDENT": "18", "HTTP_AGENT": "19", "SNMP_AGENT": "20", "SCRIPT": "21",
}

var exportValueTypes = map[string]string{"FLOAT": "0", "CHAR": "1", "LOG": "2", "UNSIGNED": "3", "TEXT": "4"}

// unsupportedElement names what Peregrine cannot import yet, by the
// export's member name.
var unsupportedElement = map[string]string{
	"template_groups": "template groups are Zabbix 6.2's; export the template from Zabbix 6.0",
	"maps":            "network maps are not supported",
	"images":          "images are not supported",
}

// refuseUnsupported reports each member of m as an error under p, the
// first element of a list named with its name or key when it has one.
func refuseUnsupported(p string, m map[string]yaml.Node, el *errList) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// In the document's order: the first element the file is refused
	// for is its first such element.
	sort.Slice(keys, func(i, j int) bool {
		if a, b := m[keys[i]].Line, m[keys[j]].Line; a != b {
			return a < b
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		n := m[k]
		if n.Kind == yaml.ScalarNode && (n.Value == "" || n.Tag == "!!null") || n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
			continue // an empty member stores nothing
		}
		why, known := unsupportedElement[k]
		if !known {
			why = "not supported: Peregrine does not store it"
		}
		f := p + "." + k
		if n.Kind == yaml.SequenceNode {
			f += "[0]" + describeNode(n.Content[0])
			if len(n.Content) > 1 {
				why += fmt.Sprintf(" (%d in %s)", len(n.Content), p)
			}
		}
		el.add(f, fmt.Errorf("%s", why))
	}
}

// describeNode names a mapping by its name and key members, if any:
// ` ("Network interface discovery", key net.if.discovery)`.
func describeNode(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	var name, key string
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "name":
			name = n.Content[i+1].Value
		case "key":
			key = n.Content[i+1].Value
		}
	}
	switch {
	case name != "" && key != "":
		return fmt.Sprintf(" (%q, key %s)", name, key)
	case name != "":
		return fmt.Sprintf(" (%q)", name)
	case key != "":
		return " (key " + key + ")"
	}
	return ""
}

// specTemplateItem is a validated template item.
type specTemplateItem struct {
	field     string
	it        NewItem // HostID unset; MasterItem and ValueMap by name
	valueMap  string
	masterKey string
	iface     string // a host's item's interface_ref
}

// templateContent validates what a template holds beyond names, macros
// and links, into st.
func templateContent(t *TemplateSpec, p string, st *specTemplate, el *errList) {
	refuseUnsupported(p, t.Unsupported, el)
	st.uuid, st.description = t.UUID, t.Description
	st.dashboards = dashboardSpecs(t.Dashboards, p+".dashboards", el)
	st.httptests = httpTestSpecs(t.HTTPTests, p+".httptests", el)
	if err := checkText(t.Description, maxHostDescLen); err != nil {
		el.add(p+".description", err)
	}
	for i, g := range t.Groups {
		if err := checkGroupName(g.Name); err != nil {
			el.add(p+".groups["+strconv.Itoa(i)+"].name", err)
			continue
		}
		st.groups = append(st.groups, g.Name)
	}
	for _, tg := range t.Tags {
		st.tags = append(st.tags, Tag(tg))
	}
	checkTags(p+".tags", st.tags, el)
	names := map[string]bool{}
	for vi, vs := range t.ValueMaps {
		f := p + ".valuemaps[" + strconv.Itoa(vi) + "]"
		checkValueMapName(f+".name", vs.Name, el)
		if names[vs.Name] {
			el.addf(f+".name", "value map %q is declared twice", vs.Name)
		}
		names[vs.Name] = true
		m := ValueMap{Name: vs.Name, UUID: vs.UUID}
		for mi, ms := range vs.Mappings {
			typ, err := enumValue(ms.Type, mappingTypeNames, 0)
			if err != nil {
				el.add(f+".mappings["+strconv.Itoa(mi)+"].type", err)
			}
			m.Mappings = append(m.Mappings, Mapping{Type: MappingType(typ), Value: ms.Value, NewValue: ms.NewValue})
		}
		checkMappings(f+".mappings", m.Mappings, el)
		st.valueMaps = append(st.valueMaps, m)
	}
	keys := map[string]int{}
	for ii := range t.Items {
		xi := &t.Items[ii]
		f := p + ".items[" + strconv.Itoa(ii) + "]"
		refuseUnsupported(f, xi.Unsupported, el)
		is := xi.ItemSpec
		if first, dup := keys[is.Key]; dup {
			el.addf(f+".key", "item %q is declared twice (first at items[%d])", is.Key, first)
			continue
		}
		keys[is.Key] = ii
		exportEnum := func(v *string, names map[string]string, def string) {
			switch n, ok := names[*v]; {
			case *v == "":
				*v = def
			case ok:
				*v = n
			}
		}
		typeName := cmpOr(is.Type, "ZABBIX_PASSIVE")
		exportEnum(&is.Type, exportItemTypes, "0")
		exportEnum(&is.ValueType, exportValueTypes, "3")
		if _, err := ParseItemType(is.Type); err != nil {
			el.addf(f+".type", "item type %s is not supported by Peregrine", typeName)
			continue
		}
		switch is.Status {
		case "ENABLED":
			is.Status = "enabled"
		case "DISABLED":
			is.Status = "disabled"
		}
		si := specTemplateItem{field: f, it: NewItem{ItemSpec: is, UUID: xi.UUID}, iface: xi.InterfaceRef}
		if !st.isHost {
			checkNoInterfaceRef(xi.InterfaceRef, f, el)
		}
		if is.MasterItem != nil {
			si.masterKey = is.MasterItem.Key
			si.it.MasterItem = nil
		}
		if is.ValueMap != nil {
			si.valueMap = is.ValueMap.Name
			si.it.ValueMap = nil
			if !names[si.valueMap] {
				// A map of the template itself: Zabbix 6.0 names no other.
				el.addf(f+".valuemap.name", "template %q has no value map %q: declare it under the template's valuemaps", t.Template, si.valueMap)
			}
		}
		if _, ok := normItem(&si.it.ItemSpec, f, el, nil, si.masterKey != ""); !ok {
			continue
		}
		st.items = append(st.items, si)
		for ti := range xi.Triggers {
			st.triggers = append(st.triggers, triggerSpec(&xi.Triggers[ti], f+".triggers["+strconv.Itoa(ti)+"]", el))
		}
	}
	for ri := range t.DiscoveryRules {
		f := p + ".discovery_rules[" + strconv.Itoa(ri) + "]"
		xr := &t.DiscoveryRules[ri]
		if first, dup := keys[xr.Key]; dup {
			el.addf(f+".key", "key %q is declared twice (first at items[%d])", xr.Key, first)
			continue
		}
		keys[xr.Key] = -1
		checkGraphProtoHosts(xr.GraphPrototypes, t.Template, f+".graph_prototypes", el)
		ni, ok := exportRule(xr, f, el)
		if !ok {
			continue
		}
		si := specTemplateItem{field: f, it: ni, iface: xr.InterfaceRef}
		if !st.isHost {
			checkNoInterfaceRef(xr.InterfaceRef, f, el)
			for pi := range xr.ItemPrototypes {
				checkNoInterfaceRef(xr.ItemPrototypes[pi].InterfaceRef, f+".item_prototypes["+strconv.Itoa(pi)+"]", el)
			}
		}
		if ni.MasterItem != nil {
			si.masterKey = ni.MasterItem.Key
			si.it.MasterItem = nil
		}
		st.items = append(st.items, si)
	}
}

// applyTemplateContent makes template id hold what st declares, in the
// Edit: groups (created if missing), description, tags, value maps,
// items; its triggers are applied with the others (applyTemplates).
func (e *Edit) applyTemplateContent(id uint64, st *specTemplate) error {
	cur := e.host(id)
	u := HostUpdate{ID: id}
	if !st.isHost { // a host's properties are the hosts rule's (export_host.go)
		if st.description != cur.Description {
			u.Description = &st.description
		}
		if st.tags != nil || cur.Tags != nil {
			if !slices.Equal(st.tags, cur.Tags) {
				u.Tags = &st.tags
			}
		}
		if st.groups != nil {
			var gids []uint64
			for _, g := range st.groups {
				gid := e.groupByName(g)
				if gid == 0 {
					ids, err := e.CreateGroups([]string{g})
					if err != nil {
						return prefixSpecField(st.field+".groups", err)
					}
					gid = ids[0]
				}
				gids = append(gids, gid)
			}
			slices.Sort(gids)
			if !slices.Equal(gids, cur.GroupIDs) {
				u.GroupIDs = gids
			}
		}
		if u.Description != nil || u.Tags != nil || u.GroupIDs != nil {
			if err := e.UpdateHosts([]HostUpdate{u}); err != nil {
				return prefixSpecField(st.field, err)
			}
			if e.old.Template(id) != nil {
				e.res.TemplatesUpdated++ // a new one is only created
			}
		}
	}
	// Value maps by name.
	var news []ValueMap
	var changes []ValueMapUpdate
	for _, m := range st.valueMaps {
		vid := e.valueMapByName(id, m.Name)
		if vid == 0 {
			m.HostID = id
			news = append(news, m)
			continue
		}
		if c := e.valueMap(vid); !slices.Equal(c.Mappings, m.Mappings) {
			changes = append(changes, ValueMapUpdate{ID: vid, Mappings: &m.Mappings})
		}
	}
	if _, err := e.CreateValueMaps(news); err != nil {
		return prefixSpecField(st.field, err)
	}
	if err := e.UpdateValueMaps(changes); err != nil {
		return prefixSpecField(st.field, err)
	}
	// Items by key, masters first so that dependents find them.
	pending := slices.Clone(st.items)
	for len(pending) > 0 {
		var next []specTemplateItem
		var creates []NewItem
		var createAt []specTemplateItem
		var ups []ItemUpdate
		for _, si := range pending {
			master := uint64(0)
			if si.masterKey != "" {
				if master = e.itemByKey(id, si.masterKey); master == 0 {
					next = append(next, si)
					continue
				}
			}
			vm := uint64(0)
			if si.valueMap != "" {
				vm = e.valueMapByName(id, si.valueMap)
			}
			iid := e.itemByKey(id, si.it.Key)
			if iid == 0 {
				ni := si.it
				ni.HostID, ni.MasterItemID, ni.ValueMapID = id, master, vm
				if st.isHost {
					ni.InterfaceID = e.hostInterface(id, st, si.iface)
				}
				creates = append(creates, ni)
				createAt = append(createAt, si)
				continue
			}
			is := si.it.ItemSpec
			c := e.item(iid)
			if si.it.LLD != nil {
				if err := e.UpdateRule(iid, matchProtos(si.it.LLD, c.Ext().LLD)); err != nil {
					return prefixSpecField(si.field, err)
				}
				c = e.item(iid)
			}
			want, _ := normItem(&is, si.field, &errList{}, nil, master != 0)
			want.ID, want.HostID, want.MasterItemID, want.ValueMapID = c.ID, c.HostID, master, vm
			want.TemplateID, want.MutExt().UUID, want.InterfaceID = c.TemplateID, c.Ext().UUID, c.InterfaceID
			if c.sameConfig(&want) && c.ValueMapID == vm {
				continue
			}
			ups = append(ups, ItemUpdate{ID: iid, Key: &is.Key, Name: &is.Name, Type: &is.Type, ValueType: &is.ValueType,
				Units: &is.Units, Delay: &is.Delay, History: &is.History, Trends: &is.Trends, Status: &is.Status,
				Timeout: &is.Timeout, RetryDelay: &is.RetryDelay, SNMPOID: &is.SNMPOID, Description: &is.Description,
				TimestampPrecision: &is.TimestampPrecision, Preprocessing: &is.Preprocessing, MasterItemID: &master,
				Params: &is.Params, ValueMapID: &vm, Tags: tagsOf(is.Tags), InventoryLink: &is.InventoryLink,
				HTTP: func(h *HTTPSpec) { *h = is.HTTPSpec }})
		}
		if len(creates) == 0 && len(ups) == 0 && len(next) > 0 {
			var el errList
			for _, si := range next {
				el.addf(si.field+".master_item.key", "template %q has no item %q", st.host, si.masterKey)
			}
			return el.err()
		}
		if _, err := e.CreateItems(creates); err != nil {
			return renameItemErr(err, createAt)
		}
		if err := e.UpdateItems(ups); err != nil {
			return prefixSpecField(st.field, err)
		}
		pending = next
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// tagsOf returns the tags of an import's list, for an ItemUpdate.
func tagsOf(ts []TagSpec) *[]Tag {
	out := make([]Tag, len(ts))
	for i, t := range ts {
		out[i] = Tag(t)
	}
	return &out
}

// renameItemErr is err with the batch's field paths ("items[3].key")
// replaced by the spec's.
func renameItemErr(err error, at []specTemplateItem) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, x := range j.Unwrap() {
			out = append(out, renameItemErr(x, at))
		}
		return errors.Join(out...)
	}
	fe, ok := err.(*FieldError)
	if !ok {
		return err
	}
	rest, found := strings.CutPrefix(fe.Field, "items[")
	n, tail, _ := strings.Cut(rest, "]")
	i, perr := strconv.Atoi(n)
	if !found || perr != nil || i < 0 || i >= len(at) {
		return err
	}
	return &FieldError{Field: at[i].field + tail, Err: fe.Err}
}
