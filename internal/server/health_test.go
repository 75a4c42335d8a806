package server

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/fsutil"
	"github.com/peregrine-mon/peregrine/internal/history/clickhouse"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// TestMetricsAccess: /metrics is served to http.metrics_allow's networks
// (the loopback by default) and to the bearer token of
// http.metrics_token_file, and refused to everyone else (issue 25: it
// was served to anyone).
func TestMetricsAccess(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("s3cret-token\n"), 0o600)
	f := func(name string, tune func(*config.HTTPConfig), remote, auth string, want int) {
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			if tune != nil {
				tune(&cfg.HTTP)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			s := &Server{cfg: cfg, Metrics: selfmon.NewRegistry(), log: slog.New(slog.DiscardHandler)}
			h, err := s.metricsHandler()
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/metrics", nil)
			r.RemoteAddr = remote
			if auth != "" {
				r.Header.Set("Authorization", auth)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != want {
				t.Fatalf("%s from %s (Authorization %q): %d, want %d", name, remote, auth, w.Code, want)
			}
			if want == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	token := func(h *config.HTTPConfig) { h.MetricsTokenFile = tokenFile }
	tokenOnly := func(h *config.HTTPConfig) { h.MetricsAllow, h.MetricsTokenFile = []string{}, tokenFile }
	f("default/loopback4", nil, "127.0.0.1:5000", "", 200)
	f("default/loopback6", nil, "[::1]:5000", "", 200)
	f("default/mapped-loopback", nil, "[::ffff:127.0.0.1]:5000", "", 200)
	f("default/remote", nil, "192.0.2.10:5000", "", 403)
	f("default/remote6", nil, "[2001:db8::1]:5000", "", 403)
	f("network", func(h *config.HTTPConfig) { h.MetricsAllow = []string{"192.0.2.0/24"} }, "192.0.2.10:5000", "", 200)
	f("address", func(h *config.HTTPConfig) { h.MetricsAllow = []string{"192.0.2.10"} }, "192.0.2.11:5000", "", 403)
	f("everyone", func(h *config.HTTPConfig) { h.MetricsAllow = []string{"0.0.0.0/0", "::/0"} }, "203.0.113.9:5000", "", 200)
	f("token/remote", token, "192.0.2.10:5000", "Bearer s3cret-token", 200)
	f("token/wrong", token, "192.0.2.10:5000", "Bearer s3cret-tokeN", 401)
	f("token/none", token, "192.0.2.10:5000", "", 401)
	f("token/basic", token, "192.0.2.10:5000", "Basic czNjcmV0LXRva2Vu", 401)
	f("token/loopback", token, "127.0.0.1:5000", "", 200)
	f("token-only/loopback", tokenOnly, "127.0.0.1:5000", "", 401)
	f("token-only/with", tokenOnly, "127.0.0.1:5000", "Bearer s3cret-token", 200)

	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, []byte(" \n"), 0o600)
	cfg := config.Default()
	cfg.HTTP.MetricsTokenFile = empty
	s := &Server{cfg: cfg, Metrics: selfmon.NewRegistry(), log: slog.New(slog.DiscardHandler)}
	if _, err := s.metricsHandler(); err == nil {
		t.Error("an empty token file was accepted")
	}
}

// TestMetricsRefusedToRemoteByDefault: a server on the defaults serves
// /metrics to the loopback and refuses it to another address (before
// issue 25 it served everyone), through its real handler chain.
func TestMetricsRefusedToRemoteByDefault(t *testing.T) {
	s, _ := runServer(t, testConfig(t, integrationSpec()))
	for _, c := range []struct {
		remote string
		want   int
	}{{"127.0.0.1:40000", 200}, {"192.0.2.10:40000", 403}} {
		r := httptest.NewRequest("GET", "/metrics", nil)
		r.RemoteAddr = c.remote
		w := httptest.NewRecorder()
		s.httpSrv.Handler.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("/metrics from %s: %d, want %d", c.remote, w.Code, c.want)
		}
	}
}

// TestHealthReason: /healthz says why values are refused without naming
// a file.
func TestHealthReason(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&fsutil.LowSpaceError{Dir: "/var/lib/peregrine", Free: 5 << 20, Min: 256 << 20, Setting: "history.min_free_space"},
			"not enough disk space: 5.0 MiB free on the data directory's file system, less than history.min_free_space (256.0 MiB)"},
		{fmt.Errorf("history WAL cannot write: %w", &fs.PathError{Op: "write", Path: "/var/lib/peregrine/history/wal/00000001.wal", Err: syscall.ENOSPC}),
			"the history store cannot write: no space left on device (see the server log)"},
		{fmt.Errorf("x: %w", clickhouse.ErrSpoolFull), "the ClickHouse spool is full (ClickHouse has not taken inserts for a while; see the server log)"},
		{errors.New("something else"), "the history store cannot write (see the server log)"},
	} {
		if got := healthReason(c.err); got != c.want {
			t.Errorf("healthReason(%v)\n got %s\nwant %s", c.err, got, c.want)
		}
	}
}
