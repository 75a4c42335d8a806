package web_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationHTTPS runs `serve` with http.tls_cert_file and
// tls_key_file: the port speaks HTTPS only, every response (UI and API)
// has Strict-Transport-Security, and the UI's cookies are Secure.
func TestIntegrationHTTPS(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: makes certificates with openssl")
	}
	certs := testutil.MakeCerts(t)
	_, base, password := startServer(t, catalog.Spec{}, func(c *config.Config) {
		c.HTTP.TLSCertFile, c.HTTP.TLSKeyFile = certs.Server.Cert, certs.Server.Key
		c.HTTP.HSTSMaxAge = config.Duration(48 * time.Hour)
	})
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("base %s", base)
	}
	jar, _ := cookiejar.New(nil)
	// The test CA's server certificate names no loopback address; what
	// is under test is the server's HTTPS behaviour, not verification.
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) (*http.Response, string) {
		t.Helper()
		r, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		return r, string(b)
	}
	r, body := get(base + "/login")
	if r.TLS == nil || r.StatusCode != 200 {
		t.Fatalf("GET /login over HTTPS: %d, TLS %v", r.StatusCode, r.TLS != nil)
	}
	if got := r.Header.Get("Strict-Transport-Security"); got != "max-age=172800" {
		t.Errorf("HSTS %q, want max-age=172800 (http.hsts_max_age 48h)", got)
	}
	for _, ck := range r.Cookies() {
		if !ck.Secure || !ck.HttpOnly {
			t.Errorf("cookie %s: Secure %v HttpOnly %v", ck.Name, ck.Secure, ck.HttpOnly)
		}
	}
	tok := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if tok == nil {
		t.Fatal("no csrf field")
	}
	r, err := c.PostForm(base+"/login", url.Values{"csrf": {tok[1]}, "username": {"Admin"}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	var session *http.Cookie
	for _, ck := range r.Cookies() {
		if ck.Name == "peregrine_session" {
			session = ck
		}
	}
	if r.StatusCode != http.StatusSeeOther || session == nil || !session.Secure || session.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login over HTTPS: %d, session cookie %+v", r.StatusCode, session)
	}
	if r, _ := get(base + "/latest"); r.StatusCode != 200 {
		t.Errorf("page after login: %d", r.StatusCode)
	}
	r, err = c.Post(base+"/api_jsonrpc.php", "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"apiinfo.version","params":{},"id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.Header.Get("Strict-Transport-Security") == "" {
		t.Error("the API's responses lack HSTS under HTTPS")
	}
	// Plain HTTP to the HTTPS port gets no page.
	plain := &http.Client{Timeout: 5 * time.Second}
	pr, err := plain.Get("http://" + strings.TrimPrefix(base, "https://") + "/login")
	if err == nil {
		b, _ := io.ReadAll(pr.Body)
		pr.Body.Close()
		if pr.StatusCode == 200 || strings.Contains(string(b), "csrf") {
			t.Errorf("plain HTTP on the HTTPS port served the page: %d", pr.StatusCode)
		}
	}
}
