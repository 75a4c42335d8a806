package odbc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Defaults of Options.
const (
	DefaultWorkers           = 16
	DefaultMaxConnsPerSource = 4
	DefaultIdleTimeout       = time.Minute
	DefaultMaxValueSize      = 1 << 20
	DefaultTimeout           = 3 * time.Second
)

// Options configures a Checker.
type Options struct {
	// Item returns the current configuration of an item (the catalog's
	// latest snapshot): its query (Params) and login (ODBC).
	Item func(id uint64) *catalog.Item
	// Workers bounds the ODBC calls in progress at once (connecting and
	// querying; each holds an OS thread in C); checks beyond it wait for
	// one. Zabbix's StartODBCPollers. Default DefaultWorkers.
	Workers int
	// MaxConnsPerSource bounds the connections, open or opening, to one
	// data source (a connection string with its login); idle ones are
	// reused. Default DefaultMaxConnsPerSource.
	MaxConnsPerSource int
	// IdleTimeout closes a connection unused this long. Default
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxValueSize bounds a check's value (db.odbc.get and discovery's
	// JSON, db.odbc.select's text); a larger one makes the item not
	// supported. Default DefaultMaxValueSize.
	MaxValueSize int
	// DefaultTimeout applies to checks that come without one.
	DefaultTimeout time.Duration
	Metrics        *selfmon.Registry
	Logger         *slog.Logger

	// driver replaces unixODBC (tests).
	driver driver
}

// Reasons a check failed, as the "reason" label.
const (
	reasonConfig   = iota // the key, the query or the item cannot be used
	reasonNoDriver        // built without unixODBC
	reasonConnect         // the driver could not connect
	reasonQuery           // the driver refused or failed the query
	reasonResult          // the result is not what the key needs (no row, NULL, bad column names)
	reasonTimeout         // the check's timeout passed
	reasonTooLarge        // the value beyond MaxValueSize
	numReasons
)

var reasonNames = [numReasons]string{"config", "no_driver", "connect", "query", "result", "timeout", "too_large"}

// Checker runs database monitor checks (item type 11). Safe for
// concurrent use.
type Checker struct {
	opts     Options
	drv      driver
	drvErr   error
	throttle *selfmon.LogThrottle
	// workers holds a token per ODBC call in progress.
	workers chan struct{}

	mu    sync.Mutex
	pools map[string]*pool

	// calls counts the check goroutines (each ends once its ODBC call
	// has returned, which may be after its check was reported).
	calls     sync.WaitGroup
	quit      chan struct{}
	janitor   chan struct{} // closed when the janitor has ended
	closeOnce sync.Once

	inFlight, waiting, busy, overdue, conns *selfmon.Gauge
	opened                                  *selfmon.Counter
	results                                 [poll.NumStatus]*selfmon.Counter
	failures                                [numReasons]*selfmon.Counter
}

// New returns a Checker. It starts the goroutine that closes idle
// connections; Close ends it.
func New(opts Options) *Checker {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.MaxConnsPerSource <= 0 {
		opts.MaxConnsPerSource = DefaultMaxConnsPerSource
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxValueSize <= 0 {
		opts.MaxValueSize = DefaultMaxValueSize
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	c := &Checker{opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute),
		workers: make(chan struct{}, opts.Workers), pools: map[string]*pool{},
		quit: make(chan struct{}), janitor: make(chan struct{})}
	c.drv = opts.driver
	if c.drv == nil {
		c.drv, c.drvErr = newDriver()
	}
	if c.drvErr != nil {
		opts.Logger.Warn("database monitor items cannot be checked", "err", c.drvErr)
	}
	m := opts.Metrics
	c.inFlight = m.Gauge("peregrine_poll_odbc_in_flight", "Database monitor checks in flight.")
	c.waiting = m.Gauge("peregrine_poll_odbc_waiting", "Database monitor checks waiting for a connection or a worker.")
	c.busy = m.Gauge("peregrine_poll_odbc_busy_workers", "ODBC calls in progress (each holds a worker, odbc.workers).")
	c.overdue = m.Gauge("peregrine_poll_odbc_overdue_calls", "ODBC calls still running after their check timed out or was abandoned (a driver that does not honour its timeout or cancel).")
	c.conns = m.Gauge("peregrine_poll_odbc_connections", "ODBC connections open, in use or idle.")
	c.opened = m.Counter("peregrine_poll_odbc_connections_total", "ODBC connections opened (the other checks reused idle ones).")
	for s := range c.results {
		c.results[s] = m.Counter("peregrine_poll_odbc_checks_total", "Database monitor checks done, by result.", "result", poll.Status(s).String())
	}
	for r := range c.failures {
		c.failures[r] = m.Counter("peregrine_poll_odbc_errors_total", "Database monitor checks that brought no value, by reason.", "reason", reasonNames[r])
	}
	go c.runJanitor()
	return c
}

// closeWait bounds how long Close waits for ODBC calls still running: a
// driver stuck in a call its timeout does not end would otherwise hold
// the server's stop.
const closeWait = 15 * time.Second

// Close ends the janitor, waits (up to closeWait) for the ODBC calls
// still running, and closes every idle connection; call it once no check
// is handed over any more (the scheduler has stopped). Safe to call more
// than once.
func (c *Checker) Close() {
	c.closeOnce.Do(func() {
		close(c.quit)
		<-c.janitor
		ended := make(chan struct{})
		go func() { c.calls.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(closeWait):
			c.opts.Logger.Warn("ODBC calls still running at stop; their connections are left to the process's exit", "calls", c.overdue.Load())
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for src, p := range c.pools {
			c.conns.Add(-int64(p.expire(time.Now().Add(time.Hour))))
			delete(c.pools, src)
		}
		select {
		case <-ended:
			if c.drvErr == nil {
				c.drv.close()
			}
		default:
		}
	})
}

// Check starts one goroutine per check and returns at once; the
// scheduler bounds how many are in flight.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	c.inFlight.Add(int64(len(batch)))
	for i := range batch {
		c.calls.Add(1)
		go c.run(ctx, batch[i], done)
	}
}

// Phases of a check, for its timeout's message.
const (
	phaseWait    = iota // for an idle connection, a slot or a worker
	phaseConnect        // connecting
	phaseQuery          // running the query, reading the rows
)

// check is one check in progress: reported exactly once, by whichever
// comes first of its end and its deadline (or ctx's end).
type check struct {
	c        *Checker
	res      poll.Result
	done     func(*poll.Result)
	reported atomic.Bool
	phase    atomic.Int32
	timeout  time.Duration

	mu  sync.Mutex
	cur dbConn // the connection running the query, for cancel
	// finished: the check's ODBC calls have returned; overdue: it was
	// reported while one still ran (counted in Checker.overdue).
	finished, overdue bool
}

// report completes the check once; false if it was reported already.
func (ck *check) report(status poll.Status, value []byte, msg string, reason int) bool {
	if !ck.reported.CompareAndSwap(false, true) {
		return false
	}
	c := ck.c
	r := &ck.res
	r.Status, r.Value, r.Error, r.Clock = status, value, msg, time.Now()
	if status == poll.NotSupported && reason >= 0 {
		c.failures[reason].Inc()
		c.throttle.Warn(reasonNames[reason], "database monitor item not supported", "reason", reasonNames[reason],
			"item", r.ItemID, "key", redactKey(r.Key), "error", msg)
	}
	c.inFlight.Add(-1)
	c.results[status].Inc()
	ck.done(r)
	return true
}

func (ck *check) fail(reason int, msg string) { ck.report(poll.NotSupported, nil, msg, reason) }

// reportExpired reports the check as timed out in its phase (or
// abandoned when ctx ended), once; false if it was reported already.
func (ck *check) reportExpired(ctx context.Context) bool {
	if ctx.Err() != nil {
		return ck.report(poll.NetworkError, nil, "check abandoned: the server is stopping", -1)
	}
	var msg string
	switch ck.phase.Load() {
	case phaseWait:
		msg = fmt.Sprintf("Timeout after %s waiting for a connection to the data source: at most odbc.max_conns_per_source (%d) are open to one, and odbc.workers (%d) calls run at once.",
			ck.timeout, ck.c.opts.MaxConnsPerSource, ck.c.opts.Workers)
	case phaseConnect:
		msg = fmt.Sprintf("Cannot connect to ODBC DSN: timeout after %s.", ck.timeout)
	default:
		msg = fmt.Sprintf("Cannot execute ODBC query: timeout after %s.", ck.timeout)
	}
	return ck.report(poll.NotSupported, nil, msg, reasonTimeout)
}

// expired reports the check when its deadline passed or ctx ended
// before it was done, and cancels its statement.
func (ck *check) expired(ctx context.Context) {
	ok := ck.reportExpired(ctx)
	ck.mu.Lock()
	defer ck.mu.Unlock()
	if ok && !ck.finished && ck.phase.Load() != phaseWait {
		ck.overdue = true
		ck.c.overdue.Add(1)
	}
	if ck.cur != nil {
		ck.cur.cancel()
	}
}

// callsReturned marks the check's ODBC calls over.
func (ck *check) callsReturned() {
	ck.mu.Lock()
	defer ck.mu.Unlock()
	ck.finished = true
	if ck.overdue {
		ck.c.overdue.Add(-1)
	}
}

// run does one check.
func (c *Checker) run(ctx context.Context, ch poll.Check, done func(*poll.Result)) {
	defer c.calls.Done()
	ck := &check{c: c, res: poll.Result{Check: ch}, done: done}
	if ctx.Err() != nil {
		ck.report(poll.NetworkError, nil, "check abandoned: the server is stopping", -1)
		return
	}
	it := c.opts.Item(ch.ItemID)
	if it == nil || it.Type != catalog.ODBC {
		ck.fail(reasonConfig, "the item is no database monitor item any more")
		return
	}
	t, msg := parseKey(ch.Key)
	if msg != "" {
		ck.fail(reasonConfig, msg)
		return
	}
	query, login := it.Ext().Params, it.Ext().ODBC
	if login == nil {
		login = &catalog.ODBCItem{}
	}
	if it.Host != nil {
		sc := it.Host.UserMacros()
		query, login = sc.Expand(query), login.Expand(sc)
	}
	if query == "" {
		ck.fail(reasonConfig, "SQL query cannot be empty.")
		return
	}
	if c.drvErr != nil {
		ck.fail(reasonNoDriver, c.drvErr.Error())
		return
	}
	ck.timeout = ch.Timeout
	if ck.timeout <= 0 {
		ck.timeout = c.opts.DefaultTimeout
	}
	deadline := time.Now().Add(ck.timeout)
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	stop := context.AfterFunc(cctx, func() { ck.expired(ctx) })
	defer stop()
	p := c.pool(connString(t, login.Username, login.Password))
	value, err := c.query(cctx, ck, p, deadline, t.kind, query)
	ck.callsReturned()
	c.unuse(p)
	switch {
	case err == nil:
		ck.report(poll.OK, value, "", -1)
	case cctx.Err() != nil:
		// Reported by expired, unless the query saw the deadline before
		// the context started expired's goroutine, and the deferred stop
		// then kept it from running (seen under load): report it here;
		// report takes the first of the two.
		ck.reportExpired(ctx)
	default:
		reason := reasonQuery
		var de *dbError
		var tl errTooLarge
		switch {
		case errors.As(err, &tl):
			reason = reasonTooLarge
		case errors.As(err, &de) && de.stage <= stageConnect:
			reason = reasonConnect
		case !errors.As(err, &de):
			reason = reasonResult
		}
		ck.fail(reason, err.Error())
	}
}

// query runs the query on a connection of p: an idle one, or a new one.
// A reused connection the server has dropped fails with a communication
// error before any row: it is closed and the query runs once more on a
// new one.
func (c *Checker) query(ctx context.Context, ck *check, p *pool, deadline time.Time, kind keyKind, q string) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		ck.phase.Store(phaseWait)
		c.waiting.Add(1)
		cn, open, err := p.get(ctx)
		if err == nil {
			select {
			case c.workers <- struct{}{}:
			case <-ctx.Done():
				err = ctx.Err()
				if cn != nil {
					p.put(cn, time.Now())
				} else if open {
					p.release()
				}
			}
		}
		c.waiting.Add(-1)
		if err != nil {
			return nil, err
		}
		c.busy.Add(1)
		value, retry, err := c.useConn(ctx, ck, p, cn, open, deadline, kind, q)
		c.busy.Add(-1)
		<-c.workers
		if !retry || attempt > 0 || ctx.Err() != nil {
			return value, err
		}
	}
}

// useConn runs the query on cn (or on a connection it opens) while the
// check holds a worker, and gives the connection back, or closes it when
// it is broken or its query was cut short.
func (c *Checker) useConn(ctx context.Context, ck *check, p *pool, cn *pooledDB, open bool, deadline time.Time, kind keyKind, q string) (value []byte, retry bool, err error) {
	if open {
		ck.phase.Store(phaseConnect)
		db, err := c.drv.open(p.src, time.Until(deadline))
		if err != nil {
			p.release()
			return nil, false, err
		}
		c.opened.Inc()
		c.conns.Add(1)
		cn = &pooledDB{db: db}
		if err := ctx.Err(); err != nil {
			// Connected after the check's end: no query, but the
			// connection serves the next check.
			p.put(cn, time.Now())
			return nil, false, err
		}
	}
	ck.phase.Store(phaseQuery)
	ck.mu.Lock()
	ck.cur = cn.db
	ck.mu.Unlock()
	sh := newShaper(kind, c.opts.MaxValueSize)
	err = cn.db.query(ctx, q, sh)
	ck.mu.Lock()
	ck.cur = nil
	ck.mu.Unlock()
	var de *dbError
	broken := errors.As(err, &de) && de.broken
	if broken || ctx.Err() != nil {
		cn.db.close()
		c.conns.Add(-1)
		p.release()
		if broken {
			c.conns.Add(-int64(p.flush()))
		}
	} else {
		p.put(cn, time.Now())
	}
	if err != nil {
		return nil, broken && !open && sh.rows == 0, err
	}
	value, err = sh.result()
	return value, false, err
}

// pool returns the pool of src, made on first use, and counts the
// caller as its user until unuse.
func (c *Checker) pool(src string) *pool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pools[src]
	if p == nil {
		p = newPool(src, c.opts.MaxConnsPerSource)
		c.pools[src] = p
	}
	p.users++
	p.lastUse = time.Now()
	return p
}

func (c *Checker) unuse(p *pool) {
	c.mu.Lock()
	p.users--
	c.mu.Unlock()
}

// runJanitor closes idle connections past Options.IdleTimeout and drops
// the pools left without a connection or a user, until Close.
func (c *Checker) runJanitor() {
	defer close(c.janitor)
	every := min(max(c.opts.IdleTimeout/2, 100*time.Millisecond), 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.quit:
			return
		case now := <-t.C:
			c.expire(now)
		}
	}
}

func (c *Checker) expire(now time.Time) {
	cutoff := now.Add(-c.opts.IdleTimeout)
	c.mu.Lock()
	defer c.mu.Unlock()
	for src, p := range c.pools {
		c.conns.Add(-int64(p.expire(cutoff)))
		if p.users == 0 && len(p.slots) == 0 && p.lastUse.Before(cutoff) {
			delete(c.pools, src)
		}
	}
}
