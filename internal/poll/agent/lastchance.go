package agent

import (
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// lastChance is a check's plain TCP connection as its reply's reader
// sees it. When the read deadline (the check's timeout) fires, it does
// not give up at once: it takes what the socket already holds, without
// waiting, and the reply is read from that. A reply that arrived in
// time but was not read because this process was behind (its goroutine
// waiting for a CPU when the deadline's timer ran) is then a success,
// not a timeout that would blame the interface. Only what the kernel
// already holds counts: nothing is waited for past the timeout. The Go
// runtime checks an expired deadline before it reads at all, so the
// last reads go to the socket itself (syscall.RawConn) with the
// deadline cleared, one non-blocking read(2) each.
//
// It also buffers: the frame reader asks for the 13-byte header first,
// then the payload, which would be two read(2) calls for a reply that
// arrives in one segment; a small read fills buf instead, so a short
// reply costs one.
type lastChance struct {
	net.Conn
	late    bool  // the deadline fired: non-blocking reads only
	timeout error // the deadline's error, returned when the socket is empty
	// lateReads counts reads taken after the deadline (tests).
	lateReads int
	// buf[r:w] is read from the socket but not yet by the caller; err
	// came with it and is returned once it is taken.
	buf  [lastChanceBuf]byte
	r, w int
	err  error
}

// lastChanceBuf is the read buffer's size: a passive reply of a short
// value in one read.
const lastChanceBuf = 256

// Read serves what is buffered, then reads: small reads through the
// buffer, large ones straight into p.
func (l *lastChance) Read(p []byte) (int, error) {
	if l.r < l.w {
		n := copy(p, l.buf[l.r:l.w])
		l.r += n
		return n, nil
	}
	if err := l.err; err != nil {
		l.err = nil
		return 0, err
	}
	if len(p) >= len(l.buf) {
		return l.read(p)
	}
	n, err := l.read(l.buf[:])
	if n <= 0 {
		return 0, err
	}
	m := copy(p, l.buf[:n])
	l.r, l.w, l.err = m, n, err
	if m == n {
		l.r, l.w, l.err = 0, 0, nil
		return m, err
	}
	return m, nil
}

// read reads from the connection until its deadline, then what the
// socket holds.
func (l *lastChance) read(p []byte) (int, error) {
	if !l.late {
		n, err := l.Conn.Read(p)
		if err == nil || !isTimeout(err) {
			return n, err
		}
		if _, ok := l.Conn.(syscall.Conn); !ok || l.Conn.SetReadDeadline(time.Time{}) != nil {
			return n, err
		}
		l.late, l.timeout = true, err
	}
	return l.readNow(p)
}

// readNow is one non-blocking read of what the socket holds: the
// deadline's error when it holds nothing.
func (l *lastChance) readNow(p []byte) (int, error) {
	sc := l.Conn.(syscall.Conn)
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, l.timeout
	}
	var n int
	var rerr error
	if err := raw.Read(func(fd uintptr) bool {
		n, rerr = syscall.Read(int(fd), p)
		return true // one attempt: never wait for readiness
	}); err != nil {
		return 0, l.timeout
	}
	switch {
	case errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EINTR):
		return 0, l.timeout
	case rerr != nil:
		return 0, rerr
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	l.lateReads++
	return n, nil
}
