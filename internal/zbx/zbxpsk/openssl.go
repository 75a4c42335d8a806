//go:build cgo && !nopsk

package zbxpsk

/*
#cgo LDFLAGS: -lssl -lcrypto
#include <stdlib.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include "pgpsk.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Available reports whether this build can use pre-shared keys: it can,
// through OpenSSL.
const Available = true

// Library names the TLS library and its version.
func Library() string { return C.GoString(C.OpenSSL_version(C.OPENSSL_VERSION)) }

// bufSize holds one TLS record as it travels: 16 KiB of plaintext plus
// the most any cipher adds, with the record header.
const bufSize = 16<<10 + 2048 + 5

// maxPlain is the most handed to one SSL_write: one record's plaintext,
// so that the write BIO never holds more than one record.
const maxPlain = 16 << 10

// closeNotifyTimeout bounds sending the close_notify alert on Close.
const closeNotifyTimeout = time.Second

// bufs are the network buffers: taken for one read or one drain and
// given back at once, so an idle connection holds none.
var bufs = sync.Pool{New: func() any { return new([bufSize]byte) }}

var (
	ctxOnce [2]sync.Once
	ctxs    [2]*C.SSL_CTX
	ctxErrs [2]error
)

// sslContext is the process's OpenSSL context of one side, made once.
// The contexts are never freed: they live as long as the process.
func sslContext(server bool) (*C.SSL_CTX, error) {
	i := 0
	if server {
		i = 1
	}
	ctxOnce[i].Do(func() {
		var e C.ulong
		var srv C.int
		if server {
			srv = 1
		}
		ctxs[i] = C.pgpsk_ctx_new(srv, &e)
		if ctxs[i] == nil {
			ctxErrs[i] = fmt.Errorf("cannot set up OpenSSL for TLS with a pre-shared key: %s", errString(e))
		}
	})
	return ctxs[i], ctxErrs[i]
}

// live counts the connections whose C side is allocated (leak tests).
var live atomic.Int64

type conn struct {
	raw    net.Conn
	server bool
	lookup Lookup

	// mu is held by Handshake, Read, Write, and by Close while it frees
	// the C side; Close unblocks a holder by closing raw first.
	mu      sync.Mutex
	c       *C.pgpsk_conn // nil once freed
	cleanup runtime.Cleanup
	hsDone  bool
	hsErr   error
	// What the server's key callback saw (under mu: the callback runs
	// inside the handshake).
	identity    string
	seen, found bool
	lookupPanic any

	state  atomic.Pointer[State]
	closed atomic.Bool
}

// Client returns the client side of a PSK connection over raw, offering
// key. raw is closed by the Conn's Close.
func Client(raw net.Conn, key Key) (Conn, error) {
	if err := CheckIdentity(key.Identity); err != nil {
		return nil, err
	}
	if len(key.Secret) == 0 || len(key.Secret) > MaxKeyHex/2 {
		return nil, fmt.Errorf("a pre-shared key has 16 to %d bytes, this one %d", MaxKeyHex/2, len(key.Secret))
	}
	ctx, err := sslContext(false)
	if err != nil {
		return nil, err
	}
	var e C.ulong
	p := C.pgpsk_new(ctx, 0, (*C.char)(unsafe.Pointer(unsafe.StringData(key.Identity))), C.size_t(len(key.Identity)),
		(*C.uchar)(unsafe.Pointer(&key.Secret[0])), C.size_t(len(key.Secret)), &e)
	c, err := newConn(raw, p, false, nil, e)
	if err != nil {
		return nil, err
	}
	c.identity = key.Identity
	return c, nil
}

// Server returns the server side of a PSK connection over raw; lookup
// finds the key of the identity the client presents. raw is closed by
// the Conn's Close.
func Server(raw net.Conn, lookup Lookup) (Conn, error) {
	if lookup == nil {
		return nil, errors.New("BUG: zbxpsk.Server without a Lookup")
	}
	ctx, err := sslContext(true)
	if err != nil {
		return nil, err
	}
	var e C.ulong
	p := C.pgpsk_new(ctx, 1, nil, 0, nil, 0, &e)
	c, err := newConn(raw, p, true, lookup, e)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func newConn(raw net.Conn, p *C.pgpsk_conn, server bool, lookup Lookup, e C.ulong) (*conn, error) {
	if p == nil {
		if e != 0 {
			return nil, fmt.Errorf("cannot start a TLS connection: %s", errString(e))
		}
		return nil, errors.New("cannot start a TLS connection: out of memory")
	}
	live.Add(1)
	c := &conn{raw: raw, server: server, lookup: lookup, c: p}
	// A Conn dropped without Close still frees its C side.
	c.cleanup = runtime.AddCleanup(c, func(p *C.pgpsk_conn) {
		C.pgpsk_free(p)
		live.Add(-1)
	}, p)
	return c, nil
}

//export pgpskServerKey
func pgpskServerKey(h C.uintptr_t, identity *C.char, psk *C.uchar, max C.uint) (n C.uint) {
	c, ok := cgo.Handle(h).Value().(*conn)
	if !ok || identity == nil {
		return 0
	}
	// A panic must not unwind through OpenSSL's frames.
	defer func() {
		if r := recover(); r != nil {
			c.lookupPanic, c.found, n = r, false, 0
		}
	}()
	c.identity, c.seen = C.GoString(identity), true
	key, found := c.lookup(c.identity)
	c.found = found && len(key) > 0 && len(key) <= int(max)
	if !c.found {
		return 0
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(psk)), int(max)), key)
	return C.uint(len(key))
}

func (c *conn) Handshake() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handshake()
}

// handshake runs under mu.
func (c *conn) handshake() error {
	if c.hsDone || c.hsErr != nil {
		return c.hsErr
	}
	if c.c == nil {
		return ErrClosed
	}
	if c.server {
		h := cgo.NewHandle(c)
		C.pgpsk_set_handle(c.c, C.uintptr_t(h))
		defer func() {
			if c.c != nil {
				C.pgpsk_set_handle(c.c, 0)
			}
			h.Delete()
		}()
	}
	for {
		var r C.pgpsk_res
		C.pgpsk_handshake(c.c, &r)
		// Send what it made, an alert included when it failed.
		ferr := c.flush()
		switch {
		case r.ret == 1 && ferr == nil:
			c.hsDone = true
			st := &State{Version: C.GoString(C.pgpsk_version(c.c)), Cipher: C.GoString(C.pgpsk_cipher(c.c)), Identity: c.identity}
			c.state.Store(st)
			return nil
		case r.ret == 1:
			c.hsErr = c.classify(nil, ferr)
		case r.ssl_error == C.SSL_ERROR_WANT_READ && ferr == nil:
			if err := c.fill(); err != nil {
				c.hsErr = c.classify(nil, err)
			}
		case r.ssl_error == C.SSL_ERROR_WANT_READ:
			c.hsErr = c.classify(nil, ferr)
		default:
			c.hsErr = c.classify(&r, nil)
		}
		if c.hsErr != nil {
			return c.hsErr
		}
	}
}

// OpenSSL reasons that mean the two sides' keys differ: the server
// cannot verify the client's binder (TLS 1.3) or Finished (TLS 1.2), or
// the client gets the server's alert about it.
var wrongKeyReasons = []C.int{
	C.SSL_R_BINDER_DOES_NOT_VERIFY, C.SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC, C.SSL_R_DIGEST_CHECK_FAILED,
	C.SSL_R_TLSV1_ALERT_DECRYPT_ERROR, C.SSL_R_SSLV3_ALERT_BAD_RECORD_MAC, C.SSL_R_TLSV1_ALERT_DECRYPTION_FAILED,
}

// unknownIdentityReasons mean the server did not know the identity.
var unknownIdentityReasons = []C.int{C.SSL_R_PSK_IDENTITY_NOT_FOUND, C.SSL_R_TLSV1_ALERT_UNKNOWN_PSK_IDENTITY}

// classify words a failed handshake: from OpenSSL's outcome r, or from
// the network error ioErr.
func (c *conn) classify(r *C.pgpsk_res, ioErr error) error {
	if c.lookupPanic != nil {
		return fmt.Errorf("BUG: the PSK lookup panicked: %v", c.lookupPanic)
	}
	var detail string
	var reason C.int
	if r != nil && r.err != 0 {
		detail, reason = errString(r.err), C.pgpsk_reason(r.err)
	}
	id := c.identity
	if c.server && c.seen && !c.found {
		// OpenSSL's words would be a consequence (with TLS 1.3 it goes
		// on without the key and fails for want of a certificate).
		return &IdentityError{Identity: id, Err: ErrUnknownIdentity}
	}
	for _, w := range wrongKeyReasons {
		if reason == w {
			return &IdentityError{Identity: id, Err: ErrWrongKey, Detail: detail}
		}
	}
	for _, w := range unknownIdentityReasons {
		if reason == w {
			return &IdentityError{Identity: id, Err: ErrUnknownIdentity, Detail: detail}
		}
	}
	switch {
	case ioErr != nil:
		return fmt.Errorf("TLS handshake: %w", ioErr)
	case detail != "":
		return fmt.Errorf("TLS handshake failed: %s", detail)
	}
	return fmt.Errorf("TLS handshake failed (OpenSSL error %d)", int(r.ssl_error))
}

// fill reads once from the network into OpenSSL. Under mu.
func (c *conn) fill() error {
	bp := bufs.Get().(*[bufSize]byte)
	defer bufs.Put(bp)
	n, err := c.raw.Read(bp[:])
	if n > 0 {
		// A read error that came with data shows again on the next read.
		if int(C.pgpsk_feed(c.c, unsafe.Pointer(&bp[0]), C.int(n))) != n {
			return errors.New("cannot buffer what the peer sent: out of memory")
		}
		return nil
	}
	if err == nil {
		return nil
	}
	return err
}

// flush writes what OpenSSL made to the network. Under mu.
func (c *conn) flush() error {
	for C.pgpsk_pending(c.c) > 0 {
		bp := bufs.Get().(*[bufSize]byte)
		n := int(C.pgpsk_drain(c.c, unsafe.Pointer(&bp[0]), C.int(bufSize)))
		if n <= 0 {
			bufs.Put(bp)
			return nil
		}
		_, err := c.raw.Write(bp[:n])
		bufs.Put(bp)
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *conn) Read(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.handshake(); err != nil {
		return 0, err
	}
	if len(b) == 0 {
		return 0, nil
	}
	if c.c == nil {
		return 0, ErrClosed
	}
	n := min(len(b), 1<<30)
	for {
		var r C.pgpsk_res
		C.pgpsk_read(c.c, unsafe.Pointer(&b[0]), C.int(n), &r)
		if r.ret > 0 {
			return int(r.ret), nil
		}
		switch r.ssl_error {
		case C.SSL_ERROR_WANT_READ:
			if err := c.flush(); err != nil {
				return 0, err
			}
			if err := c.fill(); err != nil {
				return 0, err
			}
		case C.SSL_ERROR_ZERO_RETURN:
			return 0, io.EOF
		default:
			return 0, c.opError("read", &r)
		}
	}
}

func (c *conn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.handshake(); err != nil {
		return 0, err
	}
	done := 0
	for done < len(b) {
		if c.c == nil {
			return done, ErrClosed
		}
		n := min(len(b)-done, maxPlain)
		var r C.pgpsk_res
		C.pgpsk_write(c.c, unsafe.Pointer(&b[done]), C.int(n), &r)
		if r.ret <= 0 {
			return done, c.opError("write", &r)
		}
		if err := c.flush(); err != nil {
			return done, err
		}
		done += int(r.ret)
	}
	return done, nil
}

func (c *conn) opError(op string, r *C.pgpsk_res) error {
	if r.err != 0 {
		return fmt.Errorf("TLS %s: %s", op, errString(r.err))
	}
	return fmt.Errorf("TLS %s failed (OpenSSL error %d)", op, int(r.ssl_error))
}

// Close sends close_notify when nothing else holds the connection and
// the handshake is done, closes raw and frees the C side.
func (c *conn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	if c.mu.TryLock() {
		if c.c != nil && c.hsDone {
			C.pgpsk_shutdown(c.c)
			c.raw.SetWriteDeadline(time.Now().Add(closeNotifyTimeout))
			c.flush() // best effort: the peer may be gone
		}
		c.free()
		c.mu.Unlock()
		return c.raw.Close()
	}
	err := c.raw.Close() // ends the Read or Write that holds mu
	c.mu.Lock()
	c.free()
	c.mu.Unlock()
	return err
}

// free releases the C side. Under mu.
func (c *conn) free() {
	if c.c == nil {
		return
	}
	c.cleanup.Stop()
	C.pgpsk_free(c.c)
	c.c = nil
	live.Add(-1)
}

func (c *conn) State() State {
	if s := c.state.Load(); s != nil {
		return *s
	}
	return State{}
}

func (c *conn) LocalAddr() net.Addr                { return c.raw.LocalAddr() }
func (c *conn) RemoteAddr() net.Addr               { return c.raw.RemoteAddr() }
func (c *conn) SetDeadline(t time.Time) error      { return c.raw.SetDeadline(t) }
func (c *conn) SetReadDeadline(t time.Time) error  { return c.raw.SetReadDeadline(t) }
func (c *conn) SetWriteDeadline(t time.Time) error { return c.raw.SetWriteDeadline(t) }

func errString(e C.ulong) string {
	var buf [256]C.char
	C.pgpsk_error_string(e, &buf[0], C.size_t(len(buf)))
	return C.GoString(&buf[0])
}
