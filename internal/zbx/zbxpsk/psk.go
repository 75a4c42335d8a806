package zbxpsk

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"unicode/utf8"
)

// Zabbix 6.0's bounds on a pre-shared key and its identity (host and
// proxy fields tls_psk and tls_psk_identity, agent TLSPSKFile and
// TLSPSKIdentity): the key 32 to 512 hexadecimal digits (16 to 256
// bytes), the identity at most 128 characters. OpenSSL carries at most
// MaxIdentityBytes bytes of identity.
const (
	MinKeyHex        = 32
	MaxKeyHex        = 512
	MaxIdentityRunes = 128
	MaxIdentityBytes = 256
)

// Key is a pre-shared key with its identity. Secret is the key itself
// (the bytes its hexadecimal form stands for); it is never logged nor
// formatted (String and LogValue hide it).
type Key struct {
	Identity string
	Secret   []byte
}

// String names the identity only.
func (k Key) String() string { return fmt.Sprintf("PSK identity %q", k.Identity) }

// Lookup returns the key of a client's identity, or ok false for an
// identity the server does not know. It is called during a server
// handshake, on that connection's goroutine, and must not keep secret's
// memory for the connection: the connection keeps its own copy.
type Lookup func(identity string) (secret []byte, ok bool)

// Conn is a TLS connection with a pre-shared key over a net.Conn. The
// handshake runs on the first Read or Write, or on Handshake. Read and
// Write must not be called concurrently with each other (every caller in
// Peregrine reads a request and writes a reply in turn); Close may be
// called from any goroutine at any time and unblocks them. Deadlines are
// the underlying connection's.
type Conn interface {
	net.Conn
	// Handshake runs the handshake if it has not run yet and returns
	// its outcome (the same error on every call once it failed).
	Handshake() error
	// State is the negotiated protocol version and cipher suite, and
	// the identity (the client's, on both sides); zero before the
	// handshake completes.
	State() State
}

// State describes a completed handshake.
type State struct {
	Version  string // "TLSv1.2", "TLSv1.3"
	Cipher   string // the suite's standard (IANA) name: "TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA256"
	Identity string
}

// Suites are the cipher suites offered and accepted, in the server's
// order of preference: Zabbix 6.0's with OpenSSL (see pgpsk.c).
var Suites = []string{
	"TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256", // TLS 1.3
	"TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA",
	"TLS_PSK_WITH_AES_128_GCM_SHA256", "TLS_PSK_WITH_AES_128_CCM_8", "TLS_PSK_WITH_AES_128_CCM",
	"TLS_PSK_WITH_AES_128_CBC_SHA256", "TLS_PSK_WITH_AES_128_CBC_SHA",
}

var (
	// ErrUnavailable refuses every use of a pre-shared key in a build
	// without OpenSSL (CGO_ENABLED=0 or the nopsk build tag).
	ErrUnavailable = errors.New("TLS with a pre-shared key (PSK) is not available in this build of Peregrine: it was built without cgo or with the nopsk tag; build it with CGO_ENABLED=1 and OpenSSL's headers (Debian: libssl-dev), or use certificates")
	// ErrUnknownIdentity is a handshake refused because the server
	// does not know the client's identity.
	ErrUnknownIdentity = errors.New("unknown PSK identity")
	// ErrWrongKey is a handshake that failed because the two sides'
	// keys for the identity differ.
	ErrWrongKey = errors.New("the pre-shared keys of the two sides differ")
	// ErrClosed is an operation on a closed Conn.
	ErrClosed = net.ErrClosed
)

// IdentityError is a handshake refusal with the identity it concerns
// (the client's, as the server saw it). It wraps ErrUnknownIdentity or
// ErrWrongKey.
type IdentityError struct {
	Identity string
	Err      error
	Detail   string // the TLS library's words, if any
}

func (e *IdentityError) Error() string {
	s := fmt.Sprintf("%v (identity %q)", e.Err, e.Identity)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *IdentityError) Unwrap() error { return e.Err }

// ParseKey decodes a key in Zabbix's form: an even number, 32 to 512, of
// hexadecimal digits (either case). The message never quotes the key.
func ParseKey(s string) ([]byte, error) {
	switch {
	case len(s) < MinKeyHex:
		return nil, fmt.Errorf("a pre-shared key has at least %d hexadecimal digits, this one %d", MinKeyHex, len(s))
	case len(s) > MaxKeyHex:
		return nil, fmt.Errorf("a pre-shared key has at most %d hexadecimal digits, this one %d", MaxKeyHex, len(s))
	case len(s)%2 != 0:
		return nil, fmt.Errorf("a pre-shared key has an even number of hexadecimal digits, this one %d", len(s))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, errors.New("a pre-shared key holds only hexadecimal digits (0-9, a-f, A-F)")
	}
	return b, nil
}

// CheckIdentity refuses an identity Zabbix or OpenSSL cannot carry.
func CheckIdentity(id string) error {
	switch {
	case id == "":
		return errors.New("the PSK identity is empty")
	case !utf8.ValidString(id):
		return errors.New("the PSK identity is not valid UTF-8")
	case utf8.RuneCountInString(id) > MaxIdentityRunes:
		return fmt.Errorf("the PSK identity is longer than %d characters", MaxIdentityRunes)
	case len(id) > MaxIdentityBytes:
		return fmt.Errorf("the PSK identity is longer than %d bytes", MaxIdentityBytes)
	}
	for i := 0; i < len(id); i++ {
		if id[i] == 0 {
			return errors.New("the PSK identity holds a NUL character")
		}
	}
	return nil
}

// Secret is a pre-shared key in Zabbix's hexadecimal form, as configured
// and stored. It never formats: every fmt verb, slog and JSON show
// "<hidden>". Code that must have the digits (storage, ParseKey)
// converts it with string(s), which is easy to find.
type Secret string

const hidden = "<hidden>"

// String hides the key.
func (Secret) String() string { return hidden }

// GoString hides the key.
func (Secret) GoString() string { return hidden }

// Format hides the key from every fmt verb.
func (Secret) Format(f fmt.State, _ rune) { io.WriteString(f, hidden) }

// LogValue hides the key from slog.
func (Secret) LogValue() slog.Value { return slog.StringValue(hidden) }

// MarshalJSON hides the key from encoding/json.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + hidden + `"`), nil }
