package netdisc

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/autoreg"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/zbx/iprange"
)

// Event objects of discovery (Zabbix's).
const (
	ObjectDHost    = 1
	ObjectDService = 2
)

type svcKey struct {
	check uint64
	ip    string
	port  int
}

// index is a rule's discovered hosts and services as a sweep finds them
// (copies: the sweep changes them and stores the changes).
type index struct {
	hostByIP   map[string]*catalog.DHost
	hostByUniq map[string]*catalog.DHost // the unique check's value
	svc        map[svcKey]*catalog.DService
	hosts      map[uint64]*catalog.DHost
	uniq       uint64 // the rule's unique check, 0 if none
}

func newIndex(st *catalog.DiscoveryState, r *catalog.DRule) *index {
	x := &index{hostByIP: map[string]*catalog.DHost{}, hostByUniq: map[string]*catalog.DHost{},
		svc: map[svcKey]*catalog.DService{}, hosts: map[uint64]*catalog.DHost{}}
	for _, k := range r.Checks {
		if k.Uniq {
			x.uniq = k.ID
		}
	}
	for id, h := range st.Hosts {
		if h.DRuleID == r.ID {
			cp := *h
			x.hosts[id] = &cp
		}
	}
	for _, s := range st.Services {
		h := x.hosts[s.DHostID]
		if h == nil {
			continue
		}
		cp := *s
		x.svc[svcKey{s.DCheckID, s.IP, s.Port}] = &cp
		x.hostByIP[s.IP] = h
		if s.DCheckID == x.uniq && x.uniq != 0 && s.Value != "" {
			x.hostByUniq[s.Value] = h
		}
	}
	return x
}

// update collects one chunk's changes and events.
type update struct {
	d      *Discoverer
	rule   *catalog.DRule
	idx    *index
	now    int64
	change catalog.DiscoveryChange
	events []event.Event
}

func (u *update) emit(obj uint8, id uint64, value int) {
	u.events = append(u.events, event.Event{Source: event.SourceDiscovery, Object: obj, ObjectID: id, Value: uint8(value), Clock: u.now})
}

// hostStatus is how address settles the address's discovered host.
type hostStatus int

const (
	// hostFromProbes: up if a probe is up, else down (a sweep of
	// Peregrine's own, which has all the address's probes).
	hostFromProbes hostStatus = iota
	// hostUp, hostDown: as a proxy's host row says.
	hostUp
	hostDown
	// hostUntouched: a proxy's service rows whose host row comes in a
	// later request; the host's status is left as it is.
	hostUntouched
)

// address applies one address's probes, in the rule's check order, as
// 6.0 does (see the package documentation); dns is the address's DNS
// name of the services that answer.
func (u *update) address(ip, dns string, probes []probe, hs hostStatus) {
	x := u.idx
	svcUp := false
	var uniqValue string
	for i := range probes {
		p := &probes[i]
		svcUp = svcUp || p.up
		if k := &u.rule.Checks[p.check]; k.ID == x.uniq && p.up && x.uniq != 0 {
			uniqValue = p.value
		}
	}
	anyUp := (svcUp || hs == hostUp) && hs != hostDown
	host := x.hostByIP[ip]
	if uniqValue != "" {
		if h := x.hostByUniq[uniqValue]; h != nil {
			host = h
		}
	}
	if host == nil && !svcUp {
		return // never answered: nothing to say
	}
	hostChanged := false
	if host == nil {
		host = &catalog.DHost{ID: u.d.opts.Catalog.NewDHostID(), DRuleID: u.rule.ID, Status: catalog.DStatusDown}
		x.hosts[host.ID], x.hostByIP[ip] = host, host
		hostChanged = true
	}
	if uniqValue != "" {
		x.hostByUniq[uniqValue] = host
	}
	for i := range probes {
		p := &probes[i]
		k := &u.rule.Checks[p.check]
		key := svcKey{k.ID, ip, p.port}
		s := x.svc[key]
		if !p.up {
			if s == nil {
				continue
			}
			if s.Status == catalog.DStatusUp || s.LastDown == 0 {
				s.Status, s.LastDown, s.LastUp = catalog.DStatusDown, u.now, 0
				u.emit(ObjectDService, s.ID, catalog.DStatusLost)
			}
			u.change.Services = append(u.change.Services, s)
			u.emit(ObjectDService, s.ID, catalog.DStatusDown)
			continue
		}
		if s == nil {
			s = &catalog.DService{ID: u.d.opts.Catalog.NewDServiceID(), DCheckID: k.ID, IP: ip, Port: p.port, Status: catalog.DStatusDown}
			x.svc[key] = s
		}
		s.DHostID, s.Value, s.DNS = host.ID, p.value, dns
		if s.Status == catalog.DStatusDown || s.LastUp == 0 {
			s.Status, s.LastUp, s.LastDown = catalog.DStatusUp, u.now, 0
			u.emit(ObjectDService, s.ID, catalog.DStatusDiscover)
			if host.Status == catalog.DStatusDown || host.LastUp == 0 {
				host.Status, host.LastUp, host.LastDown = catalog.DStatusUp, u.now, 0
				hostChanged = true
				u.emit(ObjectDHost, host.ID, catalog.DStatusDiscover)
			}
		}
		u.change.Services = append(u.change.Services, s)
		u.emit(ObjectDService, s.ID, catalog.DStatusUp)
	}
	switch {
	case hs == hostUntouched:
	case anyUp:
		u.emit(ObjectDHost, host.ID, catalog.DStatusUp)
	default:
		if host.Status == catalog.DStatusUp || host.LastDown == 0 {
			host.Status, host.LastDown, host.LastUp = catalog.DStatusDown, u.now, 0
			hostChanged = true
			u.emit(ObjectDHost, host.ID, catalog.DStatusLost)
		}
		u.emit(ObjectDHost, host.ID, catalog.DStatusDown)
	}
	if hostChanged {
		u.change.Hosts = append(u.change.Hosts, host)
	}
}

// condCtx is what a discovery action's conditions are checked against.
type condCtx struct {
	ev       *event.Event
	rule     *catalog.DRule
	host     *catalog.DHost
	services []*catalog.DService // the event's service, or the host's
	now      int64
}

// context finds an event's discovered host, services and rule.
func (d *Discoverer) context(st *catalog.DiscoveryState, ev *event.Event) (condCtx, bool) {
	c := condCtx{ev: ev, now: d.opts.Now().Unix()}
	switch ev.Object {
	case ObjectDHost:
		c.host = st.Hosts[ev.ObjectID]
		if c.host == nil {
			return c, false
		}
		for _, s := range st.Services {
			if s.DHostID == c.host.ID {
				c.services = append(c.services, s)
			}
		}
		slices.SortFunc(c.services, func(a, b *catalog.DService) int { return int(a.ID) - int(b.ID) })
	case ObjectDService:
		s := st.Services[ev.ObjectID]
		if s == nil {
			return c, false
		}
		c.services = []*catalog.DService{s}
		c.host = st.Hosts[s.DHostID]
		if c.host == nil {
			return c, false
		}
	default:
		return c, false
	}
	c.rule = d.opts.Catalog.DRule(c.host.DRuleID)
	return c, c.rule != nil
}

// Matches reports whether a discovery action's filter accepts the
// discovery event (the alert engine asks it for send message).
func (d *Discoverer) Matches(a *catalog.Action, ev *event.Event) bool {
	c, ok := d.context(d.opts.Catalog.Discovery(), ev)
	return ok && d.holds(a, &c)
}

func (d *Discoverer) check(r *catalog.DRule, id uint64) *catalog.DCheck {
	for i := range r.Checks {
		if r.Checks[i].ID == id {
			return &r.Checks[i]
		}
	}
	return nil
}

// holds evaluates the action's filter.
func (d *Discoverer) holds(a *catalog.Action, c *condCtx) bool {
	return alert.FilterHolds(&a.Filter, func(cd *catalog.Condition) bool {
		eq := cd.Operator == catalog.OpEqual
		anySvc := func(f func(s *catalog.DService) bool) bool { return slices.ContainsFunc(c.services, f) }
		switch cd.ConditionType {
		case catalog.CondDHostIP:
			l, err := iprange.Parse(cd.Value)
			if err != nil {
				return false
			}
			return anySvc(func(s *catalog.DService) bool {
				a, err := netip.ParseAddr(s.IP)
				return err == nil && l.Contains(a) == eq
			})
		case catalog.CondDServiceType:
			return anySvc(func(s *catalog.DService) bool {
				k := d.check(c.rule, s.DCheckID)
				return k != nil && (strconv.Itoa(k.Type) == cd.Value) == eq
			})
		case catalog.CondDServicePort:
			ps, ok := iprange.Ports(cd.Value)
			return ok && anySvc(func(s *catalog.DService) bool {
				in := slices.ContainsFunc(ps, func(r [2]int) bool { return s.Port >= r[0] && s.Port <= r[1] })
				return in == eq
			})
		case catalog.CondDStatus:
			return strconv.Itoa(int(c.ev.Value)) == cd.Value
		case catalog.CondDUptime:
			n, err := strconv.ParseInt(cd.Value, 10, 64)
			if err != nil {
				return false
			}
			since := c.host.LastUp
			if c.ev.Object == ObjectDService && len(c.services) == 1 {
				since = c.services[0].LastUp
				if c.services[0].Status == catalog.DStatusDown {
					since = c.services[0].LastDown
				}
			} else if c.host.Status == catalog.DStatusDown {
				since = c.host.LastDown
			}
			age := c.now - since
			if cd.Operator == catalog.OpGreaterEq {
				return age >= n
			}
			return age <= n
		case catalog.CondDValue:
			return anySvc(func(s *catalog.DService) bool { return valueHolds(cd.Operator, s.Value, cd.Value) })
		case catalog.CondDRule:
			return (strconv.FormatUint(c.rule.ID, 10) == cd.Value) == eq
		case catalog.CondDCheck:
			return anySvc(func(s *catalog.DService) bool { return (strconv.FormatUint(s.DCheckID, 10) == cd.Value) == eq })
		case catalog.CondProxy:
			return (strconv.FormatUint(c.rule.ProxyID, 10) == cd.Value) == eq
		case catalog.CondDObject:
			return strconv.Itoa(int(c.ev.Object)) == cd.Value
		}
		return false
	})
}

// valueHolds is the received value condition: =, <>, like, not like,
// and >= and <= as numbers when both are numbers, else as text.
func valueHolds(op int, v, want string) bool {
	switch op {
	case catalog.OpEqual:
		return v == want
	case catalog.OpNotEqual:
		return v != want
	case catalog.OpLike:
		return strings.Contains(v, want)
	case catalog.OpNotLike:
		return !strings.Contains(v, want)
	case catalog.OpGreaterEq, catalog.OpLessEq:
		c := strings.Compare(v, want)
		a, e1 := strconv.ParseFloat(v, 64)
		b, e2 := strconv.ParseFloat(want, 64)
		if e1 == nil && e2 == nil {
			c = 0
			if a < b {
				c = -1
			} else if a > b {
				c = 1
			}
		}
		if op == catalog.OpGreaterEq {
			return c >= 0
		}
		return c <= 0
	}
	return false
}

// target is the host a discovery action acts on: named by the rule's
// host source, with an agent interface (the agent check's port, else
// 10050) and an SNMP interface when an SNMP check answered.
func (d *Discoverer) target(st *catalog.DiscoveryState, c *condCtx) autoreg.Target {
	var svcs []*catalog.DService
	for _, s := range st.Services {
		if s.DHostID == c.host.ID {
			svcs = append(svcs, s)
		}
	}
	slices.SortFunc(svcs, func(a, b *catalog.DService) int { return int(a.ID) - int(b.ID) })
	ip, dns := "", ""
	if len(svcs) > 0 {
		ip, dns = svcs[0].IP, svcs[0].DNS
	}
	name := func(source int) string {
		switch source {
		case 1:
			if dns != "" {
				return dns
			}
		case 3:
			for _, s := range svcs {
				if k := d.check(c.rule, s.DCheckID); k != nil && s.Value != "" && (k.HostSource == 3 || k.NameSource == 3) {
					return s.Value
				}
			}
		}
		return ip
	}
	hostSrc, nameSrc := 1, 0
	for _, k := range c.rule.Checks {
		if k.HostSource == 2 || k.HostSource == 3 {
			hostSrc = k.HostSource
		}
		if k.NameSource != 0 {
			nameSrc = k.NameSource
		}
	}
	t := autoreg.Target{Host: hostName(name(hostSrc)), Label: ip, ProxyID: c.rule.ProxyID}
	if nameSrc != 0 {
		t.Name = name(nameSrc)
	}
	agentPort, snmp := "", (*catalog.DCheck)(nil)
	var snmpPort string
	for _, s := range svcs {
		k := d.check(c.rule, s.DCheckID)
		if k == nil || s.Status != catalog.DStatusUp {
			continue
		}
		switch k.Type {
		case catalog.DCheckAgent:
			if agentPort == "" {
				agentPort = strconv.Itoa(s.Port)
			}
		case catalog.DCheckSNMPv1, catalog.DCheckSNMPv2, catalog.DCheckSNMPv3:
			if snmp == nil {
				snmp, snmpPort = k, strconv.Itoa(s.Port)
			}
		}
	}
	if agentPort != "" || snmp == nil {
		t.Interfaces = append(t.Interfaces, catalog.Interface{Type: catalog.InterfaceAgent, Main: true, UseIP: true, IP: ip, DNS: dns,
			Port: cmpOr(agentPort, "10050")})
	}
	if snmp != nil {
		t.Interfaces = append(t.Interfaces, catalog.Interface{Type: catalog.InterfaceSNMP, Main: true, UseIP: true, IP: ip, DNS: dns,
			Port: snmpPort, Details: snmpDetails(snmp)})
	}
	return t
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// snmpDetails are an SNMP interface's details from a check.
func snmpDetails(k *catalog.DCheck) map[string]string {
	switch k.Type {
	case catalog.DCheckSNMPv1:
		return map[string]string{"version": "1", "community": k.SNMPCommunity, "bulk": "1"}
	case catalog.DCheckSNMPv2:
		return map[string]string{"version": "2", "community": k.SNMPCommunity, "bulk": "1"}
	}
	return map[string]string{"version": "3", "bulk": "1", "securityname": k.SNMPv3SecurityName,
		"securitylevel": strconv.Itoa(k.SNMPv3SecurityLevel), "authprotocol": strconv.Itoa(k.SNMPv3AuthProtocol),
		"authpassphrase": k.SNMPv3AuthPassphrase, "privprotocol": strconv.Itoa(k.SNMPv3PrivProtocol),
		"privpassphrase": k.SNMPv3PrivPassphrase, "contextname": k.SNMPv3ContextName}
}

// hostName makes a host's technical name of a discovered name: letters,
// digits, space, dot, dash and underscore kept, anything else "_", at
// most 128 characters.
func hostName(s string) string {
	b := []byte(strings.TrimSpace(s))
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '.' || c == '-' || c == '_'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 128 {
		b = b[:128]
	}
	return string(b)
}

// serviceNames are the check types' names in messages
// ({DISCOVERY.SERVICE.NAME}).
var serviceNames = [...]string{"SSH", "LDAP", "SMTP", "FTP", "HTTP", "POP", "NNTP", "IMAP", "TCP", "Zabbix agent",
	"SNMPv1 agent", "SNMPv2 agent", "ICMP ping", "SNMPv3 agent", "HTTPS", "Telnet"}

func statusText(st int) string {
	if st == catalog.DStatusUp {
		return "Up"
	}
	return "Down"
}

// Macros are a discovery event's {DISCOVERY.*} macros for messages:
// DEVICE.IPADDRESS, DEVICE.DNS, DEVICE.STATUS ("Up" or "Down"),
// RULE.NAME and, of a service event, SERVICE.NAME, SERVICE.PORT,
// SERVICE.STATUS and SERVICE.VALUE; nil when the event's host or
// service is gone.
func (d *Discoverer) Macros(ev *event.Event) map[string]string {
	c, ok := d.context(d.opts.Catalog.Discovery(), ev)
	if !ok || len(c.services) == 0 {
		return nil
	}
	s := c.services[0]
	m := map[string]string{"DISCOVERY.DEVICE.IPADDRESS": s.IP, "DISCOVERY.DEVICE.DNS": s.DNS,
		"DISCOVERY.DEVICE.STATUS": statusText(c.host.Status), "DISCOVERY.RULE.NAME": c.rule.Name}
	if ev.Object == ObjectDService {
		if k := d.check(c.rule, s.DCheckID); k != nil && k.Type >= 0 && k.Type < len(serviceNames) {
			m["DISCOVERY.SERVICE.NAME"] = serviceNames[k.Type]
		}
		m["DISCOVERY.SERVICE.PORT"] = strconv.Itoa(s.Port)
		m["DISCOVERY.SERVICE.STATUS"] = statusText(s.Status)
		m["DISCOVERY.SERVICE.VALUE"] = s.Value
	}
	return m
}
