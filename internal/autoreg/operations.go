package autoreg

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// Matches reports whether an auto-registration action's filter accepts
// the registration an event records (its objectid). The alert engine
// asks it for the actions' send-message operations.
func (r *Registrar) Matches(a *catalog.Action, ev *event.Event) bool {
	h, ok := r.Lookup(ev.ObjectID)
	if !ok {
		return false
	}
	return Matches(a, &h, r.opts.Catalog.Snapshot())
}

// Matches reports whether an action's filter accepts h: host metadata
// and host name like (contains), not like, matches and does not match a
// regular expression (a global one as "@name"), and proxy equal or not.
func Matches(a *catalog.Action, h *Host, snap *catalog.Snapshot) bool {
	return alert.FilterHolds(&a.Filter, func(c *catalog.Condition) bool {
		switch c.ConditionType {
		case catalog.CondHostName:
			return textCond(c, h.Host, snap)
		case catalog.CondHostMetadata:
			return textCond(c, h.HostMetadata, snap)
		case catalog.CondProxy:
			id, _ := strconv.ParseUint(c.Value, 10, 64)
			return (id == h.ProxyID) == (c.Operator == catalog.OpEqual)
		}
		return false
	})
}

// regexpCache keeps compiled condition expressions.
var regexpCache = reCache{m: map[string]*regexp.Regexp{}}

// reCache is a bounded map of compiled expressions: emptied when full
// (the actions' conditions are few; a flood of edits cannot grow it).
type reCache struct {
	mu sync.Mutex
	m  map[string]*regexp.Regexp
}

func (c *reCache) get(k string) (*regexp.Regexp, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	re, ok := c.m[k]
	return re, ok
}

func (c *reCache) put(k string, re *regexp.Regexp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= 1024 {
		clear(c.m)
	}
	c.m[k] = re
}

func textCond(c *catalog.Condition, v string, snap *catalog.Snapshot) bool {
	switch c.Operator {
	case catalog.OpLike:
		return strings.Contains(v, c.Value)
	case catalog.OpNotLike:
		return !strings.Contains(v, c.Value)
	case catalog.OpRegexp, catalog.OpNotRegexp:
		m := matchRegexp(c.Value, v, snap)
		return m == (c.Operator == catalog.OpRegexp)
	}
	return false
}

// matchRegexp matches v against a condition's expression: "@name" is a
// global regular expression; otherwise the expression itself (RE2 syntax;
// one that does not compile matches nothing).
func matchRegexp(expr, v string, snap *catalog.Snapshot) bool {
	if name, ok := strings.CutPrefix(expr, "@"); ok && snap != nil {
		if g := snap.RegexpByName(name); g != nil {
			return g.Match(v)
		}
		return false
	}
	re, ok := regexpCache.get(expr)
	if !ok {
		var err error
		if re, err = regexp.Compile(expr); err != nil {
			re = nil
		}
		regexpCache.put(expr, re)
	}
	return re != nil && re.MatchString(v)
}

// Target is the host an action's host operations act on, found by its
// technical name: an auto-registered agent or a discovered device
// (package netdisc).
type Target struct {
	Host string
	Name string // the visible name of a host created; "" the technical name
	// Interfaces are those of a host created (none: a host without
	// interfaces).
	Interfaces []catalog.Interface
	// TLS is the encryption of a host created (zero: none).
	TLS catalog.HostTLS
	// Label names the target in logs.
	Label string
	// ProxyID is the proxy that monitors a host created (0, or a proxy
	// deleted since: the server): the proxy the agent registered
	// through, or that runs the discovery rule.
	ProxyID uint64
}

// Plan is what the matching actions do to one host.
type Plan struct {
	target        Target
	remove        bool
	add           bool // create the host if missing
	groups        []uint64
	ungroups      []uint64
	link, unlink  []uint64
	enable        *bool
	inventoryMode bool
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool { return !p.add && !p.remove && len(p.ungroups)+len(p.unlink) == 0 }

// PlanOperations collects the host operations of the enabled actions of
// event source src that match accepts, in action ID order. Every
// operation but "remove host", "remove from host group" and "unlink
// template" creates the host first if it does not exist, as in Zabbix;
// send message and remote command are not host operations (the alert
// engine sends the messages).
func PlanOperations(t Target, acts []*catalog.Action, src int, match func(a *catalog.Action) bool) *Plan {
	p := &Plan{target: t}
	for _, a := range acts {
		if a.Status != 0 || a.EventSource != src || !match(a) {
			continue
		}
		p.Add(a)
	}
	return p
}

// Add adds the host operations of action a.
func (p *Plan) Add(a *catalog.Action) {
	for _, op := range a.Operations {
		switch op.OperationType {
		case catalog.OpAddHost:
			p.add = true
		case catalog.OpRemoveHost:
			p.remove = true
		case catalog.OpAddToGroup:
			p.add, p.groups = true, append(p.groups, op.OpGroups...)
		case catalog.OpRemoveFromGroup:
			p.ungroups = append(p.ungroups, op.OpGroups...)
		case catalog.OpLinkTemplate:
			p.add, p.link = true, append(p.link, op.OpTemplates...)
		case catalog.OpUnlinkTemplate:
			p.unlink = append(p.unlink, op.OpTemplates...)
		case catalog.OpEnableHost, catalog.OpDisableHost:
			on := op.OperationType == catalog.OpEnableHost
			p.add, p.enable = true, &on
		case catalog.OpSetHostInventoryMod:
			p.add, p.inventoryMode = true, true
		}
	}
}

// planFor is PlanOperations for an auto-registered host.
func planFor(h *Host, acts []*catalog.Action, snap *catalog.Snapshot, psk catalog.AutoregSettings) *Plan {
	t := Target{Host: h.Host, Label: h.Host, ProxyID: h.ProxyID}
	if f, ok := agentInterface(h); ok {
		t.Interfaces = []catalog.Interface{f}
	}
	if h.TLSAccepted == 2 {
		t.TLS = catalog.HostTLS{Connect: 2, Accept: 2, PSKIdentity: psk.PSKIdentity, PSK: psk.PSK}
	}
	return PlanOperations(t, acts, catalog.SourceAutoreg, func(a *catalog.Action) bool { return Matches(a, h, snap) })
}

// Editor is the catalog a plan is applied to (*catalog.Catalog).
type Editor interface {
	Edit(ctx context.Context, fn func(e *catalog.Edit) error) (catalog.EditResult, error)
}

// ApplyPlans applies the plans in one catalog edit; if the edit fails,
// each plan is applied in an edit of its own, so that one host the
// catalog refuses does not hold the others. New hosts go to
// discoveryGroup (0: the operations' groups only). It returns the hosts
// created and the refusals, each with its plan's target.
func ApplyPlans(ctx context.Context, ed Editor, plans []*Plan, discoveryGroup uint64) (created int, errs []PlanError) {
	if len(plans) == 0 {
		return 0, nil
	}
	res, err := ed.Edit(ctx, func(e *catalog.Edit) error { return applyPlans(e, plans, discoveryGroup) })
	if err == nil {
		return res.HostsCreated, nil
	}
	if len(plans) == 1 {
		return 0, []PlanError{{Target: plans[0].target.Label, Err: err}}
	}
	for _, p := range plans {
		res, err := ed.Edit(ctx, func(e *catalog.Edit) error { return applyPlans(e, []*Plan{p}, discoveryGroup) })
		if err != nil {
			errs = append(errs, PlanError{Target: p.target.Label, Err: err})
			continue
		}
		created += res.HostsCreated
	}
	return created, errs
}

// PlanError is a plan the catalog refused.
type PlanError struct {
	Target string
	Err    error
}

// runOperations applies the batch's plans (ApplyPlans).
func (r *Registrar) runOperations(ctx context.Context, hosts []Host) {
	snap := r.opts.Catalog.Snapshot()
	acts := r.opts.Catalog.AlertConfig().SortedActions()
	psk := r.opts.Catalog.AutoregSettings()
	var plans []*Plan
	for i := range hosts {
		if p := planFor(&hosts[i], acts, snap, psk); !p.Empty() {
			plans = append(plans, p)
		}
	}
	var dg uint64
	if r.opts.DiscoveryGroup != nil {
		dg = r.opts.DiscoveryGroup()
	}
	created, errs := ApplyPlans(ctx, r.opts.Catalog, plans, dg)
	r.m.hostsCreated.Add(uint64(created))
	for _, e := range errs {
		r.m.opErrors.Inc()
		r.log.Warn("autoreg: the catalog refused an auto-registration action's operations", "host", e.Target, "err", e.Err)
	}
}

// applyPlans runs plans within one edit.
func applyPlans(e *catalog.Edit, plans []*Plan, discoveryGroup uint64) error {
	for _, p := range plans {
		if err := applyPlan(e, p, discoveryGroup); err != nil {
			return err
		}
	}
	return nil
}

func applyPlan(e *catalog.Edit, p *Plan, discoveryGroup uint64) error {
	h := e.HostNamed(p.target.Host)
	if p.remove {
		if h == nil {
			return nil
		}
		return e.DeleteHosts([]uint64{h.ID})
	}
	if h == nil {
		if !p.add {
			return nil
		}
		groups := slices.Clone(p.groups)
		if discoveryGroup != 0 {
			groups = append(groups, discoveryGroup)
		}
		groups = dedup(slices.DeleteFunc(groups, func(g uint64) bool { return slices.Contains(p.ungroups, g) }))
		nh := catalog.NewHost{Host: p.target.Host, Name: p.target.Name, GroupIDs: groups, Disabled: p.enable != nil && !*p.enable,
			Interfaces: slices.Clone(p.target.Interfaces), TLS: p.target.TLS}
		if _, err := e.CreateHosts([]catalog.NewHost{nh}); err != nil {
			return err
		}
		if h = e.HostNamed(p.target.Host); h == nil {
			return nil
		}
		// A proxy deleted since: the host is the server's.
		if p.target.ProxyID != 0 && e.ProxyByID(p.target.ProxyID) != nil {
			if err := e.SetHostsProxy([]uint64{h.ID}, p.target.ProxyID); err != nil {
				return err
			}
		}
	} else {
		var up catalog.HostUpdate
		up.ID = h.ID
		groups := dedup(append(slices.Clone(h.GroupIDs), p.groups...))
		groups = slices.DeleteFunc(groups, func(g uint64) bool { return slices.Contains(p.ungroups, g) })
		if len(groups) > 0 && !slices.Equal(groups, h.GroupIDs) {
			up.GroupIDs = groups
		}
		if p.enable != nil && *p.enable != h.Enabled {
			up.Enabled = p.enable
		}
		if up.GroupIDs != nil || up.Enabled != nil {
			if err := e.UpdateHosts([]catalog.HostUpdate{up}); err != nil {
				return err
			}
		}
	}
	if len(p.link)+len(p.unlink) > 0 {
		cur := e.LinkedTemplates(h.ID)
		want := dedup(append(slices.Clone(cur), p.link...))
		want = slices.DeleteFunc(want, func(t uint64) bool { return slices.Contains(p.unlink, t) })
		if !slices.Equal(want, cur) {
			if _, err := e.SetTemplates(h.ID, want, p.unlink, "templates"); err != nil {
				return err
			}
		}
	}
	return nil
}

// agentInterface is the Zabbix agent interface of a new host: by DNS
// name for an agent whose HostInterface is a name, else by IP; none if
// the registration has neither (a proxy that sent no address).
func agentInterface(h *Host) (catalog.Interface, bool) {
	port := "10050"
	if h.Port != 0 {
		port = strconv.Itoa(int(h.Port))
	}
	useIP := h.Flag != ConnDNS && h.IP != "" || h.DNS == ""
	if useIP && h.IP == "" {
		return catalog.Interface{}, false
	}
	return catalog.Interface{Type: catalog.InterfaceAgent, Main: true, UseIP: useIP, IP: h.IP, DNS: h.DNS, Port: port}, true
}

func dedup(ids []uint64) []uint64 {
	slices.Sort(ids)
	return slices.Compact(ids)
}
