package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
	"unsafe"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/zbx"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// keepBytes is the most an idle connection keeps of each of its buffers
// (frame, inflated payload, rows, samples): enough for the frames agents
// and zabbix_sender send (250 values are about 14 KB of JSON) to reuse
// their buffers, and little enough that an idle persistent connection
// does not sit on budget a big frame once took.
const keepBytes = 64 << 10

// busyKeepBytes is the most a connection keeps of each buffer while its
// client sends frame after frame: a proxy or a loader sending thousands
// of values per frame then reuses its buffers instead of allocating them
// (and making garbage) for every frame. Once the next frame has not begun
// within keepIdle, the buffers are trimmed to keepBytes; and when a
// quarter of trapper.max_buffered_bytes is in use, busy connections keep
// no more than idle ones.
const (
	busyKeepBytes = 1 << 20
	keepIdle      = time.Second
)

// sampleBytes is what one element of connState.samples costs.
const sampleBytes = int(unsafe.Sizeof(history.Sample{}))

// connState is the per-connection scratch space. Everything in it that
// grows with a request is taken from the connection's lease (mem).
type connState struct {
	req     senderRequest
	samples []history.Sample
	out     []byte
	ticket  *pipeline.Ticket
	agent   agentScratch // "agent data" work, see agentdata.go
	// peer is what the connection is: unencrypted, or TLS with the
	// client's certificate; hosts' tls_accept is checked against it.
	peer zbxtls.Peer
	// mem accounts for rows, samples and string copies; nil (tests,
	// benchmarks) accounts for nothing.
	mem zbx.Memory
}

func newConnState(mem zbx.Memory) *connState {
	return &connState{req: senderRequest{mem: mem}, ticket: pipeline.NewTicket(), mem: mem}
}

// reserveSamples makes room for n samples, through mem.
func (cs *connState) reserveSamples(n int) error {
	if cap(cs.samples) >= n {
		return nil
	}
	if cs.mem != nil {
		if err := cs.mem.Alloc(n * sampleBytes); err != nil {
			return fmt.Errorf("cannot hold %d decoded values: %w", n, err)
		}
	}
	cs.dropSamples()
	cs.samples = make([]history.Sample, 0, n)
	return nil
}

func (cs *connState) dropSamples() {
	if cs.mem != nil && cap(cs.samples) > 0 {
		cs.mem.Free(cap(cs.samples) * sampleBytes)
	}
	cs.samples = nil
}

// trim drops the buffers larger than keep bytes; with keep < 0, all.
func (cs *connState) trim(keep int) {
	clear(cs.req.rows[:cap(cs.req.rows)]) // drop references into the payload
	if cap(cs.req.rows)*rowBytes > keep {
		cs.req.dropRows()
	}
	clear(cs.req.ext[:cap(cs.req.ext)])
	cs.req.top = agentTop{}
	if cap(cs.req.ext)*extBytes > keep {
		cs.req.dropExt()
	}
	if cap(cs.samples)*sampleBytes > keep {
		cs.dropSamples()
	}
	if cap(cs.out) > keep {
		cs.out = nil
	}
	cs.trimAgent(keep)
}

// serve handles one connection: frames one after another until the client
// closes, a frame is bad, or the client is idle too long. zabbix_sender
// sends one frame per connection; persistent clients may send many.
//
// Memory: the connection's lease takes from the budget what its Reader
// and its decoding allocate, as they allocate it; between frames the
// connection keeps at most busyKeepBytes per buffer, keepBytes once it
// has been idle for keepIdle, and it gives everything back when it
// closes.
func (s *Server) serve(ctx context.Context, c net.Conn) {
	defer c.Close()
	remote := c.RemoteAddr().String()
	c, peer, ok := s.accept(c, remote)
	if !ok {
		return
	}
	defer c.Close() // a TLS connection sends its close_notify
	l := &lease{b: s.budget}
	cs := newConnState(l)
	cs.peer = peer
	rd := zbx.NewReader(c, zbx.ReaderOptions{MaxSize: uint64(s.opts.MaxFrameSize), AllowLarge: true, SizeSetting: "trapper.max_frame_size", Memory: l})
	defer func() {
		rd.Release()
		cs.trim(-1)
		l.endFrame()
		if l.held != 0 {
			// An accounting slip must not shrink the budget for good
			// (nor take the server down): log it and give the bytes back.
			s.opts.Logger.Error("BUG: trapper connection closed holding budget bytes", "bytes", l.held, "remote", c.RemoteAddr().String())
			l.Free(int(l.held))
		}
	}()
	bigLeft := false // the last frame left a buffer over keepBytes
	for first := true; ; first = false {
		if ctx.Err() != nil {
			return
		}
		wait := s.opts.IdleTimeout
		if first {
			wait = s.opts.Timeout
		}
		c.SetReadDeadline(time.Now().Add(wait))
		h, err := readHeaderTrimming(rd, cs, bigLeft, s.opts.keepIdle)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return // clean close between frames
			}
			if !first && isTimeout(err) {
				return // idle persistent connection
			}
			s.refuse(classifyReadErr(err), remote, err)
			return
		}
		// One deadline covers the frame's body, and bounds how long its
		// buffers may wait for budget: a client that announces a frame
		// and stalls holds only what it sent, and only until then.
		payloadLen := h.DataLen
		if h.Compressed() {
			payloadLen = h.Reserved
		}
		l.startFrame(payloadLen, time.Now().Add(s.opts.Timeout))
		c.SetReadDeadline(l.deadline)
		payload, err := rd.ReadBody(h)
		if err != nil {
			s.refuse(classifyReadErr(err), remote, err)
			return
		}
		s.m.requests.Inc()
		recv := s.opts.Now()
		busyFrom := time.Now() // not opts.Now: tests fix that clock
		reply, keep := s.handle(cs, payload, recv, remote)
		if reply != nil {
			flags := zbx.FlagProtocol | h.Flags&zbx.FlagCompressed
			if err := zbx.WriteFrame(c, reply, flags, s.opts.Timeout); err != nil {
				s.refuse(classifyReadErr(err), remote, err)
				return
			}
		}
		s.m.busy.Since(busyFrom)
		if !keep {
			return
		}
		hold := busyKeepBytes
		if s.budget.inUse() > s.budget.max/4 {
			hold = keepBytes // room is getting short: frames in progress need it more
		}
		rd.Trim(hold)
		cs.trim(hold)
		l.endFrame()
		// Every buffer the trims weigh is counted in l.held but the
		// reply's: when neither is over keepBytes (or this trim already
		// kept no more), an idle trim would drop nothing and the next
		// read needs no timer.
		bigLeft = hold > keepBytes && (l.held > keepBytes || cap(cs.out) > keepBytes)
	}
}

// readHeaderTrimming reads the next frame's header; when the last frame
// left buffers over keepBytes (bigLeft), and no header has begun within
// idle, it trims them to keepBytes meanwhile. The trim runs on a timer's
// goroutine while this one is blocked in ReadHeader, which touches only
// the header bytes; waiting for the timer's function before returning
// orders the two.
func readHeaderTrimming(rd *zbx.Reader, cs *connState, bigLeft bool, idle time.Duration) (zbx.Header, error) {
	if !bigLeft {
		return rd.ReadHeader()
	}
	trimmed := make(chan struct{})
	t := time.AfterFunc(idle, func() {
		rd.Trim(keepBytes)
		cs.trim(keepBytes)
		close(trimmed)
	})
	h, err := rd.ReadHeader()
	if !t.Stop() {
		<-trimmed
	}
	return h, err
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

func classifyReadErr(err error) badReason {
	switch {
	case errors.Is(err, errBusy):
		return badBusy
	case errors.Is(err, errShare):
		return badShare
	case errors.Is(err, zbx.ErrBadMagic):
		return badHeader
	case errors.Is(err, zbx.ErrBadFlags):
		return badFlags
	case errors.Is(err, zbx.ErrTooLarge):
		return badTooLarge
	case errors.Is(err, zbx.ErrCompression):
		return badCompression
	case isTimeout(err):
		return badTimeout
	case errors.Is(err, zbx.ErrTruncated), errors.Is(err, io.ErrUnexpectedEOF):
		return badTruncated
	}
	return badIO
}

// refuse counts and (throttled) logs a request that gets no useful answer.
func (s *Server) refuse(r badReason, remote string, err error) {
	s.m.bad[r].Inc()
	if n, ok := s.throttle.Allow("bad:" + badReasonNames[r]); ok {
		s.opts.Logger.Warn("trapper request refused", "reason", badReasonNames[r], "remote", remote, "err", err, "suppressed", n)
	}
}

// handle answers one payload. It returns the reply (nil for none) and
// whether the connection may carry another frame.
func (s *Server) handle(cs *connState, payload []byte, recv time.Time, remote string) ([]byte, bool) {
	// The trapper ignores trailing spaces, CR and LF.
	for len(payload) > 0 && (payload[len(payload)-1] == ' ' || payload[len(payload)-1] == '\r' || payload[len(payload)-1] == '\n') {
		payload = payload[:len(payload)-1]
	}
	if len(payload) == 0 || payload[0] != '{' {
		// Pre-2.0 "host:key:value" text and XML are not supported.
		s.refuse(badFormat, remote, errors.New("payload is not a JSON object"))
		return failedReply("request is not a JSON object; legacy text and XML trapper formats are not supported"), false
	}
	req := &cs.req
	if err := parseSenderRequest(payload, req); err != nil {
		if r := classifyReadErr(err); r == badBusy || r == badShare {
			s.refuse(r, remote, err)
			return failedReply("cannot decode the request: " + err.Error()), false
		}
		s.refuse(badJSON, remote, err)
		return failedReply("cannot parse request as JSON: " + err.Error()), false
	}
	switch string(req.request) {
	case "sender data":
		return s.senderData(cs, recv, remote), true
	case "agent data":
		return s.agentData(cs, recv, remote), true
	case "active checks":
		return s.activeChecks(cs, recv, remote), true
	case "proxy config":
		return s.proxyConfig(cs, payload, recv, remote), false
	case "proxy data":
		return s.proxyData(cs, payload, recv, remote), true
	case "proxy heartbeat":
		return s.proxyHeartbeat(cs, payload, recv, remote), true
	case "active check heartbeat":
		s.heartbeat(cs, recv, remote)
		return nil, false // the agent does not read a reply
	case "queue.get":
		if s.opts.Queue != nil {
			return s.opts.Queue(payload), false
		}
	}
	s.refuse(badUnsupported, remote, errors.New("request "+truncateForLog(string(req.request))))
	return failedReply("unsupported request \"" + truncateForLog(string(req.request)) + "\""), false
}

func truncateForLog(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// failedReply encodes {"response":"failed","info":...}; error paths only.
func failedReply(info string) []byte {
	b, _ := json.Marshal(struct {
		Response string `json:"response"`
		Info     string `json:"info"`
	}{"failed", info})
	return b
}
