package zbx_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// header builds a normal 13-byte header.
func header(flags byte, datalen, reserved uint32) []byte {
	b := []byte{'Z', 'B', 'X', 'D', flags, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(b[5:], datalen)
	binary.LittleEndian.PutUint32(b[9:], reserved)
	return b
}

// largeHeader builds a 21-byte header; flags should include 0x04.
func largeHeader(flags byte, datalen, reserved uint64) []byte {
	b := append([]byte("ZBXD"), flags)
	b = binary.LittleEndian.AppendUint64(b, datalen)
	return binary.LittleEndian.AppendUint64(b, reserved)
}

func zlibBytes(t testing.TB, p []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	if _, err := zw.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestFixtures(t *testing.T) {
	for _, c := range loadCaptures(t) {
		t.Run(c.Name, func(t *testing.T) {
			if !c.Framed {
				for _, large := range []bool{false, true} {
					_, _, err := zbx.NewReader(bytes.NewReader(c.raw), zbx.ReaderOptions{AllowLarge: large}).ReadFrame()
					if !errors.Is(err, zbx.ErrBadMagic) {
						t.Fatalf("unframed capture, AllowLarge=%v: got %v, want ErrBadMagic", large, err)
					}
				}
				return
			}
			allow := []bool{false, true}
			if c.Flags&zbx.FlagLarge != 0 {
				// 6.0 agents refuse 0x04 on the passive port; the trapper accepts it.
				_, _, err := zbx.NewReader(bytes.NewReader(c.raw), zbx.ReaderOptions{}).ReadFrame()
				if !errors.Is(err, zbx.ErrBadFlags) {
					t.Fatalf("AllowLarge=false: got %v, want ErrBadFlags", err)
				}
				allow = []bool{true}
			}
			for _, large := range allow {
				r := zbx.NewReader(bytes.NewReader(c.raw), zbx.ReaderOptions{AllowLarge: large})
				h, err := r.ReadHeader()
				if err != nil {
					t.Fatalf("AllowLarge=%v: ReadHeader: %v", large, err)
				}
				want := zbx.Header{Flags: c.Flags, DataLen: c.DataLen, Reserved: c.Reserved}
				if h != want || h.Len() != c.HeaderLen {
					t.Fatalf("header %+v (len %d), index.json says %+v (len %d)", h, h.Len(), want, c.HeaderLen)
				}
				p, err := r.ReadBody(h)
				if err != nil {
					t.Fatalf("ReadBody: %v", err)
				}
				if diff := cmp.Diff(string(c.payload(t)), string(p)); diff != "" {
					t.Fatalf("payload (-index.json +decoded):\n%s", diff)
				}
				if _, err := r.ReadHeader(); err != io.EOF {
					t.Fatalf("after the only frame: got %v, want io.EOF", err)
				}
				// ParseHeader agrees with the Reader.
				ph, n, err := zbx.ParseHeader(c.raw, large)
				if err != nil || ph != h || n != c.HeaderLen {
					t.Fatalf("ParseHeader = %+v, %d, %v; want %+v, %d", ph, n, err, h, c.HeaderLen)
				}
			}
		})
	}
}

// TestAppendFrameMatchesCaptures encodes the payload of every uncompressed
// capture and compares with the bytes the real program wrote. The C
// programs (and our capture listener) write reserved = 0, exactly as
// AppendFrame does; agent 2 6.0 writes reserved = datalen, so for its
// frames only that field may differ.
func TestAppendFrameMatchesCaptures(t *testing.T) {
	exact := 0
	for _, c := range loadCaptures(t) {
		if !c.Framed || c.Flags != zbx.FlagProtocol {
			continue
		}
		want := c.raw
		switch c.Reserved {
		case 0:
			exact++
		case c.DataLen:
			want = bytes.Clone(c.raw)
			binary.LittleEndian.PutUint32(want[9:13], 0)
		default:
			t.Errorf("%s: uncompressed with reserved %d, neither 0 nor datalen", c.Name, c.Reserved)
			continue
		}
		got := zbx.AppendFrame(nil, c.payload(t), zbx.FlagProtocol)
		if !bytes.Equal(got, want) {
			t.Errorf("%s (%s): AppendFrame\n got %x\nwant %x", c.Name, c.Program, got, want)
		}
	}
	if exact < 20 {
		t.Fatalf("only %d captures with reserved = 0 compared byte for byte", exact)
	}
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// 8 MiB of sender-data-like JSON.
	big := make([]byte, 0, 8<<20)
	for len(big) < 8<<20 {
		big = fmt.Appendf(big, `{"host":"peregrine-test","key":"trap.k%03d","value":"%.3f"},`, rng.IntN(1000), rng.Float64()*100)
	}
	big = big[:8<<20]
	payloads := map[string][]byte{
		"empty": {},
		"ping":  []byte("agent.ping"),
		"nul":   []byte("ZBX_NOTSUPPORTED\x00Unsupported item key."),
		"8MiB":  big,
	}
	for name, p := range payloads {
		for _, flags := range []byte{0x01, 0x03, 0x05, 0x07} {
			if len(p) > 1<<20 && flags == 0x07 {
				continue // compressing 8 MiB once is enough
			}
			prefix := []byte("prefix")
			frame := zbx.AppendFrame(bytes.Clone(prefix), p, flags)
			if !bytes.HasPrefix(frame, prefix) {
				t.Fatalf("%s flags 0x%02x: AppendFrame clobbered dst", name, flags)
			}
			frame = frame[len(prefix):]
			sources := map[string]io.Reader{"whole": bytes.NewReader(frame)}
			if len(p) < 1<<10 {
				sources["onebyte"] = iotest.OneByteReader(bytes.NewReader(frame))
			}
			for src, rd := range sources {
				r := zbx.NewReader(rd, zbx.ReaderOptions{AllowLarge: true})
				h, err := r.ReadHeader()
				if err != nil {
					t.Fatalf("%s flags 0x%02x %s: %v", name, flags, src, err)
				}
				if h.Flags != flags {
					t.Fatalf("%s: flags 0x%02x, want 0x%02x", name, h.Flags, flags)
				}
				wantRes := uint64(0)
				if flags&zbx.FlagCompressed != 0 {
					wantRes = uint64(len(p))
				}
				if h.Reserved != wantRes || h.DataLen != uint64(len(frame)-h.Len()) {
					t.Fatalf("%s flags 0x%02x: header %+v for a %d-byte frame", name, flags, h, len(frame))
				}
				got, err := r.ReadBody(h)
				if err != nil {
					t.Fatalf("%s flags 0x%02x %s: %v", name, flags, src, err)
				}
				if !bytes.Equal(got, p) {
					t.Fatalf("%s flags 0x%02x %s: payload differs (%d bytes, want %d)", name, flags, src, len(got), len(p))
				}
				if _, _, err := r.ReadFrame(); err != io.EOF {
					t.Fatalf("%s: got %v at the end, want io.EOF", name, err)
				}
			}
		}
	}
	// The payload is a zlib stream (RFC 1950, deflate, 32 KiB window):
	// 78 01 at BestSpeed; the Zabbix programs write 78 9c.
	if f := zbx.AppendFrame(nil, []byte("agent.ping"), zbx.FlagProtocol|zbx.FlagCompressed); !bytes.HasPrefix(f[zbx.HeaderLen:], []byte{0x78, 0x01}) {
		t.Errorf("compressed payload starts %x, want 78 01", f[zbx.HeaderLen:zbx.HeaderLen+2])
	}
	// Unknown bits are dropped and the protocol bit is always set.
	if f := zbx.AppendFrame(nil, nil, 0xf0); f[4] != zbx.FlagProtocol {
		t.Errorf("AppendFrame(flags 0xf0) wrote flags 0x%02x", f[4])
	}
}

func TestReadErrors(t *testing.T) {
	ping := []byte("agent.ping")
	zping := zlibBytes(t, ping)
	badSum := bytes.Clone(zping)
	badSum[len(badSum)-1] ^= 0xff
	f := func(name string, in []byte, opts zbx.ReaderOptions, want error, wantText string) {
		t.Helper()
		_, p, err := zbx.NewReader(bytes.NewReader(in), opts).ReadFrame()
		if !errors.Is(err, want) {
			t.Errorf("%s: input %q: got payload %q, err %v; want %v", name, in, p, err, want)
			return
		}
		if want != io.EOF && errors.Is(err, io.EOF) {
			t.Errorf("%s: %v must not look like a clean io.EOF", name, err)
		}
		if !strings.Contains(err.Error(), wantText) {
			t.Errorf("%s: error %q does not mention %q", name, err, wantText)
		}
	}
	none := zbx.ReaderOptions{}
	small := zbx.ReaderOptions{MaxSize: 1024, SizeSetting: "trapper.max_frame_size"}

	f("clean EOF", nil, none, io.EOF, "EOF")
	f("garbage", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), none, zbx.ErrBadMagic, `"GET "`)
	f("unframed key", []byte("agent.ping\n"), none, zbx.ErrBadMagic, "ZBXD")
	f("one bad byte", []byte("x"), none, zbx.ErrBadMagic, `"x"`)
	f("magic typo", cat([]byte("ZBXd"), header(1, 0, 0)[4:]), none, zbx.ErrBadMagic, "ZBXd")
	f("no protocol bit", cat(header(0x00, 2, 0), []byte("{}")), none, zbx.ErrBadFlags, "0x00")
	f("compressed without protocol bit", cat(header(0x02, 2, 0), []byte("{}")), none, zbx.ErrBadFlags, "0x02")
	f("unknown bit 0x08", cat(header(0x09, 2, 0), []byte("{}")), none, zbx.ErrBadFlags, "0x08")
	f("unknown bit 0x80", cat(header(0x81, 2, 0), []byte("{}")), zbx.ReaderOptions{AllowLarge: true}, zbx.ErrBadFlags, "0x80")
	f("large not allowed", cat(largeHeader(0x05, 2, 0), []byte("{}")), none, zbx.ErrBadFlags, "0x04")
	f("datalen over MaxSize", header(0x01, 1025, 0), small, zbx.ErrTooLarge, "trapper.max_frame_size")
	f("datalen over default", header(0x01, 1<<30+1, 0), none, zbx.ErrTooLarge, "1073741825")
	f("large datalen over default", largeHeader(0x05, 1<<40, 0), zbx.ReaderOptions{AllowLarge: true}, zbx.ErrTooLarge, "1099511627776")
	f("reserved over MaxSize", cat(header(0x03, uint32(len(zping)), 1025), zping), small, zbx.ErrTooLarge, "reserved")
	f("truncated header", []byte("ZBXD\x01\x05\x00"), none, zbx.ErrTruncated, "7 of 13")
	f("truncated magic", []byte("ZBX"), none, zbx.ErrTruncated, "3 of 13")
	f("truncated large header", largeHeader(0x05, 10, 0)[:15], zbx.ReaderOptions{AllowLarge: true}, zbx.ErrTruncated, "15 of 21")
	f("truncated body", cat(header(0x01, 100, 0), []byte(`{"request":"sender data"`)), none, zbx.ErrTruncated, "24 of 100")
	f("header only", header(0x01, 1, 0), none, zbx.ErrTruncated, "0 of 1")
	f("truncated compressed body", cat(header(0x03, uint32(len(zping)), 10), zping[:5]), none, zbx.ErrTruncated, "5 of")
	f("invalid zlib", cat(header(0x03, 5, 10), []byte("hello")), none, zbx.ErrCompression, "inflate")
	f("empty zlib", header(0x03, 0, 0), none, zbx.ErrCompression, "inflate")
	f("cut zlib stream", cat(header(0x03, uint32(len(zping)-6), 10), zping[:len(zping)-6]), none, zbx.ErrCompression, "inflate")
	f("bad checksum", cat(header(0x03, uint32(len(badSum)), 10), badSum), none, zbx.ErrCompression, "checksum")
	f("inflates short", cat(header(0x03, uint32(len(zping)), 11), zping), none, zbx.ErrCompression, "10 bytes, but reserved says 11")
	f("inflates long", cat(header(0x03, uint32(len(zping)), 9), zping), none, zbx.ErrCompression, "more than the 9 bytes")
	f("inflates long, reserved 0", cat(header(0x03, uint32(len(zping)), 0), zping), none, zbx.ErrCompression, "more than the 0 bytes")

	// Not errors: reserved is ignored without compression (agent 2 6.0
	// writes datalen there, anything else must be tolerated too), and
	// bytes after the end of a zlib stream are ignored as zlib's
	// uncompress() does.
	ok := func(name string, in []byte, opts zbx.ReaderOptions, want []byte) {
		t.Helper()
		_, p, err := zbx.NewReader(bytes.NewReader(in), opts).ReadFrame()
		if err != nil || !bytes.Equal(p, want) {
			t.Errorf("%s: got %q, %v; want %q", name, p, err, want)
		}
	}
	ok("reserved ignored", cat(header(0x01, 10, 0xffffffff), ping), small, ping)
	ok("large reserved ignored", cat(largeHeader(0x05, 10, 1<<62), ping), zbx.ReaderOptions{AllowLarge: true}, ping)
	ok("trailing bytes after zlib stream", cat(header(0x03, uint32(len(zping)+3), 10), zping, []byte("xyz")), none, ping)
	ok("exactly MaxSize", cat(header(0x01, 1024, 0), bytes.Repeat([]byte("a"), 1024)), small, bytes.Repeat([]byte("a"), 1024))
	ok("empty frame", header(0x01, 0, 0), none, nil)
	ok("empty compressed frame", cat(header(0x03, uint32(len(zlibBytes(t, nil))), 0), zlibBytes(t, nil)), none, nil)
}

// TestErrorsAreSticky: after a bad frame the stream position is unknown,
// so the Reader does not try to read on.
func TestErrorsAreSticky(t *testing.T) {
	in := cat([]byte("GET / HTTP/1.1\r\n"), zbx.AppendFrame(nil, []byte("agent.ping"), 0x01))
	r := zbx.NewReader(bytes.NewReader(in), zbx.ReaderOptions{})
	_, _, err1 := r.ReadFrame()
	_, _, err2 := r.ReadFrame()
	if !errors.Is(err1, zbx.ErrBadMagic) || err2 != err1 {
		t.Fatalf("got %v then %v, want the same ErrBadMagic twice", err1, err2)
	}
	r.Reset(bytes.NewReader(zbx.AppendFrame(nil, []byte("agent.ping"), 0x01)))
	if _, p, err := r.ReadFrame(); err != nil || string(p) != "agent.ping" {
		t.Fatalf("after Reset: %q, %v", p, err)
	}
}

func TestMisuse(t *testing.T) {
	frame := zbx.AppendFrame(nil, []byte("agent.ping"), 0x01)
	r := zbx.NewReader(bytes.NewReader(cat(frame, frame)), zbx.ReaderOptions{})
	if _, err := r.ReadBody(zbx.Header{Flags: 1, DataLen: 10}); err == nil {
		t.Fatal("ReadBody before ReadHeader succeeded")
	}
	h, err := r.ReadHeader()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadHeader(); err == nil {
		t.Fatal("second ReadHeader before ReadBody succeeded")
	}
	if _, err := r.ReadBody(zbx.Header{Flags: 1, DataLen: 5}); err == nil {
		t.Fatal("ReadBody with another header succeeded")
	}
	// Misuse does not break the Reader.
	if p, err := r.ReadBody(h); err != nil || string(p) != "agent.ping" {
		t.Fatalf("ReadBody: %q, %v", p, err)
	}
	if _, p, err := r.ReadFrame(); err != nil || string(p) != "agent.ping" {
		t.Fatalf("second frame: %q, %v", p, err)
	}
}

// TestStream reads many frames back to back from one stream, through
// readers that split the bytes in various ways.
func TestStream(t *testing.T) {
	type frame struct {
		flags   byte
		payload string
	}
	frames := []frame{
		{0x01, `{"request":"sender data","data":[]}`},
		{0x03, `{"request":"agent data","data":[{"id":1,"itemid":2001,"value":"1"}]}`},
		{0x01, ""},
		{0x05, "agent.ping"},
		{0x07, strings.Repeat("compressible ", 5000)},
		{0x01, strings.Repeat("x", 70000)},
		{0x03, ""},
		{0x01, "ZBX_NOTSUPPORTED\x00Unknown metric"},
	}
	var stream []byte
	for _, fr := range frames {
		stream = zbx.AppendFrame(stream, []byte(fr.payload), fr.flags)
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"onebyte":  iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"dataerr":  iotest.DataErrReader,
		"timeouts": timeoutOnceReader,
	}
	for name, wrap := range readers {
		r := zbx.NewReader(wrap(bytes.NewReader(stream)), zbx.ReaderOptions{AllowLarge: true})
		var got []frame
		for {
			flags, p, err := r.ReadFrame()
			if name == "timeouts" && isTimeout(err) {
				continue // before the first byte of a frame: retry is allowed
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: frame %d: %v", name, len(got), err)
			}
			got = append(got, frame{flags, string(p)})
		}
		if diff := cmp.Diff(frames, got, cmp.AllowUnexported(frame{})); diff != "" {
			t.Errorf("%s: frames (-want +got):\n%s", name, diff)
		}
	}
}

func isTimeout(err error) bool { return err != nil && os.IsTimeout(err) }

// timeoutOnceReader fails its first Read with a deadline error, as an
// idle connection does before the first byte of a frame arrives.
func timeoutOnceReader(r io.Reader) io.Reader { return &timeoutReader{r: r} }

type timeoutReader struct {
	r     io.Reader
	fired bool
}

func (t *timeoutReader) Read(p []byte) (int, error) {
	if !t.fired {
		t.fired = true
		return 0, os.ErrDeadlineExceeded
	}
	return t.r.Read(p)
}

// TestReadDeadline uses a real deadline on net.Pipe: the error reports a
// timeout through the wrapping, an idle timeout (no byte of a frame yet)
// leaves the Reader usable and a timeout mid-frame does not.
func TestReadDeadline(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	r := zbx.NewReader(server, zbx.ReaderOptions{Timeout: 20 * time.Millisecond})
	checkTimeout := func(what string, err error) {
		t.Helper()
		if err == nil || !os.IsTimeout(err) || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s: got %v, want a timeout (os.IsTimeout and os.ErrDeadlineExceeded)", what, err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("%s: %v is not a net.Error timeout", what, err)
		}
	}

	// Idle: nothing sent.
	_, _, err := r.ReadFrame()
	checkTimeout("idle", err)

	// The Reader sets a fresh deadline per frame, so it works again.
	frame := zbx.AppendFrame(nil, []byte("agent.ping"), 0x01)
	done := make(chan error, 1)
	go func() { _, err := client.Write(frame); done <- err }()
	if _, p, err := r.ReadFrame(); err != nil || string(p) != "agent.ping" {
		t.Fatalf("after an idle timeout: %q, %v", p, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Stalled mid-body: header and 3 bytes, then nothing.
	go func() { _, err := client.Write(frame[:zbx.HeaderLen+3]); done <- err }()
	h, err := r.ReadHeader()
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.ReadBody(h)
	checkTimeout("mid-body", err)
	if errors.Is(err, zbx.ErrTruncated) {
		t.Fatalf("a timeout must not look like truncation: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err2 := r.ReadHeader(); err2 != err {
		t.Fatalf("after a mid-frame timeout: got %v, want the same error again", err2)
	}

	// Stalled mid-header.
	r = zbx.NewReader(server, zbx.ReaderOptions{Timeout: 20 * time.Millisecond})
	go func() { _, err := client.Write([]byte("ZBXD\x01\x10")); done <- err }()
	_, err = r.ReadHeader()
	checkTimeout("mid-header", err)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestWriteFrame(t *testing.T) {
	for _, n := range []int{0, 10, 2 << 20} {
		for _, flags := range []byte{0x01, 0x03} {
			p := bytes.Repeat([]byte("v"), n)
			var buf bytes.Buffer
			if err := zbx.WriteFrame(&buf, p, flags, time.Second); err != nil {
				t.Fatal(err)
			}
			if want := zbx.AppendFrame(nil, p, flags); !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("%d bytes, flags 0x%02x: WriteFrame wrote %d bytes, AppendFrame %d", n, flags, buf.Len(), len(want))
			}
		}
	}

	// A write deadline on a peer that does not read.
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	err := zbx.WriteFrame(server, []byte("1"), zbx.FlagProtocol, 20*time.Millisecond)
	if !os.IsTimeout(err) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a write timeout", err)
	}

	// Writer errors are wrapped.
	err = zbx.WriteFrame(failWriter{}, []byte("1"), zbx.FlagProtocol, 0)
	if !errors.Is(err, errFail) {
		t.Fatalf("got %v, want errFail wrapped", err)
	}
}

var errFail = errors.New("write failed")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFail }
