package ingest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// prefixConn gives back a byte already read from the connection before
// the rest: the first byte, read to tell TLS from plain.
type prefixConn struct {
	net.Conn
	first []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.first) > 0 && len(b) > 0 {
		n := copy(b, p.first)
		p.first = p.first[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// accept reads the connection's first byte and, if it opens a TLS
// handshake, the client's ClientHello, and completes the handshake with
// the stack the client asks for: OpenSSL with a pre-shared key
// (acceptPSK) or Go's crypto/tls with certificates. It returns the
// connection to read frames from and what it is (zbxtls.Peer); ok false
// means the connection is done with (closed cleanly or refused,
// counted).
func (s *Server) accept(c net.Conn, remote string) (net.Conn, zbxtls.Peer, bool) {
	var b [1]byte
	c.SetReadDeadline(time.Now().Add(s.opts.Timeout))
	if _, err := c.Read(b[:]); err != nil {
		if !errors.Is(err, io.EOF) {
			s.refuse(classifyReadErr(err), remote, err)
		}
		return nil, zbxtls.Peer{}, false
	}
	pc := &prefixConn{Conn: c, first: b[:]}
	if !zbxtls.IsTLS(b[0]) {
		return pc, zbxtls.Peer{Type: zbxtls.Unencrypted}, true
	}
	// The ClientHello is read here, under the same deadline, and
	// replayed to the stack that serves the connection.
	raw, hello, err := zbxtls.ReadClientHello(pc)
	if err != nil {
		r := badTLSHandshake
		if !errors.Is(err, zbxtls.ErrNotHello) {
			r = classifyReadErr(err)
		}
		s.refuse(r, remote, fmt.Errorf("cannot read the TLS ClientHello: %w", err))
		return nil, zbxtls.Peer{}, false
	}
	rc := &prefixConn{Conn: c, first: raw}
	if hello.WantsPSK() {
		return s.acceptPSK(rc, remote)
	}
	if s.opts.TLS == nil {
		s.refuse(badTLSNotConfigured, remote, zbxtls.ErrNotConfigured)
		return nil, zbxtls.Peer{}, false
	}
	tc := tls.Server(rc, s.opts.TLS)
	tc.SetDeadline(time.Now().Add(s.opts.Timeout))
	if err := tc.Handshake(); err != nil {
		s.refuse(badTLSHandshake, remote, err)
		return nil, zbxtls.Peer{}, false
	}
	s.m.tlsConnections.Inc()
	st := tc.ConnectionState()
	peer := zbxtls.Peer{Type: zbxtls.Cert}
	if len(st.PeerCertificates) > 0 {
		peer.Cert = st.PeerCertificates[0]
	}
	return tc, peer, true
}

// acceptPSK completes a handshake with a pre-shared key: the key of the
// identity the client presents comes from Options.PSK. A refusal is
// counted by kind (unknown identity, wrong key, unavailable in this
// build, other handshake failures) and logged throttled with the
// remote, the identity and, for a wrong key, the hosts that have it.
func (s *Server) acceptPSK(c net.Conn, remote string) (net.Conn, zbxtls.Peer, bool) {
	var used []byte // the key the handshake used, for the hosts' policy
	lookup := func(identity string) ([]byte, bool) {
		if s.opts.PSK == nil {
			return nil, false
		}
		k, ok := s.opts.PSK(identity)
		used = k
		return k, ok
	}
	pc, err := zbxpsk.Server(c, lookup)
	if err != nil {
		r := badTLSHandshake
		if errors.Is(err, zbxpsk.ErrUnavailable) {
			r = badTLSPSK
		}
		s.refuse(r, remote, err)
		return nil, zbxtls.Peer{}, false
	}
	pc.SetDeadline(time.Now().Add(s.opts.Timeout))
	if err := pc.Handshake(); err != nil {
		pc.Close()
		var ie *zbxpsk.IdentityError
		switch {
		case errors.Is(err, zbxpsk.ErrUnknownIdentity):
			s.refuse(badTLSPSKIdentity, remote, err)
		case errors.As(err, &ie) && errors.Is(err, zbxpsk.ErrWrongKey):
			s.refuse(badTLSPSKKey, remote, fmt.Errorf("%w; hosts with this identity: %s", err, s.pskHostNames(ie.Identity)))
		default:
			s.refuse(classifyHandshakeErr(err), remote, err)
		}
		return nil, zbxtls.Peer{}, false
	}
	st := pc.State()
	s.m.countPSK(st.Cipher)
	return pc, zbxtls.Peer{Type: zbxtls.PSK, PSKIdentity: st.Identity, PSKKey: used}, true
}

// classifyHandshakeErr counts a handshake that timed out as a timeout.
func classifyHandshakeErr(err error) badReason {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return badTimeout
	}
	return badTLSHandshake
}

// pskHostNames names the hosts holding a PSK identity, for a log line.
func (s *Server) pskHostNames(identity string) string {
	hs := s.opts.Catalog.Snapshot().PSKHosts(identity)
	if len(hs) == 0 {
		return "(none now)"
	}
	names := make([]string, 0, min(len(hs), 5))
	for _, h := range hs[:min(len(hs), 5)] {
		names = append(names, strconv.Quote(h.Host))
	}
	if len(hs) > 5 {
		names = append(names, fmt.Sprintf("and %d more", len(hs)-5))
	}
	return strings.Join(names, ", ")
}

// allowed applies host h's tls_accept, tls_issuer, tls_subject,
// tls_psk_identity and tls_psk to the connection: nil, or the refusal,
// logged (throttled) with the host and remote.
func (s *Server) allowed(h *catalog.Host, peer *zbxtls.Peer, remote string) error {
	// The common case first, without building anything: a plain
	// connection for a host that accepts plain ones.
	if peer.Type == zbxtls.Unencrypted && h.Ext().TLS.Accept&zbxtls.Unencrypted != 0 {
		return nil
	}
	p := zbxtls.Policy{Accept: int(h.Ext().TLS.Accept), Issuer: h.Ext().TLS.Issuer, Subject: h.Ext().TLS.Subject}
	if peer.Type == zbxtls.PSK {
		if k, ok := h.Ext().TLS.PSKKey(); ok {
			p.PSKIdentity, p.PSK = k.Identity, k.Secret
		}
	}
	err := p.Allow(h.Host, *peer)
	if err == nil {
		return nil
	}
	if n, ok := s.throttle.Allow("tls:refused"); ok {
		s.opts.Logger.Warn("trapper request refused by the host's encryption settings", "host", h.Host, "remote", remote, "err", err, "suppressed", n)
	}
	return err
}
