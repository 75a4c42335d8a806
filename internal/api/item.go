package api

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// LastValues gives the newest and previous value of an item (the
// pipeline's per-item state).
type LastValues interface {
	Last(item uint64) (last, prev history.Sample, ok bool)
}

func (s *Server) itemGet(ctx context.Context, c *call) (any, error) {
	var p struct {
		getParams
		ItemIDs      ids  `json:"itemids"`
		HostIDs      ids  `json:"hostids"`
		GroupIDs     ids  `json:"groupids"`
		InterfaceIDs ids  `json:"interfaceids"`
		WebItems     bool `json:"webitems"` // there are no web items to include
		// Host and Group select by technical host name and group name.
		Host      *string `json:"host"`
		Group     *string `json:"group"`
		Monitored bool    `json:"monitored"`
		// Templated true selects template items, of which there are none.
		Templated   *bool `json:"templated"`
		SelectHosts any   `json:"selectHosts"`
		SelectTags  any   `json:"selectTags"`
		// SelectPreprocessing adds each item's steps (Zabbix 6.0).
		SelectPreprocessing any `json:"selectPreprocessing"`
	}
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	selPre, err := parseSelectPreprocessing(p.SelectPreprocessing)
	if err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	// filter.host is the host's technical name, as Zabbix's item.get
	// joins the hosts table for it; item rows have no such field, so it
	// is applied here and taken out of the generic filter.
	// A null value filters nothing, as in Zabbix; an empty list matches
	// no host.
	var filterHosts []string
	if raw, ok := p.Filter.Value["host"]; ok {
		if string(bytes.TrimSpace(raw)) != "null" {
			filterHosts = filterValues(raw)
		}
		delete(p.Filter.Value, "host")
	}
	var groupID uint64
	if p.Group != nil {
		g := snap.Group(*p.Group)
		if g == nil {
			return p.applyItems(&itemRows{lv: s.opts.Last}, itemSelect{})
		}
		groupID = g.ID
	}
	rs := &itemRows{lv: s.opts.Last, states: s.opts.States}
	if p.Templated != nil && *p.Templated {
		return p.applyItems(rs, itemSelect{})
	}
	visit := func(h *catalog.Host) {
		if len(p.GroupIDs) > 0 && !anyGroup(h.GroupIDs, p.GroupIDs) ||
			p.Group != nil && !slices.Contains(h.GroupIDs, groupID) ||
			p.Host != nil && h.Host != *p.Host ||
			filterHosts != nil && !slices.Contains(filterHosts, h.Host) ||
			!a.sees(h, p.Editable.Value) {
			return
		}
		for _, it := range h.Items() {
			if len(p.ItemIDs) > 0 && !containsID(p.ItemIDs, it.ID) ||
				len(p.InterfaceIDs) > 0 && !containsID(p.InterfaceIDs, it.InterfaceID) {
				continue
			}
			if p.Monitored && !(it.Enabled && h.Enabled) {
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
	case len(p.HostIDs) > 0:
		for _, hid := range p.HostIDs {
			once(snap.HostByID(hid))
		}
	case len(p.ItemIDs) > 0:
		for _, iid := range p.ItemIDs {
			if it := snap.Item(iid); it != nil {
				once(snap.HostByID(it.HostID))
			}
		}
	case p.Host != nil:
		once(snap.Host(*p.Host))
	default:
		rs.rows = make([]itemRow, 0, snap.ItemCount())
		for _, h := range snap.Hosts() {
			visit(h)
		}
	}
	return p.applyItems(rs, itemSelect{hosts: p.SelectHosts != nil, tags: p.SelectTags != nil, preprocessing: selPre})
}

// itemParams are the members of a Zabbix 6.0 item object that item.create
// and item.update take. Members Peregrine does not model (type-specific
// settings such as tags, value maps) are accepted and ignored.
// preprocessing is validated as Zabbix's API validates it, with its
// error paths (preprocessing.go); master_itemid is a dependent item's
// master and params a calculated item's formula (or a script item's
// script).
type itemParams struct {
	ItemID        flexID          `json:"itemid"`
	HostID        flexID          `json:"hostid"`
	Name          jstring         `json:"name"`
	Key           jstring         `json:"key_"`
	Type          flexInt         `json:"type"`
	ValueType     flexInt         `json:"value_type"`
	Delay         jtime           `json:"delay"`
	History       jtime           `json:"history"`
	Trends        jtime           `json:"trends"`
	Units         jstring         `json:"units"`
	Status        flexInt         `json:"status"`
	Preprocessing json.RawMessage `json:"preprocessing"`
	MasterItemID  flexID          `json:"master_itemid"`
	Params        jstring         `json:"params"`
	// InterfaceID must be one of the host's interfaces of the type the
	// item type needs; agent items without one get the host's main agent
	// interface. Ignored (stored as 0) for types that use none.
	InterfaceID flexID `json:"interfaceid"`
	Timeout     jtime  `json:"timeout"`
	// RetryDelay is Peregrine's retry interval (soft trigger states).
	RetryDelay jtime `json:"retry_delay"`
	// TimestampPrecision is Peregrine's own: "ns", "us", "ms", "s" or ""
	// for the server's history.timestamp_precision.
	TimestampPrecision jstring `json:"timestamp_precision"`
	// SNMPOID is an SNMP agent item's OID (Zabbix 6.0's forms, checked
	// by the catalog); ignored for other types.
	SNMPOID jstring `json:"snmp_oid"`

	httpParams

	Tags          notStored `json:"tags"`
	Description   notStored `json:"description"`
	InventoryLink notStored `json:"inventory_link"`
	LogTimeFmt    notStored `json:"logtimefmt"`
	ValueMapID    flexID    `json:"valuemapid"` // one of the host's value maps, 0 for none
	AllowTraps    notStored `json:"allow_traps"`
	TrapperHosts  notStored `json:"trapper_hosts"`
	PublicKey     notStored `json:"publickey"`
	PrivateKey    notStored `json:"privatekey"`
	IPMISensor    notStored `json:"ipmi_sensor"`
	JMXEndpoint   notStored `json:"jmx_endpoint"`
	Parameters    notStored `json:"parameters"`
	UUID          notStored `json:"uuid"`
}

// itemTypes lists the supported item types for error messages.
const itemTypes = "0, 2, 3, 5, 7, 10, 15, 17, 18, 19, 20, 21"

// common validates the members item.create and item.update share.
func (p *itemParams) common(i int) error {
	switch {
	case p.Name.set && p.Name.v == "":
		return empty(i, "name")
	case p.Key.set && p.Key.v == "":
		return empty(i, "key_")
	case p.Type.set && (p.Type.v < 0 || p.Type.v > 255 || !catalog.ItemType(p.Type.v).Valid()):
		return oneOf(i, "type", itemTypes)
	case p.ValueType.set && (p.ValueType.v < 0 || p.ValueType.v > 4):
		return oneOf(i, "value_type", "0, 1, 2, 3, 4")
	case p.Status.set && p.Status.v != 0 && p.Status.v != 1:
		return oneOf(i, "status", "0, 1")
	case p.Delay.set && p.Delay.v == "":
		return empty(i, "delay")
	case p.History.set && p.History.v == "":
		return empty(i, "history")
	case p.Trends.set && p.Trends.v == "":
		return empty(i, "trends")
	}
	return nil
}

// steps validates the preprocessing member, if present, and returns it
// in the catalog's form; nil means absent (an empty list removes an
// item's steps on update).
func (p *itemParams) steps(i int) (*[]catalog.PreprocSpec, error) {
	if p.Preprocessing == nil {
		return nil, nil
	}
	path := strconv.Itoa(i+1) + "/preprocessing"
	in, err := decodeSteps(p.Preprocessing, path)
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
	case typ == catalog.Dependent && !hasMaster && (!p.MasterItemID.set || p.MasterItemID.v == 0):
		return missing(i, "master_itemid")
	case typ != catalog.Dependent && p.MasterItemID.set && p.MasterItemID.v != 0:
		return errParams(`Invalid parameter "/%d": unexpected parameter "master_itemid".`, i+1)
	case typ == catalog.Calculated && !hasParams && !p.Params.set:
		return missing(i, "params")
	case typ == catalog.Calculated && p.Params.set && p.Params.v == "":
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
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	items := make([]catalog.NewItem, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.ItemID.set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "itemid".`, i+1)
		case !p.Name.set:
			return nil, missing(i, "name")
		case !p.Key.set:
			return nil, missing(i, "key_")
		case !p.HostID.set:
			return nil, missing(i, "hostid")
		case !p.Type.set:
			return nil, missing(i, "type")
		case !p.ValueType.set:
			return nil, missing(i, "value_type")
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		if err := p.typeRules(i, catalog.ItemType(p.Type.v), false, false); err != nil {
			return nil, err
		}
		steps, err := p.steps(i)
		if err != nil {
			return nil, err
		}
		items[i] = catalog.NewItem{HostID: p.HostID.v, ItemSpec: catalog.ItemSpec{
			Key: p.Key.v, Name: p.Name.v, Type: strconv.FormatInt(p.Type.v, 10), ValueType: strconv.FormatInt(p.ValueType.v, 10),
			Units: p.Units.v, Delay: p.Delay.v, History: p.History.v, Trends: p.Trends.v, Status: itemStatus(p.Status.v),
			Timeout: p.Timeout.v, RetryDelay: p.RetryDelay.v, TimestampPrecision: p.TimestampPrecision.v, SNMPOID: p.SNMPOID.v, Params: p.Params.v,
		}, InterfaceID: p.InterfaceID.v, MasterItemID: p.MasterItemID.v, ValueMapID: p.ValueMapID.v}
		p.httpParams.apply(&items[i].HTTPSpec)
		if steps != nil {
			items[i].Preprocessing = *steps
		}
	}
	var ids []uint64
	hosts := make([]uint64, len(items))
	for i, it := range items {
		hosts[i] = it.HostID
	}
	err := w.edit(ctx, c, "itemid", hostsWritable(hosts), func(e *catalog.Edit) (err error) {
		ids, err = e.CreateItems(items)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}

func (w *configWriter) itemUpdate(ctx context.Context, c *call) (any, error) {
	var ps []itemParams
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ups := make([]catalog.ItemUpdate, len(ps))
	ids := make([]uint64, len(ps))
	snap := w.cat.Snapshot()
	for i := range ps {
		p := &ps[i]
		if !p.ItemID.set {
			return nil, missing(i, "itemid")
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		cur := snap.Item(p.ItemID.v)
		if cur != nil {
			typ := cur.Type
			if p.Type.set {
				typ = catalog.ItemType(p.Type.v)
			}
			if err := p.typeRules(i, typ, cur.MasterItemID != 0, cur.Params != ""); err != nil {
				return nil, err
			}
		}
		steps, err := p.steps(i)
		if err != nil {
			return nil, err
		}
		if p.HostID.set {
			// Items do not move between hosts; an unchanged hostid (as
			// item.get returns it) is accepted. An item's host never
			// changes, so the current snapshot is good enough here.
			if it := snap.Item(p.ItemID.v); it != nil && it.HostID != p.HostID.v {
				return nil, errParams(`Invalid parameter "/%d/hostid": cannot be changed.`, i+1)
			}
		}
		u := catalog.ItemUpdate{ID: p.ItemID.v}
		str := func(s jstring) *string {
			if s.set {
				return &s.v
			}
			return nil
		}
		tim := func(s jtime) *string {
			if s.set {
				return &s.v
			}
			return nil
		}
		num := func(n flexInt) *string {
			if n.set {
				return new(strconv.FormatInt(n.v, 10))
			}
			return nil
		}
		u.Name, u.Key, u.Units = str(p.Name), str(p.Key), str(p.Units)
		u.Delay, u.History, u.Trends, u.Timeout = tim(p.Delay), tim(p.History), tim(p.Trends), tim(p.Timeout)
		u.RetryDelay = tim(p.RetryDelay)
		if p.InterfaceID.set {
			u.InterfaceID = &p.InterfaceID.v
		}
		u.TimestampPrecision = str(p.TimestampPrecision)
		u.SNMPOID = str(p.SNMPOID)
		u.Preprocessing, u.Params = steps, str(p.Params)
		if p.MasterItemID.set {
			u.MasterItemID = &p.MasterItemID.v
		}
		if p.ValueMapID.set {
			u.ValueMapID = &p.ValueMapID.v
		}
		u.Type, u.ValueType = num(p.Type), num(p.ValueType)
		if p.Status.set {
			u.Status = new(itemStatus(p.Status.v))
		}
		if p.httpParams.any() {
			hp := p.httpParams
			u.HTTP = hp.apply
		}
		ups[i], ids[i] = u, p.ItemID.v
	}
	if err := w.edit(ctx, c, "itemid", itemsWritable(ids), func(e *catalog.Edit) error { return e.UpdateItems(ups) }); err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}

func (w *configWriter) itemDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := w.edit(ctx, c, "itemid", itemsWritable(ids), func(e *catalog.Edit) error { return e.DeleteItems(ids) }); err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}
