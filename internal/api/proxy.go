package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// Zabbix proxies: proxy.get, .create, .update and .delete as 6.0 has
// them (recorded from 6.0.14; the conformance case "proxies"). proxy.get
// is one of 6.0's legacy gets; create and update are checked by 6.0's
// API input validator (unexpected members refused), in its words.
// tls_psk_identity and tls_psk are stored and never returned.
// lastaccess is the trapper's (Options.ProxyLastAccess). delete refuses
// a proxy in use by a discovery rule, a host or an action's condition.

func (s *Server) registerProxy() {
	s.methods["proxy.get"] = &method{role: RoleUser, call: s.proxyGet}
	ed, ok := s.opts.Catalog.(CatalogEditor)
	if !ok {
		return
	}
	w := &configWriter{s: s, ed: ed, cat: s.opts.Catalog}
	s.methods["proxy.create"] = &method{role: RoleSuperAdmin, call: w.proxyCreate}
	s.methods["proxy.update"] = &method{role: RoleSuperAdmin, call: w.proxyUpdate}
	s.methods["proxy.delete"] = &method{role: RoleSuperAdmin, call: w.proxyDelete}
}

// proxySchema is the part of 6.0's hosts table a proxy is.
var proxySchema = schema{id: "proxyid", types: fieldTypes(`proxyid:n hostid:n proxy_hostid:n host:c status:n lastaccess:n
	ipmi_authtype:n ipmi_privilege:n ipmi_username:c ipmi_password:c maintenanceid:n maintenance_status:n
	maintenance_type:n maintenance_from:n name:c flags:n templateid:n description:t tls_connect:n tls_accept:n
	tls_issuer:c tls_subject:c proxy_address:c auto_compress:n discover:n custom_interfaces:n uuid:c`),
	// 6.0 sorts proxies by the hosts table's hostid, which is the proxyid.
	sortValue: func(o object, f string) (string, bool) {
		if f == "hostid" {
			v, _ := o["proxyid"].(string)
			return v, true
		}
		return "", false
	}}

// proxyGetParams are proxy.get's parameters (6.0's).
type proxyGetParams struct {
	getParams
	ProxyIDs        opt[ids] `json:"proxyids"`
	SelectHosts     sel      `json:"selectHosts"`
	SelectInterface sel      `json:"selectInterface"`
}

func (s *Server) proxyObject(p *catalog.Proxy) object {
	var last int64
	if s.opts.ProxyLastAccess != nil {
		last = s.opts.ProxyLastAccess(p.ID)
	} else {
		last = p.LastAccess
	}
	auto := "0"
	if p.AutoCompress {
		auto = "1"
	}
	return object{"proxyid": id(p.ID), "proxy_hostid": "0", "host": p.Name, "status": strconv.Itoa(p.Status),
		"lastaccess": strconv.FormatInt(last, 10), "ipmi_authtype": "-1", "ipmi_privilege": "2", "ipmi_username": "", "ipmi_password": "",
		"maintenanceid": "0", "maintenance_status": "0", "maintenance_type": "0", "maintenance_from": "0", "name": "", "flags": "0",
		"templateid": "0", "description": p.Description, "tls_connect": strconv.Itoa(int(p.TLS.Connect)), "tls_accept": strconv.Itoa(int(p.TLS.Accept)),
		"tls_issuer": p.TLS.Issuer, "tls_subject": p.TLS.Subject, "proxy_address": p.Address, "auto_compress": auto,
		"discover": "0", "custom_interfaces": "0", "uuid": ""}
}

// proxyIfaceObject is a passive proxy's interface as 6.0 returns it:
// an agent interface (type 0) of the proxy's own "host".
func proxyIfaceObject(p *catalog.Proxy) object {
	f := p.Interface
	return object{"interfaceid": id(f.ID), "hostid": id(p.ID), "main": "1", "type": "0", "useip": boolStr(f.UseIP),
		"ip": f.IP, "dns": f.DNS, "port": f.Port, "available": "0", "error": "", "errors_from": "0", "disable_until": "0",
		"details": []object{}}
}

func (s *Server) proxyGet(ctx context.Context, c *call) (any, error) {
	var p proxyGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	var objs []object
	// Only super admins may change proxies: editable shows the others
	// none (6.0's rule).
	none := p.Editable.Value && c.user.Role < RoleSuperAdmin
	for i := range snap.Proxies() {
		px := &snap.Proxies()[i]
		if none || !idsPass(p.ProxyIDs, px.ID) {
			continue
		}
		o := s.proxyObject(px)
		if sl := p.SelectHosts; sl.list() {
			// "count" is no member at all (recorded from 6.0.14).
			var list []object
			for _, h := range snap.ProxyHosts(px.ID) {
				if a.canRead(h) {
					list = append(list, hostObject(h))
				}
			}
			o["hosts"] = nonNil(sl.shape(p.limitSelect(list), ""))
		}
		if sl := p.SelectInterface; sl.list() {
			if px.Status == catalog.ProxyPassive && px.Interface.Port != "" {
				o["interface"] = sl.shape([]object{proxyIfaceObject(px)}, "")[0]
			} else {
				o["interface"] = []object{}
			}
		}
		objs = append(objs, o)
	}
	sortByID(objs, "proxyid")
	if p.CountOutput.Value {
		// 6.0 does not look at the sort of a count (recorded from 6.0.14).
		p.SortField = opt[[]string]{}
	}
	return p.applySchema(objs, &proxySchema, "hostid", "host", "status")
}

// proxyIface is a passive proxy's "interface" (6.0's validator: no
// other member, "type" and "main" included).
type proxyIface struct {
	UseIP opt[int64]  `json:"useip" in:"0,1"`
	IP    opt[string] `json:"ip"`
	DNS   opt[string] `json:"dns"`
	Port  opt[string] `json:"port"`
}

// proxyParams are the objects of proxy.create and .update.
type proxyParams struct {
	ProxyID        opt[uint64]          `json:"proxyid"`
	Host           opt[string]          `json:"host"`
	Status         opt[int64]           `json:"status" in:"5,6"`
	Description    opt[string]          `json:"description"`
	TLSConnect     opt[int64]           `json:"tls_connect"`
	TLSAccept      opt[int64]           `json:"tls_accept"`
	TLSIssuer      opt[string]          `json:"tls_issuer"`
	TLSSubject     opt[string]          `json:"tls_subject"`
	TLSPSKIdentity opt[string]          `json:"tls_psk_identity"`
	TLSPSK         opt[string]          `json:"tls_psk"`
	ProxyAddress   opt[string]          `json:"proxy_address"`
	Interface      opt[json.RawMessage] `json:"interface" as:"json"`
	Hosts          opt[refs]            `json:"hosts" key:"hostid"`
}

// proxyIfaceParse reads "interface": an object of proxyIface, or an
// empty array/object (none).
func proxyIfaceParse(i int, raw json.RawMessage) (*proxyIface, error) {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "[]", "{}", "null", "":
		return nil, nil
	}
	var l []proxyIface
	if err := decodeValidatorObjects(raw, &l); err != nil {
		// The path of the object, not of a list of them.
		if e, ok := err.(*Error); ok {
			e2 := *e
			e2.Data = strings.Replace(e2.Data, `"/1`, `"/`+strconv.Itoa(i+1)+`/interface`, 1)
			return nil, &e2
		}
		return nil, err
	}
	if len(l) != 1 {
		return nil, errParams(`Invalid parameter "/%d/interface": an array or object is expected.`, i+1)
	}
	return &l[0], nil
}

// maxProxyName is the length of 6.0's hosts.host.
const maxProxyName = 128

// check validates one object against next, the proxy it makes (the
// current one patched), in 6.0's words (recorded from 6.0.14).
func (p *proxyParams) check(i int, next *catalog.Proxy, create bool) error {
	bad := func(f, msg string, args ...any) error {
		return errParams(`Invalid parameter "/%d/%s": %s`, i+1, f, fmt.Sprintf(msg, args...))
	}
	if create {
		switch {
		case !p.Host.Set:
			return missing(i, "host")
		case !p.Status.Set:
			return missing(i, "status")
		}
	}
	if p.Status.Set && p.Status.Value != catalog.ProxyActive && p.Status.Value != catalog.ProxyPassive {
		return oneOf(i, "status", "5, 6")
	}
	if p.Host.Set {
		switch {
		case p.Host.Value == "":
			return empty(i, "host")
		case len(p.Host.Value) > maxProxyName:
			return bad("host", "value is too long.")
		case hostNameProblem(p.Host.Value) != nil:
			return bad("host", "invalid host name.")
		}
	}
	active := next.Status == catalog.ProxyActive
	if p.TLSConnect.Set {
		v := p.TLSConnect.Value
		switch {
		case active && v != 1:
			return bad("tls_connect", "value must be 1.")
		case !active && v != 1 && v != 2 && v != 4:
			return oneOf(i, "tls_connect", "1, 2, 4")
		}
	}
	if p.TLSAccept.Set {
		v := p.TLSAccept.Value
		switch {
		case !active && v != 1:
			return bad("tls_accept", "value must be 1.")
		case active && (v < 1 || v > 7):
			return oneOf(i, "tls_accept", "1-7")
		}
	}
	for _, f := range []struct {
		name string
		o    opt[string]
	}{{"tls_issuer", p.TLSIssuer}, {"tls_subject", p.TLSSubject}} {
		if len(f.o.Value) > maxTLSName {
			return bad(f.name, "value is too long.")
		}
	}
	psk := next.TLS.UsesPSK()
	if p.TLSPSKIdentity.Set {
		v := p.TLSPSKIdentity.Value
		switch {
		case !psk && v != "":
			return bad("tls_psk_identity", "value must be empty.")
		case psk && v == "":
			return empty(i, "tls_psk_identity")
		case psk && zbxpsk.CheckIdentity(v) != nil:
			return bad("tls_psk_identity", "%v.", zbxpsk.CheckIdentity(v))
		}
	}
	if p.TLSPSK.Set {
		v := p.TLSPSK.Value
		switch {
		case !psk && v != "":
			return bad("tls_psk", "value must be empty.")
		case psk && v == "":
			return empty(i, "tls_psk")
		case psk && !evenHex(v):
			return bad("tls_psk", "an even number of hexadecimal characters is expected.")
		case psk && len(v) < zbxpsk.MinKeyHex:
			return bad("tls_psk", "minimum length is %d characters.", zbxpsk.MinKeyHex)
		case psk && len(v) > zbxpsk.MaxKeyHex:
			return bad("tls_psk", "value is too long.")
		}
	}
	// 6.0 takes PSK without an identity or key; such a proxy could never
	// connect, so Peregrine asks for both.
	switch {
	case psk && next.TLS.PSKIdentity == "":
		return empty(i, "tls_psk_identity")
	case psk && next.TLS.PSK == "":
		return empty(i, "tls_psk")
	}
	if psk && !zbxpsk.Available {
		return bad("tls_accept", "%s.", zbxpsk.ErrUnavailable)
	}
	if p.ProxyAddress.Set && p.ProxyAddress.Value != "" {
		if !active {
			return bad("proxy_address", "should be empty.")
		}
		if len(p.ProxyAddress.Value) > 255 {
			return bad("proxy_address", "value is too long.")
		}
		for _, a := range strings.Split(p.ProxyAddress.Value, ",") {
			if !proxyAddressOK(strings.TrimSpace(a)) {
				return bad("proxy_address", "invalid address range \"%s\".", strings.TrimSpace(a))
			}
		}
	}
	return nil
}

// proxyAddressOK takes an IP address, a CIDR network or a DNS name, as
// 6.0's proxy_address does.
func proxyAddressOK(a string) bool {
	if a == "" {
		return false
	}
	if net.ParseIP(a) != nil {
		return true
	}
	if _, _, err := net.ParseCIDR(a); err == nil {
		return true
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// iface checks and reads "interface" for next (a passive proxy needs
// one on create, an active one takes none).
func (p *proxyParams) iface(i int, next *catalog.Proxy, create bool) error {
	var f *proxyIface
	if p.Interface.Set {
		var err error
		if f, err = proxyIfaceParse(i, p.Interface.Value); err != nil {
			return err
		}
	}
	if next.Status == catalog.ProxyActive {
		if f != nil {
			return errParams(`Invalid parameter "/%d/interface": should be empty.`, i+1)
		}
		next.Interface = catalog.ProxyInterface{}
		return nil
	}
	if f == nil {
		if create {
			return missing(i, "interface")
		}
		return nil
	}
	bad := func(f, msg string) error { return errParams(`Invalid parameter "/%d/interface%s": %s`, i+1, f, msg) }
	useIP := !f.UseIP.Set || f.UseIP.Value == 1
	switch {
	case !f.Port.Set:
		return bad("", `the parameter "port" is missing.`)
	case useIP && f.IP.Value == "":
		return bad("/ip", "cannot be empty.")
	case !useIP && f.DNS.Value == "":
		return bad("/dns", "cannot be empty.")
	case f.IP.Value != "" && net.ParseIP(f.IP.Value) == nil:
		return bad("/ip", "an IP address is expected.")
	}
	if n, err := strconv.Atoi(f.Port.Value); err != nil || n < 0 || n > 65535 {
		if err != nil {
			return bad("/port", "an integer is expected.")
		}
		return bad("/port", "value must be one of 0-65535.")
	}
	next.Interface = catalog.ProxyInterface{ID: next.Interface.ID, UseIP: useIP, IP: f.IP.Value, DNS: f.DNS.Value, Port: f.Port.Value}
	return nil
}

// apply sets the members given on x.
func (p *proxyParams) apply(x *catalog.Proxy) {
	if p.Host.Set {
		x.Name = p.Host.Value
	}
	if p.Status.Set {
		x.Status = int(p.Status.Value)
	}
	if p.Description.Set {
		x.Description = p.Description.Value
	}
	if p.TLSConnect.Set {
		x.TLS.Connect = uint8(p.TLSConnect.Value)
	}
	if p.TLSAccept.Set {
		x.TLS.Accept = uint8(p.TLSAccept.Value)
	}
	if p.TLSIssuer.Set {
		x.TLS.Issuer = p.TLSIssuer.Value
	}
	if p.TLSSubject.Set {
		x.TLS.Subject = p.TLSSubject.Value
	}
	if p.TLSPSKIdentity.Set {
		x.TLS.PSKIdentity = p.TLSPSKIdentity.Value
	}
	if p.TLSPSK.Set {
		x.TLS.PSK = zbxpsk.Secret(p.TLSPSK.Value)
	}
	if p.ProxyAddress.Set {
		x.Address = p.ProxyAddress.Value
	}
	// A proxy connects one way only: an active one is never connected
	// to, a passive one never connects (6.0 resets the other direction
	// when the status changes; recorded from 6.0.14).
	if x.Status == catalog.ProxyPassive {
		x.Address = ""
		if !p.TLSAccept.Set {
			x.TLS.Accept = 1
		}
	} else if !p.TLSConnect.Set {
		x.TLS.Connect = 1
	}
	if !x.TLS.UsesPSK() {
		x.TLS.PSKIdentity, x.TLS.PSK = "", ""
	}
}

// hostsOK refuses hosts that do not exist or that the caller cannot
// change, as 6.0 does (-32602).
func (w *configWriter) proxyHostsOK(ctx context.Context, c *call, ps []proxyParams) error {
	a, err := w.s.access(ctx, c)
	if err != nil {
		return err
	}
	snap := w.cat.Snapshot()
	for i := range ps {
		for _, h := range ps[i].Hosts.Value {
			x := snap.HostByID(h)
			if x == nil || !a.all() && !a.canWrite(x) {
				return errNoPermissionsParams
			}
		}
	}
	return nil
}

func (w *configWriter) proxyCreate(ctx context.Context, c *call) (any, error) {
	var ps []proxyParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	xs := make([]catalog.Proxy, len(ps))
	for i := range ps {
		p := &ps[i]
		if p.ProxyID.Set {
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "proxyid".`, i+1)
		}
		x := catalog.Proxy{Status: int(p.Status.Value), TLS: catalog.DefaultHostTLS, AutoCompress: true}
		p.apply(&x)
		if err := p.check(i, &x, true); err != nil {
			return nil, err
		}
		if snap.ProxyByName(x.Name) != nil || slices.ContainsFunc(xs[:i], func(o catalog.Proxy) bool { return o.Name == x.Name }) {
			return nil, errParams(`Proxy "%s" already exists.`, x.Name)
		}
		if err := p.iface(i, &x, true); err != nil {
			return nil, err
		}
		xs[i] = x
	}
	if err := w.proxyHostsOK(ctx, c, ps); err != nil {
		return nil, err
	}
	var ids []uint64
	err := w.edit(ctx, c, "proxyid", nil, func(e *catalog.Edit) (err error) {
		if ids, err = e.CreateProxies(xs); err != nil {
			return err
		}
		for i := range ps {
			if ps[i].Hosts.Set {
				if err := e.SetHostsProxy(ps[i].Hosts.Value, ids[i]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("proxyids", ids), nil
}

func (w *configWriter) proxyUpdate(ctx context.Context, c *call) (any, error) {
	var ps []proxyParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	ups := make([]catalog.ProxyUpdate, len(ps))
	ids := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		if !p.ProxyID.Set {
			return nil, missing(i, "proxyid")
		}
		cur := snap.Proxy(p.ProxyID.Value)
		if cur == nil {
			return nil, errNoPermissionsParams
		}
		if slices.Contains(ids[:i], cur.ID) {
			return nil, errParams(`Invalid parameter "/%d": value (proxyid)=(%d) already exists.`, i+1, cur.ID)
		}
		x := *cur
		p.apply(&x)
		if err := p.check(i, &x, false); err != nil {
			return nil, err
		}
		if o := snap.ProxyByName(x.Name); o != nil && o.ID != x.ID {
			return nil, errParams(`Proxy "%s" already exists.`, x.Name)
		}
		if err := p.iface(i, &x, false); err != nil {
			return nil, err
		}
		ids[i] = x.ID
		ups[i] = catalog.ProxyUpdate{ID: x.ID, Name: &x.Name, Status: &x.Status, Description: &x.Description, TLS: catalog.SetTLS(x.TLS),
			Address: &x.Address, Interface: &x.Interface}
	}
	if err := w.proxyHostsOK(ctx, c, ps); err != nil {
		return nil, err
	}
	err := w.edit(ctx, c, "proxyid", nil, func(e *catalog.Edit) error {
		if err := e.UpdateProxies(ups); err != nil {
			return err
		}
		snap := w.cat.Snapshot()
		for i := range ps {
			if !ps[i].Hosts.Set {
				continue
			}
			// The hosts given replace the proxy's.
			var drop []uint64
			for _, h := range snap.ProxyHosts(ids[i]) {
				if !slices.Contains(ps[i].Hosts.Value, h.ID) {
					drop = append(drop, h.ID)
				}
			}
			if err := e.SetHostsProxy(drop, 0); err != nil {
				return err
			}
			if err := e.SetHostsProxy(ps[i].Hosts.Value, ids[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("proxyids", ids), nil
}

func (w *configWriter) proxyDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	snap := w.cat.Snapshot()
	for _, id := range ids {
		if snap.Proxy(id) == nil {
			return nil, errNoPermissions // -32500 here (recorded from 6.0.14)
		}
	}
	// A proxy that runs a discovery rule, monitors a host or is named
	// by an action's condition stays, checked in this order (recorded
	// from 6.0.14).
	if st, ok := w.s.opts.Catalog.(DRuleStore); ok {
		for _, id := range ids {
			for _, r := range st.DRules() {
				if r.ProxyID == id {
					return nil, errParams(`Proxy "%s" is used by discovery rule "%s".`, snap.Proxy(id).Name, r.Name)
				}
			}
		}
	}
	err = w.edit(ctx, c, "proxyid", nil, func(e *catalog.Edit) error {
		if err := e.DeleteProxies(ids); err != nil {
			return err
		}
		return w.s.proxyInAction(snap, ids)
	})
	if err != nil {
		return nil, err
	}
	return idResult("proxyids", ids), nil
}

// proxyInAction refuses deleting a proxy an action's condition names.
func (s *Server) proxyInAction(snap *catalog.Snapshot, ids []uint64) error {
	if s.opts.Alerting == nil {
		return nil
	}
	for _, a := range s.opts.Alerting.AlertConfig().SortedActions() {
		for _, cd := range a.Filter.Conditions {
			pid, _ := strconv.ParseUint(cd.Value, 10, 64)
			if cd.ConditionType == catalog.CondProxy && slices.Contains(ids, pid) {
				return errParams(`Proxy "%s" is used by action "%s".`, snap.Proxy(pid).Name, a.Name)
			}
		}
	}
	return nil
}
