package autoreg

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// How an agent said where it listens (Zabbix's connection flags, the
// autoreg host's "flags").
const (
	ConnDefault = 0 // the "ip" member or the connection's address
	ConnIP      = 1 // HostInterface was an IP address
	ConnDNS     = 2 // HostInterface was a DNS name
)

// Request is one registration: what an active agent said in "active
// checks" (host, ip, port, host_metadata, interface), or what a proxy
// forwarded for one of its agents.
type Request struct {
	Host         string
	HostMetadata string
	IP           string // the listen IP; "" with ConnDNS
	DNS          string // the listen DNS name; "" unless ConnDNS
	Port         uint16 // 0: the agent's default, 10050
	Flag         int    // ConnDefault, ConnIP or ConnDNS
	// TLSAccepted is the connection the agent registered over: 1
	// unencrypted, 2 PSK (then the host is created with the
	// autoregistration key), 4 certificate.
	TLSAccepted uint8
	ProxyID     uint64 // 0: the agent talked to the server
	Clock       time.Time
}

// Host is an auto-registered host as Zabbix's autoreg_host keeps it:
// the latest registration of a host name and its stable ID (the
// events' objectid).
type Host struct {
	ID uint64
	Request
}

// Catalog is what the registrar reads and changes (*catalog.Catalog).
type Catalog interface {
	Snapshot() *catalog.Snapshot
	AlertConfig() *catalog.AlertConfig
	Edit(ctx context.Context, fn func(e *catalog.Edit) error) (catalog.EditResult, error)
	AutoregSettings() catalog.AutoregSettings
}

// EventStore takes the auto-registration events; the server's wrapper
// of *event.Store also hands them to the alert engine (send message).
type EventStore interface {
	Commit(b *event.Batch) error
}

// Options configures New.
type Options struct {
	Catalog Catalog
	Events  EventStore
	// DiscoveryGroup returns the host group new hosts go to (the
	// settings' discovery_groupid, "Discovered hosts"); nil or 0: none,
	// the operations' groups only.
	DiscoveryGroup func() uint64
	// QueueSize bounds the hosts waiting to be registered (default
	// 10,000); a request for a host already waiting replaces it, one
	// past the bound is dropped and counted (the agent asks again at its
	// next refresh).
	QueueSize int
	// MaxPerProxy bounds the hosts of one proxy waiting (default a
	// quarter of QueueSize): a proxy flooding registrations with random
	// names takes at most that share of the queue, and agents talking to
	// the server and other proxies keep the rest. Past it, a proxy's
	// request is dropped and counted (result "proxy_share_full"); the
	// proxy forwards its agents' next requests.
	MaxPerProxy int
	// MaxHosts bounds the auto-registered hosts remembered (default
	// 100,000), the least recently registered forgotten first.
	MaxHosts int
	// BatchSize bounds the registrations handled in one catalog edit
	// (default 500).
	BatchSize int
	// Store, if set, keeps the registrations across restarts (Store
	// is the durable one): New loads them, Run saves each batch's once
	// its events are stored. Without it they are kept in memory only,
	// and after a restart every known host registers once more.
	Store   Persister
	Metrics *selfmon.Registry
	Logger  *slog.Logger
	Now     func() time.Time
}

// Registrar queues registrations, records them as events of source 2
// and runs the auto-registration actions' host operations. See the
// package documentation.
type Registrar struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	pending map[string]*Request
	// perProxy counts the pending requests of each proxy.
	perProxy map[uint64]int
	order    []string
	hosts    map[string]*list.Element // of *Host, by name
	byID     map[uint64]*Host
	lru      list.List // front: most recently registered
	nextID   uint64
	wake     chan struct{}
	// forget are the IDs of registrations dropped from memory (MaxHosts)
	// whose rows Store still has: removed at the next save.
	forget []uint64

	throttle *selfmon.LogThrottle

	// active caches whether an enabled auto-registration action exists,
	// per AlertConfig revision.
	active atomic.Pointer[activeCache]

	m metrics
}

type activeCache struct {
	rev uint64
	has bool
}

type metrics struct {
	queued, coalesced, dropped, unchanged, noAction *selfmon.Counter
	proxyDropped                                    *selfmon.Counter
	registered, failed, hostsCreated, opErrors      *selfmon.Counter
	storeErrors                                     *selfmon.Counter
	queue                                           *selfmon.Gauge
	batch                                           *selfmon.Histogram
}

// New makes a registrar; Run handles its queue.
func New(opts Options) (*Registrar, error) {
	if opts.Catalog == nil || opts.Events == nil {
		return nil, errors.New("autoreg: Options.Catalog and Events are required")
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 10_000
	}
	if opts.MaxPerProxy <= 0 {
		opts.MaxPerProxy = max(1, opts.QueueSize/4)
	}
	if opts.MaxHosts <= 0 {
		opts.MaxHosts = 100_000
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 500
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
	const reqs = "peregrine_autoreg_requests_total"
	const reqsHelp = "Auto-registration requests of active agents and proxies, by what became of them."
	g := &Registrar{opts: opts, log: opts.Logger, pending: map[string]*Request{}, perProxy: map[uint64]int{}, hosts: map[string]*list.Element{},
		byID: map[uint64]*Host{}, nextID: 1, wake: make(chan struct{}, 1),
		m: metrics{
			queued:       r.Counter(reqs, reqsHelp, "result", "queued"),
			coalesced:    r.Counter(reqs, reqsHelp, "result", "coalesced"),
			dropped:      r.Counter(reqs, reqsHelp, "result", "queue_full"),
			proxyDropped: r.Counter(reqs, reqsHelp, "result", "proxy_share_full"),
			unchanged:    r.Counter(reqs, reqsHelp, "result", "unchanged"),
			noAction:     r.Counter(reqs, reqsHelp, "result", "no_action"),
			registered:   r.Counter("peregrine_autoreg_registrations_total", "Registrations recorded as auto-registration events."),
			failed:       r.Counter("peregrine_autoreg_failed_total", "Registrations lost because their events could not be stored (the agent registers again at its next refresh)."),
			hostsCreated: r.Counter("peregrine_autoreg_hosts_created_total", "Hosts created by auto-registration actions."),
			opErrors:     r.Counter("peregrine_autoreg_operation_errors_total", "Auto-registration operations the catalog refused (logged with the reason)."),
			storeErrors:  r.Counter("peregrine_autoreg_store_errors_total", "Batches of registrations that could not be saved to the data directory (logged; those hosts register again after a restart)."),
			queue:        r.Gauge("peregrine_autoreg_queue_length", "Hosts waiting to be registered."),
			batch:        r.Histogram("peregrine_autoreg_batch_seconds", "Time to handle one batch of registrations (events and catalog edit).", []float64{0.001, 0.01, 0.1, 1, 10}),
		}}
	g.throttle = selfmon.NewLogThrottle(opts.Logger, time.Minute)
	if opts.Store != nil {
		hosts, err := opts.Store.Load(context.Background())
		if err != nil {
			return nil, fmt.Errorf("autoreg: %w", err)
		}
		for i := range hosts {
			g.remember(&hosts[i])
		}
	}
	return g, nil
}

// remember adds a registration loaded from the Store as the most recent
// one.
func (r *Registrar) remember(h *Host) {
	if e, ok := r.hosts[h.Host]; ok { // not from Store.Save; keep the later
		r.lru.Remove(e)
		delete(r.byID, e.Value.(*Host).ID)
	}
	r.evict()
	cp := *h
	r.hosts[h.Host] = r.lru.PushFront(&cp)
	r.byID[h.ID] = &cp
	r.nextID = max(r.nextID, h.ID+1)
}

// evict makes room for one registration under MaxHosts.
func (r *Registrar) evict() {
	for r.lru.Len() >= r.opts.MaxHosts {
		old := r.lru.Back()
		oh := old.Value.(*Host)
		r.lru.Remove(old)
		delete(r.hosts, oh.Host)
		delete(r.byID, oh.ID)
		if r.opts.Store != nil {
			r.forget = append(r.forget, oh.ID)
		}
	}
}

// hasActions reports whether an enabled auto-registration action
// exists: without one Zabbix 6.0 registers nothing (recorded from
// 6.0.14: no autoreg_host row, no event).
func (r *Registrar) hasActions(cfg *catalog.AlertConfig) bool {
	if c := r.active.Load(); c != nil && c.rev == cfg.Revision {
		return c.has
	}
	has := false
	for _, a := range cfg.Actions {
		has = has || a.EventSource == catalog.SourceAutoreg && a.Status == 0
	}
	r.active.Store(&activeCache{rev: cfg.Revision, has: has})
	return has
}

// Register queues a registration and reports whether it did; it never
// blocks on the catalog or the event store, and may be called from any
// goroutine (the trapper's connections, proxies' data). As 6.0.14 does
// (recorded): nothing is registered while no auto-registration action
// is enabled; a host not in the catalog registers at every request;
// a host in the catalog registers again only when its host metadata or
// connection flag changed, or, for an agent with HostInterface (ConnIP,
// ConnDNS), its interface or port, and when it never registered since
// the start.
func (r *Registrar) Register(req Request) bool {
	if !r.hasActions(r.opts.Catalog.AlertConfig()) {
		r.m.noAction.Inc()
		return false
	}
	if req.Clock.IsZero() {
		req.Clock = r.opts.Now()
	}
	known := r.opts.Catalog.Snapshot().Host(req.Host) != nil
	r.mu.Lock()
	if known {
		if e, ok := r.hosts[req.Host]; ok && !changed(&e.Value.(*Host).Request, &req) {
			r.mu.Unlock()
			r.m.unchanged.Inc()
			return false
		}
	}
	if p, ok := r.pending[req.Host]; ok {
		r.perProxy[p.ProxyID]--
		r.perProxy[req.ProxyID]++
		*p = req
		r.mu.Unlock()
		r.m.coalesced.Inc()
		return true
	}
	if len(r.order) >= r.opts.QueueSize {
		r.mu.Unlock()
		r.m.dropped.Inc()
		return false
	}
	if req.ProxyID != 0 && r.perProxy[req.ProxyID] >= r.opts.MaxPerProxy {
		r.mu.Unlock()
		r.m.proxyDropped.Inc()
		if n, ok := r.throttle.Allow("proxy_share_full"); ok {
			r.log.Warn("autoreg: a proxy's registrations fill its share of the queue; dropped (its agents register at their next requests)",
				"proxyid", req.ProxyID, "host", truncate(req.Host), "waiting", r.opts.MaxPerProxy, "suppressed", n)
		}
		return false
	}
	cp := req
	r.perProxy[req.ProxyID]++
	r.pending[req.Host] = &cp
	r.order = append(r.order, req.Host)
	r.m.queue.Set(int64(len(r.order)))
	r.mu.Unlock()
	r.m.queued.Inc()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return true
}

// truncate shortens a host name for a log line.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// changed is 6.0's test of whether a known host registers again.
func changed(old, req *Request) bool {
	switch {
	case old.HostMetadata != req.HostMetadata || old.Flag != req.Flag:
		return true
	case req.Flag == ConnIP:
		return old.IP != req.IP || old.Port != req.Port
	case req.Flag == ConnDNS:
		return old.DNS != req.DNS || old.Port != req.Port
	}
	return false
}

// Lookup returns the auto-registered host with the ID (an event's
// objectid), if still remembered.
func (r *Registrar) Lookup(id uint64) (Host, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.byID[id]; h != nil {
		return *h, true
	}
	return Host{}, false
}

// QueueLen is the number of hosts waiting.
func (r *Registrar) QueueLen() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.order)
}

// Run handles the queue until ctx ends.
func (r *Registrar) Run(ctx context.Context) {
	for {
		batch := r.take()
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-r.wake:
			}
			continue
		}
		r.handle(ctx, batch)
	}
}

// take removes up to BatchSize requests from the queue, oldest first.
func (r *Registrar) take() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := min(len(r.order), r.opts.BatchSize)
	out := make([]Request, n)
	for i, h := range r.order[:n] {
		out[i] = *r.pending[h]
		delete(r.pending, h)
		if r.perProxy[out[i].ProxyID]--; r.perProxy[out[i].ProxyID] <= 0 {
			delete(r.perProxy, out[i].ProxyID)
		}
	}
	r.order = append(r.order[:0], r.order[n:]...)
	r.m.queue.Set(int64(len(r.order)))
	return out
}

// record stores a registration as the host's latest and returns its
// ID: the same for a host name as long as it is remembered.
func (r *Registrar) record(req *Request) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.hosts[req.Host]; ok {
		h := e.Value.(*Host)
		h.Request = *req
		r.lru.MoveToFront(e)
		return h.ID
	}
	r.evict()
	h := &Host{ID: r.nextID, Request: *req}
	r.nextID++
	r.hosts[req.Host] = r.lru.PushFront(h)
	r.byID[h.ID] = h
	return h.ID
}

// handle records a batch as events, then runs the matching actions'
// host operations in one catalog edit.
func (r *Registrar) handle(ctx context.Context, batch []Request) {
	start := time.Now()
	defer func() { r.m.batch.Observe(time.Since(start).Seconds()) }()
	b := &event.Batch{Events: make([]event.Event, len(batch))}
	hosts := make([]Host, len(batch))
	for i := range batch {
		id := r.record(&batch[i])
		hosts[i] = Host{ID: id, Request: batch[i]}
		b.Events[i] = event.Event{Source: event.SourceAutoreg, Object: event.ObjectAutoreg, ObjectID: id,
			Clock: batch[i].Clock.Unix(), NS: int32(batch[i].Clock.Nanosecond()), Value: event.ValueProblem}
	}
	if err := r.opts.Events.Commit(b); err != nil {
		r.m.failed.Add(uint64(len(batch)))
		r.log.Error("autoreg: cannot store auto-registration events; the agents register again at their next refresh", "hosts", len(batch), "err", err)
		return
	}
	r.m.registered.Add(uint64(len(batch)))
	r.save(ctx, hosts)
	r.runOperations(ctx, hosts)
}

// save keeps a batch's registrations in the Store. A failure is
// counted and logged: they stay in memory, and only a restart before
// the next successful save registers them again.
func (r *Registrar) save(ctx context.Context, hosts []Host) {
	if r.opts.Store == nil {
		return
	}
	r.mu.Lock()
	forget := r.forget
	r.forget = nil
	r.mu.Unlock()
	if err := r.opts.Store.Save(ctx, hosts, forget); err != nil {
		r.mu.Lock()
		// Bounded: rows past MaxHosts left in the file are evicted (and
		// forgotten again) when the next start loads them.
		r.forget = append(forget, r.forget...)
		if len(r.forget) > r.opts.MaxHosts {
			r.forget = r.forget[len(r.forget)-r.opts.MaxHosts:]
		}
		r.mu.Unlock()
		r.m.storeErrors.Inc()
		r.log.Error("autoreg: cannot save registrations to the data directory; they are kept in memory (a restart registers these hosts again)", "hosts", len(hosts), "err", err)
	}
}
