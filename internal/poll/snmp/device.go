package snmp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
	"github.com/peregrine-mon/peregrine/internal/zbx/snmpoid"
)

// device is one SNMP interface with checks to run. Its queue is guarded
// by Checker.mu; everything else belongs to its worker goroutine.
type device struct {
	c     *Checker
	id    uint64
	queue []pending
	wake  chan struct{} // 1-buffered: "the queue is no longer empty"

	// Worker state.
	addr    string
	details map[string]string // the session's, to notice a change
	g       *gosnmp.GoSNMP
	// unwatch stops the watch that closes g's socket when the worker's
	// ctx ends (see open).
	unwatch func() bool
	bulk    bool
	reqs    map[uint64]parsedOID // item → its parsed snmp_oid
	indexes map[string]string    // dynamic index snmp_oid → the index found
	spare   []pending
}

// parsedOID caches an item's parsed snmp_oid (parsing allocates).
type parsedOID struct {
	src string
	req snmpoid.Request
	err error
}

// run is the device's worker: it takes the whole queue, runs it, and
// again, until the queue stays empty for IdleClose (or ctx ends); then
// it closes the session and leaves.
func (d *device) run(ctx context.Context) {
	c := d.c
	idle := time.NewTimer(c.opts.IdleClose)
	defer idle.Stop()
	defer d.close()
	for {
		// Two buffers alternate: Check appends to queue while the
		// worker runs work; spare is never the array queue uses.
		c.mu.Lock()
		work := d.queue
		d.queue, d.spare = d.spare[:0], nil
		c.mu.Unlock()
		if len(work) > 0 {
			d.process(ctx, work)
			clear(work)
		}
		d.spare = work
		if len(work) > 0 {
			continue
		}
		idle.Reset(c.opts.IdleClose)
		select {
		case <-d.wake:
			continue
		case <-idle.C:
		case <-ctx.Done():
		}
		c.mu.Lock()
		if len(d.queue) > 0 && ctx.Err() == nil {
			c.mu.Unlock()
			continue
		}
		// Leave under the lock, so that Check either queued on this
		// device before (and it ran above) or makes a new one.
		delete(c.devices, d.id)
		left := d.queue
		d.queue = nil
		c.mu.Unlock()
		for _, p := range left { // ctx ended with checks queued
			c.finish(p, d.abandoned(p))
		}
		return
	}
}

func (d *device) abandoned(p pending) *poll.Result {
	d.c.failures[reasonStopping].Inc()
	return &poll.Result{Check: *p.ch, Status: poll.NetworkError, Error: "check abandoned: the server is stopping"}
}

func (d *device) close() {
	if d.g != nil {
		d.unwatch()
		d.g.Close() // after the watch closed it: an error, ignored
		d.g = nil
		d.c.sessions.Add(-1)
	}
}

// getItem is one plain get of a batch.
type getItem struct {
	p   pending
	oid string
}

// process runs one round of a device's checks: the plain gets batched
// into as few GETs as MaxOIDsPerRequest allows, then each dynamic index
// and discovery on its own.
func (d *device) process(ctx context.Context, work []pending) {
	c := d.c
	if ctx.Err() != nil {
		for _, p := range work {
			c.finish(p, d.abandoned(p))
		}
		return
	}
	snap := c.opts.Snapshot()
	var timeout time.Duration
	for _, p := range work {
		timeout = max(timeout, p.ch.Timeout)
	}
	if msg := d.open(ctx, snap, timeout); msg != "" {
		for _, p := range work {
			if ctx.Err() != nil {
				// The session's dial was cut by the stop, not refused
				// by the configuration.
				c.finish(p, d.abandoned(p))
				continue
			}
			c.finish(p, d.fail(p.ch, poll.NotSupported, reasonConfig, msg))
		}
		return
	}
	var gets []getItem
	var others []pending
	for _, p := range work {
		req, msg := d.request(snap, p.ch)
		switch {
		case msg != "":
			c.finish(p, d.fail(p.ch, poll.NotSupported, reasonConfig, msg))
		case req.Kind == snmpoid.Get:
			gets = append(gets, getItem{p, req.OID})
		default:
			others = append(others, p)
		}
	}
	per := c.opts.MaxOIDsPerRequest
	if !d.bulk {
		per = 1 // bulk 0: devices that mishandle several OIDs in one request
	}
	for len(gets) > 0 {
		n := min(per, len(gets))
		d.get(ctx, gets[:n], timeout)
		gets = gets[n:]
	}
	for _, p := range others {
		req, _ := d.request(snap, p.ch)
		var r *poll.Result
		if req.Kind == snmpoid.Discovery {
			r = d.discovery(ctx, p.ch, req, timeout)
		} else {
			r = d.dynamicIndex(ctx, p.ch, req, timeout)
		}
		c.finish(p, r)
	}
}

// request returns a check's parsed snmp_oid, or why it has none.
func (d *device) request(snap *catalog.Snapshot, ch *poll.Check) (snmpoid.Request, string) {
	it := snap.Item(ch.ItemID)
	if it == nil {
		return snmpoid.Request{}, "the item no longer exists"
	}
	if d.reqs == nil {
		d.reqs = map[uint64]parsedOID{}
	}
	po, ok := d.reqs[it.ID]
	if !ok || po.src != it.Ext().SNMPOID {
		po = parsedOID{src: it.Ext().SNMPOID}
		po.req, po.err = snmpoid.Parse(it.Ext().SNMPOID)
		d.reqs[it.ID] = po
	}
	if po.err != nil {
		return po.req, fmt.Sprintf("invalid snmp_oid: %v", po.err)
	}
	return po.req, ""
}

// open makes sure the device has a session matching its interface's
// current address and details, and returns "" or why it cannot.
func (d *device) open(ctx context.Context, snap *catalog.Snapshot, timeout time.Duration) string {
	f := snap.Interface(d.id)
	if f == nil {
		return fmt.Sprintf("the host interface %d no longer exists", d.id)
	}
	if f.Type != catalog.InterfaceSNMP {
		return fmt.Sprintf("interface %s is not an SNMP interface: point the item at the host's SNMP interface", f.Addr())
	}
	if det := expandDetails(f.Details, snap.UserMacros(f.HostID)); det != nil {
		// {$SNMP_COMMUNITY} and friends: the host's user macros.
		f2 := *f
		f2.Details = det
		f = &f2
	}
	addr := f.Addr()
	if d.g != nil && addr == d.addr && maps.Equal(d.details, f.Details) {
		d.g.Timeout = timeout
		return ""
	}
	d.close()
	g, err := sessionOf(f, addr)
	if err != nil {
		return err.Error()
	}
	g.Context = ctx
	g.Timeout = timeout
	g.MaxOids = d.c.opts.MaxOIDsPerRequest
	g.MaxRepetitions = uint32(d.c.opts.MaxRepetitions)
	if err := g.Connect(); err != nil {
		return fmt.Sprintf("cannot open an SNMP session to %s: %v", addr, err)
	}
	// gosnmp looks at Context only before it sends: a request already
	// out waits for its response or its whole timeout, and a stopping
	// server would wait that long for the device. Closing the socket
	// when ctx ends fails the pending read at once (polltest's
	// CancelInFlight). The watch holds this session's socket, never
	// d.g, which the worker alone may change.
	conn := g.Conn
	d.unwatch = context.AfterFunc(ctx, func() { conn.Close() })
	d.g, d.addr, d.details = g, addr, f.Details
	d.bulk = f.Details["bulk"] != "0"
	clear(d.indexes)
	d.c.sessions.Add(1)
	return ""
}

// expandDetails returns the interface details with user macros
// resolved, or nil when none holds one.
func expandDetails(det map[string]string, sc *usermacro.Scope) map[string]string {
	var out map[string]string
	for k, v := range det {
		if strings.Contains(v, "{$") {
			if out == nil {
				out = maps.Clone(det)
			}
			out[k] = sc.Expand(v)
		}
	}
	return out
}

// sessionOf builds the gosnmp session of an interface from its Zabbix
// 6.0 details. Secrets stay in the session: no error names them.
func sessionOf(f *catalog.Interface, addr string) (*gosnmp.GoSNMP, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bad interface address %q: %v", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad interface port %q", portStr)
	}
	det := f.Details
	g := &gosnmp.GoSNMP{Target: host, Port: uint16(port), Transport: "udp", Retries: 0}
	switch det["version"] {
	case "1":
		g.Version, g.Community = gosnmp.Version1, det["community"]
	case "2":
		g.Version, g.Community = gosnmp.Version2c, det["community"]
	case "3":
		g.Version = gosnmp.Version3
		g.SecurityModel = gosnmp.UserSecurityModel
		g.ContextName = det["contextname"]
		usm := &gosnmp.UsmSecurityParameters{UserName: det["securityname"]}
		switch det["securitylevel"] {
		case "", "0":
			g.MsgFlags = gosnmp.NoAuthNoPriv
		case "1":
			g.MsgFlags = gosnmp.AuthNoPriv
		case "2":
			g.MsgFlags = gosnmp.AuthPriv
		default:
			return nil, fmt.Errorf("bad SNMPv3 securitylevel %q", det["securitylevel"])
		}
		if g.MsgFlags != gosnmp.NoAuthNoPriv {
			auth := [...]gosnmp.SnmpV3AuthProtocol{gosnmp.MD5, gosnmp.SHA, gosnmp.SHA224, gosnmp.SHA256, gosnmp.SHA384, gosnmp.SHA512}
			n, err := strconv.Atoi(det["authprotocol"])
			if err != nil || n < 0 || n >= len(auth) {
				return nil, fmt.Errorf("bad SNMPv3 authprotocol %q", det["authprotocol"])
			}
			usm.AuthenticationProtocol, usm.AuthenticationPassphrase = auth[n], det["authpassphrase"]
			if len(usm.AuthenticationPassphrase) < 8 {
				return nil, errors.New("the SNMPv3 authpassphrase must have at least 8 characters (RFC 3414)")
			}
		}
		if g.MsgFlags == gosnmp.AuthPriv {
			priv := [...]gosnmp.SnmpV3PrivProtocol{gosnmp.DES, gosnmp.AES, gosnmp.AES192, gosnmp.AES256, gosnmp.AES192C, gosnmp.AES256C}
			n, err := strconv.Atoi(det["privprotocol"])
			if err != nil || n < 0 || n >= len(priv) {
				return nil, fmt.Errorf("bad SNMPv3 privprotocol %q", det["privprotocol"])
			}
			usm.PrivacyProtocol, usm.PrivacyPassphrase = priv[n], det["privpassphrase"]
			if len(usm.PrivacyPassphrase) < 8 {
				return nil, errors.New("the SNMPv3 privpassphrase must have at least 8 characters (RFC 3414)")
			}
		}
		g.SecurityParameters = usm
	default:
		return nil, fmt.Errorf("the SNMP interface %s has no valid version in its details: set 1, 2 or 3", addr)
	}
	return g, nil
}

// get sends one GET for items and reports each item's result. A tooBig
// response splits the request in halves; SNMPv1's noSuchName names one
// OID, which fails alone while the others are asked again.
func (d *device) get(ctx context.Context, items []getItem, timeout time.Duration) {
	c := d.c
	oids := make([]string, len(items))
	for i, it := range items {
		oids[i] = it.oid
	}
	c.requests[pduGet].Inc()
	pkt, err := d.g.Get(oids)
	now := time.Now()
	if err != nil {
		st, r, msg := d.failure(ctx, err, timeout)
		for _, it := range items {
			res := d.fail(it.p.ch, st, r, msg)
			res.Clock = now
			c.finish(it.p, res)
		}
		return
	}
	c.values.Add(uint64(len(pkt.Variables)))
	// A fresh buffer per response: the values cut from it belong to
	// the scheduler once reported.
	ans := answerGet(oids, pkt, c.opts.MaxValueSize, make([]byte, 0, 16*len(oids)))
	switch {
	case ans.split:
		h := len(items) / 2
		d.get(ctx, items[:h], timeout)
		d.get(ctx, items[h:], timeout)
		return
	case ans.drop >= 0:
		it := items[ans.drop]
		res := d.fail(it.p.ch, poll.NotSupported, reasonNoSuch, ans.outs[0].msg)
		res.Clock = now
		c.finish(it.p, res)
		if rest := append(items[:ans.drop:ans.drop], items[ans.drop+1:]...); len(rest) > 0 {
			d.get(ctx, rest, timeout)
		}
		return
	}
	for i, it := range items {
		o := &ans.outs[i]
		var res *poll.Result
		if o.status == poll.OK {
			res = &poll.Result{Check: *it.p.ch, Status: poll.OK, Value: o.value}
		} else {
			res = d.fail(it.p.ch, o.status, o.reason, o.msg)
		}
		res.Clock = now
		c.finish(it.p, res)
	}
}

// outcome is what a response says of one OID.
type outcome struct {
	status poll.Status
	reason reason
	value  []byte
	msg    string
}

// getAnswer is answerGet's verdict.
type getAnswer struct {
	outs  []outcome // one per OID; for drop, outs[0] is the dropped one's
	split bool      // tooBig with more than one OID: ask in halves
	drop  int       // SNMPv1 noSuchName at this index: fail it, ask the rest again; -1 if none
}

// answerGet maps the response to a GET of oids to one outcome per OID.
// It is pure (the fuzz target drives it with decoded packets): whatever
// the response, every OID gets exactly one outcome, and a value is at
// most maxValue bytes. Values are appended to buf and sliced from it.
func answerGet(oids []string, pkt *gosnmp.SnmpPacket, maxValue int, buf []byte) getAnswer {
	ans := getAnswer{drop: -1, outs: make([]outcome, len(oids))}
	all := func(o outcome) getAnswer {
		for i := range ans.outs {
			ans.outs[i] = o
		}
		return ans
	}
	switch pkt.Error {
	case gosnmp.NoError:
	case gosnmp.TooBig:
		if len(oids) > 1 {
			ans.split = true
			return ans
		}
		return all(outcome{status: poll.NotSupported, reason: reasonSNMPError, msg: "SNMP error: " + errorStatus(pkt.Error)})
	case gosnmp.NoSuchName:
		o := outcome{status: poll.NotSupported, reason: reasonNoSuch, msg: "SNMP error: " + errorStatus(pkt.Error)}
		if i := int(pkt.ErrorIndex) - 1; len(oids) > 1 && i >= 0 && i < len(oids) {
			ans.drop = i
			ans.outs = ans.outs[:1]
			ans.outs[0] = o
			return ans
		}
		return all(o)
	default:
		return all(outcome{status: poll.NotSupported, reason: reasonSNMPError, msg: "SNMP error: " + errorStatus(pkt.Error)})
	}
	if len(pkt.Variables) != len(oids) {
		return all(outcome{status: poll.NotSupported, reason: reasonMalformed,
			msg: fmt.Sprintf("invalid SNMP response: %d values for %d OIDs", len(pkt.Variables), len(oids))})
	}
	// Values are cut from one buffer: its growth would move earlier
	// values, so they are sliced only once it is complete.
	ends := make([]int, len(oids))
	for i := range oids {
		v := &pkt.Variables[i]
		start := len(buf)
		switch {
		case v.Name != oids[i]:
			ans.outs[i] = outcome{status: poll.NotSupported, reason: reasonMalformed,
				msg: fmt.Sprintf("invalid SNMP response: value %d is for OID %.128s, not %s", i+1, v.Name, oids[i])}
		default:
			var msg string
			var ok bool
			buf, msg, ok = render(buf, v)
			switch {
			case !ok:
				ans.outs[i] = outcome{status: poll.NotSupported, reason: reasonNoSuch, msg: msg}
				buf = buf[:start]
			case len(buf)-start > maxValue:
				ans.outs[i] = outcome{status: poll.NotSupported, reason: reasonTooLarge,
					msg: fmt.Sprintf("the value of %s is %d bytes, more than %d", oids[i], len(buf)-start, maxValue)}
				buf = buf[:start]
			default:
				ans.outs[i] = outcome{status: poll.OK}
			}
		}
		ends[i] = len(buf)
	}
	start := 0
	for i := range ans.outs {
		if ans.outs[i].status == poll.OK {
			// Full slice expression: the scheduler owns each value, and
			// an append to one must not write into the next.
			ans.outs[i].value = buf[start:ends[i]:ends[i]]
		}
		start = ends[i]
	}
	return ans
}

// failure classifies a request that brought no usable response.
func (d *device) failure(ctx context.Context, err error, timeout time.Duration) (poll.Status, reason, string) {
	switch {
	case ctx.Err() != nil:
		return poll.NetworkError, reasonStopping, "check abandoned: the server is stopping"
	case isLocal(err):
		return poll.LocalError, reasonLocal, fmt.Sprintf("cannot send to %s: %v (raise the open files limit or lower poll.max_in_flight)", d.addr, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return poll.NetworkError, reasonRefused, fmt.Sprintf("Cannot connect to \"%s\": connection refused (no SNMP agent on that port).", d.addr)
	case isTimeout(err):
		return poll.NetworkError, reasonTimeout, fmt.Sprintf("Timeout while connecting to \"%s\".", d.addr)
	case errors.Is(err, gosnmp.ErrUnknownUsername), errors.Is(err, gosnmp.ErrWrongDigest), errors.Is(err, gosnmp.ErrDecryption),
		errors.Is(err, gosnmp.ErrUnknownSecurityLevel), errors.Is(err, gosnmp.ErrUnknownSecurityModels):
		// The device answered: the interface is up, the settings are
		// wrong. Zabbix makes the items not supported too.
		return poll.NotSupported, reasonAuth, fmt.Sprintf("SNMP error: %v (check the interface's SNMPv3 settings)", err)
	case strings.Contains(err.Error(), "not authentic"):
		// A wrong passphrase or an unknown user: the agent's report
		// comes unauthenticated, and gosnmp, checking it with our keys,
		// cannot tell which of the two it says.
		return poll.NotSupported, reasonAuth, "SNMP error: authentication failure: the device's answer does not authenticate with this interface's SNMPv3 settings (check securityname, authprotocol and authpassphrase)"
	}
	return poll.NotSupported, reasonMalformed, fmt.Sprintf("invalid SNMP response from %s: %v", d.addr, err)
}

// fail builds a failed result, counts it and logs it (at most once a
// minute per reason). Messages never hold the community or passphrases.
func (d *device) fail(ch *poll.Check, st poll.Status, r reason, msg string) *poll.Result {
	c := d.c
	c.failures[r].Inc()
	if r != reasonNoSuch && r != reasonStopping {
		if n, ok := c.throttle.Allow(reasonNames[r]); ok {
			c.opts.Logger.Warn("SNMP check failed", "reason", reasonNames[r], "addr", d.addr, "itemid", ch.ItemID,
				"key", ch.Key, "err", msg, "suppressed", n)
		}
	}
	return &poll.Result{Check: *ch, Status: st, Error: msg, Clock: time.Now(), TimedOut: r == reasonTimeout}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) ||
		errors.Is(err, gosnmp.ErrMaxRetriesExceeded) && strings.Contains(err.Error(), "timeout")
}

func isLocal(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOBUFS) ||
		errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.EADDRNOTAVAIL)
}
