//go:build !linux

package icmp

import (
	"errors"
	"net/netip"
	"time"
)

// Socket modes (see socket.go); ICMP checks need Linux.
const (
	ModeAuto  = ""
	ModeRaw   = "raw"
	ModeDgram = "dgram"
)

type sock struct {
	v6, raw bool
	conn    interface{ Close() error }
}

func openSock(v6 bool, mode string, rcvbuf int) (*sock, error) {
	return nil, errors.New("ICMP checks are implemented for Linux only")
}

func (s *sock) writeTo(b []byte, dst netip.Addr) error { return errors.New("unsupported") }

func (s *sock) readFrom(b, oob []byte) (int, netip.Addr, time.Time, error) {
	return 0, netip.Addr{}, time.Time{}, errors.New("unsupported")
}
