package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/iprange"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// Network discovery: drule.get, .create, .update and .delete,
// dcheck.get, dhost.get and dservice.get as 6.0 has them (recorded from
// 6.0.14; the conformance case "discovery"). drule.* is one of 6.0's
// legacy APIs: its gets read parameters as legacy gets do, and create
// and update check a rule field by field in 6.0's order and words
// ("Incorrect value for field ..."), not with the API input validator.
// Rules are for admins: a user's gets return nothing and a user's
// writes are refused ("No permissions to call ...", recorded).

// DRuleStore keeps discovery rules and what they found
// (*catalog.Catalog).
type DRuleStore interface {
	DRules() []catalog.DRule
	DRule(id uint64) *catalog.DRule
	Discovery() *catalog.DiscoveryState
	SaveDRules(ctx context.Context, rules []catalog.DRule, del []uint64) ([]uint64, error)
}

func (s *Server) registerDRules() {
	st, ok := s.opts.Catalog.(DRuleStore)
	if !ok {
		return
	}
	d := &drules{s: s, st: st}
	s.methods["drule.get"] = &method{role: RoleUser, call: d.get}
	s.methods["dcheck.get"] = &method{role: RoleUser, call: d.dcheckGet}
	s.methods["dhost.get"] = &method{role: RoleUser, call: d.dhostGet}
	s.methods["dservice.get"] = &method{role: RoleUser, call: d.dserviceGet}
	s.methods["drule.create"] = &method{role: RoleAdmin, call: d.create}
	s.methods["drule.update"] = &method{role: RoleAdmin, call: d.update}
	s.methods["drule.delete"] = &method{role: RoleAdmin, call: d.delete}
}

type drules struct {
	s  *Server
	st DRuleStore
}

var (
	druleSchema  = schema{id: "druleid", types: fieldTypes(`druleid:n proxy_hostid:n name:c iprange:c delay:c nextcheck:n status:n`)}
	dcheckSchema = schema{id: "dcheckid", types: fieldTypes(`dcheckid:n druleid:n type:n key_:c snmp_community:c ports:c
		snmpv3_securityname:c snmpv3_securitylevel:n snmpv3_authpassphrase:c snmpv3_privpassphrase:c uniq:n
		snmpv3_authprotocol:n snmpv3_privprotocol:n snmpv3_contextname:c host_source:n name_source:n`)}
	dhostSchema    = schema{id: "dhostid", types: fieldTypes(`dhostid:n druleid:n status:n lastup:n lastdown:n`)}
	dserviceSchema = schema{id: "dserviceid", types: fieldTypes(`dserviceid:n dhostid:n value:c port:n status:n lastup:n lastdown:n dcheckid:n ip:c dns:c`)}
)

func druleObject(r *catalog.DRule) object {
	return object{"druleid": id(r.ID), "proxy_hostid": id(r.ProxyID), "name": r.Name, "iprange": r.IPRange, "delay": r.Delay,
		"nextcheck": "0", "status": istr(r.Status)}
}

func dcheckObject(k *catalog.DCheck) object {
	return object{"dcheckid": id(k.ID), "druleid": id(k.DRuleID), "type": istr(k.Type), "key_": k.Key, "snmp_community": k.SNMPCommunity,
		"ports": k.Ports, "snmpv3_securityname": k.SNMPv3SecurityName, "snmpv3_securitylevel": istr(k.SNMPv3SecurityLevel),
		"snmpv3_authpassphrase": k.SNMPv3AuthPassphrase, "snmpv3_privpassphrase": k.SNMPv3PrivPassphrase, "uniq": boolStr(k.Uniq),
		"snmpv3_authprotocol": istr(k.SNMPv3AuthProtocol), "snmpv3_privprotocol": istr(k.SNMPv3PrivProtocol),
		"snmpv3_contextname": k.SNMPv3ContextName, "host_source": istr(k.HostSource), "name_source": istr(k.NameSource)}
}

func dhostObject(h *catalog.DHost) object {
	return object{"dhostid": id(h.ID), "druleid": id(h.DRuleID), "status": istr(h.Status),
		"lastup": strconv.FormatInt(h.LastUp, 10), "lastdown": strconv.FormatInt(h.LastDown, 10)}
}

func dserviceObject(v *catalog.DService) object {
	return object{"dserviceid": id(v.ID), "dhostid": id(v.DHostID), "value": v.Value, "port": istr(v.Port), "status": istr(v.Status),
		"lastup": strconv.FormatInt(v.LastUp, 10), "lastdown": strconv.FormatInt(v.LastDown, 10), "dcheckid": id(v.DCheckID),
		"ip": v.IP, "dns": v.DNS}
}

// druleGetParams are drule.get's parameters (6.0's).
type druleGetParams struct {
	getParams
	DRuleIDs      opt[ids] `json:"druleids"`
	DHostIDs      opt[ids] `json:"dhostids"`
	DServiceIDs   opt[ids] `json:"dserviceids"`
	SelectDHosts  sel      `json:"selectDHosts"`
	SelectDChecks sel      `json:"selectDChecks"`
}

// seesDiscovery is 6.0's rule: discovery is configured by admins; a
// user's gets return nothing.
func seesDiscovery(c *call) bool { return c.user.Role >= RoleAdmin }

// hostsOf are the rule's discovered hosts and the services of each.
func hostsOf(st *catalog.DiscoveryState, rule uint64) []*catalog.DHost {
	var out []*catalog.DHost
	for _, h := range st.Hosts {
		if h.DRuleID == rule {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b *catalog.DHost) int { return cmpU64(a.ID, b.ID) })
	return out
}

func servicesOf(st *catalog.DiscoveryState, host uint64) []*catalog.DService {
	var out []*catalog.DService
	for _, v := range st.Services {
		if v.DHostID == host {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b *catalog.DService) int { return cmpU64(a.ID, b.ID) })
	return out
}

func (d *drules) get(_ context.Context, c *call) (any, error) {
	var p druleGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	st := d.st.Discovery()
	var objs []object
	rules := d.st.DRules()
	for i := range rules {
		r := &rules[i]
		if !seesDiscovery(c) || !idsPass(p.DRuleIDs, r.ID) {
			continue
		}
		hosts := hostsOf(st, r.ID)
		if p.DHostIDs.Given() && !slices.ContainsFunc(hosts, func(h *catalog.DHost) bool { return idsPass(p.DHostIDs, h.ID) }) {
			continue
		}
		if p.DServiceIDs.Given() && !slices.ContainsFunc(hosts, func(h *catalog.DHost) bool {
			return slices.ContainsFunc(servicesOf(st, h.ID), func(v *catalog.DService) bool { return idsPass(p.DServiceIDs, v.ID) })
		}) {
			continue
		}
		o := druleObject(r)
		if sl := p.SelectDChecks; sl.list() {
			list := make([]object, len(r.Checks))
			for j := range r.Checks {
				list[j] = dcheckObject(&r.Checks[j])
			}
			o["dchecks"] = nonNil(sl.shape(p.limitSelect(list), "dcheckid"))
		}
		if sl := p.SelectDHosts; sl.list() {
			var list []object
			for _, h := range hosts {
				list = append(list, dhostObject(h))
			}
			o["dhosts"] = nonNil(sl.shape(p.limitSelect(list), "dhostid"))
		}
		objs = append(objs, o)
	}
	return p.applySchema(objs, &druleSchema, "druleid", "name")
}

// dcheckGetParams are dcheck.get's parameters.
type dcheckGetParams struct {
	getParams
	DCheckIDs   opt[ids] `json:"dcheckids"`
	DRuleIDs    opt[ids] `json:"druleids"`
	DServiceIDs opt[ids] `json:"dserviceids"`
}

func (d *drules) dcheckGet(_ context.Context, c *call) (any, error) {
	var p dcheckGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	st := d.st.Discovery()
	var objs []object
	rules := d.st.DRules()
	for i := range rules {
		for j := range rules[i].Checks {
			k := &rules[i].Checks[j]
			if !seesDiscovery(c) || !idsPass(p.DCheckIDs, k.ID) || !idsPass(p.DRuleIDs, k.DRuleID) {
				continue
			}
			if p.DServiceIDs.Given() && !anyService(st, func(v *catalog.DService) bool { return v.DCheckID == k.ID && idsPass(p.DServiceIDs, v.ID) }) {
				continue
			}
			objs = append(objs, dcheckObject(k))
		}
	}
	sortByID(objs, "dcheckid")
	return p.applySchema(objs, &dcheckSchema, "dcheckid", "druleid")
}

func anyService(st *catalog.DiscoveryState, f func(v *catalog.DService) bool) bool {
	for _, v := range st.Services {
		if f(v) {
			return true
		}
	}
	return false
}

// dhostGetParams are dhost.get's parameters.
type dhostGetParams struct {
	getParams
	DHostIDs        opt[ids] `json:"dhostids"`
	DRuleIDs        opt[ids] `json:"druleids"`
	DServiceIDs     opt[ids] `json:"dserviceids"`
	SelectDRules    sel      `json:"selectDRules"`
	SelectDServices sel      `json:"selectDServices"`
}

func (d *drules) dhostGet(_ context.Context, c *call) (any, error) {
	var p dhostGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	st := d.st.Discovery()
	var objs []object
	for _, h := range st.Hosts {
		if !seesDiscovery(c) || !idsPass(p.DHostIDs, h.ID) || !idsPass(p.DRuleIDs, h.DRuleID) {
			continue
		}
		svcs := servicesOf(st, h.ID)
		if p.DServiceIDs.Given() && !slices.ContainsFunc(svcs, func(v *catalog.DService) bool { return idsPass(p.DServiceIDs, v.ID) }) {
			continue
		}
		o := dhostObject(h)
		if sl := p.SelectDServices; sl.list() {
			var list []object
			for _, v := range svcs {
				list = append(list, dserviceObject(v))
			}
			o["dservices"] = nonNil(sl.shape(p.limitSelect(list), ""))
		}
		if sl := p.SelectDRules; sl.list() {
			var list []object
			if r := d.st.DRule(h.DRuleID); r != nil {
				list = append(list, druleObject(r))
			}
			o["drules"] = nonNil(sl.shape(list, ""))
		}
		objs = append(objs, o)
	}
	sortByID(objs, "dhostid")
	return p.applySchema(objs, &dhostSchema, "dhostid", "druleid")
}

// dserviceGetParams are dservice.get's parameters.
type dserviceGetParams struct {
	getParams
	DServiceIDs  opt[ids] `json:"dserviceids"`
	DHostIDs     opt[ids] `json:"dhostids"`
	DCheckIDs    opt[ids] `json:"dcheckids"`
	DRuleIDs     opt[ids] `json:"druleids"`
	SelectDRules sel      `json:"selectDRules"`
	SelectDHosts sel      `json:"selectDHosts"`
	SelectHosts  sel      `json:"selectHosts"`
}

func (d *drules) dserviceGet(ctx context.Context, c *call) (any, error) {
	var p dserviceGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := d.s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	st := d.st.Discovery()
	snap := d.s.opts.Catalog.Snapshot()
	var objs []object
	for _, v := range st.Services {
		h := st.Hosts[v.DHostID]
		if !seesDiscovery(c) || h == nil || !idsPass(p.DServiceIDs, v.ID) || !idsPass(p.DHostIDs, v.DHostID) ||
			!idsPass(p.DCheckIDs, v.DCheckID) || !idsPass(p.DRuleIDs, h.DRuleID) {
			continue
		}
		o := dserviceObject(v)
		if sl := p.SelectDHosts; sl.list() {
			o["dhosts"] = nonNil(sl.shape([]object{dhostObject(h)}, ""))
		}
		if sl := p.SelectDRules; sl.list() {
			var list []object
			if r := d.st.DRule(h.DRuleID); r != nil {
				list = append(list, druleObject(r))
			}
			o["drules"] = nonNil(sl.shape(list, ""))
		}
		if sl := p.SelectHosts; sl.list() {
			// The hosts with an interface on the service's address.
			var list []object
			for _, hh := range snap.HostsWithIP(v.IP) {
				if a.canRead(hh) {
					list = append(list, hostObject(hh))
				}
			}
			o["hosts"] = nonNil(sl.shape(list, ""))
		}
		objs = append(objs, o)
	}
	sortByID(objs, "dserviceid")
	return p.applySchema(objs, &dserviceSchema, "dserviceid", "dhostid", "ip")
}

// druleParams is one object of drule.create or .update as 6.0 reads it:
// any member is taken (unknown ones ignored), values as PHP sees them.
type druleParams map[string]json.RawMessage

func (m druleParams) str(k string) (string, bool) {
	raw, ok := m[k]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	return string(raw), true
}

var (
	timeUnitRe  = regexp.MustCompile(`^([0-9]+)([smhdw]?)$`)
	unitSeconds = map[string]int64{"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
)

var userMacroRe = regexp.MustCompile(`^\{\$[A-Z0-9_.]+(:.*)?\}$`)

// checkDelay is 6.0's check of a rule's delay: a user macro, or a time
// of 1 second to 7 days.
func checkDelay(v string) error {
	if userMacroRe.MatchString(v) {
		return nil
	}
	m := timeUnitRe.FindStringSubmatch(v)
	if m == nil {
		return errParams(`Incorrect value for field "delay": a time unit is expected.`)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		n = math.MaxInt64
	}
	if mult := unitSeconds[m[2]]; n > 0 && n <= math.MaxInt64/mult {
		n *= mult
	} else if n > 0 {
		n = math.MaxInt64
	}
	if n < 1 || n > 604800 {
		return errParams(`Incorrect value for field "delay": value must be one of 1-604800.`)
	}
	return nil
}

// maxDRuleNameLen is the length of 6.0's drules.name.
const maxDRuleNameLen = 255

// rule reads one object over base (the rule as it is, for update) and
// checks it in 6.0's order.
func (d *drules) rule(m druleParams, base catalog.DRule, create bool) (catalog.DRule, error) {
	r := base
	if v, ok := m.str("name"); ok {
		r.Name = v
	} else if create {
		return r, errParams(`Field "name" is mandatory.`)
	}
	if r.Name == "" {
		return r, errParams(`Incorrect value for field "name": cannot be empty.`)
	}
	if n := utf8.RuneCountInString(r.Name); n > maxDRuleNameLen {
		// 6.0.14's legacy words for drules.name (varchar 255).
		return r, errParams(`Value "%s" is too long for field "name" - %d characters. Allowed length is %d characters.`, r.Name, n, maxDRuleNameLen)
	}
	if v, ok := m.str("iprange"); ok || create {
		r.IPRange = v
		if v == "" {
			return r, errParams(`Incorrect value for field "iprange": cannot be empty.`)
		}
		if _, err := iprange.Parse(v); err != nil {
			return r, errParams(`Incorrect value for field "iprange": %s.`, err.Error())
		}
	}
	if v, ok := m.str("delay"); ok {
		if err := checkDelay(v); err != nil {
			return r, err
		}
		r.Delay = v
	} else if create {
		r.Delay = "1h"
	}
	if v, ok := m.str("status"); ok {
		if v != "0" && v != "1" {
			return r, errParams(`Incorrect value "%s" for "status" field.`, v)
		}
		r.Status, _ = strconv.Atoi(v)
	}
	if v, ok := m.str("proxy_hostid"); ok {
		pid, err := strconv.ParseUint(v, 10, 64)
		if err != nil || pid != 0 && d.s.opts.Catalog.Snapshot().Proxy(pid) == nil {
			return r, errParams(`Incorrect value "%s" for "proxy_hostid" field.`, v)
		}
		r.ProxyID = pid
	}
	raw, given := m["dchecks"]
	if !given && !create {
		return r, nil
	}
	var list []druleParams
	if given {
		var objs map[string]druleParams
		if json.Unmarshal(raw, &list) != nil && json.Unmarshal(raw, &objs) == nil {
			for _, o := range objs {
				list = append(list, o)
			}
		}
	}
	if len(list) == 0 {
		return r, errParams("Cannot save discovery rule without checks.")
	}
	checks := make([]catalog.DCheck, len(list))
	uniq := 0
	for i, cm := range list {
		k, err := dcheck(cm)
		if err != nil {
			return r, err
		}
		if k.ID != 0 && !slices.ContainsFunc(base.Checks, func(o catalog.DCheck) bool { return o.ID == k.ID }) {
			k.ID = 0
		}
		for _, o := range checks[:i] {
			if sameCheck(&o, &k) {
				return r, errParams("Checks should be unique.")
			}
		}
		if k.Uniq {
			uniq++
		}
		checks[i] = k
	}
	if uniq > 1 {
		return r, errParams("Only one check can be unique.")
	}
	r.Checks = checks
	return r, nil
}

// sameCheck is 6.0's test of two checks being one.
func sameCheck(a, b *catalog.DCheck) bool {
	x, y := *a, *b
	x.ID, y.ID, x.Uniq, y.Uniq, x.HostSource, y.HostSource, x.NameSource, y.NameSource = 0, 0, false, false, 0, 0, 0, 0
	return x == y
}

// valueCheck reports whether checks of the type have a value (agent and
// SNMP): only those may be unique or name hosts.
func valueCheck(t int) bool {
	return t == catalog.DCheckAgent || t == catalog.DCheckSNMPv1 || t == catalog.DCheckSNMPv2 || t == catalog.DCheckSNMPv3
}

// dcheck reads and checks one check as 6.0 does (recorded texts).
func dcheck(m druleParams) (catalog.DCheck, error) {
	k := catalog.DCheck{Ports: "0", HostSource: 1}
	intOf := func(f string, dst *int, ok func(int) bool) error {
		v, set := m.str(f)
		if !set {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || !ok(n) {
			return errParams(`Incorrect value "%s" for "%s" field.`, v, f)
		}
		*dst = n
		return nil
	}
	if v, ok := m.str("dcheckid"); ok {
		k.ID, _ = strconv.ParseUint(v, 10, 64)
	}
	if _, ok := m.str("type"); !ok {
		return k, errParams(`Field "type" is mandatory.`)
	}
	if err := intOf("type", &k.Type, func(n int) bool { return n >= 0 && n <= 15 }); err != nil {
		return k, err
	}
	if v, ok := m.str("ports"); ok {
		if _, good := iprange.Ports(v); !good {
			return k, errParams("Incorrect port range.")
		}
		k.Ports = v
	}
	k.Key, _ = m.str("key_")
	k.SNMPCommunity, _ = m.str("snmp_community")
	switch k.Type {
	case catalog.DCheckAgent:
		if _, ok := m.str("key_"); !ok {
			return k, errParams(`Field "key_" is mandatory.`)
		}
		if _, err := itemkey.Parse(k.Key); err != nil {
			var se *itemkey.SyntaxError
			if errors.As(err, &se) {
				return k, errParams(`Invalid key "%s": %s.`, k.Key, se.Zabbix())
			}
			return k, errParams(`Invalid key "%s": %v.`, k.Key, err)
		}
	case catalog.DCheckSNMPv1, catalog.DCheckSNMPv2:
		if k.SNMPCommunity == "" {
			return k, errParams("Incorrect SNMP community.")
		}
		fallthrough
	case catalog.DCheckSNMPv3:
		if k.Key == "" {
			return k, errParams("Incorrect SNMP OID.")
		}
	}
	k.SNMPv3SecurityName, _ = m.str("snmpv3_securityname")
	k.SNMPv3AuthPassphrase, _ = m.str("snmpv3_authpassphrase")
	k.SNMPv3PrivPassphrase, _ = m.str("snmpv3_privpassphrase")
	k.SNMPv3ContextName, _ = m.str("snmpv3_contextname")
	for _, f := range []struct {
		name string
		dst  *int
		ok   func(int) bool
	}{
		{"snmpv3_securitylevel", &k.SNMPv3SecurityLevel, func(n int) bool { return n >= 0 && n <= 2 }},
		{"snmpv3_authprotocol", &k.SNMPv3AuthProtocol, func(n int) bool { return n >= 0 && n <= 5 }},
		{"snmpv3_privprotocol", &k.SNMPv3PrivProtocol, func(n int) bool { return n >= 0 && n <= 5 }},
	} {
		if err := intOf(f.name, f.dst, f.ok); err != nil {
			return k, err
		}
	}
	var u int
	if err := intOf("uniq", &u, func(n int) bool { return n == 0 || n == 1 }); err != nil {
		return k, err
	}
	k.Uniq = u == 1
	if k.Uniq && !valueCheck(k.Type) {
		return k, errParams("Only Zabbix agent, SNMPv1, SNMPv2 and SNMPv3 checks can be made unique.")
	}
	for _, f := range []struct {
		name string
		dst  *int
		lo   int
	}{{"host_source", &k.HostSource, 1}, {"name_source", &k.NameSource, 0}} {
		v, ok := m.str(f.name)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		hi := 2
		if valueCheck(k.Type) {
			hi = 3
		}
		if err != nil || n < f.lo || n > hi {
			return k, errParams(`Incorrect value for field "%s": %s.`, f.name, v)
		}
		*f.dst = n
	}
	return k, nil
}

// druleObjects reads drule.create's and .update's params: one object or a
// list of them.
func druleObjects(raw json.RawMessage) ([]druleParams, error) {
	raw = bytes.TrimSpace(raw)
	if emptyParams(raw) || string(raw) == "[]" || string(raw) == "{}" {
		return nil, errParams("Empty input parameter.")
	}
	var one druleParams
	if raw[0] == '{' {
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, errParams(`Invalid parameter "/": an array or object is expected.`)
		}
		return []druleParams{one}, nil
	}
	var list []druleParams
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	return list, nil
}

func (d *drules) save(ctx context.Context, rules []catalog.DRule, del []uint64) ([]uint64, error) {
	ids, err := d.st.SaveDRules(ctx, rules, del)
	var ex *catalog.DRuleExistsError
	if errors.As(err, &ex) {
		return nil, errParams("%s", ex.Error())
	}
	if err != nil {
		d.s.opts.Logger.Error("api: cannot save discovery rules", "err", err)
		return nil, errApp("Cannot save the discovery rules.")
	}
	return ids, nil
}

func (d *drules) create(ctx context.Context, c *call) (any, error) {
	objs, err := druleObjects(c.params)
	if err != nil {
		return nil, err
	}
	rules := make([]catalog.DRule, len(objs))
	for i, m := range objs {
		if rules[i], err = d.rule(m, catalog.DRule{}, true); err != nil {
			return nil, err
		}
	}
	ids, err := d.save(ctx, rules, nil)
	if err != nil {
		return nil, err
	}
	return idResult("druleids", ids), nil
}

func (d *drules) update(ctx context.Context, c *call) (any, error) {
	objs, err := druleObjects(c.params)
	if err != nil {
		return nil, err
	}
	rules := make([]catalog.DRule, len(objs))
	for i, m := range objs {
		v, ok := m.str("druleid")
		if !ok {
			return nil, errParams(`Field "druleid" is mandatory.`)
		}
		rid, _ := strconv.ParseUint(v, 10, 64)
		base := d.st.DRule(rid)
		if base == nil {
			// Invalid params here, an application error for delete
			// (recorded from 6.0.14).
			return nil, errParams("No permissions to referred object or it does not exist!")
		}
		if rules[i], err = d.rule(m, *base, false); err != nil {
			return nil, err
		}
	}
	ids, err := d.save(ctx, rules, nil)
	if err != nil {
		return nil, err
	}
	return idResult("druleids", ids), nil
}

func (d *drules) delete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeValidatedIDs(c.params)
	if err != nil {
		return nil, err
	}
	for _, rid := range ids {
		if d.st.DRule(rid) == nil {
			return nil, errNoPermissions
		}
	}
	// A rule an action's condition names stays (recorded from 6.0.14).
	if d.s.opts.Alerting != nil {
		for _, a := range d.s.opts.Alerting.AlertConfig().SortedActions() {
			for _, cd := range a.Filter.Conditions {
				rid, _ := strconv.ParseUint(cd.Value, 10, 64)
				if cd.ConditionType == catalog.CondDRule && slices.Contains(ids, rid) {
					return nil, errParams(`Discovery rule "%s" is used in "%s" action.`, d.st.DRule(rid).Name, a.Name)
				}
			}
		}
	}
	if _, err := d.save(ctx, nil, ids); err != nil {
		return nil, err
	}
	return idResult("druleids", ids), nil
}

// discoveryCondition checks a discovery action's condition value as
// 6.0 does (recorded from 6.0.14).
func (s *Server) discoveryCondition(c *catalog.Condition, path string) error {
	bad := func(msg string) error { return errParams(`Invalid parameter "%s/value": %s.`, path, msg) }
	switch c.ConditionType {
	case catalog.CondDHostIP:
		if _, err := iprange.Parse(c.Value); err != nil {
			return bad(err.Error())
		}
	case catalog.CondDServiceType:
		if n, err := strconv.Atoi(c.Value); err != nil || n < 0 || n > 15 || c.Value != strconv.Itoa(n) {
			return bad("value must be one of 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15")
		}
	case catalog.CondDServicePort:
		if _, ok := iprange.Ports(c.Value); !ok {
			return bad("invalid range expression")
		}
	case catalog.CondDStatus:
		if !slices.Contains([]string{"0", "1", "2", "3"}, c.Value) {
			return bad("value must be one of 0, 1, 2, 3")
		}
	case catalog.CondDUptime:
		if _, err := strconv.ParseUint(c.Value, 10, 31); err != nil {
			return bad("an integer is expected")
		}
	case catalog.CondDObject:
		if c.Value != "1" && c.Value != "2" {
			return bad("value must be one of 1, 2")
		}
	case catalog.CondDRule:
		rid, _ := strconv.ParseUint(c.Value, 10, 64)
		if st, ok := s.opts.Catalog.(DRuleStore); !ok || st.DRule(rid) == nil {
			return errApp("Incorrect action condition discovery rule. Discovery rule does not exist or you have no access to it.")
		}
	case catalog.CondProxy:
		pid, _ := strconv.ParseUint(c.Value, 10, 64)
		if s.opts.Catalog.Snapshot().Proxy(pid) == nil {
			return errApp("Incorrect action condition proxy. Proxy does not exist or you have no access to it.")
		}
	case catalog.CondDValue, catalog.CondDCheck:
	}
	return nil
}
