package snmp

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Options configures a Checker.
type Options struct {
	// Snapshot returns the current catalog snapshot, where the checker
	// reads items' snmp_oid and interfaces' SNMP details (the scheduler's
	// checks carry neither). Required.
	Snapshot func() *catalog.Snapshot
	// MaxOIDsPerRequest bounds the OIDs of one GET: a device's due plain
	// gets go out in requests of at most this many (one per request when
	// the interface's bulk is 0). Default 64; Zabbix's own bound is 128.
	MaxOIDsPerRequest int
	// MaxRepetitions is GetBulk's max-repetitions in walks (dynamic
	// indexes and discovery[]). Default 10, as Zabbix.
	MaxRepetitions int
	// MaxWalkValues bounds the values of one walk; a longer table makes
	// the item not supported. Default 10000.
	MaxWalkValues int
	// MaxValueSize bounds one value (a discovery's JSON, a long string).
	// Default 1 MiB.
	MaxValueSize int
	// IdleClose is how long a device's session (UDP socket, 64 KiB
	// receive buffer, SNMPv3 engine state) stays open after its last
	// check. Default 30s.
	IdleClose time.Duration
	Metrics   *selfmon.Registry
	Logger    *slog.Logger
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{MaxOIDsPerRequest: 64, MaxRepetitions: 10, MaxWalkValues: 10000, MaxValueSize: 1 << 20, IdleClose: 30 * time.Second}
}

// Reasons a check did not bring a value, as the "reason" label.
type reason int

const (
	reasonTimeout   reason = iota // no response within the timeout
	reasonRefused                 // ICMP port unreachable: no agent there
	reasonLocal                   // out of descriptors or ports here
	reasonNoSuch                  // noSuchObject/noSuchInstance/endOfMibView, v1 noSuchName
	reasonSNMPError               // another error-status in the response
	reasonAuth                    // SNMPv3 report: unknown user, wrong digest, decryption
	reasonMalformed               // a response that does not decode or does not match the request
	reasonConfig                  // bad snmp_oid or interface details, unknown index
	reasonTooLarge                // a walk or a value beyond its bound
	reasonStopping                // abandoned: the server is stopping
	numReasons
)

var reasonNames = [numReasons]string{"timeout", "refused", "local_error", "no_such", "snmp_error", "auth", "malformed", "config", "too_large", "stopping"}

// PDU kinds sent, as the "pdu" label.
const (
	pduGet = iota
	pduGetNext
	pduGetBulk
	numPDUs
)

var pduNames = [numPDUs]string{"get", "getnext", "getbulk"}

// Checker is the SNMP agent checker (item type 20).
type Checker struct {
	opts     Options
	throttle *selfmon.LogThrottle

	mu      sync.Mutex
	devices map[uint64]*device // by interface ID; a device exists while its worker runs

	inFlight *selfmon.Gauge
	sessions *selfmon.Gauge
	results  [poll.NumStatus]*selfmon.Counter
	failures [numReasons]*selfmon.Counter
	requests [numPDUs]*selfmon.Counter
	values   *selfmon.Counter
}

// New returns a Checker.
func New(opts Options) *Checker {
	d := DefaultOptions()
	if opts.MaxOIDsPerRequest <= 0 {
		opts.MaxOIDsPerRequest = d.MaxOIDsPerRequest
	}
	if opts.MaxRepetitions <= 0 {
		opts.MaxRepetitions = d.MaxRepetitions
	}
	if opts.MaxWalkValues <= 0 {
		opts.MaxWalkValues = d.MaxWalkValues
	}
	if opts.MaxValueSize <= 0 {
		opts.MaxValueSize = d.MaxValueSize
	}
	if opts.IdleClose <= 0 {
		opts.IdleClose = d.IdleClose
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	if opts.Snapshot == nil {
		panic("BUG: snmp.Options.Snapshot is required")
	}
	c := &Checker{opts: opts, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute), devices: map[uint64]*device{}}
	m := opts.Metrics
	c.inFlight = m.Gauge("peregrine_poll_snmp_in_flight", "SNMP checks handed to the checker and not yet done.")
	c.sessions = m.Gauge("peregrine_poll_snmp_sessions", "SNMP devices (interfaces) with a session open: one request at a time each.")
	for s := range c.results {
		c.results[s] = m.Counter("peregrine_poll_snmp_checks_total", "SNMP checks done, by result.", "result", poll.Status(s).String())
	}
	for r := range c.failures {
		c.failures[r] = m.Counter("peregrine_poll_snmp_errors_total", "SNMP checks that did not bring a value, by reason.", "reason", reasonNames[r])
	}
	for p := range c.requests {
		c.requests[p] = m.Counter("peregrine_poll_snmp_requests_total", "SNMP requests sent, by PDU type.", "pdu", pduNames[p])
	}
	c.values = m.Counter("peregrine_poll_snmp_values_total", "Variable bindings received in SNMP responses.")
	return c
}

// pending is one check waiting for its device's worker.
type pending struct {
	ch   *poll.Check
	done func(*poll.Result)
	// inner: a request made for a check in progress (a dynamic index's
	// GET): done gets the result without it counting as a check.
	inner bool
}

// Check queues each check on its device (interface) and returns at once.
// A device with work has one worker goroutine, which sends one request
// at a time (Zabbix's per-host hybrid mode: many devices in parallel,
// none flooded); the checks that arrive while it waits for a response
// go out together in the next request.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	c.inFlight.Add(int64(len(batch)))
	var start []*device
	c.mu.Lock()
	for i := range batch {
		ch := &batch[i]
		d := c.devices[ch.InterfaceID]
		if d == nil {
			d = &device{c: c, id: ch.InterfaceID, wake: make(chan struct{}, 1)}
			c.devices[ch.InterfaceID] = d
			start = append(start, d)
		} else if len(d.queue) == 0 {
			select {
			case d.wake <- struct{}{}:
			default:
			}
		}
		d.queue = append(d.queue, pending{ch: ch, done: done})
	}
	c.mu.Unlock()
	for _, d := range start {
		go d.run(ctx)
	}
}

// finish reports one check's result.
func (c *Checker) finish(p pending, r *poll.Result) {
	if r.Clock.IsZero() {
		r.Clock = time.Now()
	}
	if p.inner {
		p.done(r)
		return
	}
	c.inFlight.Add(-1)
	c.results[r.Status].Inc()
	p.done(r)
}
