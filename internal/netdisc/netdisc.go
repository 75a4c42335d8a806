package netdisc

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/autoreg"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
	"github.com/peregrine-mon/peregrine/internal/zbx/iprange"
)

// Catalog is what the discoverer reads and changes (*catalog.Catalog).
type Catalog interface {
	Snapshot() *catalog.Snapshot
	AlertConfig() *catalog.AlertConfig
	Edit(ctx context.Context, fn func(e *catalog.Edit) error) (catalog.EditResult, error)
	DRules() []catalog.DRule
	DRule(id uint64) *catalog.DRule
	Discovery() *catalog.DiscoveryState
	SaveDiscovery(ctx context.Context, ch catalog.DiscoveryChange) error
	NewDHostID() uint64
	NewDServiceID() uint64
}

// EventStore takes the discovery events; the server's wrapper of
// *event.Store also hands them to the alert engine (send message).
type EventStore interface {
	Commit(b *event.Batch) error
}

// Options configures New.
type Options struct {
	Catalog Catalog
	Events  EventStore
	// The checkers (nil: the checks they run are down).
	ICMP, Agent, TCP poll.Checker
	// SNMP asks one OID (nil: gosnmp, SNMPGet).
	SNMP func(ctx context.Context, r SNMPRequest) (string, error)
	// Resolve gives an address's DNS name ("" for none; nil: no
	// lookups).
	Resolve func(ctx context.Context, ip string) string
	// DiscoveryGroup is the settings' group for new hosts (nil or 0:
	// the operations' groups only).
	DiscoveryGroup func() uint64
	// MaxInFlight bounds the checks out at once (default 4096).
	MaxInFlight int
	// Timeout bounds each check (default 3 s).
	Timeout time.Duration
	// ChunkSize is how many addresses are stored, turned into events
	// and acted on at once (default 1024).
	ChunkSize int
	// Lag tells how far this process was behind during a probe
	// (poll.Lag); default: a poll.LagMeter run by Run. A probe that ran
	// out its timeout while the lag was at least half its time is run
	// again (twice at most) rather than taken as down.
	Lag     poll.Lag
	Metrics *selfmon.Registry
	Logger  *slog.Logger
	Now     func() time.Time
}

// Discoverer runs discovery rules. See the package documentation.
type Discoverer struct {
	opts     Options
	log      *slog.Logger
	m        metrics
	lagMeter *poll.LagMeter // the default Lag, run by Run

	mu   sync.Mutex
	next map[uint64]time.Time // rule → when it sweeps next

	// pmu serialises ApplyProxy; seen is the clock of the rows it took
	// last, by address and check (proxy.go).
	pmu      sync.Mutex
	seen     map[addrKey]map[seenKey]int64
	evClock  map[evObject]int64 // loaded once, for addresses not in seen
	throttle *selfmon.LogThrottle
}

type metrics struct {
	sweeps, addresses, hostsCreated, opErrors, failed *selfmon.Counter
	checks                                            [2]*selfmon.Counter // down, up
	sweep                                             *selfmon.Histogram
	late                                              *selfmon.Counter
	proxyRows                                         map[string]*selfmon.Counter
}

// New makes a discoverer; Run schedules its sweeps.
func New(opts Options) (*Discoverer, error) {
	if opts.Catalog == nil || opts.Events == nil {
		return nil, errors.New("netdisc: Options.Catalog and Events are required")
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 4096
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Second
	}
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = 1024
	}
	if opts.SNMP == nil {
		opts.SNMP = SNMPGet
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := opts.Metrics
	const checks, checksHelp = "peregrine_netdisc_checks_total", "Discovery checks run, by whether the service was up."
	d := &Discoverer{opts: opts, log: opts.Logger, next: map[uint64]time.Time{}, m: metrics{
		sweeps:       r.Counter("peregrine_netdisc_sweeps_total", "Discovery rules' sweeps finished."),
		addresses:    r.Counter("peregrine_netdisc_addresses_total", "Addresses swept by discovery rules."),
		hostsCreated: r.Counter("peregrine_netdisc_hosts_created_total", "Hosts created by discovery actions."),
		opErrors:     r.Counter("peregrine_netdisc_operation_errors_total", "Discovery actions' operations the catalog refused (logged with the reason)."),
		failed:       r.Counter("peregrine_netdisc_store_errors_total", "Chunks of a sweep whose state or events could not be stored (the next sweep finds them again)."),
		checks:       [2]*selfmon.Counter{r.Counter(checks, checksHelp, "result", "down"), r.Counter(checks, checksHelp, "result", "up")},
		sweep:        r.Histogram("peregrine_netdisc_sweep_seconds", "Time to sweep one discovery rule's range.", []float64{0.1, 1, 10, 60, 600}),
		proxyRows:    map[string]*selfmon.Counter{},
		late: r.Counter("peregrine_netdisc_probes_retried_total", "Probes run again because they ran out their timeout while this server was behind (scheduling lag at least half the probe's time): our lateness is not the target's.",
			"reason", "server_behind"),
	}}
	if opts.Lag == nil {
		d.lagMeter = poll.NewLagMeter()
		d.opts.Lag = d.lagMeter
	}
	d.seen, d.throttle = map[addrKey]map[seenKey]int64{}, selfmon.NewLogThrottle(opts.Logger, 10*time.Second)
	for _, res := range proxyRowResults {
		d.m.proxyRows[res] = r.Counter("peregrine_netdisc_proxy_rows_total", "Proxies' discovery rows: taken, resent (taken before) or refused, by reason.", "result", res)
	}
	return d, nil
}

// Run sweeps the enabled rules of the server (no proxy) when due, one
// at a time, until ctx ends. A rule first sweeps at an offset derived
// from its ID within its delay (at most a minute), then its delay after
// each sweep began; a sweep that overruns its delay is followed at once
// by the next, never by a queue of them.
func (d *Discoverer) Run(ctx context.Context) {
	if d.lagMeter != nil {
		go d.lagMeter.Run(ctx)
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		now := d.opts.Now()
		for _, r := range d.opts.Catalog.DRules() {
			if r.Status != 0 || r.ProxyID != 0 {
				continue
			}
			every := d.delay(&r)
			d.mu.Lock()
			at, ok := d.next[r.ID]
			if !ok {
				h := fnv.New64a()
				h.Write([]byte(strconv.FormatUint(r.ID, 10)))
				at = now.Add(time.Duration(h.Sum64() % uint64(min(every, time.Minute))))
				d.next[r.ID] = at
			}
			d.mu.Unlock()
			if now.Before(at) {
				continue
			}
			if _, err := d.Sweep(ctx, r.ID); err != nil && ctx.Err() == nil {
				d.log.Warn("netdisc: sweep failed", "rule", r.Name, "err", err)
			}
			d.mu.Lock()
			d.next[r.ID] = now.Add(every)
			d.mu.Unlock()
			if ctx.Err() != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// delay is the rule's delay with global macros resolved (1 h when it
// cannot be read).
func (d *Discoverer) delay(r *catalog.DRule) time.Duration {
	v := r.Delay
	if ref, err := usermacro.ParseRef(v); err == nil {
		if def, ok := d.opts.Catalog.Snapshot().UserMacros(0).Resolve(ref); ok {
			v = def.Value
		}
	}
	if n, ok := parseDelay(v); ok {
		return time.Duration(n) * time.Second
	}
	return time.Hour
}

func parseDelay(v string) (int64, bool) {
	mult := int64(1)
	if v != "" {
		switch v[len(v)-1] {
		case 's':
			v = v[:len(v)-1]
		case 'm':
			mult, v = 60, v[:len(v)-1]
		case 'h':
			mult, v = 3600, v[:len(v)-1]
		case 'd':
			mult, v = 86400, v[:len(v)-1]
		case 'w':
			mult, v = 604800, v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n*mult < 1 || n*mult > 604800 {
		return 0, false
	}
	return n * mult, true
}

// SweepStats is what one sweep did.
type SweepStats struct {
	Addresses int
	Checks    int
	Up        int // checks that found their service up
	Events    int
	Hosts     int // hosts created by actions
	Duration  time.Duration
}

// probe is one check of one address and port.
type probe struct {
	addr  int // index in the sweep's addresses
	check int // index in the rule's checks
	port  int
	up    bool
	value string
	tries uint8 // runs again after a late timeout (startLate)
}

// Sweep checks every address of rule id once and records the outcome.
func (d *Discoverer) Sweep(ctx context.Context, id uint64) (SweepStats, error) {
	start := time.Now()
	var st SweepStats
	r := d.opts.Catalog.DRule(id)
	if r == nil {
		return st, errors.New("no such discovery rule")
	}
	rule := *r
	list, err := iprange.Parse(rule.IPRange)
	if err != nil {
		return st, err
	}
	var ports [][]int
	for _, k := range rule.Checks {
		ports = append(ports, checkPorts(&k))
	}
	d.run(ctx, &rule, list, ports, func(addrs []netip.Addr, probes []probe) {
		st.Addresses += len(addrs)
		st.Checks += len(probes)
		for i := range probes {
			if probes[i].up {
				st.Up++
			}
		}
		ev, hosts := d.record(ctx, &rule, addrs, probes)
		st.Events += ev
		st.Hosts += hosts
	})
	if err := ctx.Err(); err != nil {
		return st, err
	}
	st.Duration = time.Since(start)
	d.m.sweeps.Inc()
	d.m.addresses.Add(uint64(st.Addresses))
	d.m.sweep.Observe(st.Duration.Seconds())
	return st, nil
}

// checkPorts are the ports a check probes: ICMP none (0); port 0 the
// service's standard port.
func checkPorts(k *catalog.DCheck) []int {
	if k.Type == catalog.DCheckICMP {
		return []int{0}
	}
	rs, ok := iprange.Ports(k.Ports)
	if !ok {
		return nil
	}
	var out []int
	for _, r := range rs {
		for p := r[0]; p <= r[1] && len(out) < 65536; p++ {
			if p == 0 {
				p = defaultPort(k.Type)
			}
			out = append(out, p)
		}
	}
	return out
}

func defaultPort(t int) int {
	switch t {
	case catalog.DCheckSSH:
		return 22
	case catalog.DCheckLDAP:
		return 389
	case catalog.DCheckSMTP:
		return 25
	case catalog.DCheckFTP:
		return 21
	case catalog.DCheckHTTP:
		return 80
	case catalog.DCheckPOP:
		return 110
	case catalog.DCheckNNTP:
		return 119
	case catalog.DCheckIMAP:
		return 143
	case catalog.DCheckAgent:
		return 10050
	case catalog.DCheckSNMPv1, catalog.DCheckSNMPv2, catalog.DCheckSNMPv3:
		return 161
	case catalog.DCheckHTTPS:
		return 443
	case catalog.DCheckTelnet:
		return 23
	}
	return 0
}

// tcpService names the net.tcp.service service of a check type.
var tcpService = map[int]string{
	catalog.DCheckSSH: "ssh", catalog.DCheckLDAP: "ldap", catalog.DCheckSMTP: "smtp", catalog.DCheckFTP: "ftp",
	catalog.DCheckHTTP: "http", catalog.DCheckPOP: "pop", catalog.DCheckNNTP: "nntp", catalog.DCheckIMAP: "imap",
	catalog.DCheckTCP: "tcp", catalog.DCheckHTTPS: "https", catalog.DCheckTelnet: "telnet",
}

// maxChunkProbes bounds the probes of one chunk (a chunk holds at least
// one address), and chunkWindow the chunks started and not yet
// recorded: memory stays bounded whatever the range and port lists.
const (
	maxChunkProbes = 1 << 16
	chunkWindow    = 4
)

// chunk is a run of addresses with their probes.
type chunk struct {
	addrs     []netip.Addr
	probes    []probe
	remaining atomic.Int64
	done      chan struct{}
}

// run checks the list's addresses with every check and port, at most
// MaxInFlight at once, starting them in address order without waiting
// for the addresses before. Addresses go in chunks of at most ChunkSize
// addresses and maxChunkProbes probes; each chunk is handed to record,
// in order, once its probes are over, while later ones run (at most
// chunkWindow chunks are out). When ctx ends no probe starts, the
// started ones end (checkers honour ctx) and nothing more is recorded.
func (d *Discoverer) run(ctx context.Context, r *catalog.DRule, list iprange.List, ports [][]int, record func(addrs []netip.Addr, probes []probe)) {
	perAddr := 0
	for _, p := range ports {
		perAddr += len(p)
	}
	size := d.opts.ChunkSize
	if perAddr > 0 {
		size = max(1, min(size, maxChunkProbes/perAddr))
	}
	chunks := make(chan *chunk, chunkWindow)
	window := make(chan struct{}, chunkWindow)
	sem := make(chan struct{}, d.opts.MaxInFlight)
	go func() {
		defer close(chunks)
		var addrs []netip.Addr
		start := func() bool {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return false
			}
			c := &chunk{addrs: addrs, done: make(chan struct{})}
			addrs = nil
			for ai := range c.addrs {
				for ci := range r.Checks {
					for _, p := range ports[ci] {
						c.probes = append(c.probes, probe{addr: ai, check: ci, port: p})
					}
				}
			}
			c.remaining.Store(int64(len(c.probes)) + 1)
			finish := func() {
				if c.remaining.Add(-1) == 0 {
					close(c.done)
				}
			}
			chunks <- c
			for i := range c.probes {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
				}
				if ctx.Err() != nil {
					for range c.probes[i:] {
						finish()
					}
					break
				}
				pr := &c.probes[i]
				d.start(ctx, &r.Checks[pr.check], c.addrs[pr.addr], pr, func() {
					if pr.up {
						d.m.checks[1].Inc()
					} else {
						d.m.checks[0].Inc()
					}
					<-sem
					finish()
				})
			}
			finish() // the chunk's own count: all probes started
			return ctx.Err() == nil
		}
		list.Each(func(a netip.Addr) bool {
			addrs = append(addrs, a)
			return len(addrs) < size || start()
		})
		if len(addrs) > 0 && ctx.Err() == nil {
			start()
		}
	}()
	for c := range chunks {
		<-c.done
		if ctx.Err() == nil {
			record(c.addrs, c.probes)
		}
		<-window
	}
}

// start begins one probe; done is called once it is over. A probe found
// down after running out its timeout while this process was behind
// (Options.Lag) is run again, at most twice: a busy server (recording
// an earlier chunk on a loaded core) must not take live services for
// down.
func (d *Discoverer) start(ctx context.Context, k *catalog.DCheck, a netip.Addr, pr *probe, done func()) {
	sent := time.Now()
	d.probe(ctx, k, a, pr, func() {
		if span := time.Since(sent); !pr.up && pr.tries < 2 && ctx.Err() == nil && span >= d.opts.Timeout*9/10 &&
			d.opts.Lag.Stalled(sent, time.Now())*2 >= span {
			pr.tries++
			d.m.late.Inc()
			d.start(ctx, k, a, pr, done)
			return
		}
		done()
	})
}

// probe runs one probe once.
func (d *Discoverer) probe(ctx context.Context, k *catalog.DCheck, a netip.Addr, pr *probe, done func()) {
	ip := a.String()
	hostport := net.JoinHostPort(ip, strconv.Itoa(pr.port))
	var ch poll.Checker
	c := poll.Check{Addr: hostport, Timeout: d.opts.Timeout, Due: time.Now()}
	switch k.Type {
	case catalog.DCheckICMP:
		ch, c.Addr, c.Key = d.opts.ICMP, ip, "icmpping[,3,20,,"+strconv.FormatInt(d.opts.Timeout.Milliseconds()/3, 10)+"]"
	case catalog.DCheckAgent:
		ch, c.Key = d.opts.Agent, k.Key
	case catalog.DCheckSNMPv1, catalog.DCheckSNMPv2, catalog.DCheckSNMPv3:
		go func() {
			defer done()
			v, err := d.opts.SNMP(ctx, SNMPRequest{Check: k, IP: ip, Port: pr.port, Timeout: d.opts.Timeout})
			pr.up, pr.value = err == nil, v
		}()
		return
	default:
		ch, c.Key = d.opts.TCP, "net.tcp.service["+tcpService[k.Type]+",,"+strconv.Itoa(pr.port)+"]"
	}
	if ch == nil {
		done()
		return
	}
	value := k.Type == catalog.DCheckAgent
	ch.Check(ctx, []poll.Check{c}, func(res *poll.Result) {
		if res.Status == poll.OK {
			if value {
				pr.up, pr.value = true, string(res.Value)
			} else {
				pr.up = string(res.Value) == "1"
			}
		}
		done()
	})
}

// record turns one chunk's probes into state changes, stores them,
// commits the events and runs the actions; it returns the events and
// the hosts created.
func (d *Discoverer) record(ctx context.Context, r *catalog.DRule, addrs []netip.Addr, probes []probe) (int, int) {
	now := d.opts.Now()
	x := newIndex(d.opts.Catalog.Discovery(), r)
	u := &update{d: d, rule: r, idx: x, now: now.Unix()}
	names := d.resolveUp(ctx, addrs, probes)
	for lo := 0; lo < len(probes); {
		hi := lo
		for hi < len(probes) && probes[hi].addr == probes[lo].addr {
			hi++
		}
		u.address(addrs[probes[lo].addr].String(), names[probes[lo].addr], probes[lo:hi], hostFromProbes)
		lo = hi
	}
	if len(u.events) == 0 {
		return 0, 0
	}
	if err := d.opts.Catalog.SaveDiscovery(ctx, u.change); err != nil {
		d.m.failed.Inc()
		d.log.Error("netdisc: cannot store discovered hosts; the next sweep finds them again", "rule", r.Name, "err", err)
		return 0, 0
	}
	for i := range u.events {
		u.events[i].Clock, u.events[i].NS = now.Unix(), int32(now.Nanosecond())
	}
	if err := d.opts.Events.Commit(&event.Batch{Events: u.events}); err != nil {
		d.m.failed.Inc()
		d.log.Error("netdisc: cannot store discovery events", "rule", r.Name, "events", len(u.events), "err", err)
		return 0, 0
	}
	return len(u.events), d.act(ctx, u.events)
}

// resolveLookups bounds a chunk's reverse lookups in flight at once.
const resolveLookups = 64

// resolveUp looks up the DNS names of the chunk's addresses that
// answered a probe (Options.Resolve), resolveLookups at a time: one
// after the other, a chunk of 512 live addresses at 20 ms a lookup took
// 10 s, and the chunks after it were recorded a sweep late.
func (d *Discoverer) resolveUp(ctx context.Context, addrs []netip.Addr, probes []probe) []string {
	names := make([]string, len(addrs))
	if d.opts.Resolve == nil {
		return names
	}
	up := make([]bool, len(addrs))
	for i := range probes {
		if probes[i].up {
			up[probes[i].addr] = true
		}
	}
	sem := make(chan struct{}, resolveLookups)
	var wg sync.WaitGroup
	for i, ok := range up {
		if !ok {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			names[i] = d.opts.Resolve(ctx, addrs[i].String())
		}()
	}
	wg.Wait()
	return names
}

// act runs the discovery actions' host operations for events.
func (d *Discoverer) act(ctx context.Context, events []event.Event) int {
	cfg := d.opts.Catalog.AlertConfig()
	acts := cfg.SortedActions()
	if !hasActions(acts) {
		return 0
	}
	st := d.opts.Catalog.Discovery()
	plans := map[uint64]*autoreg.Plan{} // by discovered host
	var order []uint64
	for i := range events {
		ev := &events[i]
		c, ok := d.context(st, ev)
		if !ok {
			continue
		}
		for _, a := range acts {
			if a.Status != 0 || a.EventSource != catalog.SourceDiscovery || !d.holds(a, &c) {
				continue
			}
			p := plans[c.host.ID]
			if p == nil {
				p = autoreg.PlanOperations(d.target(st, &c), nil, catalog.SourceDiscovery, nil)
				plans[c.host.ID] = p
				order = append(order, c.host.ID)
			}
			p.Add(a)
		}
	}
	var list []*autoreg.Plan
	for _, id := range order {
		if p := plans[id]; !p.Empty() {
			list = append(list, p)
		}
	}
	var dg uint64
	if d.opts.DiscoveryGroup != nil {
		dg = d.opts.DiscoveryGroup()
	}
	created, errs := autoreg.ApplyPlans(ctx, d.opts.Catalog, list, dg)
	d.m.hostsCreated.Add(uint64(created))
	for _, e := range errs {
		d.m.opErrors.Inc()
		d.log.Warn("netdisc: the catalog refused a discovery action's operations", "host", e.Target, "err", e.Err)
	}
	return created
}

func hasActions(acts []*catalog.Action) bool {
	for _, a := range acts {
		if a.Status == 0 && a.EventSource == catalog.SourceDiscovery {
			return true
		}
	}
	return false
}
