//go:build cgo && !nopsk

package zbxpsk

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// scriptConn is a net.Conn that reads a fixed input in random pieces and
// throws away what is written.
type scriptConn struct {
	in      []byte
	rng     *rand.Rand
	written bytes.Buffer
}

func (c *scriptConn) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.in), 1+c.rng.IntN(512))
	copy(p, c.in[:n])
	c.in = c.in[n:]
	return n, nil
}

func (c *scriptConn) Write(p []byte) (int, error) {
	if c.written.Len() < 1<<16 {
		c.written.Write(p)
	}
	return len(p), nil
}
func (c *scriptConn) Close() error                     { return nil }
func (c *scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }

// firstFlight is what our client sends first (its ClientHello), TLS 1.3
// or 1.2 only.
func firstFlight(t testing.TB, tls12 bool) []byte {
	sc := &scriptConn{rng: rand.New(rand.NewPCG(1, 2))}
	c, err := Client(sc, Key{testIdent, testKey})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tls12 {
		restrict(c, "", "", true)
	}
	c.Handshake() // fails at EOF, after writing the hello
	return bytes.Clone(sc.written.Bytes())
}

// FuzzServerHandshake feeds arbitrary bytes to the server side as the
// client's: never a crash (OpenSSL parses them in C), the handshake
// fails, the key lookup sees at most the identities offered, and the C
// side is freed.
func FuzzServerHandshake(f *testing.F) {
	f.Add(firstFlight(f, false), uint64(1))
	f.Add(firstFlight(f, true), uint64(2))
	if b, err := os.ReadFile(filepath.Join("..", "zbxtls", "testdata", "hello", "agent2_psk.bin")); err == nil {
		f.Add(b, uint64(3))
	}
	if b, err := os.ReadFile(filepath.Join("..", "zbxtls", "testdata", "hello", "sender_psk.bin")); err == nil {
		f.Add(b, uint64(4))
	}
	f.Add([]byte{22, 3, 1, 0, 4, 1, 0, 0, 0}, uint64(5))
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		before := live.Load()
		sc := &scriptConn{in: in, rng: rand.New(rand.NewPCG(seed, 7))}
		s, err := Server(sc, keys(map[string][]byte{testIdent: testKey}))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Handshake(); err == nil {
			t.Fatal("handshake with a scripted client succeeded")
		}
		s.Close()
		if live.Load() != before {
			t.Fatal("C side not freed")
		}
	})
}

// FuzzClientHandshake feeds arbitrary bytes to the client side as the
// server's answer.
func FuzzClientHandshake(f *testing.F) {
	// A real server's first flight for our client's hello.
	rc, rs := tcpPair(f)
	defer rc.Close()
	defer rs.Close()
	go func() {
		s, _ := Server(rs, keys(map[string][]byte{testIdent: testKey}))
		s.Handshake()
	}()
	rc.Write(firstFlight(f, false))
	rc.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 4096)
	n, _ := rc.Read(buf)
	f.Add(buf[:n], uint64(1))
	f.Add([]byte{21, 3, 3, 0, 2, 2, 40}, uint64(2))
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		before := live.Load()
		sc := &scriptConn{in: in, rng: rand.New(rand.NewPCG(seed, 9))}
		c, err := Client(sc, Key{testIdent, testKey})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Handshake(); err == nil {
			t.Fatal("handshake with a scripted server succeeded")
		}
		c.Close()
		if live.Load() != before {
			t.Fatal("C side not freed")
		}
	})
}
