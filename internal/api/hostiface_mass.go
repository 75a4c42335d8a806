package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// hostinterface.massadd, hostinterface.massremove and
// hostinterface.replacehostinterfaces as Zabbix 6.0 does them (recorded
// from 6.0.14), through the catalog's host update as the other
// interface methods: every rule of host.update holds (one default
// interface per type, none deleted while an item uses it). Their
// answers keep 6.0's shapes: massadd nests its IDs
// ({"interfaceids": {"interfaceids": [...]}}, and true for the IDs
// when it had nothing to do), massremove gives the removed IDs as
// numbers.

// ifaceAddr is an interface's address as massremove matches it.
type ifaceAddr struct{ ip, dns, port string }

// massIfaceAddr reads one of the "interfaces" of a massremove: an
// object with ip, dns and port (other members ignored).
func massIfaceAddr(e []byte) (ifaceAddr, error) {
	ms, ok := objectMembers(e)
	if !ok {
		return ifaceAddr{}, errIncorrectArgs
	}
	got := map[string]string{}
	for _, m := range ms {
		if m.name == "ip" || m.name == "dns" || m.name == "port" {
			got[m.name] = phpText(m.raw)
		}
	}
	if len(got) < 3 {
		return ifaceAddr{}, errIncorrectArgs
	}
	return ifaceAddr{got["ip"], got["dns"], got["port"]}, nil
}

// phpText is a scalar as PHP compares it with a string: a string's
// text, a number's digits.
func phpText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if s, ok := strValue(raw); ok {
		return s
	}
	return string(raw)
}

// removeIfaces deletes the hosts' interfaces with one of the addresses
// of raw (a massremove's "interfaces": none is refused) and sets gone
// (if not nil) to their IDs, ascending. As 6.0, it checks each address
// in turn, its form and then the default interfaces it would leave,
// against the hosts as they were before the call.
func removeIfaces(e *catalog.Edit, snap *catalog.Snapshot, hosts []uint64, raw []byte, gone *[]uint64) error {
	elems := massList(raw)
	if len(elems) == 0 {
		return errEmptyInput
	}
	var addrs []ifaceAddr
	for _, el := range elems {
		addr, err := massIfaceAddr(el)
		if err != nil {
			return err
		}
		for _, h := range hosts {
			if err := checkMainOnDelete(snap.HostByID(h), func(f *catalog.Interface) bool { return ifaceAddr{f.IP, f.DNS, f.Port} == addr }); err != nil {
				return err
			}
		}
		addrs = append(addrs, addr)
	}
	var ups []catalog.HostUpdate
	var ids []uint64
	for _, h := range hosts {
		if slices.ContainsFunc(ups, func(u catalog.HostUpdate) bool { return u.ID == h }) {
			continue
		}
		cur := snap.HostByID(h).Interfaces
		l := slices.DeleteFunc(slices.Clone(cur), func(f catalog.Interface) bool {
			if slices.Contains(addrs, ifaceAddr{f.IP, f.DNS, f.Port}) {
				ids = append(ids, f.ID)
				return true
			}
			return false
		})
		if len(l) != len(cur) {
			ups = append(ups, catalog.HostUpdate{ID: h, Interfaces: &l})
		}
	}
	if len(ups) > 0 {
		if err := e.UpdateHosts(ups); err != nil {
			return massIfaceError(err, snap)
		}
	}
	if gone != nil {
		slices.Sort(ids)
		*gone = slices.Compact(ids)
	}
	return nil
}

// newIfaceIDs finds, after an edit, the IDs of the interfaces it added
// to host h: those the snapshot before did not have, matched by type
// and address, each once.
func newIfaceIDs(before, after *catalog.Snapshot, h uint64, news []catalog.Interface, taken map[uint64]bool) []uint64 {
	out := make([]uint64, len(news))
	for i, f := range news {
		want := (&catalog.Interface{Type: f.Type, UseIP: f.UseIP, IP: f.IP, DNS: f.DNS, Port: f.Port}).Addr()
		for _, g := range after.HostByID(h).Interfaces {
			if before.Interface(g.ID) == nil && !taken[g.ID] && g.Type == f.Type && g.Addr() == want {
				out[i], taken[g.ID] = g.ID, true
				break
			}
		}
	}
	return out
}

func (w *configWriter) hostinterfaceMassAdd(ctx context.Context, c *call) (any, error) {
	p := readMassParams(c.params)
	hostsRaw, ok1 := p.given("hosts")
	ifRaw, ok2 := p.given("interfaces")
	hostElems, ifElems := massList(hostsRaw), massList(ifRaw)
	if !ok1 || !ok2 || len(hostElems) == 0 || len(ifElems) == 0 {
		return object{"interfaceids": object{"interfaceids": true}}, nil // 6.0's answer for nothing to do
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	var hosts []uint64
	var news []catalog.Interface
	var before *catalog.Snapshot
	err = w.edit(ctx, c, "interfaceid", nil, func(e *catalog.Edit) error {
		before = w.cat.Snapshot()
		for _, el := range hostElems {
			refs := massRefs(el, "hostid")
			if len(refs) == 0 {
				return errIncorrectArgs
			}
			id, ok := refID(refs[0])
			h := before.HostByID(id)
			if !ok || h == nil || !a.canWrite(h) {
				return errNoPermissionsParams
			}
			if !slices.Contains(hosts, id) {
				hosts = append(hosts, id)
			}
		}
		for _, el := range ifElems {
			f, err := massIface(el, false)
			if err != nil {
				return err
			}
			news = append(news, f)
		}
		ups := make([]catalog.HostUpdate, 0, len(hosts))
		for _, h := range hosts {
			l := append(slices.Clone(before.HostByID(h).Interfaces), news...)
			ups = append(ups, catalog.HostUpdate{ID: h, Interfaces: &l})
		}
		return massIfaceError(e.UpdateHosts(ups), before)
	})
	if err != nil {
		return nil, err
	}
	// 6.0 creates each interface on each host in turn and lists the IDs
	// in that order.
	after, taken := w.cat.Snapshot(), map[uint64]bool{}
	perHost := make([][]uint64, len(hosts))
	for j, h := range hosts {
		perHost[j] = newIfaceIDs(before, after, h, news, taken)
	}
	ids := make([]uint64, 0, len(news)*len(hosts))
	for i := range news {
		for j := range hosts {
			ids = append(ids, perHost[j][i])
		}
	}
	return object{"interfaceids": idResult("interfaceids", ids)}, nil
}

func (w *configWriter) hostinterfaceMassRemove(ctx context.Context, c *call) (any, error) {
	p := readMassParams(c.params)
	hostsRaw, ok1 := p["hostids"]
	ifRaw, ok2 := p["interfaces"]
	if !ok1 || !ok2 {
		return nil, errParams("Incorrect input parameters.")
	}
	refs := massList(hostsRaw)
	if len(refs) == 0 || len(massList(ifRaw)) == 0 {
		return nil, errEmptyInput
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	var gone []uint64
	err = w.edit(ctx, c, "interfaceid", nil, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		hosts, err := massHosts(snap, a, refs, errNoPermissions)
		if err != nil {
			return err
		}
		return removeIfaces(e, snap, hosts, ifRaw, &gone)
	})
	if err != nil {
		return nil, err
	}
	nums := make([]json.Number, len(gone))
	for i, v := range gone {
		nums[i] = json.Number(strconv.FormatUint(v, 10))
	}
	b, _ := json.Marshal(nums)
	return object{"interfaceids": rawJSON(b)}, nil
}

// replaceIfaces makes the interfaces of host h those of elems: an
// element with the ID of one of the host's interfaces updates it (the
// members given over its current ones), one without an ID is created,
// and the host's other interfaces are deleted. It returns the new list
// (IDs of created ones 0) for the catalog's host update.
func replaceIfaces(h *catalog.Host, elems [][]byte) ([]catalog.Interface, error) {
	cur := h.Interfaces
	out := make([]catalog.Interface, 0, len(elems))
	for _, el := range elems {
		ms, ok := objectMembers(el)
		if !ok {
			return nil, errIncorrectArgs
		}
		var id uint64
		for _, m := range ms {
			if m.name == "interfaceid" {
				id, _ = refID(bytes.TrimSpace(m.raw))
			}
		}
		raw := el
		if id != 0 {
			i := slices.IndexFunc(cur, func(f catalog.Interface) bool { return f.ID == id })
			if i < 0 {
				// 6.0 answers with the ID and changes nothing for it;
				// Peregrine refuses an interface of no or another host.
				return nil, errNoPermissions
			}
			raw = mergeIface(&cur[i], ms)
		}
		f, err := massIface(raw, true)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	// The interfaces not kept go first, checked against the host as it
	// was (6.0 deletes them before it updates the others).
	err := checkMainOnDelete(h, func(f *catalog.Interface) bool {
		return !slices.ContainsFunc(out, func(g catalog.Interface) bool { return g.ID == f.ID })
	})
	return out, err
}

// mergeIface is interface f as an object, with the members ms over its
// fields.
func mergeIface(f *catalog.Interface, ms []member) []byte {
	o := map[string]any{"interfaceid": id(f.ID), "type": int(f.Type), "main": boolNum64(f.Main), "useip": boolNum64(f.UseIP),
		"ip": f.IP, "dns": f.DNS, "port": f.Port}
	if f.Details != nil {
		o["details"] = f.Details
	}
	for _, m := range ms {
		o[m.name] = json.RawMessage(m.raw)
	}
	b, _ := json.Marshal(o)
	return b
}

func (w *configWriter) hostinterfaceReplace(ctx context.Context, c *call) (any, error) {
	p := readMassParams(c.params)
	ifRaw, ok := p.given("interfaces")
	if !ok {
		return object{"interfaceids": []string{}}, nil
	}
	hostRaw, hasHost := p.given("hostid")
	if !hasHost {
		// 6.0 replaces the interfaces of every host; Peregrine refuses.
		return nil, errParams(`Invalid parameter "/": the parameter "hostid" is missing.`)
	}
	elems := massList(ifRaw)
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	var hostID uint64
	var list []catalog.Interface
	var before *catalog.Snapshot
	err = w.edit(ctx, c, "interfaceid", nil, func(e *catalog.Edit) error {
		before = w.cat.Snapshot()
		id, _ := refID(hostRaw)
		h := before.HostByID(id)
		if h == nil || !a.canWrite(h) {
			if len(elems) == 0 {
				return errNoChange
			}
			for _, el := range elems {
				if _, err := massIface(el, true); err != nil {
					return err
				}
			}
			return errNoPermissionsParams
		}
		hostID = id
		var err error
		if list, err = replaceIfaces(h, elems); err != nil {
			return err
		}
		return massIfaceError(e.UpdateHosts([]catalog.HostUpdate{{ID: id, Interfaces: &list}}), before)
	})
	if err == errNoChange {
		return object{"interfaceids": []string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var created []catalog.Interface
	for _, f := range list {
		if f.ID == 0 {
			created = append(created, f)
		}
	}
	newIDs := newIfaceIDs(before, w.cat.Snapshot(), hostID, created, map[uint64]bool{})
	ids := make([]uint64, 0, len(list))
	for _, f := range list {
		if f.ID == 0 {
			f.ID, newIDs = newIDs[0], newIDs[1:]
		}
		ids = append(ids, f.ID)
	}
	return idResult("interfaceids", ids), nil
}

// errNoChange ends an edit that has nothing to do with an answer that
// is no error.
var errNoChange = errApp("nothing to change")

// ifaceTypeName names an interface type as 6.0's messages do.
func ifaceTypeName(t catalog.InterfaceType) string {
	if t == catalog.InterfaceAgent {
		return "agent"
	}
	return strings.ToUpper(t.String())
}

// checkMainOnDelete refuses, as 6.0 does before it deletes interfaces,
// to delete the main interface of a type while the host keeps other
// interfaces of that type (whatever the call does to them).
func checkMainOnDelete(h *catalog.Host, gone func(f *catalog.Interface) bool) error {
	for i := range h.Interfaces {
		f := &h.Interfaces[i]
		if !f.Main || !gone(f) {
			continue
		}
		for j := range h.Interfaces {
			g := &h.Interfaces[j]
			if g.Type == f.Type && !gone(g) {
				return errParams(`No default interface for "%s" type on "%s".`, ifaceTypeName(f.Type), h.Name)
			}
		}
	}
	return nil
}

// massIfaceError words the catalog's refusals of an interface list as
// 6.0 does: the host by its visible name.
func massIfaceError(err error, snap *catalog.Snapshot) error {
	var ce *catalog.ConflictError
	if !errors.As(err, &ce) {
		return err
	}
	name := ce.Host
	if h := snap.Host(ce.Host); h != nil {
		name = h.Name
	}
	switch ce.Kind {
	case catalog.NoDefaultInterface:
		for t := catalog.InterfaceAgent; t <= catalog.InterfaceJMX; t++ {
			if strings.EqualFold(t.String(), ce.Name) || strings.EqualFold(ifaceTypeName(t), ce.Name) {
				return errParams(`No default interface for "%s" type on "%s".`, ifaceTypeName(t), name)
			}
		}
	case catalog.TwoDefaultInterfaces:
		return errParams("Host cannot have more than one default interface of the same type.")
	}
	return err
}
