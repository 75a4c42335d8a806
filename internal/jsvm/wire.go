package jsvm

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The pipe protocol between a Pool and its workers. Each message is a
// frame: a 4-byte little-endian length, then that many bytes, the first
// the message type. Strings are a uvarint length and the bytes; numbers
// are uvarints. One run is a conversation started by the pool:
//
//	worker → pool  msgHello  once, at start: helloMagic, protocolVersion
//	pool → worker  msgRun    kind, timeout (ns), max result, script hash
//	                         (8 bytes), has script (byte), [script], value
//	worker → pool  msgFetch  method, URL, header count, headers, has body, body
//	pool → worker  msgFetched ok (byte), then status, header count,
//	                         (name, value) pairs, body; or the error text
//	worker → pool  msgLog    level, message
//	worker → pool  msgDone   status (byte), reason (byte), text
//
// A worker that does not hold the script of a hash answers msgDone with
// doneNeedScript, and the pool sends the run again with the script.
const (
	msgHello   = 'h'
	msgRun     = 'r'
	msgFetch   = 'F'
	msgFetched = 'f'
	msgLog     = 'l'
	msgDone    = 'd'
)

// Status bytes of msgDone.
const (
	doneValue      = 0 // text is the result
	doneNull       = 1 // the script returned undefined or null
	doneError      = 2 // reason and text are the *Error's
	doneNeedScript = 3 // send the run again with its script
	doneUndefined  = 4 // the script returned undefined
)

const (
	helloMagic      = "peregrine-jsvm"
	protocolVersion = 2
)

// maxFrame bounds one frame, so that a damaged or hostile stream cannot
// make the reader allocate without bound. Values and results larger than
// this fail the run.
const maxFrame = 1 << 30

var errFrame = errors.New("jsvm: malformed frame")

// frameWriter builds one frame at a time in a reused buffer.
type frameWriter struct {
	w   *bufio.Writer
	buf []byte
}

func (f *frameWriter) begin(typ byte) { f.buf = append(f.buf[:0], 0, 0, 0, 0, typ) }
func (f *frameWriter) byte(b byte)    { f.buf = append(f.buf, b) }
func (f *frameWriter) uint(u uint64)  { f.buf = binary.AppendUvarint(f.buf, u) }
func (f *frameWriter) str(s string) {
	f.buf = binary.AppendUvarint(f.buf, uint64(len(s)))
	f.buf = append(f.buf, s...)
}
func (f *frameWriter) u64(u uint64) { f.buf = binary.LittleEndian.AppendUint64(f.buf, u) }

// send finishes the frame and flushes it.
func (f *frameWriter) send() error {
	n := len(f.buf) - 4
	if n > maxFrame {
		return fmt.Errorf("message of %d bytes is larger than the %d the pipe carries", n, maxFrame)
	}
	binary.LittleEndian.PutUint32(f.buf, uint32(n))
	if _, err := f.w.Write(f.buf); err != nil {
		return err
	}
	if cap(f.buf) > 1<<20 {
		f.buf = nil // do not pin one large value's memory
	}
	return f.w.Flush()
}

// frameReader reads frames into a reused buffer; the strings it returns
// are copies.
type frameReader struct {
	r   *bufio.Reader
	buf []byte
	pos int
	err error
}

// next reads the next frame and returns its type.
func (f *frameReader) next() (byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
		return 0, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n == 0 || n > maxFrame {
		return 0, errFrame
	}
	if cap(f.buf) < int(n) || cap(f.buf) > 1<<20 && int(n) < 1<<16 {
		f.buf = make([]byte, n)
	}
	f.buf = f.buf[:n]
	if _, err := io.ReadFull(f.r, f.buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	f.pos, f.err = 1, nil
	return f.buf[0], nil
}

func (f *frameReader) byte() byte {
	if f.err != nil || f.pos >= len(f.buf) {
		f.err = errFrame
		return 0
	}
	b := f.buf[f.pos]
	f.pos++
	return b
}

func (f *frameReader) uint() uint64 {
	if f.err != nil {
		return 0
	}
	u, k := binary.Uvarint(f.buf[f.pos:])
	if k <= 0 {
		f.err = errFrame
		return 0
	}
	f.pos += k
	return u
}

func (f *frameReader) u64() uint64 {
	if f.err != nil || len(f.buf)-f.pos < 8 {
		f.err = errFrame
		return 0
	}
	u := binary.LittleEndian.Uint64(f.buf[f.pos:])
	f.pos += 8
	return u
}

func (f *frameReader) str() string {
	n := f.uint()
	if f.err != nil || n > uint64(len(f.buf)-f.pos) {
		f.err = errFrame
		return ""
	}
	s := string(f.buf[f.pos : f.pos+int(n)])
	f.pos += int(n)
	return s
}

// count reads a count of items that take at least one byte each, so
// that a damaged count cannot make the caller allocate without bound.
func (f *frameReader) count() int {
	n := f.uint()
	if f.err != nil || n > uint64(len(f.buf)-f.pos) {
		f.err = errFrame
		return 0
	}
	return int(n)
}

// done reports the frame's decoding error, also for trailing bytes.
func (f *frameReader) done() error {
	if f.err == nil && f.pos != len(f.buf) {
		f.err = errFrame
	}
	return f.err
}
