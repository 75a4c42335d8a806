package catalog

import (
	"slices"
	"strconv"
	"strings"
)

// Discovery rules in an export, in Zabbix 6.0.14's order and defaults
// (recorded from the peer's configuration.export of its own templates
// and of a rule with every member set): a rule is written with its
// collecting item's members, less what a rule has not (history,
// trends, value type, units, inventory link, value map), with its
// filter, lifetime, prototypes, LLD macro paths and overrides. A
// trigger prototype over one item prototype only is written under it,
// the others under the rule.

// ruleOrder is the order of a rule's members.
var ruleOrder = strings.Fields(`uuid name type snmp_oid key delay status params ipmi_sensor authtype username password
	publickey privatekey filter lifetime description item_prototypes trigger_prototypes graph_prototypes host_prototypes
	interface_ref jmx_endpoint master_item timeout url query_fields parameters posts status_codes follow_redirects post_type
	http_proxy headers retrieve_mode request_method ssl_cert_file ssl_key_file ssl_key_password verify_peer verify_host
	lld_macro_paths preprocessing overrides`)

// protoOrder is the order of an item prototype's members: an item's,
// with discover after status and its trigger prototypes last.
var protoOrder = strings.Fields(`uuid name type snmp_oid key delay history trends status discover value_type allowed_hosts units params
	ipmi_sensor authtype username password publickey privatekey description inventory_link valuemap preprocessing
	interface_ref jmx_endpoint master_item timeout url query_fields parameters posts status_codes follow_redirects post_type
	http_proxy headers retrieve_mode request_method output_format ssl_cert_file ssl_key_file ssl_key_password verify_peer
	verify_host allow_traps tags trigger_prototypes`)

// reorder returns a map of src's members and extra's (extra first;
// empty ones left out) in order; members not in order are dropped.
func reorder(src *exportNode, order []string, extra map[string]*exportNode) *exportNode {
	have := map[string]*exportNode{}
	for i, k := range src.keys {
		have[k] = src.kids[i]
	}
	m := newMap()
	for _, k := range order {
		v, ok := extra[k]
		if !ok {
			v = have[k]
		}
		if v != nil && !v.empty() {
			m.put(k, v)
		}
	}
	return m
}

func scalarNode(s string) *exportNode { return &exportNode{scalar: s} }

// discoveryRules writes h's own rules, sorted by key.
func (x *exporter) discoveryRules(h *Host, template bool) *exportNode {
	var rules []*Item
	for _, it := range h.Items() {
		if it.Ext().LLD != nil && it.TemplateID == 0 {
			rules = append(rules, it)
		}
	}
	l := newList()
	for _, r := range natSorted(rules, func(i *Item) string { return i.Key }) {
		l.add(x.rule(h, r, template))
	}
	return l
}

func (x *exporter) rule(h *Host, r *Item, template bool) *exportNode {
	base := x.item(r, template)
	l := r.Ext().LLD
	extra := map[string]*exportNode{"filter": exportLLDFilter(&l.Filter, false), "overrides": x.overrides(l.Overrides)}
	if l.Lifetime != "" && l.Lifetime != DefaultLifetime {
		extra["lifetime"] = scalarNode(l.Lifetime)
	}
	if len(l.MacroPaths) > 0 {
		mp := newList()
		for _, p := range l.MacroPaths {
			m := newMap()
			m.req("lld_macro", p.Macro)
			m.req("path", p.Path)
			mp.add(m)
		}
		extra["lld_macro_paths"] = mp
	}
	// Trigger prototypes over one item prototype go under it.
	under := map[string][]*TriggerPrototype{}
	top := newList()
	var tops []*TriggerPrototype
	for i := range l.TriggerPrototypes {
		tp := &l.TriggerPrototypes[i]
		if k := x.soleProto(h, l, tp); k != "" {
			under[k] = append(under[k], tp)
		} else {
			tops = append(tops, tp)
		}
	}
	for _, tp := range sortedTriggerProtos(tops) {
		top.add(triggerProtoNode(tp, template))
	}
	extra["trigger_prototypes"] = top
	ips := newList()
	protos := make([]*ItemPrototype, 0, len(l.ItemPrototypes))
	for i := range l.ItemPrototypes {
		protos = append(protos, &l.ItemPrototypes[i])
	}
	for _, p := range natSorted(protos, func(p *ItemPrototype) string { return p.Item.Key }) {
		it := PrototypeItem(r, p)
		it.MasterItemID, it.ValueMapID = 0, 0
		node := x.item(&it, template)
		pe := map[string]*exportNode{}
		if p.Discover == 1 {
			pe["discover"] = scalarNode("NO_DISCOVER")
		}
		// A simple check's login, which Peregrine's items do not keep, is
		// the prototype's as imported; so are HTTP members a prototype of
		// another type carries (6.0 stores and exports them: RabbitMQ's
		// web.page.get prototypes).
		for k, v := range map[string]string{"username": p.Item.Username, "password": p.Item.Password,
			"url": p.Item.URL, "status_codes": p.Item.StatusCodes, "retrieve_mode": p.Item.RetrieveMode, "authtype": p.Item.AuthType} {
			if v != "" && !slices.Contains(node.keys, k) {
				pe[k] = scalarNode(v)
			}
		}
		if p.ValueMap != "" {
			vm := newMap()
			vm.req("name", p.ValueMap)
			pe["valuemap"] = vm
		}
		if p.MasterKey != "" {
			mm := newMap()
			mm.req("key", p.MasterKey)
			pe["master_item"] = mm
		}
		tl := newList()
		for _, tp := range sortedTriggerProtos(under[p.Item.Key]) {
			tl.add(triggerProtoNode(tp, template))
		}
		pe["trigger_prototypes"] = tl
		ips.add(reorder(node, protoOrder, pe))
	}
	extra["item_prototypes"] = ips
	hps := newList()
	hprotos := make([]*HostPrototype, 0, len(l.HostPrototypes))
	for i := range l.HostPrototypes {
		hprotos = append(hprotos, &l.HostPrototypes[i])
	}
	for _, hp := range natSorted(hprotos, func(p *HostPrototype) string { return p.Host }) {
		hps.add(x.hostProto(hp, template))
	}
	extra["host_prototypes"] = hps
	extra["graph_prototypes"] = x.graphPrototypes(h, l) // graph_proto_spec.go
	return reorder(base, ruleOrder, extra)
}

// soleProto returns the key of the one item prototype of l that tp's
// expressions read, "" if they read another item too (or none).
func (x *exporter) soleProto(h *Host, l *LLDRule, tp *TriggerPrototype) string {
	exprs := tp.Fields.Expression + " " + tp.Fields.RecoveryExpression
	refs := strings.Count(exprs, "(/")
	key := ""
	n := 0
	for _, p := range l.ItemPrototypes {
		c := 0
		for _, end := range []string{")", ","} {
			c += strings.Count(exprs, "/"+h.Host+"/"+p.Item.Key+end)
		}
		if c > 0 {
			if key != "" {
				return ""
			}
			key, n = p.Item.Key, c
		}
	}
	if n != refs {
		return ""
	}
	return key
}

func sortedTriggerProtos(ts []*TriggerPrototype) []*TriggerPrototype {
	return natSortedBy(ts, func(a, b *TriggerPrototype) int {
		return cmpChain(natCaseCmp(a.Fields.Description, b.Fields.Description), natCaseCmp(a.Fields.Expression, b.Fields.Expression),
			natCaseCmp(a.Fields.RecoveryExpression, b.Fields.RecoveryExpression))
	})
}

func triggerProtoNode(tp *TriggerPrototype, withUUID bool) *exportNode {
	t := &tp.Fields
	m := newMap()
	if withUUID || t.UUID != "" {
		m.str("uuid", t.UUID, "")
	}
	m.req("expression", t.Expression)
	m.str("recovery_mode", enumName(int(t.RecoveryMode), []string{"EXPRESSION", "RECOVERY_EXPRESSION", "NONE"}), "EXPRESSION")
	m.str("recovery_expression", t.RecoveryExpression, "")
	m.str("correlation_mode", enumName(int(t.CorrelationMode), []string{"DISABLED", "TAG_VALUE"}), "DISABLED")
	m.str("correlation_tag", t.CorrelationTag, "")
	m.req("name", t.Description)
	m.str("event_name", t.EventName, "")
	m.str("opdata", t.Opdata, "")
	m.str("url", t.URL, "")
	if !t.Enabled {
		m.req("status", "DISABLED")
	}
	if tp.Discover == 1 {
		m.req("discover", "NO_DISCOVER")
	}
	m.str("priority", enumName(int(t.Priority), priorityNames), "NOT_CLASSIFIED")
	m.str("description", t.Comments, "")
	if t.Multiple {
		m.req("type", "MULTIPLE")
	}
	if t.ManualClose {
		m.req("manual_close", "YES")
	}
	dl := newList()
	for _, d := range tp.Dependencies {
		dm := newMap()
		dm.req("name", d.Name)
		dm.req("expression", d.Expression)
		dm.str("recovery_expression", d.RecoveryExpression, "")
		dl.add(dm)
	}
	m.sub("dependencies", dl, false)
	m.sub("tags", exportTags(t.Tags), false)
	return m
}

var lldOpNames = map[int]string{OpMatches: "MATCHES_REGEX", OpNotMatches: "NOT_MATCHES_REGEX", OpExists: "EXISTS", OpNotExists: "NOT_EXISTS"}

// exportLLDFilter writes a filter; a rule's without conditions is left
// out (an override's is always written).
func exportLLDFilter(f *LLDFilter, always bool) *exportNode {
	if len(f.Conditions) == 0 && !always {
		return nil
	}
	m := newMap()
	m.str("evaltype", enumName(f.EvalType, evalTypeNames), "AND_OR")
	if f.EvalType == EvalCustom {
		m.req("formula", f.Formula)
	}
	l := newList()
	for _, c := range f.Conditions {
		cm := newMap()
		cm.req("macro", c.Macro)
		cm.str("value", c.Value, "")
		cm.str("operator", lldOpNames[c.Operator], "MATCHES_REGEX")
		cm.req("formulaid", c.FormulaID)
		l.add(cm)
	}
	m.sub("conditions", l, false)
	return m
}

var opCondExportNames = map[int]string{OpCondEquals: "EQUAL", OpCondNotEquals: "NOT_EQUAL", OpCondContains: "LIKE",
	OpCondNotContains: "NOT_LIKE", OpCondMatches: "REGEXP", OpCondNotMatches: "NOT_REGEXP"}

func (x *exporter) overrides(ovs []LLDOverride) *exportNode {
	l := newList()
	// Recorded from 6.0.14: by name, not by step.
	for _, o := range natSorted(ovs, func(o LLDOverride) string { return o.Name }) {
		m := newMap()
		m.req("name", o.Name)
		m.req("step", strconv.Itoa(o.Step))
		if o.Stop == 1 {
			m.req("stop", "STOP")
		}
		if f := exportLLDFilter(&o.Filter, false); f != nil {
			m.put("filter", f)
		}
		ops := newList()
		for _, op := range o.Operations {
			om := newMap()
			om.req("operationobject", enumName(op.Object, opObjectNames))
			om.str("operator", opCondExportNames[op.Operator], "EQUAL")
			om.str("value", op.Value, "")
			if op.Status != nil {
				om.req("status", enumName(*op.Status, []string{"ENABLED", "DISABLED"}))
			}
			if op.Discover != nil {
				om.req("discover", enumName(*op.Discover, discoverNames))
			}
			if op.Delay != nil {
				om.req("delay", *op.Delay)
			}
			if op.History != nil {
				om.req("history", *op.History)
			}
			if op.Trends != nil {
				om.req("trends", *op.Trends)
			}
			if op.Severity != nil {
				om.req("severity", enumName(*op.Severity, priorityNames))
			}
			om.sub("tags", exportTags(op.Tags), false)
			if len(op.Templates) > 0 {
				tl := newList()
				for _, t := range op.Templates {
					tm := newMap()
					tm.req("name", t)
					tl.add(tm)
				}
				om.put("templates", tl)
			}
			if op.Inventory != nil {
				om.req("inventory_mode", enumName(*op.Inventory+1, []string{"DISABLED", "MANUAL", "AUTOMATIC"}))
			}
			ops.add(om)
		}
		m.sub("operations", ops, false)
		l.add(m)
	}
	return l
}

var ifaceTypeNames = map[int]string{1: "ZABBIX", 2: "SNMP", 3: "IPMI", 4: "JMX"}

func (x *exporter) hostProto(hp *HostPrototype, template bool) *exportNode {
	m := newMap()
	if template || hp.UUID != "" {
		m.str("uuid", hp.UUID, "")
	}
	m.req("host", hp.Host)
	m.req("name", cmpOr(hp.Name, hp.Host))
	if hp.Status == 1 {
		m.req("status", "DISABLED")
	}
	if hp.Discover == 1 {
		m.req("discover", "NO_DISCOVER")
	}
	names := func(ids []uint64, byName []string, name func(uint64) string) []string {
		out := append([]string(nil), byName...)
		for _, id := range ids {
			if n := name(id); n != "" {
				out = append(out, n)
			}
		}
		return out
	}
	gl := newList()
	for _, g := range names(hp.GroupLinks, hp.GroupLinkNames, func(id uint64) string {
		if g := x.s.GroupByID(id); g != nil {
			return g.Name
		}
		return ""
	}) {
		gm, in := newMap(), newMap()
		in.req("name", g)
		gm.put("group", in)
		gl.add(gm)
	}
	m.sub("group_links", gl, false)
	gp := newList()
	for _, g := range hp.GroupPrototypes {
		gm := newMap()
		gm.req("name", g)
		gp.add(gm)
	}
	m.sub("group_prototypes", gp, false)
	tl := newList()
	for _, t := range names(hp.Templates, hp.TemplateNames, func(id uint64) string {
		if t := x.s.Template(id); t != nil {
			return t.Host
		}
		return ""
	}) {
		tm := newMap()
		tm.req("name", t)
		tl.add(tm)
	}
	m.sub("templates", tl, false)
	ml := newList()
	for _, mc := range hp.Macros {
		mm := newMap()
		mm.req("macro", mc.Macro)
		if mc.Type != 1 {
			mm.str("value", mc.Value, "")
		}
		mm.str("description", mc.Description, "")
		mm.str("type", enumName(mc.Type, []string{"TEXT", "SECRET_TEXT", "VAULT"}), "TEXT")
		ml.add(mm)
	}
	m.sub("macros", ml, false)
	m.sub("tags", exportTags(hp.Tags), false)
	if hp.CustomInterfaces == 1 {
		m.req("custom_interfaces", "YES")
	}
	il := newList()
	for _, f := range hp.Interfaces {
		im := newMap()
		im.str("type", ifaceTypeNames[f.Type], "ZABBIX")
		if f.Main == 0 {
			im.req("default", "NO")
		}
		if f.UseIP == 0 {
			im.req("useip", "NO")
		}
		im.str("ip", f.IP, "")
		im.str("dns", f.DNS, "")
		// Recorded from 6.0.14: 10050 is left out whatever the type.
		im.str("port", f.Port, "10050")
		if len(f.Details) > 0 {
			dm := newMap()
			for _, k := range []string{"version", "bulk", "community", "max_repetitions", "contextname", "securityname", "securitylevel", "authprotocol", "authpassphrase", "privprotocol", "privpassphrase"} {
				v, ok := f.Details[k]
				if !ok {
					continue
				}
				switch k {
				case "version":
					dm.str(k, map[string]string{"1": "SNMPV1", "2": "SNMPV2", "3": "SNMPV3"}[v], "SNMPV2")
				case "bulk":
					dm.str(k, map[string]string{"0": "NO", "1": "YES"}[v], "YES")
				default:
					dm.str(k, v, "")
				}
			}
			if !dm.empty() {
				im.put("details", dm)
			}
		}
		il.add(im)
	}
	m.sub("interfaces", il, false)
	if hp.InventoryMode != nil {
		m.req("inventory_mode", enumName(*hp.InventoryMode+1, []string{"DISABLED", "MANUAL", "AUTOMATIC"}))
	}
	return m
}
