//go:build cgo && !noodbc

package odbc

// The ODBC calls the binding's api package does not wrap: a query run
// directly (SQLPrepare and SQLExecute would make psqlODBC word its
// errors otherwise than for Zabbix), a column's label, and whether a
// connection is dead.

/*
#cgo LDFLAGS: -lodbc
#include <sql.h>
#include <sqlext.h>
*/
import "C"

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/alexbrainman/odbc/api"
)

// Built is true in a build with unixODBC.
const Built = true

// unixODBC is the driver over the unixODBC driver manager: one ODBC
// environment, a connection handle per connection.
type unixODBC struct{ env api.SQLHENV }

func newDriver() (driver, error) {
	var out api.SQLHANDLE
	if r := api.SQLAllocHandle(api.SQL_HANDLE_ENV, nil, &out); !succeeded(r) {
		return nil, &dbError{stage: stageEnv, diag: "[" + rcName(r) + "]"}
	}
	env := api.SQLHENV(out)
	if r := api.SQLSetEnvUIntPtrAttr(env, api.SQL_ATTR_ODBC_VERSION, api.SQL_OV_ODBC3, 0); !succeeded(r) {
		d, _ := diagnose(api.SQL_HANDLE_ENV, api.SQLHANDLE(env), r)
		api.SQLFreeHandle(api.SQL_HANDLE_ENV, api.SQLHANDLE(env))
		return nil, &dbError{stage: stageEnv, diag: "cannot set the ODBC version: " + d}
	}
	return &unixODBC{env: env}, nil
}

func (d *unixODBC) close() { api.SQLFreeHandle(api.SQL_HANDLE_ENV, api.SQLHANDLE(d.env)) }

// sqlAttrLoginTimeout is SQL_ATTR_LOGIN_TIMEOUT (the binding does not
// name it): seconds a connect may take, 0 for the driver's default.
const sqlAttrLoginTimeout = 103

func (d *unixODBC) open(src string, loginTimeout time.Duration) (dbConn, error) {
	var out api.SQLHANDLE
	if r := api.SQLAllocHandle(api.SQL_HANDLE_DBC, api.SQLHANDLE(d.env), &out); !succeeded(r) {
		diag, _ := diagnose(api.SQL_HANDLE_ENV, api.SQLHANDLE(d.env), r)
		return nil, &dbError{stage: stageConnect, diag: diag}
	}
	h := api.SQLHDBC(out)
	fail := func(r api.SQLRETURN, what string) error {
		diag, _ := diagnose(api.SQL_HANDLE_DBC, api.SQLHANDLE(h), r)
		api.SQLFreeHandle(api.SQL_HANDLE_DBC, api.SQLHANDLE(h))
		return &dbError{stage: stageConnect, diag: what + diag}
	}
	// Whole seconds, rounded up, and one more: the driver's own bound
	// of the connect, which no cancel can cut short. The check's
	// deadline comes first and reports the timeout in Peregrine's words;
	// the driver's ("timeout expired"), racing it at the same second,
	// would otherwise win at random. This bound only frees the worker.
	secs := max(1, int((loginTimeout+time.Second-1)/time.Second)) + 1
	if r := api.SQLSetConnectUIntPtrAttr(h, sqlAttrLoginTimeout, uintptr(secs), api.SQL_IS_UINTEGER); !succeeded(r) {
		return nil, fail(r, "cannot set the login timeout: ")
	}
	ws := utf16.Encode([]rune(src + "\x00"))
	r := api.SQLDriverConnect(h, 0, (*api.SQLWCHAR)(&ws[0]), api.SQL_NTS, nil, 0, nil, api.SQL_DRIVER_NOPROMPT)
	clear(ws) // the password
	if !succeeded(r) {
		return nil, fail(r, "")
	}
	return &uconn{dbc: h, chunk: make([]uint16, 4096)}, nil
}

// uconn is one connection. Its scratch buffers serve one query at a
// time.
type uconn struct {
	dbc   api.SQLHDBC
	chunk []uint16 // SQLGetData's buffer
	val   []byte   // a column's text
	wq    []uint16 // the query in UTF-16
	// mu guards stmt, the statement running (nil when none), so that
	// cancel never reaches a freed handle.
	mu   sync.Mutex
	stmt api.SQLHSTMT
}

func (u *uconn) cancel() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stmt != nil {
		api.SQLCancel(u.stmt)
	}
}

// dead asks the driver whether the connection is lost
// (SQL_ATTR_CONNECTION_DEAD), after a failed call.
func (u *uconn) dead() bool {
	var v C.SQLUINTEGER
	r := C.SQLGetConnectAttr(C.SQLHDBC(unsafe.Pointer(u.dbc)), C.SQL_ATTR_CONNECTION_DEAD, C.SQLPOINTER(unsafe.Pointer(&v)), 0, nil)
	return succeeded(api.SQLRETURN(r)) && v == C.SQL_CD_TRUE
}

func (u *uconn) close() {
	api.SQLDisconnect(u.dbc)
	api.SQLFreeHandle(api.SQL_HANDLE_DBC, api.SQLHANDLE(u.dbc))
}

func (u *uconn) query(ctx context.Context, q string, s *shaper) error {
	var out api.SQLHANDLE
	if r := api.SQLAllocHandle(api.SQL_HANDLE_STMT, api.SQLHANDLE(u.dbc), &out); !succeeded(r) {
		diag, broken := diagnose(api.SQL_HANDLE_DBC, api.SQLHANDLE(u.dbc), r)
		return &dbError{stage: stageExecute, diag: diag, broken: broken || r == api.SQL_INVALID_HANDLE}
	}
	st := api.SQLHSTMT(out)
	u.mu.Lock()
	u.stmt = st
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		api.SQLFreeHandle(api.SQL_HANDLE_STMT, api.SQLHANDLE(st))
		u.stmt = nil
		u.mu.Unlock()
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	stmtErr := func(stage int, r api.SQLRETURN) error {
		diag, broken := diagnose(api.SQL_HANDLE_STMT, api.SQLHANDLE(st), r)
		return &dbError{stage: stage, diag: diag, broken: broken || u.dead()}
	}
	u.wq = appendUTF16(u.wq[:0], q)
	r := api.SQLRETURN(C.SQLExecDirectW(C.SQLHSTMT(unsafe.Pointer(st)), (*C.SQLWCHAR)(unsafe.Pointer(&u.wq[0])), C.SQLINTEGER(len(u.wq))))
	if !succeeded(r) && r != api.SQL_NO_DATA {
		return stmtErr(stageExecute, r)
	}
	var ncols api.SQLSMALLINT
	if r := api.SQLNumResultCols(st, &ncols); !succeeded(r) {
		return stmtErr(stageColumns, r)
	}
	if ncols == 0 {
		s.noResult = true // DDL, UPDATE: no rows
		return nil
	}
	n := s.columns(int(ncols))
	err := s.setLabels(n, func(i int) (string, error) {
		name := u.chunk[:1024]
		var l C.SQLSMALLINT
		r := C.SQLColAttributeW(C.SQLHSTMT(unsafe.Pointer(st)), C.SQLUSMALLINT(i+1), C.SQL_DESC_LABEL,
			C.SQLPOINTER(unsafe.Pointer(&name[0])), C.SQLSMALLINT(len(name)*2), &l, nil)
		if api.SQLRETURN(r) != api.SQL_SUCCESS || int(l)/2 >= len(name) {
			return "", shapeError(fmt.Sprintf("Cannot obtain column #%d name.", i+1))
		}
		return string(utf16.Decode(name[:int(l)/2])), nil
	})
	if err != nil {
		return err
	}
	for {
		r := api.SQLFetch(st)
		if r == api.SQL_NO_DATA {
			return nil
		}
		if !succeeded(r) {
			return stmtErr(stageFetch, r)
		}
		s.beginRow()
		for i := range n {
			null, err := u.column(st, i, s.budget())
			if err != nil {
				return err
			}
			if err := s.value(u.val, null); err != nil {
				return err
			}
		}
		if !s.endRow() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// column reads column i of the current row as text into u.val (UTF-16
// from the driver, in chunks), up to budget bytes; null reports NULL.
func (u *uconn) column(st api.SQLHSTMT, i, budget int) (null bool, err error) {
	u.val = u.val[:0]
	var hi uint16 // a high surrogate ending the previous chunk
	for {
		var n api.SQLLEN
		r := api.SQLGetData(st, api.SQLUSMALLINT(i+1), api.SQL_C_WCHAR, api.SQLPOINTER(unsafe.Pointer(&u.chunk[0])), api.SQLLEN(len(u.chunk)*2), &n)
		switch {
		case r == api.SQL_NO_DATA:
			return false, nil
		case !succeeded(r):
			diag, broken := diagnose(api.SQL_HANDLE_STMT, api.SQLHANDLE(st), r)
			return false, &dbError{stage: stageFetch, diag: diag, broken: broken || u.dead()}
		case n == api.SQL_NULL_DATA:
			return true, nil
		}
		// The rest fits when the length says so; else the buffer less
		// its NUL is full and more follows (01004, data truncated).
		units := len(u.chunk) - 1
		complete := n != api.SQL_NO_TOTAL && int(n)/2 <= units
		switch {
		case complete:
			units = int(n) / 2
		case r == api.SQL_SUCCESS: // complete, length unknown: up to the NUL
			units, complete = max(0, slices.Index(u.chunk[:units+1], 0)), true
		}
		u.val = decodeUTF16(u.val, u.chunk[:units], &hi)
		if len(u.val) > budget {
			return false, errTooLarge{budget}
		}
		if complete {
			if hi != 0 {
				u.val = append(u.val, '?')
			}
			return false, nil
		}
	}
}

// appendUTF16 appends q in UTF-16, without a terminating NUL.
func appendUTF16(dst []uint16, q string) []uint16 {
	for _, r := range q {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			dst = append(dst, uint16(r1), uint16(r2))
			continue
		}
		dst = append(dst, uint16(r))
	}
	if len(dst) == 0 {
		dst = append(dst, 0)
	}
	return dst
}

// decodeUTF16 appends src as UTF-8, a lone surrogate as '?'; hi carries
// a high surrogate over to the next chunk.
func decodeUTF16(dst []byte, src []uint16, hi *uint16) []byte {
	for _, c := range src {
		if *hi != 0 {
			h := *hi
			*hi = 0
			if c >= 0xdc00 && c < 0xe000 {
				dst = utf8.AppendRune(dst, utf16.DecodeRune(rune(h), rune(c)))
				continue
			}
			dst = append(dst, '?')
		}
		switch {
		case c < utf8.RuneSelf:
			dst = append(dst, byte(c))
		case c >= 0xd800 && c < 0xdc00:
			*hi = c
		case c >= 0xdc00 && c < 0xe000:
			dst = append(dst, '?')
		default:
			dst = utf8.AppendRune(dst, rune(c))
		}
	}
	return dst
}

func succeeded(r api.SQLRETURN) bool { return r == api.SQL_SUCCESS || r == api.SQL_SUCCESS_WITH_INFO }

// rcName names an SQLRETURN as Zabbix does.
func rcName(r api.SQLRETURN) string {
	switch r {
	case C.SQL_ERROR:
		return "SQL_ERROR"
	case C.SQL_SUCCESS_WITH_INFO:
		return "SQL_SUCCESS_WITH_INFO"
	case C.SQL_NO_DATA:
		return "SQL_NO_DATA"
	case C.SQL_INVALID_HANDLE:
		return "SQL_INVALID_HANDLE"
	case C.SQL_STILL_EXECUTING:
		return "SQL_STILL_EXECUTING"
	case C.SQL_NEED_DATA:
		return "SQL_NEED_DATA"
	case C.SQL_SUCCESS:
		return "SQL_SUCCESS"
	}
	return fmt.Sprintf("%d (unknown SQLRETURN code)", r)
}

// maxDiagRecords and maxDiagChars bound what diagnose reads.
const (
	maxDiagRecords = 8
	maxDiagChars   = 1024
)

// diagnose words a failed call's diagnostics as Zabbix does:
// [SQL_ERROR]:[SQLSTATE][native error][message]|[...] for each record.
// Zabbix cuts each message at 127 bytes; here it is kept up to 1024
// characters. broken reports a connection error: SQLSTATE class 08, or
// 57P01-57P05 (the server shutting down or gone, which psqlODBC passes
// on from PostgreSQL).
func diagnose(ht api.SQLSMALLINT, h api.SQLHANDLE, r api.SQLRETURN) (diag string, broken bool) {
	var b strings.Builder
	b.WriteString("[" + rcName(r) + "]")
	var state [6]uint16
	msg := make([]uint16, maxDiagChars)
	for rec := 1; rec <= maxDiagRecords; rec++ {
		var native api.SQLINTEGER
		var l api.SQLSMALLINT
		rr := api.SQLGetDiagRec(ht, h, api.SQLSMALLINT(rec), (*api.SQLWCHAR)(&state[0]), &native,
			(*api.SQLWCHAR)(&msg[0]), api.SQLSMALLINT(len(msg)), &l)
		if !succeeded(rr) {
			break
		}
		if rec == 1 {
			b.WriteByte(':')
		} else {
			b.WriteByte('|')
		}
		code := string(utf16.Decode(state[:5]))
		if strings.HasPrefix(code, "08") || strings.HasPrefix(code, "57P") {
			broken = true
		}
		fmt.Fprintf(&b, "[%s][%d][%s]", code, native, string(utf16.Decode(msg[:min(int(l), len(msg)-1)])))
	}
	return b.String(), broken
}

// budget is how many bytes the next column's text may take.
func (s *shaper) budget() int {
	if s.kind == kindSelect {
		return s.limit
	}
	// What is left; escaping may make the text longer, which value()
	// checks once it is appended (so the value is at most 6 times the
	// limit while it is refused: a \u0001 for each byte).
	return max(0, s.limit-len(s.out))
}
