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
func ifaceElems(params json.RawMessage) ([][]byte, error) {
	raw := bytes.TrimSpace(params)
	if len(raw) > 0 && raw[0] == '{' {
		return [][]byte{raw}, nil
	}
	elems, ok := arrayElems(raw)
	if !ok {
		return nil, errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	if len(elems) == 0 {
		return nil, errParams(`Invalid parameter "/": cannot be empty.`)
	}
	return elems, nil
}

// ifaceError words a problem of interface object i (0-based), whose
// path below the object is ve.sub ("/type", or "" for the object).
func ifaceError(i int, err error) error {
	var ve *valueError
	if errors.As(err, &ve) {
		return errParams(`Invalid parameter "/%d%s": %s.`, i+1, ve.sub, ve.msg)
	}
	return err
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
	if emptyParams(c.params) {
		// 6.0's answer to nothing to create (a PHP quirk, recorded).
		return object{"interfaceids": true}, nil
	}
	elems, err := ifaceElems(c.params)
	if err != nil {
		return nil, err
	}
	news := make([]catalog.Interface, len(elems))
	hosts := make([]uint64, len(elems))
	for i, el := range elems {
		// The host and a refused interfaceid first, read leniently: a
		// value that is no ID reads as not given, as it always has.
		var h struct {
			HostID      opt[uint64] `json:"hostid"`
			InterfaceID opt[uint64] `json:"interfaceid"`
		}
		decodeObject(el, "", &h, &lenientRules)
		switch {
		case !h.HostID.Set:
			return nil, errIncorrectArguments // recorded from 6.0.14
		case h.InterfaceID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "interfaceid".`, i+1)
		}
		if news[i], err = decodeIface(bytes.TrimSpace(el), ""); err != nil {
			return nil, ifaceError(i, err)
		}
		news[i].HostID, hosts[i] = h.HostID.Value, h.HostID.Value
	}
	var before *catalog.Snapshot
	err = w.editIfaces(ctx, c, hosts, func(snap *catalog.Snapshot) ([]catalog.HostUpdate, error) {
		before = snap
		lists := map[uint64][]catalog.Interface{}
		var order []uint64
		for _, f := range news {
			if _, ok := lists[f.HostID]; !ok {
				h := snap.HostByID(f.HostID)
				if h == nil {
					return nil, errNoPermissionsParams // recorded from 6.0.14
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
	if emptyParams(c.params) {
		return idResult("interfaceids", nil), nil // as 6.0: nothing updated
	}
	elems, err := ifaceElems(c.params)
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, len(elems))
	patches := make([][]member, len(elems))
	for i, el := range elems {
		ms, ok := objectMembers(el)
		if !ok && !isNull(el) {
			return nil, errParams(`Invalid parameter "/%d": an object is expected.`, i+1)
		}
		var idRaw []byte
		for _, m := range ms {
			if m.name == "interfaceid" {
				idRaw = m.raw // a repeated member keeps its last value
			}
		}
		id, ok := parseID(idRaw)
		switch {
		case idRaw == nil:
			return nil, errIncorrectArguments // recorded from 6.0.14
		case !ok:
			return nil, missing(i, "interfaceid")
		}
		ids[i], patches[i] = id, ms
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
				return nil, errNoPermissionsParams // recorded from 6.0.14
			}
			// The current interface, the given members over it.
			v := ifaceParams{InterfaceID: given(id), Type: given(int64(cur.Type)), Main: given(boolNum64(cur.Main)),
				UseIP: given(boolNum64(cur.UseIP)), IP: given(cur.IP), DNS: given(cur.DNS), Port: given(cur.Port)}
			if cur.Details != nil {
				b, _ := json.Marshal(cur.Details)
				v.Details = given(json.RawMessage(b))
			}
			if err := decodeMembers(patchOrder(patches[i]), "", &v, &legacyWriteRules); err != nil {
				var pe *pathError
				if errors.As(err, &pe) {
					return nil, errParams(`Invalid parameter "/%d%s": %s.`, i+1, pe.path, pe.msg)
				}
				return nil, err
			}
			f, err := checkIface(&v, "")
			if err != nil {
				return nil, ifaceError(i, err)
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
	if emptyParams(c.params) {
		return nil, errParams("Empty input parameter.") // 6.0's words
	}
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
		for _, id := range ids {
			f := snap.Interface(id)
			if f == nil {
				return nil, errNoPermissionsParams // recorded from 6.0.14
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

// boolNum64 is b as Zabbix's 0 or 1.
func boolNum64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
