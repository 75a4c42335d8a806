package web

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Cookies. sessionCookie holds the API session id itself: the browser
// keeps it HttpOnly (no script can read it), and the server attaches it
// to the UI's API calls as "Authorization: Bearer" (serveAPI). A second
// table of UI sessions mapping to API sessions would add state and a
// second expiry with nothing gained: the API session is already a
// 128-bit random secret that user.logout ends.
const (
	sessionCookie = "peregrine_session"
	// loginCookie is a random value set with the login form; the form
	// carries its HMAC, so a cross-site form post (which cannot read the
	// page) cannot log the victim in as the attacker (login CSRF).
	loginCookie = "peregrine_login"
	csrfHeader  = "X-CSRF-Token"
	csrfField   = "csrf"
)

// maxAPIBody bounds a UI API request; the API has its own bound, this
// one keeps the copy made here small.
const maxAPIBody = 4 << 20

// csrfToken is the token bound to a secret (the session id, or the login
// cookie): HMAC-SHA256 under a per-process key. Nothing is stored; a
// restart makes open pages fetch a new token (/ui/session) on their next
// load.
func (u *UI) csrfToken(purpose, secret string) string {
	m := hmac.New(sha256.New, u.key[:])
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(secret))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (u *UI) checkCSRF(purpose, secret, got string) bool {
	if secret == "" || got == "" {
		return false
	}
	return hmac.Equal([]byte(u.csrfToken(purpose, secret)), []byte(got))
}

// refuseCSRF answers a state change that failed the CSRF checks: 403,
// counted, logged once per 10 s with the request's origin.
func (u *UI) refuseCSRF(w http.ResponseWriter, r *http.Request, why string) {
	u.m.csrfRefused.Inc()
	u.throttle.Warn("web:csrf", "web: state change refused (CSRF)", "why", why, "path", r.URL.Path, "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr)
	http.Error(w, "Forbidden: "+why+". Reload the page and try again.", http.StatusForbidden)
}

func (u *UI) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: u.opts.TLS || r.TLS != nil,
	})
}

func cookie(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data"`
}

func (e *rpcError) Error() string { return e.Message + " " + e.Data }

// rpc calls the API handler in-process: the same handler, permissions
// and error texts as any client gets. remote is the browser's address,
// so the API's logs and login blocking see the real client.
func (u *UI) rpc(ctx context.Context, remote, bearer, method string, params any) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": 1})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/api_jsonrpc.php", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.RemoteAddr = remote
	req.Header.Set("Content-Type", "application/json-rpc")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	rec := &recorder{h: http.Header{}}
	u.opts.API.ServeHTTP(rec, req)
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(rec.buf.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("cannot decode the API's answer to %s (HTTP %d): %w", method, rec.code, err)
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// recorder is the ResponseWriter of an in-process API call.
type recorder struct {
	h    http.Header
	code int
	buf  bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return r.buf.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// sessionUser is who a session belongs to.
type sessionUser struct {
	UserID   string `json:"userid"`
	Username string `json:"username"`
	// Type is the user type: a number, as Zabbix 6.0 answers it (a
	// numeric string is taken too).
	Type   json.Number `json:"type"`
	RoleID string      `json:"roleid"`
}

// checkSession asks the API (user.checkAuthentication) whether the
// request's session cookie is a live session; "" without one.
func (u *UI) checkSession(r *http.Request) (session string, user sessionUser, ok bool) {
	session = cookie(r, sessionCookie)
	if session == "" {
		return "", user, false
	}
	res, err := u.rpc(r.Context(), r.RemoteAddr, "", "user.checkAuthentication", map[string]string{"sessionid": session})
	if err != nil || json.Unmarshal(res, &user) != nil {
		return "", user, false
	}
	return session, user, true
}

// servePage serves the app's document to a logged-in user and sends
// anyone else to the login page.
func (u *UI) servePage(w http.ResponseWriter, r *http.Request) {
	session, user, ok := u.checkSession(r)
	if !ok {
		u.m.noSession.Inc()
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	a := u.accessOf(r.Context(), r.RemoteAddr, session, user)
	if p, known := pageOf(r.URL.Path); known && !a.may(p) {
		refusePage(w)
		return
	}
	var b bytes.Buffer
	if err := u.pages.app.Execute(&b, appData{Assets: u.assets.prefix(), Username: user.Username, CSRF: u.csrfToken("api", session),
		UserType: user.Type.String(), Pages: a.allowed(), Actions: a.actions()}); err != nil {
		u.opts.Logger.Error("web: cannot render the app document", "err", err)
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// serveSession tells the app who is logged in and the CSRF token its
// API calls and logout must carry. A GET that returns JSON: another
// site's page can send it but not read the answer (same-origin policy).
func (u *UI) serveSession(w http.ResponseWriter, r *http.Request) {
	session, user, ok := u.checkSession(r)
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		u.m.noSession.Inc()
		http.Error(w, "not logged in", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{
		"userid": user.UserID, "username": user.Username, "type": user.Type.String(),
		"csrf": u.csrfToken("api", session),
	})
}

// serveAPI passes a JSON-RPC request (single or batch) from the app to
// the API handler with the session's credentials attached server-side.
// It needs the session cookie and the CSRF token in X-CSRF-Token on every
// call, reads included: one rule, and a read through someone else's
// session is as much a leak as a write.
func (u *UI) serveAPI(w http.ResponseWriter, r *http.Request) {
	session := cookie(r, sessionCookie)
	if session == "" {
		u.m.noSession.Inc()
		http.Error(w, "not logged in", http.StatusUnauthorized)
		return
	}
	if !sameOrigin(r) {
		u.refuseCSRF(w, r, "the request comes from another site")
		return
	}
	if !u.checkCSRF("api", session, r.Header.Get(csrfHeader)) {
		u.refuseCSRF(w, r, "missing or wrong CSRF token")
		return
	}
	u.m.apiCalls.Inc()
	req := r.Clone(r.Context())
	req.Body = http.MaxBytesReader(w, r.Body, maxAPIBody)
	req.URL.Path = "/api_jsonrpc.php"
	req.Header = http.Header{"Content-Type": {"application/json-rpc"}, "Authorization": {"Bearer " + session}}
	w.Header().Set("Cache-Control", "no-store")
	u.opts.API.ServeHTTP(&timedWriter{ResponseWriter: w, start: time.Now()}, req)
}

// timedWriter adds "Server-Timing: api;dur=<ms>" to an API answer: the
// time from the request reaching the API handler to its first byte out
// (the API encodes an answer whole before writing it, so this is the
// method's own time). The page's measurements read it (PerformanceEntry
// serverTiming) to tell the server's share of a filter from the
// network's and the browser's; it names no method and holds no data.
type timedWriter struct {
	http.ResponseWriter
	start time.Time
	done  bool
}

func (t *timedWriter) stamp() {
	if !t.done {
		t.done = true
		ms := float64(time.Since(t.start).Microseconds()) / 1000
		t.Header().Set("Server-Timing", "api;dur="+strconv.FormatFloat(ms, 'f', 1, 64))
	}
}

func (t *timedWriter) WriteHeader(code int) {
	t.stamp()
	t.ResponseWriter.WriteHeader(code)
}

func (t *timedWriter) Write(b []byte) (int, error) {
	t.stamp()
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (t *timedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// serveLoginForm shows the login page with a fresh login CSRF pair.
func (u *UI) serveLoginForm(w http.ResponseWriter, r *http.Request) {
	u.renderLogin(w, r, "", http.StatusOK)
}

func (u *UI) renderLogin(w http.ResponseWriter, r *http.Request, errMsg string, code int) {
	var raw [18]byte
	rand.Read(raw[:])
	lc := base64.RawURLEncoding.EncodeToString(raw[:])
	u.setCookie(w, r, loginCookie, lc, 3600)
	d := loginData{Assets: u.assets.prefix(), CSRF: u.csrfToken("login", lc), Error: errMsg}
	if pw := u.opts.AdminPasswordFile; pw != "" {
		// The file's name only: the page is for anyone, and the
		// server's directories are nobody's business there.
		d.PasswordFile = filepath.Base(pw)
		if _, err := os.Stat(pw); err == nil {
			d.PasswordFileExists = true
		}
	}
	var b bytes.Buffer
	if err := u.pages.login.Execute(&b, d); err != nil {
		u.opts.Logger.Error("web: cannot render the login page", "err", err)
		http.Error(w, "cannot render the login page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// serveLogin checks the login CSRF pair, then logs in through the API's
// user.login and sets the session cookie.
func (u *UI) serveLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "cannot read the form: "+err.Error(), http.StatusBadRequest)
		return
	}
	if !sameOrigin(r) {
		u.refuseCSRF(w, r, "the request comes from another site")
		return
	}
	if !u.checkCSRF("login", cookie(r, loginCookie), r.PostForm.Get(csrfField)) {
		u.refuseCSRF(w, r, "missing or wrong CSRF token")
		return
	}
	username := r.PostForm.Get("username")
	res, err := u.rpc(r.Context(), r.RemoteAddr, "", "user.login", map[string]string{"username": username, "password": r.PostForm.Get("password")})
	var session string
	if err == nil {
		err = json.Unmarshal(res, &session)
	}
	if err != nil || session == "" {
		u.m.loginsFailed.Inc()
		msg := "Login failed."
		var re *rpcError
		if errors.As(err, &re) {
			msg = re.Data // Zabbix's own words: "Incorrect user name or password or account is temporarily blocked."
		} else {
			u.opts.Logger.Error("web: login through the API failed", "username", username, "remote", r.RemoteAddr, "err", err)
		}
		u.renderLogin(w, r, msg, http.StatusUnauthorized)
		return
	}
	u.m.loginsOK.Inc()
	u.setCookie(w, r, loginCookie, "", -1)
	u.setCookie(w, r, sessionCookie, session, 0)
	http.Redirect(w, r, "/overview", http.StatusSeeOther)
}

// serveLogout ends the API session (user.logout) and drops the cookie.
// It is a POST with the CSRF token: a link on another site must not log
// the user out.
func (u *UI) serveLogout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "cannot read the form: "+err.Error(), http.StatusBadRequest)
		return
	}
	session := cookie(r, sessionCookie)
	if session != "" {
		if !sameOrigin(r) || !u.checkCSRF("api", session, r.PostForm.Get(csrfField)) {
			u.refuseCSRF(w, r, "missing or wrong CSRF token")
			return
		}
		if _, err := u.rpc(r.Context(), r.RemoteAddr, session, "user.logout", []any{}); err != nil && !isAuthError(err) {
			u.opts.Logger.Warn("web: logout through the API failed", "remote", r.RemoteAddr, "err", err)
		}
	}
	u.setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// isAuthError is the API's answer for a session that is already gone.
func isAuthError(err error) bool {
	var re *rpcError
	return errors.As(err, &re) && (strings.Contains(re.Data, "Not authorized") || strings.Contains(re.Data, "re-login"))
}
