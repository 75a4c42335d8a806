package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// NewItem describes an item for Edit.CreateItems: an item of the import
// format, with the same syntax and defaults, on host HostID.
type NewItem struct {
	HostID uint64
	ItemSpec
	// InterfaceID is one of the host's interfaces, of the type the item
	// type needs; 0 selects the host's main interface of that type
	// (required for agent items), as does ItemSpec.Interface by address.
	InterfaceID uint64
	// MasterItemID is a dependent item's master, an item of the same
	// host (the API's master_itemid); 0 takes ItemSpec.MasterItem's key
	// if that is set.
	MasterItemID uint64
	// ValueMapID is one of the host's value maps (the API's valuemapid),
	// 0 for none.
	ValueMapID uint64
	// UUID is a template item's uuid (an import's); "" makes one up.
	// Hosts' items have none.
	UUID string
	// LLD makes the item a discovery rule (flags 1); its prototypes'
	// IDs are assigned (lld_edit.go). Discovery makes it a discovered
	// item (flags 4, set by the LLD engine).
	LLD       *LLDRule
	Discovery *Discovery
}

// ItemUpdate changes the fields of item ID that are set; nil fields keep
// their value. Values have the import format's syntax (see ItemSpec); ""
// selects the default where the import format has one, except for Units.
// If ValueType becomes non-numeric and Trends is nil, Trends becomes "0".
//
// InterfaceID, if set, selects one of the host's interfaces (0: the
// host's main interface of the type the item needs). If it is nil and
// Type changes, the interface is chosen anew the same way.
type ItemUpdate struct {
	ID                                       uint64
	Key, Name, Type, ValueType, Units, Delay *string
	History, Trends, Status, Timeout         *string
	RetryDelay                               *string
	InterfaceID                              *uint64
	// SNMPOID: an SNMP agent item's snmp_oid (see ItemSpec.SNMPOID).
	SNMPOID *string
	// IPMISensor: the item's ipmi_sensor (see Item.IPMISensor).
	IPMISensor *string
	// LogTimeFmt: the item's logtimefmt (see Item.LogTimeFmt).
	LogTimeFmt *string
	// TrapperHosts and AllowTraps: the item's trapper_hosts and
	// allow_traps (see TrapHosts).
	TrapperHosts, AllowTraps *string
	// Description: the item's description.
	Description *string
	// TimestampPrecision: "ns", "us", "ms", "s" or "" (the server's
	// setting); applies to values written after the change.
	TimestampPrecision *string
	// Preprocessing, if set, replaces the item's steps (an empty list
	// removes them); MasterItemID its master (dependent items only; a
	// type change away from dependent without it clears the master);
	// Params its formula or script.
	Preprocessing *[]PreprocSpec
	MasterItemID  *uint64
	Params        *string
	// HTTP, if set, changes the HTTP agent fields (of an http_agent
	// item): each field of the function's spec is the current value, to
	// be changed as the caller sets.
	HTTP func(*HTTPSpec)
	// PublicKey and PrivateKey, if set, change an SSH item's key file
	// names; its authtype, user name and password go through HTTP (the
	// item fields Zabbix shares).
	PublicKey, PrivateKey *string
	// JMXEndpoint: a JMX agent item's jmx_endpoint (its username and
	// password go through HTTP, as the item's username and password).
	JMXEndpoint *string
	// ValueMapID, if set, is one of the host's value maps (0: none).
	ValueMapID *uint64
	// Tags, if set, replaces the item's tags with this list, in its
	// order (an empty list removes them).
	Tags *[]Tag
	// InventoryLink, if set: the inventory field by name or number.
	InventoryLink *string
	// Parameters, if set, replaces the item's parameters with this
	// list, in its order (an empty list removes them).
	Parameters *[]ItemParam
}

// CreateItems creates items and returns their IDs in the same order.
func (e *Edit) CreateItems(items []NewItem) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	made := make([]Item, len(items))
	batch := make(map[hostKey]bool, len(items))
	for i := range items {
		ni := &items[i]
		p := "items[" + strconv.Itoa(i) + "]"
		h := e.host(ni.HostID)
		if h == nil {
			el.add(p+".hostid", notFound("host", ni.HostID))
			continue
		}
		master := ni.MasterItemID
		if master == 0 && ni.MasterItem != nil {
			if master = e.itemByKey(ni.HostID, ni.MasterItem.Key); master == 0 {
				el.add(p+".master_item", fmt.Errorf("%w: item %q on host %q", ErrNotFound, ni.MasterItem.Key, h.Host))
				continue
			}
		}
		it, ok := normItem(&ni.ItemSpec, p, &el, e.ck, master != 0)
		if !ok {
			continue
		}
		if master != 0 {
			if err := dependentLinks(0, master, ni.HostID, 0, e.masterOf(nil)); err != nil {
				el.add(p+".master_itemid", err)
				continue
			}
			it.MasterItemID = master
		}
		k := hostKey{ni.HostID, ni.Key}
		if batch[k] || e.itemByKey(ni.HostID, ni.Key) != 0 {
			el.add(p+".key", &ConflictError{Kind: ItemExists, Host: h.Host, Name: ni.Key})
			continue
		}
		batch[k] = true
		it.HostID = ni.HostID
		it.InterfaceID = ni.InterfaceID
		itemIface(&it, h, ni.Interface, p, "interfaceid", false, &el)
		it.ValueMapID = ni.ValueMapID
		e.checkItemValueMap(p+".valuemapid", ni.HostID, ni.ValueMapID, &el)
		if ni.LLD != nil {
			e.checkRule(&it, ni.LLD, h, p, &el)
		}
		it.Discovery = ni.Discovery
		made[i] = it
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	initMap(&e.items)
	initMap(&e.keys)
	ids := make([]uint64, len(items))
	e.created = slices.Grow(e.created, len(made))
	for i := range made {
		it := &made[i]
		it.Key = e.text(it.Key)
		if it.Name == items[i].Key {
			it.Name = it.Key
		} else {
			it.Name = e.text(it.Name)
		}
		it.Units, it.Delay, it.History, it.Trends = e.str(it.Units), e.str(it.Delay), e.str(it.History), e.str(it.Trends)
		if it.Extra != nil {
			x := it.MutExt()
			x.Timeout, x.TimestampPrecision = e.str(x.Timeout), e.str(x.TimestampPrecision)
			x.SNMPOID, x.Params = e.text(x.SNMPOID), e.text(x.Params)
			x.IPMISensor, x.LogTimeFmt = strings.Clone(x.IPMISensor), strings.Clone(x.LogTimeFmt)
			x.Parameters = cloneItemParams(x.Parameters)
			x.Description = e.text(x.Description)
		}
		it.Preprocessing = e.steps.get(it.Preprocessing)
		it.Tags = e.tags(it.Tags)
		if h := e.host(it.HostID); h.IsTemplate {
			it.MutExt().UUID = cmp.Or(strings.Clone(items[i].UUID), NewUUID())
		}
		if it.Ext().LLD != nil {
			if err := e.assignProtoIDs(it.Ext().LLD, e.host(it.HostID).IsTemplate); err != nil {
				return nil, err
			}
		}
		if err := e.insertItem(it); err != nil {
			return nil, err
		}
		ids[i] = it.ID
	}
	e.res.ItemsCreated += len(items)
	if err := e.inheritCreated(made); err != nil {
		return nil, err
	}
	return ids, nil
}

// insertItem writes a new item (its ID is set) and adds it to the
// overlay. The caller has validated it and owns its strings.
func (e *Edit) insertItem(it *Item) error {
	initMap(&e.items)
	initMap(&e.keys)
	id, err := e.exec("INSERT INTO items (host_id, key_, name, type, value_type, units, delay, history, trends, status, interface_id, timeout, timestamp_precision, master_item_id, params, preprocessing, snmp_oid, retry_delay, valuemap_id, description, template_id, uuid, inventory_link) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		it.HostID, it.Key, it.Name, int64(it.Type), int64(it.ValueType), it.Units, it.Delay, it.History, it.Trends, status(it.Enabled), it.InterfaceID, it.Ext().Timeout, it.Ext().TimestampPrecision,
		it.MasterItemID, it.Ext().Params, encodeSteps(it.Preprocessing), it.Ext().SNMPOID, it.Ext().RetryDelay, it.ValueMapID, it.Ext().Description, it.TemplateID, it.Ext().UUID, int64(it.InventoryLink))
	if err != nil {
		return e.fail(fmt.Errorf("cannot create item %q on host %d: %w", it.Key, it.HostID, err))
	}
	it.ID = id
	if err := e.writeHTTP(it, false); err != nil {
		return err
	}
	if err := e.writeLogin(it, false); err != nil {
		return err
	}
	if err := e.writeJMX(it, false); err != nil {
		return err
	}
	if err := e.writeODBC(it, false); err != nil {
		return err
	}
	if err := e.writeLLD(it, false); err != nil {
		return err
	}
	if err := e.writeItemTags(it, false); err != nil {
		return err
	}
	if err := writeItemParams(e.editExec, id, it.Ext().Parameters, false); err != nil {
		return e.fail(fmt.Errorf("cannot store the parameters of item %q on host %d: %w", it.Key, it.HostID, err))
	}
	if err := writeItemIPMI(e.editExec, id, it.Ext().IPMISensor, false); err != nil {
		return e.fail(fmt.Errorf("cannot store the IPMI sensor of item %q on host %d: %w", it.Key, it.HostID, err))
	}
	if err := writeItemLogTimeFmt(e.editExec, id, it.Ext().LogTimeFmt, false); err != nil {
		return e.fail(fmt.Errorf("cannot store the logtimefmt of item %q on host %d: %w", it.Key, it.HostID, err))
	}
	if err := writeItemTraps(e.editExec, id, it.Ext().Traps, false); err != nil {
		return e.fail(fmt.Errorf("cannot store the allowed hosts of item %q on host %d: %w", it.Key, it.HostID, err))
	}
	e.addCreated(it)
	return nil
}

// writeItem writes n, the new state of item cur (same ID and host), and
// puts it in the overlay.
func (e *Edit) writeItem(n, cur *Item) error {
	initMap(&e.items)
	initMap(&e.keys)
	_, err := e.exec("UPDATE items SET key_ = ?, name = ?, type = ?, value_type = ?, units = ?, delay = ?, history = ?, trends = ?, status = ?, interface_id = ?, timeout = ?, timestamp_precision = ?, master_item_id = ?, params = ?, preprocessing = ?, snmp_oid = ?, retry_delay = ?, valuemap_id = ?, description = ?, template_id = ?, uuid = ?, inventory_link = ? WHERE id = ?",
		n.Key, n.Name, int64(n.Type), int64(n.ValueType), n.Units, n.Delay, n.History, n.Trends, status(n.Enabled), n.InterfaceID, n.Ext().Timeout, n.Ext().TimestampPrecision,
		n.MasterItemID, n.Ext().Params, encodeSteps(n.Preprocessing), n.Ext().SNMPOID, n.Ext().RetryDelay, n.ValueMapID, n.Ext().Description, n.TemplateID, n.Ext().UUID, int64(n.InventoryLink), n.ID)
	if err != nil {
		return e.fail(fmt.Errorf("cannot update item %d (%q): %w", n.ID, cur.Key, err))
	}
	if n.Key != cur.Key {
		if h := e.host(n.HostID); h != nil {
			if err := e.retextItemTriggers(n.ID, h.Host, cur.Key, n.Key); err != nil {
				return err
			}
		}
	}
	if !n.Ext().HTTP.equal(cur.Ext().HTTP) {
		if err := e.writeHTTP(n, cur.Ext().HTTP != nil); err != nil {
			return err
		}
	}
	if !n.Ext().Login.equal(cur.Ext().Login) {
		if err := e.writeLogin(n, cur.Ext().Login != nil); err != nil {
			return err
		}
	}
	if !n.Ext().JMX.equal(cur.Ext().JMX) {
		if err := e.writeJMX(n, cur.Ext().JMX != nil); err != nil {
			return err
		}
	}
	if !n.Ext().ODBC.equal(cur.Ext().ODBC) {
		if err := e.writeODBC(n, cur.Ext().ODBC != nil); err != nil {
			return err
		}
	}
	if !n.Ext().LLD.equal(cur.Ext().LLD) || !n.Discovery.equal(cur.Discovery) {
		if err := e.writeLLDRows(n, cur); err != nil {
			return err
		}
	}
	if !slices.Equal(n.Tags, cur.Tags) {
		if err := e.writeItemTags(n, cur.Tags != nil); err != nil {
			return err
		}
	}
	if sameItemParams(n.Ext().Parameters, cur.Ext().Parameters) {
		if len(cur.Ext().Parameters) > 0 && &n.Ext().Parameters[0] != &cur.Ext().Parameters[0] {
			n.MutExt().Parameters = cur.Ext().Parameters
		}
	} else {
		n.MutExt().Parameters = cloneItemParams(n.Ext().Parameters)
		if err := writeItemParams(e.editExec, n.ID, n.Ext().Parameters, cur.Ext().Parameters != nil); err != nil {
			return e.fail(fmt.Errorf("cannot update the parameters of item %d (%q): %w", n.ID, cur.Key, err))
		}
	}
	if n.Ext().IPMISensor != cur.Ext().IPMISensor {
		n.MutExt().IPMISensor = strings.Clone(n.Ext().IPMISensor)
		if err := writeItemIPMI(e.editExec, n.ID, n.Ext().IPMISensor, cur.Ext().IPMISensor != ""); err != nil {
			return e.fail(fmt.Errorf("cannot update the IPMI sensor of item %d (%q): %w", n.ID, cur.Key, err))
		}
	}
	if !n.Ext().Traps.equal(cur.Ext().Traps) {
		if err := writeItemTraps(e.editExec, n.ID, n.Ext().Traps, cur.Ext().Traps != nil); err != nil {
			return e.fail(fmt.Errorf("cannot update the allowed hosts of item %d (%q): %w", n.ID, cur.Key, err))
		}
	}
	if n.Ext().LogTimeFmt != cur.Ext().LogTimeFmt {
		n.MutExt().LogTimeFmt = strings.Clone(n.Ext().LogTimeFmt)
		if err := writeItemLogTimeFmt(e.editExec, n.ID, n.Ext().LogTimeFmt, cur.Ext().LogTimeFmt != ""); err != nil {
			return e.fail(fmt.Errorf("cannot update the logtimefmt of item %d (%q): %w", n.ID, cur.Key, err))
		}
	}
	e.shareExtra(n)
	if n.Key != cur.Key {
		e.keys[hostKey{cur.HostID, cur.Key}] = 0
		e.keys[hostKey{n.HostID, n.Key}] = n.ID
	}
	if it, ok := e.items[n.ID]; ok && it != nil {
		*it = *n // created or changed earlier in this Edit: keep the pointer in e.created
	} else {
		c := *n
		e.items[n.ID] = &c
	}
	if n.TemplateID != cur.TemplateID {
		e.indexCopy(n)
	}
	e.noteDependent(n)
	return nil
}

// specOf returns the import-format form of it, for revalidation.
func specOf(it *Item) ItemSpec {
	st := "enabled"
	if !it.Enabled {
		st = "disabled"
	}
	is := ItemSpec{
		Key: it.Key, Name: it.Name, Type: strconv.Itoa(int(it.Type)), ValueType: strconv.Itoa(int(it.ValueType)),
		Units: it.Units, Delay: it.Delay, History: it.History, Trends: it.Trends, Status: st, Timeout: it.Ext().Timeout, RetryDelay: it.Ext().RetryDelay,
		TimestampPrecision: it.Ext().TimestampPrecision, Preprocessing: specOfSteps(it.Preprocessing), Params: it.Ext().Params, SNMPOID: it.Ext().SNMPOID, HTTPSpec: httpSpecOf(it.Ext().HTTP),
		Tags: specOfTags(it.Tags), Description: it.Ext().Description, IPMISensor: it.Ext().IPMISensor, LogTimeFmt: it.Ext().LogTimeFmt, TrapperHosts: trapHostsOf(it), AllowTraps: allowTrapsOf(it), InventoryLink: strconv.Itoa(int(it.InventoryLink)),
		Parameters: it.Ext().Parameters,
	}
	loginSpecOf(it.Ext().Login, &is)
	if it.Ext().JMX != nil {
		is.JMXEndpoint, is.Username, is.Password = it.Ext().JMX.Endpoint, it.Ext().JMX.Username, it.Ext().JMX.Password
	}
	if it.Ext().ODBC != nil {
		is.Username, is.Password = it.Ext().ODBC.Username, it.Ext().ODBC.Password
	}
	return is
}

// specOfTags returns tags in the import format's form, nil for none.
func specOfTags(tags []Tag) []TagSpec {
	if len(tags) == 0 {
		return nil
	}
	out := make([]TagSpec, len(tags))
	for i, t := range tags {
		out[i] = TagSpec(t)
	}
	return out
}

// masterOf returns the lookup dependentLinks needs over the Edit's
// overlay, with pending (item → new master, for updates validated
// earlier in the same batch) taking precedence.
func (e *Edit) masterOf(pending map[uint64]uint64) func(uint64) (uint64, uint64, bool) {
	return func(id uint64) (uint64, uint64, bool) {
		it := e.item(id)
		if it == nil {
			return 0, 0, false
		}
		if m, ok := pending[id]; ok {
			return m, it.HostID, true
		}
		return it.MasterItemID, it.HostID, true
	}
}

// hostItems returns the current items of a host, over the overlay.
func (e *Edit) hostItems(host uint64) []*Item {
	var out []*Item
	if h := e.oldHost(host); h != nil {
		for i := range h.items {
			if it := e.item(h.items[i].ID); it != nil {
				out = append(out, it)
			}
		}
	}
	for _, it := range e.createdOn[host] {
		if e.items[it.ID] != nil {
			out = append(out, e.items[it.ID])
		}
	}
	return out
}

// dependentsBelow returns, for the items of a host, each master's
// dependents by ID.
func dependentsBelow(items []*Item) map[uint64][]uint64 {
	m := map[uint64][]uint64{}
	for _, it := range items {
		if it.MasterItemID != 0 {
			m[it.MasterItemID] = append(m[it.MasterItemID], it.ID)
		}
	}
	return m
}

// levelsBelow is the number of levels of dependents under id (0 for
// none), bounded so that a cycle cannot loop.
func levelsBelow(deps map[uint64][]uint64, id uint64, bound int) int {
	if bound <= 0 {
		return 0
	}
	n := 0
	for _, d := range deps[id] {
		n = max(n, 1+levelsBelow(deps, d, bound-1))
	}
	return n
}

// UpdateItems changes items. The resulting item is validated as a whole,
// as CreateItems does.
func (e *Edit) UpdateItems(items []ItemUpdate) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	ids := make([]uint64, len(items))
	next := make([]Item, len(items))
	batch := make(map[hostKey]bool, len(items))
	var pending map[uint64]uint64 // masters set by this batch, for cycle checks
	for i := range items {
		u := &items[i]
		ids[i] = u.ID
		p := "items[" + strconv.Itoa(i) + "]"
		cur := e.item(u.ID)
		if cur == nil {
			el.add(p+".id", notFound("item", u.ID))
			continue
		}
		if cur.TemplateID != 0 && !e.propagating {
			if f := templatedField(u, cur); f != "" {
				el.add(p+"."+f, &TemplatedError{Kind: "item", Name: cur.Key, Field: f})
				continue
			}
		}
		spec := specOf(cur)
		set := func(dst *string, v *string) {
			if v != nil {
				*dst = *v
			}
		}
		set(&spec.Key, u.Key)
		set(&spec.Name, u.Name)
		set(&spec.Type, u.Type)
		set(&spec.ValueType, u.ValueType)
		set(&spec.Units, u.Units)
		set(&spec.Delay, u.Delay)
		set(&spec.History, u.History)
		set(&spec.Trends, u.Trends)
		set(&spec.Status, u.Status)
		set(&spec.Timeout, u.Timeout)
		set(&spec.RetryDelay, u.RetryDelay)
		set(&spec.TimestampPrecision, u.TimestampPrecision)
		set(&spec.SNMPOID, u.SNMPOID)
		set(&spec.IPMISensor, u.IPMISensor)
		set(&spec.LogTimeFmt, u.LogTimeFmt)
		set(&spec.TrapperHosts, u.TrapperHosts)
		set(&spec.AllowTraps, u.AllowTraps)
		set(&spec.Params, u.Params)
		set(&spec.Description, u.Description)
		set(&spec.PublicKey, u.PublicKey)
		set(&spec.PrivateKey, u.PrivateKey)
		set(&spec.InventoryLink, u.InventoryLink)
		if u.Preprocessing != nil {
			spec.Preprocessing = *u.Preprocessing
		}
		if u.Tags != nil {
			spec.Tags = specOfTags(*u.Tags)
		}
		if u.Parameters != nil {
			spec.Parameters = *u.Parameters
		} else if t, err := ParseItemType(spec.Type); err == nil && t != Script {
			spec.Parameters = nil // a script item's type change drops them, as in 6.0
		}
		if t, err := ParseItemType(spec.Type); err == nil && u.Params == nil && !t.hasParams() {
			// A type change to a type without params drops them, as 6.0
			// does (recorded from 6.0.14: a script item made a trapper
			// item has params "").
			spec.Params = ""
		}
		master := cur.MasterItemID
		if u.MasterItemID != nil {
			master = *u.MasterItemID
		} else if t, err := ParseItemType(spec.Type); err == nil && t != Dependent {
			master = 0
		}
		if u.HTTP != nil {
			u.HTTP(&spec.HTTPSpec)
		}
		set(&spec.JMXEndpoint, u.JMXEndpoint)
		if u.Trends == nil && u.ValueType != nil {
			if vt, err := ParseValueType(*u.ValueType); err == nil && !vt.Numeric() {
				spec.Trends = DefaultNonNumericTrend
			}
		}
		if u.Delay == nil && u.Type != nil && spec.Delay == DefaultTrapperDelay {
			if t, err := ParseItemType(*u.Type); err == nil && !t.unscheduled() {
				spec.Delay = "" // the polled default rather than a "0" that never polls
			}
		}
		it, ok := normItem(&spec, p, &el, e.ck, master != 0)
		if !ok {
			continue
		}
		if master != 0 && master != cur.MasterItemID {
			below := levelsBelow(dependentsBelow(e.hostItems(cur.HostID)), cur.ID, maxDependentLevels+1)
			if err := dependentLinks(cur.ID, master, cur.HostID, below, e.masterOf(pending)); err != nil {
				el.add(p+".master_itemid", err)
				continue
			}
		}
		it.MasterItemID = master
		if pending == nil {
			pending = map[uint64]uint64{}
		}
		pending[cur.ID] = master
		k := hostKey{cur.HostID, it.Key}
		if it.Key != cur.Key {
			if other := e.itemByKey(cur.HostID, it.Key); batch[k] || other != 0 && other != u.ID {
				el.add(p+".key", &ConflictError{Kind: ItemExists, Host: e.host(cur.HostID).Host, Name: it.Key})
				continue
			}
		}
		batch[k] = true
		it.ID, it.HostID = cur.ID, cur.HostID
		it.TemplateID, it.MutExt().UUID = cur.TemplateID, cur.Ext().UUID
		it.MutExt().LLD, it.Discovery = cur.Ext().LLD, cur.Discovery
		if it.Ext().LLD != nil {
			// A rule stays text without history (checkRule).
			it.ValueType, it.History, it.HistorySeconds, it.Trends, it.TrendsSeconds = cur.ValueType, "0", 0, "0", 0
		}
		switch {
		case u.InterfaceID != nil:
			it.InterfaceID = *u.InterfaceID
		case it.Type == cur.Type:
			it.InterfaceID = cur.InterfaceID
		}
		itemIface(&it, e.host(cur.HostID), "", p, "interfaceid", false, &el)
		it.ValueMapID = cur.ValueMapID
		if u.ValueMapID != nil {
			it.ValueMapID = *u.ValueMapID
			e.checkItemValueMap(p+".valuemapid", cur.HostID, it.ValueMapID, &el)
		}
		next[i] = it
	}
	dupIDs("items", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	initMap(&e.items)
	initMap(&e.keys)
	for i := range next {
		n := &next[i]
		cur := e.item(n.ID)
		// The value map is outside sameConfig: Apply sets it apart.
		if cur.sameConfig(n) && cur.ValueMapID == n.ValueMapID {
			continue
		}
		if n.Key == cur.Key {
			n.Key = cur.Key
		} else {
			n.Key = e.text(n.Key)
		}
		switch n.Name {
		case n.Key:
			n.Name = n.Key
		case cur.Name:
			n.Name = cur.Name
		default:
			n.Name = e.text(n.Name)
		}
		n.Units, n.Delay, n.History, n.Trends, n.MutExt().Timeout = e.str(n.Units), e.str(n.Delay), e.str(n.History), e.str(n.Trends), e.str(n.Ext().Timeout)
		n.MutExt().TimestampPrecision = e.str(n.Ext().TimestampPrecision)
		n.MutExt().SNMPOID = e.text(n.Ext().SNMPOID)
		if sameSteps(n.Preprocessing, cur.Preprocessing) {
			n.Preprocessing = cur.Preprocessing // keep the chain's identity for consumers' caches
		} else {
			n.Preprocessing = e.steps.get(n.Preprocessing)
		}
		if n.Ext().Params == cur.Ext().Params {
			n.MutExt().Params = cur.Ext().Params
		} else {
			n.MutExt().Params = e.text(n.Ext().Params)
		}
		if n.Ext().Description == cur.Ext().Description {
			n.MutExt().Description = cur.Ext().Description
		} else {
			n.MutExt().Description = e.text(n.Ext().Description)
		}
		tagsChanged := !slices.Equal(n.Tags, cur.Tags)
		if tagsChanged {
			n.Tags = e.tags(n.Tags)
		} else {
			n.Tags = cur.Tags
		}
		if n.Ext().same(cur.Ext()) {
			n.Extra = cur.Extra
		} else {
			e.shareExtra(n)
		}
		if err := e.writeItem(n, cur); err != nil {
			return err
		}
		e.res.ItemsUpdated++
	}
	return e.propagateItemUpdates(items)
}

// DeleteItems deletes items, and with them their dependent items (and
// theirs), as Zabbix does; ItemsDeleted counts both. Their history stays
// in the history store.
func (e *Edit) DeleteItems(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		it := e.item(id)
		switch {
		case it == nil:
			el.add("items["+strconv.Itoa(i)+"]", notFound("item", id))
		case it.TemplateID != 0 && !e.propagating:
			el.add("items["+strconv.Itoa(i)+"]", &TemplatedError{Kind: "item", Name: it.Key, Op: "delete"})
		}
	}
	dupIDs("items", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	ids = e.withDependents(e.withDiscovered(e.withCopies(ids)))
	// The hosts deleted rules discovered go with them.
	if hs := e.hostsDiscoveredBy(ids); len(hs) > 0 {
		if err := e.DeleteHosts(hs); err != nil {
			return err
		}
	}
	initMap(&e.items)
	initMap(&e.keys)
	e.itemsGone = true
	for _, id := range ids {
		it := e.item(id)
		if _, err := e.exec("DELETE FROM item_http WHERE item_id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete item %d (%q): %w", id, it.Key, err))
		}
		if _, err := e.exec("DELETE FROM item_login WHERE item_id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete item %d (%q): %w", id, it.Key, err))
		}
		if _, err := e.exec("DELETE FROM item_jmx WHERE item_id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete item %d (%q): %w", id, it.Key, err))
		}
		if _, err := e.exec("DELETE FROM item_parameters WHERE item_id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete item %d (%q): %w", id, it.Key, err))
		}
		if _, err := e.exec("DELETE FROM item_odbc WHERE item_id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete item %d (%q): %w", id, it.Key, err))
		}
		if _, err := e.exec("DELETE FROM item_tags WHERE item_id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete item %d (%q): %w", id, it.Key, err))
		}
		if _, err := e.exec("DELETE FROM item_ipmi WHERE item_id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete item %d (%q): %w", id, it.Key, err))
		}
		if err := e.deleteLLDRows(it); err != nil {
			return err
		}
		if _, err := e.exec("DELETE FROM items WHERE id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete item %d (%q): %w", id, it.Key, err))
		}
		e.keys[hostKey{it.HostID, it.Key}] = 0
		e.items[id] = nil
	}
	e.res.ItemsDeleted += len(ids)
	return nil
}

// withDependents returns ids followed by every dependent item below
// them that ids does not list, each once.
func (e *Edit) withDependents(ids []uint64) []uint64 {
	hosts := map[uint64]bool{}
	for _, id := range ids {
		if it := e.item(id); it != nil && (it.hasDeps || e.overlayHasDependents(it.HostID)) {
			hosts[it.HostID] = true
		}
	}
	if len(hosts) == 0 {
		return ids
	}
	seen := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	out := slices.Clone(ids)
	for h := range hosts {
		deps := dependentsBelow(e.hostItems(h))
		for i := 0; i < len(out); i++ {
			for _, d := range deps[out[i]] {
				if !seen[d] {
					seen[d] = true
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// overlayHasDependents reports whether an item created or changed in
// this Edit on the host is a dependent item: the old snapshot's hasDeps
// does not know about those links. The hosts are recorded as items are
// written (noteDependent), so that deleting from many hosts in one Edit
// (clearing a template from 10,000) does not scan the overlay per host.
func (e *Edit) overlayHasDependents(host uint64) bool { return e.depHosts[host] }

// noteDependent records it's host when it is a dependent item.
func (e *Edit) noteDependent(it *Item) {
	if it.MasterItemID != 0 {
		initMap(&e.depHosts)
		e.depHosts[it.HostID] = true
	}
}

// writeHTTP stores it's HTTP agent request (item_http), replacing the
// row it had if had.
func (e *Edit) writeHTTP(it *Item, had bool) error {
	if had {
		if _, err := e.exec("DELETE FROM item_http WHERE item_id = ?", it.ID); err != nil {
			return e.fail(fmt.Errorf("cannot update the HTTP settings of item %d (%q): %w", it.ID, it.Key, err))
		}
	}
	if it.Ext().HTTP == nil {
		return nil
	}
	if _, err := e.exec("INSERT INTO item_http (item_id, config) VALUES (?, ?)", it.ID, encodeHTTP(it.Ext().HTTP)); err != nil {
		return e.fail(fmt.Errorf("cannot store the HTTP settings of item %d (%q): %w", it.ID, it.Key, err))
	}
	return nil
}

// writeItemTags stores it's tags (item_tags), replacing the rows it had
// if had.
func (e *Edit) writeItemTags(it *Item, had bool) error {
	if had {
		if _, err := e.exec("DELETE FROM item_tags WHERE item_id = ?", it.ID); err != nil {
			return e.fail(fmt.Errorf("cannot update the tags of item %d (%q): %w", it.ID, it.Key, err))
		}
	}
	for _, t := range it.Tags {
		if _, err := e.exec("INSERT INTO item_tags (item_id, tag, value) VALUES (?, ?, ?)", it.ID, t.Tag, t.Value); err != nil {
			return e.fail(fmt.Errorf("cannot store the tags of item %d (%q): %w", it.ID, it.Key, err))
		}
	}
	return nil
}
