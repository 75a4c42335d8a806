//go:build !cgo || nopsk

package zbxpsk

import (
	"errors"
	"net"
	"testing"
)

// The build without OpenSSL refuses both sides with ErrUnavailable,
// whose message says how to get PSK.
func TestUnavailable(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Available {
		t.Fatal("Available in a build without cgo")
	}
	if _, err := Client(a, Key{Identity: "x", Secret: make([]byte, 16)}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Client: %v", err)
	}
	if _, err := Server(b, func(string) ([]byte, bool) { return nil, false }); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Server: %v", err)
	}
}
