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

func (s *Server) hostGet(ctx context.Context, c *call) (any, error) {
	var p struct {
		getParams
		GroupIDs         ids  `json:"groupids"`
		HostIDs          ids  `json:"hostids"`
		ItemIDs          ids  `json:"itemids"`
		MonitoredHosts   bool `json:"monitored_hosts"`
		WithItems        bool `json:"with_items"`
		WithMonItems     bool `json:"with_monitored_items"`
		SelectGroups     any  `json:"selectGroups"`
		SelectHostGroups any  `json:"selectHostGroups"`
		SelectInterfaces any  `json:"selectInterfaces"`
		SelectTags       any  `json:"selectTags"`
		SelectItems      any  `json:"selectItems"`
		SelectMacros     any  `json:"selectMacros"`
		SelectParents    any  `json:"selectParentTemplates"`
		TemplateIDs      ids  `json:"templateids"`
	}
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var itemHosts map[uint64]bool
	if len(p.ItemIDs) > 0 {
		itemHosts = map[uint64]bool{}
		for _, iid := range p.ItemIDs {
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
		if p.WithItems && len(h.Items()) == 0 || p.WithMonItems && !anyMonitoredItem([]*catalog.Host{h}) {
			continue
		}
		if len(p.HostIDs) > 0 && !containsID(p.HostIDs, h.ID) {
			continue
		}
		if len(p.GroupIDs) > 0 && !anyGroup(h.GroupIDs, p.GroupIDs) {
			continue
		}
		if p.MonitoredHosts && !h.Enabled {
			continue
		}
		if len(p.TemplateIDs) > 0 && !anyGroup(snap.LinkedTemplates(h.ID), p.TemplateIDs) {
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
		if p.SelectGroups != nil {
			o["groups"] = nonNil(groups)
		}
		if p.SelectHostGroups != nil {
			o["hostgroups"] = nonNil(groups)
		}
		if p.SelectInterfaces != nil {
			o["interfaces"] = s.selectInterfaces(p.SelectInterfaces, h.Interfaces, &p.getParams)
		}
		if p.SelectTags != nil {
			tags := make([]object, 0, len(h.Tags))
			for _, t := range h.Tags {
				tags = append(tags, object{"tag": t.Tag, "value": t.Value})
			}
			o["tags"] = tags
		}
		if p.SelectMacros != nil {
			o["macros"] = macroObjects(snap.Macros(h.ID), &p.getParams)
		}
		if p.SelectParents != nil {
			o["parentTemplates"] = templateRefs(snap, snap.LinkedTemplates(h.ID), &p.getParams)
		}
		if p.SelectItems != nil {
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
	HostID     flexID       `json:"hostid"`
	Host       jstring      `json:"host"`
	Name       jstring      `json:"name"`
	Status     flexInt      `json:"status"`
	Groups     groupList    `json:"groups"`
	Templates  templateList `json:"templates"`
	Macros     macroList    `json:"macros"`
	TemplClear templateList `json:"templates_clear"`
	Tags       tagList      `json:"tags"`
	Interfaces ifaceList    `json:"interfaces"`

	Description   notStored `json:"description"`
	Inventory     notStored `json:"inventory"`
	InventoryMode notStored `json:"inventory_mode"`
	ProxyHostID   notStored `json:"proxy_hostid"`
	IPMIAuthType  notStored `json:"ipmi_authtype"`
	IPMIPrivilege notStored `json:"ipmi_privilege"`
	IPMIUsername  notStored `json:"ipmi_username"`
	IPMIPassword  notStored `json:"ipmi_password"`
	TLSConnect    flexInt   `json:"tls_connect"`
	TLSAccept     flexInt   `json:"tls_accept"`
	TLSIssuer     jstring   `json:"tls_issuer"`
	TLSSubject    jstring   `json:"tls_subject"`

	TLSPSKIdentity notStored `json:"tls_psk_identity"`
	TLSPSK         notStored `json:"tls_psk"`
	UUID           notStored `json:"uuid"`
	Flags          notStored `json:"flags"`
	Available      notStored `json:"available"`
}

// noPSK refuses a host that asks for a pre-shared key: rather than
// store it and fail every connection, say so when it is configured.
const noPSK = "pre-shared keys (PSK, 2) are not supported by Peregrine: Go's crypto/tls has no PSK cipher suites and no maintained Go implementation of them exists; use 1 (unencrypted) or 4 (certificate)."

// maxTLSName is the length of Zabbix's tls_issuer and tls_subject.
const maxTLSName = 1024

// tls applies the tls_* members to cur, the host's settings so far.
func (p *hostParams) tls(cur catalog.HostTLS) catalog.HostTLS {
	if p.TLSConnect.set {
		cur.Connect = uint8(p.TLSConnect.v)
	}
	if p.TLSAccept.set {
		cur.Accept = uint8(p.TLSAccept.v)
	}
	if p.TLSIssuer.set {
		cur.Issuer = p.TLSIssuer.v
	}
	if p.TLSSubject.set {
		cur.Subject = p.TLSSubject.v
	}
	return cur
}

// tlsPatch is the tls_* members given, for host.update.
func (p *hostParams) tlsPatch() *catalog.HostTLSPatch {
	var t catalog.HostTLSPatch
	if p.TLSConnect.set {
		t.Connect = new(uint8(p.TLSConnect.v))
	}
	if p.TLSAccept.set {
		t.Accept = new(uint8(p.TLSAccept.v))
	}
	if p.TLSIssuer.set {
		t.Issuer = &p.TLSIssuer.v
	}
	if p.TLSSubject.set {
		t.Subject = &p.TLSSubject.v
	}
	return &t
}

func (p *hostParams) tlsSet() bool {
	return p.TLSConnect.set || p.TLSAccept.set || p.TLSIssuer.set || p.TLSSubject.set
}

// common validates the members host.create and host.update share.
func (p *hostParams) common(i int) error {
	switch {
	case p.Status.set && p.Status.v != 0 && p.Status.v != 1:
		return oneOf(i, "status", "0, 1")
	case p.Groups.set && len(p.Groups.ids) == 0:
		return empty(i, "groups")
	case p.TLSConnect.set && p.TLSConnect.v != 1 && p.TLSConnect.v != 2 && p.TLSConnect.v != 4:
		return oneOf(i, "tls_connect", "1, 2, 4")
	case p.TLSAccept.set && (p.TLSAccept.v < 1 || p.TLSAccept.v > 7):
		return oneOf(i, "tls_accept", "1-7")
	case p.TLSConnect.set && p.TLSConnect.v == 2:
		return errParams(`Invalid parameter "/%d/tls_connect": %s`, i+1, noPSK)
	case p.TLSAccept.set && p.TLSAccept.v&2 != 0:
		return errParams(`Invalid parameter "/%d/tls_accept": %s`, i+1, noPSK)
	case len(p.TLSIssuer.v) > maxTLSName:
		return errParams(`Invalid parameter "/%d/tls_issuer": value is too long.`, i+1)
	case len(p.TLSSubject.v) > maxTLSName:
		return errParams(`Invalid parameter "/%d/tls_subject": value is too long.`, i+1)
	}
	for j, g := range p.Groups.ids {
		if slices.Contains(p.Groups.ids[:j], g) {
			return errParams(`Invalid parameter "/%d/groups/%d": value (groupid)=(%d) already exists.`, i+1, j+1, g)
		}
	}
	return nil
}

func (w *configWriter) hostCreate(ctx context.Context, c *call) (any, error) {
	var ps []hostParams
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	hosts := make([]catalog.NewHost, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.HostID.set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "hostid".`, i+1)
		case !p.Host.set:
			return nil, missing(i, "host")
		case p.Host.v == "":
			return nil, empty(i, "host")
		case !p.Groups.set:
			return nil, missing(i, "groups")
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		hosts[i] = catalog.NewHost{Host: p.Host.v, Name: p.Name.v, Disabled: p.Status.v == 1, GroupIDs: p.Groups.ids, Tags: p.Tags.tags, Interfaces: p.Interfaces.ifaces, TLS: p.tls(catalog.DefaultHostTLS)}
	}
	var ids []uint64
	var groups []uint64
	for _, h := range hosts {
		groups = append(groups, h.GroupIDs...)
	}
	macros := make([][]catalog.MacroFields, len(ps))
	for i := range ps {
		if ps[i].TemplClear.set {
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "templates_clear".`, i+1)
		}
		var err error
		if macros[i], err = ps[i].Macros.fields(i); err != nil {
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
	if err := legacyDecodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ups := make([]catalog.HostUpdate, len(ps))
	ids := make([]uint64, len(ps))
	var groups []uint64 // the new groups: the caller must be able to write them too
	for i := range ps {
		p := &ps[i]
		if !p.HostID.set {
			return nil, missing(i, "hostid")
		}
		if p.Host.set && p.Host.v == "" {
			return nil, empty(i, "host")
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		u := catalog.HostUpdate{ID: p.HostID.v}
		if p.Host.set {
			u.Host = &p.Host.v
		}
		if p.Name.set {
			u.Name = &p.Name.v
		}
		if p.Status.set {
			u.Enabled = new(p.Status.v == 0)
		}
		if p.Groups.set {
			u.GroupIDs = p.Groups.ids
			groups = append(groups, p.Groups.ids...)
		}
		if p.Tags.set {
			u.Tags = &p.Tags.tags
		}
		if p.Interfaces.set {
			u.Interfaces = &p.Interfaces.ifaces
		}
		if p.tlsSet() {
			// Members not given keep their value (applied in the edit).
			u.TLS = p.tlsPatch()
		}
		ups[i], ids[i] = u, p.HostID.v
	}
	macros := make([][]catalog.MacroFields, len(ps))
	for i := range ps {
		var err error
		if macros[i], err = ps[i].Macros.fields(i); err != nil {
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
	if p.Macros.set {
		if _, err := e.SetMacros(hostID, macros, field+".macros"); err != nil {
			return err
		}
	}
	links, set := cur, false
	if p.Templates.set {
		links, set = p.Templates.ids, true
	}
	if p.TemplClear.set {
		var kept []uint64
		for _, t := range links {
			if !slices.Contains(p.TemplClear.ids, t) {
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
