//go:build linux

package icmp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Socket modes.
const (
	ModeAuto  = ""      // raw if permitted, else datagram ICMP
	ModeRaw   = "raw"   // SOCK_RAW: needs root or CAP_NET_RAW
	ModeDgram = "dgram" // SOCK_DGRAM ICMP: needs the group in net.ipv4.ping_group_range
)

// Linux socket options the syscall package does not name.
const (
	solRaw      = 255 // SOL_RAW
	icmpFilter  = 1   // ICMP_FILTER (SOL_RAW)
	icmp6Filter = 1   // ICMP6_FILTER (IPPROTO_ICMPV6)
)

// sock is one ICMP socket of one address family.
type sock struct {
	v6   bool
	raw  bool
	conn net.PacketConn
}

// openSock opens an ICMP socket for one family: raw when mode allows and
// the process may, else a datagram ICMP socket. Raw sockets get a kernel
// filter that passes echo replies only: on loopback every echo request
// we send would otherwise come back to us too, doubling the receiver's
// work. rcvbuf is the receive buffer asked for (replies to a burst of
// sends arrive together; an overflow would read as loss).
func openSock(v6 bool, mode string, rcvbuf int) (*sock, error) {
	family, proto := syscall.AF_INET, syscall.IPPROTO_ICMP
	if v6 {
		family, proto = syscall.AF_INET6, syscall.IPPROTO_ICMPV6
	}
	var fd int
	var err error
	raw := false
	if mode != ModeDgram {
		fd, err = syscall.Socket(family, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, proto)
		raw = err == nil
		if err != nil && (mode == ModeRaw || !(errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES))) {
			return nil, fmt.Errorf("cannot open a raw ICMP socket: %w", err)
		}
	}
	if !raw {
		fd, err = syscall.Socket(family, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, proto)
		if err != nil {
			return nil, fmt.Errorf("cannot open an ICMP socket (raw: not permitted; datagram: %w): run as root, grant CAP_NET_RAW, or put the server's group in net.ipv4.ping_group_range", err)
		}
	}
	ok := false
	defer func() {
		if !ok {
			syscall.Close(fd)
		}
	}()
	// SO_RCVBUFFORCE passes the sysctl cap when we may (root); else the
	// plain option gets what the cap allows.
	if syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, rcvbuf) != nil {
		_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
	}
	// Kernel receive timestamps: a reply's time is when it arrived, not
	// when a busy receiver got round to reading it.
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	if raw {
		if err := setEchoReplyFilter(fd, v6); err != nil {
			return nil, fmt.Errorf("cannot filter the raw ICMP socket: %w", err)
		}
	}
	var sa syscall.Sockaddr = &syscall.SockaddrInet4{}
	if v6 {
		sa = &syscall.SockaddrInet6{}
	}
	if err := syscall.Bind(fd, sa); err != nil {
		return nil, fmt.Errorf("cannot bind the ICMP socket: %w", err)
	}
	ok = true // from here the *os.File owns fd
	f := os.NewFile(uintptr(fd), "icmp")
	conn, err := net.FilePacketConn(f)
	f.Close() // FilePacketConn made its own copy
	if err != nil {
		return nil, fmt.Errorf("cannot use the ICMP socket: %w", err)
	}
	return &sock{v6: v6, raw: raw, conn: conn}, nil
}

// setEchoReplyFilter makes the kernel deliver only echo replies to a raw
// socket. Both filters are bitmasks of types to block.
func setEchoReplyFilter(fd int, v6 bool) error {
	if !v6 {
		mask := ^uint32(1 << 0) // pass type 0, echo reply
		return setsockopt(fd, solRaw, icmpFilter, unsafe.Pointer(&mask), 4)
	}
	var mask [8]uint32
	for i := range mask {
		mask[i] = ^uint32(0)
	}
	mask[129>>5] &^= 1 << (129 & 31) // pass type 129, echo reply
	return setsockopt(fd, syscall.IPPROTO_ICMPV6, icmp6Filter, unsafe.Pointer(&mask), 32)
}

func setsockopt(fd, level, opt int, p unsafe.Pointer, n uintptr) error {
	_, _, e := syscall.Syscall6(syscall.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(p), n, 0)
	if e != 0 {
		return e
	}
	return nil
}

// writeTo sends one ICMP message to dst.
func (s *sock) writeTo(b []byte, dst netip.Addr) error {
	var a net.Addr
	if s.raw {
		a = &net.IPAddr{IP: dst.AsSlice()}
	} else {
		a = &net.UDPAddr{IP: dst.AsSlice()}
	}
	_, err := s.conn.WriteTo(b, a)
	return err
}

// readFrom reads one ICMP message (the IPv4 header stripped), its
// source address and the kernel's receive time (zero if it gave none);
// oob is scratch for the control messages.
func (s *sock) readFrom(b, oob []byte) (int, netip.Addr, time.Time, error) {
	var (
		n, oobn int
		addr    netip.Addr
		err     error
	)
	switch c := s.conn.(type) {
	case *net.IPConn:
		var a *net.IPAddr
		n, oobn, _, a, err = c.ReadMsgIP(b, oob)
		if a != nil {
			addr, _ = netip.AddrFromSlice(a.IP)
		}
		if err == nil && !s.v6 && n >= 20 && b[0]>>4 == 4 {
			// ReadMsgIP, unlike ReadFrom, leaves IPv4's header in.
			if hl := int(b[0]&0x0f) << 2; hl <= n {
				n = copy(b, b[hl:n])
			}
		}
	case *net.UDPConn:
		var ap netip.AddrPort
		n, oobn, _, ap, err = c.ReadMsgUDPAddrPort(b, oob)
		addr = ap.Addr()
	default:
		return 0, netip.Addr{}, time.Time{}, fmt.Errorf("BUG: ICMP socket of type %T", s.conn)
	}
	if err != nil {
		return 0, netip.Addr{}, time.Time{}, err
	}
	return n, addr.Unmap().WithZone(""), rxTime(oob[:oobn]), nil
}

// rxTime finds SCM_TIMESTAMPNS in control messages.
func rxTime(oob []byte) time.Time {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SO_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(ts.Sec, ts.Nsec)
		}
	}
	return time.Time{}
}
