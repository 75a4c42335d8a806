package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// Options configures a Checker.
type Options struct {
	// ConnectTimeout bounds connecting to an agent (within the check's
	// own timeout). Default 3s.
	ConnectTimeout time.Duration
	// MaxReplySize bounds one reply's payload (inflated); a larger reply
	// makes the item not supported. Default 1 MiB: a text value is at
	// most 65535 characters.
	MaxReplySize int
	// Dial, when set, replaces net.Dialer (tests).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLS, when set, returns how to connect to a host's agent: the zero
	// Security for plain (tls_connect 1), a client configuration for
	// certificates (tls_connect 4), a key for PSK (tls_connect 2), or an
	// error for what cannot be done (no server certificate, no OpenSSL
	// in this build), which fails the check as a network error with that
	// message. Without it every check is plain.
	TLS     func(hostID uint64) (Security, error)
	Metrics *selfmon.Registry
	Logger  *slog.Logger
}

// Security is how one check's connection is secured; the zero value is
// plain. At most one of its members is set.
type Security struct {
	Cert *tls.Config // TLS with certificates (tls_connect 4)
	PSK  *zbxpsk.Key // TLS with a pre-shared key (tls_connect 2)
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{ConnectTimeout: 3 * time.Second, MaxReplySize: 1 << 20}
}

// Reasons a check failed, as the "reason" label.
type reason int

const (
	reasonRefused   reason = iota // connect failed
	reasonTimeout                 // connect or reply timed out
	reasonClosed                  // closed without a reply (agent refused us, Server=)
	reasonIO                      // reset or another I/O error
	reasonGarbage                 // not a ZBXD frame
	reasonTooLarge                // announced or inflated beyond MaxReplySize
	reasonTruncated               // closed in the middle of the frame
	reasonBadFrame                // bad flags or compression
	reasonNotSupp                 // ZBX_NOTSUPPORTED / ZBX_ERROR from the agent
	reasonLocal                   // out of descriptors, ports or buffers here
	reasonTLS                     // TLS refused here or by the agent (handshake, certificate, PSK)
	numReasons
)

var reasonNames = [numReasons]string{"connect_failed", "timeout", "closed", "io_error", "garbage", "too_large", "truncated", "bad_frame", "not_supported", "local_error", "tls"}

// Checker is the passive Zabbix agent checker (item type 0): one TCP
// connection per check, the plain protocol of spec §3.1.
type Checker struct {
	opts     Options
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	dialer   *net.Dialer // nil when Options.Dial replaces it
	throttle *selfmon.LogThrottle

	inFlight *selfmon.Gauge
	// lateReplies: replies taken by the last-chance read (lastChance).
	lateReplies *selfmon.Counter
	results     [poll.NumStatus]*selfmon.Counter // by poll.Status
	failures    [numReasons]*selfmon.Counter
	// psk counts checks over a pre-shared key by cipher suite
	// (zbxpsk.Suites, then any other).
	psk []*selfmon.Counter

	readers sync.Pool // *replyReader
	// idle hands a check to a worker goroutine waiting for one
	// (workers.go).
	idle chan job
}

// New returns a Checker.
func New(opts Options) *Checker {
	d := DefaultOptions()
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = d.ConnectTimeout
	}
	if opts.MaxReplySize <= 0 {
		opts.MaxReplySize = d.MaxReplySize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	c := &Checker{opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute), idle: make(chan job)}
	c.dial = opts.Dial
	if c.dial == nil {
		// No TCP keep-alive: a check's connection lives for one request,
		// and enabling it costs four setsockopt calls per check.
		c.dialer = &net.Dialer{KeepAlive: -1}
		c.dial = c.dialer.DialContext
	}
	m := opts.Metrics
	c.lateReplies = m.Counter("peregrine_poll_agent_late_replies_total", "Passive agent replies read after their check's timeout had fired: they were in the socket in time, unread because this server was behind (counted as values, not timeouts).")
	c.inFlight = m.Gauge("peregrine_poll_agent_in_flight", "Passive agent checks in flight (connecting, asking or reading).")
	for s := range c.results {
		c.results[s] = m.Counter("peregrine_poll_agent_checks_total", "Passive agent checks done, by result.", "result", poll.Status(s).String())
	}
	for r := range c.failures {
		c.failures[r] = m.Counter("peregrine_poll_agent_errors_total", "Passive agent checks that did not bring a value, by reason.", "reason", reasonNames[r])
	}
	for _, cs := range append(slices.Clone(zbxpsk.Suites), "other") {
		c.psk = append(c.psk, m.Counter("peregrine_poll_agent_tls_psk_total", "Passive agent connections that completed a TLS handshake with a pre-shared key, by cipher suite.", "cipher", cs))
	}
	return c
}

// Check starts one goroutine per check and returns at once. The number
// of goroutines is bounded by the scheduler's in-flight limit; they spend
// their life blocked on the network, which the Go runtime multiplexes
// over epoll, so this is the event loop without the bookkeeping.
//
// The goroutines are reused (workers.go): one that finished a check
// takes the next, so a steady load neither starts a goroutine per check
// nor grows a fresh stack for each.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	if len(batch) == 0 {
		return
	}
	c.inFlight.Add(int64(len(batch)))
	g := newBatchGuard(ctx, len(batch))
	for i := range batch {
		c.start(job{ctx: ctx, ch: &batch[i], done: done, g: g, slot: i})
	}
}

// check runs one check to its result; g's slot i holds its connection
// while it is open.
func (c *Checker) check(ctx context.Context, ch *poll.Check, g *batchGuard, slot int) *poll.Result {
	res := &poll.Result{Check: *ch}
	var sec Security
	if c.opts.TLS != nil {
		var err error
		if sec, err = c.opts.TLS(ch.HostID); err != nil {
			return c.fail(res, poll.NetworkError, reasonTLS, fmt.Sprintf("cannot connect to %s: %v", ch.Addr, err))
		}
	}
	tcfg := sec.Cert
	start := time.Now()
	deadline := start.Add(ch.Timeout)
	conn, err := c.connect(ctx, ch.Addr, start.Add(min(c.opts.ConnectTimeout, ch.Timeout)))
	if err != nil {
		msg := fmt.Sprintf("cannot connect to %s: %s", ch.Addr, netMessage(err))
		switch {
		case isLocal(err):
			// Our shortage, not the host's: blaming the interface would
			// make healthy hosts unavailable whenever we are overloaded.
			return c.fail(res, poll.LocalError, reasonLocal, msg+" (raise the open files limit or lower poll.max_in_flight)")
		case isTimeout(err) || errors.Is(err, context.DeadlineExceeded):
			return c.fail(res, poll.NetworkError, reasonTimeout, msg)
		}
		return c.fail(res, poll.NetworkError, reasonRefused, msg)
	}
	defer conn.Close()
	// A stopping server abandons the check at once rather than after its
	// timeout: closing the connection ends the blocked read.
	g.set(slot, conn)
	defer g.set(slot, nil)
	if err := conn.SetDeadline(deadline); err != nil {
		return c.fail(res, poll.NetworkError, reasonIO, fmt.Sprintf("cannot use the connection to %s: %v", ch.Addr, err))
	}
	switch {
	case tcfg != nil:
		// As Zabbix: the TLS handshake starts at once on the agent's
		// port, within the check's deadline.
		tc := tls.Client(conn, tcfg)
		if err := tc.Handshake(); err != nil {
			r := reasonTLS
			if isTimeout(err) {
				r = reasonTimeout
			}
			return c.fail(res, poll.NetworkError, r, fmt.Sprintf("TCP connection to %s successful, cannot establish TLS: %v", ch.Addr, err))
		}
		conn = tc
	case sec.PSK != nil:
		pc, err := c.pskHandshake(conn, sec.PSK)
		if err != nil {
			r, hint := reasonTLS, " (the agent's TLSPSKIdentity and TLSPSKFile must be the host's tls_psk_identity and tls_psk)"
			if isTimeout(err) {
				r, hint = reasonTimeout, ""
			}
			return c.fail(res, poll.NetworkError, r, fmt.Sprintf("TCP connection to %s successful, cannot establish TLS with PSK identity %q%s: %v", ch.Addr, sec.PSK.Identity, hint, err))
		}
		// Frees the TLS state; the deferred close of the TCP
		// connection above then finds it closed.
		defer pc.Close()
		conn = pc
	}
	var reqBuf [64]byte
	req := zbx.AppendFrame(reqBuf[:0], []byte(ch.Key), zbx.FlagProtocol)
	if _, err := conn.Write(req); err != nil {
		r := reasonIO
		if isTimeout(err) {
			r = reasonTimeout
		}
		return c.fail(res, poll.NetworkError, r, fmt.Sprintf("cannot send the request to %s: %s", ch.Addr, netMessage(err)))
	}
	rr := c.reader(conn, tcfg == nil && sec.PSK == nil)
	defer c.putReader(rr)
	_, payload, err := rr.rd.ReadFrame()
	res.Clock = time.Now()
	if rr.lc.lateReads > 0 && err == nil {
		c.lateReplies.Inc()
	}
	if err != nil {
		if ctx.Err() != nil {
			res.Status, res.Error = poll.NetworkError, "check abandoned: the server is stopping"
			return res
		}
		// With TLS 1.3 the client's handshake ends before the agent has
		// checked our certificate: its refusal arrives as an alert on
		// the first read (crypto/tls reports it as a "remote error").
		var oe *net.OpError
		if tcfg != nil && errors.As(err, &oe) && oe.Op == "remote error" {
			return c.fail(res, poll.NetworkError, reasonTLS, fmt.Sprintf("TCP connection to %s successful, cannot establish TLS: the agent refused the server's certificate: %v", ch.Addr, oe.Err))
		}
		return c.readFailed(res, err, ch.Timeout)
	}
	switch {
	case bytes.HasPrefix(payload, notSupported):
		msg := "Not supported by Zabbix Agent"
		if rest := payload[len(notSupported):]; len(rest) > 1 && rest[0] == 0 {
			msg = string(rest[1:])
		}
		return c.fail(res, poll.NotSupported, reasonNotSupp, msg)
	case bytes.HasPrefix(payload, agentError):
		msg := "Zabbix agent error"
		if rest := payload[len(agentError):]; len(rest) > 1 && rest[0] == 0 {
			msg = string(rest[1:])
		}
		return c.fail(res, poll.NotSupported, reasonNotSupp, msg)
	}
	res.Status = poll.OK
	res.Value = bytes.Clone(payload) // the Reader reuses its buffer
	return res
}

// pskHandshake secures conn with a pre-shared key (package zbxpsk,
// OpenSSL) within conn's deadline, and counts the suite agreed.
func (c *Checker) pskHandshake(conn net.Conn, key *zbxpsk.Key) (zbxpsk.Conn, error) {
	pc, err := zbxpsk.Client(conn, *key)
	if err != nil {
		return nil, err
	}
	if err := pc.Handshake(); err != nil {
		pc.Close()
		return nil, err
	}
	cipher := pc.State().Cipher
	for i, s := range zbxpsk.Suites {
		if s == cipher {
			c.psk[i].Inc()
			return pc, nil
		}
	}
	c.psk[len(zbxpsk.Suites)].Inc()
	return pc, nil
}

// connect dials addr by deadline, or until ctx is cancelled.
//
// The deadline rides on deadlineCtx rather than context.WithDeadline,
// whose timer and registration with the server's context were about 5 %
// of the poller's CPU per check in profiles of bench poll: the connect
// then has only its socket's write deadline, which the runtime's
// netpoller keeps anyway (net's dialer makes no context of its own when
// the one it gets already has the deadline). A Dial replacement (tests)
// or a context that is never cancelled takes the ordinary path.
//
// Not Dialer.DialTCP with a parsed address, tried and rejected: its
// zero local address is not "none" but 0.0.0.0:0, so every check bound
// its socket first, and bind(2) to port 0 takes a port free for every
// destination (connect(2) shares ports between destinations). With
// tens of thousands of connections in TIME_WAIT, bind's search took 57 %
// of the poller's CPU and the poller collapsed at 6,000 checks/s.
func (c *Checker) connect(ctx context.Context, addr string, deadline time.Time) (net.Conn, error) {
	if c.dialer != nil && ctx.Done() != nil {
		return c.dialer.DialContext(&deadlineCtx{Context: ctx, deadline: deadline}, "tcp", addr)
	}
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return c.dial(cctx, "tcp", addr)
}

// deadlineCtx is ctx with a deadline but no timer: Done and Err stay
// ctx's (the server stopping), and the deadline is enforced by whoever
// reads it, here the connecting socket's write deadline (net's connect
// sets it from Deadline when Done is not nil, which connect checks).
// Past the deadline the dial fails with a timeout while Err stays nil,
// which is how the caller tells a timeout from a stop.
type deadlineCtx struct {
	context.Context
	deadline time.Time
}

func (d *deadlineCtx) Deadline() (time.Time, bool) { return d.deadline, true }

var (
	notSupported = []byte("ZBX_NOTSUPPORTED")
	agentError   = []byte("ZBX_ERROR")
)

// readFailed classifies a failed read. A peer that answers, but not with
// a readable reply, makes the item not supported (another item of the
// same agent may well work); silence, a reset or a close before the
// first byte counts against the interface, as Zabbix counts network and
// timeout errors.
func (c *Checker) readFailed(res *poll.Result, err error, timeout time.Duration) *poll.Result {
	addr := res.Addr
	switch {
	case errors.Is(err, zbx.ErrBadMagic):
		return c.fail(res, poll.NotSupported, reasonGarbage, fmt.Sprintf("the reply from %s is not a Zabbix protocol frame: %v", addr, err))
	case errors.Is(err, zbx.ErrTooLarge):
		return c.fail(res, poll.NotSupported, reasonTooLarge, fmt.Sprintf("the reply from %s is larger than %d bytes: %v", addr, c.opts.MaxReplySize, err))
	case errors.Is(err, zbx.ErrTruncated):
		return c.fail(res, poll.NotSupported, reasonTruncated, fmt.Sprintf("%s closed the connection in the middle of its reply: %v", addr, err))
	case errors.Is(err, zbx.ErrBadFlags), errors.Is(err, zbx.ErrCompression):
		return c.fail(res, poll.NotSupported, reasonBadFrame, fmt.Sprintf("the reply from %s is not a valid frame: %v", addr, err))
	case errors.Is(err, io.EOF):
		return c.fail(res, poll.NetworkError, reasonClosed, fmt.Sprintf("%s closed the connection without a reply (is this server in the agent's Server= list?)", addr))
	case isTimeout(err):
		return c.fail(res, poll.NetworkError, reasonTimeout, fmt.Sprintf("timeout while waiting for the reply from %s (%s)", addr, timeout))
	}
	return c.fail(res, poll.NetworkError, reasonIO, fmt.Sprintf("cannot read the reply from %s: %s", addr, netMessage(err)))
}

// fail completes res as a failure, counts it and logs it (throttled per
// reason: a thousand dead hosts make one line a minute).
func (c *Checker) fail(res *poll.Result, st poll.Status, r reason, msg string) *poll.Result {
	res.Status, res.Error, res.TimedOut = st, msg, r == reasonTimeout
	if res.Clock.IsZero() {
		res.Clock = time.Now()
	}
	c.failures[r].Inc()
	if r != reasonNotSupp {
		if n, ok := c.throttle.Allow(reasonNames[r]); ok {
			c.opts.Logger.Warn("passive agent check failed", "reason", reasonNames[r], "addr", res.Addr,
				"itemid", res.ItemID, "key", res.Key, "err", msg, "suppressed", n)
		}
	}
	return res
}

// replyReader reads one check's reply: through lastChance on a plain
// TCP connection (a reply already in the socket when the timeout fires
// is read, see lastChance), straight from conn under TLS, whose records
// crypto/tls or OpenSSL read themselves.
type replyReader struct {
	rd *zbx.Reader
	lc lastChance
}

func (c *Checker) reader(conn net.Conn, plain bool) *replyReader {
	rr, ok := c.readers.Get().(*replyReader)
	if !ok {
		// Replies to passive checks never use large frames.
		rr = &replyReader{rd: zbx.NewReader(nil, zbx.ReaderOptions{MaxSize: uint64(c.opts.MaxReplySize), SizeSetting: "poll.max_reply_size"})}
	}
	if plain {
		rr.lc = lastChance{Conn: conn}
		rr.rd.Reset(&rr.lc)
	} else {
		rr.lc = lastChance{}
		rr.rd.Reset(conn)
	}
	return rr
}

func (c *Checker) putReader(rr *replyReader) {
	rr.rd.Trim(64 << 10) // keep small buffers; a huge reply's go
	rr.rd.Reset(nil)
	rr.lc = lastChance{}
	c.readers.Put(rr)
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

// netMessage words a network error without Go's "dial tcp ...:" prefix
// repetition, keeping the errno text an operator searches for.
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
