package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// hostinterface.create, .update and .delete (Zabbix 6.0): each changes
// its hosts' interface lists through the catalog's host update, so an
// interface is validated (SNMP details included) and protected (one in
// use by an item cannot be deleted or change type) exactly as in
// host.update.

// ifaceElems splits params (one object or an array) into objects.
func ifaceElems(params json.RawMessage) ([]json.RawMessage, error) {
	raw := bytes.TrimSpace(params)
	if len(raw) > 0 && raw[0] == '{' {
		return []json.RawMessage{raw}, nil
	}
	var elems []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		return nil, errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	if len(elems) == 0 {
		return nil, errParams(`Invalid parameter "/": cannot be empty.`)
	}
	return elems, nil
}

// legacyDecodeIface decodes one interface object as host.create's
// interfaces do, naming element i (0-based) in errors.
func legacyDecodeIface(i int, el json.RawMessage) (catalog.Interface, error) {
	f, err := decodeIface(bytes.TrimSpace(el), "")
	var ve *valueError
	if errors.As(err, &ve) {
		return catalog.Interface{}, errParams(`Invalid parameter "/%d%s": %s.`, i+1, ve.sub, ve.msg)
	}
	return f, err
}

// editIfaces applies per-host changes to the interface lists of the
// snapshot the edit sees.
func (w *configWriter) editIfaces(ctx context.Context, c *call, hosts []uint64, change func(snap *catalog.Snapshot) ([]catalog.HostUpdate, error)) error {
	return w.edit(ctx, c, "interfaceid", hostsWritable(hosts), func(e *catalog.Edit) error {
		ups, err := change(w.cat.Snapshot())
		if err != nil {
			return err
		}
		return e.UpdateHosts(ups)
	})
}

func (w *configWriter) hostinterfaceCreate(ctx context.Context, c *call) (any, error) {
	elems, err := ifaceElems(c.params)
	if err != nil {
		return nil, err
	}
	news := make([]catalog.Interface, len(elems))
	hosts := make([]uint64, len(elems))
	for i, el := range elems {
		var h struct {
			HostID      flexID `json:"hostid"`
			InterfaceID flexID `json:"interfaceid"`
		}
		json.Unmarshal(el, &h)
		switch {
		case !h.HostID.set:
			return nil, missing(i, "hostid")
		case h.InterfaceID.set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "interfaceid".`, i+1)
		}
		if news[i], err = legacyDecodeIface(i, el); err != nil {
			return nil, err
		}
		news[i].HostID, hosts[i] = h.HostID.v, h.HostID.v
	}
	var before *catalog.Snapshot
	err = w.editIfaces(ctx, c, hosts, func(snap *catalog.Snapshot) ([]catalog.HostUpdate, error) {
		before = snap
		lists := map[uint64][]catalog.Interface{}
		var order []uint64
		for i, f := range news {
			if _, ok := lists[f.HostID]; !ok {
				h := snap.HostByID(f.HostID)
				if h == nil {
					return nil, errParams(`Invalid parameter "/%d/hostid": No permissions to referred object or it does not exist!`, i+1)
				}
				lists[f.HostID] = slices.Clone(h.Interfaces)
				order = append(order, f.HostID)
			}
			lists[f.HostID] = append(lists[f.HostID], f)
		}
		ups := make([]catalog.HostUpdate, 0, len(order))
		for _, id := range order {
			l := lists[id]
			ups = append(ups, catalog.HostUpdate{ID: id, Interfaces: &l})
		}
		return ups, nil
	})
	if err != nil {
		return nil, err
	}
	// The new interfaces' IDs: those of each host that the snapshot
	// before the edit did not have, matched by type and address.
	after := w.cat.Snapshot()
	ids := make([]uint64, len(news))
	taken := map[uint64]bool{}
	for i, f := range news {
		for _, g := range after.HostByID(f.HostID).Interfaces {
			if before.Interface(g.ID) == nil && !taken[g.ID] && g.Type == f.Type && g.Addr() == (&catalog.Interface{Type: f.Type, UseIP: f.UseIP, IP: f.IP, DNS: f.DNS, Port: f.Port}).Addr() {
				ids[i], taken[g.ID] = g.ID, true
				break
			}
		}
	}
	return idResult("interfaceids", ids), nil
}

func (w *configWriter) hostinterfaceUpdate(ctx context.Context, c *call) (any, error) {
	elems, err := ifaceElems(c.params)
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, len(elems))
	patches := make([]map[string]json.RawMessage, len(elems))
	for i, el := range elems {
		if err := json.Unmarshal(el, &patches[i]); err != nil {
			return nil, errParams(`Invalid parameter "/%d": an object is expected.`, i+1)
		}
		var id flexID
		if raw, ok := patches[i]["interfaceid"]; !ok || id.UnmarshalJSON(bytes.TrimSpace(raw)) != nil {
			return nil, missing(i, "interfaceid")
		}
		ids[i] = id.v
	}
	snap := w.cat.Snapshot()
	var hosts []uint64
	for _, id := range ids {
		if f := snap.Interface(id); f != nil {
			hosts = append(hosts, f.HostID)
		}
	}
	err = w.editIfaces(ctx, c, hosts, func(snap *catalog.Snapshot) ([]catalog.HostUpdate, error) {
		lists := map[uint64][]catalog.Interface{}
		var order []uint64
		for i, id := range ids {
			cur := snap.Interface(id)
			if cur == nil {
				return nil, errParams(`Invalid parameter "/%d/interfaceid": No permissions to referred object or it does not exist!`, i+1)
			}
			// The current interface as an object, the given members over it.
			obj := map[string]any{"interfaceid": id, "type": int(cur.Type), "main": boolNum(cur.Main), "useip": boolNum(cur.UseIP),
				"ip": cur.IP, "dns": cur.DNS, "port": cur.Port}
			if cur.Details != nil {
				obj["details"] = cur.Details
			}
			merged := map[string]json.RawMessage{}
			for k, v := range obj {
				b, _ := json.Marshal(v)
				merged[k] = b
			}
			for k, v := range patches[i] {
				merged[k] = v
			}
			b, _ := json.Marshal(merged)
			f, err := legacyDecodeIface(i, b)
			if err != nil {
				return nil, err
			}
			if _, ok := lists[cur.HostID]; !ok {
				lists[cur.HostID] = slices.Clone(snap.HostByID(cur.HostID).Interfaces)
				order = append(order, cur.HostID)
			}
			l := lists[cur.HostID]
			for j := range l {
				if l[j].ID == id {
					f.ID, f.HostID = id, cur.HostID
					l[j] = f
				}
			}
		}
		ups := make([]catalog.HostUpdate, 0, len(order))
		for _, h := range order {
			l := lists[h]
			ups = append(ups, catalog.HostUpdate{ID: h, Interfaces: &l})
		}
		return ups, nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("interfaceids", ids), nil
}

func (w *configWriter) hostinterfaceDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	var hosts []uint64
	for _, id := range ids {
		if f := snap.Interface(id); f != nil {
			hosts = append(hosts, f.HostID)
		}
	}
	err = w.editIfaces(ctx, c, hosts, func(snap *catalog.Snapshot) ([]catalog.HostUpdate, error) {
		lists := map[uint64][]catalog.Interface{}
		var order []uint64
		for i, id := range ids {
			f := snap.Interface(id)
			if f == nil {
				return nil, errParams(`Invalid parameter "/%d": No permissions to referred object or it does not exist!`, i+1)
			}
			if _, ok := lists[f.HostID]; !ok {
				lists[f.HostID] = slices.Clone(snap.HostByID(f.HostID).Interfaces)
				order = append(order, f.HostID)
			}
			lists[f.HostID] = slices.DeleteFunc(lists[f.HostID], func(g catalog.Interface) bool { return g.ID == id })
		}
		ups := make([]catalog.HostUpdate, 0, len(order))
		for _, h := range order {
			l := lists[h]
			ups = append(ups, catalog.HostUpdate{ID: h, Interfaces: &l})
		}
		return ups, nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("interfaceids", ids), nil
}
