package calc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
	"github.com/peregrine-mon/peregrine/internal/expr/exprsource"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Options configure a Checker.
type Options struct {
	// Snapshot returns the current catalog snapshot. Required.
	Snapshot func() *catalog.Snapshot
	// Store is where item values are read. Required. When it is also a
	// history.TrendReader the trend functions use its trends.
	Store history.Reader
	// Values, when set, is where item values are read instead of Store:
	// the value cache in front of it. Trends still come from Store.
	Values history.Reader
	// Macros returns the user macro resolver of a host (host, its
	// templates, global); nil: the snapshot's (catalog.Snapshot.UserMacros).
	Macros func(hostID uint64) expr.Macros
	// Location is the server's time zone for date/time functions and
	// aligned time shifts; default time.Local, as Zabbix uses the
	// server's zone.
	Location *time.Location
	// Started is the server's start, for nodata() (see expr.Options).
	Started time.Time
	// Now is the clock (tests); default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// maxCached bounds the parsed-formula cache; past it the cache starts
// over (formulas are few and shared by many items in practice).
const maxCached = 100_000

// Checker evaluates calculated items (poll.Checker).
type Checker struct {
	opts     Options
	trends   history.TrendReader // nil when Store keeps none
	throttle *selfmon.LogThrottle

	mu     sync.Mutex
	parsed map[string]parsed
}

type parsed struct {
	e   *expr.Expr
	err error
}

// New returns a Checker.
func New(opts Options) (*Checker, error) {
	if opts.Snapshot == nil || opts.Store == nil {
		return nil, fmt.Errorf("calc: Options.Snapshot and Options.Store are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Checker{opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute), parsed: map[string]parsed{}}
	c.trends, _ = opts.Store.(history.TrendReader)
	if opts.Values == nil {
		c.opts.Values = opts.Store
	}
	return c, nil
}

// Check evaluates the batch on a goroutine of its own.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	go func() {
		snap := c.opts.Snapshot()
		for i := range batch {
			done(c.Answer(ctx, snap, &batch[i]))
		}
	}()
}

// Answer evaluates one check's formula against snap.
func (c *Checker) Answer(ctx context.Context, snap *catalog.Snapshot, ch *poll.Check) *poll.Result {
	now := c.opts.Now()
	r := &poll.Result{Check: *ch, Clock: now}
	v := c.eval(ctx, snap, ch.ItemID, now)
	if v.IsError() && ctx.Err() != nil {
		// A read cut short because the server is stopping says nothing
		// of the formula: not supported would reach the item's steps.
		r.Status, r.Error = poll.NetworkError, "check abandoned: the server is stopping"
		return r
	}
	if v.IsError() {
		// Counted by the scheduler (checks_total{result="not_supported"})
		// and shown as the item's error; logged once a minute with the
		// count of the others.
		r.Status, r.Error = poll.NotSupported, v.Err
		if n, ok := c.throttle.Allow("not_supported"); ok {
			c.opts.Logger.Warn("calculated item not supported", "itemid", ch.ItemID, "key", ch.Key, "err", v.Err, "others_suppressed", n)
		}
		return r
	}
	r.Status, r.Value = poll.OK, []byte(v.String())
	return r
}

func (c *Checker) eval(ctx context.Context, snap *catalog.Snapshot, itemID uint64, now time.Time) expr.Value {
	it := snap.Item(itemID)
	if it == nil || it.Host == nil {
		return expr.ErrorValue("the calculated item no longer exists")
	}
	if it.Ext().Params == "" {
		return expr.ErrorValue("the calculated item has no formula")
	}
	e, err := c.parse(it.Ext().Params)
	if err != nil {
		return expr.ErrorValue("invalid formula: " + err.Error())
	}
	opt := expr.Options{
		Now:      now,
		Location: c.opts.Location,
		Source:   &exprsource.StoreSource{Store: c.opts.Values, TrendStore: c.trends, Snap: snap, Self: it.Host},
		Started:  c.opts.Started,
	}
	if c.opts.Macros != nil {
		opt.Macros = c.opts.Macros(it.HostID)
	} else {
		opt.Macros = snap.UserMacros(it.HostID)
	}
	return e.Eval(ctx, opt)
}

func (c *Checker) parse(formula string) (*expr.Expr, error) {
	c.mu.Lock()
	p, ok := c.parsed[formula]
	c.mu.Unlock()
	if ok {
		return p.e, p.err
	}
	e, err := expr.Parse(formula)
	c.mu.Lock()
	if len(c.parsed) >= maxCached {
		clear(c.parsed)
	}
	c.parsed[formula] = parsed{e, err}
	c.mu.Unlock()
	return e, err
}
