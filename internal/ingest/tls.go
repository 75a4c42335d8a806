package ingest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
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

// pskExtension is the TLS pre_shared_key extension (RFC 8446): a Zabbix
// agent or sender with TLSConnect=psk offers it (TLS 1.3), or only PSK
// cipher suites (TLS 1.2).
const pskExtension = 41

// offersOnlyPSK reports whether a ClientHello asks for a pre-shared key:
// the pre_shared_key extension, or no cipher suite Go knows (OpenSSL's
// PSK suites are all unknown to crypto/tls).
func offersOnlyPSK(h *tls.ClientHelloInfo) bool {
	if slices.Contains(h.Extensions, pskExtension) {
		return true
	}
	for _, id := range h.CipherSuites {
		for _, cs := range tls.CipherSuites() {
			if cs.ID == id {
				return false
			}
		}
	}
	return len(h.CipherSuites) > 0
}

// accept reads the connection's first byte and, if it opens a TLS
// handshake, completes the handshake. It returns the connection to read
// frames from and what it is (zbxtls.Peer); ok false means the
// connection is done with (closed cleanly or refused, counted).
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
	if s.opts.TLS == nil {
		s.refuse(badTLSNotConfigured, remote, zbxtls.ErrNotConfigured)
		return nil, zbxtls.Peer{}, false
	}
	var psk bool
	cfg := s.opts.TLS.Clone()
	cfg.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		psk = offersOnlyPSK(h)
		return nil, nil
	}
	tc := tls.Server(pc, cfg)
	tc.SetDeadline(time.Now().Add(s.opts.Timeout))
	if err := tc.Handshake(); err != nil {
		if psk {
			s.refuse(badTLSPSK, remote, fmt.Errorf("%w (%v)", zbxtls.ErrPSK, err))
		} else {
			s.refuse(badTLSHandshake, remote, err)
		}
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

// allowed applies host h's tls_accept, tls_issuer and tls_subject to the
// connection; a refusal is logged (throttled) with the host and remote.
func (s *Server) allowed(h *catalog.Host, peer *zbxtls.Peer, remote string) bool {
	// The common case first, without building anything: a plain
	// connection for a host that accepts plain ones.
	if peer.Type == zbxtls.Unencrypted && h.TLS.Accept&zbxtls.Unencrypted != 0 {
		return true
	}
	err := zbxtls.Policy{Accept: int(h.TLS.Accept), Issuer: h.TLS.Issuer, Subject: h.TLS.Subject}.Allow(h.Host, *peer)
	if err == nil {
		return true
	}
	if n, ok := s.throttle.Allow("tls:refused"); ok {
		s.opts.Logger.Warn("trapper request refused by the host's encryption settings", "host", h.Host, "remote", remote, "err", err, "suppressed", n)
	}
	return false
}
