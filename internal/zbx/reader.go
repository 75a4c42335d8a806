package zbx

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"
)

// ReaderOptions configures a Reader. The zero value is usable: 1 GiB
// limit, no large frames, no deadlines.
type ReaderOptions struct {
	// MaxSize bounds datalen and, for compressed frames, the inflated
	// size (reserved). 0 means DefaultMaxSize.
	MaxSize uint64
	// AllowLarge accepts FlagLarge. The trapper accepts it; a passive
	// agent listener does not.
	AllowLarge bool
	// Timeout, if positive and the source has
	// SetReadDeadline(time.Time) error, is applied as now+Timeout before
	// each frame's header is read; the same deadline covers the body.
	// With 0 the caller manages deadlines itself.
	Timeout time.Duration
	// SizeSetting, if set, names the setting that controls MaxSize (for
	// example "trapper.max_frame_size"). ErrTooLarge messages then tell
	// the operator what to change.
	SizeSetting string
}

// growChunk is the least a buffer grows by once it has to grow.
//
// Buffers grow as bytes arrive, never to an announced size up front: a
// peer that announces 1 GiB and sends 10 bytes costs us one chunk. Growth
// is geometric (at least doubling) rather than a fixed 64 KiB step, which
// would copy quadratically for big frames (a 1 GiB frame in 64 KiB steps
// copies about 8 TB); doubling keeps the memory held within twice what
// actually arrived, which is the property that matters.
const growChunk = 64 << 10

// maxEmptyReads is how many (0, nil) reads in a row we tolerate from the
// source before giving up, as bufio does.
const maxEmptyReads = 100

type readDeadliner interface {
	SetReadDeadline(time.Time) error
}

// Reader decodes ZBXD frames from a byte stream. It reads exactly one
// frame's bytes per frame and never beyond, and it reuses its buffers and
// zlib state from frame to frame. A Reader is used by one goroutine.
//
// After an error the stream position is unknown, so the Reader keeps
// returning that error. Two cases are not sticky because nothing of a new
// frame had been consumed: io.EOF, and a deadline that expired before the
// first byte of a header arrived (an idle connection); after the latter
// the caller may extend the deadline and call ReadHeader again.
type Reader struct {
	src        io.Reader
	deadline   readDeadliner // nil unless Timeout > 0 and src supports it
	timeout    time.Duration
	max        uint64
	allowLarge bool
	hint       string // " (set <SizeSetting>)" or ""

	hdr     [LargeHeaderLen]byte
	cur     Header // the header ReadHeader returned last
	pending bool   // cur's body has not been read yet
	err     error  // sticky error

	buf []byte // body bytes as received; reused
	out []byte // inflated payload; reused
	br  bytes.Reader
	zr  io.ReadCloser // zlib reader, created on the first compressed frame
	one [1]byte
}

// NewReader returns a Reader of frames from r.
func NewReader(r io.Reader, opts ReaderOptions) *Reader {
	rd := &Reader{
		timeout:    opts.Timeout,
		max:        opts.MaxSize,
		allowLarge: opts.AllowLarge,
	}
	if rd.max == 0 {
		rd.max = DefaultMaxSize
	}
	if rd.max > math.MaxInt {
		rd.max = math.MaxInt // buffers are indexed by int
	}
	if opts.SizeSetting != "" {
		rd.hint = " (set " + opts.SizeSetting + ")"
	}
	rd.Reset(r)
	return rd
}

// Reset makes the Reader read from r as if it were new, keeping its
// options and its buffers. It lets a pool of Readers serve connections.
func (r *Reader) Reset(src io.Reader) {
	r.src = src
	r.deadline = nil
	if d, ok := src.(readDeadliner); ok && r.timeout > 0 {
		r.deadline = d
	}
	r.cur, r.pending, r.err = Header{}, false, nil
}

// ReadHeader reads and validates the next frame header: magic, flags and
// the sizes against MaxSize. It returns io.EOF, unwrapped, if the stream
// ended cleanly before the first byte of a new frame. An unframed request
// is rejected with ErrBadMagic as soon as its first bytes differ from
// "ZBXD", without waiting for 13 bytes.
func (r *Reader) ReadHeader() (Header, error) {
	if r.err != nil {
		return Header{}, r.err
	}
	if r.pending {
		return Header{}, fmt.Errorf("zbx: ReadHeader called before the %d-byte body of the previous frame was read", r.cur.DataLen)
	}
	if r.deadline != nil {
		if err := r.deadline.SetReadDeadline(time.Now().Add(r.timeout)); err != nil {
			return Header{}, r.fail(&ioError{msg: "cannot set read deadline", err: err})
		}
	}
	need, n, empty := HeaderLen, 0, 0
	for n < need {
		m, err := r.src.Read(r.hdr[n:need])
		if m < 0 || m > need-n {
			return Header{}, r.fail(badReadCount(m, need-n))
		}
		if m > 0 {
			empty = 0
			if n < len(magic) {
				if err := checkMagic(r.hdr[:n+m]); err != nil {
					return Header{}, r.fail(err)
				}
			}
			n += m
			if need == HeaderLen && n > 4 {
				// The flags byte decides how long the header is.
				if err := checkFlags(r.hdr[4], r.allowLarge); err != nil {
					return Header{}, r.fail(err)
				}
				if r.hdr[4]&FlagLarge != 0 {
					need = LargeHeaderLen
				}
			}
		}
		if n == need {
			break // a pending read error shows up again when the body is read
		}
		switch {
		case err == nil:
			if m == 0 {
				if empty++; empty >= maxEmptyReads {
					return Header{}, r.fail(&ioError{msg: "cannot read frame header", err: io.ErrNoProgress})
				}
			}
		case n == 0 && errors.Is(err, io.EOF):
			return Header{}, io.EOF
		case isEOF(err):
			return Header{}, r.fail(fmt.Errorf("frame header truncated: got %d of %d bytes before EOF: %w", n, need, ErrTruncated))
		case n == 0 && isTimeout(err):
			// Nothing of a frame was consumed: the stream is still in step.
			return Header{}, &ioError{msg: "cannot read frame header", err: err}
		default:
			return Header{}, r.fail(&ioError{msg: fmt.Sprintf("cannot read frame header (got %d of %d bytes)", n, need), err: err})
		}
	}
	h, _, err := ParseHeader(r.hdr[:need], r.allowLarge)
	if err != nil {
		return Header{}, r.fail(err) // not reached: magic and flags were checked above
	}
	if h.DataLen > r.max {
		return Header{}, r.fail(fmt.Errorf("frame datalen %d exceeds the maximum %d%s: %w", h.DataLen, r.max, r.hint, ErrTooLarge))
	}
	if h.Compressed() && h.Reserved > r.max {
		return Header{}, r.fail(fmt.Errorf("compressed frame would inflate to %d bytes (reserved), beyond the maximum %d%s: %w", h.Reserved, r.max, r.hint, ErrTooLarge))
	}
	r.cur, r.pending = h, true
	return h, nil
}

// ReadBody reads the body of the frame whose header ReadHeader just
// returned (h must be that header) and returns the payload, inflated when
// FlagCompressed is set. Inflating stops with ErrCompression as soon as
// the output would exceed h.Reserved, so a zip bomb costs at most
// h.Reserved (<= MaxSize) bytes. The returned slice is valid until the
// next call on the Reader.
func (r *Reader) ReadBody(h Header) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if !r.pending || h != r.cur {
		return nil, fmt.Errorf("zbx: ReadBody called with header %+v, but the header just read is %+v (pending %v)", h, r.cur, r.pending)
	}
	r.pending = false
	body, err := r.readBody(int(h.DataLen))
	if err != nil {
		return nil, r.fail(err)
	}
	if !h.Compressed() {
		return body, nil
	}
	out, err := r.inflate(body, int(h.Reserved))
	if err != nil {
		return nil, r.fail(err)
	}
	return out, nil
}

// ReadFrame reads one whole frame: ReadHeader then ReadBody. The payload
// is valid until the next call on the Reader.
func (r *Reader) ReadFrame() (flags byte, payload []byte, err error) {
	h, err := r.ReadHeader()
	if err != nil {
		return 0, nil, err
	}
	payload, err = r.ReadBody(h)
	if err != nil {
		return 0, nil, err
	}
	return h.Flags, payload, nil
}

func (r *Reader) fail(err error) error {
	r.err = err
	return err
}

// readBody reads exactly n bytes into r.buf, growing it only as bytes
// arrive.
func (r *Reader) readBody(n int) ([]byte, error) {
	b := r.buf[:0]
	defer func() { r.buf = b[:0] }()
	empty := 0
	for len(b) < n {
		if len(b) == cap(b) {
			b = grow(b, n)
		}
		want := min(cap(b), n) - len(b)
		m, err := r.src.Read(b[len(b) : len(b)+want])
		if m < 0 || m > want {
			return nil, badReadCount(m, want)
		}
		b = b[:len(b)+m]
		if len(b) == n {
			break
		}
		switch {
		case err == nil:
			if m == 0 {
				if empty++; empty >= maxEmptyReads {
					return nil, &ioError{msg: "cannot read frame body", err: io.ErrNoProgress}
				}
			} else {
				empty = 0
			}
		case isEOF(err):
			return nil, fmt.Errorf("frame body truncated: got %d of %d bytes before EOF: %w", len(b), n, ErrTruncated)
		default:
			return nil, &ioError{msg: fmt.Sprintf("cannot read frame body (got %d of %d bytes)", len(b), n), err: err}
		}
	}
	return b, nil
}

// inflate decompresses the zlib stream comp, which must inflate to exactly
// n bytes, into r.out. Output memory grows with what actually inflates.
// Bytes after the end of the zlib stream are ignored, as zlib's
// uncompress() in the C programs does.
func (r *Reader) inflate(comp []byte, n int) ([]byte, error) {
	r.br.Reset(comp)
	if r.zr == nil {
		zr, err := zlib.NewReader(&r.br)
		if err != nil {
			return nil, fmt.Errorf("cannot inflate %d-byte payload: %v: %w", len(comp), err, ErrCompression)
		}
		r.zr = zr
	} else if err := r.zr.(zlib.Resetter).Reset(&r.br, nil); err != nil {
		return nil, fmt.Errorf("cannot inflate %d-byte payload: %v: %w", len(comp), err, ErrCompression)
	}
	out := r.out[:0]
	defer func() { r.out = out[:0] }()
	eof, empty := false, 0
	for len(out) < n && !eof {
		if len(out) == cap(out) {
			out = grow(out, n)
		}
		m, err := r.zr.Read(out[len(out):min(cap(out), n)])
		out = out[:len(out)+m]
		switch {
		case err == io.EOF:
			eof = true
		case err != nil:
			return nil, fmt.Errorf("cannot inflate %d-byte payload after %d of %d bytes: %v: %w", len(comp), len(out), n, err, ErrCompression)
		case m == 0:
			if empty++; empty >= maxEmptyReads {
				return nil, fmt.Errorf("cannot inflate %d-byte payload: %v: %w", len(comp), io.ErrNoProgress, ErrCompression)
			}
		}
	}
	if len(out) < n {
		return nil, fmt.Errorf("compressed payload inflates to %d bytes, but reserved says %d: %w", len(out), n, ErrCompression)
	}
	// The stream must end here; this also verifies the Adler-32 checksum.
	for i := 0; !eof; i++ {
		m, err := r.zr.Read(r.one[:])
		switch {
		case m > 0:
			return nil, fmt.Errorf("compressed payload inflates to more than the %d bytes reserved says: %w", n, ErrCompression)
		case err == io.EOF:
			eof = true
		case err != nil:
			return nil, fmt.Errorf("cannot inflate %d-byte payload at its end: %v: %w", len(comp), err, ErrCompression)
		case i >= maxEmptyReads:
			return nil, fmt.Errorf("cannot inflate %d-byte payload: %v: %w", len(comp), io.ErrNoProgress, ErrCompression)
		}
	}
	return out, nil
}

// grow returns a copy of b with more capacity, never more than needed to
// hold limit bytes (plus rounding): see growChunk.
func grow(b []byte, limit int) []byte {
	c := min(max(2*cap(b), len(b)+growChunk), limit)
	if c <= growChunk {
		// Round small buffers up to a power of two so frames of similar
		// size keep reusing one buffer.
		c = 1 << bits.Len(uint(c-1))
	} else {
		c = (c + 4095) &^ 4095
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func badReadCount(got, want int) error {
	return &ioError{msg: "cannot read frame", err: fmt.Errorf("source returned %d bytes for a %d-byte read", got, want)}
}

// ioError wraps an error of the underlying connection with what we were
// doing. It implements Timeout so that os.IsTimeout and net.Error users
// see a deadline through the wrapping, as errors.Is does.
type ioError struct {
	msg string
	err error
}

func (e *ioError) Error() string { return e.msg + ": " + e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

// Timeout reports whether the wrapped error is a timeout.
func (e *ioError) Timeout() bool { return isTimeout(e.err) }
