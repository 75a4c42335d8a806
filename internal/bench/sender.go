package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
// values carrying clock StartClock + round×ClockStep and nanoseconds NS,
// so every (item, clock, ns) is sent once. Rounds stop at Rounds, at
// TotalValues (the last round partial), at Duration, or when ctx ends,
// whichever comes first.
type SendPlan struct {
	Items        ItemSet
	PacketValues int   // values per frame (default 1000; zabbix_sender sends 250)
	StartClock   int64 // clock of round 0
	ClockStep    int64 // clock increment per round (default 1)
	NS           int   // nanoseconds of every value, 0..999999999
	Rounds       int64
	TotalValues  int64
	Duration     time.Duration
	// ValueClockStep, if > 0, adds k×ValueClockStep to the clock of the
	// k-th value of a frame: many values of one item in one frame (a
	// history fill) then get distinct clocks.
	ValueClockStep int64
	// Interval paces rounds: round r is not sent before start + r×Interval.
	Interval time.Duration
	// Rate, if > 0, paces offered values per second over all connections.
	Rate float64
}

// Sender is a compliant Zabbix sender: one "sender data" frame, one reply,
// whose "processed: N; failed: M; total: T" it checks. Frames are encoded
// once per plan; per round only the fixed-width clock digits change.
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
}

// SendProgress is read by the progress line while a send runs.
type SendProgress struct {
	Sent, Processed, Failed, Errors atomic.Int64
}

// template is one pre-encoded frame payload: the clock fields' offsets and
// the end offset of each value object (to cut a partial last frame).
type template struct {
	payload []byte
	clocks  []int
	ends    []int
}

func encodeTemplates(items ItemSet, per, ns int) []template {
	var out []template
	var cur *template
	nsStr := strconv.Itoa(ns)
	for hi, h := range items.Hosts {
		hq := strconv.Quote(h)
		for i, k := range items.Keys {
			if cur == nil {
				out = append(out, template{payload: []byte(`{"request":"sender data","data":[`)})
				cur = &out[len(out)-1]
			}
			if len(cur.ends) > 0 {
				cur.payload = append(cur.payload, ',')
			}
			cur.payload = append(cur.payload, `{"host":`...)
			cur.payload = append(cur.payload, hq...)
			cur.payload = append(cur.payload, `,"key":`...)
			cur.payload = strconv.AppendQuote(cur.payload, k)
			cur.payload = append(cur.payload, `,"value":"`...)
			// A slowly varying gauge, different per item.
			cur.payload = strconv.AppendFloat(cur.payload, 20+float64((hi*31+i*7)%1000)/100, 'f', 2, 64)
			cur.payload = append(cur.payload, `","clock":`...)
			cur.clocks = append(cur.clocks, len(cur.payload))
			cur.payload = append(cur.payload, "0000000000"...)
			cur.payload = append(cur.payload, `,"ns":`...)
			cur.payload = append(cur.payload, nsStr...)
			cur.payload = append(cur.payload, '}')
			cur.ends = append(cur.ends, len(cur.payload))
			if len(cur.ends) == per {
				cur.payload = append(cur.payload, "]}"...)
				cur = nil
			}
		}
	}
	if cur != nil {
		cur.payload = append(cur.payload, "]}"...)
	}
	return out
}

// fill copies t into dst with clock patched and at most n values.
func (t *template) fill(dst []byte, clock, step int64, n int) ([]byte, int) {
	if n >= len(t.ends) {
		n = len(t.ends)
		dst = append(dst[:0], t.payload...)
	} else {
		dst = append(dst[:0], t.payload[:t.ends[n-1]]...)
		dst = append(dst, "]}"...)
	}
	for k, off := range t.clocks[:n] {
		c := clock + int64(k)*step
		for i := 9; i >= 0; i-- {
			dst[off+i] = byte('0' + c%10)
			c /= 10
		}
	}
	return dst, n
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
	tpls := encodeTemplates(plan.Items, plan.PacketValues, plan.NS)
	perRound := int64(plan.Items.Len())
	// Units: round r, frame f ↦ r*len(tpls)+f. totalUnits bounds it when a
	// round count or value total is set.
	totalUnits := int64(-1)
	lastUnitValues := 0 // values in the final unit when TotalValues cuts a frame
	if plan.Rounds > 0 {
		totalUnits = plan.Rounds * int64(len(tpls))
	}
	if plan.TotalValues > 0 {
		full := plan.TotalValues / perRound
		rest := plan.TotalValues % perRound
		units := full * int64(len(tpls))
		for f := 0; rest > 0; f++ {
			n := int64(len(tpls[f].ends))
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
	var next atomic.Int64
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
				u := next.Add(1) - 1
				if totalUnits >= 0 && u >= totalUnits || ctx.Err() != nil {
					return
				}
				round, f := u/int64(len(tpls)), int(u%int64(len(tpls)))
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
				n := len(tpls[f].ends)
				if u == totalUnits-1 && lastUnitValues > 0 {
					n = lastUnitValues
				}
				if limiter != nil {
					limiter.wait(n)
				}
				buf, n = tpls[f].fill(buf, plan.StartClock+round*plan.ClockStep, plan.ValueClockStep, n)
				pr, fl, retried, err := cn.exchange(buf, n)
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
