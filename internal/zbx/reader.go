package zbx

import (
	"bufio"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"
	"unsafe"
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
	// Memory, if set, is told before the Reader allocates a buffer and
	// after it drops one, and may refuse an allocation: the way a server
	// bounds the memory of all its connections together.
	Memory Memory
}

// Memory accounts for the memory a Reader holds. A Reader calls it from
// its own goroutine only; one Memory may serve many Readers if it is
// safe for concurrent use.
type Memory interface {
	// Alloc is called before the Reader allocates n bytes. A non-nil
	// error refuses them: the read fails with an error that wraps it and
	// the Reader is unusable until Reset (it then holds what it held
	// before the refused allocation).
	Alloc(n int) error
	// Free is called after the Reader dropped n bytes it had Alloc'ed;
	// they are garbage from then on.
	Free(n int)
}

// ArrivalWatcher may be implemented by a Memory that wants to know when
// the frame being read stops depending on its peer: Arrived is called
// once per frame, when the last byte of its body has been read from the
// connection. For a compressed frame that is the last compressed byte,
// usually long before inflating ends. What the Reader (and its caller)
// allocate after that is bounded by the frame's header and CPU time
// alone, which a memory budget may use to tell a frame that is merely
// slow from one whose peer stalls.
type ArrivalWatcher interface {
	Arrived()
}

// InflateStateBytes is what a Reader counts (see Memory) for its zlib
// state, allocated on its first compressed frame and kept: the 32 KiB
// window, the Huffman tables and a 4 KiB read buffer, rounded up.
const InflateStateBytes = 48 << 10

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

	mem Memory // nil: not accounted

	buf []byte // body bytes as received; reused
	out []byte // inflated payload; reused
	// Compressed bodies are inflated as they arrive, never held whole:
	// zsrc limits the connection to the frame's bytes, zbuf gives zlib
	// the io.ByteReader it needs without wrapping its own buffer around
	// every frame, and zr is created on the first compressed frame.
	zsrc frameSource
	zbuf *bufio.Reader
	zr   io.ReadCloser
	one  [1]byte
	// pre receives a body's first bytes before anything is allocated:
	// a peer that announces a frame and sends nothing costs nothing,
	// and a frame of up to preLen bytes needs no buffer at all.
	pre [preLen]byte
}

// preLen is the size of Reader.pre: an agent's or a sender's smallest
// frames fit.
const preLen = 512

// frameSource reads at most n bytes of a compressed body from the
// connection and remembers why the connection stopped early, so that a
// truncated or timed-out body is not reported as bad compression.
type frameSource struct {
	src   io.Reader
	pre   []byte // bytes read ahead (counted in got), served first
	n     int64  // body bytes not read yet
	got   int64  // body bytes read
	err   error  // the connection's error (io.EOF included) before n reached 0
	empty int
}

func (f *frameSource) Read(p []byte) (int, error) {
	if len(f.pre) > 0 {
		m := copy(p, f.pre)
		f.pre = f.pre[m:]
		return m, nil
	}
	if f.n <= 0 {
		return 0, io.EOF
	}
	if f.err != nil {
		return 0, f.err
	}
	p = p[:min(int64(len(p)), f.n)]
	m, err := f.src.Read(p)
	if m < 0 || m > len(p) {
		f.err = badReadCount(m, len(p))
		return 0, f.err
	}
	f.n -= int64(m)
	f.got += int64(m)
	switch {
	case f.n == 0:
		return m, nil // a pending error shows up with the next frame
	case err != nil:
		f.err = err
		if m > 0 {
			return m, nil
		}
		return 0, err
	case m == 0:
		if f.empty++; f.empty >= maxEmptyReads {
			f.err = io.ErrNoProgress
			return 0, f.err
		}
	default:
		f.empty = 0
	}
	return m, nil
}

// NewReader returns a Reader of frames from r.
func NewReader(r io.Reader, opts ReaderOptions) *Reader {
	rd := &Reader{
		timeout:    opts.Timeout,
		max:        opts.MaxSize,
		allowLarge: opts.AllowLarge,
		mem:        opts.Memory,
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
	if h.Compressed() {
		out, err := r.inflate(h.DataLen, int(h.Reserved))
		if err != nil {
			return nil, r.fail(err)
		}
		return out, nil
	}
	body, err := r.readBody(int(h.DataLen))
	if err != nil {
		return nil, r.fail(err)
	}
	return body, nil
}

// Trim drops the buffers the Reader keeps between frames if they are
// larger than keep bytes, so that one big frame does not pin its memory
// for a connection's lifetime. Call it between frames: it invalidates the
// payload ReadBody returned last.
func (r *Reader) Trim(keep int) {
	if cap(r.buf) > keep {
		r.free(r.buf)
		r.buf = nil
	}
	if cap(r.out) > keep {
		r.free(r.out)
		r.out = nil
	}
}

// Release drops everything the Reader holds (buffers and zlib state)
// and tells its Memory. The Reader stays usable; it allocates again as
// frames arrive.
func (r *Reader) Release() {
	r.Trim(-1)
	if r.zr != nil {
		r.zr, r.zbuf = nil, nil
		if r.mem != nil {
			r.mem.Free(InflateStateBytes)
		}
	}
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
	if cap(b) == 0 {
		b = r.pre[:0] // see Reader.pre
	}
	defer func() {
		if !r.isPre(b) {
			r.buf = b[:0]
		}
	}()
	empty := 0
	for len(b) < n {
		if len(b) == cap(b) {
			var err error
			if b, err = r.grow(b, n); err != nil {
				return nil, err
			}
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
	r.arrived()
	return b, nil
}

// inflate decompresses the next clen bytes of the connection, a zlib
// stream that must inflate to exactly n bytes, into r.out. The compressed
// bytes are read as inflating needs them and are never held whole; the
// output grows with what actually inflates. Bytes after the end of the
// zlib stream (up to clen) are read and ignored, as zlib's uncompress()
// in the C programs does.
func (r *Reader) inflate(clen uint64, n int) ([]byte, error) {
	r.zsrc = frameSource{src: r.src, n: int64(clen)}
	if r.zr == nil {
		// Allocate the zlib state only once the body starts to arrive.
		if clen > 0 {
			m, err := 0, error(nil)
			for m == 0 && err == nil {
				m, err = r.zsrc.Read(r.pre[:min(clen, preLen)])
			}
			if m == 0 {
				return nil, r.inflateErr(io.ErrUnexpectedEOF, 0, n)
			}
			r.zsrc.pre = r.pre[:m]
		}
		if r.mem != nil {
			if err := r.mem.Alloc(InflateStateBytes); err != nil {
				return nil, fmt.Errorf("cannot inflate a %d-byte payload: %w", clen, err)
			}
		}
		r.zbuf = bufio.NewReaderSize(&r.zsrc, 4096)
		zr, err := zlib.NewReader(r.zbuf)
		if err != nil {
			r.zbuf = nil
			if r.mem != nil {
				r.mem.Free(InflateStateBytes)
			}
			return nil, r.inflateErr(err, 0, n)
		}
		r.zr = zr
	} else {
		r.zbuf.Reset(&r.zsrc)
		if err := r.zr.(zlib.Resetter).Reset(r.zbuf, nil); err != nil {
			return nil, r.inflateErr(err, 0, n)
		}
	}
	out := r.out[:0]
	defer func() { r.out = out[:0] }()
	eof, empty, told := false, 0, false
	for len(out) < n && !eof {
		if !told && r.zsrc.n == 0 {
			// Every compressed byte is in: what is left to inflate no
			// longer waits for the peer.
			told = true
			r.arrived()
		}
		if len(out) == cap(out) {
			var err error
			if out, err = r.grow(out, n); err != nil {
				return nil, err
			}
		}
		m, err := r.zr.Read(out[len(out):min(cap(out), n)])
		out = out[:len(out)+m]
		switch {
		case err == io.EOF:
			eof = true
		case err != nil:
			return nil, r.inflateErr(err, len(out), n)
		case m == 0:
			if empty++; empty >= maxEmptyReads {
				return nil, fmt.Errorf("cannot inflate %d-byte payload: %v: %w", clen, io.ErrNoProgress, ErrCompression)
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
			return nil, r.inflateErr(err, len(out), n)
		case i >= maxEmptyReads:
			return nil, fmt.Errorf("cannot inflate %d-byte payload: %v: %w", clen, io.ErrNoProgress, ErrCompression)
		}
	}
	// Skip what follows the stream, so the next frame starts in step.
	if rest := int64(r.zbuf.Buffered()) + r.zsrc.n; rest > 0 {
		if _, err := r.zbuf.Discard(int(rest)); err != nil {
			return nil, r.inflateErr(err, len(out), n)
		}
	}
	if !told {
		r.arrived()
	}
	return out, nil
}

// arrived tells r's Memory, if it watches arrivals, that the current
// frame's body has been read from the connection.
func (r *Reader) arrived() {
	if w, ok := r.mem.(ArrivalWatcher); ok {
		w.Arrived()
	}
}

// inflateErr classifies an error met while inflating: the connection's
// own (a truncated body, a deadline, a reset) or bad compressed data.
func (r *Reader) inflateErr(err error, got, n int) error {
	src, clen := r.zsrc.err, r.zsrc.got+r.zsrc.n
	eofish := errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
	switch {
	case src != nil && eofish && isEOF(src):
		return fmt.Errorf("frame body truncated: got %d of %d bytes before EOF: %w", r.zsrc.got, clen, ErrTruncated)
	case src != nil && (eofish || errors.Is(err, src)):
		return &ioError{msg: fmt.Sprintf("cannot read frame body (got %d of %d bytes)", r.zsrc.got, clen), err: src}
	}
	return fmt.Errorf("cannot inflate %d-byte payload after %d of %d bytes: %v: %w", clen, got, n, err, ErrCompression)
}

// grow returns a copy of b with more capacity (see growCap), telling
// r's Memory about the new buffer and, once copied, the old one.
func (r *Reader) grow(b []byte, limit int) ([]byte, error) {
	c := growCap(cap(b), len(b), limit)
	if r.isPre(b) {
		c = growCap(0, 0, limit) // the first chunk, as if pre were not there
	}
	if r.mem != nil {
		if err := r.mem.Alloc(c); err != nil {
			return b, fmt.Errorf("cannot grow the frame buffer to %d bytes: %w", c, err)
		}
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	r.free(b)
	return nb, nil
}

func (r *Reader) free(b []byte) {
	if r.mem != nil && cap(b) > 0 && !r.isPre(b) {
		r.mem.Free(cap(b))
	}
}

// isPre reports whether b is Reader.pre, which is never allocated nor
// freed.
func (r *Reader) isPre(b []byte) bool { return cap(b) > 0 && unsafe.SliceData(b) == &r.pre[0] }

// growCap is the capacity that replaces a full buffer of capacity c
// holding l bytes, on the way to limit bytes.
func growCap(c, l, limit int) int {
	c = min(max(2*c, l+growChunk), limit)
	if c <= growChunk {
		// Round small buffers up to a power of two so frames of similar
		// size keep reusing one buffer.
		return 1 << bits.Len(uint(c-1))
	}
	return (c + 4095) &^ 4095
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
