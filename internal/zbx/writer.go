package zbx

import (
	"compress/zlib"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// AppendFrame appends payload, framed, to dst and returns the extended
// buffer. FlagProtocol is always set and unknown bits are dropped. With
// FlagCompressed the payload is zlib-compressed and Reserved holds its
// uncompressed size (see compressor for the level); otherwise
// Reserved is 0, as the C programs write it. FlagLarge is added when a
// size needs it (>= 2^32-1) and kept if the caller set it.
func AppendFrame(dst, payload []byte, flags byte) []byte {
	flags = flags&(FlagCompressed|FlagLarge) | FlagProtocol
	if flags&FlagCompressed == 0 {
		h := plainHeader(flags, len(payload))
		start := len(dst)
		dst = append(dst, make([]byte, h.Len())...)
		putHeader(dst[start:], h)
		return append(dst, payload...)
	}

	// Compress first, behind a normal-sized placeholder header, then
	// widen the header in the (≥ 4 GiB) case where the sizes need it.
	start := len(dst)
	dst = append(dst, make([]byte, HeaderLen)...)
	dst = compress(dst, payload)
	h := Header{Flags: flags, DataLen: uint64(len(dst) - start - HeaderLen), Reserved: uint64(len(payload))}
	if h.DataLen >= largeThreshold || h.Reserved >= largeThreshold {
		h.Flags |= FlagLarge
	}
	if h.Flags&FlagLarge != 0 {
		const extra = LargeHeaderLen - HeaderLen
		dst = append(dst, make([]byte, extra)...)
		copy(dst[start+LargeHeaderLen:], dst[start+HeaderLen:len(dst)-extra])
	}
	putHeader(dst[start:], h)
	return dst
}

// plainHeader is the header of an uncompressed frame of n bytes.
func plainHeader(flags byte, n int) Header {
	h := Header{Flags: flags&FlagLarge | FlagProtocol, DataLen: uint64(n)}
	if h.DataLen >= largeThreshold {
		h.Flags |= FlagLarge
	}
	return h
}

// compressor is a pooled zlib writer that appends to a byte slice.
// zlib.NewWriter allocates hundreds of KiB of state, so AppendFrame
// reuses writers instead of creating one per frame.
//
// Level: BestSpeed. The Zabbix programs use the default level (their
// streams start 78 9c; ours 78 01), but every 6.0/7.0 client inflates any
// zlib stream, and replies to agent 2 (which compresses every request, so
// gets compressed replies) are small: there the cost is dominated by
// resetting the compressor, about 4x cheaper at BestSpeed (14 µs against
// 62 µs for a 90-byte reply) for a byte or two of output.
type compressor struct {
	zw  *zlib.Writer
	buf []byte
}

func (c *compressor) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	return len(p), nil
}

var compressors = sync.Pool{New: func() any {
	c := &compressor{}
	c.zw, _ = zlib.NewWriterLevel(c, zlib.BestSpeed) // level is valid: no error
	return c
}}

func compress(dst, payload []byte) []byte {
	c := compressors.Get().(*compressor)
	c.buf = dst
	c.zw.Reset(c)
	_, err := c.zw.Write(payload)
	if err == nil {
		err = c.zw.Close()
	}
	if err != nil {
		// compressor.Write never fails, so neither can zlib.
		panic("BUG: zlib compression into memory failed: " + err.Error())
	}
	dst = c.buf
	c.buf = nil
	compressors.Put(c)
	return dst
}

type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

// maxPooledFrame bounds the frame buffers WriteFrame keeps for reuse.
const maxPooledFrame = 1 << 20

var frameBufs = sync.Pool{New: func() any { return new([]byte) }}

// WriteFrame writes payload as one frame (see AppendFrame for flags). If
// timeout is positive and w has SetWriteDeadline, the deadline is set to
// now+timeout first. Errors wrap the writer's error; a missed deadline
// satisfies os.IsTimeout.
func WriteFrame(w io.Writer, payload []byte, flags byte, timeout time.Duration) error {
	if timeout > 0 {
		if d, ok := w.(writeDeadliner); ok {
			if err := d.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
				return &ioError{msg: "cannot set write deadline", err: err}
			}
		}
	}
	if flags&FlagCompressed == 0 && len(payload) > maxPooledFrame {
		// Do not copy a big payload just to put a header in front of it;
		// net.Buffers uses writev on TCP connections.
		hd := plainHeader(flags, len(payload))
		h := make([]byte, hd.Len())
		putHeader(h, hd)
		bufs := net.Buffers{h, payload}
		if _, err := bufs.WriteTo(w); err != nil {
			return &ioError{msg: fmt.Sprintf("cannot write %d-byte frame", len(h)+len(payload)), err: err}
		}
		return nil
	}
	bp := frameBufs.Get().(*[]byte)
	b := AppendFrame((*bp)[:0], payload, flags)
	_, err := w.Write(b)
	if cap(b) <= maxPooledFrame {
		*bp = b[:0]
		frameBufs.Put(bp)
	}
	if err != nil {
		return &ioError{msg: fmt.Sprintf("cannot write %d-byte frame", len(b)), err: err}
	}
	return nil
}
