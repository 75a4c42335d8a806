package zbxtls

import (
	"crypto/x509"
	"fmt"
)

// Policy is a host's encryption settings (Zabbix host fields). Accept 0
// is read as Unencrypted, the Zabbix default.
type Policy struct {
	Accept  int    // tls_accept: bitmask of Unencrypted, PSK, Cert
	Issuer  string // tls_issuer: required issuer of the peer's certificate, "" any
	Subject string // tls_subject: required subject, "" any
}

// Peer is what a connection offers: its type and, for Cert, the client
// certificate (already verified against the CA by the handshake).
type Peer struct {
	Type int
	Cert *x509.Certificate
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
	return nil
}
