package api

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// hostParams are the members of a Zabbix 6.0 host object that host.create
// and host.update take. Those Peregrine does not model are accepted and
// ignored (uuid, flags); the inventory is kept (host_inventory.go).
// tls_psk_identity and tls_psk are checked as 6.0
// checks them (pskProblem) and stored, never returned; so are the IPMI
// settings (never returning ipmi_password). Templates link templates,
// whose items and triggers the catalog copies to the host;
// templates_clear unlinks and deletes the copies; macros replace the
// host's user macros.
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

	Description   opt[string]    `json:"description"`
	Inventory     opt[invFields] `json:"inventory"`
	InventoryMode opt[ipmiInt]   `json:"inventory_mode"`
	ProxyHostID   opt[phpStr]    `json:"proxy_hostid"`
	IPMIAuthType  opt[ipmiInt]   `json:"ipmi_authtype"`
	IPMIPrivilege opt[ipmiInt]   `json:"ipmi_privilege"`
	IPMIUsername  opt[phpStr]    `json:"ipmi_username"`
	IPMIPassword  opt[phpStr]    `json:"ipmi_password"`
	TLSConnect    opt[int64]     `json:"tls_connect"`
	TLSAccept     opt[int64]     `json:"tls_accept"`
	TLSIssuer     opt[string]    `json:"tls_issuer"`
	TLSSubject    opt[string]    `json:"tls_subject"`

	TLSPSKIdentity opt[pskText] `json:"tls_psk_identity"`
	TLSPSK         opt[pskText] `json:"tls_psk"`
	UUID           opt[ignored] `json:"uuid"`
	Flags          opt[ignored] `json:"flags"`
	Available      opt[ignored] `json:"available"`
}

// pskText is tls_psk_identity or tls_psk as 6.0 reads them: a string,
// or a number's digits (recorded from 6.0.14: "tls_psk_identity":5 is
// the identity "5"); anything else is bad.
type pskText struct {
	s   string
	bad bool
}

func (t *pskText) decodeParam(raw []byte, _ *fieldCtx) error {
	raw = bytes.TrimSpace(raw)
	switch jsonKindOf(raw) {
	case 's':
		t.s, _ = strValue(raw)
	case 'i', 'f':
		t.s = string(raw)
	default:
		t.bad = true
	}
	return nil
}

// pskValue is the value given, and whether it is one 6.0 reads as text
// (a null or an array is not).
func pskValue(o opt[pskText]) (string, bool) {
	return o.Value.s, o.Given() && !o.Value.bad
}

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
	if p.TLSPSKIdentity.Set {
		cur.PSKIdentity = p.TLSPSKIdentity.Value.s
	}
	if p.TLSPSK.Set {
		cur.PSK = zbxpsk.Secret(p.TLSPSK.Value.s)
	}
	if !cur.UsesPSK() {
		cur.PSKIdentity, cur.PSK = "", ""
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
	if p.TLSPSKIdentity.Set {
		t.PSKIdentity = &p.TLSPSKIdentity.Value.s
	}
	if p.TLSPSK.Set {
		t.PSK = new(zbxpsk.Secret(p.TLSPSK.Value.s))
	}
	return &t
}

func (p *hostParams) tlsSet() bool {
	return p.TLSConnect.Given() || p.TLSAccept.Given() || p.TLSIssuer.Set || p.TLSSubject.Set || p.TLSPSKIdentity.Set || p.TLSPSK.Set
}

// pskProblem checks tls_psk_identity and tls_psk against next, the
// host's settings once the call applies, as 6.0 does (recorded from
// 6.0.14), in its order: with PSK in tls_connect or tls_accept the
// identity, then the key, must not be empty, a key given must be an
// even number of hexadecimal digits, at least 32; then their lengths
// (128 characters, 512 digits) as application errors. Without PSK a
// non-empty identity or key given is refused ("should be empty"); the
// stored ones are dropped. Two differences: the identity is also held
// to 256 bytes, all OpenSSL carries (6.0 takes 128 characters of up to
// four bytes), and a build without OpenSSL refuses PSK altogether.
func pskProblem(i int, p *hostParams, next catalog.HostTLS) error {
	id, idOK := pskValue(p.TLSPSKIdentity)
	key, keyOK := pskValue(p.TLSPSK)
	if !next.UsesPSK() {
		switch {
		case p.TLSPSKIdentity.Set && (id != "" || !idOK && p.TLSPSKIdentity.Given()):
			return errParams(`Incorrect value for field "tls_psk_identity": should be empty.`)
		case p.TLSPSK.Set && (key != "" || !keyOK && p.TLSPSK.Given()):
			return errParams(`Incorrect value for field "tls_psk": should be empty.`)
		}
		return nil
	}
	if !zbxpsk.Available {
		f := "tls_connect"
		if next.Connect != 2 {
			f = "tls_accept"
		}
		return errParams(`Invalid parameter "/%d/%s": %s.`, i+1, f, zbxpsk.ErrUnavailable)
	}
	switch {
	case next.PSKIdentity == "":
		return errParams(`Incorrect value for field "tls_psk_identity": cannot be empty.`)
	case next.PSK == "" && !(p.TLSPSK.Set && !keyOK):
		return errParams(`Incorrect value for field "tls_psk": cannot be empty.`)
	case p.TLSPSK.Set && (!keyOK || !evenHex(key)):
		return errParams(`Incorrect value for field "tls_psk": an even number of hexadecimal characters is expected.`)
	case p.TLSPSK.Set && len(key) < zbxpsk.MinKeyHex:
		return errParams(`Incorrect value for field "tls_psk": minimum length is %d characters.`, zbxpsk.MinKeyHex)
	}
	if n := utf8.RuneCountInString(next.PSKIdentity); n > zbxpsk.MaxIdentityRunes {
		return errApp(`Value "%s" is too long for field "tls_psk_identity" - %d characters. Allowed length is %d characters.`, next.PSKIdentity, n, zbxpsk.MaxIdentityRunes)
	}
	if n := len(next.PSK); n > zbxpsk.MaxKeyHex {
		// 6.0 quotes the value; a key is never quoted here.
		return errApp(`Value is too long for field "tls_psk" - %d characters. Allowed length is %d characters.`, n, zbxpsk.MaxKeyHex)
	}
	if err := zbxpsk.CheckIdentity(next.PSKIdentity); err != nil {
		return errParams(`Invalid parameter "/%d/tls_psk_identity": %v.`, i+1, err)
	}
	return nil
}

// evenHex reports an even number of hexadecimal digits.
func evenHex(s string) bool {
	if len(s)%2 != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
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
	case len(p.TLSIssuer.Value) > maxTLSName:
		return errParams(`Invalid parameter "/%d/tls_issuer": value is too long.`, i+1)
	case len(p.TLSSubject.Value) > maxTLSName:
		return errParams(`Invalid parameter "/%d/tls_subject": value is too long.`, i+1)
	}
	if _, err := proxyHostID(p.ProxyHostID); err != nil {
		return err
	}
	g := p.Groups.Value.ids
	for j := range g {
		if slices.Contains(g[:j], g[j]) {
			return errParams(`Invalid parameter "/%d/groups/%d": value (groupid)=(%d) already exists.`, i+1, j+1, g[j])
		}
	}
	return p.ipmiProblem() // host_ipmi.go
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
		if err := pskProblem(i, p, p.tls(catalog.DefaultHostTLS)); err != nil {
			return nil, err
		}
		if err := p.inventoryProblem(p.Host.Value, false, nil); err != nil {
			return nil, err
		}
		hosts[i] = catalog.NewHost{Host: p.Host.Value, Name: p.Name.Value, Disabled: p.Status.Value.disabled, GroupIDs: p.Groups.Value.ids, Tags: p.Tags.Value, Interfaces: p.Interfaces.Value, TLS: p.tls(catalog.DefaultHostTLS), Description: p.Description.Value, IPMI: p.ipmi(catalog.DefaultHostIPMI), Inventory: p.inventory(nil)}
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
		if macros[i], err = ps[i].Macros.Value.fields(i, nil, 0); err != nil {
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
			if err := ps[i].setProxy(e, ids[i]); err != nil {
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
	curTLS := make([]catalog.HostTLS, len(ps))
	objs := objectsOf(c.params)
	for i := range ps {
		h := snap.HostByID(ps[i].HostID.Value)
		if h == nil || !a.all() && !a.canWrite(h) {
			return nil, errNoPermissionsParams
		}
		if h.Ext().Discovery != nil {
			// lld_inherited.go; its inventory is checked as any host's.
			if err := discoveredRefusal(objs, i, "host", "host", h.Host, "hostid", "status", "description", "inventory"); err != nil {
				return nil, err
			}
		}
		names[i], curTLS[i] = h.Host, h.Ext().TLS
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
		if err := pskProblem(i, p, p.tls(curTLS[i])); err != nil {
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
		if h := snap.HostByID(p.HostID.Value); h != nil && p.ipmiSet() {
			u.IPMI = new(p.ipmi(h.Ext().IPMI))
		}
		if h := snap.HostByID(p.HostID.Value); h != nil && p.inventorySet() {
			if err := p.inventoryProblem(h.Host, true, h.Ext().Inventory); err != nil {
				return nil, err
			}
			u.Inventory = p.inventory(h.Ext().Inventory)
			if u.Inventory == nil {
				u.Inventory = &catalog.HostInventory{Mode: catalog.InventoryDisabled}
			}
		}
		ups[i], ids[i] = u, p.HostID.Value
	}
	macros := make([][]catalog.MacroFields, len(ps))
	for i := range ps {
		var err error
		if macros[i], err = ps[i].Macros.Value.fields(i, snap, ps[i].HostID.Value); err != nil {
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
			if err := ps[i].setProxy(e, ids[i]); err != nil {
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

// proxyHostID reads "proxy_hostid" (0: the server monitors the host),
// refusing what is not an ID in 6.0's words (recorded from 6.0.14).
func proxyHostID(o opt[phpStr]) (uint64, error) {
	if !o.Given() {
		return 0, nil
	}
	v, err := strconv.ParseUint(string(o.Value), 10, 64)
	if err != nil {
		return 0, errApp(`Incorrect value "%s" for unsigned int field "proxy_hostid".`, string(o.Value))
	}
	return v, nil
}

// setProxy applies "proxy_hostid" to host id. A proxy that does not
// exist is refused as an object that does not exist (6.0 fails with an
// SQL error).
func (p *hostParams) setProxy(e *catalog.Edit, id uint64) error {
	if !p.ProxyHostID.Given() {
		return nil
	}
	px, err := proxyHostID(p.ProxyHostID)
	if err != nil {
		return err
	}
	if px != 0 && e.ProxyByID(px) == nil {
		return errNoPermissions
	}
	return e.SetHostsProxy([]uint64{id}, px)
}
