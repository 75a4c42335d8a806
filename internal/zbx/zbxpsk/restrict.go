//go:build cgo && !nopsk

package zbxpsk

/*
#include <stdlib.h>
#include <openssl/ssl.h>
#include "pgpsk.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// restrict narrows one connection, before its handshake, to some TLS
// 1.2 suites (OpenSSL names), TLS 1.3 suites, or at most TLS 1.2
// (tls12Only): tests use it to try every suite Zabbix offers. Empty
// strings keep the defaults.
func restrict(cn Conn, ciphers, ciphers13 string, tls12Only bool) error {
	c := cn.(*conn)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil || c.hsDone {
		return errors.New("restrict: connection closed or handshake done")
	}
	cs, cs13 := C.CString(ciphers), C.CString(ciphers13)
	defer C.free(unsafe.Pointer(cs))
	defer C.free(unsafe.Pointer(cs13))
	var maxv C.int
	if tls12Only {
		maxv = C.TLS1_2_VERSION
	}
	if C.pgpsk_restrict(c.c, cs, cs13, maxv) != 1 {
		return errors.New("restrict: OpenSSL refused the suites or version")
	}
	return nil
}
