package server

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/fsutil"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/clickhouse"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// openSpaceGuard is the state stage's data-directory guard
// (history.min_free_space): nil for the memory store, whose values need
// no disk, and when the setting is 0.
func (s *Server) openSpaceGuard() {
	cfg := s.cfg
	if cfg.History.Store == "memory" {
		return
	}
	s.space = fsutil.NewSpaceGuard(fsutil.SpaceOptions{Dir: cfg.DataDir, MinFree: uint64(cfg.History.MinFreeSpace), Setting: "history.min_free_space"})
	s.Metrics.GaugeFunc("peregrine_data_dir_free_bytes", "Bytes free on the file system of data_dir (for an unprivileged user), measured at most once a second.", func() float64 {
		free, _ := s.space.Free()
		return float64(free)
	})
	if st, ok := s.Store.(*engine.Store); ok {
		s.Metrics.CounterFunc("peregrine_history_wal_failures_total", "Writes of the history WAL that failed (a full disk, an I/O error); their values were refused and removed from the log.",
			func() float64 { return float64(st.WALStats().Failures) })
		s.Metrics.CounterFunc("peregrine_history_wal_recoveries_total", "Times the history WAL took appends again by itself after a failure.",
			func() float64 { return float64(st.WALStats().Recoveries) })
		// The store's backlog: values durable in the WAL, held in the
		// head until the next flush (bounded by history.max_head_values
		// and flush_interval).
		s.Metrics.GaugeFunc("peregrine_history_head_values", "Values in the history engine's in-memory head since its last flush (their WAL records are durable); a flush starts at history.max_head_values or flush_interval.",
			func() float64 { return float64(st.HeadValues()) })
	}
	s.Metrics.GaugeFunc("peregrine_history_ready", "1 while the history store takes values, 0 while they are refused (low disk space, a history log that cannot write); /healthz says why.", func() float64 {
		if s.storageErr() != nil {
			return 0
		}
		return 1
	})
}

// storageErr says why values are refused now, or nil: the data
// directory's free space below history.min_free_space, or a store that
// cannot write (its WAL failed and retries). The pipeline asks it before
// each request (Options.Admit), /healthz and peregrine_history_ready
// report it.
func (s *Server) storageErr() error {
	if err := s.space.Check(); err != nil {
		return err
	}
	if wc, ok := s.Store.(history.WriteChecker); ok {
		return wc.WriteErr()
	}
	return nil
}

// healthz answers 200 "ok" while values are taken, else 503 with the
// reason. The reason names no path (anyone may ask): the server log has
// the details.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	err := s.storageErr()
	if err == nil {
		io.WriteString(w, "ok\n")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, "not ready: values are refused: "+healthReason(err)+"\n")
}

// healthReason words a storage error for /healthz without file names.
func healthReason(err error) string {
	var low *fsutil.LowSpaceError
	if errors.As(err, &low) {
		return fmt.Sprintf("not enough disk space: %s free on the data directory's file system, less than history.min_free_space (%s)",
			fsutil.FormatBytes(low.Free), fsutil.FormatBytes(low.Min))
	}
	if errors.Is(err, clickhouse.ErrSpoolFull) {
		return "the ClickHouse spool is full (ClickHouse has not taken inserts for a while; see the server log)"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return "the history store cannot write: " + errno.Error() + " (see the server log)"
	}
	return "the history store cannot write (see the server log)"
}

// metricsAccess serves /metrics to the networks of http.metrics_allow
// and to requests bearing the token of http.metrics_token_file; others
// get 403 (or 401 when a token is configured), counted and logged once a
// minute.
type metricsAccess struct {
	next    http.Handler
	allow   []netip.Prefix
	token   []byte // nil: no token
	refused *selfmon.Counter
	log     *selfmon.LogThrottle
	logger  *slog.Logger
}

func (s *Server) metricsHandler() (http.Handler, error) {
	cfg := s.cfg.HTTP
	m := &metricsAccess{
		next: s.Metrics.Handler(), allow: cfg.MetricsNetworks(),
		refused: s.Metrics.Counter("peregrine_http_metrics_refused_total", "Requests for /metrics refused: from a network not in http.metrics_allow, without the token of http.metrics_token_file."),
		logger:  s.log.With("component", "http"),
	}
	m.log = selfmon.NewLogThrottle(m.logger, time.Minute)
	if cfg.MetricsTokenFile != "" {
		b, err := os.ReadFile(cfg.MetricsTokenFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read http.metrics_token_file: %w", err)
		}
		if m.token = []byte(strings.TrimSpace(string(b))); len(m.token) == 0 {
			return nil, fmt.Errorf("http.metrics_token_file %s is empty: write the token into it, or leave the setting empty", cfg.MetricsTokenFile)
		}
	}
	return m, nil
}

func (m *metricsAccess) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m.allowed(r) {
		m.next.ServeHTTP(w, r)
		return
	}
	m.refused.Inc()
	if n, ok := m.log.Allow("metrics refused"); ok {
		m.logger.Warn("refused /metrics: the client is not in http.metrics_allow and sent no valid token", "remote", r.RemoteAddr, "suppressed", n)
	}
	if m.token != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	http.Error(w, "Forbidden", http.StatusForbidden)
}

func (m *metricsAccess) allowed(r *http.Request) bool {
	if m.token != nil {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok &&
			subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), m.token) == 1 {
			return true
		}
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	for _, p := range m.allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
