package zbxtls

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The ClientHellos of the real programs (testdata/hello, recorded from
// Debian's 6.0.14 packages: zabbix_sender is built with GnuTLS, agent 2
// with OpenSSL 3), parsed, and sorted into PSK and certificate clients.
func TestReadClientHelloRecorded(t *testing.T) {
	f := func(file string, wantPSK bool, wantSuites []uint16) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", "hello", file))
		if err != nil {
			t.Fatal(err)
		}
		// Anything after the hello stays unread.
		in := append(slices.Clone(b), "trailing"...)
		r := bytes.NewReader(in)
		raw, h, err := ReadClientHello(r)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !bytes.Equal(raw, b) || r.Len() != len("trailing") {
			t.Errorf("%s: read %d bytes, the hello has %d; %d left", file, len(raw), len(b), r.Len())
		}
		if h.WantsPSK() != wantPSK {
			t.Errorf("%s: WantsPSK %v, want %v (suites %x, extensions %v)", file, !wantPSK, wantPSK, h.Suites, h.Extensions)
		}
		if wantSuites != nil {
			if d := cmp.Diff(wantSuites, h.Suites); d != "" {
				t.Errorf("%s: suites (-want +got):\n%s", file, d)
			}
		}
		// Byte by byte, the same.
		raw2, h2, err := ReadClientHello(iotest.OneByteReader(bytes.NewReader(b)))
		if err != nil || !bytes.Equal(raw2, b) || !slices.Equal(h2.Suites, h.Suites) || !slices.Equal(h2.Extensions, h.Extensions) {
			t.Errorf("%s one byte at a time: %v", file, err)
		}
	}
	// GnuTLS, TLS 1.2 only: ECDHE-PSK-AES128-CBC-SHA256, ECDHE-PSK-AES128-CBC-SHA,
	// PSK-AES128-GCM-SHA256, PSK-AES128-CBC-SHA256, PSK-AES128-CBC-SHA.
	f("sender_psk.bin", true, []uint16{0xc037, 0xc035, 0x00a8, 0x00ae, 0x008c})
	// OpenSSL: the two TLS 1.3 suites, the seven PSK suites, the
	// renegotiation SCSV; and the pre_shared_key extension.
	f("agent2_psk.bin", true, []uint16{0x1303, 0x1301, 0xc037, 0xc035, 0x00a8, 0xc0a8, 0xc0a4, 0x00ae, 0x008c, 0x00ff})
	f("sender_cert.bin", false, nil)
	f("agent2_cert.bin", false, nil)
}

// Go's own client hello is a certificate client's.
func TestReadClientHelloGo(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		tls.Client(b, &tls.Config{InsecureSkipVerify: true}).Handshake()
		b.Close()
	}()
	a.SetDeadline(time.Now().Add(5 * time.Second))
	_, h, err := ReadClientHello(a)
	if err != nil {
		t.Fatal(err)
	}
	if h.WantsPSK() || len(h.Suites) == 0 || len(h.Extensions) == 0 {
		t.Errorf("Go's hello: %+v", h)
	}
}

func TestWantsPSK(t *testing.T) {
	f := func(name string, h Hello, want bool) {
		t.Helper()
		if h.WantsPSK() != want {
			t.Errorf("%s: WantsPSK = %v", name, !want)
		}
	}
	f("only PSK", Hello{Suites: []uint16{0x008c}}, true)
	f("PSK and GREASE and SCSV", Hello{Suites: []uint16{0x2a2a, 0x008c, 0x00ff, 0x5600}}, true)
	f("PSK and a certificate suite", Hello{Suites: []uint16{0x008c, 0xc02f}}, false)
	f("only TLS 1.3 suites", Hello{Suites: []uint16{0x1301}}, false)
	f("TLS 1.3 with pre_shared_key", Hello{Suites: []uint16{0x1301, 0xc02f}, Extensions: []uint16{10, 41}}, true)
	f("nothing", Hello{}, false)
}

func TestReadClientHelloRefusals(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "hello", "sender_psk.bin"))
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, in []byte, want error) {
		t.Helper()
		_, _, err := ReadClientHello(bytes.NewReader(in))
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	f("plain frame", []byte("ZBXD\x01\x05\x00\x00\x00\x00\x00\x00\x00hello"), ErrNotHello)
	f("alert record", []byte{21, 3, 3, 0, 2, 2, 40}, ErrNotHello)
	f("empty record", []byte{22, 3, 1, 0, 0}, ErrNotHello)
	f("record too long", []byte{22, 3, 1, 0x40, 0x01}, ErrNotHello)
	f("server hello", []byte{22, 3, 3, 0, 4, 2, 0, 0, 0}, ErrNotHello)
	f("huge hello", []byte{22, 3, 1, 0, 4, 1, 0x10, 0, 0}, ErrNotHello)
	f("cut in the header", good[:3], io.ErrUnexpectedEOF)
	f("cut in the body", good[:len(good)-1], io.ErrUnexpectedEOF)
	f("nothing", nil, io.EOF)
	bad := slices.Clone(good)
	bad[5+4+2+32] = 200 // a session id longer than the message
	f("bad session id", bad, ErrNotHello)
	// A hello split over records of 1 byte each, beyond the bound.
	var many []byte
	for range MaxHelloSize + 10 {
		many = append(many, 22, 3, 1, 0, 1, 1)
	}
	f("endless records", many, ErrNotHello)
}

// A hello split over several records (allowed by TLS) parses as one.
func TestReadClientHelloFragmented(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "hello", "agent2_psk.bin"))
	if err != nil {
		t.Fatal(err)
	}
	body := good[5:]
	var frag []byte
	for i := 0; i < len(body); i += 7 {
		n := min(7, len(body)-i)
		frag = append(frag, 22, 3, 1, 0, byte(n))
		frag = append(frag, body[i:i+n]...)
	}
	raw, h, err := ReadClientHello(bytes.NewReader(frag))
	if err != nil || !bytes.Equal(raw, frag) || !h.WantsPSK() {
		t.Errorf("fragmented: %v, %d of %d bytes, %+v", err, len(raw), len(frag), h)
	}
}

// FuzzReadClientHello: arbitrary input and arbitrary splits; never a
// panic, raw is a prefix of the input, and a parsed hello reparses the
// same from raw.
func FuzzReadClientHello(f *testing.F) {
	for _, n := range []string{"sender_psk.bin", "agent2_psk.bin", "sender_cert.bin", "agent2_cert.bin"} {
		b, err := os.ReadFile(filepath.Join("testdata", "hello", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint64(1))
	}
	f.Add([]byte{22, 3, 1, 0, 4, 1, 0, 0, 0}, uint64(7))
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 1))
		raw, h, err := ReadClientHello(&splitReader{b: in, rng: rng})
		if !bytes.HasPrefix(in, raw) {
			t.Fatalf("raw (%d bytes) is not a prefix of the input (%d bytes)", len(raw), len(in))
		}
		if err != nil {
			return
		}
		_, h2, err := ReadClientHello(bytes.NewReader(raw))
		if err != nil || !slices.Equal(h.Suites, h2.Suites) || !slices.Equal(h.Extensions, h2.Extensions) {
			t.Fatalf("reparse: %v", err)
		}
		h.WantsPSK()
	})
}

// splitReader hands out its bytes in random pieces.
type splitReader struct {
	b   []byte
	rng *rand.Rand
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.b), 1+r.rng.IntN(64))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}
