package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// ItemSet is every key on every host: the values a round sends.
type ItemSet struct {
	Hosts []string
	Keys  []string
}

// Len is the number of items.
func (s ItemSet) Len() int { return len(s.Hosts) * len(s.Keys) }

// SendPlan says what to send: rounds of one value per item, each round's
// values carrying clock StartClock + round×ClockStep, so every (item,
// clock) is sent once. Rounds stop at Rounds, at TotalValues (the last
// round partial), at Duration, or when ctx ends, whichever comes first.
type SendPlan struct {
	Items        ItemSet
	PacketValues int   // values per frame (default 1000; zabbix_sender sends 250)
	StartClock   int64 // clock of round 0
	ClockStep    int64 // clock increment per round (default 1)
	// NS offsets every value's nanoseconds (modulo 1e9; 0..999999999): a
	// random number per run keeps runs that reuse items and clocks from
	// repeating an (item, clock, ns). With ShapeConstant it is every
	// value's nanoseconds.
	NS int
	// Data is the values' shape and seed (values.go); the zero value is
	// the realistic shape, seed 0.
	Data Data
	// Position, if set, sends item i's value number Position(i, round)
	// in round, with clock StartClock + position×ClockStep: a bijection
	// of rounds per item sends each item's series in another time order
	// (backfill). Items are numbered host index × keys + key index of
	// Items. It must be safe to call under the send's frame lock.
	Position    func(item int, round int64) int64
	Rounds      int64
	TotalValues int64
	Duration    time.Duration
	// ValueClockStep, if > 0, adds k×ValueClockStep to the clock of the
	// k-th value of a frame: many values of one item in one frame (a
	// history fill) then get distinct clocks.
	ValueClockStep int64
	// Interval paces rounds: round r is not sent before start + r×Interval.
	Interval time.Duration
	// Rate, if > 0, paces offered values per second over all connections.
	Rate float64
	// Fixed, if set, is every value sent, whatever Data says: the storm
	// needs all items at 0, then all at 1, to flip their triggers.
	Fixed *float64
	// FixedText, if set, is every value sent, whatever Data and Fixed
	// say, already escaped for a JSON string: bench preprocess sends one
	// JSON document to its master items.
	FixedText string
}

// Sender is a compliant Zabbix sender: one "sender data" frame, one reply,
// whose "processed: N; failed: M; total: T" it checks. Host and key are
// encoded once per plan; each frame's values, clocks and nanoseconds are
// generated when the frame is built (values.go).
type Sender struct {
	Addr  string
	Conns int // concurrent connections (default 4)
	// Persistent: "yes" keeps a connection across frames (Peregrine allows
	// it), "no" opens one per frame as zabbix_sender does, "auto" (default)
	// keeps it until the server closes it after a reply, as Zabbix 6.0
	// does, and then switches that connection to one per frame.
	Persistent string
	Compress   bool
	Timeout    time.Duration // per frame (default 60 s)
}

// SendResult is what the replies said.
type SendResult struct {
	Sent      int64 // values in frames that got a valid reply
	Processed int64
	Failed    int64
	Frames    int64
	Errors    int64 // frames without a valid reply (their values are not in Sent)
	Reconnect int64 // frames retried because the server had closed a kept connection
	Elapsed   time.Duration
	FirstErr  error
	// ReplyP50 and ReplyP99 are the time from a frame's send to its
	// reply (for an acknowledged frame: the acknowledge latency), over
	// the first maxReplySamples frames answered.
	ReplyP50, ReplyP99 time.Duration
}

// maxReplySamples bounds the reply latencies a Send keeps.
const maxReplySamples = 1 << 20

// SendProgress is read by the progress line while a send runs.
type SendProgress struct {
	Sent, Processed, Failed, Errors atomic.Int64
}

// frameSet is a plan's frames: per frame, the value slots it carries, each
// slot the pre-encoded `{"host":…,"key":…,"value":"` of one item and the
// item's value sequence. A frame is built per unit: prefix, generated
// value, clock and nanoseconds per slot.
type frameSet struct {
	pre    []byte // every slot's prefix, concatenated
	slots  []slot // in item-set order
	starts []int  // frame f is slots[starts[f]:starts[f+1]]
	series []series
}

type slot struct {
	off, end int32   // prefix in pre
	item     int32   // index into series
	konst    float32 // ShapeConstant's value (20.00..29.99 by position)
}

// newFrameSet lays the item set out in frames of per values. An item named
// twice (the history-read fill sends one item 1000 times per frame) is one
// series: its values are one sequence in send order.
func newFrameSet(items ItemSet, per int, d Data) *frameSet {
	hostIdx, keyIdx := map[string]int{}, map[string]int{}
	var hosts, keys []string
	for _, h := range items.Hosts {
		if _, ok := hostIdx[h]; !ok {
			hostIdx[h] = len(hosts)
			hosts = append(hosts, h)
		}
	}
	for _, k := range items.Keys {
		if _, ok := keyIdx[k]; !ok {
			keyIdx[k] = len(keys)
			keys = append(keys, k)
		}
	}
	fs := &frameSet{slots: make([]slot, 0, items.Len()), series: make([]series, len(hosts)*len(keys))}
	made := make([]bool, len(fs.series))
	for hi, h := range items.Hosts {
		hq := strconv.Quote(h)
		for i, k := range items.Keys {
			if len(fs.slots)%per == 0 {
				fs.starts = append(fs.starts, len(fs.slots))
			}
			item := hostIdx[h]*len(keys) + keyIdx[k]
			konst := 20 + float64((hi*31+i*7)%1000)/100
			if !made[item] {
				fs.series[item] = newSeries(d, h, k, konst)
				made[item] = true
			}
			off := len(fs.pre)
			fs.pre = append(fs.pre, `{"host":`...)
			fs.pre = append(fs.pre, hq...)
			fs.pre = append(fs.pre, `,"key":`...)
			fs.pre = strconv.AppendQuote(fs.pre, k)
			fs.pre = append(fs.pre, `,"value":"`...)
			fs.slots = append(fs.slots, slot{off: int32(off), end: int32(len(fs.pre)), item: int32(item), konst: float32(konst)})
		}
	}
	fs.starts = append(fs.starts, len(fs.slots))
	return fs
}

func (fs *frameSet) frames() int { return len(fs.starts) - 1 }

func (fs *frameSet) frameLen(f int) int { return fs.starts[f+1] - fs.starts[f] }

// build writes frame f of round with its first n values into dst. It
// advances the items' value sequences: calls must come in unit order.
func (fs *frameSet) build(dst []byte, f int, n int, round int64, plan *SendPlan) []byte {
	dst = append(dst[:0], `{"request":"sender data","data":[`...)
	for k, sl := range fs.slots[fs.starts[f]:][:n] {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, fs.pre[sl.off:sl.end]...)
		s := &fs.series[sl.item]
		clock := plan.StartClock + round*plan.ClockStep + int64(k)*plan.ValueClockStep
		var v float64
		var ns int32
		if plan.Position != nil {
			p := plan.Position(int(sl.item), round)
			clock = plan.StartClock + p*plan.ClockStep
			v, ns = s.at(p)
		} else {
			v, ns = s.next()
		}
		if s.kind == KindConstant {
			v = float64(sl.konst)
		}
		if plan.FixedText != "" {
			dst = append(dst, plan.FixedText...)
		} else if plan.Fixed != nil {
			dst = strconv.AppendFloat(dst, *plan.Fixed, 'f', -1, 64)
		} else {
			dst = appendValue(dst, s.kind, v)
		}
		dst = append(dst, `","clock":`...)
		dst = strconv.AppendInt(dst, clock, 10)
		dst = append(dst, `,"ns":`...)
		dst = strconv.AppendInt(dst, (int64(ns)+int64(plan.NS))%1_000_000_000, 10)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// Send runs plan. The work is a sequence of (round, frame) units taken in
// order by the connections, so a partial total always means the earliest
// rounds were sent.
func (s *Sender) Send(ctx context.Context, plan SendPlan, prog *SendProgress) (SendResult, error) {
	if plan.Items.Len() == 0 {
		return SendResult{}, errors.New("send plan has no items")
	}
	if plan.NS < 0 || plan.NS > 999999999 {
		return SendResult{}, fmt.Errorf("send plan: ns %d out of range", plan.NS)
	}
	if _, err := ParseShape(string(plan.Data.shape())); err != nil {
		return SendResult{}, fmt.Errorf("send plan: %w", err)
	}
	if plan.PacketValues <= 0 {
		plan.PacketValues = 1000
	}
	if plan.ClockStep <= 0 {
		plan.ClockStep = 1
	}
	conns := s.Conns
	if conns <= 0 {
		conns = 4
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	if prog == nil {
		prog = &SendProgress{}
	}
	fs := newFrameSet(plan.Items, plan.PacketValues, plan.Data)
	nf := int64(fs.frames())
	perRound := int64(plan.Items.Len())
	// Units: round r, frame f ↦ r*nf+f. totalUnits bounds it when a
	// round count or value total is set.
	totalUnits := int64(-1)
	lastUnitValues := 0 // values in the final unit when TotalValues cuts a frame
	if plan.Rounds > 0 {
		totalUnits = plan.Rounds * nf
	}
	if plan.TotalValues > 0 {
		full := plan.TotalValues / perRound
		rest := plan.TotalValues % perRound
		units := full * nf
		for f := 0; rest > 0; f++ {
			n := int64(fs.frameLen(f))
			units++
			if rest < n {
				lastUnitValues = int(rest)
			}
			rest -= min(rest, n)
		}
		if totalUnits < 0 || units < totalUnits {
			totalUnits = units
		} else {
			lastUnitValues = 0
		}
	}
	var deadline time.Time
	if plan.Duration > 0 {
		deadline = time.Now().Add(plan.Duration)
	}
	var limiter *rateLimiter
	if plan.Rate > 0 {
		limiter = newRateLimiter(plan.Rate)
	}
	// Frames are built in unit order under one lock: each item's value
	// sequence advances in the order its values are sent, so the data of
	// a send depends on the seed and the plan, not on the connections.
	// Building costs ≈0.1 µs per value (BenchmarkBuildFrame in values_test.go),
	// well below what any server here takes per value.
	var unitMu sync.Mutex
	var nextUnit int64
	take := func(buf []byte) ([]byte, int64, int, bool) {
		unitMu.Lock()
		defer unitMu.Unlock()
		u := nextUnit
		if totalUnits >= 0 && u >= totalUnits || ctx.Err() != nil {
			return buf, 0, 0, false
		}
		nextUnit++
		round, f := u/nf, int(u%nf)
		n := fs.frameLen(f)
		if u == totalUnits-1 && lastUnitValues > 0 {
			n = lastUnitValues
		}
		return fs.build(buf, f, n, round, &plan), u, n, true
	}
	var res SendResult
	var mu sync.Mutex
	fail := func(err error) {
		prog.Errors.Add(1)
		mu.Lock()
		if res.FirstErr == nil {
			res.FirstErr = err
		}
		mu.Unlock()
	}
	var reconnects, frames atomic.Int64
	var lats []time.Duration
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cn := &senderConn{addr: s.Addr, timeout: timeout, compress: s.Compress, mode: s.Persistent}
			defer cn.close()
			var buf []byte
			for {
				var u int64
				var n int
				var ok bool
				buf, u, n, ok = take(buf)
				if !ok {
					return
				}
				round := u / nf
				if plan.Interval > 0 {
					due := start.Add(time.Duration(round) * plan.Interval)
					if !deadline.IsZero() && due.After(deadline) {
						return
					}
					if d := time.Until(due); d > 0 {
						select {
						case <-time.After(d):
						case <-ctx.Done():
							return
						}
					}
				}
				if !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				if limiter != nil {
					limiter.wait(n)
				}
				sent := time.Now()
				pr, fl, retried, err := cn.exchange(buf, n)
				lat := time.Since(sent)
				if retried {
					reconnects.Add(1)
				}
				if err != nil {
					fail(err)
					if cn.dialFailed {
						// A server that refuses connections would
						// otherwise turn this loop into a connect()
						// spin counting millions of errors.
						select {
						case <-time.After(dialBackoff):
						case <-ctx.Done():
							return
						}
					}
					continue
				}
				frames.Add(1)
				mu.Lock()
				if len(lats) < maxReplySamples {
					lats = append(lats, lat)
				}
				mu.Unlock()
				prog.Sent.Add(int64(n))
				prog.Processed.Add(pr)
				prog.Failed.Add(fl)
			}
		}()
	}
	wg.Wait()
	res.Sent, res.Processed, res.Failed = prog.Sent.Load(), prog.Processed.Load(), prog.Failed.Load()
	res.Errors, res.Frames, res.Reconnect = prog.Errors.Load(), frames.Load(), reconnects.Load()
	res.Elapsed = time.Since(start)
	if len(lats) > 0 {
		slices.Sort(lats)
		res.ReplyP50, res.ReplyP99 = lats[len(lats)/2], lats[min(len(lats)-1, len(lats)*99/100)]
	}
	return res, nil
}

// senderConn is one sender connection with the persistence policy.
type senderConn struct {
	addr     string
	timeout  time.Duration
	compress bool
	mode     string
	perFrame bool // "auto" switched to one connection per frame
	conn     net.Conn
	rd       *zbx.Reader
	used     bool // conn already carried a frame
	frame    []byte
	// dialFailed: the last exchange could not connect at all.
	dialFailed bool
}

// dialBackoff is the pause after a failed connect before the connection
// takes its next frame.
const dialBackoff = 10 * time.Millisecond

func (c *senderConn) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

func (c *senderConn) dial() error {
	conn, err := net.DialTimeout("tcp", c.addr, c.timeout)
	if err != nil {
		return fmt.Errorf("cannot connect to the trapper at %s: %w", c.addr, err)
	}
	c.conn, c.used = conn, false
	if c.rd == nil {
		c.rd = zbx.NewReader(conn, zbx.ReaderOptions{Timeout: c.timeout})
	} else {
		c.rd.Reset(conn)
	}
	return nil
}

// exchange sends one frame of n values and checks the reply. A kept
// connection that the server closed after its previous reply fails with
// EOF or a reset before any reply byte: the frame was not read, so it is
// sent again on a new connection.
func (c *senderConn) exchange(payload []byte, n int) (processed, failed int64, retried bool, err error) {
	flags := zbx.FlagProtocol
	if c.compress {
		flags |= zbx.FlagCompressed
	}
	c.frame = zbx.AppendFrame(c.frame[:0], payload, flags)
	c.dialFailed = false
	for attempt := 0; ; attempt++ {
		if c.conn == nil {
			if err := c.dial(); err != nil {
				c.dialFailed = true
				return 0, 0, retried, err
			}
		}
		reused := c.used
		c.used = true
		c.conn.SetWriteDeadline(time.Now().Add(c.timeout))
		_, err = c.conn.Write(c.frame)
		var reply []byte
		if err == nil {
			_, reply, err = c.rd.ReadFrame()
		}
		if err != nil {
			c.close()
			if reused && attempt == 0 && closedByPeer(err) && c.mode != "yes" {
				c.perFrame = true
				retried = true
				continue
			}
			return 0, 0, retried, err
		}
		if c.mode == "no" || c.perFrame {
			c.close()
		}
		processed, failed, err = parseReply(reply, n)
		return processed, failed, retried, err
	}
}

func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

var (
	successTok = []byte(`"response":"success"`)
	infoTok    = []byte(`processed: `)
)

// parseReply checks a trapper reply: "success" and an info string whose
// total equals the values sent.
func parseReply(reply []byte, n int) (processed, failed int64, err error) {
	if !bytes.Contains(reply, successTok) {
		return 0, 0, fmt.Errorf("trapper refused the frame: %.200q", reply)
	}
	i := bytes.Index(reply, infoTok)
	if i < 0 {
		return 0, 0, fmt.Errorf("reply without processed/failed/total: %.200q", reply)
	}
	var nums [3]int64
	rest := reply[i:]
	for k, label := range []string{"processed: ", "failed: ", "total: "} {
		j := bytes.Index(rest, []byte(label))
		if j < 0 {
			return 0, 0, fmt.Errorf("reply without %q: %.200q", label, reply)
		}
		rest = rest[j+len(label):]
		e := 0
		for e < len(rest) && rest[e] >= '0' && rest[e] <= '9' {
			e++
		}
		nums[k], err = strconv.ParseInt(string(rest[:e]), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("bad number in reply %.200q", reply)
		}
	}
	if nums[2] != int64(n) {
		return nums[0], nums[1], fmt.Errorf("reply counts total %d, the frame had %d values", nums[2], n)
	}
	return nums[0], nums[1], nil
}

// rateLimiter paces offered values to a rate shared by all connections:
// the n-th value is not offered before start + n/rate.
type rateLimiter struct {
	mu    sync.Mutex
	rate  float64
	start time.Time
	sent  float64
}

func newRateLimiter(rate float64) *rateLimiter { return &rateLimiter{rate: rate, start: time.Now()} }

func (r *rateLimiter) wait(n int) {
	r.mu.Lock()
	r.sent += float64(n)
	due := r.start.Add(time.Duration(r.sent / r.rate * float64(time.Second)))
	r.mu.Unlock()
	if d := time.Until(due); d > 0 {
		time.Sleep(d)
	}
}
