package ipmi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Options configures a Checker.
type Options struct {
	// Item returns the catalog item of a check (its ipmi_sensor and its
	// host's IPMI settings); required.
	Item func(id uint64) *catalog.Item
	// MaxSessionsPerBMC bounds the sessions open to one BMC, so the
	// requests it answers at once (default 2).
	MaxSessionsPerBMC int
	// IdleClose closes a session unused this long (default 10 minutes;
	// the library keeps it alive meanwhile, as Zabbix keeps its
	// sessions).
	IdleClose time.Duration
	// SDRRefresh is how long the list of a BMC's sensors (its SDR
	// repository) is kept before it is read again (default 10 minutes);
	// a sensor not in the list has it read again at most once a minute.
	SDRRefresh time.Duration
	// RetryInterval is how long one request waits for its reply before
	// it is sent again (default 1 s, as ipmitool's lanplus); the check's
	// timeout bounds the whole.
	RetryInterval time.Duration
	// DefaultTimeout applies to checks without one (default 3 s).
	DefaultTimeout time.Duration
	Metrics        *selfmon.Registry
	Logger         *slog.Logger
}

// Checker runs IPMI checks (item type 12): ipmi_sensor readings and
// ipmi.get. See the package documentation.
type Checker struct {
	opts     Options
	throttle *selfmon.LogThrottle

	mu    sync.Mutex
	bmcs  map[bmcKey]*bmc
	swept time.Time

	checks  sync.WaitGroup // checks in flight
	closers sync.WaitGroup // sessions being closed

	inFlight                       *selfmon.Gauge
	results                        [poll.NumStatus]*selfmon.Counter
	timeouts, authFailures         *selfmon.Counter
	poolWaitTimeouts               *selfmon.Counter
	sessionsOpened, sessionsClosed *selfmon.Counter
	sdrReads                       *selfmon.Counter
}

// New returns a Checker.
func New(opts Options) *Checker {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	if opts.MaxSessionsPerBMC <= 0 {
		opts.MaxSessionsPerBMC = 2
	}
	if opts.IdleClose <= 0 {
		opts.IdleClose = 10 * time.Minute
	}
	if opts.SDRRefresh <= 0 {
		opts.SDRRefresh = 10 * time.Minute
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = time.Second
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = 3 * time.Second
	}
	m := opts.Metrics
	c := &Checker{opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute), bmcs: map[bmcKey]*bmc{}}
	c.inFlight = m.Gauge("peregrine_poll_ipmi_in_flight", "IPMI checks in flight.")
	for s := range c.results {
		c.results[s] = m.Counter("peregrine_poll_ipmi_checks_total", "IPMI checks done, by result.", "result", poll.Status(s).String())
	}
	c.timeouts = m.Counter("peregrine_poll_ipmi_timeouts_total", "IPMI checks that ended by their timeout (the BMC did not answer).")
	c.authFailures = m.Counter("peregrine_poll_ipmi_auth_failures_total", "IPMI sessions the BMC refused (wrong username, password or privilege).")
	c.poolWaitTimeouts = m.Counter("peregrine_poll_ipmi_session_wait_timeouts_total", "IPMI checks that timed out waiting for a free session of their BMC.")
	c.sessionsOpened = m.Counter("peregrine_poll_ipmi_sessions_opened_total", "IPMI sessions opened.")
	c.sessionsClosed = m.Counter("peregrine_poll_ipmi_sessions_closed_total", "IPMI sessions closed (idle, failed or at shutdown).")
	c.sdrReads = m.Counter("peregrine_poll_ipmi_sdr_reads_total", "Reads of a BMC's sensor data repository.")
	return c
}

// Check starts one goroutine per check and returns at once; each ends
// within its check's timeout (the netpoller is the event loop, as in
// package poll/agent). The scheduler bounds how many are in flight;
// the session pools bound what each BMC is asked at a time.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	c.sweep(time.Now())
	c.inFlight.Add(int64(len(batch)))
	c.checks.Add(len(batch))
	for i := range batch {
		go func(ch *poll.Check) {
			defer c.checks.Done()
			r := c.check(ctx, ch)
			c.inFlight.Add(-1)
			c.results[r.Status].Inc()
			done(r)
		}(&batch[i])
	}
}

func (c *Checker) check(ctx context.Context, ch *poll.Check) *poll.Result {
	res := &poll.Result{Check: *ch}
	fail := func(st poll.Status, format string, args ...any) *poll.Result {
		res.Status, res.Error, res.Clock = st, fmt.Sprintf(format, args...), time.Now()
		return res
	}
	if ctx.Err() != nil {
		return fail(poll.NetworkError, "check abandoned: the server is stopping")
	}
	it := c.opts.Item(ch.ItemID)
	if it == nil || it.Host == nil {
		return fail(poll.NotSupported, "the item is no longer in the configuration")
	}
	k, err := keyOf(ch.Addr, it.Host.Ext().IPMI)
	if err != nil {
		return fail(poll.NotSupported, "%v", err)
	}
	get := ch.Key == catalog.IPMIGetKey
	if !get && it.Ext().IPMISensor == "" {
		return fail(poll.NotSupported, `the IPMI item has no sensor: set its "ipmi_sensor"`)
	}
	timeout := ch.Timeout
	if timeout <= 0 {
		timeout = c.opts.DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b := c.bmcFor(k)
	var val []byte
	for attempt := 0; ; attempt++ {
		s, reused, err := c.acquire(cctx, b)
		if err != nil {
			return c.failed(ctx, cctx, res, ch, timeout, err, true)
		}
		val, err = c.read(cctx, b, s, it.Ext().IPMISensor, get)
		var nf *notFoundError
		var ce *ccError
		switch {
		case err == nil, errors.As(err, &nf), errors.Is(err, errNoReading), errors.As(err, &ce), errors.As(err, new(*types.ResponseError)):
			c.release(b, s, true) // the BMC answered: the session is fine
		default:
			c.release(b, s, false)
			// A session kept from before may have expired at the BMC
			// (restarted, or its idle timeout): once, if time is left,
			// with a new one.
			if reused && attempt == 0 && cctx.Err() == nil {
				continue
			}
			return c.failed(ctx, cctx, res, ch, timeout, err, false)
		}
		if nf != nil {
			return fail(poll.NotSupported, "sensor or control %s@[%s]:%d does not exist", it.Ext().IPMISensor, k.host, k.port)
		}
		if err != nil {
			return fail(poll.NotSupported, "%v", err)
		}
		break
	}
	res.Status, res.Value, res.Clock = poll.OK, val, time.Now()
	return res
}

// failed is the result of a check the BMC did not answer, or answered
// with a refusal: abandoned (ctx ended), timed out, refused the
// credentials (not supported: the BMC works, the host's settings do
// not), or another network error.
func (c *Checker) failed(ctx, cctx context.Context, res *poll.Result, ch *poll.Check, timeout time.Duration, err error, connecting bool) *poll.Result {
	res.Clock = time.Now()
	var ae *errAuth
	switch {
	case ctx.Err() != nil:
		res.Status, res.Error = poll.NetworkError, "check abandoned: the server is stopping"
		return res
	case errors.As(err, &ae):
		c.authFailures.Inc()
		res.Status = poll.NotSupported
		res.Error = "cannot connect to IPMI host: the BMC refused the session: check the host's IPMI username, password, authentication type and privilege"
	case cctx.Err() != nil || libraryTimedOut(err):
		c.timeouts.Inc()
		res.Status = poll.NetworkError
		what := "reading"
		if connecting {
			what = "connecting"
		}
		res.Error = fmt.Sprintf("cannot connect to IPMI host: timed out after %v while %s (no answer from %s)", timeout, what, ch.Addr)
	default:
		res.Status = poll.NetworkError
		res.Error = "cannot connect to IPMI host: " + shortError(err)
	}
	if n, ok := c.throttle.Allow(res.Error[:min(len(res.Error), 48)]); ok {
		c.opts.Logger.Info("IPMI check failed", "addr", ch.Addr, "itemid", ch.ItemID, "key", ch.Key, "err", res.Error, "suppressed", n)
	}
	return res
}

// libraryTimedOut reports a library error that is a timeout in all but
// name: go-ipmi retries its UDP exchange until its own read deadlines
// run out, which can be just before the check's context does, and says
// so only in its text (it flattens errors with %v).
func libraryTimedOut(err error) bool {
	return err != nil && (errors.Is(err, os.ErrDeadlineExceeded) || strings.Contains(err.Error(), "deadline"))
}

// shortError is the library's error without its nesting of
// "failed, err:" prefixes: the last cause only.
func shortError(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "err: "); i >= 0 && i+5 < len(s) {
		s = s[i+5:]
	}
	return strings.TrimSpace(s)
}

// keyOf is the BMC a check reaches: its interface's address and its
// host's IPMI settings, checked for what IPMI has.
func keyOf(addr string, p catalog.HostIPMI) (bmcKey, error) {
	host, portS, err := net.SplitHostPort(addr)
	if err != nil {
		return bmcKey{}, fmt.Errorf("invalid IPMI interface address %q: %v", addr, err)
	}
	port, err := strconv.Atoi(portS)
	if err != nil || port < 1 || port > 65535 {
		return bmcKey{}, fmt.Errorf("invalid IPMI interface port %q: use 1..65535 (623 is IPMI's)", portS)
	}
	switch p.AuthType {
	case -1, 0, 1, 2, 4, 5, 6:
	default:
		return bmcKey{}, fmt.Errorf("unsupported IPMI authentication type %d: use -1 (default), 0 (none), 1 (MD2), 2 (MD5), 4 (straight), 5 (OEM) or 6 (RMCP+)", p.AuthType)
	}
	if p.Privilege < 1 || p.Privilege > 5 {
		return bmcKey{}, fmt.Errorf("unsupported IPMI privilege %d: use 1 (callback), 2 (user), 3 (operator), 4 (admin) or 5 (OEM)", p.Privilege)
	}
	return bmcKey{host: host, port: port, authType: p.AuthType, privilege: p.Privilege, username: p.Username, password: p.Password}, nil
}

// bmcFor returns the pool of k, made on first use.
func (c *Checker) bmcFor(k bmcKey) *bmc {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.bmcs[k]
	if b == nil {
		b = &bmc{key: k, slots: make(chan struct{}, c.opts.MaxSessionsPerBMC), lastUsed: time.Now()}
		c.bmcs[k] = b
	}
	return b
}

// withOwner is ctx with the sensor's owner as the responder of the
// commands sent: sensors of satellite controllers are read through the
// BMC.
func withOwner(ctx context.Context, s *sensor) context.Context {
	if s.owner == 0x20 && s.lun == 0 {
		return ctx
	}
	cc := &client.CommandContext{}
	cc.WithResponderAddr(s.owner).WithResponderLUN(s.lun)
	return client.WithCommandContext(ctx, cc)
}
