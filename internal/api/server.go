package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/api/histread"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Version is the Zabbix API version whose behaviour the API implements;
// clients parse it to choose "username" vs "user" and "auth" vs Bearer.
const Version = "6.0.14"

// Role levels as Zabbix user types (the auth package's).
const (
	RoleUser       = auth.RoleUser
	RoleAdmin      = auth.RoleAdmin
	RoleSuperAdmin = auth.RoleSuperAdmin
)

// User is an authenticated caller.
type User = auth.User

// Authenticator checks credentials and tells what a user may do with
// each host group. *auth.Store implements it as is; tests use fakes.
type Authenticator interface {
	// Authenticate accepts a session id or an API token.
	Authenticate(ctx context.Context, secret string) (User, error)
	Login(ctx context.Context, username, password string) (session string, u User, err error)
	Logout(ctx context.Context, session string) error
	// Rights returns u's permissions on host groups (auth.AllRights for a
	// super admin). It is asked once per request that needs it.
	Rights(ctx context.Context, u User) (auth.Rights, error)
}

// The auth errors the API maps to Zabbix's texts.
var (
	ErrBadCredentials = auth.ErrBadCredentials
	ErrBlocked        = auth.ErrBlocked
	ErrSessionExpired = auth.ErrSessionExpired
)

// TrendReader reads hourly trends (the engine implements it).
type TrendReader interface {
	ReadTrends(ctx context.Context, item uint64, from, till int64) ([]Trend, error)
}

// Trend is one hour of one numeric item.
type Trend struct {
	Clock         int64
	Num           int64
	Min, Max, Avg float64
}

// Catalog gives the current configuration snapshot.
type Catalog interface{ Snapshot() *catalog.Snapshot }

// Options configures the API.
type Options struct {
	// JS runs the JavaScript steps of preprocessing.test (the server's
	// jsvm.Pool); nil runs them in this process.
	JS      jsvm.Runner
	Catalog Catalog
	History history.Reader
	Trends  TrendReader // nil: trend.get returns nothing
	Last    LastValues  // nil: item.get reports no last value
	// States gives item.get's "state" and "error"; nil: every item is
	// normal.
	States ItemStates
	// RuleErrors gives discoveryrule.get's "error" of a rule that is
	// supported but could not make some objects (the LLD engine); nil:
	// only the not-supported reason (States) is shown.
	RuleErrors RuleErrors
	// Availability gives the availability of host.get's interfaces; nil:
	// every interface is unknown (available 0).
	Availability Availabilities
	// CheckNow serves task.create type 6; nil: such tasks are refused.
	CheckNow CheckNower
	// HistoryFlush serves history.flush; nil: the method answers that
	// the store has nothing to flush.
	HistoryFlush HistoryFlusher
	// Queue serves queue.get; nil: the queue is empty.
	Queue QueueReader
	Auth  Authenticator
	// Accounts manages users, user groups and tokens; nil disables the
	// user.*, usergroup.* and token.* management methods (login still
	// works through Auth).
	Accounts *auth.Store
	// ProxyLastAccess gives proxy.get's lastaccess (the trapper's); nil:
	// the value saved in the catalog.
	ProxyLastAccess func(id uint64) int64
	// HACluster reads the HA cluster's node registry for hanode.get
	// (ha.Admin.Cluster); nil: a standalone server, which lists itself.
	HACluster func(ctx context.Context) (*ha.Cluster, error)
	// Standby, when it returns an error, says this HA node does not hold
	// the active lease: calls that change state are refused with the
	// error's text (standby.go); reads are served. nil: always active.
	Standby func() error
	// Unserved, when it returns an error for a method, refuses the call
	// with the error's text before anything else (an HA standby's
	// methods whose state it does not follow yet, registered or not);
	// nil: every registered method is served.
	Unserved func(method string) error
	// Ingest accepts history.push values; nil: the method is refused.
	Ingest Pusher
	// Events and TriggerStates serve trigger.*, problem.get, event.get
	// and event.acknowledge; without both those methods do not exist.
	Events        Events
	TriggerStates TriggerStates
	// Alerting serves mediatype.*, action.*, alert.get and users'
	// media; nil: those methods do not exist.
	Alerting Alerting
	// Autoreg keeps the autoregistration settings
	// (autoregistration.get/update); nil: get answers 6.0's default and
	// update is refused.
	Autoreg AutoregStore
	// Audit records every change made through the API and serves
	// auditlog.get (*audit.Log); nil: nothing is recorded and the
	// method does not exist.
	Audit AuditLog
	// Services serves service.* and sla.*; nil: those methods do not
	// exist.
	Services Services
	// SettingsHook, when set, is called after settings.update,
	// housekeeping.update or authentication.update with the members
	// the update set and every member's value now, so that the server
	// applies the ones it uses.
	SettingsHook func(set, cfg map[string]string)
	// MaxBodyBytes bounds a request body (default 16 MiB).
	MaxBodyBytes int64
	// MaxRows bounds the rows one history.get may return (default
	// 10,000,000); a request that would exceed it gets an error asking
	// for a limit or a narrower range.
	MaxRows int
	// PrefetchRows bounds the numeric rows that history.get requests
	// together hold in memory (24 bytes each) to check MaxRows without a
	// counting pass (default 4Mi rows, 96 MiB; one request holds at most
	// 1Mi). A request that finds no room counts first instead: slower,
	// same answer (histread/prefetch.go).
	PrefetchRows int
	// MaxBatchCalls bounds the calls of one JSON-RPC batch (default
	// 1000); a longer batch is refused whole with an error naming the
	// bound. Responses are streamed element by element, so the bound
	// limits the work one request can ask for, not memory.
	MaxBatchCalls int
	// Timeout bounds one HTTP request (default 60 s).
	Timeout time.Duration
	// MaxConcurrentCalls bounds the calls running at once (default
	// 8 per CPU, at least 16); MaxWaitingPerUser bounds one user's calls
	// waiting for a slot (default 256; beyond it a call is refused at
	// once). Slots go to the waiting user with the fewest calls running
	// (admission.go).
	MaxConcurrentCalls int
	MaxWaitingPerUser  int
	Logger             *slog.Logger
	// Metrics receives the API's counters; nil: not exported.
	Metrics *selfmon.Registry
}

// Server serves the API.
type Server struct {
	opts     Options
	admit    *admission
	methods  map[string]*method
	m        *apiMetrics
	throttle *selfmon.LogThrottle
	// taskSeq numbers the tasks task.create returns.
	taskSeq atomic.Uint64
	// hist reads history.get's rows; it holds the buffer budget
	// requests share (Options.PrefetchRows).
	hist     *histread.Reader
	respBufs sync.Pool // *bufio.Writer of respBufSize
	// cands remembers problem.get's candidate triggers per request
	// scope for the current snapshot (problem_select.go).
	cands candCache
}

type method struct {
	// role is the least role that may call the method; 0 = no auth, and
	// the method must then be called without "auth" (as Zabbix 6.0).
	role auth.Role
	// call returns a result to marshal, or stream writes it.
	call   func(ctx context.Context, c *call) (any, error)
	stream func(ctx context.Context, c *call) (func(w *bufio.Writer) error, error)
}

// call is one method invocation.
type call struct {
	params json.RawMessage
	user   User
	token  string
	remote string
}

// New builds the API server.
func New(opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 16 << 20
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = 10_000_000
	}
	if opts.PrefetchRows <= 0 {
		opts.PrefetchRows = 4 << 20
	}
	if opts.MaxBatchCalls <= 0 {
		opts.MaxBatchCalls = 1000
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxConcurrentCalls <= 0 {
		opts.MaxConcurrentCalls = max(16, 8*runtime.GOMAXPROCS(0))
	}
	if opts.MaxWaitingPerUser <= 0 {
		opts.MaxWaitingPerUser = 256
	}
	s := &Server{opts: opts, methods: map[string]*method{}, m: newAPIMetrics(opts.Metrics), throttle: selfmon.NewLogThrottle(opts.Logger, logThrottleWindow)}
	s.admit = newAdmission(opts.MaxConcurrentCalls, opts.MaxWaitingPerUser, opts.Metrics)
	s.hist = histread.New(histread.Options{Store: opts.History, MaxRows: opts.MaxRows, PrefetchRows: opts.PrefetchRows})
	s.registerInfo()
	s.registerUser()
	s.registerHistory()
	s.registerConfig()
	s.registerAccounts()
	s.registerDashboards()
	s.registerRoles()
	s.registerSettings()
	s.registerAutoreg()
	s.registerPush()
	s.registerImport()
	s.registerPreprocessing()
	s.registerHistoryFlush()
	s.registerTriggers()
	s.registerAlerting()
	s.registerProxy()
	s.registerDRules()
	s.registerServices()
	s.registerAudit() // last: it wraps the methods registered above
	return s
}

// Handler serves POST /api_jsonrpc.php.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "the Zabbix API takes POST requests", http.StatusMethodNotAllowed)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.Timeout)
	defer cancel()
	ctx = withRecordSets(ctx)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	w.Header().Set("Content-Type", "application/json")
	bw := s.respWriter(w)
	defer s.putRespWriter(bw)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.fail(bw, r.RemoteAddr, []byte("null"), &Error{Code: codeInvalidReq, Data: "Request body is larger than the configured maximum."})
			return
		}
		s.fail(bw, r.RemoteAddr, []byte("null"), &Error{Code: codeInvalidReq, Data: "Cannot read the request body."})
		return
	}
	bearer := ""
	if h := r.Header.Get("Authorization"); len(h) > 7 && (h[:7] == "Bearer " || h[:7] == "bearer ") {
		bearer = h[7:]
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		s.serveBatch(ctx, bw, body, bearer, r.RemoteAddr)
		return
	}
	req, e := s.decode(body)
	if e != nil {
		s.fail(bw, r.RemoteAddr, req.id(), e)
		return
	}
	if !req.hasID {
		// A notification: run it, answer nothing (JSON-RPC 2.0).
		s.serve(ctx, req, bearer, r.RemoteAddr, discardWriter())
		return
	}
	s.serve(ctx, req, bearer, r.RemoteAddr, bw)
}

// respBufSize is the response buffer of a request: a history.get of
// half a million rows is 40 MB of JSON, and each flush costs a chunk
// header and a write system call or two; 256 KiB makes those a few
// hundred. The buffers are pooled, so small requests do not allocate
// one each.
const respBufSize = 256 << 10

func (s *Server) respWriter(w io.Writer) *bufio.Writer {
	if bw, ok := s.respBufs.Get().(*bufio.Writer); ok {
		bw.Reset(w)
		return bw
	}
	return bufio.NewWriterSize(w, respBufSize)
}

// putRespWriter flushes bw and pools it.
func (s *Server) putRespWriter(bw *bufio.Writer) {
	bw.Flush()
	bw.Reset(nil)
	s.respBufs.Put(bw)
}

// serveBatch answers a JSON-RPC batch: one response element per call that
// has an id (or could not be read), in call order, and no body at all when
// every call is a notification. Each element is written straight to w as
// it is produced (history.get rows included), never gathered first: a
// batch of four 2M-row reads needs the memory of one row, not of the four
// responses. Whether a call gets an element is known from its envelope
// before it runs, so the separators can be written ahead of the element,
// and an element that fails before its first byte (bad params, no
// permission) gets its error object with the batch still valid JSON.
func (s *Server) serveBatch(ctx context.Context, w *bufio.Writer, body []byte, bearer, remote string) {
	var reqs []json.RawMessage
	if err := json.Unmarshal(body, &reqs); err != nil {
		s.fail(w, remote, []byte("null"), &Error{Code: codeParse, Data: "Invalid JSON. An error occurred on the server while parsing the JSON text."})
		return
	}
	if len(reqs) == 0 {
		// An empty batch: Zabbix 6.0's answer (recorded).
		s.fail(w, remote, []byte("null"), &Error{Code: codeInvalidReq, Data: "The received JSON is not a valid JSON-RPC request."})
		return
	}
	if len(reqs) > s.opts.MaxBatchCalls {
		s.fail(w, remote, []byte("null"), &Error{Code: codeInvalidReq, Data: fmt.Sprintf(
			`Invalid parameter "/": the batch has %d calls, more than %d (api.max_batch_calls); split it into smaller batches.`, len(reqs), s.opts.MaxBatchCalls)})
		return
	}
	open := false
	var discard *bufio.Writer
	for i, raw := range reqs {
		reqs[i] = nil // only raw holds the call now: freed once it is served
		req, e := s.decode(raw)
		out := w
		if e == nil && !req.hasID {
			if discard == nil {
				discard = discardWriter()
			}
			out = discard
		} else if open {
			w.WriteByte(',')
		} else {
			w.WriteByte('[')
			open = true
		}
		if e != nil {
			s.fail(out, remote, req.id(), e)
			continue
		}
		s.serve(ctx, req, bearer, remote, out)
	}
	if open {
		w.WriteByte(']')
	}
}

// discardWriter is where notifications' responses go.
func discardWriter() *bufio.Writer { return bufio.NewWriterSize(io.Discard, 512) }

// decode reads and checks one call's envelope. On error the returned
// request still gives the id to answer with ("null" if unreadable).
func (s *Server) decode(raw []byte) (*request, *Error) {
	s.m.requests.Inc()
	req := &request{}
	if err := json.Unmarshal(raw, req); err != nil {
		req = &request{}
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return req, &Error{Code: codeInvalidReq, Data: `Invalid parameter "/": an array or object is expected.`}
		}
		return req, &Error{Code: codeParse, Data: "Invalid JSON. An error occurred on the server while parsing the JSON text."}
	}
	if e := req.validate(); e != nil {
		return req, e
	}
	return req, nil
}

// serve runs one decoded call and writes its response into w.
func (s *Server) serve(ctx context.Context, req *request, bearer, remote string, w *bufio.Writer) {
	id := req.id()
	if s.opts.Unserved != nil {
		if err := s.opts.Unserved(req.method); err != nil {
			s.fail(w, remote, id, errApp("%s", err.Error()))
			return
		}
	}
	m := s.methods[req.method]
	if m == nil {
		s.fail(w, remote, id, s.noMethod(req.method))
		return
	}
	if s.opts.Standby != nil && !standbyServes(req.method) {
		if err := s.opts.Standby(); err != nil {
			s.fail(w, remote, id, errApp("%s", err.Error()))
			return
		}
	}
	c := &call{params: req.Params, remote: remote}
	token := req.auth
	if bearer != "" {
		token = bearer // the header wins over "auth" (7.0)
	}
	if m.role == 0 {
		if req.auth != "" {
			s.fail(w, remote, id, errParams(`The "%s" method must be called without the "auth" parameter.`, req.method))
			return
		}
	} else {
		if token == "" || s.opts.Auth == nil {
			s.fail(w, remote, id, errNotAuthorized)
			return
		}
		// A token given that opens no session (unknown, logged out,
		// expired) is "Session terminated" as Zabbix 6.0 answers it
		// (recorded: internal/conformance, write_errors raw-badauth,
		// zabbix_utils after-logout); no token at all is "Not
		// authorized.".
		u, err := s.opts.Auth.Authenticate(ctx, token)
		if err != nil {
			s.fail(w, remote, id, errParams("Session terminated, re-login, please."))
			return
		}
		// The user type, then the rules of the user's role (role_rules.go),
		// refused with Zabbix 6.0's text.
		ok := u.Role >= m.role
		if ok {
			var err error
			if ok, err = s.roleAllows(ctx, u, req.method); err != nil {
				s.fail(w, remote, id, errApp("Cannot read the role of the user."))
				return
			}
		}
		if !ok {
			s.fail(w, remote, id, errParams(`No permissions to call "%s".`, req.method))
			return
		}
		c.user, c.token = u, token
	}
	key := "user:" + strconv.FormatUint(c.user.ID, 10)
	if m.role == 0 {
		// No session: the client's address is the caller (user.login's
		// password checks cost CPU too).
		key = "addr:" + hostOf(remote)
	}
	release, e := s.admit.acquire(ctx, key)
	if e != nil {
		s.fail(w, remote, id, e)
		return
	}
	defer release()
	if m.stream != nil {
		run, err := m.stream(ctx, c)
		if err != nil {
			s.fail(w, remote, id, asError(err))
			return
		}
		w.WriteString(`{"jsonrpc":"2.0","result":`)
		if err := run(w); err != nil {
			// Bytes are already out: the client sees a truncated body,
			// which is the only honest signal left.
			s.opts.Logger.Error("api: streamed response aborted", "method", req.method, "remote", remote, "err", err)
			panic(http.ErrAbortHandler)
		}
		w.WriteString(`,"id":`)
		w.Write(id)
		w.WriteByte('}')
		return
	}
	res, err := m.call(ctx, c)
	if err != nil {
		s.fail(w, remote, id, asError(err))
		return
	}
	if raw, ok := res.(rawJSON); ok {
		// Encoded already: written as it is, not copied twice more.
		w.WriteString(`{"jsonrpc":"2.0","result":`)
		w.Write(raw)
		w.WriteString(`,"id":`)
		w.Write(id)
		w.WriteByte('}')
		return
	}
	b, err := appendValue(nil, res)
	if err != nil {
		s.fail(w, remote, id, errApp("cannot encode the result: %v", err))
		return
	}
	w.Write(appendResult(nil, id, b))
}

// noMethod is the error for an unknown method: Zabbix names the API
// ("host" of "host.get") when no method of it exists, else the method.
func (s *Server) noMethod(name string) *Error {
	api, _, _ := strings.Cut(name, ".")
	for m := range s.methods {
		if p, _, _ := strings.Cut(m, "."); p == api {
			return &Error{Code: codeNoMethod, Data: `Incorrect method "` + name + `".`}
		}
	}
	return &Error{Code: codeNoMethod, Data: `Incorrect API "` + api + `".`}
}

// jsonKind is the get dialect's word for a Go kind's JSON value.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "character string"
	case "bool":
		return "boolean value"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	}
	return "number"
}

// Methods returns every method the API serves with the least role that
// may call it (0: no authentication; the method must be called without
// it). Documentation and tests use it.
func (s *Server) Methods() map[string]auth.Role {
	out := make(map[string]auth.Role, len(s.methods))
	for name, m := range s.methods {
		out[name] = m.role
	}
	return out
}

// hostOf is remote's host without the port.
func hostOf(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}
