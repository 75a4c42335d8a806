package web

import (
	"crypto/rand"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Options configures the UI.
type Options struct {
	// API is the JSON-RPC handler (api.Server.Handler()): the UI's only
	// data path, for logging in and out as for every read and write.
	API http.Handler
	// AdminPasswordFile is where the first start writes the generated
	// password of "Admin"; the login page names the file (never its
	// directory: the page is for anyone) and says whether it is still
	// there (never its content).
	AdminPasswordFile string
	// TLS says the listener serves HTTPS: cookies get Secure and every
	// response Strict-Transport-Security with HSTSMaxAge.
	TLS        bool
	HSTSMaxAge time.Duration
	Logger     *slog.Logger
	// Metrics receives the UI's counters; nil: not exported.
	Metrics *selfmon.Registry
}

// UI serves the web interface. It is safe for concurrent use.
type UI struct {
	opts     Options
	assets   *assetSet
	pages    *pageSet
	key      [32]byte // HMAC key of CSRF tokens, random per process
	m        *uiMetrics
	throttle *selfmon.LogThrottle
}

type uiMetrics struct {
	loginsOK, loginsFailed *selfmon.Counter
	csrfRefused            *selfmon.Counter
	noSession              *selfmon.Counter
	apiCalls               *selfmon.Counter
}

func newUIMetrics(r *selfmon.Registry) *uiMetrics {
	if r == nil {
		r = selfmon.NewRegistry()
	}
	return &uiMetrics{
		loginsOK:     r.Counter("peregrine_web_logins_total", "Web UI log-in attempts by result.", "result", "ok"),
		loginsFailed: r.Counter("peregrine_web_logins_total", "Web UI log-in attempts by result.", "result", "failed"),
		csrfRefused:  r.Counter("peregrine_web_csrf_refused_total", "Web UI state changes refused for a missing or wrong CSRF token or a foreign Origin."),
		noSession:    r.Counter("peregrine_web_no_session_total", "Web UI requests without a valid session (pages redirected to the login page, API calls refused)."),
		apiCalls:     r.Counter("peregrine_web_api_requests_total", "JSON-RPC requests the web UI passed to the API with its session."),
	}
}

// New builds the UI.
func New(opts Options) (*UI, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.HSTSMaxAge <= 0 {
		opts.HSTSMaxAge = 365 * 24 * time.Hour
	}
	u := &UI{opts: opts, m: newUIMetrics(opts.Metrics), throttle: selfmon.NewLogThrottle(opts.Logger, 10*time.Second)}
	if _, err := rand.Read(u.key[:]); err != nil {
		return nil, err
	}
	var err error
	if u.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	if u.pages, err = loadPages(); err != nil {
		return nil, err
	}
	return u, nil
}

// Register adds the UI's routes to mux: the pages, /login, /logout,
// /ui/session, /ui/api and /assets/. The API stays at /api_jsonrpc.php
// (registered by the caller) for other clients.
func (u *UI) Register(mux *http.ServeMux) {
	for _, p := range pagePaths {
		pattern := "GET " + p
		if p == "/" {
			pattern = "GET /{$}"
		}
		mux.Handle(pattern, u.secure(http.HandlerFunc(u.servePage)))
	}
	mux.Handle("GET /login", u.secure(http.HandlerFunc(u.serveLoginForm)))
	mux.Handle("POST /login", u.secure(http.HandlerFunc(u.serveLogin)))
	mux.Handle("POST /logout", u.secure(http.HandlerFunc(u.serveLogout)))
	mux.Handle("GET /ui/session", u.secure(http.HandlerFunc(u.serveSession)))
	mux.Handle("POST /ui/api", u.secure(http.HandlerFunc(u.serveAPI)))
	mux.Handle("GET /assets/", u.secure(http.HandlerFunc(u.serveAsset)))
}

// csp allows scripts, styles and connections to this origin only: no
// inline script or style element, no eval. uPlot styles its elements
// through the CSSOM (element.style), which style-src does not govern.
const csp = "default-src 'none'; script-src 'self'; worker-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	// URL widgets: a sandboxed frame (no scripts, no same origin) of
	// any http(s) page the dashboard names.
	"frame-src http: https:; " +
	"font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secure sets the headers every UI response carries.
func (u *UI) secure(h http.Handler) http.Handler {
	hsts := "max-age=" + strconv.FormatInt(int64(u.opts.HSTSMaxAge/time.Second), 10)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		if u.opts.TLS {
			hd.Set("Strict-Transport-Security", hsts)
		}
		h.ServeHTTP(w, r)
	})
}

// sameOrigin refuses a state change whose Origin (sent by browsers on
// every POST) names another site: a second line behind the CSRF token
// and SameSite=Strict. A request without Origin (old clients, curl) is
// judged by its token alone.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	o = strings.TrimPrefix(strings.TrimPrefix(o, "https://"), "http://")
	return o == r.Host
}
