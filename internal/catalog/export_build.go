package catalog

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ExportOptions select what Snapshot.Export writes: configuration.export's
// options (host groups, hosts and templates by ID; IDs that name nothing
// are skipped, as 6.0 skips them) and its format.
type ExportOptions struct {
	Groups, Hosts, Templates []uint64
	// MediaTypes are the media types to export (from AlertConfig).
	MediaTypes []*MediaType
	// Format is FormatYAML, FormatXML, FormatJSON or "raw" (JSON, for the
	// API to return as an object).
	Format string
	// Pretty indents XML and JSON (configuration.export's prettyprint).
	Pretty bool
	// Date is the export's date; zero is now.
	Date time.Time
}

// Export writes the selected objects as Zabbix 6.0.14's
// configuration.export does: the same members in the same order, values
// equal to 6.0's defaults left out, lists sorted as 6.0 sorts them
// (natural order, without case), enumerations by their export names;
// the groups of exported hosts and templates are exported with them,
// triggers over one item of a host under that item and the others, and
// graphs, at the top level. Only the owners' own objects are written,
// not the copies of linked templates' (6.0's "inherited": false).
//
// Host groups keep no uuid in Peregrine: a group's is derived from its
// name as the uuids of Zabbix's official template files are (md5 of the
// name, laid out as a version 4 uuid), which gives those groups the
// uuid 6.0 has for them.
func (s *Snapshot) Export(o ExportOptions) ([]byte, error) {
	date := o.Date
	if date.IsZero() {
		date = time.Now()
	}
	x := exporter{s: s}
	root := newMap()
	doc := newMap()
	root.put("zabbix_export", doc)
	doc.req("version", "6.0")
	doc.req("date", date.UTC().Format("2006-01-02T15:04:05Z"))

	groups := map[uint64]bool{}
	for _, id := range o.Groups {
		if s.GroupByID(id) != nil {
			groups[id] = true
		}
	}
	var tmpls, hosts []*Host
	seen := map[uint64]bool{}
	for _, id := range o.Templates {
		if t := s.Template(id); t != nil && !seen[id] {
			seen[id] = true
			tmpls = append(tmpls, t)
		}
	}
	for _, id := range o.Hosts {
		if h := s.HostByID(id); h != nil && !seen[id] {
			seen[id] = true
			hosts = append(hosts, h)
		}
	}
	for _, h := range append(slices.Clone(tmpls), hosts...) {
		for _, g := range h.GroupIDs {
			groups[g] = true
		}
	}
	if len(groups) > 0 {
		var gs []string
		for id := range groups {
			gs = append(gs, s.GroupByID(id).Name)
		}
		gl := newList()
		for _, name := range natSorted(gs, func(n string) string { return n }) {
			m := newMap()
			m.req("uuid", GroupUUID(name))
			m.req("name", name)
			gl.add(m)
		}
		doc.put("groups", gl)
	}
	// Triggers over one item of an exported owner go under the item;
	// the others of the owners go to the top level.
	owners := map[uint64]bool{}
	for _, h := range append(slices.Clone(tmpls), hosts...) {
		owners[h.ID] = true
	}
	x.simple = map[uint64][]*Trigger{}
	var top []*Trigger
	for _, t := range x.ownersTriggers(owners) {
		if len(t.ItemIDs) == 1 {
			if it := s.AnyItem(t.ItemIDs[0]); it != nil && it.TemplateID == 0 && owners[it.HostID] {
				x.simple[it.ID] = append(x.simple[it.ID], t)
				continue
			}
		}
		top = append(top, t)
	}
	if len(tmpls) > 0 {
		l := newList()
		for _, t := range natSorted(tmpls, func(h *Host) string { return h.Host }) {
			l.add(x.template(t))
		}
		doc.put("templates", l)
	}
	if len(hosts) > 0 {
		l := newList()
		for _, h := range natSorted(hosts, func(h *Host) string { return h.Host }) {
			l.add(x.host(h))
		}
		doc.put("hosts", l)
	}
	if len(top) > 0 {
		doc.put("triggers", x.triggers(top, false))
	}
	var graphs []*Graph
	for i := range s.Graphs() {
		g := &s.Graphs()[i]
		if owners[g.HostID] && g.TemplateID == 0 {
			graphs = append(graphs, g)
		}
	}
	if len(graphs) > 0 {
		doc.put("graphs", x.graphs(graphs))
	}
	if len(o.MediaTypes) > 0 {
		doc.put("media_types", mediaTypesNode(o.MediaTypes))
	}
	switch o.Format {
	case FormatYAML:
		return writeYAML(root), nil
	case FormatXML:
		return writeXML(root, o.Pretty), nil
	case FormatJSON:
		return writeJSON(root, o.Pretty), nil
	case "raw":
		return writeJSON(root, false), nil
	}
	return nil, fmt.Errorf("catalog: export format %q is not one of yaml, xml, json, raw", o.Format)
}

// GroupUUID is the uuid an export gives a host group: the md5 of its
// name laid out as a version 4 uuid, as Zabbix's official template
// files derive theirs.
func GroupUUID(name string) string {
	b := md5.Sum([]byte(name))
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}

// natSorted returns xs stably sorted by key in natural order without
// case (6.0's CArrayHelper::sort).
func natSorted[T any](xs []T, key func(T) string) []T {
	out := slices.Clone(xs)
	slices.SortStableFunc(out, func(a, b T) int { return natCaseCmp(key(a), key(b)) })
	return out
}

type exporter struct {
	s      *Snapshot
	simple map[uint64][]*Trigger // item ID -> its triggers written under it
	ifRefs map[uint64]string     // interface ID -> interface_ref, while a host is written
}

// ownersTriggers returns the owners' own triggers (not copies).
func (x *exporter) ownersTriggers(owners map[uint64]bool) []*Trigger {
	var out []*Trigger
	add := func(ts []Trigger) {
		for i := range ts {
			t := &ts[i]
			if t.TemplateID != 0 || len(t.HostIDs) == 0 || t.Discovery != nil {
				continue
			}
			for _, h := range t.HostIDs {
				if owners[h] {
					out = append(out, t)
					break
				}
			}
		}
	}
	add(x.s.Triggers())
	add(x.s.TemplateTriggers())
	return out
}

func (x *exporter) template(t *Host) *exportNode {
	m := newMap()
	m.req("uuid", t.Ext().UUID)
	m.req("template", t.Host)
	m.str("name", t.Name, "")
	m.str("description", t.Description, "")
	m.sub("templates", x.links(t.ID), false)
	m.sub("groups", x.groupNames(t), true)
	m.sub("items", x.items(t, true), false)
	m.sub("discovery_rules", x.discoveryRules(t, true), false) // export_lld.go
	m.sub("httptests", x.httptests(t.ID, true), false)
	m.sub("tags", exportTags(t.Tags), false)
	m.sub("macros", x.macros(t.ID), false)
	m.sub("dashboards", x.dashboards(t.ID), false)
	m.sub("valuemaps", x.valueMaps(t.ID, true), false)
	return m
}

func (x *exporter) host(h *Host) *exportNode {
	m := newMap()
	m.req("host", h.Host)
	m.str("name", h.Name, "")
	m.str("description", h.Description, "")
	if !h.Enabled {
		m.req("status", "DISABLED")
	}
	m.str("ipmi_authtype", enumName(int(h.Ext().IPMI.AuthType)+1, []string{"DEFAULT", "NONE", "MD2", "MD5", "", "STRAIGHT", "OEM", "RMCP_PLUS"}), "DEFAULT")
	m.str("ipmi_privilege", enumName(int(h.Ext().IPMI.Privilege), []string{"", "CALLBACK", "USER", "OPERATOR", "ADMIN", "OEM"}), "USER")
	m.str("ipmi_username", h.Ext().IPMI.Username, "")
	m.str("ipmi_password", h.Ext().IPMI.Password, "")
	m.sub("templates", x.links(h.ID), false)
	m.sub("groups", x.groupNames(h), true)
	refs := map[uint64]string{}
	if len(h.Interfaces) > 0 {
		for i, f := range h.Interfaces {
			refs[f.ID] = "if" + strconv.Itoa(i+1)
		}
		ifs := natSortedBy(h.Interfaces, func(a, b Interface) int {
			return cmpChain(natCaseCmp(strconv.Itoa(int(a.Type)), strconv.Itoa(int(b.Type))),
				natCaseCmp(a.IP, b.IP), natCaseCmp(a.DNS, b.DNS), natCaseCmp(a.Port, b.Port))
		})
		l := newList()
		for _, f := range ifs {
			l.add(exportInterface(&f, refs[f.ID]))
		}
		m.put("interfaces", l)
	}
	x.ifRefs = refs
	m.sub("items", x.items(h, false), false)
	m.sub("discovery_rules", x.discoveryRules(h, false), false)
	x.ifRefs = nil
	m.sub("httptests", x.httptests(h.ID, false), false)
	m.sub("tags", exportTags(h.Tags), false)
	m.sub("macros", x.macros(h.ID), false)
	// The inventory's fields in 6.0's order, then its mode, MANUAL (the
	// default) left out (recorded from 6.0.14).
	mode := "DISABLED"
	if inv := h.Ext().Inventory; inv != nil {
		fields := newMap()
		for _, f := range InventoryFieldNames {
			if v := inv.Fields[f]; v != "" {
				fields.req(f, v)
			}
		}
		m.sub("inventory", fields, false)
		mode = [...]string{"MANUAL", "AUTOMATIC"}[inv.Mode]
	}
	m.str("inventory_mode", mode, "MANUAL")
	m.sub("valuemaps", x.valueMaps(h.ID, false), false)
	return m
}

func cmpChain(cs ...int) int {
	for _, c := range cs {
		if c != 0 {
			return c
		}
	}
	return 0
}

func natSortedBy[T any](xs []T, cmp func(a, b T) int) []T {
	out := slices.Clone(xs)
	slices.SortStableFunc(out, cmp)
	return out
}

func exportInterface(f *Interface, ref string) *exportNode {
	m := newMap()
	m.str("default", yesNo(f.Main), "YES")
	m.str("type", enumName(int(f.Type), []string{"", "ZABBIX", "SNMP", "IPMI", "JMX"}), "ZABBIX")
	m.str("useip", yesNo(f.UseIP), "YES")
	m.str("ip", f.IP, "127.0.0.1")
	m.str("dns", f.DNS, "")
	m.str("port", f.Port, "10050")
	if f.Type == 2 && len(f.Details) > 0 {
		d := f.Details
		dm := newMap()
		dm.str("version", enumName(atoiOr(d["version"], 2), []string{"", "SNMPV1", "SNMPV2", "SNMPV3"}), "SNMPV2")
		dm.str("community", d["community"], "")
		dm.str("contextname", d["contextname"], "")
		dm.str("securityname", d["securityname"], "")
		dm.str("securitylevel", enumName(atoiOr(d["securitylevel"], 0), []string{"NOAUTHNOPRIV", "AUTHNOPRIV", "AUTHPRIV"}), "NOAUTHNOPRIV")
		dm.str("authprotocol", enumName(atoiOr(d["authprotocol"], 0), []string{"MD5", "SHA1", "SHA224", "SHA256", "SHA384", "SHA512"}), "MD5")
		dm.str("authpassphrase", d["authpassphrase"], "")
		dm.str("privprotocol", enumName(atoiOr(d["privprotocol"], 0), []string{"DES", "AES128", "AES192", "AES256", "AES192C", "AES256C"}), "DES")
		dm.str("privpassphrase", d["privpassphrase"], "")
		dm.str("bulk", yesNo(d["bulk"] != "0"), "YES")
		m.sub("details", dm, false)
	}
	m.req("interface_ref", ref)
	return m
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

// enumName is names[i], or i as a number where names has none.
func enumName(i int, names []string) string {
	if i >= 0 && i < len(names) && names[i] != "" {
		return names[i]
	}
	return strconv.Itoa(i)
}

func (x *exporter) links(owner uint64) *exportNode {
	var names []string
	for _, id := range x.s.LinkedTemplates(owner) {
		if t := x.s.Template(id); t != nil {
			names = append(names, t.Host)
		}
	}
	l := newList()
	for _, n := range natSorted(names, func(s string) string { return s }) {
		m := newMap()
		m.req("name", n)
		l.add(m)
	}
	return l
}

func (x *exporter) groupNames(h *Host) *exportNode {
	var names []string
	for _, id := range h.GroupIDs {
		if g := x.s.GroupByID(id); g != nil {
			names = append(names, g.Name)
		}
	}
	l := newList()
	for _, n := range natSorted(names, func(s string) string { return s }) {
		m := newMap()
		m.req("name", n)
		l.add(m)
	}
	return l
}

func exportTags(tags []Tag) *exportNode {
	l := newList()
	for _, t := range natSortedBy(tags, func(a, b Tag) int {
		return cmpChain(natCaseCmp(a.Tag, b.Tag), natCaseCmp(a.Value, b.Value))
	}) {
		m := newMap()
		m.req("tag", t.Tag)
		m.str("value", t.Value, "")
		l.add(m)
	}
	return l
}

func (x *exporter) macros(owner uint64) *exportNode {
	ms := x.s.Macros(owner)
	inner := func(m *Macro) string {
		if len(m.Macro) < 3 {
			return m.Macro
		}
		return m.Macro[2 : len(m.Macro)-1]
	}
	l := newList()
	for _, m := range natSorted(ms, inner) {
		n := newMap()
		n.req("macro", m.Macro)
		n.str("type", enumName(int(m.Type), []string{"TEXT", "SECRET_TEXT", "VAULT"}), "TEXT")
		if enumName(int(m.Type), []string{"TEXT", "SECRET_TEXT", "VAULT"}) != "SECRET_TEXT" {
			n.str("value", m.Value, "") // 6.0 never exports a secret's value
		}
		n.str("description", m.Description, "")
		l.add(n)
	}
	return l
}

func (x *exporter) valueMaps(owner uint64, withUUID bool) *exportNode {
	var vms []*ValueMap
	for i := range x.s.ValueMaps() {
		if v := &x.s.ValueMaps()[i]; v.HostID == owner {
			vms = append(vms, v)
		}
	}
	l := newList()
	for _, v := range natSorted(vms, func(v *ValueMap) string { return v.Name }) {
		m := newMap()
		if withUUID {
			m.req("uuid", v.UUID)
		}
		m.req("name", v.Name)
		ml := newList()
		for _, mp := range v.Mappings {
			mm := newMap()
			mm.str("type", enumName(int(mp.Type), mappingTypeNames), "EQUAL")
			if mp.Type != 5 { // DEFAULT has no value
				mm.str("value", mp.Value, "")
			}
			mm.req("newvalue", mp.NewValue)
			ml.add(mm)
		}
		m.sub("mappings", ml, true)
		l.add(m)
	}
	return l
}

// exportItemTypeNames are the export's item type names by Zabbix's
// number.
var exportItemTypeNames = func() map[int]string {
	m := map[int]string{}
	for name, n := range exportItemTypes {
		i, _ := strconv.Atoi(n)
		m[i] = name
	}
	return m
}()

func (x *exporter) items(h *Host, template bool) *exportNode {
	var its []*Item
	for _, it := range h.Items() {
		// Rules are discovery_rules'; discovered items are not written
		// (6.0 writes neither as items).
		if it.TemplateID == 0 && it.Ext().LLD == nil && it.Discovery == nil && it.Type != WebItem { // web items go with their scenario
			its = append(its, it)
		}
	}
	l := newList()
	for _, it := range natSorted(its, func(i *Item) string { return i.Key }) {
		l.add(x.item(it, template))
	}
	return l
}

func (x *exporter) item(it *Item, template bool) *exportNode {
	m := newMap()
	if template {
		m.req("uuid", it.Ext().UUID)
	}
	m.req("name", it.Name)
	typeName, ok := exportItemTypeNames[int(it.Type)]
	if !ok {
		typeName = strconv.Itoa(int(it.Type))
	}
	m.str("type", typeName, "ZABBIX_PASSIVE")
	m.str("snmp_oid", it.Ext().SNMPOID, "")
	m.req("key", it.Key)
	if it.Type != SNMPTrap {
		// 6.0 writes no interval for an SNMP trap item, whatever the
		// database holds ("0"); trapper and dependent items keep theirs.
		m.str("delay", it.Delay, "1m")
	}
	m.str("history", it.History, "90d")
	m.str("trends", it.Trends, "365d")
	if !it.Enabled {
		m.req("status", "DISABLED")
	}
	m.str("value_type", enumName(int(it.ValueType), []string{"FLOAT", "CHAR", "LOG", "UNSIGNED", "TEXT"}), "UNSIGNED")
	m.str("allowed_hosts", trapHostsOf(it), "")
	m.str("units", it.Units, "")
	m.str("params", it.Ext().Params, "")
	m.str("ipmi_sensor", it.Ext().IPMISensor, "")
	var auth int
	var user, pass, pub, priv string
	authNames := []string{"NONE", "BASIC", "NTLM", "KERBEROS", "DIGEST"}
	switch {
	case it.Ext().HTTP != nil:
		auth, user, pass = int(it.Ext().HTTP.AuthType), it.Ext().HTTP.Username, it.Ext().HTTP.Password
	case it.Ext().Login != nil:
		auth, user, pass, pub, priv = int(it.Ext().Login.AuthType), it.Ext().Login.Username, it.Ext().Login.Password, it.Ext().Login.PublicKey, it.Ext().Login.PrivateKey
		authNames = []string{"PASSWORD", "PUBLIC_KEY"}
	case it.Ext().JMX != nil:
		user, pass = it.Ext().JMX.Username, it.Ext().JMX.Password
	case it.Ext().ODBC != nil:
		user, pass = it.Ext().ODBC.Username, it.Ext().ODBC.Password
	}
	m.str("authtype", enumName(auth, authNames), authNames[0])
	m.str("username", user, "")
	m.str("password", pass, "")
	m.str("publickey", pub, "")
	m.str("privatekey", priv, "")
	m.str("description", it.Ext().Description, "")
	if it.InventoryLink > 0 && int(it.InventoryLink) <= len(inventoryFields) {
		m.req("inventory_link", inventoryFields[it.InventoryLink-1])
	}
	m.str("logtimefmt", it.Ext().LogTimeFmt, "")
	if v := x.s.ValueMap(it.ValueMapID); v != nil {
		vm := newMap()
		vm.req("name", v.Name)
		m.put("valuemap", vm)
	}
	m.sub("preprocessing", exportSteps(it.Preprocessing), false)
	if !template && it.InterfaceID != 0 && x.ifRefs[it.InterfaceID] != "" {
		m.req("interface_ref", x.ifRefs[it.InterfaceID])
	}
	if it.Ext().JMX != nil {
		m.str("jmx_endpoint", it.Ext().JMX.Endpoint, "")
	}
	if master := x.s.AnyItem(it.MasterItemID); master != nil && it.MasterItemID != 0 {
		mm := newMap()
		mm.req("key", master.Key)
		m.put("master_item", mm)
	}
	m.str("timeout", cmpOr(it.Ext().Timeout, "3s"), "3s")
	if h := it.Ext().HTTP; h != nil {
		m.str("url", h.URL, "")
		m.sub("query_fields", exportFields(h.QueryFields, false), false)
	}
	if len(it.Ext().Parameters) > 0 {
		l := newList()
		for _, p := range it.Ext().Parameters {
			pm := newMap()
			pm.req("name", p.Name)
			pm.str("value", p.Value, "")
			l.add(pm)
		}
		m.put("parameters", l)
	}
	if h := it.Ext().HTTP; h != nil {
		m.str("posts", h.Posts, "")
		m.str("status_codes", h.StatusCodes, "200")
		m.str("follow_redirects", yesNo(h.FollowRedirects), "YES")
		m.str("post_type", enumName(int(h.PostType), []string{"RAW", "", "JSON", "XML"}), "RAW")
		m.str("http_proxy", h.HTTPProxy, "")
		m.sub("headers", exportFields(h.Headers, true), false)
		m.str("retrieve_mode", enumName(int(h.RetrieveMode), []string{"BODY", "HEADERS", "BOTH"}), "BODY")
		m.str("request_method", enumName(int(h.RequestMethod), httpMethodNames[:]), "GET")
		m.str("output_format", enumName(int(h.OutputFormat), []string{"RAW", "JSON"}), "RAW")
		m.str("ssl_cert_file", h.SSLCertFile, "")
		m.str("ssl_key_file", h.SSLKeyFile, "")
		m.str("ssl_key_password", h.SSLKeyPassword, "")
		m.str("verify_peer", yesNo(h.VerifyPeer), "NO")
		m.str("verify_host", yesNo(h.VerifyHost), "NO")
	}
	if allowTrapsOf(it) != "" {
		m.req("allow_traps", "YES")
	}
	m.sub("tags", exportTags(it.Tags), false)
	if ts := x.simple[it.ID]; len(ts) > 0 {
		m.put("triggers", x.triggers(ts, template))
	}
	return m
}

func exportFields(fs []HTTPField, valueRequired bool) *exportNode {
	l := newList()
	for _, f := range fs {
		m := newMap()
		m.req("name", f.Name)
		if valueRequired {
			m.req("value", f.Value)
		} else {
			m.str("value", f.Value, "")
		}
		l.add(m)
	}
	return l
}

func exportSteps(steps []PreprocStep) *exportNode {
	l := newList()
	for _, st := range steps {
		m := newMap()
		name := strconv.Itoa(st.Type)
		if st.Type > 0 && st.Type < len(stepTypeNames) && stepTypeNames[st.Type] != "" {
			name = stepTypeNames[st.Type]
		}
		m.req("type", name)
		pl := newList()
		if st.Type == 21 { // JAVASCRIPT: one parameter, newlines and all
			pl.add(&exportNode{scalar: st.Params})
		} else {
			for _, p := range strings.Split(st.Params, "\n") {
				pl.add(&exportNode{scalar: p})
			}
		}
		m.put("parameters", pl)
		m.str("error_handler", enumName(st.ErrorHandler, handlerNames[:]), "ORIGINAL_ERROR")
		m.str("error_handler_params", st.ErrorHandlerParams, "")
		l.add(m)
	}
	return l
}

func (x *exporter) triggers(ts []*Trigger, withUUID bool) *exportNode {
	l := newList()
	for _, t := range natSortedBy(ts, func(a, b *Trigger) int {
		return cmpChain(natCaseCmp(a.Description, b.Description), natCaseCmp(a.Expression, b.Expression),
			natCaseCmp(a.RecoveryExpression, b.RecoveryExpression))
	}) {
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
		m.str("priority", enumName(int(t.Priority), priorityNames), "NOT_CLASSIFIED")
		m.str("description", t.Comments, "")
		if t.Multiple {
			m.req("type", "MULTIPLE")
		}
		if t.ManualClose {
			m.req("manual_close", "YES")
		}
		var deps []*Trigger
		for _, id := range t.Dependencies {
			if d := x.s.AnyTrigger(id); d != nil {
				deps = append(deps, d)
			}
		}
		dl := newList()
		for _, d := range natSortedBy(deps, func(a, b *Trigger) int {
			return cmpChain(natCaseCmp(a.Description, b.Description), natCaseCmp(a.Expression, b.Expression),
				natCaseCmp(a.RecoveryExpression, b.RecoveryExpression))
		}) {
			dm := newMap()
			dm.req("name", d.Description)
			dm.req("expression", d.Expression)
			dm.str("recovery_expression", d.RecoveryExpression, "")
			dl.add(dm)
		}
		m.sub("dependencies", dl, false)
		m.sub("tags", exportTags(t.Tags), false)
		l.add(m)
	}
	return l
}

// itemRef is {host, key} of an item, nil if it is gone.
func (x *exporter) itemRef(id uint64) *exportNode {
	it := x.s.AnyItem(id)
	if it == nil {
		return nil
	}
	h := x.s.HostOrTemplate(it.HostID)
	if h == nil {
		return nil
	}
	m := newMap()
	m.req("host", h.Host)
	m.req("key", it.Key)
	return m
}

func (x *exporter) graphs(gs []*Graph) *exportNode {
	l := newList()
	for _, g := range natSorted(gs, func(g *Graph) string { return g.Name }) {
		l.add(x.graphNode(g, x.itemRef))
	}
	return l
}

// graphNode writes a graph (or a graph prototype as a Graph), its items
// named by ref.
func (x *exporter) graphNode(g *Graph, ref func(uint64) *exportNode) *exportNode {
	m := newMap()
	m.str("uuid", g.UUID, "")
	m.req("name", g.Name)
	f := g.GraphFields
	m.str("width", strconv.Itoa(f.Width), "900")
	m.str("height", strconv.Itoa(f.Height), "200")
	m.str("yaxismin", fmtDecimal4(f.YAxisMin), "0")
	m.str("yaxismax", fmtDecimal4(f.YAxisMax), "100")
	m.str("show_work_period", enumName(f.ShowWorkPeriod, yesNoNames), "YES")
	m.str("show_triggers", enumName(f.ShowTriggers, yesNoNames), "YES")
	m.str("type", enumName(f.GraphType, graphTypeNames), "NORMAL")
	m.str("show_legend", enumName(f.ShowLegend, yesNoNames), "YES")
	m.str("show_3d", enumName(f.Show3D, yesNoNames), "NO")
	m.str("percent_left", fmtDecimal4(f.PercentLeft), "0")
	m.str("percent_right", fmtDecimal4(f.PercentRight), "0")
	m.str("ymin_type_1", enumName(f.YMinType, yTypeNames), "CALCULATED")
	if r := ref(f.YMinItemID); f.YMinItemID != 0 && r != nil {
		m.put("ymin_item_1", r)
	}
	m.str("ymax_type_1", enumName(f.YMaxType, yTypeNames), "CALCULATED")
	if r := ref(f.YMaxItemID); f.YMaxItemID != 0 && r != nil {
		m.put("ymax_item_1", r)
	}
	il := newList()
	for _, gi := range natSortedBy(g.Items, func(a, b GraphItem) int {
		return natCaseCmp(strconv.Itoa(a.SortOrder), strconv.Itoa(b.SortOrder))
	}) {
		im := newMap()
		im.str("sortorder", strconv.Itoa(gi.SortOrder), "0")
		im.str("drawtype", enumName(gi.DrawType, drawTypeNames), "SINGLE_LINE")
		im.str("color", gi.Color, "009600")
		im.str("yaxisside", enumName(gi.YAxisSide, yAxisSideNames), "LEFT")
		im.str("calc_fnc", enumName(gi.CalcFnc, calcFncNames), "AVG")
		im.str("type", enumName(gi.Type, gitemTypeNames), "SIMPLE")
		if r := ref(gi.ItemID); r != nil {
			im.put("item", r)
		}
		il.add(im)
	}
	m.sub("graph_items", il, true)
	return m
}

// fmtDecimal4 writes a graph's decimal as 6.0 gives it (its shortest
// form: "50", "0.5"; recorded from 6.0.14).
func fmtDecimal4(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func (x *exporter) dashboards(tmpl uint64) *exportNode {
	var ds []*Dashboard
	for i := range x.s.Dashboards() {
		if d := &x.s.Dashboards()[i]; d.TemplateID == tmpl {
			ds = append(ds, d)
		}
	}
	l := newList()
	for _, d := range natSorted(ds, func(d *Dashboard) string { return d.Name }) {
		m := newMap()
		m.req("uuid", d.UUID)
		m.req("name", d.Name)
		m.str("display_period", strconv.Itoa(d.DisplayPeriod), "30")
		m.str("auto_start", enumName(d.AutoStart, yesNoNames), "YES")
		pl := newList()
		for _, p := range d.Pages {
			pm := newMap()
			pm.str("name", p.Name, "")
			pm.str("display_period", strconv.Itoa(p.DisplayPeriod), "0")
			wl := newList()
			for _, w := range natSorted(p.Widgets, func(w Widget) string { return w.Name }) {
				wl.add(x.widget(&w))
			}
			pm.sub("widgets", wl, false)
			pl.add(pm)
		}
		m.sub("pages", pl, false)
		l.add(m)
	}
	return l
}

func (x *exporter) widget(w *Widget) *exportNode {
	m := newMap()
	typ := w.Type
	for name, api := range widgetTypes {
		if api == w.Type {
			typ = name
		}
	}
	m.req("type", typ)
	m.str("name", w.Name, "")
	m.str("x", strconv.Itoa(w.X), "0")
	m.str("y", strconv.Itoa(w.Y), "0")
	m.str("width", strconv.Itoa(w.Width), "1")
	m.str("height", strconv.Itoa(w.Height), "2")
	m.str("hide_header", enumName(w.ViewMode, yesNoNames), "NO")
	fl := newList()
	for _, f := range natSortedBy(w.Fields, func(a, b WidgetField) int {
		return natCaseCmp(strconv.Itoa(a.Type), strconv.Itoa(b.Type))
	}) {
		fm := newMap()
		fm.req("type", enumName(f.Type, widgetFieldTypes))
		fm.req("name", f.Name)
		id, _ := strconv.ParseUint(f.Value, 10, 64)
		switch f.Type {
		case 5, 7: // item prototype {host, key}, graph prototype {host, name}
			if r := x.protoRef(id, f.Type == 7); r != nil {
				fm.put("value", r)
				break
			}
			fm.req("value", f.Value)
		case 4: // item: {host, key}
			if r := x.itemRef(id); r != nil {
				fm.put("value", r)
				break
			}
			fm.req("value", f.Value)
		case 6: // graph: {host, name}
			if g := x.s.Graph(id); g != nil {
				if h := x.s.HostOrTemplate(g.HostID); h != nil {
					vm := newMap()
					vm.req("host", h.Host)
					vm.req("name", g.Name)
					fm.put("value", vm)
					break
				}
			}
			fm.req("value", f.Value)
		default:
			fm.req("value", f.Value)
		}
		fl.add(fm)
	}
	m.sub("fields", fl, false)
	return m
}
