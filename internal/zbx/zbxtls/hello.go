package zbxtls

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Hello is what the trapper needs of a client's TLS ClientHello to pick
// the TLS stack before the handshake: the cipher suites and the
// extension types offered.
type Hello struct {
	Suites     []uint16
	Extensions []uint16
}

// MaxHelloSize bounds the ClientHello ReadClientHello reads (handshake
// message with its header). Zabbix's agents and senders send 200 to 600
// bytes; a browser with post-quantum key shares about 2 KB.
const MaxHelloSize = 16 << 10

// ErrNotHello is input that does not start with a well-formed TLS
// ClientHello.
var ErrNotHello = errors.New("not a TLS ClientHello")

// Record and handshake constants (RFC 8446).
const (
	recordHandshake    = 22
	handshakeHello     = 1
	recordHeaderLen    = 5
	maxRecordPlaintext = 16 << 10
	extPreSharedKey    = 41
)

// ReadClientHello reads from r the TLS records that hold the client's
// first handshake message and parses it. It returns every byte it read
// (to be replayed to the TLS stack that serves the connection) and reads
// nothing more than those records. Input that is not a ClientHello, or
// one larger than MaxHelloSize, is refused with ErrNotHello; a read
// error is returned as it came, with what was read so far.
func ReadClientHello(r io.Reader) (raw []byte, h Hello, err error) {
	var msg []byte
	var hdr [recordHeaderLen]byte
	for {
		if m, err := io.ReadFull(r, hdr[:]); err != nil {
			return append(raw, hdr[:m]...), h, err
		}
		n := int(binary.BigEndian.Uint16(hdr[3:]))
		if hdr[0] != recordHandshake || hdr[1] != 3 || n == 0 || n > maxRecordPlaintext {
			return append(raw, hdr[:]...), h, fmt.Errorf("%w: record type %d, version %d.%d, length %d", ErrNotHello, hdr[0], hdr[1], hdr[2], n)
		}
		if len(msg)+n > MaxHelloSize+4 {
			return append(raw, hdr[:]...), h, fmt.Errorf("%w: larger than %d bytes", ErrNotHello, MaxHelloSize)
		}
		start := len(raw)
		raw = append(raw, hdr[:]...)
		raw = slices.Grow(raw, n)[:start+recordHeaderLen+n]
		if m, err := io.ReadFull(r, raw[start+recordHeaderLen:]); err != nil {
			return raw[:start+recordHeaderLen+m], h, err
		}
		msg = append(msg, raw[start+recordHeaderLen:]...)
		if len(msg) < 4 {
			continue
		}
		if msg[0] != handshakeHello {
			return raw, h, fmt.Errorf("%w: handshake message type %d", ErrNotHello, msg[0])
		}
		size := int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3])
		if size > MaxHelloSize {
			return raw, h, fmt.Errorf("%w: announces %d bytes, more than %d", ErrNotHello, size, MaxHelloSize)
		}
		if len(msg) < 4+size {
			continue
		}
		h, err = parseHello(msg[4 : 4+size])
		return raw, h, err
	}
}

// parseHello parses a ClientHello body (RFC 8446 4.1.2).
func parseHello(b []byte) (Hello, error) {
	var h Hello
	p := parser{b: b}
	p.skip(2 + 32) // legacy_version, random
	p.skip(int(p.u8()))
	suites := p.vec16()
	if p.bad || len(suites) < 2 || len(suites)%2 != 0 {
		return h, fmt.Errorf("%w: bad cipher suites", ErrNotHello)
	}
	h.Suites = make([]uint16, 0, len(suites)/2)
	for i := 0; i < len(suites); i += 2 {
		h.Suites = append(h.Suites, binary.BigEndian.Uint16(suites[i:]))
	}
	if n := int(p.u8()); n == 0 || p.bad {
		return h, fmt.Errorf("%w: no compression methods", ErrNotHello)
	} else {
		p.skip(n)
	}
	if p.done() {
		return h, nil // no extensions (TLS 1.2 allows it)
	}
	ext := parser{b: p.vec16()}
	if p.bad || !p.done() {
		return h, fmt.Errorf("%w: bad extensions", ErrNotHello)
	}
	for !ext.done() {
		t := ext.u16()
		ext.vec16()
		if ext.bad {
			return h, fmt.Errorf("%w: bad extension", ErrNotHello)
		}
		h.Extensions = append(h.Extensions, t)
	}
	return h, nil
}

// parser reads big-endian fields; past the end it sets bad and returns
// zeros.
type parser struct {
	b   []byte
	bad bool
}

func (p *parser) done() bool { return !p.bad && len(p.b) == 0 }

func (p *parser) take(n int) []byte {
	if p.bad || n > len(p.b) {
		p.bad = true
		return nil
	}
	v := p.b[:n]
	p.b = p.b[n:]
	return v
}

func (p *parser) skip(n int) { p.take(n) }

func (p *parser) u8() byte {
	if v := p.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (p *parser) u16() uint16 {
	if v := p.take(2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (p *parser) vec16() []byte { return p.take(int(p.u16())) }

// WantsPSK reports whether the client asks for a pre-shared key: it
// offers the pre_shared_key extension (TLS 1.3; Zabbix agent 2 and
// OpenSSL builds), or PSK cipher suites and no suite for certificates
// (TLS 1.2; GnuTLS builds of zabbix_sender and zabbix_agentd offer only
// ECDHE-PSK and PSK suites). TLS 1.3 suites, signalling values and
// GREASE say neither.
func (h *Hello) WantsPSK() bool {
	if slices.Contains(h.Extensions, extPreSharedKey) {
		return true
	}
	psk, other := false, false
	for _, s := range h.Suites {
		switch {
		case IsPSKSuite(s):
			psk = true
		case s>>8 == 0x13, s == 0x00ff, s == 0x5600, s>>8 == s&0xff && s&0x0f == 0x0a:
			// TLS 1.3 suites, the renegotiation and fallback
			// signalling values, GREASE (RFC 8701).
		default:
			other = true
		}
	}
	return psk && !other
}

// IsPSKSuite reports whether a TLS 1.2 cipher suite authenticates with a
// pre-shared key (PSK, DHE-PSK, ECDHE-PSK, RSA-PSK suites of RFC 4279,
// 4785, 5487, 5489, 6209, 6367, 6655, 7905 and 8442).
func IsPSKSuite(s uint16) bool {
	switch {
	case 0x002c <= s && s <= 0x002e, // NULL
		0x008a <= s && s <= 0x0095, // RFC 4279
		0x00a8 <= s && s <= 0x00b9, // RFC 5487
		0xc033 <= s && s <= 0xc03b, // RFC 5489 ECDHE_PSK
		0xc064 <= s && s <= 0xc071, // RFC 6209 ARIA
		0xc08e <= s && s <= 0xc09b, // RFC 6367 Camellia
		0xc0a4 <= s && s <= 0xc0ab, // RFC 6655 CCM
		0xccab <= s && s <= 0xccae, // RFC 7905 ChaCha20
		0xd001 <= s && s <= 0xd005: // RFC 8442 ECDHE_PSK AEAD
		return true
	}
	return false
}
