package api

import (
	"context"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// hostParams are the members of a Zabbix 6.0 host object that host.create
// and host.update take. Those Peregrine does not model are accepted and
// ignored (inventory, IPMI settings, tls_psk_identity and tls_psk; a
// host asking for PSK through tls_connect or tls_accept is refused, see
// package zbx/zbxtls). Templates link templates, whose items and
// triggers the catalog copies to the host; templates_clear unlinks and
// deletes the copies; macros replace the host's user macros.
type hostParams struct {
	HostID     opt[uint64]     `json:"hostid"`
	Host       opt[string]     `json:"host"`
	Name       opt[string]     `json:"name"`
	Status     opt[hostStatus] `json:"status"`
	Groups     opt[hostGroups] `json:"groups"`
	Templates  opt[refs]       `json:"templates" key:"templateid"`
	Macros     opt[macroList]  `json:"macros"`
	TemplClear opt[refs]       `json:"templates_clear" key:"templateid" errname:"templates"`
	Tags       opt[hostTags]   `json:"tags"`
	Interfaces opt[hostIfaces] `json:"interfaces"`

	Description   opt[string]  `json:"description"`
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

// hostStatus is a host's "status" as 6.0 reads it: 0 or 1, a number or
// a string of one. Anything else (null included) is kept, not refused
// here: the host's checks refuse it in 6.0's place and words (recorded
// from 6.0.14: -32500 `Incorrect status for host "h".`, after the host
// groups are found).
type hostStatus struct {
	disabled, bad bool
}

func (s *hostStatus) decodeParam(b []byte, _ *fieldCtx) error {
	switch unquote(b) {
	case "0":
		*s = hostStatus{}
	case "1":
		*s = hostStatus{disabled: true}
	default:
		*s = hostStatus{bad: true}
	}
	return nil
}

// maxHostName is the length of a technical host name (hosts.host).
const maxHostName = 128

// hostNameProblem is 6.0's error for a technical host name it refuses
// (recorded from 6.0.14: the characters, the empty name included, as
// invalid parameters; the length as an application error), or nil.
func hostNameProblem(name string) error {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '_' || c == '-' || c == ' ') {
			return errParams(`Incorrect characters used for host name "%s".`, name)
		}
	}
	if name == "" {
		return errParams(`Incorrect characters used for host name "%s".`, name)
	}
	if len(name) > maxHostName {
		return errApp(`Value "%s" is too long for field "host" - %d characters. Allowed length is %d characters.`, name, len(name), maxHostName)
	}
	return nil
}

// groupsExist refuses, as 6.0 does, host groups that do not exist (the
// caller's rights on those that do are checked in the edit).
func groupsExist(snap *catalog.Snapshot, ps []hostParams) error {
	for i := range ps {
		for _, g := range ps[i].Groups.Value.ids {
			if snap.GroupByID(g) == nil {
				return errNoPermissions
			}
		}
	}
	return nil
}

// common validates the members host.create and host.update share, once
// the host and its groups are known; host is its technical name.
func (p *hostParams) common(i int, host string) error {
	if p.Status.Set && p.Status.Value.bad {
		return errApp(`Incorrect status for host "%s".`, host)
	}
	if p.Host.Set {
		if err := hostNameProblem(p.Host.Value); err != nil {
			return err
		}
	}
	switch {
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
	g := p.Groups.Value.ids
	for j := range g {
		if slices.Contains(g[:j], g[j]) {
			return errParams(`Invalid parameter "/%d/groups/%d": value (groupid)=(%d) already exists.`, i+1, j+1, g[j])
		}
	}
	return nil
}

// hostCreate serves host.create with 6.0's checks in 6.0's order
// (recorded from 6.0.14): the host's name and groups, the groups found,
// then the status and the rest; the interfaces and the name's
// uniqueness in the edit.
func (w *configWriter) hostCreate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return nil, errParams("Empty input parameter.")
	}
	var ps []hostParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		// A hostid is ignored, as 6.0 ignores it (recorded from 6.0.14:
		// a host.get object given back creates a new host).
		if !p.Host.Set {
			return nil, errParams(`Wrong fields for host "".`)
		}
		if err := hostNameProblem(p.Host.Value); err != nil && err.(*Error).Code == codeParams {
			return nil, err
		}
		if !p.Groups.Set {
			return nil, errParams(`Host "%s" cannot be without host group.`, p.Host.Value)
		}
		if err := p.Groups.Value.groupProblem(p.Host.Value); err != nil {
			return nil, err
		}
	}
	if err := groupsExist(w.cat.Snapshot(), ps); err != nil {
		return nil, err
	}
	hosts := make([]catalog.NewHost, len(ps))
	for i := range ps {
		p := &ps[i]
		if err := p.common(i, p.Host.Value); err != nil {
			return nil, err
		}
		hosts[i] = catalog.NewHost{Host: p.Host.Value, Name: p.Name.Value, Disabled: p.Status.Value.disabled, GroupIDs: p.Groups.Value.ids, Tags: p.Tags.Value, Interfaces: p.Interfaces.Value, TLS: p.tls(catalog.DefaultHostTLS), Description: p.Description.Value}
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

// hostUpdate serves host.update with 6.0's checks in 6.0's order
// (recorded from 6.0.14): the hosts found and writable (a
// -32602 refusal, where host.delete's is -32500), their new names and
// groups, the groups found, then the status and the rest.
func (w *configWriter) hostUpdate(ctx context.Context, c *call) (any, error) {
	if emptyParams(c.params) {
		return nil, errParams("Empty input parameter.")
	}
	var ps []hostParams
	if err := decodeLegacyObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		if !ps[i].HostID.Set {
			return nil, errParams(`Wrong fields for host "%s".`, ps[i].Host.Value)
		}
	}
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	names := make([]string, len(ps))
	for i := range ps {
		h := snap.HostByID(ps[i].HostID.Value)
		if h == nil || !a.all() && !a.canWrite(h) {
			return nil, errNoPermissionsParams
		}
		names[i] = h.Host
	}
	for i := range ps {
		p := &ps[i]
		if p.Host.Set {
			if err := hostNameProblem(p.Host.Value); err != nil && err.(*Error).Code == codeParams {
				return nil, err
			}
			names[i] = p.Host.Value
		}
		if p.Groups.Set {
			if err := p.Groups.Value.groupProblem(names[i]); err != nil {
				return nil, err
			}
		}
	}
	if err := groupsExist(snap, ps); err != nil {
		return nil, err
	}
	ups := make([]catalog.HostUpdate, len(ps))
	ids := make([]uint64, len(ps))
	var groups []uint64 // the new groups: the caller must be able to write them too
	for i := range ps {
		p := &ps[i]
		if err := p.common(i, names[i]); err != nil {
			return nil, err
		}
		u := catalog.HostUpdate{ID: p.HostID.Value}
		if p.Host.Set {
			u.Host = &p.Host.Value
		}
		if p.Name.Set {
			u.Name = &p.Name.Value
		}
		if p.Status.Set {
			u.Enabled = new(!p.Status.Value.disabled)
		}
		if p.Description.Set {
			u.Description = &p.Description.Value
		}
		if p.Groups.Set {
			u.GroupIDs = p.Groups.Value.ids
			groups = append(groups, p.Groups.Value.ids...)
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
	err = w.edit(ctx, c, "hostid", allOf(hostsWritable(ids), groupsWritable(groups)), func(e *catalog.Edit) error {
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
		if _, err := e.SetTemplates(hostID, links, p.TemplClear.Value, field+".templates"); err != nil {
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
