//go:build !cgo || nopsk

package zbxpsk

import "net"

// Available reports whether this build can use pre-shared keys: this one
// cannot (built without cgo, or with the nopsk tag).
const Available = false

// Library names the TLS library: none in this build.
func Library() string { return "none (built without cgo or with the nopsk tag)" }

// Client refuses: see ErrUnavailable.
func Client(net.Conn, Key) (Conn, error) { return nil, ErrUnavailable }

// Server refuses: see ErrUnavailable.
func Server(net.Conn, Lookup) (Conn, error) { return nil, ErrUnavailable }
