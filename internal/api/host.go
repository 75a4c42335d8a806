package api

import (
	"context"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// hostObject is a host in the Zabbix 6.0 shape. tls_psk_identity and
// tls_psk are write-only in Zabbix 6.0 and are never returned (Peregrine
// does not store them at all).
func hostObject(h *catalog.Host) object {
	return object{"hostid": id(h.ID), "host": h.Host, "name": h.Name, "status": status(h.Enabled), "available": "0", "flags": "0",
		"tls_connect": strconv.Itoa(int(h.TLS.Connect)), "tls_accept": strconv.Itoa(int(h.TLS.Accept)),
		"tls_issuer": h.TLS.Issuer, "tls_subject": h.TLS.Subject}
}

// hostGetParams are host.get's parameters.
type hostGetParams struct {
	getParams
	GroupIDs         opt[ids]  `json:"groupids"`
	HostIDs          opt[ids]  `json:"hostids"`
	ItemIDs          opt[ids]  `json:"itemids"`
	MonitoredHosts   opt[bool] `json:"monitored_hosts"`
	WithItems        opt[bool] `json:"with_items"`
	WithMonItems     opt[bool] `json:"with_monitored_items"`
	SelectGroups     opt[any]  `json:"selectGroups"`
	SelectHostGroups opt[any]  `json:"selectHostGroups"`
	SelectInterfaces opt[any]  `json:"selectInterfaces"`
	SelectTags       opt[any]  `json:"selectTags"`
	SelectItems      opt[any]  `json:"selectItems"`
	SelectMacros     opt[any]  `json:"selectMacros"`
	SelectParents    opt[any]  `json:"selectParentTemplates"`
	TemplateIDs      opt[ids]  `json:"templateids"`
}

func (s *Server) hostGet(ctx context.Context, c *call) (any, error) {
	var p hostGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var itemHosts map[uint64]bool
	if len(p.ItemIDs.Value) > 0 {
		itemHosts = map[uint64]bool{}
		for _, iid := range p.ItemIDs.Value {
			if it := snap.Item(iid); it != nil {
				itemHosts[it.HostID] = true
			}
		}
	}
	var objs []object
	for _, h := range snap.Hosts() {
		if itemHosts != nil && !itemHosts[h.ID] || !a.sees(h, p.Editable.Value) {
			continue
		}
		if p.WithItems.Value && len(h.Items()) == 0 || p.WithMonItems.Value && !anyMonitoredItem([]*catalog.Host{h}) {
			continue
		}
		if len(p.HostIDs.Value) > 0 && !containsID(p.HostIDs.Value, h.ID) {
			continue
		}
		if len(p.GroupIDs.Value) > 0 && !anyGroup(h.GroupIDs, p.GroupIDs.Value) {
			continue
		}
		if p.MonitoredHosts.Value && !h.Enabled {
			continue
		}
		if len(p.TemplateIDs.Value) > 0 && !anyGroup(snap.LinkedTemplates(h.ID), p.TemplateIDs.Value) {
			continue
		}
		o := hostObject(h)
		var groups []object
		for _, gid := range h.GroupIDs {
			// Only the groups the caller may read, as Zabbix's
			// selectGroups reads them through hostgroup.get.
			if g := snap.GroupByID(gid); g != nil && a.seesGroup(gid, false) {
				groups = append(groups, groupObject(g))
			}
		}
		groups = p.limitSelect(groups)
		if p.SelectGroups.Given() {
			o["groups"] = nonNil(groups)
		}
		if p.SelectHostGroups.Given() {
			o["hostgroups"] = nonNil(groups)
		}
		if p.SelectInterfaces.Given() {
			o["interfaces"] = s.selectInterfaces(p.SelectInterfaces.Value, h.Interfaces, &p.getParams)
		}
		if p.SelectTags.Given() {
			tags := make([]object, 0, len(h.Tags))
			for _, t := range h.Tags {
				tags = append(tags, object{"tag": t.Tag, "value": t.Value})
			}
			o["tags"] = tags
		}
		if p.SelectMacros.Given() {
			o["macros"] = macroObjects(snap.Macros(h.ID), &p.getParams)
		}
		if p.SelectParents.Given() {
			o["parentTemplates"] = templateRefs(snap, snap.LinkedTemplates(h.ID), &p.getParams)
		}
		if p.SelectItems.Given() {
			var items []object
			for _, it := range h.Items() {
				items = append(items, object{"itemid": id(it.ID), "key_": it.Key, "name": it.Name})
			}
			o["items"] = nonNil(p.limitSelect(items))
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "hostid", "hostid", "host", "name", "status")
}

func anyGroup(have []uint64, want ids) bool {
	for _, g := range have {
		if containsID(want, g) {
			return true
		}
	}
	return false
}

// hostParams are the members of a Zabbix 6.0 host object that host.create
// and host.update take. Those Peregrine does not model are accepted and
// ignored (inventory, IPMI settings, tls_psk_identity and tls_psk; a
// host asking for PSK through tls_connect or tls_accept is refused, see
// package zbx/zbxtls). Templates link templates for their macros
// (Peregrine's templates hold no items; see package catalog); macros
// replace the host's user macros.
type hostParams struct {
	HostID     opt[uint64]     `json:"hostid"`
	Host       opt[string]     `json:"host"`
	Name       opt[string]     `json:"name"`
	Status     opt[int64]      `json:"status"`
	Groups     opt[groupRefs]  `json:"groups"`
	Templates  opt[refs]       `json:"templates" key:"templateid"`
	Macros     opt[macroList]  `json:"macros"`
	TemplClear opt[refs]       `json:"templates_clear" key:"templateid" errname:"templates"`
	Tags       opt[hostTags]   `json:"tags"`
	Interfaces opt[hostIfaces] `json:"interfaces"`

	Description   opt[ignored] `json:"description"`
	Inventory     opt[ignored] `json:"inventory"`
	InventoryMode opt[ignored] `json:"inventory_mode"`
	ProxyHostID   opt[ignored] `json:"proxy_hostid"`
	IPMIAuthType  opt[ignored] `json:"ipmi_authtype"`
	IPMIPrivilege opt[ignored] `json:"ipmi_privilege"`
	IPMIUsername  opt[ignored] `json:"ipmi_username"`
	IPMIPassword  opt[ignored] `json:"ipmi_password"`
	TLSConnect    opt[int64]   `json:"tls_connect"`
	TLSAccept     opt[int64]   `json:"tls_accept"`
	TLSIssuer     opt[string]  `json:"tls_issuer"`
	TLSSubject    opt[string]  `json:"tls_subject"`

	TLSPSKIdentity opt[ignored] `json:"tls_psk_identity"`
	TLSPSK         opt[ignored] `json:"tls_psk"`
	UUID           opt[ignored] `json:"uuid"`
	Flags          opt[ignored] `json:"flags"`
	Available      opt[ignored] `json:"available"`
}

// noPSK refuses a host that asks for a pre-shared key: rather than
// store it and fail every connection, say so when it is configured.
const noPSK = "pre-shared keys (PSK, 2) are not supported by Peregrine: Go's crypto/tls has no PSK cipher suites and no maintained Go implementation of them exists; use 1 (unencrypted) or 4 (certificate)."

// maxTLSName is the length of Zabbix's tls_issuer and tls_subject.
const maxTLSName = 1024

// tls applies the tls_* members to cur, the host's settings so far.
func (p *hostParams) tls(cur catalog.HostTLS) catalog.HostTLS {
	if p.TLSConnect.Given() {
		cur.Connect = uint8(p.TLSConnect.Value)
	}
	if p.TLSAccept.Given() {
		cur.Accept = uint8(p.TLSAccept.Value)
	}
	if p.TLSIssuer.Set {
		cur.Issuer = p.TLSIssuer.Value
	}
	if p.TLSSubject.Set {
		cur.Subject = p.TLSSubject.Value
	}
	return cur
}

// tlsPatch is the tls_* members given, for host.update.
func (p *hostParams) tlsPatch() *catalog.HostTLSPatch {
	var t catalog.HostTLSPatch
	if p.TLSConnect.Given() {
		t.Connect = new(uint8(p.TLSConnect.Value))
	}
	if p.TLSAccept.Given() {
		t.Accept = new(uint8(p.TLSAccept.Value))
	}
	if p.TLSIssuer.Set {
		t.Issuer = &p.TLSIssuer.Value
	}
	if p.TLSSubject.Set {
		t.Subject = &p.TLSSubject.Value
	}
	return &t
}

func (p *hostParams) tlsSet() bool {
	return p.TLSConnect.Given() || p.TLSAccept.Given() || p.TLSIssuer.Set || p.TLSSubject.Set
}

// common validates the members host.create and host.update share.
func (p *hostParams) common(i int) error {
	switch {
	case p.Status.Given() && p.Status.Value != 0 && p.Status.Value != 1:
		return oneOf(i, "status", "0, 1")
	case p.Groups.Set && len(p.Groups.Value) == 0:
		return empty(i, "groups")
	case p.TLSConnect.Given() && p.TLSConnect.Value != 1 && p.TLSConnect.Value != 2 && p.TLSConnect.Value != 4:
		return oneOf(i, "tls_connect", "1, 2, 4")
	case p.TLSAccept.Given() && (p.TLSAccept.Value < 1 || p.TLSAccept.Value > 7):
		return oneOf(i, "tls_accept", "1-7")
	case p.TLSConnect.Given() && p.TLSConnect.Value == 2:
		return errParams(`Invalid parameter "/%d/tls_connect": %s`, i+1, noPSK)
	case p.TLSAccept.Given() && p.TLSAccept.Value&2 != 0:
		return errParams(`Invalid parameter "/%d/tls_accept": %s`, i+1, noPSK)
	case len(p.TLSIssuer.Value) > maxTLSName:
		return errParams(`Invalid parameter "/%d/tls_issuer": value is too long.`, i+1)
	case len(p.TLSSubject.Value) > maxTLSName:
		return errParams(`Invalid parameter "/%d/tls_subject": value is too long.`, i+1)
	}
	for j, g := range p.Groups.Value {
		if slices.Contains(p.Groups.Value[:j], g) {
			return errParams(`Invalid parameter "/%d/groups/%d": value (groupid)=(%d) already exists.`, i+1, j+1, g)
		}
	}
	return nil
}

func (w *configWriter) hostCreate(ctx context.Context, c *call) (any, error) {
	var ps []hostParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	hosts := make([]catalog.NewHost, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.HostID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "hostid".`, i+1)
		case !p.Host.Set:
			return nil, missing(i, "host")
		case p.Host.Value == "":
			return nil, empty(i, "host")
		case !p.Groups.Set:
			return nil, missing(i, "groups")
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		hosts[i] = catalog.NewHost{Host: p.Host.Value, Name: p.Name.Value, Disabled: p.Status.Value == 1, GroupIDs: p.Groups.Value, Tags: p.Tags.Value, Interfaces: p.Interfaces.Value, TLS: p.tls(catalog.DefaultHostTLS)}
	}
	var ids []uint64
	var groups []uint64
	for _, h := range hosts {
		groups = append(groups, h.GroupIDs...)
	}
	macros := make([][]catalog.MacroFields, len(ps))
	for i := range ps {
		if ps[i].TemplClear.Set {
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "templates_clear".`, i+1)
		}
		var err error
		if macros[i], err = ps[i].Macros.Value.fields(i); err != nil {
			return nil, err
		}
	}
	err := w.edit(ctx, c, "hostid", groupsWritable(groups), func(e *catalog.Edit) (err error) {
		if ids, err = e.CreateHosts(hosts); err != nil {
			return err
		}
		for i := range ps {
			if err := ps[i].setMacrosAndTemplates(e, i, ids[i], macros[i], nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("hostids", ids), nil
}

func (w *configWriter) hostUpdate(ctx context.Context, c *call) (any, error) {
	var ps []hostParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ups := make([]catalog.HostUpdate, len(ps))
	ids := make([]uint64, len(ps))
	var groups []uint64 // the new groups: the caller must be able to write them too
	for i := range ps {
		p := &ps[i]
		if !p.HostID.Set {
			return nil, missing(i, "hostid")
		}
		if p.Host.Set && p.Host.Value == "" {
			return nil, empty(i, "host")
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		u := catalog.HostUpdate{ID: p.HostID.Value}
		if p.Host.Set {
			u.Host = &p.Host.Value
		}
		if p.Name.Set {
			u.Name = &p.Name.Value
		}
		if p.Status.Given() {
			u.Enabled = new(p.Status.Value == 0)
		}
		if p.Groups.Set {
			u.GroupIDs = p.Groups.Value
			groups = append(groups, p.Groups.Value...)
		}
		if p.Tags.Set {
			u.Tags = (*[]catalog.Tag)(&p.Tags.Value)
		}
		if p.Interfaces.Set {
			u.Interfaces = (*[]catalog.Interface)(&p.Interfaces.Value)
		}
		if p.tlsSet() {
			// Members not given keep their value (applied in the edit).
			u.TLS = p.tlsPatch()
		}
		ups[i], ids[i] = u, p.HostID.Value
	}
	macros := make([][]catalog.MacroFields, len(ps))
	for i := range ps {
		var err error
		if macros[i], err = ps[i].Macros.Value.fields(i); err != nil {
			return nil, err
		}
	}
	snap := w.cat.Snapshot()
	err := w.edit(ctx, c, "hostid", allOf(hostsWritable(ids), groupsWritable(groups)), func(e *catalog.Edit) error {
		if err := e.UpdateHosts(ups); err != nil {
			return err
		}
		for i := range ps {
			if err := ps[i].setMacrosAndTemplates(e, i, ids[i], macros[i], snap.LinkedTemplates(ids[i])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("hostids", ids), nil
}

// setMacrosAndTemplates applies "macros" (replacing the host's),
// "templates" (replacing its links) and "templates_clear" (unlinking
// from cur, its links before the call).
func (p *hostParams) setMacrosAndTemplates(e *catalog.Edit, i int, hostID uint64, macros []catalog.MacroFields, cur []uint64) error {
	field := "hosts[" + strconv.Itoa(i) + "]"
	if p.Macros.Set {
		if _, err := e.SetMacros(hostID, macros, field+".macros"); err != nil {
			return err
		}
	}
	links, set := cur, false
	if p.Templates.Set {
		links, set = p.Templates.Value, true
	}
	if p.TemplClear.Set {
		var kept []uint64
		for _, t := range links {
			if !slices.Contains(p.TemplClear.Value, t) {
				kept = append(kept, t)
			}
		}
		links, set = kept, true
	}
	if set {
		if _, err := e.LinkTemplates(hostID, links, field+".templates"); err != nil {
			return err
		}
	}
	return nil
}

func (w *configWriter) hostDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := w.edit(ctx, c, "hostid", hostsWritable(ids), func(e *catalog.Edit) error { return e.DeleteHosts(ids) }); err != nil {
		return nil, err
	}
	return idResult("hostids", ids), nil
}
