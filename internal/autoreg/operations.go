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

// plan is what the matching actions do to one host.
type plan struct {
	host          *Host
	remove        bool
	add           bool // create the host if missing
	groups        []uint64
	ungroups      []uint64
	link, unlink  []uint64
	enable        *bool
	inventoryMode bool
}

// planFor collects the operations of the enabled actions that accept h,
// in action ID order. Every operation but "remove host", "remove from
// host group" and "unlink template" creates the host first if it does
// not exist, as in Zabbix; send message and remote command are not host
// operations (the alert engine sends the messages).
func planFor(h *Host, acts []*catalog.Action, snap *catalog.Snapshot) *plan {
	p := &plan{host: h}
	for _, a := range acts {
		if a.Status != 0 || a.EventSource != catalog.SourceAutoreg || !Matches(a, h, snap) {
			continue
		}
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
	return p
}

// runOperations applies the batch's plans in one catalog edit; if the
// edit fails, each host's plan is applied in an edit of its own, so
// that one host the catalog refuses does not hold the others.
func (r *Registrar) runOperations(ctx context.Context, hosts []Host) {
	snap := r.opts.Catalog.Snapshot()
	acts := r.opts.Catalog.AlertConfig().SortedActions()
	var plans []*plan
	for i := range hosts {
		p := planFor(&hosts[i], acts, snap)
		if p.add || p.remove || len(p.ungroups)+len(p.unlink) > 0 {
			plans = append(plans, p)
		}
	}
	if len(plans) == 0 {
		return
	}
	psk := r.opts.Catalog.AutoregSettings()
	var dg uint64
	if r.opts.DiscoveryGroup != nil {
		dg = r.opts.DiscoveryGroup()
	}
	if res, err := r.opts.Catalog.Edit(ctx, func(e *catalog.Edit) error { return applyPlans(e, plans, dg, psk) }); err == nil {
		r.m.hostsCreated.Add(uint64(res.HostsCreated))
		return
	} else if len(plans) == 1 {
		r.opErr(plans[0], err)
		return
	}
	for _, p := range plans {
		res, err := r.opts.Catalog.Edit(ctx, func(e *catalog.Edit) error { return applyPlans(e, []*plan{p}, dg, psk) })
		if err != nil {
			r.opErr(p, err)
			continue
		}
		r.m.hostsCreated.Add(uint64(res.HostsCreated))
	}
}

func (r *Registrar) opErr(p *plan, err error) {
	r.m.opErrors.Inc()
	r.log.Warn("autoreg: the catalog refused an auto-registration action's operations", "host", p.host.Host, "err", err)
}

// applyPlans runs plans within one edit.
func applyPlans(e *catalog.Edit, plans []*plan, discoveryGroup uint64, psk catalog.AutoregSettings) error {
	for _, p := range plans {
		if err := applyPlan(e, p, discoveryGroup, psk); err != nil {
			return err
		}
	}
	return nil
}

func applyPlan(e *catalog.Edit, p *plan, discoveryGroup uint64, psk catalog.AutoregSettings) error {
	h := e.HostNamed(p.host.Host)
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
		nh := catalog.NewHost{Host: p.host.Host, GroupIDs: groups, Disabled: p.enable != nil && !*p.enable}
		if f, ok := agentInterface(p.host); ok {
			nh.Interfaces = []catalog.Interface{f}
		}
		if p.host.TLSAccepted == 2 {
			nh.TLS = catalog.HostTLS{Connect: 2, Accept: 2, PSKIdentity: psk.PSKIdentity, PSK: psk.PSK}
		}
		if _, err := e.CreateHosts([]catalog.NewHost{nh}); err != nil {
			return err
		}
		if h = e.HostNamed(p.host.Host); h == nil {
			return nil
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
