package script

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Defaults of Options.
const (
	DefaultTimeout      = 3 * time.Second // Zabbix 6.0's default item timeout
	DefaultMaxValueSize = 16 << 20
)

// Options configures a Checker.
type Options struct {
	// Item returns the current configuration of an item (the catalog's
	// latest snapshot): its script (Params), parameters and host.
	Item func(id uint64) *catalog.Item
	// JS runs the scripts: the server's jsvm.Pool. nil runs them in
	// this process (jsvm.Local: tests and tools only, see its comment).
	JS jsvm.Runner
	// Fetch makes the requests of the scripts' HttpRequest; default a
	// jsvm.HTTPFetcher with http.DefaultClient.
	Fetch jsvm.FetchFunc
	// DefaultTimeout applies to checks that come without one.
	DefaultTimeout time.Duration
	// MaxValueSize bounds a value's length in bytes; a script that
	// returns more makes its item not supported. Default
	// DefaultMaxValueSize.
	MaxValueSize int
	Metrics      *selfmon.Registry
	Logger       *slog.Logger
}

// Results of a check, as the "result" label.
const (
	resOK = iota
	resNotSupported
	resTimeout
	resLocalError
	resAbandoned
	numResults
)

var resultNames = [numResults]string{"ok", "not_supported", "timeout", "local_error", "abandoned"}

// Checker runs script items. Safe for concurrent use.
type Checker struct {
	opts     Options
	results  [numResults]*selfmon.Counter
	throttle *selfmon.LogThrottle
	wg       sync.WaitGroup
}

// New returns a Checker.
func New(opts Options) *Checker {
	if opts.JS == nil {
		opts.JS = &jsvm.Local{}
	}
	if opts.Fetch == nil {
		opts.Fetch = (&jsvm.HTTPFetcher{}).Fetch
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	if opts.MaxValueSize <= 0 {
		opts.MaxValueSize = DefaultMaxValueSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	c := &Checker{opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute)}
	for r := range c.results {
		c.results[r] = opts.Metrics.Counter("peregrine_poll_script_checks_total", "Script item checks done, by result.", "result", resultNames[r])
	}
	return c
}

// Check starts one goroutine per check and returns; the scheduler bounds
// how many are in flight, the pool how many run at once.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	for i := range batch {
		c.wg.Add(1)
		go func(ch poll.Check) {
			defer c.wg.Done()
			done(c.check(ctx, ch))
		}(batch[i])
	}
}

// Close waits for the checks still running (their context ended, they
// end within a second).
func (c *Checker) Close() { c.wg.Wait() }

// Messages of the item's error, Zabbix 6.0's words.
const (
	msgExecute   = "Cannot execute script: "
	msgCompile   = "Cannot compile script: "
	msgUndefined = msgExecute + "undefined return value"
	msgTimeout   = msgExecute + "RangeError: execution timeout"
	msgAbandoned = "check abandoned: the server is stopping"
)

func (c *Checker) check(ctx context.Context, ch poll.Check) *poll.Result {
	res := &poll.Result{Check: ch}
	if ctx.Err() != nil {
		return c.abandoned(res)
	}
	it := c.opts.Item(ch.ItemID)
	if it == nil || it.Type != catalog.Script {
		return c.fail(res, resNotSupported, "the item is no script item any more")
	}
	timeout := ch.Timeout
	if timeout <= 0 {
		timeout = c.opts.DefaultTimeout
	}
	r, err := c.opts.JS.Run(ctx, &jsvm.Job{
		Kind: jsvm.Item, Script: it.Ext().Params, Value: Value(it), Timeout: timeout, MaxResult: c.opts.MaxValueSize,
		Fetch: c.opts.Fetch,
		Log: func(level, msg string) {
			c.opts.Logger.Debug("script item", "item", ch.ItemID, "key", ch.Key, "level", level, "message", msg)
		},
	})
	res.Clock = time.Now()
	var je *jsvm.Error
	switch {
	case err == nil && r.Undefined:
		return c.fail(res, resNotSupported, msgUndefined)
	case err == nil:
		c.results[resOK].Inc()
		res.Status, res.Value = poll.OK, []byte(r.Value)
		return res
	case ctx.Err() != nil && !errors.As(err, &je):
		return c.abandoned(res)
	case !errors.As(err, &je):
		return c.fail(res, resLocalError, err.Error())
	}
	switch je.Reason {
	case jsvm.Timeout:
		return c.fail(res, resTimeout, msgTimeout)
	case jsvm.Invalid:
		return c.fail(res, resNotSupported, msgCompile+strings.TrimPrefix(je.Msg, jsvm.CompilePrefix))
	case jsvm.Failed:
		if ctx.Err() != nil {
			return c.abandoned(res)
		}
		if strings.HasPrefix(je.Msg, "cannot start a script worker") {
			return c.fail(res, resLocalError, je.Msg)
		}
	}
	return c.fail(res, resNotSupported, msgExecute+je.Msg)
}

// fail reports res not supported (or, for resLocalError, a local error)
// with msg, counts it under result and logs it at most once a minute
// per result.
func (c *Checker) fail(res *poll.Result, result int, msg string) *poll.Result {
	c.results[result].Inc()
	if res.Clock.IsZero() {
		res.Clock = time.Now()
	}
	res.Status, res.Error = poll.NotSupported, msg
	if result == resLocalError {
		res.Status = poll.LocalError
		c.throttle.Warn(resultNames[result], "cannot run a script item", "item", res.ItemID, "key", res.Key, "error", msg)
	} else {
		c.throttle.Warn(resultNames[result], "script item not supported", "item", res.ItemID, "key", res.Key, "error", msg)
	}
	return res
}

func (c *Checker) abandoned(res *poll.Result) *poll.Result {
	c.results[resAbandoned].Inc()
	res.Status, res.Error, res.Clock = poll.NetworkError, msgAbandoned, time.Now()
	return res
}

// Value is the script's argument for item it: the JSON object of its
// parameters, macros resolved (see the package comment).
func Value(it *catalog.Item) string {
	if len(it.Ext().Parameters) == 0 {
		return "{}"
	}
	x := newExpander(it)
	b := make([]byte, 0, 64)
	b = append(b, '{')
	for i, p := range it.Ext().Parameters {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, x.expand(p.Name))
		b = append(b, ':')
		b = appendJSONString(b, x.expand(p.Value))
	}
	return string(append(b, '}'))
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil {
		panic("BUG: a string does not marshal: " + err.Error())
	}
	return append(b, q...)
}

// expander resolves the macros of one item's parameters.
type expander struct {
	it    *catalog.Item
	pairs *strings.Replacer // built-in macros, built on first use
}

func newExpander(it *catalog.Item) *expander { return &expander{it: it} }

func (x *expander) expand(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	h := x.it.Host
	if h != nil && strings.Contains(s, "{$") {
		s = h.UserMacros().Expand(s)
	}
	if !strings.Contains(s, "{HOST.") && !strings.Contains(s, "{ITEM.") {
		return s
	}
	if x.pairs == nil {
		id := strconv.FormatUint(x.it.ID, 10)
		pairs := []string{"{ITEM.ID}", id, "{ITEM.KEY.ORIG}", x.it.Key, "{ITEM.KEY}", x.it.Key}
		if h != nil {
			pairs = append(pairs, "{HOST.HOST}", h.Host, "{HOST.NAME}", h.Name)
			if f := defaultInterface(h); f != nil {
				conn := f.IP
				if !f.UseIP {
					conn = f.DNS
				}
				pairs = append(pairs, "{HOST.CONN}", conn, "{HOST.IP}", f.IP, "{HOST.DNS}", f.DNS)
			}
		}
		x.pairs = strings.NewReplacer(pairs...)
	}
	return x.pairs.Replace(s)
}

// defaultInterface is the interface Zabbix takes {HOST.CONN} and its
// kin from for an item without one: the host's main interface of the
// first type it has, agent, SNMP, JMX, then IPMI.
func defaultInterface(h *catalog.Host) *catalog.Interface {
	for _, t := range []catalog.InterfaceType{catalog.InterfaceAgent, catalog.InterfaceSNMP, catalog.InterfaceJMX, catalog.InterfaceIPMI} {
		for i := range h.Interfaces {
			if f := &h.Interfaces[i]; f.Type == t && f.Main {
				return f
			}
		}
	}
	return nil
}
