package zbx

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
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
		g := grow(b, limit)
		if cap(g) != wantCap || len(g) != lenB || !bytes.Equal(g, b) {
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
