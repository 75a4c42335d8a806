package ipmi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/types"
)

// bmcKey is one BMC as a host's settings reach it: checks of hosts with
// the same address and credentials share its sessions.
type bmcKey struct {
	host      string
	port      int
	authType  int8
	privilege uint8
	username  string
	password  string
}

// bmc is one BMC's bounded pool of sessions and its sensor list. At
// most cap(slots) sessions are open or opening at once; a check waits
// for a free one within its timeout, so a BMC answers no more requests
// at a time than the pool allows (BMCs are small: Zabbix keeps one
// session per host and asks one thing at a time).
type bmc struct {
	key   bmcKey
	slots chan struct{}

	mu       sync.Mutex
	idle     []*session // open sessions not in use, most recently used last
	sensors  []*sensor  // the SDR repository's sensors, in its order; nil until read
	readAt   time.Time  // when sensors were read
	lastUsed time.Time
	sdrMu    sync.Mutex // one SDR walk at a time
}

// session is one open IPMI session (RMCP+ or IPMI v1.5 over UDP).
type session struct {
	cl       *client.Client
	lastUsed time.Time
}

// cipherSuites are tried in this order: 17 (HMAC-SHA256, AES-CBC-128),
// then 3 (HMAC-SHA1, AES-CBC-128, OpenIPMI's and ipmitool's default).
// Naming them spares the Get Channel Cipher Suites exchange, which some
// BMCs (ipmi_sim among them) never answer: asking it cost every
// connection a timeout.
var cipherSuites = []types.CipherSuiteID{17, 3}

// errAuth marks a BMC that answered but refused the credentials.
type errAuth struct{ err error }

func (e *errAuth) Error() string { return e.err.Error() }
func (e *errAuth) Unwrap() error { return e.err }

// isAuthFailure reports whether err from Connect is the BMC refusing
// the user or password. The library joins the errors of each cipher
// suite it tried into text (%v), so the marks are found in the text.
func isAuthFailure(err error) bool {
	if errors.Is(err, client.ErrRAKPAuthentication) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, client.ErrRAKPAuthentication.Error()) || strings.Contains(s, "Unauthorized name") ||
		strings.Contains(s, "Invalid role") || strings.Contains(s, "Unauthorized role")
}

// open connects a new session within ctx.
func (c *Checker) open(ctx context.Context, k *bmcKey) (*session, error) {
	cl, err := client.NewClient(k.host, k.port, k.username, k.password)
	if err != nil {
		return nil, &errAuth{err}
	}
	iface := client.InterfaceLanplus
	if k.authType >= 0 && k.authType != 6 {
		iface = client.InterfaceLan
	}
	cl.WithInterface(iface).WithTimeout(c.opts.RetryInterval).WithRetry(maxRetries).
		WithMaxPrivilegeLevel(types.PrivilegeLevel(k.privilege))
	if iface == client.InterfaceLanplus {
		cl.WithCipherSuiteID(cipherSuites...)
	}
	if err := cl.Connect(ctx); err != nil {
		c.closeLater(cl)
		if ctx.Err() == nil && isAuthFailure(err) {
			return nil, &errAuth{err}
		}
		return nil, err
	}
	c.sessionsOpened.Inc()
	return &session{cl: cl, lastUsed: time.Now()}, nil
}

// maxRetries bounds the library's resends of one request; the check's
// deadline ends them sooner.
const maxRetries = 8

// acquire returns an open session of b, waiting within ctx for a free
// slot; reused tells whether it was open before.
func (c *Checker) acquire(ctx context.Context, b *bmc) (s *session, reused bool, err error) {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		c.poolWaitTimeouts.Inc()
		return nil, false, fmt.Errorf("no free IPMI session within the timeout: %w", ctx.Err())
	}
	b.mu.Lock()
	if n := len(b.idle); n > 0 {
		s = b.idle[n-1]
		b.idle = b.idle[:n-1]
	}
	b.mu.Unlock()
	if s != nil {
		return s, true, nil
	}
	s, err = c.open(ctx, &b.key)
	if err != nil {
		<-b.slots
		return nil, false, err
	}
	return s, false, nil
}

// release gives s back to b: kept open if it worked, closed if not (a
// session a request failed on may be out of step with the BMC).
func (c *Checker) release(b *bmc, s *session, ok bool) {
	now := time.Now()
	if ok {
		s.lastUsed = now
		b.mu.Lock()
		b.idle = append(b.idle, s)
		b.lastUsed = now
		b.mu.Unlock()
	} else {
		c.closeLater(s.cl)
	}
	<-b.slots
}

// closeLater closes a client in the background, within closeTimeout:
// closing says goodbye to the BMC, which may not answer.
func (c *Checker) closeLater(cl *client.Client) {
	c.closers.Add(1)
	go func() {
		defer c.closers.Done()
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		_ = cl.Close(ctx)
		c.sessionsClosed.Inc()
	}()
}

// closeTimeout bounds the goodbye to a BMC.
const closeTimeout = 500 * time.Millisecond

// sweep closes sessions idle for longer than IdleClose and forgets BMCs
// with none left and no check for as long. Called from Check at most
// once per sweepEvery: no goroutine of its own.
func (c *Checker) sweep(now time.Time) {
	c.mu.Lock()
	if now.Sub(c.swept) < sweepEvery {
		c.mu.Unlock()
		return
	}
	c.swept = now
	var stale []*session
	for k, b := range c.bmcs {
		b.mu.Lock()
		keep := b.idle[:0]
		for _, s := range b.idle {
			if now.Sub(s.lastUsed) > c.opts.IdleClose {
				stale = append(stale, s)
			} else {
				keep = append(keep, s)
			}
		}
		b.idle = keep
		gone := len(b.idle) == 0 && len(b.slots) == 0 && now.Sub(b.lastUsed) > c.opts.IdleClose
		b.mu.Unlock()
		if gone {
			delete(c.bmcs, k)
		}
	}
	c.mu.Unlock()
	for _, s := range stale {
		c.closeLater(s.cl)
	}
}

// sweepEvery is how often Check looks for idle sessions.
const sweepEvery = time.Minute

// Close closes every idle session and waits for the checks in flight
// and the sessions being closed. Call it once the scheduler has
// stopped.
func (c *Checker) Close() {
	c.checks.Wait()
	c.mu.Lock()
	for k, b := range c.bmcs {
		b.mu.Lock()
		for _, s := range b.idle {
			c.closeLater(s.cl)
		}
		b.idle = nil
		b.mu.Unlock()
		delete(c.bmcs, k)
	}
	c.mu.Unlock()
	c.closers.Wait()
}
