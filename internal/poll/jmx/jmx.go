package jmx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fastjson"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// Options configures a Checker.
type Options struct {
	// Gateway is the Zabbix Java gateway's "host:port" (Zabbix's
	// JavaGateway and JavaGatewayPort). Empty: no gateway, and every JMX
	// check is not supported, saying how to configure one.
	Gateway string
	// MaxConns bounds the connections to the gateway at once, as
	// Zabbix's StartJavaPollers bounds its Java pollers (each holds one
	// connection at a time); requests beyond it wait for one within
	// their checks' timeout. Keep it at most the gateway's START_POLLERS,
	// or requests queue inside the gateway instead. Default 5.
	MaxConns int
	// MaxKeys bounds the keys of one request. Default 32, Zabbix's.
	MaxKeys int
	// MaxReplySize bounds one reply's payload; a larger one fails its
	// checks. Default 16 MiB (a jmx.discovery of a large application
	// server runs to megabytes).
	MaxReplySize int
	// DefaultTimeout is a check's timeout when the scheduler gives none.
	// Default 3s.
	DefaultTimeout time.Duration
	// Item returns the current configuration of an item (the catalog's
	// latest snapshot): its endpoint and credentials, and its host for
	// macros. Nil, or a nil item (deleted since it was scheduled): the
	// default endpoint and no credentials.
	Item func(id uint64) *catalog.Item
	// Dial, when set, replaces net.Dialer (tests).
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	Metrics *selfmon.Registry
	Logger  *slog.Logger
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{MaxConns: 5, MaxKeys: 32, MaxReplySize: 16 << 20, DefaultTimeout: 3 * time.Second}
}

// Reasons a check brought no value, as the "reason" label.
type reason int

const (
	reasonConfig    reason = iota // no gateway configured
	reasonBusy                    // no gateway connection free within the timeout
	reasonConnect                 // connecting to the gateway failed
	reasonTimeout                 // the gateway did not answer within the timeout
	reasonIO                      // reset, closed without a reply
	reasonBadReply                // not a gateway reply (garbage, too large, wrong JSON)
	reasonFailed                  // the gateway answered "failed": the JVM unreachable, a bad request
	reasonNotSupp                 // the gateway's error for one key
	reasonLocal                   // out of descriptors or ports here
	reasonAbandoned               // the server stopping
	numReasons
)

var reasonNames = [numReasons]string{"config", "busy", "connect_failed", "timeout", "io_error", "bad_reply", "failed", "not_supported", "local_error", "abandoned"}

// Checker is the JMX agent checker (item type 16): it asks the Zabbix
// Java gateway, batching a host's due items per endpoint and
// credentials.
type Checker struct {
	opts     Options
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	throttle *selfmon.LogThrottle
	// slots holds a token per gateway connection open or being opened.
	slots chan struct{}

	inFlight *selfmon.Gauge
	conns    *selfmon.Gauge
	requests *selfmon.Counter
	results  [poll.NumStatus]*selfmon.Counter
	failures [numReasons]*selfmon.Counter

	readers sync.Pool // *zbx.Reader
	parsers fastjson.ParserPool
	bufs    sync.Pool // *requestBuf
}

// New returns a Checker.
func New(opts Options) *Checker {
	d := DefaultOptions()
	if opts.MaxConns <= 0 {
		opts.MaxConns = d.MaxConns
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = d.MaxKeys
	}
	if opts.MaxReplySize <= 0 {
		opts.MaxReplySize = d.MaxReplySize
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = d.DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	c := &Checker{opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute), slots: make(chan struct{}, opts.MaxConns)}
	c.dial = opts.Dial
	if c.dial == nil {
		c.dial = (&net.Dialer{KeepAlive: -1}).DialContext
	}
	m := opts.Metrics
	c.inFlight = m.Gauge("peregrine_poll_jmx_in_flight", "JMX checks in flight (waiting for a gateway connection, or asked).")
	c.conns = m.Gauge("peregrine_poll_jmx_gateway_connections", "Connections to the Java gateway open (at most jmx.max_connections).")
	c.requests = m.Counter("peregrine_poll_jmx_requests_total", "Requests sent to the Java gateway (one per endpoint and credentials, up to jmx.max_keys_per_request keys).")
	for s := range c.results {
		c.results[s] = m.Counter("peregrine_poll_jmx_checks_total", "JMX checks done, by result.", "result", poll.Status(s).String())
	}
	for r := range c.failures {
		c.failures[r] = m.Counter("peregrine_poll_jmx_errors_total", "JMX checks that did not bring a value, by reason.", "reason", reasonNames[r])
	}
	return c
}

// groupKey is what the checks of one request share: the interface
// (whose availability a failed request counts against), the resolved
// endpoint and credentials, and the timeout.
type groupKey struct {
	iface                    uint64
	endpoint, user, password string
	timeout                  time.Duration
}

type group struct {
	key    groupKey
	checks []*poll.Check
}

// Check groups the batch's checks by interface, endpoint, credentials
// and timeout, starts one goroutine per request of at most MaxKeys keys
// and returns at once; the scheduler bounds the checks in flight, and so
// the requests.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	c.inFlight.Add(int64(len(batch)))
	if c.opts.Gateway == "" || ctx.Err() != nil {
		results := make([]poll.Result, len(batch))
		for i := range batch {
			results[i].Check = batch[i]
		}
		if c.opts.Gateway == "" {
			c.finish(results, poll.NotSupported, reasonConfig, "no Java gateway is configured: set jmx.gateway (Zabbix's JavaGateway) in the server's configuration")
		} else {
			c.finish(results, poll.NetworkError, reasonAbandoned, "check abandoned: the server is stopping")
		}
		c.report(results, done)
		return
	}
	var groups []group
	index := map[groupKey]int{}
	for i := range batch {
		k := c.keyOf(&batch[i])
		g, ok := index[k]
		if !ok {
			g = len(groups)
			index[k] = g
			groups = append(groups, group{key: k})
		}
		groups[g].checks = append(groups[g].checks, &batch[i])
	}
	for _, g := range groups {
		for len(g.checks) > 0 {
			n := min(len(g.checks), c.opts.MaxKeys)
			go c.request(ctx, g.key, g.checks[:n:n], done)
			g.checks = g.checks[n:]
		}
	}
}

// keyOf resolves a check's endpoint, credentials and timeout: the
// item's, its host's user macros in all three and the {HOST.*} macros in
// the endpoint, as the 6.0 server resolves them (testdata/wire/macros-req.bin).
func (c *Checker) keyOf(ch *poll.Check) groupKey {
	k := groupKey{iface: ch.InterfaceID, endpoint: catalog.DefaultJMXEndpoint, timeout: ch.Timeout}
	if k.timeout <= 0 {
		k.timeout = c.opts.DefaultTimeout
	}
	var it *catalog.Item
	if c.opts.Item != nil {
		it = c.opts.Item(ch.ItemID)
	}
	if it != nil && it.Ext().JMX != nil {
		k.endpoint, k.user, k.password = it.Ext().JMX.Endpoint, it.Ext().JMX.Username, it.Ext().JMX.Password
		if it.Host != nil && strings.Contains(k.endpoint+k.user+k.password, "{$") {
			sc := it.Host.UserMacros()
			k.endpoint, k.user, k.password = sc.Expand(k.endpoint), sc.Expand(k.user), sc.Expand(k.password)
		}
	}
	if strings.Contains(k.endpoint, "{HOST.") {
		k.endpoint = hostMacros(k.endpoint, ch, it)
	}
	return k
}

// hostMacros resolves {HOST.CONN}, {HOST.PORT}, {HOST.IP}, {HOST.DNS},
// {HOST.HOST} and {HOST.NAME} in an endpoint from the check's interface
// and host, leaving those it cannot know as they are. An IPv6 address
// goes in brackets, as a JMX service URL needs it.
func hostMacros(s string, ch *poll.Check, it *catalog.Item) string {
	host, port, err := net.SplitHostPort(ch.Addr)
	if err != nil {
		host = ch.Addr
	}
	conn := host
	if strings.Contains(conn, ":") {
		conn = "[" + conn + "]"
	}
	if s == catalog.DefaultJMXEndpoint {
		// Nearly every item's: no replacer built per check.
		return "service:jmx:rmi:///jndi/rmi://" + conn + ":" + port + "/jmxrmi"
	}
	pairs := []string{"{HOST.CONN}", conn, "{HOST.PORT}", port}
	if it != nil && it.Host != nil {
		h := it.Host
		pairs = append(pairs, "{HOST.HOST}", h.Host, "{HOST.NAME}", h.Name)
		for i := range h.Interfaces {
			if f := &h.Interfaces[i]; f.ID == ch.InterfaceID {
				ip := f.IP
				if strings.Contains(ip, ":") {
					ip = "[" + ip + "]"
				}
				pairs = append(pairs, "{HOST.IP}", ip, "{HOST.DNS}", f.DNS)
			}
		}
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// request asks the gateway for checks' keys and reports every check.
func (c *Checker) request(ctx context.Context, k groupKey, checks []*poll.Check, done func(*poll.Result)) {
	results := make([]poll.Result, len(checks))
	for i, ch := range checks {
		results[i].Check = *ch
	}
	c.ask(ctx, k, results)
	c.report(results, done)
}

// report hands results over, counting them.
func (c *Checker) report(results []poll.Result, done func(*poll.Result)) {
	for i := range results {
		r := &results[i]
		c.inFlight.Add(-1)
		c.results[r.Status].Inc()
		done(r)
	}
}

// ask fills results: one connection to the gateway, one request, one
// reply, all by the timeout.
func (c *Checker) ask(ctx context.Context, k groupKey, results []poll.Result) {
	gw := c.opts.Gateway
	deadline := time.Now().Add(k.timeout)
	switch err := c.acquire(ctx, deadline); {
	case ctx.Err() != nil:
		c.finish(results, poll.NetworkError, reasonAbandoned, "check abandoned: the server is stopping")
		return
	case err != nil:
		c.finish(results, poll.LocalError, reasonBusy, fmt.Sprintf("no connection to the Java gateway %s was free within the timeout (%s): raise jmx.max_connections, and the gateway's START_POLLERS with it", gw, k.timeout))
		return
	}
	defer c.release()
	dctx, cancel := context.WithDeadline(ctx, deadline)
	conn, err := c.dial(dctx, "tcp", gw)
	cancel()
	if err != nil {
		msg := fmt.Sprintf("cannot connect to the Java gateway %s: %s", gw, netMessage(err))
		switch {
		case ctx.Err() != nil:
			c.finish(results, poll.NetworkError, reasonAbandoned, "check abandoned: the server is stopping")
		case isLocal(err):
			c.finish(results, poll.LocalError, reasonLocal, msg+" (raise the open files limit or lower poll.max_in_flight)")
		case isTimeout(err) || errors.Is(err, context.DeadlineExceeded):
			c.finish(results, poll.NetworkError, reasonTimeout, msg)
		default:
			c.finish(results, poll.NetworkError, reasonConnect, msg)
		}
		return
	}
	defer conn.Close()
	// A stopping server abandons the request at once rather than after
	// its timeout: closing the connection ends the blocked read.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := conn.SetDeadline(deadline); err != nil {
		c.finish(results, poll.NetworkError, reasonIO, fmt.Sprintf("cannot use the connection to the Java gateway %s: %v", gw, err))
		return
	}
	b := c.buf()
	keys := make([]string, len(results))
	for i := range results {
		keys[i] = results[i].Key
	}
	b.payload = AppendRequest(b.payload[:0], &Request{Username: k.user, Password: k.password, Endpoint: k.endpoint, Keys: keys})
	b.frame = zbx.AppendFrame(b.frame[:0], b.payload, zbx.FlagProtocol)
	_, err = conn.Write(b.frame)
	clear(b.payload) // the password
	clear(b.frame)
	c.bufs.Put(b)
	c.requests.Inc()
	if err != nil {
		if ctx.Err() != nil {
			c.finish(results, poll.NetworkError, reasonAbandoned, "check abandoned: the server is stopping")
			return
		}
		r := reasonIO
		if isTimeout(err) {
			r = reasonTimeout
		}
		c.finish(results, poll.NetworkError, r, fmt.Sprintf("cannot send the request to the Java gateway %s: %s", gw, netMessage(err)))
		return
	}
	rd := c.reader(conn)
	defer c.putReader(rd)
	_, reply, err := rd.ReadFrame()
	now := time.Now()
	for i := range results {
		results[i].Clock = now
	}
	if err != nil {
		if ctx.Err() != nil {
			c.finish(results, poll.NetworkError, reasonAbandoned, "check abandoned: the server is stopping")
			return
		}
		c.readFailed(results, err, k.timeout)
		return
	}
	p := c.parsers.Get()
	var rep Reply
	err = DecodeReply(p, reply, len(results), &rep)
	c.parsers.Put(p)
	switch {
	case err != nil:
		c.finish(results, poll.NetworkError, reasonBadReply, fmt.Sprintf("the reply of the Java gateway %s cannot be read: %v", gw, err))
	case rep.Failed:
		// The JVM did not answer the gateway (or refused the request):
		// the 6.0 server counts it against the JMX interface, with the
		// gateway's words as its error (testdata/wire/refused-resp.bin).
		c.finish(results, poll.NetworkError, reasonFailed, rep.Error)
	default:
		for i := range results {
			r, a := &results[i], &rep.Answers[i]
			if a.HasValue {
				r.Status, r.Value = poll.OK, a.Value
				continue
			}
			// The gateway's words, as the 6.0 server shows them.
			r.Status, r.Error = poll.NotSupported, a.Error
			c.failures[reasonNotSupp].Inc()
		}
	}
}

// acquire takes a gateway connection slot, waiting until deadline or
// ctx's end.
func (c *Checker) acquire(ctx context.Context, deadline time.Time) error {
	select {
	case c.slots <- struct{}{}:
		c.conns.Add(1)
		return nil
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case c.slots <- struct{}{}:
		c.conns.Add(1)
		return nil
	case <-t.C:
		return os.ErrDeadlineExceeded
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Checker) release() {
	c.conns.Add(-1)
	<-c.slots
}

// readFailed classifies a failed read of the reply. Every way the gateway
// can fail to answer counts against the interface, as the 6.0 server
// counts its gateway errors (a gateway refusing connections made the
// JMX interface unavailable, recorded from 6.0.14).
func (c *Checker) readFailed(results []poll.Result, err error, timeout time.Duration) {
	gw := c.opts.Gateway
	switch {
	case errors.Is(err, zbx.ErrBadMagic), errors.Is(err, zbx.ErrTooLarge), errors.Is(err, zbx.ErrTruncated),
		errors.Is(err, zbx.ErrBadFlags), errors.Is(err, zbx.ErrCompression):
		c.finish(results, poll.NetworkError, reasonBadReply, fmt.Sprintf("the reply of the Java gateway %s cannot be read: %v", gw, err))
	case errors.Is(err, io.EOF):
		c.finish(results, poll.NetworkError, reasonIO, fmt.Sprintf("the Java gateway %s closed the connection without a reply", gw))
	case isTimeout(err):
		c.finish(results, poll.NetworkError, reasonTimeout, fmt.Sprintf("timeout while waiting for the reply of the Java gateway %s (%s)", gw, timeout))
	default:
		c.finish(results, poll.NetworkError, reasonIO, fmt.Sprintf("cannot read the reply of the Java gateway %s: %s", gw, netMessage(err)))
	}
}

// finish fails every result alike, counts the failures by reason and
// logs the reason (throttled: a hundred dead JVMs make one line a
// minute). Nothing logged holds the credentials.
func (c *Checker) finish(results []poll.Result, st poll.Status, r reason, msg string) {
	now := time.Now()
	for i := range results {
		res := &results[i]
		res.Status, res.Error = st, msg
		if res.Clock.IsZero() {
			res.Clock = now
		}
	}
	c.failures[r].Add(uint64(len(results)))
	if r == reasonAbandoned || len(results) == 0 {
		return
	}
	if n, ok := c.throttle.Allow(reasonNames[r]); ok {
		first := &results[0]
		c.opts.Logger.Warn("JMX checks failed", "reason", reasonNames[r], "gateway", c.opts.Gateway, "addr", first.Addr,
			"itemid", first.ItemID, "key", first.Key, "checks", len(results), "err", msg, "suppressed", n)
	}
}

// requestBuf holds a request's payload and frame, reused.
type requestBuf struct{ payload, frame []byte }

func (c *Checker) buf() *requestBuf {
	if b, ok := c.bufs.Get().(*requestBuf); ok {
		return b
	}
	return &requestBuf{payload: make([]byte, 0, 1024), frame: make([]byte, 0, 1024)}
}

func (c *Checker) reader(conn net.Conn) *zbx.Reader {
	if rd, ok := c.readers.Get().(*zbx.Reader); ok {
		rd.Reset(conn)
		return rd
	}
	return zbx.NewReader(conn, zbx.ReaderOptions{MaxSize: uint64(c.opts.MaxReplySize), SizeSetting: "jmx.max_reply_size"})
}

func (c *Checker) putReader(rd *zbx.Reader) {
	rd.Trim(64 << 10) // keep small buffers; a large discovery's go
	rd.Reset(nil)
	c.readers.Put(rd)
}

// isLocal reports errors that are this process's or this machine's
// shortage: file descriptors, local ports, socket buffers.
func isLocal(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOBUFS) ||
		errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.EADDRNOTAVAIL)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// netMessage words a network error without Go's "dial tcp ...:" prefix,
// keeping the errno text an operator searches for.
func netMessage(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error() + " (errno " + strconv.Itoa(int(errno)) + ")"
	}
	if isTimeout(err) || errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return err.Error()
}
