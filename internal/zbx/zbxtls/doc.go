// Package zbxtls holds what the trapper (package ingest) and the passive
// agent checker (package poll/agent) share about Zabbix's encryption:
// loading the server's certificate material (Zabbix's TLSCAFile,
// TLSCertFile, TLSKeyFile, TLSCRLFile), the tls.Config of each side, the
// first-byte test that tells a TLS connection from a plain one on the
// same port, the host policy (tls_connect, tls_accept, tls_issuer,
// tls_subject) and the formatting of a certificate's issuer and subject
// the way Zabbix compares them.
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
// not implemented: Go's crypto/tls has no TLS-PSK cipher suites and no
// maintained pure-Go implementation was found (see package ingest's
// doc). host.create, host.update and the import refuse a host that asks
// for them (catalog.HostTLS.CheckSupported), so none is configured
// silently unencrypted; a connection that needs PSK (a host stored by an
// older version, a sender offering only PSK) is refused with ErrPSK.
//
// Everything here is safe for concurrent use once built; nothing keeps
// state between connections.
package zbxtls
