package http

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Options configures a Checker.
type Options struct {
	// Item returns the current configuration of an item (the catalog's
	// latest snapshot); the request is read from its HTTP field.
	Item func(id uint64) *catalog.Item
	// HTTPTest returns the web scenario whose web.test.fail item is the
	// ID (catalog.Snapshot.HTTPTestOfItem), for Scenarios.
	HTTPTest func(itemID uint64) *catalog.HTTPTest
	// MaxBodySize bounds a response body read; a larger one makes the
	// item not supported. Default 16 MiB.
	MaxBodySize int64
	// MaxHeaderSize bounds a response's header block. Default 1 MiB.
	MaxHeaderSize int64
	// MaxConnsPerHost bounds the connections to one host:port, kept alive
	// and reused between checks. Default 32.
	MaxConnsPerHost int
	// DefaultTimeout is a check's timeout when the scheduler gives none.
	// Default 3s.
	DefaultTimeout time.Duration
	Metrics        *selfmon.Registry
	Logger         *slog.Logger
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{MaxBodySize: 16 << 20, MaxHeaderSize: 1 << 20, MaxConnsPerHost: 32, DefaultTimeout: 3 * time.Second}
}

// Reasons a check failed, as the "reason" label.
const (
	reasonConfig   = iota // the item's request cannot be made (no URL, unsupported auth, bad certificate file)
	reasonConnect         // connecting failed (refused, DNS, proxy)
	reasonTLS             // TLS handshake or verification failed
	reasonTimeout         // the whole check's timeout passed
	reasonStatus          // a status not in status_codes
	reasonTooLarge        // body beyond MaxBodySize
	reasonHeaders         // headers beyond MaxHeaderSize, or not HTTP
	reasonIO              // the response broke off
	reasonWeb             // a web scenario failed a step (scenario.go)
	numReasons
)

var reasonNames = [numReasons]string{"config", "connect_failed", "tls", "timeout", "status", "too_large", "bad_headers", "io_error", "web_scenario_failed"}

// transportKey is what distinguishes one shared transport from another:
// TLS verification, client certificate and proxy. Items agreeing on them
// share connections.
type transportKey struct {
	verifyPeer, verifyHost bool
	certFile, keyFile      string
	proxy                  string
}

// Checker runs HTTP agent checks (item type 19).
type Checker struct {
	opts     Options
	throttle *selfmon.LogThrottle

	mu         sync.Mutex
	transports map[transportKey]*http.Client

	inFlight *selfmon.Gauge
	conns    *selfmon.Counter
	results  [poll.NumStatus]*selfmon.Counter
	failures [numReasons]*selfmon.Counter
	bufs     sync.Pool // *bytes.Buffer
	// jobs hands checks to idle workers (unbuffered: a send succeeds
	// only if a worker is waiting).
	jobs chan job
	// quit, closed by Close, ends the idle workers at once rather than
	// after workerIdle: nothing of a stopped checker is left running.
	quit      chan struct{}
	closeOnce sync.Once
}

// New returns a Checker.
func New(opts Options) *Checker {
	d := DefaultOptions()
	if opts.MaxBodySize <= 0 {
		opts.MaxBodySize = d.MaxBodySize
	}
	if opts.MaxHeaderSize <= 0 {
		opts.MaxHeaderSize = d.MaxHeaderSize
	}
	if opts.MaxConnsPerHost <= 0 {
		opts.MaxConnsPerHost = d.MaxConnsPerHost
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
	c := &Checker{opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute), transports: map[transportKey]*http.Client{}, jobs: make(chan job), quit: make(chan struct{})}
	m := opts.Metrics
	c.inFlight = m.Gauge("peregrine_poll_http_in_flight", "HTTP agent checks in flight.")
	c.conns = m.Counter("peregrine_poll_http_connections_total", "TCP connections the HTTP agent opened (the rest of its requests reused kept-alive ones).")
	for s := range c.results {
		c.results[s] = m.Counter("peregrine_poll_http_checks_total", "HTTP agent checks done, by result.", "result", poll.Status(s).String())
	}
	for r := range c.failures {
		c.failures[r] = m.Counter("peregrine_poll_http_errors_total", "HTTP agent checks that did not bring a value, by reason.", "reason", reasonNames[r])
	}
	return c
}

// Close ends the idle workers and closes the idle kept-alive
// connections; call it once no check is in flight (the scheduler has
// stopped). It is safe to call more than once.
func (c *Checker) Close() {
	c.closeOnce.Do(func() { close(c.quit) })
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.transports {
		cl.CloseIdleConnections()
	}
}

// Check starts one goroutine per check and returns at once; the
// scheduler bounds how many are in flight.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	c.inFlight.Add(int64(len(batch)))
	for i := range batch {
		c.run(func() {
			r := c.check(ctx, &batch[i])
			c.inFlight.Add(-1)
			c.results[r.Status].Inc()
			done(r)
		})
	}
}

// job is one check for a worker.
type job func()

// run hands fn to an idle worker, or starts one. Workers outlive their
// check for workerIdle: a fresh goroutine per check would grow its stack
// to net/http's depth every time (a tenth of the checker's CPU in
// profiles); an idle one keeps its grown stack. Their number follows the
// checks in flight, which the scheduler bounds.
func (c *Checker) run(fn job) {
	select {
	case c.jobs <- fn:
	default:
		go c.worker(fn)
	}
}

const workerIdle = 10 * time.Second

func (c *Checker) worker(fn job) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		fn()
		t.Reset(workerIdle)
		select {
		case fn = <-c.jobs:
		case <-t.C:
			return
		case <-c.quit:
			return
		}
	}
}

type noFollowKey struct{}

// client returns the shared client for k, making it on first use.
func (c *Checker) client(k transportKey) (*http.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl := c.transports[k]; cl != nil {
		return cl, nil
	}
	tcfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // verification is the item's choice, done below
	switch {
	case k.verifyPeer && k.verifyHost:
		tcfg.InsecureSkipVerify = false
	case k.verifyPeer:
		// The chain, not the name: crypto/tls cannot separate them, so
		// verify the chain ourselves.
		tcfg.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyChain(cs, "")
		}
	}
	if k.certFile != "" {
		keyFile := k.keyFile
		if keyFile == "" {
			keyFile = k.certFile // cURL's default: the key in the certificate's file
		}
		cert, err := tls.LoadX509KeyPair(k.certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("cannot load the client certificate: %w", err)
		}
		tcfg.Certificates = []tls.Certificate{cert}
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment, // as cURL, when the item names none
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			if err == nil {
				c.conns.Inc()
			}
			return conn, err
		},
		TLSClientConfig:        tcfg,
		MaxConnsPerHost:        c.opts.MaxConnsPerHost,
		MaxIdleConns:           0, // no global bound: per host is the one that matters
		MaxIdleConnsPerHost:    c.opts.MaxConnsPerHost,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: c.opts.MaxHeaderSize,
		TLSHandshakeTimeout:    0, // the check's context bounds it
		ForceAttemptHTTP2:      true,
	}
	if k.verifyHost && !k.verifyPeer {
		// The name, not the chain: crypto/tls has no such mode, and
		// VerifyConnection does not see the name when the URL's host is
		// an address (no SNI), so the TLS dial is ours.
		tr.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := tr.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			host, _, _ := net.SplitHostPort(addr)
			cfg := tcfg.Clone()
			if net.ParseIP(host) == nil {
				cfg.ServerName = host
			}
			cfg.VerifyConnection = func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return errors.New("no server certificate")
				}
				return cs.PeerCertificates[0].VerifyHostname(host)
			}
			tc := tls.Client(conn, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, err
			}
			return tc, nil
		}
	}
	if k.proxy != "" {
		u, err := url.Parse(withScheme(k.proxy))
		if err != nil {
			return nil, fmt.Errorf("invalid http_proxy %q: %w", k.proxy, err)
		}
		tr.Proxy = http.ProxyURL(u)
	}
	cl := &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.Context().Value(noFollowKey{}) != nil {
				return http.ErrUseLastResponse
			}
			if len(via) >= 10 { // cURL's limit as Zabbix sets it
				return errors.New("too many redirects (10)")
			}
			return nil
		},
	}
	c.transports[k] = cl
	return cl, nil
}

func verifyChain(cs tls.ConnectionState, name string) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("no server certificate")
	}
	inter := x509.NewCertPool()
	for _, ct := range cs.PeerCertificates[1:] {
		inter.AddCert(ct)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{DNSName: name, Intermediates: inter})
	return err
}

func withScheme(u string) string {
	if strings.Contains(u, "://") {
		return u
	}
	return "http://" + u
}

// check runs one check to its result. Every failure makes the item not
// supported with a message saying what went wrong, as Zabbix's HTTP agent
// does (its items keep no interface availability).
func (c *Checker) check(ctx context.Context, ch *poll.Check) *poll.Result {
	res := &poll.Result{Check: *ch}
	it := c.opts.Item(ch.ItemID)
	if it == nil || it.Ext().HTTP == nil || it.Ext().HTTP.URL == "" {
		return c.fail(res, reasonConfig, "the item has no URL to request: set url (item.update)")
	}
	h := it.Ext().HTTP
	if it.Host != nil {
		h = h.Expand(it.Host.UserMacros()) // the host's user macros in the URL, headers ...
	}
	return c.request(ctx, res, h, func(resp *http.Response, body []byte) []byte { return value(h, resp, body) })
}

// request makes h's request for res's check and completes res: with
// val's value of the response, or not supported saying what failed.
func (c *Checker) request(ctx context.Context, res *poll.Result, h *catalog.HTTPItem, val func(*http.Response, []byte) []byte) *poll.Result {
	ch := &res.Check
	switch h.AuthType {
	case catalog.HTTPAuthNone, catalog.HTTPAuthBasic:
	default:
		return c.fail(res, reasonConfig, fmt.Sprintf("authentication type %s is not supported: use none or basic, or an Authorization header", authName(h.AuthType)))
	}
	codes, err := catalog.ParseStatusCodes(h.StatusCodes)
	if err != nil {
		return c.fail(res, reasonConfig, err.Error())
	}
	if h.SSLKeyPassword != "" {
		return c.fail(res, reasonConfig, "encrypted private keys (ssl_key_password) are not supported: give an unencrypted key file readable by the server only")
	}
	cl, err := c.client(transportKey{h.VerifyPeer, h.VerifyHost, h.SSLCertFile, h.SSLKeyFile, h.HTTPProxy})
	if err != nil {
		return c.fail(res, reasonConfig, err.Error())
	}
	timeout := ch.Timeout
	if timeout <= 0 {
		timeout = c.opts.DefaultTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !h.FollowRedirects {
		rctx = context.WithValue(rctx, noFollowKey{}, true)
	}
	req, err := newRequest(rctx, h)
	if err != nil {
		return c.fail(res, reasonConfig, err.Error())
	}
	resp, err := cl.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return abandoned(res)
		}
		r := classify(err, rctx)
		return c.fail(res, r, fmt.Sprintf("Cannot perform request: %s", requestMessage(err, r, timeout, c.opts.MaxHeaderSize)))
	}
	defer resp.Body.Close()
	if !statusOK(codes, resp.StatusCode) {
		// Zabbix's message.
		return c.fail(res, reasonStatus, fmt.Sprintf("Response code \"%d\" did not match any of the required status codes \"%s\"", resp.StatusCode, h.StatusCodes))
	}
	var body []byte
	if h.RetrieveMode == catalog.HTTPRetrieveHeaders {
		// A short body read to its end lets the connection be reused;
		// a long one is not worth reading for a headers-only item.
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	} else {
		buf := c.buf()
		defer c.putBuf(buf)
		n, err := buf.ReadFrom(io.LimitReader(resp.Body, c.opts.MaxBodySize+1))
		if err != nil {
			if ctx.Err() != nil {
				// Not "Timeout was reached", nor not supported: the
				// server is stopping (found by polltest's
				// CancelInFlight with a body that stalls).
				return abandoned(res)
			}
			r := classify(err, rctx)
			return c.fail(res, r, fmt.Sprintf("Cannot read the response body: %s", requestMessage(err, r, timeout, c.opts.MaxHeaderSize)))
		}
		if n > c.opts.MaxBodySize {
			return c.fail(res, reasonTooLarge, fmt.Sprintf("response too large: the body is longer than %d bytes (poll.http_max_body_size)", c.opts.MaxBodySize))
		}
		body = buf.Bytes()
	}
	res.Clock = time.Now()
	res.Status = poll.OK
	res.Value = val(resp, body)
	return res
}

// abandoned completes res as a check abandoned because the scheduler's
// context ended: a network error, which a stopping scheduler keeps out
// of availability and which stores nothing.
func abandoned(res *poll.Result) *poll.Result {
	res.Status, res.Error, res.Clock = poll.NetworkError, "check abandoned: the server is stopping", time.Now()
	return res
}

// buf returns a pooled buffer for a body.
func (c *Checker) buf() *bytes.Buffer {
	if b, ok := c.bufs.Get().(*bytes.Buffer); ok {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

// putBuf pools b again unless a huge body grew it: one 16 MiB page must
// not stay in memory for every worker after it.
func (c *Checker) putBuf(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		c.bufs.Put(b)
	}
}

// newRequest builds the item's request: query fields appended to the
// URL, the body for POST and PUT (and any method with posts, as cURL
// sends them), headers, basic authentication.
func newRequest(ctx context.Context, h *catalog.HTTPItem) (*http.Request, error) {
	u, err := url.Parse(withScheme(h.URL))
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("invalid URL %q: %v", h.URL, err)
	}
	if len(h.QueryFields) > 0 {
		var q strings.Builder
		q.WriteString(u.RawQuery)
		for _, f := range h.QueryFields {
			if q.Len() > 0 {
				q.WriteByte('&')
			}
			q.WriteString(url.QueryEscape(f.Name))
			q.WriteByte('=')
			q.WriteString(url.QueryEscape(f.Value))
		}
		u.RawQuery = q.String()
	}
	var body io.Reader
	if h.Posts != "" && h.RequestMethod != catalog.HTTPHead {
		body = strings.NewReader(h.Posts)
	}
	req, err := http.NewRequestWithContext(ctx, h.MethodName(), u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("cannot make the request: %v", err)
	}
	if body != nil {
		switch h.PostType {
		case catalog.HTTPPostJSON:
			req.Header.Set("Content-Type", "application/json")
		case catalog.HTTPPostXML:
			req.Header.Set("Content-Type", "application/xml")
		default:
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded") // cURL's, for raw post fields
		}
	}
	req.Header.Set("User-Agent", "Peregrine")
	for _, f := range h.Headers {
		if strings.EqualFold(f.Name, "Host") {
			req.Host = f.Value
			continue
		}
		req.Header.Add(f.Name, f.Value)
	}
	if h.AuthType == catalog.HTTPAuthBasic {
		req.SetBasicAuth(h.Username, h.Password)
	}
	return req, nil
}

func statusOK(codes []catalog.StatusRange, code int) bool {
	if len(codes) == 0 {
		return true
	}
	for _, r := range codes {
		if code >= r.From && code <= r.To {
			return true
		}
	}
	return false
}

// value is the item's value from the response: the body, the header
// block or both (the header block, an empty line, the body), or, with
// output_format JSON, an object {"header": {...}, "body": ...} whose body
// is the parsed JSON when the body is JSON, else a string.
func value(h *catalog.HTTPItem, resp *http.Response, body []byte) []byte {
	if h.OutputFormat == catalog.HTTPOutputJSON {
		obj := map[string]any{}
		if h.RetrieveMode != catalog.HTTPRetrieveBody {
			hdr := map[string]string{}
			for k, v := range resp.Header {
				hdr[k] = strings.Join(v, ", ")
			}
			obj["header"] = hdr
		}
		if h.RetrieveMode != catalog.HTTPRetrieveHeaders {
			if json.Valid(body) && len(bytes.TrimSpace(body)) > 0 {
				obj["body"] = json.RawMessage(body)
			} else {
				obj["body"] = string(body)
			}
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return []byte(fmt.Sprintf(`{"error":%q}`, err.Error()))
		}
		return b
	}
	switch h.RetrieveMode {
	case catalog.HTTPRetrieveHeaders:
		return appendHeaders(nil, resp)
	case catalog.HTTPRetrieveBoth:
		out := appendHeaders(make([]byte, 0, 512+len(body)), resp)
		return append(out, body...)
	}
	return bytes.Clone(body) // the buffer goes back to the pool
}

// appendHeaders appends the status line and headers as the server sent
// them (names canonical, sorted: Go keeps no order), ending with the empty
// line.
func appendHeaders(dst []byte, resp *http.Response) []byte {
	dst = fmt.Appendf(dst, "%s %s\r\n", resp.Proto, resp.Status)
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range resp.Header[k] {
			dst = append(dst, k...)
			dst = append(dst, ": "...)
			dst = append(dst, v...)
			dst = append(dst, "\r\n"...)
		}
	}
	return append(dst, "\r\n"...)
}

// classify names why a request or read failed.
func classify(err error, rctx context.Context) int {
	var tlsErr *tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || rctx.Err() != nil:
		return reasonTimeout
	case errors.As(err, &certErr) || errors.As(err, &hostErr) || errors.As(err, &authErr) || errors.As(err, &tlsErr) ||
		strings.Contains(err.Error(), "tls:"):
		return reasonTLS
	case strings.Contains(err.Error(), "server response headers exceeded") || strings.Contains(err.Error(), "malformed HTTP"):
		return reasonHeaders
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return reasonConnect
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return reasonConnect
	}
	return reasonIO
}

func requestMessage(err error, r int, timeout time.Duration, maxHeader int64) string {
	switch r {
	case reasonTimeout:
		return fmt.Sprintf("Timeout was reached (%s)", timeout)
	case reasonHeaders:
		if strings.Contains(err.Error(), "exceeded") {
			return fmt.Sprintf("the response headers are larger than %d bytes (poll.http_max_header_size)", maxHeader)
		}
	}
	return err.Error()
}

func authName(t uint8) string {
	switch t {
	case catalog.HTTPAuthNTLM:
		return "NTLM"
	case catalog.HTTPAuthKerberos:
		return "Kerberos"
	case catalog.HTTPAuthDigest:
		return "Digest"
	}
	return strconv.Itoa(int(t))
}

// fail completes res as not supported, counts and logs it (throttled per
// reason).
func (c *Checker) fail(res *poll.Result, r int, msg string) *poll.Result {
	res.Status, res.Error, res.TimedOut = poll.NotSupported, msg, r == reasonTimeout
	if res.Clock.IsZero() {
		res.Clock = time.Now()
	}
	c.failures[r].Inc()
	if n, ok := c.throttle.Allow(reasonNames[r]); ok {
		c.opts.Logger.Warn("HTTP agent check failed", "reason", reasonNames[r], "itemid", res.ItemID, "key", res.Key, "err", msg, "suppressed", n)
	}
	return res
}
