package api

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// host.massadd, host.massremove and host.massupdate as Zabbix 6.0 does
// them (recorded from 6.0.14): 6.0 kept them from before its API input
// validator, so they read their parameters as PHP reads them (one
// object or value for a list of one, objects without their ID member
// skipped, unknown members ignored) and check them in steps, each with
// its own texts: the hosts and the caller's rights on them first, then
// interfaces, host groups (with hostgroup.massadd's validator), templates
// and user macros (with usermacro.create's). Each call is one catalog
// Edit: a refused call changes nothing. The permission checks are
// host.update's: read-write on every host, and on every host group
// added or removed.
//
// Where 6.0 fails without an answer (HTTP 500: host.massadd without
// "hosts", a list of IDs for host.massupdate's "hosts") or writes what
// it should have refused (host.massupdate's "status" 5 makes a host a
// proxy), Peregrine answers with an error; docs/api.md lists these.

// massParams are the members of a mass method's params, by name (a
// repeated member keeps its last value); JSON's [] is PHP's empty
// array, no member.
type massParams map[string][]byte

func readMassParams(raw []byte) massParams {
	out := massParams{}
	ms, _ := objectMembers(raw)
	for _, m := range ms {
		out[m.name] = bytes.TrimSpace(m.raw)
	}
	delete(out, "nopermissions")
	return out
}

// given is member name's value, when it is there and not null.
func (p massParams) given(name string) ([]byte, bool) {
	v, ok := p[name]
	return v, ok && jsonKindOf(v) != 'n'
}

// massList reads a value as PHP's zbx_toArray does: a list is its
// elements, anything else (one object, one value) a list of one.
func massList(raw []byte) [][]byte {
	raw = bytes.TrimSpace(raw)
	switch jsonKindOf(raw) {
	case 'n':
		return nil
	case 'a':
		l, _ := arrayElems(raw)
		return l
	}
	return [][]byte{raw}
}

// massRefs reads a list of references as zbx_objectValues reads it: an
// object gives its key member (an object without one is skipped), a
// value is itself. It returns the raw values.
func massRefs(raw []byte, key string) [][]byte {
	var out [][]byte
	for _, e := range massList(raw) {
		if jsonKindOf(e) != 'o' {
			out = append(out, e)
			continue
		}
		ms, _ := objectMembers(e)
		var v []byte
		for _, m := range ms {
			if m.name == key {
				v = bytes.TrimSpace(m.raw)
			}
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

// refID is a reference's ID; ok false for a value that is no ID.
func refID(raw []byte) (uint64, bool) {
	switch jsonKindOf(raw) {
	case 'i', 's':
		return parseID(raw)
	}
	return 0, false
}

// echoIDs is a mass method's result: the IDs as they were given
// (strings as strings, numbers as numbers), as 6.0 returns them.
func echoIDs(name string, raws [][]byte) any {
	b := []byte{'['}
	for i, r := range raws {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return object{name: rawJSON(append(b, ']'))}
}

var (
	errNoPermissionOp   = errApp("You do not have permission to perform this operation.")
	errIncorrectArgs    = errParams("Incorrect arguments passed to function.")
	errEmptyInput       = errParams("Empty input parameter.")
	errNoHostOrTemplate = errParams("At least one host or template must be specified.")
)

// massHosts checks that every host exists and the caller may change it
// (fail otherwise) and returns their IDs.
func massHosts(snap *catalog.Snapshot, a access, raws [][]byte, fail error) ([]uint64, error) {
	out := make([]uint64, 0, len(raws))
	for _, r := range raws {
		id, ok := refID(r)
		h := snap.HostByID(id)
		if !ok || h == nil || !a.canWrite(h) {
			return nil, fail
		}
		out = append(out, id)
	}
	return out, nil
}

// massGroupsWritable refuses a host group that does not exist or that
// the caller may not change.
func massGroupsWritable(snap *catalog.Snapshot, a access, ids []uint64) error {
	for _, g := range ids {
		if snap.GroupByID(g) == nil || !a.seesGroup(g, true) {
			return errNoPermissions
		}
	}
	return nil
}

// massGroupRef is an element of hostgroup.massadd's "groups" (and
// host.massadd's, which 6.0 checks with it).
type massGroupRef struct {
	GroupID opt[uint64] `json:"groupid"`
}

func (*massGroupRef) required() []string { return []string{"groupid"} }

// massAddGroups reads host.massadd's "groups" as hostgroup.massadd's
// validator does, with the hosts: the objects, then no group and no
// host twice.
func massAddGroups(raw []byte, hosts []uint64) ([]uint64, error) {
	var groups []uint64
	for i, e := range massList(raw) {
		var g massGroupRef
		if err := decodeRuled(e, "/groups/"+strconv.Itoa(i+1), &g); err != nil {
			return nil, apiError(err)
		}
		groups = append(groups, g.GroupID.Value)
	}
	if err := uniq("/groups", len(groups), []string{"groupid"}, func(i int) []string { return []string{id(groups[i])} }); err != nil {
		return nil, err
	}
	if err := uniq("/hosts", len(hosts), []string{"hostid"}, func(i int) []string { return []string{id(hosts[i])} }); err != nil {
		return nil, err
	}
	return groups, nil
}

// massTemplates reads a list of templates to link: no template twice,
// each one that exists.
func massTemplates(snap *catalog.Snapshot, raw []byte) ([]uint64, error) {
	refs := massRefs(raw, "templateid")
	count := map[string]int{}
	var order []string
	for _, r := range refs {
		k := unquote(r)
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	for _, k := range order {
		if count[k] > 1 {
			return nil, errParams(`Cannot pass duplicate template IDs for the linkage: template ID "%s" is passed %d times.`, k, count[k])
		}
	}
	out := make([]uint64, 0, len(refs))
	for _, r := range refs {
		id, ok := refID(r)
		if !ok || snap.Template(id) == nil {
			return nil, errNoPermissions
		}
		out = append(out, id)
	}
	return out, nil
}

// massMacroParams is one of a mass method's "macros": a usermacro.create
// object whose host the method gives.
type massMacroParams struct {
	Macro       opt[zstr]  `json:"macro" in:"1:255"`
	Value       opt[zstr]  `json:"value" in:"0:2048"`
	Type        opt[int64] `json:"type" in:"0,1,2"`
	Description opt[zstr]  `json:"description" in:"0:65535"`
}

func (*massMacroParams) required() []string { return []string{"macro", "value"} }

func (m *massMacroParams) afterField(name string) error {
	switch name {
	case "macro":
		if _, err := usermacro.CheckDefinition(string(m.Macro.Value)); err != nil {
			return &valueError{msg: macroSyntaxError(string(m.Macro.Value), err)}
		}
	case "type":
		if m.Type.Value == int64(usermacro.Vault) {
			return &valueError{msg: "vault secret macros are not supported by Peregrine: store the value as a secret text macro (type 1)"}
		}
	}
	return nil
}

// macroSyntaxError words the refusal of a user macro definition as
// 6.0's parser does: where the text stops being a macro ("incorrect
// syntax near "x""), or "unexpected end of macro"; err is the
// catalog's reason, kept for what 6.0's parser would accept.
func macroSyntaxError(s string, err error) string {
	near := func(i int) string { return `incorrect syntax near "` + s[i:] + `"` }
	const end = "unexpected end of macro"
	switch {
	case len(s) == 0 || s[0] != '{':
		return near(0)
	case len(s) == 1:
		return end
	case s[1] != '$':
		return near(1)
	}
	i := 2
	for i < len(s) && (s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '_') {
		i++
	}
	switch {
	case i == len(s):
		return end
	case i == 2 || s[i] != ':' && s[i] != '}':
		return near(i)
	case s[i] == ':':
		i++
		if strings.HasPrefix(s[i:], "regex:") {
			i += len("regex:")
		}
		if i < len(s) && s[i] == '"' {
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if i >= len(s) {
				return end
			}
			i++
			if i == len(s) {
				return end
			}
			if s[i] != '}' {
				return near(i)
			}
		} else {
			for i < len(s) && s[i] != '}' {
				i++
			}
			if i == len(s) {
				return end
			}
		}
	}
	if i+1 < len(s) {
		return near(i + 1)
	}
	return strings.TrimSuffix(err.Error(), ".")
}

// massMacros reads "macros" for hosts as usermacro.create reads the
// list 6.0 makes of them, each macro for each host in turn: the
// objects, then no macro twice on a host.
func massMacros(raw []byte, hosts []uint64) ([][]catalog.MacroFields, error) {
	elems := massList(raw)
	if len(elems) > 0 && len(hosts) == 0 {
		return nil, invalid("/", "cannot be empty") // 6.0's list of none
	}
	ps := make([]massMacroParams, len(elems))
	n := 0
	for i, e := range elems {
		for range hosts {
			n++
			if err := decodeRuled(e, "/"+strconv.Itoa(n), &ps[i]); err != nil {
				return nil, apiError(err)
			}
		}
	}
	seen := map[[2]string]bool{}
	for k := range len(elems) * len(hosts) {
		i, j := k/len(hosts), k%len(hosts)
		r, _ := usermacro.CheckDefinition(string(ps[i].Macro.Value))
		key := [2]string{id(hosts[j]), r.Key()}
		if seen[key] {
			// 6.0 quotes the macro as given.
			return nil, invalid("/"+strconv.Itoa(k+1), "value (hostid, macro)=("+id(hosts[j])+", "+string(ps[i].Macro.Value)+") already exists")
		}
		seen[key] = true
	}
	out := make([][]catalog.MacroFields, len(hosts))
	for j, h := range hosts {
		for i := range ps {
			p := &ps[i]
			out[j] = append(out[j], catalog.MacroFields{HostID: h, Macro: string(p.Macro.Value), Value: string(p.Value.Value), Type: int(p.Type.Value), Description: string(p.Description.Value)})
		}
	}
	return out, nil
}

// massMacroError words the catalog's refusal of a macro as 6.0's mass
// methods do: the host by its visible name.
func massMacroError(err error, snap *catalog.Snapshot) error {
	var ce *catalog.ConflictError
	if errors.As(err, &ce) && ce.Kind == catalog.MacroExists {
		name := ce.Host
		if h := snap.Host(ce.Host); h != nil {
			name = h.Name
		}
		return errParams(`Macro "%s" already exists on "%s".`, ce.Name, name)
	}
	return err
}

// massIfaceKnown are the members of an interface object 6.0's
// hostinterface.create reads; it ignores the others.
var massIfaceKnown = []string{"interfaceid", "type", "main", "useip", "ip", "dns", "port", "details"}

// massIface reads an interface object as 6.0's hostinterface.create
// checks it (all of type, main, useip, ip, dns and port given; a known
// type; an IP address that is one), then as host.update does; keepID
// keeps its interfaceid (hostinterface.replacehostinterfaces).
func massIface(raw []byte, keepID bool) (catalog.Interface, error) {
	ms, ok := objectMembers(raw)
	if !ok {
		return catalog.Interface{}, errIncorrectArgs
	}
	have := map[string][]byte{}
	b := []byte{'{'}
	for _, m := range ms {
		if !slices.Contains(massIfaceKnown, m.name) || m.name == "interfaceid" && !keepID {
			continue
		}
		have[m.name] = m.raw
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(strconv.AppendQuote(b, m.name), ':'), m.raw...)
	}
	b = append(b, '}')
	if _, isUpdate := have["interfaceid"]; !isUpdate {
		for _, f := range []string{"type", "main", "useip", "ip", "dns", "port"} {
			if _, ok := have[f]; !ok {
				return catalog.Interface{}, errIncorrectArgs
			}
		}
	}
	if t, ok := have["type"]; ok {
		if n, err := strconv.Atoi(unquote(t)); err != nil || n < 1 || n > 4 {
			return catalog.Interface{}, errApp("Unknown interface type.")
		}
	}
	if ip, ok := have["ip"]; ok {
		if s, _ := strValue(bytes.TrimSpace(ip)); s != "" && !isIPAddress(s) {
			return catalog.Interface{}, errParams(`Invalid IP address "%s".`, s)
		}
	}
	f, err := decodeIface(b, "")
	if err != nil {
		return f, ifaceError(0, err)
	}
	return f, nil
}

func (w *configWriter) hostMassAdd(ctx context.Context, c *call) (any, error) {
	p := readMassParams(c.params)
	hostsRaw, ok := p.given("hosts")
	if !ok {
		return nil, errParams(`Invalid parameter "/": the parameter "hosts" is missing.`)
	}
	refs := massRefs(hostsRaw, "hostid")
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	err = w.edit(ctx, c, "hostid", nil, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		hosts, err := massHosts(snap, a, refs, errNoPermissionOp)
		if err != nil {
			return err
		}
		// Interfaces, added to each host's.
		var ups []catalog.HostUpdate
		if raw, ok := p.given("interfaces"); ok && len(hosts) > 0 {
			var news []catalog.Interface
			for _, el := range massList(raw) {
				f, err := massIface(el, false)
				if err != nil {
					return err
				}
				news = append(news, f)
			}
			if len(news) > 0 {
				for _, h := range hosts {
					l := append(slices.Clone(snap.HostByID(h).Interfaces), news...)
					ups = append(ups, catalog.HostUpdate{ID: h, Interfaces: &l})
				}
				if err := e.UpdateHosts(ups); err != nil {
					return massIfaceError(err, snap)
				}
			}
		}
		// Host groups, added to each host's.
		if raw, ok := p.given("groups"); ok && len(massList(raw)) > 0 {
			groups, err := massAddGroups(raw, hosts)
			if err != nil {
				return err
			}
			if len(hosts) == 0 {
				return errNoHostOrTemplate
			}
			if err := massGroupsWritable(snap, a, groups); err != nil {
				return err
			}
			ups = ups[:0]
			for _, h := range hosts {
				gs := slices.Clone(snap.HostByID(h).GroupIDs)
				for _, g := range groups {
					if !slices.Contains(gs, g) {
						gs = append(gs, g)
					}
				}
				ups = append(ups, catalog.HostUpdate{ID: h, GroupIDs: gs})
			}
			if err := e.UpdateHosts(ups); err != nil {
				return err
			}
		}
		// Templates, linked to each host.
		if raw, ok := p.given("templates"); ok {
			tmpls, err := massTemplates(snap, raw)
			if err != nil {
				return err
			}
			for i, h := range hosts {
				links := slices.Clone(snap.LinkedTemplates(h))
				for _, t := range tmpls {
					if !slices.Contains(links, t) {
						links = append(links, t)
					}
				}
				if _, err := e.LinkTemplates(h, links, "hosts["+strconv.Itoa(i)+"].templates"); err != nil {
					return err
				}
			}
		}
		// User macros, created on each host.
		if raw, ok := p.given("macros"); ok {
			ms, err := massMacros(raw, hosts)
			if err != nil {
				return err
			}
			var all []catalog.MacroFields
			for _, l := range ms {
				all = append(all, l...)
			}
			if len(all) > 0 {
				if _, err := e.CreateMacros(all); err != nil {
					return massMacroError(err, snap)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return echoIDs("hostids", refs), nil
}

func (w *configWriter) hostMassRemove(ctx context.Context, c *call) (any, error) {
	p := readMassParams(c.params)
	hostsRaw, ok := p.given("hostids")
	if !ok {
		return nil, errIncorrectArgs
	}
	refs := massList(hostsRaw)
	a, err := w.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	err = w.edit(ctx, c, "hostid", nil, func(e *catalog.Edit) error {
		snap := w.cat.Snapshot()
		hosts, err := massHosts(snap, a, refs, errNoPermissions)
		if err != nil {
			return err
		}
		// Interfaces, by address.
		if raw, ok := p.given("interfaces"); ok {
			if err := removeIfaces(e, snap, hosts, raw, nil); err != nil {
				return err
			}
		}
		// Templates unlinked, with or without clearing: Peregrine's
		// templates hold no items, so both unlink.
		var unlink []uint64
		var clear []uint64
		for _, name := range []string{"templateids", "templateids_clear"} {
			if raw, ok := p.given(name); ok {
				for _, r := range massList(raw) {
					id, ok := refID(r)
					if !ok {
						return errNoPermissions // 6.0: an SQL error
					}
					unlink = append(unlink, id)
					if name == "templateids_clear" {
						clear = append(clear, id)
					}
				}
			}
		}
		if len(unlink) > 0 {
			for i, h := range hosts {
				links := slices.DeleteFunc(slices.Clone(snap.LinkedTemplates(h)), func(t uint64) bool { return slices.Contains(unlink, t) })
				if _, err := e.SetTemplates(h, links, clear, "hosts["+strconv.Itoa(i)+"].templates"); err != nil {
					return err
				}
			}
		}
		// User macros, by name.
		if raw, ok := p["macros"]; ok {
			names := massMacroNames(raw)
			if names == nil {
				return errEmptyInput
			}
			var del []uint64
			for _, h := range hosts {
				for _, m := range snap.Macros(h) {
					if slices.Contains(names, m.Macro) {
						del = append(del, m.ID)
					}
				}
			}
			if len(del) > 0 {
				if err := e.DeleteMacros(del); err != nil {
					return err
				}
			}
		}
		// Host groups, as hostgroup.massremove does.
		if raw, ok := p.given("groupids"); ok {
			groups, err := massRemoveGroupIDs(raw, hosts)
			if err != nil {
				return err
			}
			return removeGroups(e, snap, a, groups, hosts)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return echoIDs("hostids", refs), nil
}

// massMacroNames reads host.massremove's "macros": names (nil for an
// empty list or null, which 6.0 refuses).
func massMacroNames(raw []byte) []string {
	elems := massList(raw)
	if len(elems) == 0 {
		return nil
	}
	out := []string{}
	for _, r := range elems {
		switch jsonKindOf(r) {
		case 's':
			s, _ := strValue(r)
			out = append(out, s)
		case 'i', 'f':
			out = append(out, string(r))
		}
		// An object names no macro (recorded: 6.0 deletes nothing for
		// {"macro": "{$A}"}).
	}
	return out
}

// massRemoveGroupIDs reads host.massremove's "groupids" as
// hostgroup.massremove's validator does, with the hosts.
func massRemoveGroupIDs(raw []byte, hosts []uint64) ([]uint64, error) {
	var ids zids
	if err := ids.read(raw, "/groupids"); err != nil {
		return nil, err
	}
	for i := range hosts {
		if slices.Contains(hosts[:i], hosts[i]) {
			return nil, invalid("/hostids/"+strconv.Itoa(i+1), "value ("+id(hosts[i])+") already exists")
		}
	}
	return ids, nil
}

// removeGroups takes the hosts out of the groups, which must exist and
// be writable; no host may be left without a group.
func removeGroups(e *catalog.Edit, snap *catalog.Snapshot, a access, groups, hosts []uint64) error {
	if len(hosts) == 0 {
		return errNoHostOrTemplate
	}
	if err := massGroupsWritable(snap, a, groups); err != nil {
		return err
	}
	var ups []catalog.HostUpdate
	for _, h := range hosts {
		cur := snap.HostOrTemplate(h).GroupIDs
		gs := slices.DeleteFunc(slices.Clone(cur), func(g uint64) bool { return slices.Contains(groups, g) })
		if len(gs) == 0 {
			return errHostWithoutGroup(snap.HostOrTemplate(h))
		}
		if len(gs) != len(cur) {
			ups = append(ups, catalog.HostUpdate{ID: h, GroupIDs: gs})
		}
	}
	if len(ups) == 0 {
		return nil
	}
	return e.UpdateHosts(ups)
}

// isIPAddress reports an IPv4 or IPv6 address.
func isIPAddress(s string) bool { return net.ParseIP(s) != nil }

// errHostWithoutGroup is 6.0's refusal to leave host (or template) h in
// no group.
func errHostWithoutGroup(h *catalog.Host) error {
	if h.IsTemplate {
		return errParams(`Template "%s" cannot be without host group.`, h.Host)
	}
	return errParams(`Host "%s" cannot be without host group.`, h.Host)
}
