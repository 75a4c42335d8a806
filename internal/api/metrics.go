package api

import (
	"bufio"
	"strconv"
	"time"

	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// apiMetrics counts requests and refusals for /metrics.
type apiMetrics struct {
	requests     *selfmon.Counter
	errors       map[int]*selfmon.Counter
	authFailures *selfmon.Counter
	auditErrors  *selfmon.Counter
}

func newAPIMetrics(r *selfmon.Registry) *apiMetrics {
	if r == nil {
		r = selfmon.NewRegistry()
	}
	m := &apiMetrics{
		requests:     r.Counter("peregrine_api_requests_total", "JSON-RPC requests received (each member of a batch counts)."),
		authFailures: r.Counter("peregrine_api_auth_failures_total", "Requests refused for missing, unknown or expired credentials."),
		auditErrors:  r.Counter("peregrine_api_audit_errors_total", "API changes made but not written to the audit log (the log could not be written)."),
		errors:       map[int]*selfmon.Counter{},
	}
	for code := range codeMessages {
		m.errors[code] = r.Counter("peregrine_api_errors_total", "JSON-RPC error responses by error code.", "code", strconv.Itoa(code))
	}
	return m
}

// fail writes an error response, counts it, and logs it at most once per
// error code and 10 s (a client looping on a bad request must not flood
// the log), with what the client was told and who it was.
func (s *Server) fail(w *bufio.Writer, remote string, id []byte, e *Error) {
	w.Write(appendError(nil, id, e))
	if c := s.m.errors[e.Code]; c != nil {
		c.Inc()
	}
	if e == errNotAuthorized || e.Data == "Session terminated, re-login, please." {
		s.m.authFailures.Inc()
	}
	if n, ok := s.throttle.Allow("api:" + strconv.Itoa(e.Code)); ok {
		s.opts.Logger.Warn("api: request refused", "code", e.Code, "error", e.Data, "remote", remote, "suppressed", n)
	}
}

const logThrottleWindow = 10 * time.Second
