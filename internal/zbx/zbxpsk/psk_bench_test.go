//go:build cgo && !nopsk

package zbxpsk

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"testing"
	"time"
)

// Compare runs with benchstat:
//
//	go test -run '^$' -bench 'Handshake|Read' -benchmem -count 6 ./internal/zbx/zbxpsk/ | tee new.txt
//	benchstat old.txt new.txt
//
// Both ends run in the benchmark's process over net.Pipe, so a
// handshake's ns/op is the CPU of both sides (client and server) plus
// the pipe's hand-overs; stack=crypto-tls-cert is Go's certificate TLS
// (ECDSA P-256, what the trapper's certificate side costs) for scale.

func pskPair(ciphers, ciphers13 string, tls12 bool) func(b *testing.B) (interface{ Handshake() error }, interface{ Handshake() error }, func()) {
	return func(b *testing.B) (interface{ Handshake() error }, interface{ Handshake() error }, func()) {
		rc, rs := net.Pipe()
		c, err := Client(rc, Key{testIdent, testKey})
		if err != nil {
			b.Fatal(err)
		}
		if ciphers != "" || ciphers13 != "" || tls12 {
			if err := restrict(c, ciphers, ciphers13, tls12); err != nil {
				b.Fatal(err)
			}
		}
		s, err := Server(rs, keys(map[string][]byte{testIdent: testKey}))
		if err != nil {
			b.Fatal(err)
		}
		// The raw pipe first: net.Pipe has no buffer, so a close_notify
		// nobody reads would hold Close for its timeout.
		return c, s, func() { rc.Close(); rs.Close(); c.Close(); s.Close() }
	}
}

func certPair(b *testing.B) func(b *testing.B) (interface{ Handshake() error }, interface{ Handshake() error }, func()) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		b.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	srv := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	cli := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}
	return func(b *testing.B) (interface{ Handshake() error }, interface{ Handshake() error }, func()) {
		rc, rs := net.Pipe()
		c, s := tls.Client(rc, cli), tls.Server(rs, srv)
		return c, s, func() { rc.Close(); rs.Close(); c.Close(); s.Close() }
	}
}

// BenchmarkHandshake: one complete handshake, both sides.
func BenchmarkHandshake(b *testing.B) {
	cases := []struct {
		name string
		pair func(b *testing.B) (interface{ Handshake() error }, interface{ Handshake() error }, func())
	}{
		{"stack=openssl-psk/tls=1.3/suite=TLS_CHACHA20_POLY1305_SHA256", pskPair("", "", false)},
		{"stack=openssl-psk/tls=1.3/suite=TLS_AES_128_GCM_SHA256", pskPair("", "TLS_AES_128_GCM_SHA256", false)},
		{"stack=openssl-psk/tls=1.2/suite=ECDHE-PSK-AES128-CBC-SHA256", pskPair("ECDHE-PSK-AES128-CBC-SHA256", "", true)},
		{"stack=openssl-psk/tls=1.2/suite=PSK-AES128-GCM-SHA256", pskPair("PSK-AES128-GCM-SHA256", "", true)},
		{"stack=crypto-tls-cert/tls=1.3", certPair(b)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, s, closeAll := tc.pair(b)
				errc := make(chan error, 1)
				go func() { errc <- c.Handshake() }()
				if err := s.Handshake(); err != nil {
					b.Fatal(err)
				}
				if err := <-errc; err != nil {
					b.Fatal(err)
				}
				closeAll()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
		})
	}
}

// BenchmarkRead: the server reads what the client writes on an
// established connection, in the sizes the trapper sees: an agent's
// request key, a zabbix_sender batch of 250 values, a proxy's 1 MiB.
func BenchmarkRead(b *testing.B) {
	for _, size := range []int{64, 14 << 10, 1 << 20} {
		for _, stack := range []string{"openssl-psk/suite=TLS_CHACHA20_POLY1305_SHA256", "openssl-psk/suite=TLS_AES_128_GCM_SHA256", "openssl-psk/suite=ECDHE-PSK-AES128-CBC-SHA256", "crypto-tls-cert/suite=TLS_AES_128_GCM_SHA256"} {
			b.Run("stack="+stack+"/size="+byteSize(size), func(b *testing.B) {
				var pair func(b *testing.B) (interface{ Handshake() error }, interface{ Handshake() error }, func())
				switch stack {
				case "openssl-psk/suite=TLS_CHACHA20_POLY1305_SHA256":
					pair = pskPair("", "TLS_CHACHA20_POLY1305_SHA256", false)
				case "openssl-psk/suite=TLS_AES_128_GCM_SHA256":
					pair = pskPair("", "TLS_AES_128_GCM_SHA256", false)
				case "openssl-psk/suite=ECDHE-PSK-AES128-CBC-SHA256":
					pair = pskPair("ECDHE-PSK-AES128-CBC-SHA256", "", true)
				default:
					pair = certPair(b)
				}
				c, s, closeAll := pair(b)
				defer closeAll()
				errc := make(chan error, 1)
				go func() { errc <- c.Handshake() }()
				if err := s.Handshake(); err != nil {
					b.Fatal(err)
				}
				if err := <-errc; err != nil {
					b.Fatal(err)
				}
				w, r := c.(io.Writer), s.(io.Reader)
				msg := make([]byte, size)
				buf := make([]byte, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					go func() {
						_, err := w.Write(msg)
						errc <- err
					}()
					if _, err := io.ReadFull(r, buf); err != nil {
						b.Fatal(err)
					}
					if err := <-errc; err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return itoa(n>>20) + "MiB"
	case n >= 1<<10:
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
