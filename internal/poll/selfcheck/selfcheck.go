package selfcheck

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// Zabbix's messages for internal items it cannot answer (6.0 server).
const (
	msgWrongKey      = "Unsupported item key for this item type."
	msgUnsupported   = "Internal check is not supported."
	msgParamCount    = "Invalid number of parameters."
	msgSecondParam   = "Invalid second parameter."
	msgThirdParam    = "Invalid third parameter."
	msgFourthParam   = "Invalid fourth parameter."
	queueDefaultFrom = 6 // zabbix[queue]: checks late by 6 s or more
)

// Processes are the stages zabbix[process,<type>,avg,busy] knows, in the
// order docs list them.
var Processes = []string{"poller", "trapper", "pipeline shard", "housekeeper"}

// Figures are the server's own figures, read through functions the
// server wires (this package imports no stage). Each must be cheap and
// safe from any goroutine; a nil function makes its keys not supported.
type Figures struct {
	// ValuesWritten returns the values stored since the start, per
	// value type (index: history.ValueType).
	ValuesWritten func() [history.Text + 1]uint64
	// NotSupportedTotal returns how many times an item was set not
	// supported since the start.
	NotSupportedTotal func() uint64
	// QueueRange returns the polled checks late by at least from and less
	// than to seconds (to <= 0: no bound): poll.Scheduler.QueueRange.
	QueueRange func(from, to int64) int
	// Snapshot returns the current catalog snapshot.
	Snapshot func() *catalog.Snapshot
	// CountNotSupported returns how many of the items keep accepts are
	// not supported now: itemstate.Registry.CountNotSupported.
	CountNotSupported func(keep func(item uint64) bool) int
	// Busy returns the busy meter of a process type (one of Processes);
	// false if there is none.
	Busy func(process string) (*selfmon.Busy, bool)
	// ProxyLastAccess returns proxy id's lastaccess (Unix seconds, 0:
	// never): zabbix[proxy,<name>,lastaccess|delay].
	ProxyLastAccess func(id uint64) int64
	// ClusterNodes returns zabbix[cluster,discovery,nodes]'s JSON (the
	// HA registry, ha.NodesJSON), or an error; nil: a standalone
	// server, whose value is "[]" (recorded from 6.0.14).
	ClusterNodes func() ([]byte, error)
	// Started is when the server started (zabbix[uptime], boottime).
	Started time.Time
	// Version is the server version (zabbix[version]).
	Version string
}

// Options configures a Checker.
type Options struct {
	Figures
	// Now is the clock (tests); default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Checker answers internal items (poll.Checker).
type Checker struct {
	opts Options
	// throttle keeps a wrong internal item (a configuration mistake
	// that fails every interval) to one log line a minute.
	throttle *selfmon.LogThrottle
	mu       sync.Mutex
	// busyLast is, per item, the busy time and clock of its previous
	// check: zabbix[process,...] covers the time since then. Only
	// process items have an entry (a handful); a deleted one keeps its
	// few bytes until the next start.
	busyLast map[uint64]busySample
}

type busySample struct {
	ns   int64
	wall time.Time
}

// New returns a Checker.
func New(opts Options) *Checker {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Checker{opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute), busyLast: map[uint64]busySample{}}
}

// Check answers the batch on a goroutine of its own: counting a large
// catalog's items takes milliseconds, which the scheduler's loop must
// not wait for.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	go func() {
		for i := range batch {
			done(c.Answer(&batch[i]))
		}
	}()
}

// Answer computes one check's result.
func (c *Checker) Answer(ch *poll.Check) *poll.Result {
	r := &poll.Result{Check: *ch, Clock: c.opts.Now()}
	v, msg := c.value(ch.ItemID, ch.Key, r.Clock)
	if msg != "" {
		// Counted by the scheduler (peregrine_poll_checks_total{result=
		// "not_supported"}) and shown as the item's error; logged here
		// once a minute with the others' count.
		r.Status, r.Error = poll.NotSupported, msg
		if n, ok := c.throttle.Allow("not_supported"); ok {
			c.opts.Logger.Warn("internal item not supported", "itemid", ch.ItemID, "key", ch.Key, "err", msg, "others_suppressed", n)
		}
		return r
	}
	r.Status, r.Value = poll.OK, []byte(v)
	return r
}

// value answers key for item at now: the value, or Zabbix's message why
// not.
func (c *Checker) value(item uint64, key string, now time.Time) (string, string) {
	k, err := itemkey.Parse(key)
	if err != nil || k.Name != "zabbix" {
		return "", msgWrongKey
	}
	p := make([]string, len(k.Params))
	for i, q := range k.Params {
		if q.Array != nil {
			return "", "Invalid parameter #" + strconv.Itoa(i+1) + ": arrays are not accepted."
		}
		p[i] = q.Value
	}
	if len(p) == 0 {
		return "", msgParamCount
	}
	f := &c.opts.Figures
	switch p[0] {
	case "items", "items_unsupported", "hosts", "requiredperformance", "uptime", "boottime", "version":
		if len(p) != 1 {
			return "", msgParamCount
		}
	}
	switch p[0] {
	case "wcache":
		return c.wcache(p)
	case "queue":
		return c.queue(p)
	case "process":
		return c.process(item, p, now)
	case "items":
		if f.Snapshot == nil {
			return "", msgUnsupported
		}
		n := 0
		// Discovery rules are not counted (recorded from 6.0.14: its
		// zabbix[items] counts flags 0 and 4).
		eachPolledItem(f.Snapshot(), func(it *catalog.Item) {
			if it.Ext().LLD == nil {
				n++
			}
		})
		return strconv.Itoa(n), ""
	case "items_unsupported":
		if f.Snapshot == nil || f.CountNotSupported == nil {
			return "", msgUnsupported
		}
		snap := f.Snapshot()
		n := f.CountNotSupported(func(id uint64) bool {
			it := snap.Item(id)
			return it != nil && it.Enabled && it.Host != nil && it.Host.Enabled
		})
		return strconv.Itoa(n), ""
	case "hosts":
		if f.Snapshot == nil {
			return "", msgUnsupported
		}
		n := 0
		for _, h := range f.Snapshot().Hosts() {
			if h.Enabled {
				n++
			}
		}
		return strconv.Itoa(n), ""
	case "requiredperformance":
		if f.Snapshot == nil {
			return "", msgUnsupported
		}
		return formatFloat(RequiredPerformance(f.Snapshot())), ""
	case "uptime":
		return strconv.FormatInt(int64(now.Sub(f.Started)/time.Second), 10), ""
	case "boottime":
		return strconv.FormatInt(f.Started.Unix(), 10), ""
	case "version":
		return f.Version, ""
	case "proxy":
		return c.proxy(p, now)
	case "cluster":
		return c.cluster(p)
	case "proxy_history":
		// A proxy's own item; a server answers so (recorded from 6.0.14).
		return "", "Invalid first parameter."
	}
	return "", msgUnsupported
}

// eachPolledItem calls fn with every enabled item on a monitored host:
// what Zabbix counts in zabbix[items] (supported or not).
func eachPolledItem(snap *catalog.Snapshot, fn func(*catalog.Item)) {
	for _, h := range snap.Hosts() {
		if !h.Enabled {
			continue
		}
		for _, it := range h.Items() {
			if it.Enabled {
				fn(it)
			}
		}
	}
}

// RequiredPerformance is the new values per second the catalog expects,
// as Zabbix computes it: over enabled items on monitored hosts that have
// an update interval (not trappers: their delay is 0), the sum of one
// over the main interval in seconds. Flexible and scheduling intervals
// are left out, as Zabbix leaves them out.
func RequiredPerformance(snap *catalog.Snapshot) float64 {
	var nvps float64
	eachPolledItem(snap, func(it *catalog.Item) {
		if it.Type == catalog.Trapper {
			return
		}
		iv, err := delay.Parse(it.Delay)
		if err != nil || iv.Main <= 0 {
			return
		}
		nvps += 1 / float64(iv.Main)
	})
	return nvps
}

// wcache answers zabbix[wcache,values,<mode>]: totals since the start
// (counters: Zabbix's templates store them with "change per second").
// Peregrine has no history, trend or index cache, so only the values
// "cache" exists.
func (c *Checker) wcache(p []string) (string, string) {
	if len(p) < 2 || len(p) > 3 {
		return "", msgParamCount
	}
	if p[1] != "values" {
		return "", msgSecondParam
	}
	mode := ""
	if len(p) == 3 {
		mode = p[2]
	}
	f := &c.opts.Figures
	if mode == "not supported" {
		if f.NotSupportedTotal == nil {
			return "", msgUnsupported
		}
		return strconv.FormatUint(f.NotSupportedTotal(), 10), ""
	}
	if f.ValuesWritten == nil {
		return "", msgUnsupported
	}
	v := f.ValuesWritten()
	var n uint64
	switch mode {
	case "", "all":
		for _, x := range v {
			n += x
		}
	case "float":
		n = v[history.Float]
	case "uint":
		n = v[history.Uint]
	case "str":
		n = v[history.Str]
	case "log":
		n = v[history.Log]
	case "text":
		n = v[history.Text]
	default:
		return "", msgThirdParam
	}
	return strconv.FormatUint(n, 10), ""
}

// queue answers zabbix[queue,<from>,<to>]: polled checks late by at
// least from (default 6 s) and less than to (default: no bound), time
// suffixes allowed.
func (c *Checker) queue(p []string) (string, string) {
	if len(p) > 3 {
		return "", msgParamCount
	}
	if c.opts.QueueRange == nil {
		return "", msgUnsupported
	}
	from, to := int64(queueDefaultFrom), int64(0)
	if len(p) > 1 && p[1] != "" {
		s, err := delay.ParseSeconds(p[1])
		if err != nil {
			return "", msgSecondParam
		}
		from = s
	}
	if len(p) > 2 && p[2] != "" {
		s, err := delay.ParseSeconds(p[2])
		if err != nil || s <= from {
			return "", msgThirdParam
		}
		to = s
	}
	return strconv.Itoa(c.opts.QueueRange(from, to)), ""
}

// process answers zabbix[process,<type>,avg,busy|idle]: the percentage
// of wall time the stage's goroutines were working since this item's
// previous check (since the start for its first), averaged over the
// stage's goroutines. Only "avg" exists: the goroutines of a stage are
// not numbered as Zabbix's processes are.
func (c *Checker) process(item uint64, p []string, now time.Time) (string, string) {
	if len(p) < 2 || len(p) > 4 {
		return "", msgParamCount
	}
	if c.opts.Busy == nil {
		return "", msgUnsupported
	}
	b, ok := c.opts.Busy(p[1])
	if !ok {
		return "", msgSecondParam
	}
	if len(p) > 2 && p[2] != "" && p[2] != "avg" {
		return "", msgThirdParam
	}
	state := "busy"
	if len(p) > 3 && p[3] != "" {
		state = p[3]
	}
	if state != "busy" && state != "idle" {
		return "", msgFourthParam
	}
	ns := b.Nanos()
	c.mu.Lock()
	last, seen := c.busyLast[item]
	c.busyLast[item] = busySample{ns: ns, wall: now}
	c.mu.Unlock()
	if !seen {
		last = busySample{wall: c.opts.Started}
	}
	pct := 0.0
	if wall := now.Sub(last.wall); wall > 0 {
		pct = 100 * float64(ns-last.ns) / (float64(wall) * float64(b.Goroutines))
	}
	pct = min(max(pct, 0), 100)
	if state == "idle" {
		pct = 100 - pct
	}
	return formatFloat(pct), ""
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// proxy answers zabbix[proxy,<name>,lastaccess|delay] in 6.0's words
// (recorded from 6.0.14): lastaccess is the proxy's last contact, delay
// the seconds since (a proxy never seen: since 1970, as 6.0 answers).
// cluster answers zabbix[cluster,discovery,nodes], with 6.0.14's
// messages for other forms (recorded).
func (c *Checker) cluster(p []string) (string, string) {
	if len(p) != 3 {
		return "", msgParamCount
	}
	if p[1] != "discovery" {
		return "", msgSecondParam
	}
	if p[2] != "nodes" {
		return "", msgThirdParam
	}
	if c.opts.ClusterNodes == nil {
		return "[]", ""
	}
	b, err := c.opts.ClusterNodes()
	if err != nil {
		return "", "Cannot obtain cluster nodes: " + err.Error()
	}
	return string(b), ""
}

func (c *Checker) proxy(p []string, now time.Time) (string, string) {
	f := &c.opts.Figures
	if len(p) != 3 {
		return "", msgParamCount
	}
	if f.Snapshot == nil || f.ProxyLastAccess == nil {
		return "", msgUnsupported
	}
	px := f.Snapshot().ProxyByName(p[1])
	if px == nil {
		return "", "Proxy \"" + p[1] + "\" does not exist."
	}
	last := f.ProxyLastAccess(px.ID)
	switch p[2] {
	case "lastaccess":
		return strconv.FormatInt(last, 10), ""
	case "delay":
		return strconv.FormatInt(max(0, now.Unix()-last), 10), ""
	}
	return "", "Invalid third parameter."
}
