package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/api/zjson"
)

// Zabbix API error codes (JSON-RPC codes as the Zabbix frontend maps them).
const (
	codeParse       = -32700
	codeInvalidReq  = -32600
	codeNoMethod    = -32601
	codeParams      = -32602
	codeApplication = -32500
)

var codeMessages = map[int]string{
	codeParse:       "Parse error",
	codeInvalidReq:  "Invalid request.",
	codeNoMethod:    "Method not found.",
	codeParams:      "Invalid params.",
	codeApplication: "Application error.",
}

// Error is a JSON-RPC error with the Zabbix "data" detail.
type Error struct {
	Code int
	Data string
}

func (e *Error) Error() string { return fmt.Sprintf("%s %s", codeMessages[e.Code], e.Data) }

func errParams(format string, args ...any) *Error {
	return &Error{Code: codeParams, Data: fmt.Sprintf(format, args...)}
}

func errApp(format string, args ...any) *Error {
	return &Error{Code: codeApplication, Data: fmt.Sprintf(format, args...)}
}

// Errors with fixed texts that clients match on.
var (
	errNotAuthorized = &Error{Code: codeParams, Data: "Not authorized."}
	errNoPermissions = &Error{Code: codeApplication, Data: "No permissions to referred object or it does not exist!"}
	// errNoPermissionsParams is the same text as an invalid parameter,
	// the code of the methods that check their objects with their
	// parameters (recorded from 6.0.14: host.update, item.create on a
	// host that does not exist).
	errNoPermissionsParams = &Error{Code: codeParams, Data: errNoPermissions.Data}
)

// request is one decoded JSON-RPC request.
type request struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      json.RawMessage `json:"id"`
	Auth    json.RawMessage `json:"auth"`

	method string
	auth   string
	hasID  bool
}

// validate checks the envelope the way the Zabbix frontend does and
// fills the decoded fields.
func (r *request) validate() *Error {
	var v string
	if len(r.JSONRPC) == 0 {
		return &Error{Code: codeInvalidReq, Data: `Invalid parameter "/": the parameter "jsonrpc" is missing.`}
	}
	if err := json.Unmarshal(r.JSONRPC, &v); err != nil || v != "2.0" {
		return &Error{Code: codeInvalidReq, Data: `Invalid parameter "/jsonrpc": value must be "2.0".`}
	}
	if len(r.Method) == 0 {
		return &Error{Code: codeInvalidReq, Data: `Invalid parameter "/": the parameter "method" is missing.`}
	}
	if err := json.Unmarshal(r.Method, &r.method); err != nil || r.method == "" {
		return &Error{Code: codeInvalidReq, Data: `Invalid parameter "/method": a character string is expected.`}
	}
	p := bytes.TrimSpace(r.Params)
	if len(p) == 0 {
		return &Error{Code: codeInvalidReq, Data: `Invalid parameter "/": the parameter "params" is missing.`}
	}
	if p[0] != '{' && p[0] != '[' {
		return &Error{Code: codeInvalidReq, Data: `Invalid parameter "/params": an array or object is expected.`}
	}
	if id := bytes.TrimSpace(r.ID); len(id) > 0 {
		r.hasID = true
		if id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-' && string(id) != "null" {
			return &Error{Code: codeInvalidReq, Data: `Invalid parameter "/id": a string, number or null value is expected.`}
		}
	}
	if a := bytes.TrimSpace(r.Auth); len(a) > 0 && string(a) != "null" {
		if err := json.Unmarshal(a, &r.auth); err != nil {
			return &Error{Code: codeInvalidReq, Data: `Invalid parameter "/auth": a character string is expected.`}
		}
	}
	return nil
}

// id returns the request id to echo ("null" when absent).
func (r *request) id() []byte {
	if len(bytes.TrimSpace(r.ID)) == 0 {
		return []byte("null")
	}
	return bytes.TrimSpace(r.ID)
}

// appendError encodes a complete error response.
func appendError(dst []byte, id []byte, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = zjson.AppendString(dst, codeMessages[e.Code])
	dst = append(dst, `,"data":`...)
	dst = zjson.AppendString(dst, e.Data)
	dst = append(dst, `},"id":`...)
	dst = append(dst, id...)
	return append(dst, '}')
}

// appendResult encodes a complete result response from a JSON value.
func appendResult(dst []byte, id []byte, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","result":`...)
	dst = append(dst, result...)
	dst = append(dst, `,"id":`...)
	dst = append(dst, id...)
	return append(dst, '}')
}

// asError turns a method's error into a JSON-RPC error.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return errApp("%v", err)
}
