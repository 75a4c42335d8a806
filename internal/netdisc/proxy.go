package netdisc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// Discovery through proxies: a rule with a proxy is swept by the proxy
// (package ingest sends it in "proxy config"), which reports what it
// found in the "discovery data" part of "proxy data". ApplyProxy takes
// those rows through the same state changes, events and actions as
// Peregrine's own sweeps.

// ProxyResult is one row of a proxy's "discovery data" (recorded from
// 6.0.14: ingest's testdata/proxy_discovery_*_zabbix60.*): one per
// check and port of an address, then the address's host row (DCheck 0,
// sent as null, no port) saying whether any check answered.
type ProxyResult struct {
	Clock  int64
	DRule  uint64
	DCheck uint64 // 0: the address's host row
	IP     string
	DNS    string
	Port   int
	Value  string
	Status int // 0 up, 1 down
}

// maxProxyResults bounds the rows of one request: a 6.0 proxy sends at
// most 1,000.
const maxProxyResults = 100_000

type proxyRow struct {
	Clock  *int64  `json:"clock"`
	DRule  *uint64 `json:"drule"`
	DCheck *uint64 `json:"dcheck"`
	IP     string  `json:"ip"`
	DNS    string  `json:"dns"`
	Port   int     `json:"port"`
	Value  string  `json:"value"`
	Status int     `json:"status"`
}

// DecodeProxyResults decodes a "discovery data" part. A part that is
// not an array of rows of the right types is an error (the request is
// refused whole and the proxy keeps its data); rows that decode and
// make no sense are ApplyProxy's to refuse one by one.
func DecodeProxyResults(raw []byte) ([]ProxyResult, error) {
	var rows []proxyRow
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf(`"discovery data" is not an array of discovery rows: %w`, err)
	}
	if len(rows) > maxProxyResults {
		return nil, fmt.Errorf(`"discovery data" has %d rows, more than %d`, len(rows), maxProxyResults)
	}
	out := make([]ProxyResult, len(rows))
	for i, r := range rows {
		o := ProxyResult{IP: r.IP, DNS: r.DNS, Port: r.Port, Value: r.Value, Status: r.Status, Clock: -1}
		if r.Clock != nil {
			o.Clock = *r.Clock
		}
		if r.DRule != nil {
			o.DRule = *r.DRule
		}
		if r.DCheck != nil {
			o.DCheck = *r.DCheck
		}
		out[i] = o
	}
	return out, nil
}

// ProxyStats is what ApplyProxy did with a request's rows.
type ProxyStats struct {
	Taken   int // rows applied
	Resent  int // rows applied before (a proxy resending what it was not sure was taken)
	Refused map[string]int
	Events  int
	Hosts   int // hosts created by actions
}

// Reasons a proxy's discovery row is refused (the metric's results).
const (
	RefusedMalformed    = "malformed"     // no clock, a bad address, port or status
	RefusedUnknownRule  = "unknown_rule"  // no such rule
	RefusedNotItsRule   = "not_its_rule"  // a rule of the server or another proxy
	RefusedUnknownCheck = "unknown_check" // not a check of the rule
)

var proxyRowResults = []string{"taken", "resent", RefusedMalformed, RefusedUnknownRule, RefusedNotItsRule, RefusedUnknownCheck}

// seenKey is a row's place: a check and port of an address of a rule
// (check 0: the address's host row).
type seenKey struct {
	check uint64
	port  int
}

type addrKey struct {
	rule uint64
	ip   string
}

// maxSeenAddrs bounds the addresses whose last rows are remembered;
// beyond it they are forgotten and found again from the stored state.
const maxSeenAddrs = 1 << 18

// EventScanner, if the EventStore implements it (*event.Store), lets
// ApplyProxy find, after a restart, the clock of the last discovery
// event of each discovered host and service: the clock of the last
// proxy row taken for it.
type EventScanner interface {
	Events(keep func(*event.Event) bool) []event.Event
}

// seenClock is the clock of the row last applied at k of address a, or
// without one since Peregrine started, that of the stored service's or
// host's last event (or status change): a row no newer is one applied
// before.
func (d *Discoverer) seenClock(x *index, a addrKey, k seenKey) int64 {
	if m, ok := d.seen[a]; ok {
		return m[k]
	}
	d.loadEventClocks()
	if k.check == 0 {
		if h := x.hostByIP[a.ip]; h != nil {
			return max(h.LastUp, h.LastDown, d.evClock[evObject{ObjectDHost, h.ID}])
		}
		return 0
	}
	if s := x.svc[svcKey{k.check, a.ip, k.port}]; s != nil {
		return max(s.LastUp, s.LastDown, d.evClock[evObject{ObjectDService, s.ID}])
	}
	return 0
}

type evObject struct {
	object uint8
	id     uint64
}

// loadEventClocks reads, once, the clock of the last retained
// discovery event of each discovered host and service.
func (d *Discoverer) loadEventClocks() {
	if d.evClock != nil {
		return
	}
	d.evClock = map[evObject]int64{}
	sc, ok := d.opts.Events.(EventScanner)
	if !ok {
		return
	}
	sc.Events(func(e *event.Event) bool {
		if e.Source == event.SourceDiscovery {
			k := evObject{e.Object, e.ObjectID}
			d.evClock[k] = max(d.evClock[k], e.Clock)
		}
		return false
	})
}

// ApplyProxy applies a proxy's discovery rows: those of the proxy's
// rules are taken through the state changes, events (with the rows'
// clocks) and actions of Peregrine's own sweeps, rows applied before
// are skipped, and bad ones are refused and counted. It returns an
// error only when the outcome could not be stored: the caller then
// refuses the request, and the proxy sends it again.
func (d *Discoverer) ApplyProxy(ctx context.Context, proxyID uint64, rows []ProxyResult) (ProxyStats, error) {
	st := ProxyStats{Refused: map[string]int{}}
	d.pmu.Lock()
	defer d.pmu.Unlock()
	byRule := map[uint64][]int{}
	var order []uint64
	for i := range rows {
		r := &rows[i]
		reason := ""
		rule := d.opts.Catalog.DRule(r.DRule)
		_, err := netip.ParseAddr(r.IP)
		switch {
		case r.Clock < 0 || err != nil || r.Port < 0 || r.Port > 65535 || r.Status < 0 || r.Status > 1:
			reason = RefusedMalformed
		case rule == nil:
			reason = RefusedUnknownRule
		case rule.ProxyID != proxyID:
			reason = RefusedNotItsRule
		case r.DCheck != 0 && d.check(rule, r.DCheck) == nil:
			reason = RefusedUnknownCheck
		}
		if reason != "" {
			st.Refused[reason]++
			d.m.proxyRows[reason].Inc()
			if n, ok := d.throttle.Allow("proxy:" + reason); ok {
				d.log.Warn("netdisc: proxy's discovery row refused", "proxyid", proxyID, "reason", reason, "drule", r.DRule, "dcheck", r.DCheck, "ip", r.IP, "suppressed", n)
			}
			continue
		}
		if _, ok := byRule[r.DRule]; !ok {
			order = append(order, r.DRule)
		}
		byRule[r.DRule] = append(byRule[r.DRule], i)
	}
	for _, id := range order {
		if err := d.applyProxyRule(ctx, d.opts.Catalog.DRule(id), rows, byRule[id], &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// applyProxyRule applies the rows (by index) of one rule.
func (d *Discoverer) applyProxyRule(ctx context.Context, rule *catalog.DRule, rows []ProxyResult, idx []int, st *ProxyStats) error {
	before := d.opts.Catalog.Discovery()
	x := newIndex(before, rule)
	u := &update{d: d, rule: rule, idx: x}
	type mark struct {
		a     addrKey
		k     seenKey
		clock int64
	}
	var marks []mark
	taken, resent := 0, 0
	for lo := 0; lo < len(idx); {
		// A group: an address's consecutive service rows and the host
		// row that ends them (in a later request if the proxy split
		// them).
		ip := rows[idx[lo]].IP
		hi := lo
		for hi < len(idx) && rows[idx[hi]].IP == ip {
			hi++
			if rows[idx[hi-1]].DCheck == 0 {
				break
			}
		}
		a := addrKey{rule.ID, ip}
		hs := hostUntouched
		var probes []probe
		dns, clock := "", int64(0)
		for _, i := range idx[lo:hi] {
			r := &rows[i]
			k := seenKey{r.DCheck, r.Port}
			if k.check == 0 {
				k.port = 0
			}
			if r.Clock <= d.seenClock(x, a, k) {
				resent++
				continue
			}
			taken++
			marks = append(marks, mark{a, k, r.Clock})
			clock, dns = max(clock, r.Clock), r.DNS
			if r.DCheck == 0 {
				hs = hostUp
				if r.Status != 0 {
					hs = hostDown
				}
				continue
			}
			probes = append(probes, probe{check: checkIndex(rule, r.DCheck), port: r.Port, up: r.Status == 0, value: r.Value})
		}
		lo = hi
		if len(probes) == 0 && hs == hostUntouched {
			continue
		}
		u.now = clock
		u.address(ip, dns, probes, hs)
	}
	st.Resent += resent
	d.m.proxyRows["resent"].Add(uint64(resent))
	if len(u.events) > 0 || len(u.change.Hosts)+len(u.change.Services) > 0 {
		if err := d.opts.Catalog.SaveDiscovery(ctx, u.change); err != nil {
			d.m.failed.Inc()
			return fmt.Errorf("cannot store what the proxy discovered for rule %q: %w", rule.Name, err)
		}
		if len(u.events) > 0 {
			if err := d.opts.Events.Commit(&event.Batch{Events: u.events}); err != nil {
				d.m.failed.Inc()
				// Put the state back, so that the resent rows make the
				// same changes and events again.
				if rerr := d.opts.Catalog.SaveDiscovery(ctx, revert(before, &u.change)); rerr != nil {
					d.log.Error("netdisc: cannot put back the discovered hosts of a proxy's rows whose events were not stored; their next rows make no discovery events", "rule", rule.Name, "err", rerr)
				}
				return fmt.Errorf("cannot store the discovery events of rule %q: %w", rule.Name, err)
			}
		}
	}
	// Durable: from here a resent row is one taken.
	for _, m := range marks {
		s := d.seen[m.a]
		if s == nil {
			if len(d.seen) >= maxSeenAddrs {
				clear(d.seen)
			}
			s = map[seenKey]int64{}
			d.seen[m.a] = s
		}
		s[m.k] = max(s[m.k], m.clock)
	}
	st.Taken += taken
	d.m.proxyRows["taken"].Add(uint64(taken))
	st.Events += len(u.events)
	if len(u.events) > 0 {
		st.Hosts += d.act(ctx, u.events)
	}
	return nil
}

// revert is the change that puts back what ch changed in before.
func revert(before *catalog.DiscoveryState, ch *catalog.DiscoveryChange) catalog.DiscoveryChange {
	var r catalog.DiscoveryChange
	for _, h := range ch.Hosts {
		if o := before.Hosts[h.ID]; o != nil {
			r.Hosts = append(r.Hosts, o)
		} else {
			r.DelHosts = append(r.DelHosts, h.ID)
		}
	}
	for _, s := range ch.Services {
		if o := before.Services[s.ID]; o != nil {
			r.Services = append(r.Services, o)
		} else {
			r.DelServices = append(r.DelServices, s.ID)
		}
	}
	return r
}

func checkIndex(r *catalog.DRule, id uint64) int {
	for i := range r.Checks {
		if r.Checks[i].ID == id {
			return i
		}
	}
	return -1
}
