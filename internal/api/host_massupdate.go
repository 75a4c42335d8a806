package api

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// host.massupdate as Zabbix 6.0 does it (recorded from 6.0.14): the
// hosts' own fields given are set on every host, then "interfaces",
// "templates" (or "templates_clear"), "macros" and "groups" replace
// theirs, in that order of checks. Its "hosts" are objects with a
// hostid; no member is refused for being unknown, but a call that
// names none of the hosts' fields and some other member fails as 6.0's
// does ("Cannot perform update statement on table "hosts" without
// values.").

// hostColumns are the fields of Zabbix 6.0's hosts table: the members
// host.massupdate writes to the hosts (the ones Peregrine does not
// model are accepted and not stored, as host.update does).
var hostColumns = strings.Fields(`hostid proxy_hostid host status lastaccess ipmi_authtype ipmi_privilege ipmi_username
	ipmi_password maintenanceid maintenance_status maintenance_type maintenance_from name info_1 info_2 flags templateid
	description tls_connect tls_accept tls_issuer tls_subject tls_psk_identity tls_psk proxy_address auto_compress
	discover custom_interfaces uuid`)

// massUpdateOwn are host.massupdate's members that are not host fields.
var massUpdateOwn = []string{"hosts", "groups", "interfaces", "templates", "templates_clear", "macros", "inventory", "inventory_mode"}

// massHostFields reads the host fields of host.massupdate into an
// update for n hosts.
func massHostFields(p massParams, n int, name func() string) (catalog.HostUpdate, bool, error) {
	var u catalog.HostUpdate
	fields, other := false, false
	for k := range p {
		switch {
		case slices.Contains(hostColumns, k):
			fields = true
		case !slices.Contains(massUpdateOwn, k):
			other = true
		}
	}
	if other && !fields {
		return u, false, errApp(`Cannot perform update statement on table "hosts" without values.`)
	}
	if raw, ok := p["host"]; ok {
		if n > 1 {
			return u, false, errParams("Cannot mass update host name.")
		}
		s := phpText(raw)
		if err := checkMassHostName(s); err != nil {
			return u, false, err
		}
		u.Host = &s
	}
	if raw, ok := p["name"]; ok {
		if n > 1 {
			return u, false, errParams("Cannot mass update visible host name.")
		}
		u.Name = new(phpText(raw))
	}
	if raw, ok := p["status"]; ok {
		s := phpText(raw)
		v, err := strconv.Atoi(s)
		switch {
		case err != nil:
			return u, false, errApp(`Incorrect value "%s" for int field "status".`, s)
		case v != 0 && v != 1:
			// 6.0 writes it: 5 makes the host a proxy. Peregrine refuses,
			// in host.update's words.
			return u, false, errApp(`Incorrect status for host "%s".`, name())
		}
		u.Enabled = new(v == 0)
	}
	if raw, ok := p["description"]; ok {
		u.Description = new(phpText(raw))
	}
	if raw, ok := p["inventory_mode"]; ok {
		if v := phpText(raw); v != "-1" && v != "0" && v != "1" {
			return u, false, errApp(`Incorrect value for field "inventory_mode": value must be one of -1, 0, 1.`)
		}
	}
	// Any encryption member needs both directions (recorded from
	// 6.0.14: tls_issuer, tls_psk_identity or tls_psk alone are refused
	// so too).
	_, conn := p["tls_connect"]
	_, acc := p["tls_accept"]
	tlsOther := false
	for _, f := range []string{"tls_issuer", "tls_subject", "tls_psk_identity", "tls_psk"} {
		_, ok := p[f]
		tlsOther = tlsOther || ok
	}
	if conn != acc || tlsOther && !conn {
		return u, false, errApp("Cannot update host encryption settings. Connection settings for both directions should be specified.")
	}
	var t catalog.HostTLSPatch
	for _, f := range []struct {
		name string
		dst  **uint8
	}{{"tls_connect", &t.Connect}, {"tls_accept", &t.Accept}} {
		if raw, ok := p[f.name]; ok {
			v, err := strconv.ParseUint(phpText(raw), 10, 8)
			if err != nil {
				return u, false, errApp(`Incorrect value "%s" for int field "%s".`, phpText(raw), f.name)
			}
			*f.dst = new(uint8(v))
		}
	}
	if raw, ok := p["tls_issuer"]; ok {
		t.Issuer = new(phpText(raw))
	}
	if raw, ok := p["tls_subject"]; ok {
		t.Subject = new(phpText(raw))
	}
	if conn {
		// The key comes with the call, checked as host.create checks it;
		// settings without PSK drop the hosts' (an identity or key given
		// with them is ignored, as 6.0 does).
		var hp hostParams
		for _, f := range []struct {
			name string
			dst  *opt[pskText]
		}{{"tls_psk_identity", &hp.TLSPSKIdentity}, {"tls_psk", &hp.TLSPSK}} {
			if raw, ok := p[f.name]; ok {
				f.dst.Set, f.dst.Null = true, isNull(raw)
				f.dst.Value.decodeParam(raw, nil)
			}
		}
		next := catalog.HostTLS{Connect: *t.Connect, Accept: *t.Accept, PSKIdentity: hp.TLSPSKIdentity.Value.s, PSK: zbxpsk.Secret(hp.TLSPSK.Value.s)}
		if next.UsesPSK() {
			if err := pskProblem(0, &hp, next); err != nil {
				return u, false, err
			}
		} else {
			next.PSKIdentity, next.PSK = "", ""
		}
		t.PSKIdentity, t.PSK = &next.PSKIdentity, &next.PSK
	}
	if t != (catalog.HostTLSPatch{}) {
		u.TLS = &t
	}
	return u, u.Host != nil || u.Name != nil || u.Enabled != nil || u.Description != nil || u.TLS != nil, nil
}

// checkMassHostName refuses a technical name as 6.0's host.massupdate
// does.
func checkMassHostName(s string) error {
	ok := s != "" && len(s) <= 128
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '_' || c == '-' || c == ' '
	}
	if !ok {
		return errParams(`Incorrect characters used for host name "%s".`, s)
	}
	return nil
}

// massUpdateError words the catalog's refusals of a host's fields as
// host.massupdate does.
func massUpdateError(err error) error {
	var ce *catalog.ConflictError
	if errors.As(err, &ce) && ce.Kind == catalog.HostExists {
		return errParams(`Host "%s" already exists.`, ce.Host)
	}
	return err
}

func (w *configWriter) hostMassUpdate(ctx context.Context, c *call) (any, error) {
	p := readMassParams(c.params)
	hostsRaw, ok := p.given("hosts")
	if !ok {
		return nil, errParams(`Field "hosts" is mandatory.`)
	}
	elems := massList(hostsRaw)
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	var echo [][]byte
	err = w.edit(ctx, c, "hostid", nil, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		var refs [][]byte
		for _, el := range elems {
			r := massRefs(el, "hostid")
			if len(r) == 0 {
				return errNoPermissionOp // an object without hostid
			}
			refs = append(refs, r[0])
		}
		ids, err := massHosts(snap, a, refs, errNoPermissionOp)
		if err != nil {
			return err
		}
		echo = refs
		var hosts []uint64 // without repeats, in order
		for _, h := range ids {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
		// The hosts' own fields.
		u, set, err := massHostFields(p, len(hosts), func() string {
			if len(hosts) > 0 {
				return snap.HostByID(hosts[0]).Host
			}
			return ""
		})
		if err != nil {
			return err
		}
		if raw, ok := p["proxy_hostid"]; ok && len(hosts) > 0 {
			px, err := strconv.ParseUint(phpText(raw), 10, 64)
			if err != nil {
				return errApp(`Incorrect value "%s" for unsigned int field "proxy_hostid".`, phpText(raw))
			}
			if px != 0 && e.ProxyByID(px) == nil {
				return errNoPermissions // 6.0: an SQL error
			}
			if err := e.SetHostsProxy(hosts, px); err != nil {
				return err
			}
		}
		if set && len(hosts) > 0 {
			ups := make([]catalog.HostUpdate, len(hosts))
			for i, h := range hosts {
				ups[i] = u
				ups[i].ID = h
			}
			if err := e.UpdateHosts(ups); err != nil {
				return massUpdateError(err)
			}
		}
		// Interfaces: each host's replaced.
		if raw, ok := p.given("interfaces"); ok {
			ups := make([]catalog.HostUpdate, 0, len(hosts))
			for _, h := range hosts {
				l, err := replaceIfaces(snap.HostByID(h), massList(raw))
				if err != nil {
					return err
				}
				ups = append(ups, catalog.HostUpdate{ID: h, Interfaces: &l})
			}
			if err := e.UpdateHosts(ups); err != nil {
				return massIfaceError(err, snap)
			}
		}
		// Templates: the list given, or the current ones but those cleared.
		tmplRaw, setT := p.given("templates")
		clearRaw, clearT := p.given("templates_clear")
		if setT || clearT {
			var want, clear []uint64
			if setT {
				if want, err = massTemplates(snap, tmplRaw); err != nil {
					return err
				}
			}
			for _, r := range massRefs(clearRaw, "templateid") {
				id, ok := refID(r)
				if !ok {
					return errNoPermissions // 6.0: an SQL error
				}
				clear = append(clear, id)
			}
			for i, h := range hosts {
				links := want
				if !setT {
					links = slices.DeleteFunc(slices.Clone(snap.LinkedTemplates(h)), func(t uint64) bool { return slices.Contains(clear, t) })
				}
				if _, err := e.SetTemplates(h, links, clear, "hosts["+strconv.Itoa(i)+"].templates"); err != nil {
					return err
				}
			}
		}
		// User macros: each host's replaced.
		if raw, ok := p.given("macros"); ok {
			ms, err := massMacros(raw, hosts)
			if err != nil {
				return err
			}
			for i, h := range hosts {
				if _, err := e.SetMacros(h, ms[i], "hosts["+strconv.Itoa(i)+"].macros"); err != nil {
					return massMacroError(err, snap)
				}
			}
		}
		// Host groups, as 6.0 replaces them: the groups given that none
		// of the hosts has yet are added to every host (with
		// hostgroup.massadd, whose validator names them in that list),
		// then the groups some host has that are not given are taken
		// out of every host. A host that shares none of its groups with
		// the others does not get the groups only they have (recorded
		// from 6.0.14: hosts {1, 3} and {2} given groups [2, 3] end up
		// with {3} and {2}); Peregrine does the same.
		if raw, ok := p["groups"]; ok {
			var union []uint64
			for _, h := range hosts {
				for _, g := range snap.HostByID(h).GroupIDs {
					if !slices.Contains(union, g) {
						union = append(union, g)
					}
				}
			}
			var given, add []uint64
			for _, r := range massRefs(raw, "groupid") {
				g, ok := refID(r)
				if !ok || !slices.Contains(union, g) {
					if !ok {
						return invalid("/groups/"+strconv.Itoa(len(add)+1)+"/groupid", "a number is expected")
					}
					if !slices.Contains(add, g) {
						add = append(add, g)
					}
				}
				given = append(given, g)
			}
			remove := slices.DeleteFunc(slices.Clone(union), func(g uint64) bool { return slices.Contains(given, g) })
			if len(add) > 0 {
				if err := massGroupsWritable(snap, a, add); err != nil {
					return err
				}
			}
			if len(remove) > 0 {
				if err := massGroupsWritable(snap, a, remove); err != nil {
					return err
				}
			}
			ups := make([]catalog.HostUpdate, 0, len(hosts))
			for _, h := range hosts {
				hh := snap.HostByID(h)
				gs := slices.DeleteFunc(slices.Clone(hh.GroupIDs), func(g uint64) bool { return slices.Contains(remove, g) })
				gs = append(gs, add...)
				if len(gs) == 0 {
					return errHostWithoutGroup(hh)
				}
				if !slices.Equal(gs, hh.GroupIDs) {
					ups = append(ups, catalog.HostUpdate{ID: h, GroupIDs: gs})
				}
			}
			if len(ups) > 0 {
				if err := e.UpdateHosts(ups); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return echoIDs("hostids", echo), nil
}
