// Package zbxpsk is TLS with a pre-shared key (Zabbix's "psk" connection
// type, tls_connect 2 / tls_accept bit 2) for the trapper's server side
// and the passive agent checker's client side, over OpenSSL through cgo:
// Go's crypto/tls has no PSK cipher suites.
//
// No Go binding was used: github.com/libp2p/go-openssl (the maintained
// fork of spacemonkeygo/openssl, itself no longer on the module proxy)
// was archived in 2022 and has no PSK API; golang-fips/openssl and
// microsoft/go-crypto-openssl wrap OpenSSL's primitives, not its TLS;
// pion/dtls has PSK for DTLS only. So the C side is ours and kept small
// (pgpsk.c, about 200 lines): one SSL object per connection between two
// memory BIOs, so that Go does every read and write on the socket (the
// runtime's netpoller, the caller's deadlines, no thread blocked in C),
// and C only encrypts, decrypts and runs the handshake.
//
// What Zabbix 6.0 does and this package does too: TLS 1.2 and 1.3, the
// suites Zabbix offers with OpenSSL (Suites: TLS_CHACHA20_POLY1305_SHA256
// and TLS_AES_128_GCM_SHA256 for 1.3; ECDHE-PSK and PSK with AES-128 for
// 1.2, which is all GnuTLS builds of zabbix_sender and zabbix_agentd
// offer), the server's order first, no session tickets or resumption, no
// compression, no renegotiation. The old-style PSK callbacks serve both
// versions (OpenSSL uses them for TLS 1.3 with a SHA-256 suite, which
// both 1.3 suites are).
//
// The C boundary: C never keeps a Go pointer. Buffers are passed for the
// duration of one call; the client's identity and key are copied into
// the C connection at creation and wiped (OPENSSL_cleanse) when it is
// freed. The server's key callback reaches Go through a runtime/cgo
// Handle that exists only while a handshake runs, calls the Lookup, and
// copies the key into OpenSSL's buffer; a panic in the Lookup is
// recovered before it could unwind through OpenSSL. Each operation reads
// OpenSSL's error queue in the same C call that filled it (the queue is
// per thread and a goroutine may change threads between cgo calls).
// Close frees the C side; a Conn dropped without Close is freed by a
// runtime cleanup. Network buffers come from a pool for one read or one
// write, so an idle connection holds only OpenSSL's state (a few KiB,
// SSL_MODE_RELEASE_BUFFERS).
//
// Secrets: a key is never formatted (Key.String names the identity) and
// never appears in an error; identities do, as Zabbix logs them.
//
// Errors: a server handshake refused for an identity it does not know
// is an *IdentityError wrapping ErrUnknownIdentity; one whose keys differ
// (the TLS 1.3 binder or the TLS 1.2 Finished does not verify, or the
// peer's alert saying so) wraps ErrWrongKey; network errors are wrapped
// as they came (a timeout stays a net.Error with Timeout()).
//
// Builds: with cgo (the default where a C compiler is found) it needs
// OpenSSL 1.1.1 or later with its headers (Debian: libssl-dev) and links
// libssl and libcrypto dynamically. Built with CGO_ENABLED=0 or the
// nopsk tag it compiles without them: Available is false and Client and
// Server return ErrUnavailable, which names the cause; the rest of
// Peregrine then refuses PSK configurations and PSK clients with it.
//
// Concurrency: a Conn's Read and Write take turns (one mutex, held while
// waiting for the network); Close may be called from any goroutine and
// unblocks them. Everything else is safe for concurrent use.
package zbxpsk
