package zbxtls

import (
	"crypto/subtle"
	"crypto/x509"
	"fmt"
)

// Policy is a host's encryption settings (Zabbix host fields). Accept 0
// is read as Unencrypted, the Zabbix default.
type Policy struct {
	Accept  int    // tls_accept: bitmask of Unencrypted, PSK, Cert
	Issuer  string // tls_issuer: required issuer of the peer's certificate, "" any
	Subject string // tls_subject: required subject, "" any
	// PSKIdentity and PSK are the host's pre-shared key (tls_psk_identity
	// and tls_psk decoded).
	PSKIdentity string
	PSK         []byte
}

// Peer is what a connection offers: its type and, for Cert, the client
// certificate (already verified against the CA by the handshake); for
// PSK, the identity the client presented and the key the handshake used
// (never formatted).
type Peer struct {
	Type        int
	Cert        *x509.Certificate
	PSKIdentity string
	PSKKey      []byte
}

// Allow reports whether a request of peer for host may be processed
// under p. The message names the host as Zabbix's does, so an operator
// reading either server's log recognises it.
func (p Policy) Allow(host string, peer Peer) error {
	accept := p.Accept
	if accept == 0 {
		accept = Unencrypted
	}
	if accept&peer.Type == 0 {
		return fmt.Errorf("connection of type %q is not allowed for host %q", TypeName(peer.Type), host)
	}
	if peer.Type == Cert {
		if peer.Cert == nil {
			return fmt.Errorf("connection of type %q without a client certificate for host %q", TypeName(peer.Type), host)
		}
		if err := CheckPeer(peer.Cert, p.Issuer, p.Subject); err != nil {
			return fmt.Errorf("%w for host %q", err, host)
		}
	}
	if peer.Type == PSK {
		// Zabbix compares the identity. Hosts may share an identity with
		// different keys, and the handshake used one of them: the key
		// must be this host's too.
		if peer.PSKIdentity != p.PSKIdentity {
			return fmt.Errorf("PSK identity %q is not the one of host %q", peer.PSKIdentity, host)
		}
		if len(p.PSK) == 0 || subtle.ConstantTimeCompare(peer.PSKKey, p.PSK) != 1 {
			return fmt.Errorf("the key of PSK identity %q is not the one of host %q (hosts share the identity with different keys)", peer.PSKIdentity, host)
		}
	}
	return nil
}
