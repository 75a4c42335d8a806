// Package zbxtls holds what the trapper (package ingest) and the passive
// agent checker (package poll/agent) share about Zabbix's encryption:
// loading the server's certificate material (Zabbix's TLSCAFile,
// TLSCertFile, TLSKeyFile, TLSCRLFile), the tls.Config of each side, the
// first-byte test that tells a TLS connection from a plain one on the
// same port, the ClientHello that tells a client wanting a pre-shared
// key from one with a certificate, the host policy (tls_connect,
// tls_accept, tls_issuer, tls_subject, tls_psk_identity, tls_psk) and
// the formatting of a certificate's issuer and subject the way Zabbix
// compares them.
//
// Zabbix checks a peer's certificate against the CA file only: no host
// name check (agents are addressed by IP as often as by name), so the
// client side verifies the chain itself instead of using Go's host-name
// verification. A distinguished name is formatted as RFC 4514 does (last
// RDN first, "," between RDNs, "+" inside a multi-valued one, special
// characters escaped with a backslash) with OpenSSL's short attribute
// names (CN, OU, O, L, ST, C, DC, UID, emailAddress, ...), which is what
// Zabbix's TLSServerCertSubject and a host's tls_subject are compared to,
// byte for byte.
//
// Pre-shared keys (Zabbix's "psk", tls_connect 2 / tls_accept bit 2) are
// package zbxpsk's: Go's crypto/tls has none, so they run over OpenSSL.
// This package tells the two apart before the handshake
// (ReadClientHello and Hello.WantsPSK: a client offering the TLS 1.3
// pre_shared_key extension, or only PSK suites, wants a key) and holds
// the policy both share (Policy, Peer: a PSK client's identity and key
// must be the host's).
//
// Everything here is safe for concurrent use once built; nothing keeps
// state between connections.
package zbxtls
