package icmp

import (
	"bytes"
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Options configures a Checker.
type Options struct {
	// Rate bounds the echo requests sent per second, all checks and both
	// families together. Default 10000.
	Rate int
	// Socket is ModeAuto (default), ModeRaw or ModeDgram.
	Socket string
	// ReceiveBuffer is each socket's receive buffer in bytes. Default 4 MiB.
	ReceiveBuffer int
	// ResolveTimeout bounds resolving a target given by DNS name. Default 3s.
	ResolveTimeout time.Duration
	Metrics        *selfmon.Registry
	Logger         *slog.Logger
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{Rate: 10000, ReceiveBuffer: 4 << 20, ResolveTimeout: 3 * time.Second}
}

// expiryGrace is how long past its timeout a request waits before it is
// counted lost: a reply carries the kernel's receive time, and one that
// arrived in time but was read late (a busy machine) still counts; one
// that arrived after the timeout is lost whenever it is read.
const expiryGrace = 250 * time.Millisecond

// cookieLen is the per-Checker random prefix of every echo payload: a
// reply is ours only if it carries it back.
const cookieLen = 8

// Reasons a reply was dropped, as the "reason" label.
const (
	dropForeign   = iota // another process's identifier (raw sockets see every reply)
	dropUnmatched        // our identifier, but no such probe pending (late, duplicate or forged)
	dropBadData          // our identifier, but not our cookie, or too short
	numDrops
)

var dropNames = [numDrops]string{"foreign_id", "unmatched", "bad_payload"}

// Checker runs icmpping, icmppingloss and icmppingsec checks over one
// ICMP socket per address family.
type Checker struct {
	opts     Options
	throttle *selfmon.LogThrottle
	cookie   [cookieLen]byte
	id       uint16 // our echo identifier on raw sockets
	epoch    time.Time

	startOnce sync.Once
	wake      chan struct{} // 1-buffered: the heap has a new earliest event
	quit      chan struct{}
	wg        sync.WaitGroup

	// mu guards everything below; the sender loop and the receivers take
	// it per event or reply, never across a syscall.
	mu      sync.Mutex
	fams    [2]*family // [0] IPv4, [1] IPv6; nil until first use
	famErr  [2]error   // why a family's socket could not be opened
	events  eventHeap
	pending map[probeKey]*probe
	// active holds the checks started and not yet reported; watches
	// holds, per context of a Check call, the hook that abandons its
	// checks when it ends (a check may wait a whole interval for its
	// next packet: a stopping server must not wait with it).
	active   map[*run]struct{}
	watches  map[context.Context]*watch
	closed   bool
	tokens   float64
	lastFill time.Duration

	inFlight  *selfmon.Gauge
	sent      *selfmon.Counter
	replies   *selfmon.Counter
	lost      *selfmon.Counter
	sendErrs  *selfmon.Counter
	drops     [numDrops]*selfmon.Counter
	results   [poll.NumStatus]*selfmon.Counter
	rateWaits *selfmon.Counter
	late      *selfmon.Counter
}

// family is one address family's socket and sequence counter.
type family struct {
	s   *sock
	seq uint16
}

// watch is the cancellation hook of one context and its checks' count.
type watch struct {
	runs int
	stop func() bool
}

type probeKey struct {
	addr netip.Addr
	seq  uint16
}

// probe is one echo request waiting for its reply.
type probe struct {
	r      *run
	key    probeKey
	sentAt time.Duration // since epoch, when registered (expiry is from it)
	// sent is when the packet was handed to the kernel (nanoseconds since
	// epoch), set by the sender outside the lock: the RTT's start.
	sent atomic.Int64
	over bool // answered or expired
}

// run is one check in progress.
type run struct {
	ch          poll.Check
	p           params
	dst         netip.Addr
	fam         int
	ctx         context.Context
	done        func(*poll.Result)
	sent, recv  int
	outstanding int
	// expired counts packets lost because their timeout ran out before
	// a reply was read (not those refused by the kernel, nor replies the
	// kernel stamped late): see poll.Result.TimedOut.
	expired  int
	stopped  bool // no more packets: ctx ended or the checker closed
	finished bool // reported (or about to be)
	min, max time.Duration
	sum      time.Duration
}

// event is a due send (p == nil: the next packet of r) or a probe's
// expiry.
type event struct {
	at time.Duration // since epoch
	r  *run
	p  *probe
}

type eventHeap []event

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h eventHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)        { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// New returns a Checker. Sockets are opened, and the sender and receiver
// goroutines started, on the first check of each family; Close stops
// them.
func New(opts Options) *Checker {
	d := DefaultOptions()
	if opts.Rate <= 0 {
		opts.Rate = d.Rate
	}
	if opts.ReceiveBuffer <= 0 {
		opts.ReceiveBuffer = d.ReceiveBuffer
	}
	if opts.ResolveTimeout <= 0 {
		opts.ResolveTimeout = d.ResolveTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	c := &Checker{
		opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute),
		epoch: time.Now(), wake: make(chan struct{}, 1), quit: make(chan struct{}),
		pending: map[probeKey]*probe{}, active: map[*run]struct{}{}, watches: map[context.Context]*watch{},
	}
	_, _ = rand.Read(c.cookie[:])
	var idb [2]byte
	_, _ = rand.Read(idb[:])
	c.id = binary.BigEndian.Uint16(idb[:])
	c.tokens = c.burst()
	m := opts.Metrics
	c.inFlight = m.Gauge("peregrine_poll_icmp_in_flight", "ICMP checks in progress.")
	c.sent = m.Counter("peregrine_poll_icmp_requests_total", "ICMP echo requests sent (those the kernel refused included, see send_errors).")
	c.replies = m.Counter("peregrine_poll_icmp_replies_total", "ICMP echo replies matched to a request in time.")
	c.lost = m.Counter("peregrine_poll_icmp_lost_total", "ICMP echo requests without a reply within their timeout.")
	c.sendErrs = m.Counter("peregrine_poll_icmp_send_errors_total", "ICMP echo requests the kernel refused to send (no route, blackhole); counted as lost.")
	c.late = m.Counter("peregrine_poll_icmp_late_replies_total", "ICMP echo replies that arrived after their timeout (counted as lost).")
	c.rateWaits = m.Counter("peregrine_poll_icmp_rate_limited_total", "Times the ICMP sender waited for its rate limit (poll.icmp_rate).")
	for r := range c.drops {
		c.drops[r] = m.Counter("peregrine_poll_icmp_dropped_replies_total", "ICMP echo replies dropped as not ours, by reason.", "reason", dropNames[r])
	}
	for s := range c.results {
		c.results[s] = m.Counter("peregrine_poll_icmp_checks_total", "ICMP checks done, by result.", "result", poll.Status(s).String())
	}
	return c
}

// burst is how many packets the rate limit lets out at once: 10 ms
// worth, so that a batch of checks does not wait for one timer per packet.
func (c *Checker) burst() float64 { return max(1, float64(c.opts.Rate)/100) }

func (c *Checker) now() time.Duration { return time.Since(c.epoch) }

// Check parses each check's key and starts it; it returns at once. A
// check's packets go out one interval apart from the one sender
// goroutine; its result is reported when every packet has been answered
// or has timed out.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	c.startOnce.Do(func() {
		c.wg.Add(1)
		go c.sendLoop()
	})
	c.inFlight.Add(int64(len(batch)))
	var resolve []*run
	c.mu.Lock()
	added := false
	for i := range batch {
		r := &run{ch: batch[i], ctx: ctx, done: done}
		p, err := parseKey(r.ch.Key)
		if err != nil {
			c.mu.Unlock()
			c.finish(r, poll.NotSupported, err.Error())
			c.mu.Lock()
			continue
		}
		r.p = p
		target := p.target
		if target == "" {
			host, _, err := net.SplitHostPort(r.ch.Addr)
			if err != nil {
				host = r.ch.Addr
			}
			target = host
		}
		if a, err := netip.ParseAddr(target); err == nil {
			r.dst = a.Unmap().WithZone("")
			if msg := c.startLocked(r); msg != "" {
				st := poll.NotSupported
				if msg == errStopping {
					st = poll.NetworkError
				}
				c.mu.Unlock()
				c.finish(r, st, msg)
				c.mu.Lock()
				continue
			}
			added = true
			continue
		}
		r.p.target = target
		resolve = append(resolve, r)
	}
	c.mu.Unlock()
	if added {
		c.signal()
	}
	for _, r := range resolve {
		go c.resolve(r) // DNS only: the packets still go through the one sender
	}
}

// resolve looks a DNS target up, then starts its check.
func (c *Checker) resolve(r *run) {
	ctx, cancel := context.WithTimeout(r.ctx, c.opts.ResolveTimeout)
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", r.p.target)
	cancel()
	if err != nil || len(addrs) == 0 {
		// Zabbix (fping) reports an unresolvable name as a host that
		// does not answer: 0, 100% loss, 0 s.
		if n, ok := c.throttle.Allow("resolve"); ok {
			c.opts.Logger.Warn("cannot resolve ICMP target: counted as unreachable", "target", r.p.target, "itemid", r.ch.ItemID, "err", err, "suppressed", n)
		}
		r.sent = r.p.packets
		c.finish(r, poll.OK, "")
		return
	}
	r.dst = addrs[0].Unmap().WithZone("")
	c.mu.Lock()
	msg := c.startLocked(r)
	c.mu.Unlock()
	if msg == errStopping {
		c.finish(r, poll.NetworkError, msg)
		return
	}
	if msg != "" {
		c.finish(r, poll.NotSupported, msg)
		return
	}
	c.signal()
}

const errStopping = "check abandoned: the server is stopping"

// startLocked opens r's family if needed and schedules its first packet;
// it returns why the check cannot run, if it cannot.
func (c *Checker) startLocked(r *run) string {
	if c.closed {
		return errStopping
	}
	if r.dst.Is6() {
		r.fam = 1
	}
	if c.fams[r.fam] == nil && c.famErr[r.fam] == nil {
		s, err := openSock(r.fam == 1, c.opts.Socket, c.opts.ReceiveBuffer)
		if err != nil {
			c.famErr[r.fam] = err
			c.opts.Logger.Error("ICMP checks of this address family cannot run", "ipv6", r.fam == 1, "err", err)
		} else {
			c.fams[r.fam] = &family{s: s}
			c.opts.Logger.Info("ICMP socket open", "ipv6", r.fam == 1, "raw", s.raw)
			c.wg.Add(1)
			go c.receive(s)
		}
	}
	if err := c.famErr[r.fam]; err != nil {
		return err.Error()
	}
	c.active[r] = struct{}{}
	w := c.watches[r.ctx]
	if w == nil {
		w = &watch{}
		ctx := r.ctx
		w.stop = context.AfterFunc(ctx, func() { c.abandon(ctx) })
		c.watches[ctx] = w
	}
	w.runs++
	heap.Push(&c.events, event{at: c.now(), r: r})
	return ""
}

func (c *Checker) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// out is a packet the sender writes outside the lock.
type out struct {
	pr *probe
	s  *sock
}

// sendLoop is the one sender: it pops due events (sends and expiries)
// from the heap, registers each probe before its packet leaves (so a
// fast reply always finds it), writes the packets outside the lock and
// sleeps until the next event.
func (c *Checker) sendLoop() {
	defer c.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	buf := make([]byte, 8+maxSize)
	var outs []out
	var over []*run
	for {
		c.mu.Lock()
		now := c.now()
		wait := time.Hour
		for len(c.events) > 0 {
			ev := c.events[0]
			if ev.at > now {
				wait = ev.at - now
				break
			}
			if ev.p != nil { // expiry
				heap.Pop(&c.events)
				if !ev.p.over {
					ev.p.over = true
					delete(c.pending, ev.p.key)
					c.lost.Inc()
					ev.p.r.outstanding--
					ev.p.r.expired++
					if c.completeLocked(ev.p.r) {
						over = append(over, ev.p.r)
					}
				}
				continue
			}
			r := ev.r
			if r.finished || r.ctx.Err() != nil || c.closed {
				heap.Pop(&c.events)
				if r.finished {
					// Reported already (abandon): finish reads it
					// unlocked, so it is not written again.
					continue
				}
				r.stopped = true
				if c.completeLocked(r) {
					over = append(over, r)
				}
				continue
			}
			if !c.takeToken(now) {
				wait = time.Duration(float64(time.Second) * (1 - c.tokens) / float64(c.opts.Rate))
				c.rateWaits.Inc()
				break
			}
			heap.Pop(&c.events)
			f := c.fams[r.fam]
			f.seq++
			key := probeKey{r.dst, f.seq}
			for c.pending[key] != nil { // 65536 in flight to one address: skip on
				f.seq++
				key.seq = f.seq
			}
			pr := &probe{r: r, key: key, sentAt: now}
			c.pending[key] = pr
			r.sent++
			r.outstanding++
			heap.Push(&c.events, event{at: now + r.p.timeout + expiryGrace, r: r, p: pr})
			if r.sent < r.p.packets {
				heap.Push(&c.events, event{at: now + r.p.interval, r: r})
			}
			outs = append(outs, out{pr, f.s})
			if len(outs) >= 256 {
				wait = 0
				break // write these before taking more
			}
		}
		c.mu.Unlock()
		for _, o := range outs {
			o.pr.sent.Store(int64(c.now()))
			// Counted before the write: on loopback the reply can
			// complete the check before the write returns.
			c.sent.Inc()
			if err := o.s.writeTo(c.echo(buf, o.s, o.pr), o.pr.key.addr); err != nil {
				c.sendFailed(o.pr, err, &over)
			}
		}
		outs = outs[:0]
		for _, r := range over {
			c.finish(r, poll.OK, "")
		}
		over = over[:0]
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-c.quit:
				return
			case <-c.wake:
				// No drain: since Go 1.23 Stop discards a fired timer's
				// value (a receive here could block for ever).
				timer.Stop()
			case <-timer.C:
			}
		} else {
			select {
			case <-c.quit:
				return
			default:
			}
		}
	}
}

// takeToken refills the rate limit's bucket and takes one packet's token.
func (c *Checker) takeToken(now time.Duration) bool {
	c.tokens = min(c.burst(), c.tokens+float64(now-c.lastFill)*float64(c.opts.Rate)/float64(time.Second))
	c.lastFill = now
	if c.tokens < 1 {
		return false
	}
	c.tokens--
	return true
}

// sendFailed counts a packet the kernel refused as lost (a blackhole or
// unreachable route: fping counts it so too) and logs the reason once in
// a while.
func (c *Checker) sendFailed(pr *probe, err error, over *[]*run) {
	c.mu.Lock()
	closed := c.closed
	if !pr.over {
		pr.over = true
		delete(c.pending, pr.key)
		c.lost.Inc()
		pr.r.outstanding--
		if c.completeLocked(pr.r) {
			*over = append(*over, pr.r)
		}
	}
	c.mu.Unlock()
	if closed {
		return // our own Close, not the network
	}
	c.sendErrs.Inc()
	if n, ok := c.throttle.Allow("send"); ok {
		c.opts.Logger.Warn("cannot send ICMP echo request: counted as lost", "addr", pr.key.addr, "itemid", pr.r.ch.ItemID, "err", err, "suppressed", n)
	}
}

// completeLocked reports whether r is over (every packet sent, or the
// run stopped, and none awaiting a reply) and, the first time it is,
// marks it finished so that it is reported exactly once.
func (c *Checker) completeLocked(r *run) bool {
	if r.finished || r.outstanding > 0 || (r.sent < r.p.packets && !r.stopped) {
		return false
	}
	r.finished = true
	c.forgetLocked(r)
	return true
}

// forgetLocked drops a finished run from the active set and its
// context's watch (stopping the watch with its last run).
func (c *Checker) forgetLocked(r *run) {
	if _, ok := c.active[r]; !ok {
		return
	}
	delete(c.active, r)
	if w := c.watches[r.ctx]; w != nil {
		if w.runs--; w.runs == 0 {
			w.stop()
			delete(c.watches, r.ctx)
		}
	}
}

// abandon ends at once every check started with ctx, which has ended:
// their packets still pending expire unseen (finished runs ignore them).
func (c *Checker) abandon(ctx context.Context) {
	var over []*run
	c.mu.Lock()
	for r := range c.active {
		if r.ctx == ctx && !r.finished {
			r.finished, r.stopped = true, true
			over = append(over, r)
		}
	}
	for _, r := range over {
		c.forgetLocked(r)
	}
	c.mu.Unlock()
	for _, r := range over {
		c.finish(r, poll.OK, "") // reported abandoned: ctx has ended
	}
}

// echo builds the echo request of pr in buf: type, code, checksum,
// identifier, sequence, then the cookie, the send time and zeros up to
// the check's size.
func (c *Checker) echo(buf []byte, s *sock, pr *probe) []byte {
	b := buf[:8+pr.r.p.size]
	clear(b)
	b[0] = 8
	if s.v6 {
		b[0] = 128
	}
	binary.BigEndian.PutUint16(b[4:], c.id) // the kernel sets its own on datagram sockets
	binary.BigEndian.PutUint16(b[6:], pr.key.seq)
	copy(b[8:], c.cookie[:])
	binary.BigEndian.PutUint64(b[8+cookieLen:], uint64(pr.sentAt))
	if !s.v6 {
		// IPv4 raw sockets send our checksum as is; the kernel computes
		// ICMPv6's (it covers a pseudo-header we do not build) and the
		// datagram sockets'.
		binary.BigEndian.PutUint16(b[2:], checksum(b))
	}
	return b
}

func checksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// receive reads replies from one socket until Close, matching each by
// address and sequence (and, on raw sockets, identifier) to its probe.
// Anything else is counted and dropped: a raw socket sees every echo
// reply the host gets, and a reply can be late, duplicated or forged.
func (c *Checker) receive(s *sock) {
	defer c.wg.Done()
	buf := make([]byte, 1<<16)
	oob := make([]byte, 128)
	replyType := byte(0)
	if s.v6 {
		replyType = 129
	}
	for {
		n, from, rx, err := s.readFrom(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if n, ok := c.throttle.Allow("read"); ok {
				c.opts.Logger.Warn("cannot read ICMP replies", "ipv6", s.v6, "err", err, "suppressed", n)
			}
			select {
			case <-c.quit:
				return
			case <-time.After(10 * time.Millisecond): // do not spin on a persistent error
			}
			continue
		}
		at := c.now()
		if !rx.IsZero() {
			// Wall clock both sides (the epoch keeps its reading); a
			// clock step since the epoch shows as a reply from the
			// future or from long ago: then the read time will do.
			if k := rx.Sub(c.epoch); k <= at && at-k < 5*time.Second {
				at = k
			}
		}
		b := buf[:n]
		if len(b) < 8 || b[0] != replyType {
			continue // the raw filter passes echo replies only; datagram sockets get errors too
		}
		if s.raw && binary.BigEndian.Uint16(b[4:]) != c.id {
			c.drops[dropForeign].Inc()
			continue
		}
		if len(b) < 8+cookieLen || !bytes.Equal(b[8:8+cookieLen], c.cookie[:]) {
			c.drop(dropBadData, from, b)
			continue
		}
		key := probeKey{from, binary.BigEndian.Uint16(b[6:])}
		c.mu.Lock()
		pr := c.pending[key]
		if pr == nil || pr.over {
			c.mu.Unlock()
			c.drop(dropUnmatched, from, b)
			continue
		}
		pr.over = true
		delete(c.pending, key)
		r := pr.r
		rtt := at - time.Duration(pr.sent.Load())
		if rtt > r.p.timeout {
			// Arrived after its timeout (read in the grace period): lost,
			// as fping counts it.
			r.outstanding--
			complete := c.completeLocked(r)
			c.mu.Unlock()
			c.lost.Inc()
			c.late.Inc()
			if complete {
				c.finish(r, poll.OK, "")
			}
			continue
		}
		if r.recv == 0 || rtt < r.min {
			r.min = rtt
		}
		r.max = max(r.max, rtt)
		r.sum += rtt
		r.recv++
		r.outstanding--
		complete := c.completeLocked(r)
		c.mu.Unlock()
		c.replies.Inc()
		if complete {
			c.finish(r, poll.OK, "")
		}
	}
}

func (c *Checker) drop(reason int, from netip.Addr, b []byte) {
	c.drops[reason].Inc()
	if n, ok := c.throttle.Allow("drop:" + dropNames[reason]); ok {
		c.opts.Logger.Warn("dropped an ICMP echo reply that matches no request of ours", "reason", dropNames[reason], "from", from, "bytes", len(b), "suppressed", n)
	}
}

// finish reports r's result: for OK, the value of its key from the
// packets sent and answered.
func (c *Checker) finish(r *run, st poll.Status, msg string) {
	res := &poll.Result{Check: r.ch, Status: st, Error: msg, Clock: time.Now()}
	if st == poll.OK {
		if r.stopped && r.ctx.Err() != nil {
			res.Status, res.Error = poll.NetworkError, errStopping
		} else {
			res.Value = r.value()
			// Packets unanswered when their time ran out: if this
			// server was behind, the replies may be sitting unread.
			res.TimedOut = r.expired > 0
		}
	}
	c.inFlight.Add(-1)
	c.results[res.Status].Inc()
	r.done(res)
}

// value is the key's value: Zabbix's icmpping (1 if any reply),
// icmppingloss (percent lost) or icmppingsec (seconds; 0 without a reply,
// at least 0.0001 with one, as Zabbix rounds).
func (r *run) value() []byte {
	switch r.p.kind {
	case kindPing:
		if r.recv > 0 {
			return []byte("1")
		}
		return []byte("0")
	case kindLoss:
		sent := max(r.sent, 1)
		loss := float64(sent-r.recv) * 100 / float64(sent)
		return strconv.AppendFloat(nil, loss, 'f', -1, 64)
	}
	if r.recv == 0 {
		return []byte("0")
	}
	var d time.Duration
	switch r.p.mode {
	case modeMin:
		d = r.min
	case modeMax:
		d = r.max
	default:
		d = r.sum / time.Duration(r.recv)
	}
	sec := math.Max(d.Seconds(), 0.0001)
	return strconv.AppendFloat(nil, sec, 'f', 6, 64)
}

// Close stops the sender and receivers; checks in progress end as
// abandoned. The checker cannot be used after.
func (c *Checker) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	// Every run not yet over has an event in the heap (its next packet
	// or a probe's expiry): all of them end now, reported here once.
	var stopped []*run
	for r := range c.active {
		if !r.finished {
			r.finished, r.stopped = true, true
			stopped = append(stopped, r)
		}
	}
	for _, r := range stopped {
		c.forgetLocked(r)
	}
	c.events = nil
	clear(c.pending)
	fams := c.fams
	c.mu.Unlock()
	close(c.quit)
	for _, f := range fams {
		if f != nil {
			f.s.conn.Close()
		}
	}
	c.wg.Wait()
	for _, r := range stopped {
		res := &poll.Result{Check: r.ch, Status: poll.NetworkError, Error: errStopping, Clock: time.Now()}
		c.inFlight.Add(-1)
		c.results[res.Status].Inc()
		r.done(res)
	}
	return nil
}

// String describes the checker's sockets (for logs and tests).
func (c *Checker) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := "icmp"
	for i, f := range c.fams {
		if f != nil {
			s += fmt.Sprintf(" v%d:raw=%t", 4+2*i, f.s.raw)
		}
	}
	return s
}
