package api

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// hostObject is a host in the Zabbix 6.0 shape, with 6.0's values for
// the fields Peregrine does not model (recorded from 6.0.14: no
// maintenance status, not discovered); the inventory mode is the host's
// (host_inventory.go).
// tls_psk_identity and tls_psk are write-only in Zabbix 6.0 and are never
// returned (recorded from 6.0.14: not even when output names them);
// "available" is on the interfaces in 6.0, not on the host.
func hostObject(h *catalog.Host) object {
	st := status(h.Enabled)
	if h.IsTemplate {
		st = "3" // a template, as item.get's and trigger.get's selectHosts show one
	}
	flags := "0"
	if h.Ext().Discovery != nil {
		flags = "4" // a discovered host (lld_hosts.go)
	}
	o := object{"hostid": id(h.ID), "host": h.Host, "name": h.Name, "status": st, "description": h.Description,
		"flags": flags, "templateid": "0", "uuid": h.Ext().UUID, "proxy_hostid": id(h.ProxyID), "proxy_address": "", "lastaccess": "0",
		"auto_compress": "1", "custom_interfaces": "0", "inventory_mode": inventoryMode(h),
		"ipmi_authtype": "-1", "ipmi_privilege": "2", "ipmi_username": "", "ipmi_password": "",
		"maintenanceid": "0", "maintenance_status": "0", "maintenance_type": "0", "maintenance_from": "0",
		"tls_connect": strconv.Itoa(int(h.Ext().TLS.Connect)), "tls_accept": strconv.Itoa(int(h.Ext().TLS.Accept)),
		"tls_issuer": h.Ext().TLS.Issuer, "tls_subject": h.Ext().TLS.Subject}
	ipmiFields(o, h) // host_ipmi.go
	return o
}

// hostSchema is Zabbix 6.0's hosts table with the interface table that
// host.get's filter and search also read (a host matches when one of its
// interfaces does; hostRows).
var hostSchema = schema{id: "hostid", types: fieldTypes(`hostid:n proxy_hostid:n host:c status:n lastaccess:n
	ipmi_authtype:n ipmi_privilege:n ipmi_username:c ipmi_password:c maintenanceid:n maintenance_status:n
	maintenance_type:n maintenance_from:n name:c flags:n templateid:n description:t tls_connect:n tls_accept:n
	tls_issuer:c tls_subject:c tls_psk_identity:c tls_psk:c proxy_address:c auto_compress:n custom_interfaces:n uuid:c
	interfaceid:n main:n type:n useip:n ip:c dns:c port:c available:n error:c errors_from:n disable_until:n`)}

// hostGetParams are host.get's parameters (Zabbix 6.0's; those about
// objects Peregrine does not have select what 6.0 selects when there
// are none: no proxies, web scenarios, discovery; graphs and the
// dashboards of linked templates are selected from the catalog).
type hostGetParams struct {
	getParams
	GroupIDs       opt[ids] `json:"groupids"`
	HostIDs        opt[ids] `json:"hostids"`
	ProxyIDs       opt[ids] `json:"proxyids"`
	TemplateIDs    opt[ids] `json:"templateids"`
	InterfaceIDs   opt[ids] `json:"interfaceids"`
	ItemIDs        opt[ids] `json:"itemids"`
	TriggerIDs     opt[ids] `json:"triggerids"`
	MaintenanceIDs opt[ids] `json:"maintenanceids"`
	GraphIDs       opt[ids] `json:"graphids"`
	DServiceIDs    opt[ids] `json:"dserviceids"`
	HTTPTestIDs    opt[ids] `json:"httptestids"`
	// The with_* and *_hosts flags are set by any value but null (false
	// included), as Zabbix 6.0 tests them.
	MonitoredHosts        opt[bool] `json:"monitored_hosts" as:"isset"`
	TemplatedHosts        opt[bool] `json:"templated_hosts" as:"isset"`
	ProxyHosts            opt[bool] `json:"proxy_hosts" as:"isset"`
	WithItems             opt[bool] `json:"with_items" as:"isset"`
	WithMonItems          opt[bool] `json:"with_monitored_items" as:"isset"`
	WithSimpleGraphItems  opt[bool] `json:"with_simple_graph_items" as:"isset"`
	WithItemPrototypes    opt[bool] `json:"with_item_prototypes" as:"isset"`
	WithSimpleGraphProtos opt[bool] `json:"with_simple_graph_item_prototypes" as:"isset"`
	WithTriggers          opt[bool] `json:"with_triggers" as:"isset"`
	WithMonTriggers       opt[bool] `json:"with_monitored_triggers" as:"isset"`
	WithGraphs            opt[bool] `json:"with_graphs" as:"isset"`
	WithGraphPrototypes   opt[bool] `json:"with_graph_prototypes" as:"isset"`
	// with_httptests and with_monitored_httptests are tested for PHP's
	// truth.
	WithHTTPTests    opt[bool]     `json:"with_httptests"`
	WithMonHTTPTests opt[bool]     `json:"with_monitored_httptests"`
	Tags             opt[tagConds] `json:"tags"`
	EvalType         evalType      `json:"evaltype"`
	// SearchInventory searches the inventory, which is disabled for
	// every host: 6.0 then finds no host, whatever is searched.
	SearchInventory opt[fieldMap] `json:"searchInventory"`
	// Checked by Zabbix 6.0's validator.
	InheritedTags          opt[bool]            `json:"inheritedTags" zbx:"strict"`
	Severities             opt[json.RawMessage] `json:"severities" as:"json"`
	WithProblemsSuppressed opt[bool]            `json:"withProblemsSuppressed" zbx:"strict,null"`
	SelectValueMaps        opt[[]string]        `json:"selectValueMaps" as:"output" in:"valuemapid,name,mappings" zbx:"strict,null"`

	SelectGroups          sel `json:"selectGroups"`
	SelectParentTemplates sel `json:"selectParentTemplates"`
	SelectItems           sel `json:"selectItems"`
	SelectDiscoveries     sel `json:"selectDiscoveries"`
	SelectTriggers        sel `json:"selectTriggers"`
	SelectGraphs          sel `json:"selectGraphs"`
	SelectMacros          sel `json:"selectMacros"`
	SelectDashboards      sel `json:"selectDashboards"`
	SelectInterfaces      sel `json:"selectInterfaces"`
	SelectInventory       sel `json:"selectInventory"`
	SelectHTTPTests       sel `json:"selectHttpTests"`
	SelectDiscoveryRule   sel `json:"selectDiscoveryRule"`
	SelectHostDiscovery   sel `json:"selectHostDiscovery"`
	SelectTags            sel `json:"selectTags"`
	SelectInheritedTags   sel `json:"selectInheritedTags"`
}

// severityList reads host.get's severities as Zabbix 6.0's validator
// does: one severity or a list of distinct ones, each 0-5, not empty;
// null is no condition.
func (p *hostGetParams) severityList(raw []byte) ([]int64, error) {
	if jsonKindOf(raw) == 'n' {
		return nil, nil
	}
	elems := [][]byte{raw}
	if jsonKindOf(raw) == 'a' {
		elems, _ = arrayElems(raw)
		if len(elems) == 0 {
			return nil, errParams(`Invalid parameter "/severities": cannot be empty.`)
		}
	}
	var out []int64
	for i, e := range elems {
		var n int64
		// A single value is a list of one (API_NORMALIZE): its path
		// names it "/severities/1".
		path := "/severities/" + strconv.Itoa(i+1)
		if err := int32Param(e, &fieldRule{ranges: [][2]int64{{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}}, inText: "0, 1, 2, 3, 4, 5"}, &n); err != nil {
			return nil, invalid(path, err.Error())
		}
		if slices.Contains(out, n) {
			return nil, invalid(path, "value ("+strconv.FormatInt(n, 10)+") already exists")
		}
		out = append(out, n)
	}
	return out, nil
}

func (s *Server) hostGet(ctx context.Context, c *call) (any, error) {
	var p hostGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	var severities []int64
	if p.Severities.Given() {
		var err error
		if severities, err = p.severityList(p.Severities.Value); err != nil {
			return nil, err
		}
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	// Conditions on other objects, turned into sets of hosts.
	var itemHosts, trigHosts, maintHosts, problemHosts map[uint64]bool
	if p.ItemIDs.Given() {
		itemHosts = map[uint64]bool{}
		for _, iid := range p.ItemIDs.Value {
			if it := snap.Item(iid); it != nil {
				itemHosts[it.HostID] = true
			}
		}
	}
	if p.TriggerIDs.Given() {
		trigHosts = map[uint64]bool{}
		for _, tid := range p.TriggerIDs.Value {
			if t := snap.Trigger(tid); t != nil {
				for _, h := range t.HostIDs {
					trigHosts[h] = true
				}
			}
		}
	}
	if p.MaintenanceIDs.Given() {
		maintHosts = map[uint64]bool{}
		for _, m := range snap.Maintenances() {
			if containsID(p.MaintenanceIDs.Value, m.ID) {
				for _, h := range m.HostIDs {
					maintHosts[h] = true
				}
			}
		}
	}
	if severities != nil || p.WithProblemsSuppressed.Given() {
		problemHosts = s.hostsWithProblems(snap, severities, p.WithProblemsSuppressed)
	}
	tags := compileTags(p.Tags.Value, p.EvalType.value())
	graphHosts := graphOwners(snap, p.GraphIDs, p.WithGraphs.Given())
	none := p.ProxyHosts.Given() || p.DServiceIDs.Given() || p.HTTPTestIDs.Given() ||
		p.WithGraphPrototypes.Given() || p.WithItemPrototypes.Given() || p.WithSimpleGraphProtos.Given() ||
		p.WithHTTPTests.Value || p.WithMonHTTPTests.Value ||
		p.SearchInventory.Given()
	var objs []object
	for _, h := range snap.Hosts() {
		if none || !a.sees(h, p.Editable.Value) || !idsPass(p.HostIDs, h.ID) || !idsPass(p.ProxyIDs, h.ProxyID) || !idsAny(p.GroupIDs, h.GroupIDs) ||
			itemHosts != nil && !itemHosts[h.ID] || trigHosts != nil && !trigHosts[h.ID] || maintHosts != nil && !maintHosts[h.ID] ||
			graphHosts != nil && !graphHosts[h.ID] ||
			problemHosts != nil && !problemHosts[h.ID] ||
			p.MonitoredHosts.Value && !h.Enabled ||
			!idsAny(p.TemplateIDs, snap.LinkedTemplates(h.ID)) ||
			p.InterfaceIDs.Given() && !slices.ContainsFunc(h.Interfaces, func(f catalog.Interface) bool { return containsID(p.InterfaceIDs.Value, f.ID) }) ||
			!s.hostHasItems(h, &p) || !hostHasTriggers(snap, h, &p) ||
			tags != nil && !tags.match(len(h.Tags), func(i int) (string, string) { return h.Tags[i].Tag, h.Tags[i].Value }) {
			continue
		}
		objs = append(objs, hostObject(h))
	}
	sch := hostSchema
	sch.rows = func(o object) []object { return s.hostRows(snap, o) }
	res, err := p.applySchema(objs, &sch, "hostid", "host", "name", "status")
	if err != nil || p.CountOutput.Value {
		return res, err
	}
	s.hostSelects(res, &p, snap, a)
	return res, nil
}

// hostRows are a host's rows as host.get's filter and search see them:
// one per interface, with the interface's fields, or the host alone.
// They hold tls_psk_identity, which 6.0 filters and searches on without
// returning it, and not tls_psk: 6.0 filters on the key too (recorded
// from 6.0.14, for any user who can read the host), which would let the
// API confirm a guessed key; in Peregrine a condition on tls_psk
// matches no host.
func (s *Server) hostRows(snap *catalog.Snapshot, o object) []object {
	hid, _ := strconv.ParseUint(o["hostid"].(string), 10, 64)
	h := snap.HostByID(hid)
	if h != nil && h.Ext().TLS.PSKIdentity != "" {
		o = maps.Clone(o)
		o["tls_psk_identity"] = h.Ext().TLS.PSKIdentity
	}
	if h == nil || len(h.Interfaces) == 0 {
		return []object{o}
	}
	rows := make([]object, len(h.Interfaces))
	for i := range h.Interfaces {
		r := s.ifaceObject(&h.Interfaces[i], false)
		for k, v := range o {
			r[k] = v // the host's fields win (hostid, and none other is shared)
		}
		rows[i] = r
	}
	return rows
}

// hostsWithProblems are the hosts of the enabled triggers (not depending
// on a trigger in problem) that have an open problem of one of the
// severities (any when nil) and, when suppressed is given, suppressed or
// not as it says.
func (s *Server) hostsWithProblems(snap *catalog.Snapshot, severities []int64, suppressed opt[bool]) map[uint64]bool {
	out := map[uint64]bool{}
	if s.opts.Events == nil {
		return out
	}
	for _, e := range s.opts.Events.OpenProblems() {
		if severities != nil && !slices.Contains(severities, int64(e.Severity)) ||
			suppressed.Given() && e.Suppressed != suppressed.Value {
			continue
		}
		t := snap.Trigger(e.ObjectID)
		if t == nil || !t.Enabled || s.opts.TriggerStates != nil && dependsOnProblem(snap, s.opts.TriggerStates, t, 0) {
			continue
		}
		for _, h := range t.HostIDs {
			out[h] = true
		}
	}
	return out
}

// hostHasItems applies with_items, with_monitored_items and
// with_simple_graph_items (the first given).
func (s *Server) hostHasItems(h *catalog.Host, p *hostGetParams) bool {
	var ok func(it *catalog.Item) bool
	switch {
	case p.WithItems.Given():
		ok = func(*catalog.Item) bool { return true }
	case p.WithMonItems.Given():
		ok = func(it *catalog.Item) bool { return it.Enabled }
	case p.WithSimpleGraphItems.Given():
		ok = func(it *catalog.Item) bool { return it.Enabled && it.ValueType.Numeric() }
	default:
		return true
	}
	return slices.ContainsFunc(listedItems(h), ok)
}

// hostHasTriggers applies with_triggers and with_monitored_triggers.
func hostHasTriggers(snap *catalog.Snapshot, h *catalog.Host, p *hostGetParams) bool {
	if !p.WithTriggers.Given() && !p.WithMonTriggers.Given() {
		return true
	}
	for _, it := range h.Items() {
		for _, t := range snap.TriggersOfItem(it.ID) {
			if p.WithTriggers.Given() || it.Enabled && t.Enabled {
				return true
			}
		}
	}
	return false
}

// hostSelects adds host.get's selects to the hosts of res, as Zabbix
// 6.0 answers them (recorded from 6.0.14): a list of fields adds the
// ID of groups, parent templates and triggers, not that of items,
// interfaces, macros and tags; "count" counts items, triggers,
// interfaces and parent templates (and the discoveries, graphs, web
// scenarios and dashboards Peregrine has none of), and leaves groups,
// macros, tags and the inventory out.
func (s *Server) hostSelects(res any, p *hostGetParams, snap *catalog.Snapshot, a access) {
	each := func(fn func(o object, h *catalog.Host)) {
		do := func(o object) {
			hid, _ := strconv.ParseUint(o["hostid"].(string), 10, 64)
			if h := snap.HostByID(hid); h != nil {
				fn(o, h)
			}
		}
		switch r := res.(type) {
		case []object:
			for _, o := range r {
				do(o)
			}
		case map[string]object:
			for _, o := range r {
				do(o)
			}
		}
	}
	none := func(sl sel, name string, counts bool) {
		if sl.Set && (!sl.Count || counts) {
			each(func(o object, _ *catalog.Host) {
				if sl.Count {
					o[name] = countOf(0)
				} else {
					o[name] = []object{}
				}
			})
		}
	}
	if sl := p.SelectDiscoveries; sl.Set {
		each(func(o object, h *catalog.Host) { o["discoveries"] = s.discoveriesOf(h, sl, p.limitSelect) })
	}
	if sl := p.SelectGraphs; sl.Set {
		gx := newGraphIndex(snap)
		each(func(o object, h *catalog.Host) { o["graphs"] = graphsSelect(gx.byHost[h.ID], sl, p.limitSelect) })
	}
	none(p.SelectHTTPTests, "httpTests", true)
	if sl := p.SelectDashboards; sl.Set {
		each(func(o object, h *catalog.Host) {
			o["dashboards"] = dashboardsSelect(snap.HostDashboards(h.ID), sl, true, p.limitSelect)
		})
	}
	none(p.SelectInheritedTags, "inheritedTags", false)
	// A discovered host's rule and prototype (recorded from 6.0.14:
	// parent_hostid is the host prototype, parent_itemid "0"); [] for
	// other hosts.
	if sl := p.SelectDiscoveryRule; sl.Set && !sl.Count {
		snap := s.opts.Catalog.Snapshot()
		each(func(o object, h *catalog.Host) {
			o["discoveryRule"] = []object{}
			if h.Ext().Discovery != nil {
				if r := snap.AnyItem(h.Ext().Discovery.RuleID); r != nil && r.Ext().LLD != nil {
					o["discoveryRule"] = sl.shape(s.ruleObjects([]*catalog.Item{r}), "itemid")[0]
				}
			}
		})
	}
	if sl := p.SelectHostDiscovery; sl.Set {
		snap := s.opts.Catalog.Snapshot()
		each(func(o object, h *catalog.Host) {
			o["hostDiscovery"] = []object{}
			d := h.Ext().Discovery
			if d == nil {
				return
			}
			proto := ""
			if r := snap.AnyItem(d.RuleID); r != nil && r.Ext().LLD != nil {
				for _, hp := range r.Ext().LLD.HostPrototypes {
					if hp.ID == d.ProtoID {
						proto = hp.Host
					}
				}
			}
			var lastcheck int64
			if s.opts.Last != nil {
				if last, _, ok := s.opts.Last.Last(d.RuleID); ok {
					lastcheck = last.Clock
				}
			}
			o["hostDiscovery"] = shapeOne(sl, object{"hostid": id(h.ID), "parent_hostid": id(d.ProtoID), "parent_itemid": "0",
				"host": proto, "lastcheck": strconv.FormatInt(lastcheck, 10), "ts_delete": strconv.FormatInt(d.TSDelete, 10)})
		})
	}
	if p.SelectInventory.Set {
		each(func(o object, h *catalog.Host) { o["inventory"] = inventoryFields(h, p.SelectInventory) }) // host_inventory.go
	}
	each(func(o object, h *catalog.Host) {
		if sl := p.SelectGroups; sl.list() {
			var groups []object
			for _, gid := range h.GroupIDs {
				// Only the groups the caller may read, as Zabbix's
				// selectGroups reads them through hostgroup.get.
				if g := snap.GroupByID(gid); g != nil && a.seesGroup(gid, false) {
					groups = append(groups, groupObject(g))
				}
			}
			o["groups"] = nonNil(sl.shape(groups, "groupid"))
		}
		if sl := p.SelectInterfaces; sl.Set {
			if sl.Count {
				o["interfaces"] = countOf(len(h.Interfaces))
			} else {
				l := make([]object, 0, len(h.Interfaces))
				for i := range h.Interfaces {
					l = append(l, s.ifaceObject(&h.Interfaces[i], sl.has("details")))
				}
				o["interfaces"] = nonNil(sl.shape(p.limitSelect(l), ""))
			}
		}
		if sl := p.SelectTags; sl.list() {
			tags := make([]object, 0, len(h.Tags))
			for _, t := range h.Tags {
				tags = append(tags, object{"tag": t.Tag, "value": t.Value})
			}
			o["tags"] = sl.shape(tags, "")
		}
		if sl := p.SelectMacros; sl.list() {
			o["macros"] = sl.shape(macroObjects(snap.Macros(h.ID), &p.getParams), "")
		}
		if sl := p.SelectParentTemplates; sl.Set {
			tids := snap.LinkedTemplates(h.ID)
			if sl.Count {
				o["parentTemplates"] = countOf(len(tids))
			} else {
				o["parentTemplates"] = sl.shape(templateRefs(snap, tids, &p.getParams), "templateid")
			}
		}
		if sl := p.SelectItems; sl.Set {
			items := listedItems(h)
			if sl.Count {
				o["items"] = countOf(len(items))
			} else {
				if p.LimitSelects.Given() && int(p.LimitSelects.Value) < len(items) {
					items = items[:p.LimitSelects.Value]
				}
				o["items"] = s.itemObjects(items, sl)
			}
		}
		if sl := p.SelectTriggers; sl.Set {
			var l []object
			seen := map[uint64]bool{}
			for _, it := range h.Items() {
				for _, t := range snap.TriggersOfItem(it.ID) {
					if !seen[t.ID] && triggerReadable(snap, a, t, false) {
						seen[t.ID] = true
						l = append(l, triggerObject(t, s.runtime(t.ID)))
					}
				}
			}
			if sl.Count {
				o["triggers"] = countOf(len(l))
			} else {
				sortByID(l, "triggerid")
				o["triggers"] = nonNil(sl.shape(p.limitSelect(l), "triggerid"))
			}
		}
		if sv := p.SelectValueMaps; sv.Given() {
			vo := output{all: len(sv.Value) == 1 && sv.Value[0] == "extend", fields: map[string]bool{}}
			for _, f := range sv.Value {
				vo.fields[f] = true
			}
			l := []object{}
			for _, vm := range snap.ValueMaps() {
				if vm.HostID != h.ID {
					continue
				}
				m := object{}
				for k, v := range map[string]any{"valuemapid": id(vm.ID), "name": vm.Name, "mappings": mappingObjects(vm.Mappings)} {
					if vo.has(k) {
						m[k] = v
					}
				}
				l = append(l, m)
			}
			o["valuemaps"] = l
		}
	})
}

func anyGroup(have []uint64, want ids) bool {
	for _, g := range have {
		if containsID(want, g) {
			return true
		}
	}
	return false
}
