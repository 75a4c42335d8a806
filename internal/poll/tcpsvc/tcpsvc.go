package tcpsvc

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// Options configures a Checker.
type Options struct {
	// Dial, when set, replaces net.Dialer (tests).
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	Metrics *selfmon.Registry
	Logger  *slog.Logger
}

// maxGreeting bounds what is read of a service's greeting: the checks
// look at its first bytes only, and a peer that sends without end must
// not cost more.
const maxGreeting = 4096

// service is one service net.tcp.service knows: its default port and
// how to tell it answers.
type service struct {
	port int
	// probe runs the protocol exchange on a connected socket and reports
	// whether the peer speaks the protocol. nil: connecting is enough.
	probe func(conn net.Conn, host string) bool
}

var services = map[string]service{
	"tcp":    {port: 0},
	"ssh":    {port: 22, probe: probeSSH},
	"smtp":   {port: 25, probe: expectLine("220", "QUIT\r\n")},
	"ftp":    {port: 21, probe: expectLine("220", "QUIT\r\n")},
	"http":   {port: 80, probe: probeHTTP},
	"https":  {port: 443, probe: probeHTTPS},
	"pop":    {port: 110, probe: expectLine("+OK", "QUIT\r\n")},
	"nntp":   {port: 119, probe: expectNNTP},
	"imap":   {port: 143, probe: expectLine("* OK", "a1 LOGOUT\r\n")},
	"telnet": {port: 23, probe: probeTelnet},
	"ldap":   {port: 389, probe: probeLDAP},
}

// Reasons a service was found down, as the "reason" label.
const (
	reasonRefused  = iota // connect failed
	reasonTimeout         // connect or greeting timed out
	reasonGreeting        // connected, but the peer does not speak the protocol
	numReasons
)

var reasonNames = [numReasons]string{"connect_failed", "timeout", "bad_greeting"}

// Checker runs net.tcp.service and net.tcp.service.perf checks.
type Checker struct {
	opts     Options
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	throttle *selfmon.LogThrottle

	inFlight *selfmon.Gauge
	up, down *selfmon.Counter
	reasons  [numReasons]*selfmon.Counter
	badKeys  *selfmon.Counter
}

// New returns a Checker.
func New(opts Options) *Checker {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	c := &Checker{opts: opts, dial: opts.Dial, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute)}
	if c.dial == nil {
		c.dial = (&net.Dialer{KeepAlive: -1}).DialContext
	}
	m := opts.Metrics
	c.inFlight = m.Gauge("peregrine_poll_tcpsvc_in_flight", "TCP service checks in flight.")
	c.up = m.Counter("peregrine_poll_tcpsvc_checks_total", "TCP service checks done, by result.", "result", "up")
	c.down = m.Counter("peregrine_poll_tcpsvc_checks_total", "TCP service checks done, by result.", "result", "down")
	c.badKeys = m.Counter("peregrine_poll_tcpsvc_checks_total", "TCP service checks done, by result.", "result", "not_supported")
	for r := range c.reasons {
		c.reasons[r] = m.Counter("peregrine_poll_tcpsvc_down_total", "TCP service checks that found the service down, by reason.", "reason", reasonNames[r])
	}
	return c
}

// IsKey reports whether key is net.tcp.service or net.tcp.service.perf.
func IsKey(key string) bool {
	k, err := itemkey.Parse(key)
	return err == nil && (k.Name == "net.tcp.service" || k.Name == "net.tcp.service.perf")
}

// target is one parsed check.
type target struct {
	svc  service
	name string
	host string
	port int
	perf bool
}

// parseKey parses net.tcp.service[service,<ip>,<port>] (and .perf) with
// the interface's address as the default ip; the error is the item's
// "not supported" message.
func parseKey(key, ifaceAddr string) (target, error) {
	var t target
	k, err := itemkey.Parse(key)
	if err != nil {
		return t, err
	}
	switch k.Name {
	case "net.tcp.service":
	case "net.tcp.service.perf":
		t.perf = true
	default:
		return t, fmt.Errorf("unsupported key %q: use net.tcp.service or net.tcp.service.perf", k.Name)
	}
	if len(k.Params) == 0 || k.Params[0].Value == "" {
		return t, errors.New("invalid first parameter: the service is required (tcp, ssh, smtp, ftp, http, https, pop, nntp, imap, telnet, ldap)")
	}
	if len(k.Params) > 3 {
		return t, errors.New("too many parameters: the key takes service, ip and port")
	}
	for i, p := range k.Params {
		if p.Array != nil {
			return t, fmt.Errorf("parameter %d must not be an array", i+1)
		}
	}
	t.name = k.Params[0].Value
	svc, ok := services[t.name]
	if !ok {
		if t.name == "ntp" {
			return t, errors.New("invalid first parameter: ntp is a UDP service (net.udp.service), not checked here")
		}
		return t, fmt.Errorf("invalid first parameter %q: use tcp, ssh, smtp, ftp, http, https, pop, nntp, imap, telnet or ldap", t.name)
	}
	t.svc, t.port = svc, svc.port
	if len(k.Params) > 1 && k.Params[1].Value != "" {
		t.host = k.Params[1].Value
	} else {
		host, _, err := net.SplitHostPort(ifaceAddr)
		if err != nil {
			host = ifaceAddr
		}
		t.host = host
	}
	if len(k.Params) > 2 && k.Params[2].Value != "" {
		n, err := strconv.Atoi(k.Params[2].Value)
		if err != nil || n < 1 || n > 65535 {
			return t, fmt.Errorf("invalid third parameter %q: the port must be 1..65535", k.Params[2].Value)
		}
		t.port = n
	}
	if t.port == 0 {
		return t, errors.New("invalid third parameter: the port is required for service tcp")
	}
	if t.host == "" {
		return t, errors.New("invalid second parameter: no ip given and the item has no interface")
	}
	return t, nil
}

// Check starts one goroutine per check and returns at once; each ends
// within its check's timeout (Go's netpoller is the event loop, as in
// package poll/agent). The scheduler bounds how many are in flight.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	c.inFlight.Add(int64(len(batch)))
	for i := range batch {
		go func(ch *poll.Check) {
			r := c.check(ctx, ch)
			c.inFlight.Add(-1)
			done(r)
		}(&batch[i])
	}
}

func (c *Checker) check(ctx context.Context, ch *poll.Check) *poll.Result {
	res := &poll.Result{Check: *ch}
	t, err := parseKey(ch.Key, ch.Addr)
	if err != nil {
		c.badKeys.Inc()
		res.Status, res.Error, res.Clock = poll.NotSupported, err.Error(), time.Now()
		return res
	}
	timeout := ch.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	start := time.Now()
	ok, timedOut := c.run(ctx, &t, start.Add(timeout), ch)
	elapsed := time.Since(start)
	res.Clock = time.Now()
	if ctx.Err() != nil {
		res.Status, res.Error = poll.NetworkError, "check abandoned: the server is stopping"
		return res
	}
	res.Status = poll.OK
	// A 0 because the time ran out: if this server was behind, its
	// lateness, not the service's (see poll.Result.TimedOut).
	res.TimedOut = timedOut
	switch {
	case t.perf && ok:
		// As Zabbix: the whole check's time, at least 0.0001 s.
		res.Value = strconv.AppendFloat(nil, math.Max(elapsed.Seconds(), 0.0001), 'f', 6, 64)
	case t.perf:
		res.Value = []byte("0")
	case ok:
		res.Value = []byte("1")
	default:
		res.Value = []byte("0")
	}
	return res
}

// run connects and probes; a service that is down is a value (0), not
// an error, as in Zabbix: only the reason is counted and logged.
func (c *Checker) run(ctx context.Context, t *target, deadline time.Time, ch *poll.Check) (up, timedOut bool) {
	addr := net.JoinHostPort(t.host, strconv.Itoa(t.port))
	dctx, cancel := context.WithDeadline(ctx, deadline)
	conn, err := c.dial(dctx, "tcp", addr)
	cancel()
	if err != nil {
		r := reasonRefused
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
			r = reasonTimeout
		}
		c.fail(r, addr, ch, err)
		return false, r == reasonTimeout
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if t.svc.probe == nil {
		c.up.Inc()
		return true, false
	}
	if err := conn.SetDeadline(deadline); err != nil {
		c.fail(reasonRefused, addr, ch, err)
		return false, false
	}
	if !t.svc.probe(conn, t.host) {
		r := reasonGreeting
		if time.Now().After(deadline) {
			r = reasonTimeout
		}
		c.fail(r, addr, ch, fmt.Errorf("no %s greeting", t.name))
		return false, r == reasonTimeout
	}
	c.up.Inc()
	return true, false
}

func (c *Checker) fail(r int, addr string, ch *poll.Check, err error) {
	c.down.Inc()
	c.reasons[r].Inc()
	if n, ok := c.throttle.Allow(reasonNames[r]); ok {
		c.opts.Logger.Info("TCP service down", "reason", reasonNames[r], "addr", addr, "itemid", ch.ItemID, "key", ch.Key, "err", err, "suppressed", n)
	}
}

// readSome reads what the peer sends first, up to maxGreeting bytes or
// until a line ends.
func readSome(conn net.Conn) []byte {
	buf := make([]byte, maxGreeting)
	n := 0
	for n < len(buf) {
		m, err := conn.Read(buf[n:])
		n += m
		if bytes.IndexByte(buf[:n], '\n') >= 0 || err != nil {
			break
		}
	}
	return buf[:n]
}

// expectLine is the check of the line-based services: the greeting must
// start with prefix; then the check says goodbye politely.
func expectLine(prefix, bye string) func(net.Conn, string) bool {
	return func(conn net.Conn, _ string) bool {
		ok := bytes.HasPrefix(readSome(conn), []byte(prefix))
		if ok {
			_, _ = io.WriteString(conn, bye)
		}
		return ok
	}
}

// expectNNTP: 200 (posting allowed) and 201 (no posting) both greet.
func expectNNTP(conn net.Conn, _ string) bool {
	g := readSome(conn)
	ok := bytes.HasPrefix(g, []byte("200")) || bytes.HasPrefix(g, []byte("201"))
	if ok {
		_, _ = io.WriteString(conn, "QUIT\r\n")
	}
	return ok
}

// probeSSH: the server's identification line "SSH-<major>.<minor>-...";
// we answer with ours, as Zabbix does, so the server logs a clean
// disconnect rather than a dropped one.
func probeSSH(conn net.Conn, _ string) bool {
	g := readSome(conn)
	if !bytes.HasPrefix(g, []byte("SSH-")) {
		return false
	}
	ver := g[4:]
	if i := bytes.IndexByte(ver, '-'); i > 0 {
		ver = ver[:i]
	}
	_, _ = fmt.Fprintf(conn, "SSH-%s-peregrine_ssh_simple\r\n", ver)
	return true
}

// probeHTTP: any HTTP response to a GET of / is a running web server,
// whatever its status.
func probeHTTP(conn net.Conn, host string) bool {
	if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nUser-Agent: Peregrine\r\n\r\n", host); err != nil {
		return false
	}
	return bytes.HasPrefix(readSome(conn), []byte("HTTP/"))
}

// probeHTTPS: a TLS handshake (the certificate is not verified: the
// check asks whether the service runs, not whether it is trusted) and an
// HTTP response over it.
func probeHTTPS(conn net.Conn, host string) bool {
	tc := tls.Client(conn, &tls.Config{ServerName: host, InsecureSkipVerify: true}) //nolint:gosec // liveness check, as Zabbix's
	if err := tc.Handshake(); err != nil {
		return false
	}
	return probeHTTP(tc, host)
}

// probeTelnet: a telnet server opens with option negotiation (IAC,
// byte 255) or a prompt; any first bytes within the timeout will do.
func probeTelnet(conn net.Conn, _ string) bool {
	var b [1]byte
	n, _ := conn.Read(b[:])
	return n == 1
}

// ldapBind is an LDAPv3 anonymous simple bind request, message id 1.
var ldapBind = []byte{0x30, 0x0c, 0x02, 0x01, 0x01, 0x60, 0x07, 0x02, 0x01, 0x03, 0x04, 0x00, 0x80, 0x00}

// probeLDAP: an anonymous bind; the server must answer with an LDAP
// message (a SEQUENCE) holding a BindResponse ([APPLICATION 1], 0x61)
// for message 1. Whether the bind succeeded does not matter: the
// service answered in LDAP.
func probeLDAP(conn net.Conn, _ string) bool {
	if _, err := conn.Write(ldapBind); err != nil {
		return false
	}
	var b [64]byte
	n, _ := io.ReadAtLeast(conn, b[:], 7)
	m := b[:n]
	if len(m) < 7 || m[0] != 0x30 {
		return false
	}
	i := 2
	if m[1]&0x80 != 0 { // long-form length
		i += int(m[1] & 0x7f)
	}
	if i+3 > len(m) || m[i] != 0x02 || m[i+1] != 0x01 || m[i+2] != 0x01 {
		return false
	}
	i += 3
	return i < len(m) && m[i] == 0x61
}
