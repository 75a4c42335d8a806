package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Active Zabbix proxies (see doc.go, "Proxies"): "proxy config",
// "proxy data" and "proxy heartbeat" on the trapper port.

// proxyRequest is the part of a proxy's request Peregrine reads. The
// other members (tasks results, "more", ...) are ignored.
type proxyRequest struct {
	Request   string          `json:"request"`
	Host      string          `json:"host"`
	Version   *string         `json:"version"`
	Session   *string         `json:"session"`
	History   json.RawMessage `json:"history data"`
	Avail     json.RawMessage `json:"interface availability"`
	AutoReg   json.RawMessage `json:"auto registration"`
	Discovery json.RawMessage `json:"discovery data"`
	Tasks     json.RawMessage `json:"tasks"`
	More      int             `json:"more"`
}

// ProxyHistoryRow is one row of a proxy's "history data".
type ProxyHistoryRow struct {
	ID          uint64  `json:"id"`
	ItemID      uint64  `json:"itemid"`
	Clock       int64   `json:"clock"`
	NS          int64   `json:"ns"`
	Value       *string `json:"value"`
	State       int     `json:"state"`
	LastLogSize *uint64 `json:"lastlogsize"`
	Mtime       *int64  `json:"mtime"`
	Timestamp   int64   `json:"timestamp"`
	Source      string  `json:"source"`
	Severity    int32   `json:"severity"`
	EventID     int64   `json:"eventid"`
}

// ProxyAvailability is one row of "interface availability".
type ProxyAvailability struct {
	InterfaceID uint64 `json:"interfaceid"`
	Available   int    `json:"available"`
	Error       string `json:"error"`
}

// ProxyData is a decoded "proxy data" request.
type ProxyData struct {
	Host    string
	Version string
	Session string
	History []ProxyHistoryRow
	Avail   []ProxyAvailability
	// More: the proxy has more data waiting (a passive proxy is asked
	// again at once).
	More bool
	// AutoReg and Discovery are the raw auto-registration and
	// discovery parts, for Options.ProxyExtras (nil when absent or
	// empty).
	AutoReg, Discovery json.RawMessage
	// Tasks is the raw "tasks" part: remote commands' results.
	Tasks json.RawMessage
}

// maxProxyRows bounds the history rows of one request; a 6.0 proxy
// sends at most 1,000 per request (ZBX_MAX_HRECORDS), so this refuses
// only what no real proxy sends.
const maxProxyRows = 100_000

// DecodeProxyData decodes a "proxy data" request. Malformed parts are
// errors, never skipped: the request is then refused whole and the
// proxy keeps its data.
func DecodeProxyData(payload []byte) (*ProxyData, error) {
	var r proxyRequest
	if err := json.Unmarshal(payload, &r); err != nil {
		return nil, fmt.Errorf("cannot parse proxy data: %w", err)
	}
	d := &ProxyData{Host: r.Host, More: r.More == 1}
	if r.Version != nil {
		d.Version = *r.Version
	}
	if r.Session != nil {
		d.Session = *r.Session
	}
	if len(r.History) > 0 && string(r.History) != "null" {
		if err := json.Unmarshal(r.History, &d.History); err != nil {
			return nil, fmt.Errorf(`"history data" is not an array of history rows: %w`, err)
		}
		if len(d.History) > maxProxyRows {
			return nil, fmt.Errorf(`"history data" has %d rows, more than %d`, len(d.History), maxProxyRows)
		}
	}
	if len(r.Avail) > 0 && string(r.Avail) != "null" {
		if err := json.Unmarshal(r.Avail, &d.Avail); err != nil {
			return nil, fmt.Errorf(`"interface availability" is not an array of interfaces: %w`, err)
		}
	}
	d.AutoReg, d.Discovery, d.Tasks = nonEmpty(r.AutoReg), nonEmpty(r.Discovery), nonEmpty(r.Tasks)
	return d, nil
}

func nonEmpty(raw json.RawMessage) json.RawMessage {
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "[]":
		return nil
	}
	return raw
}

// ProxyVersionSupported reports whether the Zabbix 6.0.14 server takes
// "proxy data" from a proxy of this version: 4.2 to 6.0, recorded from
// 6.0.14 (4.0 and older, 6.1 and newer, a missing or unparsable version
// are answered {"response":"failed"}).
func ProxyVersionSupported(v string) bool {
	major, rest, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return false
	}
	n := ma*100 + mi
	return n >= 402 && n <= 600
}

// proxyState is what the trapper knows of proxies between requests:
// lastaccess by proxy, and which of them changed since the last
// TakeProxyLastAccess (the server saves those every few seconds).
type proxyState struct {
	mu         sync.Mutex
	lastAccess map[uint64]int64
	dirty      map[uint64]int64
}

// ProxyLastAccess returns when proxy id last contacted Peregrine (Unix
// seconds; Zabbix's lastaccess): the latest contact since Peregrine
// started, else the value saved before (catalog.Proxy.LastAccess), else 0.
func (s *Server) ProxyLastAccess(id uint64) int64 {
	s.proxies.mu.Lock()
	t := s.proxies.lastAccess[id]
	s.proxies.mu.Unlock()
	if p := s.opts.Catalog.Snapshot().Proxy(id); p != nil {
		t = max(t, p.LastAccess)
	}
	return t
}

// SetProxyLastAccess records a contact with proxy id (the passive-proxy
// poller calls it after a successful exchange).
func (s *Server) SetProxyLastAccess(id uint64, t time.Time) {
	s.proxies.mu.Lock()
	if s.proxies.lastAccess == nil {
		s.proxies.lastAccess, s.proxies.dirty = map[uint64]int64{}, map[uint64]int64{}
	}
	if u := t.Unix(); u > s.proxies.lastAccess[id] {
		s.proxies.lastAccess[id] = u
		s.proxies.dirty[id] = u
	}
	s.proxies.mu.Unlock()
}

// TakeProxyLastAccess returns the lastaccess values changed since the
// last call (nil if none) and forgets them; a caller that cannot save
// them gives them back with ReturnProxyLastAccess.
func (s *Server) TakeProxyLastAccess() map[uint64]int64 {
	s.proxies.mu.Lock()
	defer s.proxies.mu.Unlock()
	if len(s.proxies.dirty) == 0 {
		return nil
	}
	d := s.proxies.dirty
	s.proxies.dirty = map[uint64]int64{}
	return d
}

// ReturnProxyLastAccess puts back values TakeProxyLastAccess gave that
// could not be saved, unless newer ones came since.
func (s *Server) ReturnProxyLastAccess(d map[uint64]int64) {
	s.proxies.mu.Lock()
	defer s.proxies.mu.Unlock()
	for id, t := range d {
		if s.proxies.dirty[id] < t {
			s.proxies.dirty[id] = t
		}
	}
}

// proxyMetrics counts proxies' requests by kind and result.
type proxyMetrics struct {
	requests map[string]*selfmon.Counter
	tasks    map[string]*selfmon.Counter
	extras   *selfmon.Counter
}

var proxyResults = []string{"ok", "unknown_proxy", "passive_proxy", "bad_version", "bad_address", "tls_refused", "bad_request", "store_error", "bad_part", "over_budget", "passive_error"}

func newProxyMetrics(r *selfmon.Registry) *proxyMetrics {
	m := &proxyMetrics{requests: map[string]*selfmon.Counter{}, tasks: map[string]*selfmon.Counter{}}
	for _, k := range []string{"remote_command/queued", "remote_command/timeout", "check_now/queued", "sent/ok", "result/ok", "result/unexpected"} {
		kind, res, _ := strings.Cut(k, "/")
		m.tasks[k] = r.Counter("peregrine_trapper_proxy_tasks_total", "Proxies' tasks (remote commands, check now): queued, sent, results taken, by kind and result.", "kind", kind, "result", res)
	}
	for _, kind := range []string{"config", "data", "heartbeat"} {
		for _, res := range proxyResults {
			m.requests[kind+"/"+res] = r.Counter("peregrine_trapper_proxy_requests_total", "Proxies' requests (active proxies') and exchanges (with passive ones), by kind and result.", "kind", kind, "result", res)
		}
	}
	m.extras = r.Counter("peregrine_trapper_proxy_unprocessed_parts_total", "Proxy data requests whose auto-registration or discovery part was taken and not acted on (a trapper without Options.ProxyExtras).")
	return m
}

func (s *Server) proxyCount(kind, result string) { s.pm.requests[kind+"/"+result].Inc() }

// proxyRefuse counts and logs (throttled) a refused proxy request and
// returns 6.0's failed reply.
func (s *Server) proxyRefuse(kind, result, remote, info string) []byte {
	s.proxyCount(kind, result)
	if n, ok := s.throttle.Allow("proxy:" + kind + ":" + result); ok {
		s.opts.Logger.Warn("proxy request refused", "request", kind, "reason", result, "remote", remote, "info", info, "suppressed", n)
	}
	if info == "" {
		return []byte(`{"response":"failed"}`)
	}
	return failedReply(info)
}

// findProxy checks who is asking: a known active proxy, connecting from
// an allowed address, over a connection its tls_accept allows.
func (s *Server) findProxy(cs *connState, kind, name, remote string) (*catalog.Snapshot, *catalog.Proxy, []byte) {
	snap := s.opts.Catalog.Snapshot()
	p := snap.ProxyByName(name)
	if p == nil {
		// 6.0's words, recorded from 6.0.14.
		return nil, nil, s.proxyRefuse(kind, "unknown_proxy", remote, fmt.Sprintf("proxy %q not found", truncateForLog(name)))
	}
	if p.Status != catalog.ProxyActive {
		return nil, nil, s.proxyRefuse(kind, "passive_proxy", remote, fmt.Sprintf("proxy %q is configured for passive mode", p.Name))
	}
	if p.Address != "" && !addressAllowed(p.Address, remote) {
		return nil, nil, s.proxyRefuse(kind, "bad_address", remote, fmt.Sprintf("connection of proxy %q from an address not in its proxy_address", p.Name))
	}
	h := &catalog.Host{Host: p.Name, Extra: &catalog.HostExtra{TLS: p.TLS}}
	if err := s.allowed(h, &cs.peer, remote); err != nil {
		return nil, nil, s.proxyRefuse(kind, "tls_refused", remote, err.Error())
	}
	return snap, p, nil
}

// addressAllowed reports whether remote's IP is one of list's
// comma-separated addresses (or host names resolving to it).
func addressAllowed(list, remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if x := net.ParseIP(a); x != nil {
			if x.Equal(ip) {
				return true
			}
			continue
		}
		if _, n, err := net.ParseCIDR(a); err == nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// proxyHeartbeat answers "proxy heartbeat": 6.0 takes it from a known
// proxy whatever its version (recorded from 6.0.14).
func (s *Server) proxyHeartbeat(cs *connState, payload []byte, recv time.Time, remote string) []byte {
	var r proxyRequest
	if err := json.Unmarshal(payload, &r); err != nil {
		return s.proxyRefuse("heartbeat", "bad_request", remote, "cannot parse heartbeat: "+err.Error())
	}
	_, p, refusal := s.findProxy(cs, "heartbeat", r.Host, remote)
	if refusal != nil {
		return refusal
	}
	s.SetProxyLastAccess(p.ID, recv)
	s.proxyCount("heartbeat", "ok")
	return []byte(`{"response":"success"}`)
}

// proxyTypes are the item types whose values a proxy delivers: all but
// those the server computes itself (calculated, dependent).
var proxyTypes = func() pipeline.Types {
	var t pipeline.Types
	for i := catalog.ItemType(0); i < 32; i++ {
		if i != catalog.Calculated && i != catalog.Dependent {
			t |= pipeline.TypesOf(i)
		}
	}
	return t
}()

// proxyData answers "proxy data" (see doc.go).
func (s *Server) proxyData(cs *connState, payload []byte, recv time.Time, remote string) []byte {
	d, release, err := s.decodeProxyData(cs, payload)
	defer release()
	if err != nil {
		return s.proxyRefuse("data", proxyDecodeResult(err), remote, err.Error())
	}
	snap, p, refusal := s.findProxy(cs, "data", d.Host, remote)
	if refusal != nil {
		return refusal
	}
	return s.takeProxyData(cs, snap, p, d, recv, remote)
}

// proxyDecodeBytes is what decoding a "proxy data" payload of n bytes
// may allocate: the rows (about 120 bytes each for rows of 60 to 100
// bytes of JSON), their values' copies and the request's parts.
func proxyDecodeBytes(n int) int { return 3 * n }

// errProxyBudget marks a request refused for the trapper's memory
// budget: the proxy keeps its data and sends it again.
type errProxyBudget struct{ err error }

func (e *errProxyBudget) Error() string {
	return "the trapper's memory budget (trapper.max_buffered_bytes) cannot hold this proxy data now; the proxy will send it again: " + e.err.Error()
}

func proxyDecodeResult(err error) string {
	if _, ok := err.(*errProxyBudget); ok {
		return "over_budget"
	}
	return "bad_request"
}

// decodeProxyData decodes a "proxy data" payload with what its decoding
// allocates counted against the trapper's memory budget (cs.mem), as
// every other request's is: a huge batch waits for room or is refused,
// never taking the memory other clients need. release gives it back.
func (s *Server) decodeProxyData(cs *connState, payload []byte) (d *ProxyData, release func(), err error) {
	release = func() {}
	if cs.mem != nil {
		n := proxyDecodeBytes(len(payload))
		if err := cs.mem.Alloc(n); err != nil {
			return nil, release, &errProxyBudget{err}
		}
		release = func() { cs.mem.Free(n) }
	}
	d, err = DecodeProxyData(payload)
	return d, release, err
}

// takeProxyData processes decoded data of proxy p, active or passive,
// and returns the reply.
func (s *Server) takeProxyData(cs *connState, snap *catalog.Snapshot, p *catalog.Proxy, d *ProxyData, recv time.Time, remote string) []byte {
	s.SetProxyLastAccess(p.ID, recv)
	if !ProxyVersionSupported(d.Version) {
		return s.proxyRefuse("data", "bad_version", remote, fmt.Sprintf("proxy %q version %q is not supported: Peregrine, as Zabbix 6.0, takes data from proxies 4.2 to 6.0", p.Name, truncateForLog(d.Version)))
	}
	if len(d.Session) != sessionTokenLen {
		return s.proxyRefuse("data", "bad_request", remote, "invalid session token length "+strconv.Itoa(len(d.Session)))
	}
	if err := s.takeTaskResults(p.Name, d.Tasks); err != nil {
		return s.proxyRefuse("data", "bad_request", remote, err.Error())
	}
	if d.AutoReg != nil || d.Discovery != nil {
		if s.opts.ProxyExtras != nil {
			if err := s.opts.ProxyExtras(p, d.AutoReg, d.Discovery); err != nil {
				result := "bad_part"
				if errors.Is(err, ErrProxyStore) {
					result = "store_error"
				}
				return s.proxyRefuse("data", result, remote, err.Error())
			}
		} else {
			// Refusing would block the proxy's history behind them for
			// good (a real proxy queues auto-registration for every
			// agent it does not know, and resends a refused request
			// whole); a 6.0 server without auto-registration or
			// discovery actions does nothing with them either. They
			// are counted and logged, never dropped unseen.
			s.pm.extras.Add(1)
			if n, ok := s.throttle.Allow("proxy:extras"); ok {
				s.opts.Logger.Warn("proxy sent auto-registration or discovery data, which this trapper does not process: taken and not acted on, as a Zabbix server without such actions", "proxy", p.Name,
					"auto_registration_bytes", len(d.AutoReg), "discovery_bytes", len(d.Discovery), "suppressed", n)
			}
		}
	}
	if s.opts.ItemStates != nil {
		for _, a := range d.Avail {
			if ifc := snap.Interface(a.InterfaceID); ifc != nil {
				if h := snap.HostByID(ifc.HostID); h != nil && h.ProxyID == p.ID {
					if st, ok := s.opts.ItemStates.(InterfaceStates); ok {
						st.SetInterfaceAvailability(a.InterfaceID, a.Available, a.Error, recv)
					}
				}
			}
		}
	}
	if len(d.History) > 0 {
		if err := s.proxyHistory(cs, snap, p, d, recv, remote); err != nil {
			return s.proxyRefuse("data", "store_error", remote, "cannot store values: "+err.Error())
		}
	}
	s.proxyCount("data", "ok")
	return s.proxyReply(p)
}

// ErrProxyStore marks an Options.ProxyExtras error as a failure to
// store what the part said (counted store_error, not bad_part): the
// proxy sends the request again.
var ErrProxyStore = errors.New("cannot store")

var proxyOK = []byte(`{"upload":"enabled","response":"success"}`)

// passiveOK is 6.0's acknowledgement of a passive proxy's data
// (recorded from 6.0.14: no "upload").
var passiveOK = []byte(`{"response":"success"}`)

// proxyReply is the reply to proxy p's data taken: 6.0's success with
// the tasks waiting for it.
func (s *Server) proxyReply(p *catalog.Proxy) []byte {
	ok := proxyOK
	if p.Status == catalog.ProxyPassive {
		ok = passiveOK
	}
	tasks := s.tasks.take(p.ID, time.Now().Unix())
	if len(tasks) == 0 {
		return ok
	}
	s.pm.tasks["sent/ok"].Add(uint64(len(tasks)))
	b := append([]byte(nil), ok[:len(ok)-1]...)
	return append(appendTasks(b, tasks), '}')
}

// InterfaceStates, if ItemStates also implements it, receives the
// availability proxies report for their hosts' interfaces.
type InterfaceStates interface {
	SetInterfaceAvailability(iface uint64, available int, errMsg string, at time.Time)
}

// proxyKey is the session registry's key of a proxy: proxies and hosts
// have IDs of their own sequences, so a proxy's is marked.
func proxyKey(id uint64) uint64 { return id | 1<<63 }

// proxyHistory stores a request's history rows: rows of unknown items,
// of items on hosts the proxy does not monitor, or of disabled ones are
// counted as failed and logged (the proxy cannot resend them anywhere
// else: 6.0 acknowledges them too); the others go through the pipeline
// with the proxy's timestamps, and the session's last id advances only
// once they are durable.
func (s *Server) proxyHistory(cs *connState, snap *catalog.Snapshot, p *catalog.Proxy, d *ProxyData, recv time.Time, remote string) error {
	hosts, sess := s.sessions.lockAll([]byte(d.Session), []uint64{proxyKey(p.ID)}, nil)
	_ = hosts
	ss := sess[0]
	defer ss.mu.Unlock()
	last := ss.last
	var failed [numFailReasons]int
	processed := 0
	samples := make([]history.Sample, 0, len(d.History))
	var states []stateChange
	stamp := newStamper(recv)
	for i := range d.History {
		row := &d.History[i]
		if row.ID != 0 {
			if row.ID <= ss.last {
				failed[failDuplicate]++
				continue
			}
			last = max(last, row.ID)
		}
		it := snap.Item(row.ItemID)
		var r failReason
		switch {
		case it == nil || it.Host == nil:
			r = refused(pipeline.UnknownItem)
		case it.Host.ProxyID != p.ID:
			// A host the proxy does not monitor: as unknown to it, and
			// logged apart, naming the host (a proxy configured by
			// another server, or hosts moved away from it).
			failed[refused(pipeline.UnknownItem)]++
			if n, ok := s.throttle.Allow("proxy:not_its_host"); ok {
				s.opts.Logger.Warn("proxy sent values of a host it does not monitor", "proxy", p.Name, "host", it.Host.Host, "itemid", row.ItemID, "remote", remote, "suppressed", n)
			}
			continue
		case !it.Host.Enabled:
			r = refused(pipeline.HostDisabled)
		case !proxyTypes.Has(it.Type):
			r = refused(pipeline.WrongItemType)
		case !it.Enabled:
			r = refused(pipeline.ItemDisabled)
		}
		if r != 0 {
			failed[r]++
			if n, ok := s.throttle.Allow("proxy:" + failKeys[r]); ok {
				s.opts.Logger.Warn("proxy value rejected", "proxy", p.Name, "reason", failReasonNames[r], "itemid", row.ItemID, "remote", remote, "suppressed", n)
			}
			continue
		}
		if row.Clock < 0 || row.Clock > maxClock || row.NS < 0 || row.NS > 999999999 {
			failed[failBadClock]++
			continue
		}
		if row.State == 1 {
			msg := ""
			if row.Value != nil {
				msg = *row.Value
			}
			s.m.notSupported.Inc()
			states = append(states, stateChange{it.ID, itemstate.Item{NotSupported: true, Error: msg, Clock: row.Clock}})
			processed++
			continue
		}
		if row.Value == nil {
			processed++ // a log position or meta-only row
			continue
		}
		sm := history.Sample{Clock: row.Clock, NS: int32(row.NS)}
		if row.Clock == 0 {
			sm.Clock, sm.NS = -1, -1
		}
		if err := pipeline.Prepare(it, []byte(*row.Value), &sm); err != nil {
			processed++
			s.notSupported(it.Host.Host, it.Key, err)
			states = append(states, stateChange{it.ID, itemstate.Item{NotSupported: true, Error: err.Error(), Clock: row.Clock}})
			continue
		}
		if it.ValueType == history.Log && (row.Timestamp != 0 || row.Source != "" || row.Severity != 0 || row.EventID != 0) {
			sm.Log = &history.LogMeta{Timestamp: row.Timestamp, Source: truncateRunes([]byte(row.Source), maxLogSourceChars), Severity: row.Severity, EventID: row.EventID}
		}
		stamp.stamp(&sm, i)
		samples = append(samples, sm)
		if sm.Type != pipeline.Raw {
			states = append(states, stateChange{item: it.ID})
		}
	}
	s.m.received.Add(uint64(len(d.History)))
	if len(samples) > 0 {
		if err := s.opts.Pipeline.Submit(samples, cs.ticket); err != nil {
			var partial *pipeline.PartialError
			if errors.As(err, &partial) {
				// Some shards stored theirs: the session must not take
				// them again, and the others must not be lost. Keep the
				// stored ones' ids out of reach by failing the request
				// without advancing; see doc.go (a partial store failure
				// may store a shard's values twice when the proxy resends).
				s.m.failed[failStore].Add(uint64(len(samples) - partial.Stored))
			} else {
				s.m.failed[failStore].Add(uint64(len(samples)))
			}
			return err
		}
	}
	processed += len(samples)
	ss.last = last
	if s.opts.ItemStates != nil {
		for _, sc := range states {
			s.opts.ItemStates.SetItemState(sc.item, sc.state)
		}
	}
	s.m.countFailed(processed, &failed)
	return nil
}
