package catalog

import (
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
	InterfaceID                              *uint64
	// TimestampPrecision: "ns", "us", "ms", "s" or "" (the server's
	// setting); applies to values written after the change.
	TimestampPrecision *string
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
		it, ok := normItem(&ni.ItemSpec, p, &el)
		if !ok {
			continue
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
		it.Key = strings.Clone(it.Key)
		if it.Name == items[i].Key {
			it.Name = it.Key
		} else {
			it.Name = strings.Clone(it.Name)
		}
		it.Units, it.Delay, it.History, it.Trends, it.Timeout = e.str(it.Units), e.str(it.Delay), e.str(it.History), e.str(it.Trends), e.str(it.Timeout)
		it.TimestampPrecision = e.str(it.TimestampPrecision)
		id, err := e.exec("INSERT INTO items (host_id, key_, name, type, value_type, units, delay, history, trends, status, interface_id, timeout, timestamp_precision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			it.HostID, it.Key, it.Name, int64(it.Type), int64(it.ValueType), it.Units, it.Delay, it.History, it.Trends, status(it.Enabled), it.InterfaceID, it.Timeout, it.TimestampPrecision)
		if err != nil {
			return nil, e.fail(fmt.Errorf("cannot create item %q on host %d: %w", it.Key, it.HostID, err))
		}
		it.ID = id
		e.items[id] = it
		e.keys[hostKey{it.HostID, it.Key}] = id
		e.created = append(e.created, it)
		ids[i] = id
	}
	e.res.ItemsCreated += len(items)
	return ids, nil
}

// specOf returns the import-format form of it, for revalidation.
func specOf(it *Item) ItemSpec {
	st := "enabled"
	if !it.Enabled {
		st = "disabled"
	}
	return ItemSpec{
		Key: it.Key, Name: it.Name, Type: strconv.Itoa(int(it.Type)), ValueType: strconv.Itoa(int(it.ValueType)),
		Units: it.Units, Delay: it.Delay, History: it.History, Trends: it.Trends, Status: st, Timeout: it.Timeout,
		TimestampPrecision: it.TimestampPrecision,
	}
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
	for i := range items {
		u := &items[i]
		ids[i] = u.ID
		p := "items[" + strconv.Itoa(i) + "]"
		cur := e.item(u.ID)
		if cur == nil {
			el.add(p+".id", notFound("item", u.ID))
			continue
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
		set(&spec.TimestampPrecision, u.TimestampPrecision)
		if u.Trends == nil && u.ValueType != nil {
			if vt, err := ParseValueType(*u.ValueType); err == nil && !vt.Numeric() {
				spec.Trends = DefaultNonNumericTrend
			}
		}
		if u.Delay == nil && u.Type != nil && spec.Delay == DefaultTrapperDelay {
			if t, err := ParseItemType(*u.Type); err == nil && t != Trapper {
				spec.Delay = "" // the polled default rather than a "0" that never polls
			}
		}
		it, ok := normItem(&spec, p, &el)
		if !ok {
			continue
		}
		k := hostKey{cur.HostID, it.Key}
		if it.Key != cur.Key {
			if other := e.itemByKey(cur.HostID, it.Key); batch[k] || other != 0 && other != u.ID {
				el.add(p+".key", &ConflictError{Kind: ItemExists, Host: e.host(cur.HostID).Host, Name: it.Key})
				continue
			}
		}
		batch[k] = true
		it.ID, it.HostID = cur.ID, cur.HostID
		switch {
		case u.InterfaceID != nil:
			it.InterfaceID = *u.InterfaceID
		case it.Type == cur.Type:
			it.InterfaceID = cur.InterfaceID
		}
		itemIface(&it, e.host(cur.HostID), "", p, "interfaceid", false, &el)
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
		if cur.sameConfig(n) {
			continue
		}
		if n.Key == cur.Key {
			n.Key = cur.Key
		} else {
			n.Key = strings.Clone(n.Key)
		}
		switch n.Name {
		case n.Key:
			n.Name = n.Key
		case cur.Name:
			n.Name = cur.Name
		default:
			n.Name = strings.Clone(n.Name)
		}
		n.Units, n.Delay, n.History, n.Trends, n.Timeout = e.str(n.Units), e.str(n.Delay), e.str(n.History), e.str(n.Trends), e.str(n.Timeout)
		n.TimestampPrecision = e.str(n.TimestampPrecision)
		_, err := e.exec("UPDATE items SET key_ = ?, name = ?, type = ?, value_type = ?, units = ?, delay = ?, history = ?, trends = ?, status = ?, interface_id = ?, timeout = ?, timestamp_precision = ? WHERE id = ?",
			n.Key, n.Name, int64(n.Type), int64(n.ValueType), n.Units, n.Delay, n.History, n.Trends, status(n.Enabled), n.InterfaceID, n.Timeout, n.TimestampPrecision, n.ID)
		if err != nil {
			return e.fail(fmt.Errorf("cannot update item %d (%q): %w", n.ID, cur.Key, err))
		}
		if n.Key != cur.Key {
			e.keys[hostKey{cur.HostID, cur.Key}] = 0
			e.keys[hostKey{n.HostID, n.Key}] = n.ID
		}
		if it, ok := e.items[n.ID]; ok {
			*it = *n // created or changed earlier in this Edit: keep the pointer in e.created
		} else {
			c := *n
			e.items[n.ID] = &c
		}
		e.res.ItemsUpdated++
	}
	return nil
}

// DeleteItems deletes items. Their history stays in the history store.
func (e *Edit) DeleteItems(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		if e.item(id) == nil {
			el.add("items["+strconv.Itoa(i)+"]", notFound("item", id))
		}
	}
	dupIDs("items", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	initMap(&e.items)
	initMap(&e.keys)
	e.itemsGone = true
	for _, id := range ids {
		it := e.item(id)
		if _, err := e.exec("DELETE FROM items WHERE id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete item %d (%q): %w", id, it.Key, err))
		}
		e.keys[hostKey{it.HostID, it.Key}] = 0
		e.items[id] = nil
	}
	e.res.ItemsDeleted += len(ids)
	return nil
}
