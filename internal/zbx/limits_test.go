package zbx

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

func frameHeader(flags byte, datalen, reserved uint32) []byte {
	b := append([]byte(magic), flags)
	b = binary.LittleEndian.AppendUint32(b, datalen)
	return binary.LittleEndian.AppendUint32(b, reserved)
}

func deflate(t *testing.T, p []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(p)
	zw.Close()
	return buf.Bytes()
}

// TestAnnouncedSizeIsNotAllocated: a client that announces a huge frame
// and sends a few bytes costs one growth chunk, not the announced size.
func TestAnnouncedSizeIsNotAllocated(t *testing.T) {
	f := func(name string, in []byte, wantErr error) {
		t.Helper()
		r := NewReader(bytes.NewReader(in), ReaderOptions{})
		_, _, err := r.ReadFrame()
		if !errors.Is(err, wantErr) {
			t.Fatalf("%s: got %v, want %v", name, err, wantErr)
		}
		if cap(r.buf) > growChunk || cap(r.out) > growChunk {
			t.Fatalf("%s: buffers grew to %d and %d bytes for %d bytes of input", name, cap(r.buf), cap(r.out), len(in))
		}
	}
	f("1 GiB announced, 10 bytes sent", append(frameHeader(0x01, DefaultMaxSize, 0), "agent.ping"...), ErrTruncated)
	// A compressed frame whose reserved is at the limit but whose stream
	// is tiny: output grows with what inflates, not with reserved.
	z := deflate(t, []byte("agent.ping"))
	f("1 GiB reserved, 10 bytes inflate", append(frameHeader(0x03, uint32(len(z)), DefaultMaxSize), z...), ErrCompression)
}

// TestZipBombIsBounded: a stream inflating far beyond reserved stops at
// reserved, and reserved itself is bounded by MaxSize.
func TestZipBombIsBounded(t *testing.T) {
	const max = 1 << 20
	z := deflate(t, make([]byte, 8<<20)) // 8 MiB of zeros, about 8 KiB compressed
	r := NewReader(bytes.NewReader(append(frameHeader(0x03, uint32(len(z)), max), z...)), ReaderOptions{MaxSize: max})
	_, _, err := r.ReadFrame()
	if !errors.Is(err, ErrCompression) {
		t.Fatalf("got %v, want ErrCompression", err)
	}
	if c := cap(r.out); c > max+4096 {
		t.Fatalf("inflate buffer grew to %d bytes; reserved was %d", c, max)
	}
	r = NewReader(bytes.NewReader(append(frameHeader(0x03, uint32(len(z)), 8<<20), z...)), ReaderOptions{MaxSize: max})
	if _, _, err := r.ReadFrame(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("reserved over MaxSize: got %v, want ErrTooLarge", err)
	}
}

func TestGrow(t *testing.T) {
	f := func(lenB, capB, limit, wantCap int) {
		t.Helper()
		b := make([]byte, lenB, capB)
		for i := range b {
			b[i] = byte(i)
		}
		var r Reader
		g, err := r.grow(b, limit)
		if err != nil || cap(g) != wantCap || len(g) != lenB || !bytes.Equal(g, b) {
			t.Fatalf("grow(len %d cap %d, limit %d) = len %d cap %d, want cap %d", lenB, capB, limit, len(g), cap(g), wantCap)
		}
	}
	f(0, 0, 1, 1)
	f(0, 0, 10, 16)
	f(0, 0, 14000, 16384)     // similar-size frames then reuse one buffer
	f(0, 0, 1<<30, growChunk) // announced 1 GiB: one chunk
	f(growChunk, growChunk, 1<<30, 2*growChunk)
	f(1<<20, 1<<20, 1<<30, 2<<20)         // doubling
	f(1<<20, 1<<20, 1<<20+10, 1<<20+4096) // never far beyond the limit
}

// countingMemory is a Memory that records what a Reader holds and can
// refuse allocations beyond a limit.
type countingMemory struct {
	held, peak, limit int
}

var errNoRoom = errors.New("no room")

func (m *countingMemory) Alloc(n int) error {
	if m.limit > 0 && m.held+n > m.limit {
		return errNoRoom
	}
	m.held += n
	m.peak = max(m.peak, m.held)
	return nil
}

func (m *countingMemory) Free(n int) {
	m.held -= n
	if m.held < 0 {
		panic("freed more than allocated")
	}
}

// TestMemoryIsAccounted: every buffer a Reader keeps is reported to its
// Memory, growth included, and Trim and Release hand it back.
func TestMemoryIsAccounted(t *testing.T) {
	var m countingMemory
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var in []byte
	in = append(in, frameHeader(0x01, uint32(len(big)), 0)...)
	in = append(in, big...)
	z := deflate(t, big)
	in = append(in, frameHeader(0x03, uint32(len(z)), uint32(len(big)))...)
	in = append(in, z...)
	in = append(in, frameHeader(0x01, 10, 0)...)
	in = append(in, "agent.ping"...)
	r := NewReader(bytes.NewReader(in), ReaderOptions{Memory: &m})
	held := func() int {
		n := cap(r.buf) + cap(r.out)
		if r.zr != nil {
			n += InflateStateBytes
		}
		return n
	}
	for i := 0; i < 3; i++ {
		if _, _, err := r.ReadFrame(); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if m.held != held() {
			t.Fatalf("frame %d: Memory says %d bytes held, the Reader holds %d", i, m.held, held())
		}
	}
	if m.held < 2<<20 {
		t.Fatalf("held %d bytes after a 1 MiB plain and a 1 MiB compressed frame", m.held)
	}
	r.Trim(1 << 10)
	if cap(r.buf) > 1<<10 || cap(r.out) > 1<<10 || m.held != held() {
		t.Fatalf("after Trim: buffers %d and %d, Memory says %d, Reader holds %d", cap(r.buf), cap(r.out), m.held, held())
	}
	r.Release()
	if m.held != 0 || held() != 0 {
		t.Fatalf("after Release: Memory says %d bytes held, Reader holds %d", m.held, held())
	}
}

// TestMemoryRefusal: a refused allocation fails the read with an error
// that wraps the Memory's, and the Reader holds no more than before.
func TestMemoryRefusal(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 1<<20)
	f := func(name string, frame []byte) {
		t.Helper()
		m := countingMemory{limit: 256 << 10}
		r := NewReader(bytes.NewReader(frame), ReaderOptions{Memory: &m})
		_, _, err := r.ReadFrame()
		if !errors.Is(err, errNoRoom) {
			t.Fatalf("%s: got %v, want the Memory's refusal", name, err)
		}
		if m.held > m.limit || m.peak > m.limit {
			t.Fatalf("%s: held %d, peak %d beyond the limit %d", name, m.held, m.peak, m.limit)
		}
		r.Release()
		if m.held != 0 {
			t.Fatalf("%s: %d bytes held after Release", name, m.held)
		}
	}
	f("plain", append(frameHeader(0x01, uint32(len(big)), 0), big...))
	z := deflate(t, big)
	f("compressed", append(frameHeader(0x03, uint32(len(z)), uint32(len(big))), z...))

	// A stream that is not zlib at all gives its state back at once.
	var m countingMemory
	r := NewReader(bytes.NewReader(append(frameHeader(0x03, 5, 10), "hello"...)), ReaderOptions{Memory: &m})
	if _, _, err := r.ReadFrame(); !errors.Is(err, ErrCompression) || m.held != 0 {
		t.Fatalf("bad zlib header: %v, %d bytes held", err, m.held)
	}
}

// TestCompressedBodyIsNotHeld: a compressed body is inflated as it
// arrives; only the inflated payload is buffered, even when the
// compressed bytes are as many as the inflated ones.
func TestCompressedBodyIsNotHeld(t *testing.T) {
	rnd := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{1}).Read(rnd) // incompressible
	z := deflate(t, rnd)
	if len(z) < len(rnd) {
		t.Fatalf("test data compressed from %d to %d bytes; want incompressible", len(rnd), len(z))
	}
	var m countingMemory
	r := NewReader(bytes.NewReader(append(frameHeader(0x03, uint32(len(z)), uint32(len(rnd))), z...)), ReaderOptions{Memory: &m})
	_, p, err := r.ReadFrame()
	if err != nil || !bytes.Equal(p, rnd) {
		t.Fatalf("ReadFrame: %d bytes, %v", len(p), err)
	}
	if cap(r.buf) != 0 {
		t.Fatalf("the %d compressed bytes were buffered (%d bytes)", len(z), cap(r.buf))
	}
	if m.peak > len(rnd)+len(rnd)/2+InflateStateBytes {
		// Growth holds the old and the new buffer for a moment: at most
		// 1.5 times the payload when the last doubling is capped.
		t.Fatalf("peak %d bytes held for a %d-byte payload", m.peak, len(rnd))
	}
}

// TestInflateStopsInStep: bytes after a zlib stream are skipped and the
// next frame is read from the right place; a connection error while
// inflating is reported as the connection's, not as bad compression.
func TestInflateStopsInStep(t *testing.T) {
	z := deflate(t, []byte("agent.ping"))
	in := append(frameHeader(0x03, uint32(len(z)+5), 10), z...)
	in = append(in, "trail"...)
	in = append(in, frameHeader(0x01, 4, 0)...)
	in = append(in, "next"...)
	r := NewReader(bytes.NewReader(in), ReaderOptions{})
	for _, want := range []string{"agent.ping", "next"} {
		if _, p, err := r.ReadFrame(); err != nil || string(p) != want {
			t.Fatalf("got %q, %v; want %q", p, err, want)
		}
	}
	big := deflate(t, bytes.Repeat([]byte("compressible "), 100000))
	frame := append(frameHeader(0x03, uint32(len(big)), 1300000), big...)
	r = NewReader(io.MultiReader(bytes.NewReader(frame[:len(frame)/2]), errReader{errReset}), ReaderOptions{})
	_, _, err := r.ReadFrame()
	if !errors.Is(err, errReset) || errors.Is(err, ErrCompression) {
		t.Fatalf("connection reset mid-body: got %v", err)
	}
}

var errReset = errors.New("connection reset by peer")

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestNothingAllocatedBeforeBody: a peer that announces a frame and sends
// no body costs no memory, compressed or not, and a tiny frame needs no
// buffer at all.
func TestNothingAllocatedBeforeBody(t *testing.T) {
	f := func(name string, in []byte, wantErr error) {
		t.Helper()
		var m countingMemory
		r := NewReader(io.MultiReader(bytes.NewReader(in), errReader{errStalled}), ReaderOptions{Memory: &m})
		_, _, err := r.ReadFrame()
		if !errors.Is(err, wantErr) {
			t.Fatalf("%s: got %v, want %v", name, err, wantErr)
		}
		if m.peak != 0 {
			t.Fatalf("%s: %d bytes allocated before any body byte", name, m.peak)
		}
	}
	f("plain, 1 GiB announced", frameHeader(0x01, DefaultMaxSize, 0), errStalled)
	f("compressed, 1 GiB announced", frameHeader(0x03, DefaultMaxSize, DefaultMaxSize), errStalled)
	f("plain, 500 bytes sent of 1 GiB", append(frameHeader(0x01, DefaultMaxSize, 0), make([]byte, 500)...), errStalled)

	var m countingMemory
	r := NewReader(bytes.NewReader(append(frameHeader(0x01, 10, 0), "agent.ping"...)), ReaderOptions{Memory: &m})
	if _, p, err := r.ReadFrame(); err != nil || string(p) != "agent.ping" || m.peak != 0 {
		t.Fatalf("tiny frame: %q, %v, %d bytes allocated", p, err, m.peak)
	}
}

var errStalled = errors.New("i/o timeout (stalled peer)")

// arrivalMemory records the order of allocations and arrivals.
type arrivalMemory struct {
	countingMemory
	events []string // "alloc" or "arrived"
}

func (m *arrivalMemory) Alloc(n int) error {
	m.events = append(m.events, "alloc")
	return m.countingMemory.Alloc(n)
}

func (m *arrivalMemory) Arrived() { m.events = append(m.events, "arrived") }

// TestArrivalIsReported: a Memory that is an ArrivalWatcher hears once
// per frame that its body has been read whole: for a compressed frame as
// soon as its last compressed byte is in, before the inflated buffer has
// finished growing, and never for a frame whose body is cut short.
func TestArrivalIsReported(t *testing.T) {
	f := func(name string, frame []byte, wantErr error, wantArrived int, allocsAfter bool) {
		t.Helper()
		var m arrivalMemory
		r := NewReader(bytes.NewReader(frame), ReaderOptions{Memory: &m})
		_, _, err := r.ReadFrame()
		if !errors.Is(err, wantErr) {
			t.Fatalf("%s: got %v, want %v", name, err, wantErr)
		}
		arrived, allocAfter := 0, false
		for _, e := range m.events {
			switch {
			case e == "arrived":
				arrived++
			case arrived > 0:
				allocAfter = true
			}
		}
		if arrived != wantArrived || allocAfter != allocsAfter {
			t.Fatalf("%s: events %v: %d arrivals, allocations after one %v; want %d, %v", name, m.events, arrived, allocAfter, wantArrived, allocsAfter)
		}
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	plain := append(frameHeader(0x01, uint32(len(big)), 0), big...)
	f("plain", plain, nil, 1, false)
	f("plain, cut short", plain[:len(plain)-1], ErrTruncated, 0, false)
	z := deflate(t, big) // a few KiB: in long before 1 MiB has inflated
	comp := append(frameHeader(0x03, uint32(len(z)), uint32(len(big))), z...)
	f("compressed", comp, nil, 1, true)
	f("compressed, cut short", comp[:len(comp)-1], ErrTruncated, 0, false)
	f("empty", frameHeader(0x01, 0, 0), nil, 1, false)
}
