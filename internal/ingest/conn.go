package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// maxKeptReadBuffer is the largest frame buffer a connection keeps between
// frames; after a larger frame the reader is replaced so that one big
// request does not pin its memory for the connection's lifetime.
const maxKeptReadBuffer = 4 << 20

// connState is the per-connection scratch space, pooled across
// connections so that the steady state allocates little.
type connState struct {
	req     senderRequest
	samples []history.Sample
	out     []byte
	ticket  *pipeline.Ticket
}

var connStatePool = sync.Pool{New: func() any { return &connState{ticket: pipeline.NewTicket()} }}

func (s *Server) newReader(c net.Conn) *zbx.Reader {
	return zbx.NewReader(c, zbx.ReaderOptions{MaxSize: uint64(s.opts.MaxFrameSize), AllowLarge: true, SizeSetting: "trapper.max_frame_size"})
}

// serve handles one connection: frames one after another until the client
// closes, a frame is bad, or the client is idle too long. zabbix_sender
// sends one frame per connection; persistent clients may send many.
func (s *Server) serve(ctx context.Context, c net.Conn) {
	defer c.Close()
	cs := connStatePool.Get().(*connState)
	defer func() {
		clear(cs.samples)
		if cap(cs.samples) > 1<<16 {
			cs.samples = nil
		}
		if cap(cs.out) > 1<<16 {
			cs.out = nil
		}
		if cap(cs.req.scratch) > 1<<20 {
			cs.req = senderRequest{}
		}
		clear(cs.req.rows)
		connStatePool.Put(cs)
	}()
	rd := s.newReader(c)
	remote := c.RemoteAddr().String()
	for first := true; ; first = false {
		if ctx.Err() != nil {
			return
		}
		wait := s.opts.IdleTimeout
		if first {
			wait = s.opts.Timeout
		}
		c.SetReadDeadline(time.Now().Add(wait))
		h, err := rd.ReadHeader()
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
		deadline := time.Now().Add(s.opts.Timeout)
		c.SetReadDeadline(deadline)
		need := int64(h.DataLen)
		if h.Flags&zbx.FlagCompressed != 0 {
			need += int64(h.Reserved)
		}
		held, ok := s.budget.acquire(need, deadline)
		if !ok {
			s.refuse(badBusy, remote, errors.New("no room in trapper.max_buffered_bytes for this frame before the timeout"))
			return
		}
		payload, err := rd.ReadBody(h)
		if err != nil {
			s.budget.release(held)
			s.refuse(classifyReadErr(err), remote, err)
			return
		}
		s.m.requests.Inc()
		recv := s.opts.Now()
		reply, keep := s.handle(cs, payload, recv, remote)
		s.budget.release(held)
		if reply != nil {
			flags := zbx.FlagProtocol | h.Flags&zbx.FlagCompressed
			if err := zbx.WriteFrame(c, reply, flags, s.opts.Timeout); err != nil {
				s.refuse(classifyReadErr(err), remote, err)
				return
			}
		}
		if !keep {
			return
		}
		if need > maxKeptReadBuffer {
			rd = s.newReader(c)
		}
	}
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

func classifyReadErr(err error) badReason {
	switch {
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
		s.refuse(badJSON, remote, err)
		return failedReply("cannot parse request as JSON: " + err.Error()), false
	}
	switch string(req.request) {
	case "sender data":
		return s.senderData(cs, recv, remote), true
	case "active check heartbeat":
		return nil, false // the agent does not read a reply
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
