package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// LastValues gives the newest and previous value of an item (the
// pipeline's per-item state).
type LastValues interface {
	Last(item uint64) (last, prev history.Sample, ok bool)
}

// LastPrefetcher is an optional part of LastValues whose reads are
// round trips (an HA standby reads them from ClickHouse): item.get asks
// for the last values of its answer's items at once, and the rows read
// them from what it returns.
type LastPrefetcher interface {
	PrefetchLast(ctx context.Context, items []uint64) LastValues
}

// prefetchLast fetches the last values of the answer's rows at once
// when the output has them and the source reads in round trips.
func (a *itemAnswer) prefetchLast(ctx context.Context) {
	pf, ok := a.rs.lv.(LastPrefetcher)
	if !ok || a.count || len(a.rows) == 0 {
		return
	}
	if !slices.ContainsFunc(a.want, func(f itemField) bool {
		return f == fLastClock || f == fLastNS || f == fLastValue || f == fPrevValue
	}) {
		return
	}
	ids := make([]uint64, len(a.rows))
	for i := range a.rows {
		ids[i] = a.rows[i].it.ID
	}
	a.rs.lv = pf.PrefetchLast(ctx, ids)
	a.rs.c = rowCache{}
}

// itemGetParams are item.get's parameters (Zabbix 6.0's; those about
// objects Peregrine does not have, web scenarios, proxies, select what
// 6.0 selects when there are none; selectGraphs the item's graphs).
type itemGetParams struct {
	getParams
	ItemIDs      opt[ids] `json:"itemids"`
	HostIDs      opt[ids] `json:"hostids"`
	TemplateIDs  opt[ids] `json:"templateids"` // joined to hostids, as Zabbix does
	GroupIDs     opt[ids] `json:"groupids"`
	ProxyIDs     opt[ids] `json:"proxyids"` // the hosts' proxy; 0 selects hosts monitored by the server
	InterfaceIDs opt[ids] `json:"interfaceids"`
	GraphIDs     opt[ids] `json:"graphids"`
	TriggerIDs   opt[ids] `json:"triggerids"`
	// WebItems also selects web scenarios' items (type 9), which
	// item.get leaves out without it (recorded from 6.0.14).
	WebItems opt[bool] `json:"webitems" as:"isset"`
	// Inherited, Templated and Monitored: absent selects both kinds,
	// true (as PHP sees truth) one, false the other: items copied from
	// a template or not, items of templates or of hosts, items of
	// enabled hosts that are enabled or not.
	Inherited opt[bool] `json:"inherited"`
	Templated opt[bool] `json:"templated"`
	Monitored opt[bool] `json:"monitored"`
	// Host and Group select by technical host name and group name.
	Host  opt[string] `json:"host"`
	Group opt[string] `json:"group"`
	// WithTriggers: 1 (as PHP compares, true and "1" too) selects items
	// used by a trigger, any other value items used by none.
	WithTriggers opt[json.RawMessage] `json:"with_triggers" as:"json"`
	Tags         opt[tagConds]        `json:"tags"`
	// EvalType is checked by Zabbix 6.0's validator.
	EvalType            opt[int64] `json:"evaltype" in:"0,2" zbx:"strict"`
	SelectHosts         sel        `json:"selectHosts"`
	SelectInterfaces    sel        `json:"selectInterfaces"`
	SelectTags          sel        `json:"selectTags"`
	SelectTriggers      sel        `json:"selectTriggers"`
	SelectGraphs        sel        `json:"selectGraphs"`
	SelectDiscoveryRule sel        `json:"selectDiscoveryRule"`
	SelectItemDiscovery sel        `json:"selectItemDiscovery"`
	// SelectPreprocessing adds each item's steps (Zabbix 6.0).
	SelectPreprocessing sel `json:"selectPreprocessing"`
	// SelectValueMap is checked by Zabbix 6.0's validator.
	SelectValueMap opt[[]string] `json:"selectValueMap" as:"output" in:"valuemapid,name,mappings" zbx:"strict,null"`
}

// itemGet is item.get for callers that need the answer whole (the
// audit log); the API's clients get it streamed (itemGetStream).
func (s *Server) itemGet(ctx context.Context, c *call) (any, error) {
	a, err := s.itemAnswer(ctx, c)
	if err != nil {
		return nil, err
	}
	return a.value(), nil
}

// itemGetStream is item.get as the API serves it: the rows are encoded
// into the response as they are written, one at a time.
func (s *Server) itemGetStream(ctx context.Context, c *call) (func(*bufio.Writer) error, error) {
	a, err := s.itemAnswer(ctx, c)
	if err != nil {
		return nil, err
	}
	return a.write, nil
}

func (s *Server) itemAnswer(ctx context.Context, c *call) (*itemAnswer, error) {
	a, err := s.itemRowsAnswer(ctx, c)
	if err == nil {
		a.prefetchLast(ctx)
	}
	return a, err
}

// itemRowsAnswer is itemAnswer before the last values are fetched.
func (s *Server) itemRowsAnswer(ctx context.Context, c *call) (*itemAnswer, error) {
	var p itemGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	// filter.host is the host's technical name, as Zabbix's item.get
	// joins the hosts table for it; item rows have no such field, so it
	// is applied here and taken out of the generic filter. A null value
	// filters nothing; an empty list matches no host.
	var filterHosts []string
	if raw, ok := p.Filter.Value["host"]; ok {
		if string(bytes.TrimSpace(raw)) != "null" {
			filterHosts = legacyTexts(raw)
			if filterHosts == nil {
				filterHosts = []string{}
			}
		}
		delete(p.Filter.Value, "host")
	}
	if p.TemplateIDs.Given() {
		// Templates are hosts to item.get: templateids join hostids.
		p.HostIDs = given(append(slices.Clone(p.HostIDs.Value), p.TemplateIDs.Value...))
	}
	var groupID uint64
	empty := p.noRows
	if p.GraphIDs.Given() {
		// graphids: the items of those graphs (and of itemids if given).
		var in ids
		for _, gid := range p.GraphIDs.Value {
			if g := snap.Graph(gid); g != nil {
				for _, gi := range g.Items {
					if idsPass(p.ItemIDs, gi.ItemID) && !containsID(in, gi.ItemID) {
						in = append(in, gi.ItemID)
					}
				}
			}
		}
		p.ItemIDs, empty = given(in), empty || len(in) == 0
	}
	if p.Group.Given() {
		g := snap.Group(p.Group.Value)
		if g == nil {
			empty = true
		} else {
			groupID = g.ID
		}
	}
	rs := &itemRows{lv: s.opts.Last, states: s.opts.States}
	if empty {
		return p.applyItems(rs, p.itemSelect(s, snap, a))
	}
	tags := compileTags(p.Tags.Value, p.EvalType.Value)
	withTriggers := p.WithTriggers.Given()
	wantTriggers := withTriggers && phpEquals(p.WithTriggers.Value, 1)
	var trigItems map[uint64]bool
	if p.TriggerIDs.Given() {
		trigItems = map[uint64]bool{}
		for _, tid := range p.TriggerIDs.Value {
			if t := snap.AnyTrigger(tid); t != nil {
				for _, iid := range t.ItemIDs {
					trigItems[iid] = true
				}
			}
		}
	}
	// Without filter.flags item.get lists flags 0 and 4 only (recorded
	// from 6.0.14): discovery rules are discoveryrule.get's. With it,
	// the generic filter decides (filter.flags 1 gives the rules).
	_, byFlags := p.Filter.Value["flags"]
	visit := func(h *catalog.Host) {
		if !idsAny(p.GroupIDs, h.GroupIDs) ||
			p.Group.Given() && !slices.Contains(h.GroupIDs, groupID) ||
			p.Host.Given() && h.Host != p.Host.Value ||
			filterHosts != nil && !slices.Contains(filterHosts, h.Host) ||
			!idsPass(p.HostIDs, h.ID) || !idsPass(p.ProxyIDs, h.ProxyID) ||
			p.Templated.Given() && h.IsTemplate != p.Templated.Value ||
			!a.sees(h, p.Editable.Value) {
			return
		}
		for _, it := range h.Items() {
			if it.Ext().LLD != nil && !byFlags || it.Type == catalog.WebItem && !p.WebItems.Value || !idsPass(p.ItemIDs, it.ID) || !idsPass(p.InterfaceIDs, it.InterfaceID) ||
				trigItems != nil && !trigItems[it.ID] ||
				p.Inherited.Given() && (it.TemplateID != 0) != p.Inherited.Value ||
				withTriggers && (len(triggersOfItem(snap, it)) > 0) != wantTriggers ||
				p.Monitored.Given() && (it.Enabled && h.Enabled && !h.IsTemplate) != p.Monitored.Value ||
				tags != nil && !tags.match(len(it.Tags), func(i int) (string, string) { return it.Tags[i].Tag, it.Tags[i].Value }) {
				continue
			}
			rs.rows = append(rs.rows, itemRow{it: it})
		}
	}
	// Visit each candidate host once, the fewest first.
	seen := map[uint64]bool{}
	once := func(h *catalog.Host) {
		if h != nil && !seen[h.ID] {
			seen[h.ID] = true
			visit(h)
		}
	}
	switch {
	case p.HostIDs.Given():
		for _, hid := range p.HostIDs.Value {
			once(snap.HostOrTemplate(hid))
		}
	case p.ItemIDs.Given():
		for _, iid := range p.ItemIDs.Value {
			if it := snap.AnyItem(iid); it != nil {
				once(it.Host)
			}
		}
	case p.Host.Given():
		once(snap.Host(p.Host.Value))
		once(snap.TemplateByName(p.Host.Value))
	default:
		rs.rows = make([]itemRow, 0, snap.ItemCount())
		if !p.Templated.Given() || !p.Templated.Value {
			for _, h := range snap.Hosts() {
				visit(h)
			}
		}
		if !p.Templated.Given() || p.Templated.Value {
			for _, h := range snap.Templates() {
				visit(h)
			}
		}
	}
	return p.applyItems(rs, p.itemSelect(s, snap, a))
}

// itemParams are the members of a Zabbix 6.0 item object that item.create
// and item.update take. Members Peregrine does not model (type-specific
// settings such as IPMI sensors and JMX endpoints) are accepted and
// ignored. tags are Zabbix's item tags (item_tags.go).
// preprocessing is validated as Zabbix's API validates it, with its
// error paths (preprocessing.go); master_itemid is a dependent item's
// master and params a calculated item's formula (or a script item's
// script, or a database monitor item's SQL query, whose username and
// password are httpParams').
type itemParams struct {
	ItemID        opt[uint64]          `json:"itemid"`
	HostID        opt[uint64]          `json:"hostid"`
	Name          opt[string]          `json:"name"`
	Key           opt[string]          `json:"key_"`
	Type          opt[int64]           `json:"type"`
	ValueType     opt[int64]           `json:"value_type"`
	Delay         opt[string]          `json:"delay" as:"timeunit"`
	History       opt[string]          `json:"history" as:"timeunit"`
	Trends        opt[string]          `json:"trends" as:"timeunit"`
	Units         opt[string]          `json:"units"`
	Status        opt[int64]           `json:"status"`
	Preprocessing opt[json.RawMessage] `json:"preprocessing" as:"json"`
	MasterItemID  opt[uint64]          `json:"master_itemid"`
	Params        opt[string]          `json:"params"`
	// InterfaceID must be one of the host's interfaces of the type the
	// item type needs; agent, simple check, external and SNMP agent
	// items are refused without one, as in 6.0 (item_check.go). Ignored
	// (stored as 0) for types that use none.
	InterfaceID opt[uint64] `json:"interfaceid"`
	Timeout     opt[string] `json:"timeout" as:"timeunit"`
	// RetryDelay is Peregrine's retry interval (soft trigger states).
	RetryDelay opt[string] `json:"retry_delay" as:"timeunit"`
	// TimestampPrecision is Peregrine's own: "ns", "us", "ms", "s" or ""
	// for the server's history.timestamp_precision.
	TimestampPrecision opt[string] `json:"timestamp_precision"`
	// SNMPOID is an SNMP agent item's OID (Zabbix 6.0's forms, checked
	// by the catalog); ignored for other types.
	SNMPOID opt[string] `json:"snmp_oid"`
	// IPMISensor is the sensor an IPMI item reads (required on IPMI
	// items but ipmi.get); kept on items of every type, as 6.0 keeps it.
	IPMISensor opt[string] `json:"ipmi_sensor"`

	httpParams

	Tags        opt[hostTags] `json:"tags"`
	Description opt[string]   `json:"description"`
	// InventoryLink is the host inventory field the item fills, 0..70
	// (item_inventory.go).
	InventoryLink opt[int64] `json:"inventory_link"`
	// LogTimeFmt is the item's logtimefmt, kept on items of every type
	// as 6.0 keeps it (catalog.Item.LogTimeFmt).
	LogTimeFmt opt[string] `json:"logtimefmt"`
	ValueMapID opt[uint64] `json:"valuemapid"` // one of the host's value maps, 0 for none
	// AllowTraps and TrapperHosts are the item's allow_traps (an HTTP
	// agent item's "Enable trapping") and allowed hosts
	// (catalog.TrapHosts).
	AllowTraps   opt[int64]  `json:"allow_traps"`
	TrapperHosts opt[string] `json:"trapper_hosts"`
	// PublicKey and PrivateKey are an SSH item's key file names (its
	// authtype, username and password are httpParams' members, which
	// Zabbix's item fields share).
	PublicKey  opt[string] `json:"publickey"`
	PrivateKey opt[string] `json:"privatekey"`
	// JMXEndpoint is a JMX agent item's endpoint (absent on create:
	// Zabbix's default); its username and password are httpParams'.
	JMXEndpoint opt[string] `json:"jmx_endpoint"`
	// Parameters are a script item's (item_script.go); other types take
	// and ignore them.
	Parameters opt[json.RawMessage] `json:"parameters" as:"json"`
	UUID       opt[ignored]         `json:"uuid"`

	// parameters are the script item's Parameters as checked by
	// scriptChecks; nil: not given (or not a script item).
	parameters *[]catalog.ItemParam
}

// dropTemplated forgets the members an item copied from a template
// takes from its template only: name, key, type, value type, units,
// value map, preprocessing, master, timeout and most of the type's own
// settings. Zabbix 6.0's item.update ignores them on a copy; the
// interval, history, trends, status, description, tags and interface,
// params (but a script item's) and the login (and Peregrine's retry
// interval and timestamp precision) are the owner's to change.
func (p *itemParams) dropTemplated(typ catalog.ItemType) {
	keep := *p
	*p = itemParams{ItemID: keep.ItemID, HostID: keep.HostID, Delay: keep.Delay, History: keep.History, Trends: keep.Trends,
		Status: keep.Status, Description: keep.Description, Tags: keep.Tags, InterfaceID: keep.InterfaceID,
		RetryDelay: keep.RetryDelay, TimestampPrecision: keep.TimestampPrecision,
		// The credentials and the command a copy's owner may change
		// (recorded from 6.0.14 on copies of SSH, JMX, IPMI, HTTP agent
		// and calculated items: params, username, password, authtype,
		// publickey, privatekey and jmx_endpoint change; url, posts,
		// headers, status_codes, timeout, snmp_oid and ipmi_sensor are
		// ignored like name, key_, units and value_type).
		Params: keep.Params, PublicKey: keep.PublicKey, PrivateKey: keep.PrivateKey, JMXEndpoint: keep.JMXEndpoint}
	p.httpParams.AuthType, p.httpParams.Username, p.httpParams.Password = keep.httpParams.AuthType, keep.httpParams.Username, keep.httpParams.Password
	if typ == catalog.Script {
		// A script item's script, parameters and timeout are its
		// template's (recorded from 6.0.14: all three ignored).
		p.Params = opt[string]{}
	}
}

// common validates the members item.create and item.update share.
func (p *itemParams) common(i int) error {
	switch {
	case p.Name.Set && p.Name.Value == "":
		return empty(i, "name")
	case p.Type.Given() && p.checkType(i) != nil:
		return p.checkType(i)
	case p.ValueType.Given() && (p.ValueType.Value < 0 || p.ValueType.Value > 4):
		return oneOf(i, "value_type", "0, 1, 2, 3, 4")
	case p.Status.Given() && p.Status.Value != 0 && p.Status.Value != 1:
		return oneOf(i, "status", "0, 1")
	case p.History.Set && p.History.Value == "":
		return empty(i, "history")
	case p.Trends.Set && p.Trends.Value == "":
		return empty(i, "trends")
	}
	if p.History.Set {
		if err := storagePeriodCheck("history", p.History.Value, 3600); err != nil {
			return err
		}
	}
	if p.Trends.Set {
		return storagePeriodCheck("trends", p.Trends.Value, 86400)
	}
	return nil
}

// storagePeriodCheck checks an item's history or trends as 6.0 does
// (recorded from 6.0.14): a user macro, or 0 or a time from least to
// 25 years in seconds, minutes, hours, days or weeks ("abc", "1.5h" and
// "26y" are not time units; "1s" is refused with the range). An item
// prototype's LLD macros are the catalog's to check.
func storagePeriodCheck(field, v string, least int64) error {
	if strings.Contains(v, "{$") || strings.Contains(v, "{#") {
		return nil
	}
	secs, err := delay.ParseSeconds(v)
	if err != nil {
		return errParams(`Incorrect value for field "%s": a time unit is expected.`, field)
	}
	if secs != 0 && (secs < least || secs > 788400000) {
		return errParams(`Incorrect value for field "%s": value must be one of 0, %d-788400000.`, field, least)
	}
	return nil
}

// nameLengthCheck refuses a name longer than 6.0's database column
// (255 characters) with 6.0's words, after every other check, as 6.0
// refuses it when it writes (recorded from 6.0.14).
func (p *itemParams) nameLengthCheck() error {
	if n := utf8.RuneCountInString(p.Name.Value); p.Name.Set && n > 255 {
		return errApp(`Value "%s" is too long for field "name" - %d characters. Allowed length is 255 characters.`, p.Name.Value, n)
	}
	return nil
}

// steps validates the preprocessing member, if present, and returns it
// in the catalog's form; nil means absent (an empty list removes an
// item's steps on update).
func (p *itemParams) steps(i int) (*[]catalog.PreprocSpec, error) {
	if !p.Preprocessing.Set {
		return nil, nil
	}
	path := strconv.Itoa(i+1) + "/preprocessing"
	in, err := decodeSteps(p.Preprocessing.Value, path)
	if err != nil {
		return nil, err
	}
	if len(in) > maxTestSteps {
		return nil, errParams(`Invalid parameter "/%s": %d steps, more than %d.`, path, len(in), maxTestSteps)
	}
	chain, err := parseSteps(in, "/"+path)
	if err != nil {
		return nil, err
	}
	specs := make([]catalog.PreprocSpec, len(chain))
	for j, st := range chain {
		specs[j] = catalog.StepSpec(strconv.Itoa(int(st.Type)), strings.Join(st.Params, "\n"), strconv.Itoa(int(st.ErrorHandler)), st.ErrorParams)
	}
	return &specs, nil
}

// typeRules checks master_itemid and params against the item's type
// (typ: the new type, or on update the current one if unchanged), as
// Zabbix's validator does: a dependent item needs its master and only
// it has one; a calculated item needs its formula. hasMaster says the
// item already has a master (update).
func (p *itemParams) typeRules(i int, typ catalog.ItemType, hasMaster, hasParams bool) error {
	switch {
	case typ == catalog.Dependent && !hasMaster && (!p.MasterItemID.Set || p.MasterItemID.Value == 0):
		return missing(i, "master_itemid")
	case typ != catalog.Dependent && p.MasterItemID.Set && p.MasterItemID.Value != 0:
		return errParams(`Invalid parameter "/%d": unexpected parameter "master_itemid".`, i+1)
	case typ == catalog.Calculated && !hasParams && !p.Params.Set:
		return missing(i, "params")
	case typ == catalog.Calculated && p.Params.Set && p.Params.Value == "":
		return empty(i, "params")
	}
	return nil
}

func itemStatus(v int64) string {
	if v == 1 {
		return "disabled"
	}
	return "enabled"
}

func (w *configWriter) itemCreate(ctx context.Context, c *call) (any, error) {
	var ps []itemParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	items := make([]catalog.NewItem, len(ps))
	inv := inventoryUse{}
	for i := range ps {
		p := &ps[i]
		if err := p.createChecks(i, snap, a); err != nil { // item_check.go
			return nil, err
		}
		if err := p.typeRules(i, catalog.ItemType(p.Type.Value), false, false); err != nil {
			return nil, err
		}
		if err := p.checkInventory(snap, snap.HostOrTemplate(p.HostID.Value), ^uint64(i), p.Name.Value, inv, nil); err != nil { // item_inventory.go
			return nil, err
		}
		steps, err := p.steps(i)
		if err != nil {
			return nil, err
		}
		if err := p.nameLengthCheck(); err != nil {
			return nil, err
		}
		items[i] = p.newItem(steps)
	}
	var ids []uint64
	hosts := make([]uint64, len(items))
	for i, it := range items {
		hosts[i] = it.HostID
	}
	err = w.edit(ctx, c, "itemid", hostsWritable(hosts), func(e *catalog.Edit) (err error) {
		ids, err = e.CreateItems(items)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}

func (w *configWriter) itemUpdate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return idResult("itemids", nil), nil // as 6.0: nothing updated
	}
	var ps []itemParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ups := make([]catalog.ItemUpdate, len(ps))
	ids := make([]uint64, len(ps))
	objs := objectsOf(c.params)
	snap := w.cat.Snapshot()
	inv, changed := inventoryUse{}, map[uint64]bool{}
	for i := range ps {
		if ps[i].ItemID.Set && ps[i].InventoryLink.Given() {
			changed[ps[i].ItemID.Value] = true
		}
	}
	for i := range ps {
		p := &ps[i]
		if !p.ItemID.Set {
			return nil, missing(i, "itemid")
		}
		cur := snap.AnyItem(p.ItemID.Value)
		if cur != nil && cur.Discovery != nil && cur.Ext().LLD == nil {
			if err := discoveredRefusal(objs, i, "item", "name", cur.Name, "itemid", "status"); err != nil { // lld_inherited.go
				return nil, err
			}
		} else if !itemUpdatable(cur) {
			return nil, errNoPermissions
		}
		if cur != nil && cur.TemplateID != 0 {
			// A copy takes from its owner only what 6.0 lets an owner
			// change; 6.0 ignores the other members, unchecked
			// (recorded from 6.0.14).
			p.dropTemplated(cur.Type)
		}
		if err := p.scriptUpdate(i, cur); err != nil {
			return nil, err
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		if cur != nil {
			typ := cur.Type
			if p.Type.Given() {
				typ = catalog.ItemType(p.Type.Value)
			}
			if err := p.typeRules(i, typ, cur.MasterItemID != 0, cur.Ext().Params != ""); err != nil {
				return nil, err
			}
			if err := p.updateChecks(cur); err != nil { // item_check.go
				return nil, err
			}
			if err := p.checkInventory(snap, cur.Host, cur.ID, cmpOr(p.Name, cur.Name), inv, changed); err != nil { // item_inventory.go
				return nil, err
			}
		}
		steps, err := p.steps(i)
		if err != nil {
			return nil, err
		}
		if err := p.nameLengthCheck(); err != nil {
			return nil, err
		}
		if p.HostID.Set {
			// Items do not move between hosts; an unchanged hostid (as
			// item.get returns it) is accepted. An item's host never
			// changes, so the current snapshot is good enough here.
			if it := snap.AnyItem(p.ItemID.Value); it != nil && it.HostID != p.HostID.Value {
				return nil, errParams(`Invalid parameter "/%d/hostid": cannot be changed.`, i+1)
			}
		}
		u := p.update(snap, steps)
		ups[i], ids[i] = u, p.ItemID.Value
	}
	if err := w.edit(ctx, c, "itemid", itemsWritable(ids), func(e *catalog.Edit) error { return e.UpdateItems(ups) }); err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}

// newItem is item.create's object (checked) as the catalog's NewItem;
// discoveryrule.create and itemprototype.create make theirs the same
// way.
func (p *itemParams) newItem(steps *[]catalog.PreprocSpec) catalog.NewItem {
	ni := catalog.NewItem{HostID: p.HostID.Value, ItemSpec: catalog.ItemSpec{
		Key: p.Key.Value, Name: p.Name.Value, Type: strconv.FormatInt(p.Type.Value, 10), ValueType: strconv.FormatInt(p.ValueType.Value, 10),
		Units: p.Units.Value, Delay: p.Delay.Value, History: p.History.Value, Trends: p.Trends.Value, Status: itemStatus(p.Status.Value),
		Timeout: p.Timeout.Value, RetryDelay: p.RetryDelay.Value, TimestampPrecision: p.TimestampPrecision.Value, SNMPOID: p.SNMPOID.Value, Params: p.Params.Value,
		Description: p.Description.Value, IPMISensor: p.IPMISensor.Value, JMXEndpoint: p.JMXEndpoint.Value,
		LogTimeFmt: p.LogTimeFmt.Value, TrapperHosts: p.TrapperHosts.Value, AllowTraps: strconv.FormatInt(p.AllowTraps.Value, 10), InventoryLink: strconv.FormatInt(p.InventoryLink.Value, 10),
	}, InterfaceID: p.InterfaceID.Value, MasterItemID: p.MasterItemID.Value, ValueMapID: p.ValueMapID.Value}
	p.httpParams.apply(&ni.HTTPSpec)
	ni.PublicKey, ni.PrivateKey = p.PublicKey.Value, p.PrivateKey.Value
	for _, t := range p.Tags.Value {
		ni.Tags = append(ni.Tags, catalog.TagSpec(t))
	}
	if steps != nil {
		ni.Preprocessing = *steps
	}
	if p.parameters != nil {
		ni.Parameters = *p.parameters
	}
	return ni
}

// update is item.update's object (checked) as the catalog's
// ItemUpdate; discoveryrule.update makes its own the same way.
func (p *itemParams) update(snap *catalog.Snapshot, steps *[]catalog.PreprocSpec) catalog.ItemUpdate {
	u := catalog.ItemUpdate{ID: p.ItemID.Value}
	str := func(s opt[string]) *string {
		if s.Set {
			return &s.Value
		}
		return nil
	}
	tim := str
	num := func(n opt[int64]) *string {
		if n.Given() {
			return new(strconv.FormatInt(n.Value, 10))
		}
		return nil
	}
	u.Name, u.Key, u.Units = str(p.Name), str(p.Key), str(p.Units)
	u.Delay, u.History, u.Trends, u.Timeout = tim(p.Delay), tim(p.History), tim(p.Trends), tim(p.Timeout)
	u.RetryDelay = tim(p.RetryDelay)
	if p.InterfaceID.Set {
		u.InterfaceID = &p.InterfaceID.Value
	}
	u.TimestampPrecision = str(p.TimestampPrecision)
	u.SNMPOID = str(p.SNMPOID)
	u.IPMISensor = str(p.IPMISensor)
	u.LogTimeFmt = str(p.LogTimeFmt)
	u.TrapperHosts, u.AllowTraps = str(p.TrapperHosts), num(p.AllowTraps)
	u.InventoryLink = num(p.InventoryLink)
	u.JMXEndpoint = str(p.JMXEndpoint)
	u.Description = str(p.Description)
	u.Preprocessing, u.Params = steps, str(p.Params)
	if p.MasterItemID.Set {
		u.MasterItemID = &p.MasterItemID.Value
	}
	if p.ValueMapID.Set {
		u.ValueMapID = &p.ValueMapID.Value
	}
	u.Parameters = p.parameters
	if p.Tags.Set {
		var cur []catalog.Tag
		if it := snap.AnyItem(p.ItemID.Value); it != nil {
			cur = it.Tags
		}
		u.Tags = new(replaceTags(cur, p.Tags.Value))
	}
	u.Type, u.ValueType = num(p.Type), num(p.ValueType)
	if p.Status.Given() {
		u.Status = new(itemStatus(p.Status.Value))
	}
	if p.httpParams.any() {
		hp := p.httpParams
		u.HTTP = hp.apply
	}
	if p.PublicKey.Set {
		u.PublicKey = &p.PublicKey.Value
	}
	if p.PrivateKey.Set {
		u.PrivateKey = &p.PrivateKey.Value
	}
	return u
}

func (w *configWriter) itemDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := w.edit(ctx, c, "itemid", itemsWritable(ids), func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		for _, id := range ids {
			if !itemDeletable(snap.AnyItem(id)) {
				return errNoPermissions
			}
		}
		return e.DeleteItems(ids)
	}); err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}

// triggersOfItem returns the triggers referencing an item of a host or
// of a template.
func triggersOfItem(snap *catalog.Snapshot, it *catalog.Item) []*catalog.Trigger {
	if it.Host != nil && it.Host.IsTemplate {
		return snap.TemplateTriggersOfItem(it.ID)
	}
	return snap.TriggersOfItem(it.ID)
}
