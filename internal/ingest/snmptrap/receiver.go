package snmptrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// Options configures a Receiver.
type Options struct {
	// Listen is the UDP address traps arrive on (Zabbix's snmptrapd
	// listens on 162). Required.
	Listen string
	// Snapshot returns the current catalog snapshot. Required.
	Snapshot func() *catalog.Snapshot
	// Submit stores values and returns once they are durable (the
	// pipeline's Submit). Required.
	Submit func([]history.Sample) error
	// ItemStates, if set, receives the state of trap items: not
	// supported for an invalid regular expression or a trap that does
	// not convert to the item's value type.
	ItemStates *itemstate.Registry
	// Users are the SNMPv3 users whose traps are accepted; without
	// them SNMPv3 traps are dropped.
	Users []User
	// MaxQueue bounds the values decoded and waiting for the store;
	// beyond it traps are dropped and counted. Default 65536.
	MaxQueue int
	// Now is the clock (tests); default time.Now.
	Now     func() time.Time
	Metrics *selfmon.Registry
	Logger  *slog.Logger
}

// User is an SNMPv3 trap sender's USM user (see config.SNMPTrapUser):
// the numbers are those of Zabbix's SNMPv3 interface details.
type User struct {
	SecurityName   string
	EngineID       []byte // the sender's authoritative engine ID
	SecurityLevel  int    // 0 noAuthNoPriv, 1 authNoPriv, 2 authPriv
	AuthProtocol   int    // 0 MD5 .. 5 SHA512
	AuthPassphrase string
	PrivProtocol   int // 0 DES .. 5 AES256C
	PrivPassphrase string
}

// v3Users decodes the SNMPv3 traps of the configured users.
type v3Users struct {
	g       *gosnmp.GoSNMP
	engines map[string][]string // user name → its senders' engine IDs
}

// v3Decoder builds the gosnmp decoder of SNMPv3 traps for users.
func v3Decoder(users []User) (*v3Users, error) {
	if len(users) == 0 {
		return nil, nil
	}
	auth := [...]gosnmp.SnmpV3AuthProtocol{gosnmp.MD5, gosnmp.SHA, gosnmp.SHA224, gosnmp.SHA256, gosnmp.SHA384, gosnmp.SHA512}
	priv := [...]gosnmp.SnmpV3PrivProtocol{gosnmp.DES, gosnmp.AES, gosnmp.AES192, gosnmp.AES256, gosnmp.AES192C, gosnmp.AES256C}
	tbl := gosnmp.NewSnmpV3SecurityParametersTable(gosnmp.Logger{})
	for i, u := range users {
		sp := &gosnmp.UsmSecurityParameters{UserName: u.SecurityName, AuthoritativeEngineID: string(u.EngineID),
			AuthenticationProtocol: gosnmp.NoAuth, PrivacyProtocol: gosnmp.NoPriv}
		if u.SecurityLevel >= 1 && u.AuthProtocol >= 0 && u.AuthProtocol < len(auth) {
			sp.AuthenticationProtocol, sp.AuthenticationPassphrase = auth[u.AuthProtocol], u.AuthPassphrase
		}
		if u.SecurityLevel == 2 && u.PrivProtocol >= 0 && u.PrivProtocol < len(priv) {
			sp.PrivacyProtocol, sp.PrivacyPassphrase = priv[u.PrivProtocol], u.PrivPassphrase
		}
		if err := tbl.Add(u.SecurityName, sp); err != nil {
			return nil, fmt.Errorf("SNMPv3 trap user %d (%s): %v", i, u.SecurityName, err)
		}
	}
	g := &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel}
	g.SetTrapSecurityParametersTable(tbl)
	v := &v3Users{g: g, engines: map[string][]string{}}
	for _, u := range users {
		v.engines[u.SecurityName] = append(v.engines[u.SecurityName], string(u.EngineID))
	}
	return v, nil
}

// Reasons a datagram or a trap was dropped, as the "reason" label.
const (
	dropMalformed = iota // not an SNMP message
	dropNotTrap          // an SNMP message, not a trap
	dropV3               // SNMPv3 (not supported)
	dropUnmatched        // no SNMP interface with the sender's address
	dropNoItem           // matched a host without a matching trap item
	dropQueueFull        // the store is behind: MaxQueue values waiting
	dropStore            // the store failed
	numDrops
)

var dropNames = [numDrops]string{"malformed", "not_trap", "v3", "unmatched", "no_item", "queue_full", "store_error"}

// Receiver receives SNMP traps on UDP and stores them in the snmptrap[]
// and snmptrap.fallback items of the hosts they come from.
type Receiver struct {
	opts     Options
	conn     *net.UDPConn
	v3       *v3Users // decodes the SNMPv3 users' traps; nil without users
	throttle *selfmon.LogThrottle

	mu      sync.Mutex
	queue   []history.Sample
	spare   []history.Sample
	wake    chan struct{} // 1-buffered: "the queue has values"
	matcher *matcher      // of the last snapshot seen; reader goroutine only

	received *selfmon.Counter
	stored   *selfmon.Counter
	acked    *selfmon.Counter
	dropped  [numDrops]*selfmon.Counter
}

// New binds the listener; Run serves.
func New(opts Options) (*Receiver, error) {
	if opts.Snapshot == nil || opts.Submit == nil || opts.Listen == "" {
		return nil, errors.New("snmptrap: Options.Listen, Snapshot and Submit are required")
	}
	if opts.MaxQueue <= 0 {
		opts.MaxQueue = 65536
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	ua, err := net.ResolveUDPAddr("udp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve snmp.trap_listen %q: %w", opts.Listen, err)
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("cannot listen for SNMP traps on %s (set snmp.trap_listen; port 162 needs CAP_NET_BIND_SERVICE): %w", opts.Listen, err)
	}
	v3, err := v3Decoder(opts.Users)
	if err != nil {
		conn.Close()
		return nil, err
	}
	r := &Receiver{opts: opts, conn: conn, v3: v3, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute), wake: make(chan struct{}, 1)}
	m := opts.Metrics
	r.received = m.Counter("peregrine_snmptrap_received_total", "Datagrams received on the SNMP trap port.")
	r.acked = m.Counter("peregrine_snmptrap_informs_acknowledged_total", "SNMPv2c InformRequests answered with a Response.")
	r.stored = m.Counter("peregrine_snmptrap_values_total", "Trap values stored in snmptrap[] and snmptrap.fallback items.")
	for i := range r.dropped {
		r.dropped[i] = m.Counter("peregrine_snmptrap_dropped_total", "SNMP trap datagrams or values dropped, by reason.", "reason", dropNames[i])
	}
	return r, nil
}

// Close releases the port; Run does it when its context ends, Close is
// for a receiver that never ran.
func (r *Receiver) Close() { r.conn.Close() }

// Addr is the bound address.
func (r *Receiver) Addr() net.Addr { return r.conn.LocalAddr() }

// Run receives until ctx ends, then stores what it decoded and returns.
func (r *Receiver) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	stopWriter := make(chan struct{})
	wg.Add(1)
	go func() { defer wg.Done(); r.writer(stopWriter) }()
	stop := context.AfterFunc(ctx, func() { r.conn.Close() })
	defer stop()
	buf := make([]byte, 65535)
	var text []byte
	for {
		n, from, err := r.conn.ReadFromUDP(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				break
			}
			continue
		}
		r.received.Inc()
		text = r.handle(buf[:n], from, text[:0])
	}
	close(stopWriter)
	wg.Wait()
	return nil
}

// handle decodes one datagram and queues its values. text is a reused
// scratch buffer; it is returned for the next datagram.
func (r *Receiver) handle(b []byte, from *net.UDPAddr, text []byte) []byte {
	pkt, err := decode(b, r.v3)
	if err != nil {
		reason := dropMalformed
		switch {
		case errors.Is(err, errV3):
			reason = dropV3
		case errors.Is(err, errNotTrap):
			reason = dropNotTrap
		}
		r.drop(reason, from, err.Error())
		return text
	}
	if pkt.PDUType == gosnmp.InformRequest {
		r.acknowledge(pkt, from)
	}
	snap := r.opts.Snapshot()
	if r.matcher == nil || r.matcher.snap != snap {
		r.matcher = newMatcher(snap)
	}
	ifaces := r.matcher.byIP[from.IP.String()]
	if len(ifaces) == 0 {
		r.drop(dropUnmatched, from, "no SNMP interface has this address: add one to the sending host")
		return text
	}
	t := &trap{pkt: pkt, from: from, to: r.conn.LocalAddr().String(), recv: r.opts.Now()}
	text = appendText(text, t)
	var out []history.Sample
	for _, f := range ifaces {
		items := r.matcher.itemsOf(f, text, r.opts.ItemStates)
		if len(items) == 0 {
			r.drop(dropNoItem, from, "the host has no snmptrap[] item matching the trap and no snmptrap.fallback item")
			continue
		}
		for _, it := range items {
			var s history.Sample
			if err := pipeline.Prepare(it, text, &s); err != nil {
				if r.opts.ItemStates != nil {
					r.opts.ItemStates.SetItemState(it.ID, itemstate.Item{NotSupported: true, Error: err.Error(), Clock: t.recv.Unix()})
				}
				continue
			}
			if s.Type == pipeline.Raw {
				// The item's steps and dependents run in its shard, which
				// also sets its state. The Raw text aliases text, reused
				// for the next datagram while this value waits in the
				// queue: it gets its own copy.
				s.S = strings.Clone(s.S)
			} else if r.opts.ItemStates != nil {
				r.opts.ItemStates.SetItemState(it.ID, itemstate.Item{}) // normal again
			}
			s.Clock, s.NS = t.recv.Unix(), int32(t.recv.Nanosecond())
			out = append(out, s)
		}
	}
	r.enqueue(out, from)
	return text
}

// acknowledge answers an InformRequest with its Response (RFC 3416
// 4.2.7), as snmptrapd does: the sender stops retrying. Every inform is
// acknowledged, matched or not: the sender cannot do better by trying
// again.
func (r *Receiver) acknowledge(pkt *gosnmp.SnmpPacket, from *net.UDPAddr) {
	resp := &gosnmp.SnmpPacket{Version: pkt.Version, Community: pkt.Community, PDUType: gosnmp.GetResponse,
		RequestID: pkt.RequestID, Variables: pkt.Variables}
	if b, err := resp.MarshalMsg(); err == nil {
		r.conn.WriteToUDP(b, from)
		r.acked.Inc()
	}
}

func (r *Receiver) enqueue(s []history.Sample, from *net.UDPAddr) {
	if len(s) == 0 {
		return
	}
	r.mu.Lock()
	if len(r.queue)+len(s) > r.opts.MaxQueue {
		r.mu.Unlock()
		r.dropped[dropQueueFull].Add(uint64(len(s)))
		if n, ok := r.throttle.Allow("queue_full"); ok {
			r.opts.Logger.Warn("SNMP trap values dropped: the store is behind", "from", from.String(), "queued", r.opts.MaxQueue, "suppressed", n)
		}
		return
	}
	r.queue = append(r.queue, s...)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// writer stores queued values in batches, off the reading goroutine,
// so a slow store costs queued values, not unread datagrams.
func (r *Receiver) writer(stop <-chan struct{}) {
	for {
		stopping := false
		select {
		case <-r.wake:
		case <-stop:
			stopping = true
		}
		r.mu.Lock()
		batch := r.queue
		r.queue = r.spare[:0]
		r.mu.Unlock()
		if len(batch) > 0 {
			if err := r.opts.Submit(batch); err != nil {
				r.dropped[dropStore].Add(uint64(len(batch)))
				if n, ok := r.throttle.Allow("store"); ok {
					r.opts.Logger.Error("cannot store SNMP trap values", "values", len(batch), "err", err, "suppressed", n)
				}
			} else {
				r.stored.Add(uint64(len(batch)))
			}
		}
		clear(batch)
		r.spare = batch
		if stopping {
			return
		}
	}
}

func (r *Receiver) drop(reason int, from *net.UDPAddr, msg string) {
	r.dropped[reason].Inc()
	if n, ok := r.throttle.Allow(dropNames[reason]); ok {
		r.opts.Logger.Warn("SNMP trap dropped", "reason", dropNames[reason], "from", from.String(), "err", msg, "suppressed", n)
	}
}

// matcher indexes one snapshot's SNMP interfaces by address and keeps
// the trap items' compiled regular expressions.
type matcher struct {
	snap *catalog.Snapshot
	byIP map[string][]*catalog.Interface
	res  map[uint64]*regexp.Regexp // item → its regexp; nil for snmptrap[] without one
	bad  map[uint64]string         // item → why its key is invalid
	// items holds each matched host's trap items, listed on first use.
	items map[uint64][]*catalog.Item
}

func newMatcher(snap *catalog.Snapshot) *matcher {
	m := &matcher{snap: snap, byIP: map[string][]*catalog.Interface{}, res: map[uint64]*regexp.Regexp{}, bad: map[uint64]string{},
		items: map[uint64][]*catalog.Item{}}
	for _, h := range snap.Hosts() {
		if !h.Enabled {
			continue
		}
		for i := range h.Interfaces {
			f := &h.Interfaces[i]
			if f.Type != catalog.InterfaceSNMP {
				continue
			}
			addr := f.IP
			if !f.UseIP {
				addr = f.DNS // a literal address in the DNS field, as Zabbix matches it
			}
			if ip := net.ParseIP(addr); ip != nil {
				m.byIP[ip.String()] = append(m.byIP[ip.String()], f)
			}
		}
	}
	return m
}

// itemsOf returns the trap items of f's host that take this trap: every
// enabled snmptrap[regexp] item whose regexp matches text (or that has
// none), else the snmptrap.fallback item. Items using another interface
// of the host are left out, as Zabbix matches items by interface.
func (m *matcher) itemsOf(f *catalog.Interface, text []byte, states *itemstate.Registry) []*catalog.Item {
	items, ok := m.items[f.HostID]
	if !ok {
		if h := m.snap.HostByID(f.HostID); h != nil {
			for _, it := range h.Items() {
				if it.Type == catalog.SNMPTrap && it.Enabled {
					items = append(items, it)
				}
			}
		}
		m.items[f.HostID] = items
	}
	var matched []*catalog.Item
	var fallback *catalog.Item
	for _, it := range items {
		if it.InterfaceID != 0 && it.InterfaceID != f.ID {
			continue
		}
		if it.Key == "snmptrap.fallback" {
			fallback = it
			continue
		}
		re, ok := m.regexpOf(it, states)
		if ok && (re == nil || re.Match(text)) {
			matched = append(matched, it)
		}
	}
	if len(matched) == 0 && fallback != nil {
		matched = append(matched, fallback)
	}
	return matched
}

// regexpOf compiles an snmptrap[regexp] key once per snapshot; a key
// that is not snmptrap[...] or whose regexp does not compile makes the
// item not supported.
func (m *matcher) regexpOf(it *catalog.Item, states *itemstate.Registry) (*regexp.Regexp, bool) {
	if re, ok := m.res[it.ID]; ok {
		return re, true
	}
	if _, bad := m.bad[it.ID]; bad {
		return nil, false
	}
	msg := ""
	k, err := itemkey.Parse(it.Key)
	switch {
	case err != nil:
		msg = err.Error()
	case k.Name != "snmptrap" || len(k.Params) > 1:
		msg = "an SNMP trap item's key is snmptrap[<regexp>] or snmptrap.fallback"
	default:
		var re *regexp.Regexp
		if len(k.Params) == 1 && k.Params[0].Value != "" {
			// Zabbix's regexps are PCRE; Go's RE2 takes the common
			// subset (no backreferences or lookaround).
			if re, err = regexp.Compile(k.Params[0].Value); err != nil {
				msg = fmt.Sprintf("invalid regular expression %q: %v", k.Params[0].Value, err)
				break
			}
		}
		m.res[it.ID] = re
		return re, true
	}
	m.bad[it.ID] = msg
	if states != nil {
		states.SetItemState(it.ID, itemstate.Item{NotSupported: true, Error: msg, Clock: time.Now().Unix()})
	}
	return nil, false
}
