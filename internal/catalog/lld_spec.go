package catalog

import (
	"strconv"

	"gopkg.in/yaml.v3"
)

// ExportDiscoveryRule is a template's discovery rule in Zabbix 6.0's
// export form: the item fields of its collecting type (ItemSpec), its
// uuid, lifetime, filter, LLD macro paths, overrides and prototypes.
// Any other member is refused by name.
type ExportDiscoveryRule struct {
	ItemSpec          `yaml:",inline"`
	UUID              string                   `yaml:"uuid"`
	Lifetime          string                   `yaml:"lifetime"`
	Filter            *ExportLLDFilter         `yaml:"filter"`
	MacroPaths        []ExportMacroPath        `yaml:"lld_macro_paths"`
	Overrides         []ExportOverride         `yaml:"overrides"`
	ItemPrototypes    []ExportItemPrototype    `yaml:"item_prototypes"`
	TriggerPrototypes []ExportTriggerPrototype `yaml:"trigger_prototypes"`
	HostPrototypes    []yaml.Node              `yaml:"host_prototypes"`
	GraphPrototypes   []GraphSpec              `yaml:"graph_prototypes"` // graph_proto_spec.go
	InterfaceRef      string                   `yaml:"interface_ref"`    // a host's rule's (export_host.go)
	Unsupported       map[string]yaml.Node     `yaml:",inline"`
}

// ExportLLDFilter is a filter in the export's form.
type ExportLLDFilter struct {
	EvalType   string               `yaml:"evaltype"` // AND_OR (default), AND, OR, FORMULA
	Formula    string               `yaml:"formula"`
	Conditions []ExportLLDCondition `yaml:"conditions"`
}

// ExportLLDCondition is a filter condition in the export's form.
type ExportLLDCondition struct {
	Macro     string `yaml:"macro"`
	Value     string `yaml:"value"`
	Operator  string `yaml:"operator"` // MATCHES_REGEX (default), NOT_MATCHES_REGEX, EXISTS, NOT_EXISTS
	FormulaID string `yaml:"formulaid"`
}

// ExportMacroPath is an LLD macro path in the export's form.
type ExportMacroPath struct {
	Macro string `yaml:"lld_macro"`
	Path  string `yaml:"path"`
}

// ExportOverride is an override in the export's form.
type ExportOverride struct {
	Name       string            `yaml:"name"`
	Step       string            `yaml:"step"`
	Stop       string            `yaml:"stop"` // NO_STOP (default), STOP
	Filter     *ExportLLDFilter  `yaml:"filter"`
	Operations []ExportOperation `yaml:"operations"`
}

// ExportOperation is an override operation in the export's form.
type ExportOperation struct {
	Object        string         `yaml:"operationobject"` // ITEM_PROTOTYPE, TRIGGER_PROTOTYPE, GRAPH_PROTOTYPE, HOST_PROTOTYPE
	Operator      string         `yaml:"operator"`        // EQUAL (default), NOT_EQUAL, LIKE, NOT_LIKE, REGEXP, NOT_REGEXP
	Value         string         `yaml:"value"`
	Status        string         `yaml:"status"`   // ENABLED, DISABLED
	Discover      string         `yaml:"discover"` // DISCOVER, NO_DISCOVER
	Delay         *string        `yaml:"delay"`
	History       *string        `yaml:"history"`
	Trends        *string        `yaml:"trends"`
	Severity      string         `yaml:"severity"`
	Tags          []TagSpec      `yaml:"tags"`
	Templates     []TemplateRef  `yaml:"templates"`
	InventoryMode string         `yaml:"inventory_mode"`
	Unsupported   map[string]any `yaml:",inline"`
}

// ExportItemPrototype is an item prototype in the export's form.
type ExportItemPrototype struct {
	ItemSpec          `yaml:",inline"`
	UUID              string                   `yaml:"uuid"`
	Discover          string                   `yaml:"discover"` // DISCOVER (default), NO_DISCOVER
	TriggerPrototypes []ExportTriggerPrototype `yaml:"trigger_prototypes"`
	// InterfaceRef is a host's prototype's interface: the host's main
	// interface of the type is used (export_host.go).
	InterfaceRef string               `yaml:"interface_ref"`
	Unsupported  map[string]yaml.Node `yaml:",inline"`
}

// ExportTriggerPrototype is a trigger prototype in the export's form.
type ExportTriggerPrototype struct {
	TriggerSpec `yaml:",inline"`
	Discover    string `yaml:"discover"`
}

var (
	evalTypeNames    = []string{"AND_OR", "AND", "OR", "FORMULA"}
	opObjectNames    = []string{"ITEM_PROTOTYPE", "TRIGGER_PROTOTYPE", "GRAPH_PROTOTYPE", "HOST_PROTOTYPE"}
	discoverNames    = []string{"DISCOVER", "NO_DISCOVER"}
	conditionOpNames = map[string]int{"": OpMatches, "MATCHES_REGEX": OpMatches, "NOT_MATCHES_REGEX": OpNotMatches, "EXISTS": OpExists, "NOT_EXISTS": OpNotExists}
	opCondNames      = map[string]int{"": OpCondEquals, "EQUAL": OpCondEquals, "NOT_EQUAL": OpCondNotEquals, "LIKE": OpCondContains, "NOT_LIKE": OpCondNotContains, "REGEXP": OpCondMatches, "NOT_REGEXP": OpCondNotMatches}
)

// exportItemFields converts an export item's enumerations (type,
// value_type, status) to the import format's, reporting an item type
// Peregrine does not collect.
func exportItemFields(is *ItemSpec, f string, el *errList) bool {
	typeName := cmpOr(is.Type, "ZABBIX_PASSIVE")
	conv := func(v *string, names map[string]string, def string) {
		switch n, ok := names[*v]; {
		case *v == "":
			*v = def
		case ok:
			*v = n
		}
	}
	conv(&is.Type, exportItemTypes, "0")
	conv(&is.ValueType, exportValueTypes, "3")
	if _, err := ParseItemType(is.Type); err != nil {
		el.addf(f+".type", "item type %s is not supported by Peregrine", typeName)
		return false
	}
	switch is.Status {
	case "ENABLED":
		is.Status = "enabled"
	case "DISABLED":
		is.Status = "disabled"
	}
	return true
}

func exportFilter(x *ExportLLDFilter, f string, el *errList) LLDFilter {
	var out LLDFilter
	if x == nil {
		return out
	}
	et, err := enumValue(x.EvalType, evalTypeNames, 0)
	if err != nil {
		el.add(f+".evaltype", err)
	}
	out.EvalType, out.Formula = et, x.Formula
	for i, c := range x.Conditions {
		op, ok := conditionOpNames[c.Operator]
		if !ok {
			el.addf(f+".conditions["+strconv.Itoa(i)+"].operator", "%q is not one of MATCHES_REGEX, NOT_MATCHES_REGEX, EXISTS, NOT_EXISTS", c.Operator)
		}
		out.Conditions = append(out.Conditions, LLDCondition{Macro: c.Macro, Value: c.Value, Operator: op, FormulaID: c.FormulaID})
	}
	return out
}

func exportTriggerProto(x *ExportTriggerPrototype, f string, el *errList) TriggerPrototype {
	st := triggerSpec(&x.TriggerSpec, f, el)
	d, err := enumValue(x.Discover, discoverNames, 0)
	if err != nil {
		el.add(f+".discover", err)
	}
	return TriggerPrototype{Fields: st.f, Dependencies: st.deps, Discover: d}
}

// exportRule validates a template's discovery rule into a NewItem with
// its LLD configuration.
func exportRule(x *ExportDiscoveryRule, f string, el *errList) (NewItem, bool) {
	refuseUnsupported(f, x.Unsupported, el)
	is := x.ItemSpec
	if !exportItemFields(&is, f, el) {
		return NewItem{}, false
	}
	is.ValueType, is.History, is.Trends, is.Units = "text", "0", "0", ""
	l := &LLDRule{Lifetime: x.Lifetime, Filter: exportFilter(x.Filter, f+".filter", el)}
	for _, mp := range x.MacroPaths {
		l.MacroPaths = append(l.MacroPaths, LLDMacroPath(mp))
	}
	for oi, xo := range x.Overrides {
		of := f + ".overrides[" + strconv.Itoa(oi) + "]"
		o := LLDOverride{Name: xo.Name, Filter: exportFilter(xo.Filter, of+".filter", el)}
		if xo.Step != "" {
			n, err := strconv.Atoi(xo.Step)
			if err != nil {
				el.add(of+".step", err)
			}
			o.Step = n
		}
		s, err := enumValue(xo.Stop, []string{"NO_STOP", "STOP"}, 0)
		if err != nil {
			el.add(of+".stop", err)
		}
		o.Stop = s
		for pi, xp := range xo.Operations {
			pf := of + ".operations[" + strconv.Itoa(pi) + "]"
			var op LLDOperation
			var err error
			if op.Object, err = enumValue(xp.Object, opObjectNames, 0); err != nil {
				el.add(pf+".operationobject", err)
			}
			n, ok := opCondNames[xp.Operator]
			if !ok {
				el.addf(pf+".operator", "%q is not one of EQUAL, NOT_EQUAL, LIKE, NOT_LIKE, REGEXP, NOT_REGEXP", xp.Operator)
			}
			op.Operator, op.Value = n, xp.Value
			opt := func(v, field string, names []string) *int {
				if v == "" {
					return nil
				}
				n, err := enumValue(v, names, 0)
				if err != nil {
					el.add(pf+"."+field, err)
				}
				return &n
			}
			op.Status = opt(xp.Status, "status", []string{"ENABLED", "DISABLED"})
			op.Discover = opt(xp.Discover, "discover", discoverNames)
			op.Severity = opt(xp.Severity, "severity", priorityNames)
			op.Inventory = opt(xp.InventoryMode, "inventory_mode", []string{"MANUAL", "AUTOMATIC"})
			op.Delay, op.History, op.Trends = xp.Delay, xp.History, xp.Trends
			for _, t := range xp.Tags {
				op.Tags = append(op.Tags, Tag(t))
			}
			for _, t := range xp.Templates {
				op.Templates = append(op.Templates, t.Name)
			}
			for k := range xp.Unsupported {
				el.addf(pf+"."+k, "not supported: Peregrine does not store it")
			}
			o.Operations = append(o.Operations, op)
		}
		l.Overrides = append(l.Overrides, o)
	}
	for pi := range x.ItemPrototypes {
		xp := &x.ItemPrototypes[pi]
		pf := f + ".item_prototypes[" + strconv.Itoa(pi) + "]"
		refuseUnsupported(pf, xp.Unsupported, el)
		ps := xp.ItemSpec
		if !exportItemFields(&ps, pf, el) {
			continue
		}
		p := ItemPrototype{UUID: xp.UUID}
		if ps.MasterItem != nil {
			p.MasterKey, ps.MasterItem = ps.MasterItem.Key, nil
		}
		if ps.ValueMap != nil {
			p.ValueMap, ps.ValueMap = ps.ValueMap.Name, nil
		}
		d, err := enumValue(xp.Discover, discoverNames, 0)
		if err != nil {
			el.add(pf+".discover", err)
		}
		p.Discover, p.Item = d, ps
		l.ItemPrototypes = append(l.ItemPrototypes, p)
		for ti := range xp.TriggerPrototypes {
			l.TriggerPrototypes = append(l.TriggerPrototypes, exportTriggerProto(&xp.TriggerPrototypes[ti], pf+".trigger_prototypes["+strconv.Itoa(ti)+"]", el))
		}
	}
	for ti := range x.TriggerPrototypes {
		l.TriggerPrototypes = append(l.TriggerPrototypes, exportTriggerProto(&x.TriggerPrototypes[ti], f+".trigger_prototypes["+strconv.Itoa(ti)+"]", el))
	}
	for hi := range x.HostPrototypes {
		n := &x.HostPrototypes[hi]
		var x exportHostProto
		if err := n.Decode(&x); err != nil {
			el.add(f+".host_prototypes["+strconv.Itoa(hi)+"]", err)
			continue
		}
		hp := x.prototype(f+".host_prototypes["+strconv.Itoa(hi)+"]", el)
		l.HostPrototypes = append(l.HostPrototypes, hp)
	}
	l.GraphPrototypes = exportGraphProtos(x.GraphPrototypes, f+".graph_prototypes", el)
	checkLLDRule(l, is.Key, f, el)
	if _, ok := normItem(&is, f, el, nil, is.MasterItem != nil); !ok {
		return NewItem{}, false
	}
	return NewItem{ItemSpec: is, UUID: x.UUID, LLD: l}, true
}

// matchProtos returns want with the IDs of cur's prototypes of the same
// key (item prototypes), name and expression (trigger prototypes) or
// host (host prototypes): an import updates them in place.
func matchProtos(want, cur *LLDRule) *LLDRule {
	w := cloneLLD(want)
	if cur == nil {
		return w
	}
	for i := range w.ItemPrototypes {
		for _, c := range cur.ItemPrototypes {
			if c.Item.Key == w.ItemPrototypes[i].Item.Key {
				w.ItemPrototypes[i].ID, w.ItemPrototypes[i].TemplateID = c.ID, c.TemplateID
				if w.ItemPrototypes[i].UUID == "" {
					w.ItemPrototypes[i].UUID = c.UUID
				}
			}
		}
	}
	for i := range w.TriggerPrototypes {
		f := &w.TriggerPrototypes[i]
		for _, c := range cur.TriggerPrototypes {
			if c.Fields.Description == f.Fields.Description && c.Fields.Expression == f.Fields.Expression {
				f.ID, f.TemplateID = c.ID, c.TemplateID
				if f.Fields.UUID == "" {
					f.Fields.UUID = c.Fields.UUID
				}
			}
		}
	}
	matchGraphProtos(w, cur)
	for i := range w.HostPrototypes {
		for _, c := range cur.HostPrototypes {
			if c.Host == w.HostPrototypes[i].Host {
				w.HostPrototypes[i].ID, w.HostPrototypes[i].TemplateID = c.ID, c.TemplateID
				if w.HostPrototypes[i].UUID == "" {
					w.HostPrototypes[i].UUID = c.UUID
				}
			}
		}
	}
	return w
}

// exportHostProto is a host prototype in the export's form.
type exportHostProto struct {
	UUID       string `yaml:"uuid"`
	Host       string `yaml:"host"`
	Name       string `yaml:"name"`
	Status     string `yaml:"status"`   // ENABLED (default), DISABLED
	Discover   string `yaml:"discover"` // DISCOVER (default), NO_DISCOVER
	GroupLinks []struct {
		Group struct {
			Name string `yaml:"name"`
		} `yaml:"group"`
	} `yaml:"group_links"`
	GroupPrototypes []struct {
		Name string `yaml:"name"`
	} `yaml:"group_prototypes"`
	Templates []TemplateRef `yaml:"templates"`
	Macros    []struct {
		Macro       string `yaml:"macro"`
		Value       string `yaml:"value"`
		Description string `yaml:"description"`
		Type        string `yaml:"type"` // TEXT (default), SECRET_TEXT, VAULT
	} `yaml:"macros"`
	Tags             []TagSpec `yaml:"tags"`
	InventoryMode    string    `yaml:"inventory_mode"`    // DISABLED, MANUAL (default), AUTOMATIC
	CustomInterfaces string    `yaml:"custom_interfaces"` // NO (default), YES
	Interfaces       []struct {
		Type    string            `yaml:"type"` // ZABBIX (default), SNMP, IPMI, JMX
		Main    string            `yaml:"default"`
		UseIP   string            `yaml:"useip"`
		IP      string            `yaml:"ip"`
		DNS     string            `yaml:"dns"`
		Port    string            `yaml:"port"`
		Details map[string]string `yaml:"details"`
	} `yaml:"interfaces"`
	Unsupported map[string]yaml.Node `yaml:",inline"`
}

// prototype validates x into a HostPrototype (its group links and
// templates by name).
func (x *exportHostProto) prototype(f string, el *errList) HostPrototype {
	refuseUnsupported(f, x.Unsupported, el)
	hp := HostPrototype{UUID: x.UUID, Host: x.Host, Name: x.Name}
	var err error
	if hp.Status, err = enumValue(x.Status, []string{"ENABLED", "DISABLED"}, 0); err != nil {
		el.add(f+".status", err)
	}
	if hp.Discover, err = enumValue(x.Discover, discoverNames, 0); err != nil {
		el.add(f+".discover", err)
	}
	for _, g := range x.GroupLinks {
		hp.GroupLinkNames = append(hp.GroupLinkNames, g.Group.Name)
	}
	for _, g := range x.GroupPrototypes {
		hp.GroupPrototypes = append(hp.GroupPrototypes, g.Name)
	}
	for _, t := range x.Templates {
		hp.TemplateNames = append(hp.TemplateNames, t.Name)
	}
	for i, m := range x.Macros {
		t, err := enumValue(m.Type, []string{"TEXT", "SECRET_TEXT", "VAULT"}, 0)
		if err != nil {
			el.add(f+".macros["+strconv.Itoa(i)+"].type", err)
		}
		hp.Macros = append(hp.Macros, HostProtoMacro{Macro: m.Macro, Value: m.Value, Description: m.Description, Type: t})
	}
	for _, t := range x.Tags {
		hp.Tags = append(hp.Tags, Tag(t))
	}
	// Recorded from 6.0.14: an imported prototype without
	// inventory_mode has -1 (DISABLED, nil).
	switch x.InventoryMode {
	case "", "DISABLED":
	case "MANUAL":
		hp.InventoryMode = new(0)
	case "AUTOMATIC":
		hp.InventoryMode = new(1)
	default:
		el.addf(f+".inventory_mode", "%q is not one of DISABLED, MANUAL, AUTOMATIC", x.InventoryMode)
	}
	if hp.CustomInterfaces, err = enumValue(x.CustomInterfaces, []string{"NO", "YES"}, 0); err != nil {
		el.add(f+".custom_interfaces", err)
	}
	types := map[string]int{"": 1, "ZABBIX": 1, "SNMP": 2, "IPMI": 3, "JMX": 4}
	for i, in := range x.Interfaces {
		t, ok := types[in.Type]
		if !ok {
			el.addf(f+".interfaces["+strconv.Itoa(i)+"].type", "%q is not one of ZABBIX, SNMP, IPMI, JMX", in.Type)
		}
		yes := func(v string) int {
			if v == "NO" {
				return 0
			}
			return 1
		}
		port := in.Port
		if port == "" {
			// Recorded from 6.0.14: the type's default port.
			port = map[int]string{1: "10050", 2: "161", 3: "623", 4: "12345"}[t]
		}
		details := in.Details
		if len(details) > 0 {
			// The export's names of an SNMP interface's version and bulk.
			details = map[string]string{}
			for k, v := range in.Details {
				switch {
				case k == "version":
					v = map[string]string{"SNMPV1": "1", "SNMPV2": "2", "SNMPV3": "3"}[v]
				case k == "bulk":
					v = map[string]string{"NO": "0", "YES": "1"}[v]
				}
				details[k] = v
			}
		}
		hp.Interfaces = append(hp.Interfaces, HostProtoInterface{Type: t, Main: yes(in.Main), UseIP: yes(in.UseIP), IP: in.IP, DNS: in.DNS, Port: port, Details: details})
	}
	return hp
}
