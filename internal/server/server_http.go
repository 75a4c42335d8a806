package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/housekeep"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/web"
)

// openHTTP is New's last stage: the HTTP port and what it serves, the
// JSON-RPC API, the web UI (http.ui), /metrics, /healthz and pprof
// (http.pprof); and the catalog and event gauges of /metrics.
//
// Needs every earlier stage: the API reads s.Catalog, s.Store,
// s.authStore, s.ItemStates, s.Events (state), s.Triggers and s.Alerts
// (rules), s.Pipeline, s.Trapper and s.Poller (ways in). httpsConf is
// the port's certificate (loadHTTPS; nil serves plain HTTP).
//
// Builds: s.httpLn (bound here: the API is complete before the port
// accepts), s.API and s.httpSrv, which Run serves. A new API family or
// page registers here.
func (s *Server) openHTTP(httpsConf *tls.Config) error {
	cfg, log := s.cfg, s.log
	var err error
	s.httpLn, err = net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen for HTTP on %s (set http.listen): %w", cfg.HTTP.Listen, err)
	}
	mux := http.NewServeMux()
	metrics, err := s.metricsHandler()
	if err != nil {
		return err
	}
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", s.healthz)
	var trends api.TrendReader
	if tr, ok := s.Store.(history.TrendReader); ok {
		trends = apiTrends{tr}
	}
	var flusher api.HistoryFlusher
	if s.Housekeep != nil {
		flusher = apiFlush{s.Housekeep}
	}
	s.API = api.New(api.Options{
		JS:      s.JS,
		Catalog: s.Catalog, History: s.Store, Trends: trends, Auth: s.authStore, Accounts: s.authStore, Ingest: pusher{s.Trapper}, Last: s.Pipeline,
		States: s.ItemStates, RuleErrors: s.LLD, Availability: s.ItemStates, Autoreg: s.Catalog, CheckNow: checkNow{s}, Queue: apiQueue{s.Poller},
		Events: s.Events, TriggerStates: s.Triggers, Audit: s.Audit,
		Alerting: &apiAlerting{e: s.Alerts, c: s.Catalog, minStep: cfg.Alerts.MinStepDuration.Std(),
			cmd: s.commander(), cmdTimeout: cfg.Alerts.CommandTimeout.Std()},
		Services: s.Services, HistoryFlush: flusher,
		MaxBodyBytes: int64(cfg.API.MaxBodySize), MaxRows: cfg.API.MaxRows, MaxBatchCalls: cfg.API.MaxBatchCalls, Timeout: cfg.API.Timeout.Std(),
		MaxConcurrentCalls: cfg.API.MaxConcurrentCalls, MaxWaitingPerUser: cfg.API.MaxWaitingCallsPerUser,
		SettingsHook:    s.applySettings,
		ProxyLastAccess: func(id uint64) int64 { return s.Trapper.ProxyLastAccess(id) },
		HACluster:       s.haCluster(),
		Standby:         s.apiStandby(),
		Logger:          log.With("component", "api"), Metrics: s.Metrics,
	})
	mux.Handle("/api_jsonrpc.php", s.API.Handler())
	if cfg.HTTP.UI {
		ui, err := web.New(web.Options{
			API: s.API.Handler(), AdminPasswordFile: adminPasswordPath(cfg.DataDir),
			TLS: httpsConf != nil, HSTSMaxAge: cfg.HTTP.HSTSMaxAge.Std(),
			Logger: log.With("component", "web"), Metrics: s.Metrics,
		})
		if err != nil {
			return err
		}
		ui.Register(mux)
	}
	if cfg.HTTP.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	}
	var handler http.Handler = mux
	if httpsConf != nil {
		handler = hsts(mux, cfg.HTTP.HSTSMaxAge.Std())
	}
	s.httpSrv = &http.Server{
		Handler:   handler,
		TLSConfig: httpsConf,
		// net/http's own complaints (failed TLS handshakes: plain HTTP to
		// the HTTPS port, scanners) go to our log at debug level, not to
		// stderr once per connection.
		ErrorLog:          slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelDebug),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      5 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	s.Metrics.GaugeFunc("peregrine_catalog_items", "Items in the catalog snapshot.", func() float64 { return float64(s.Catalog.Snapshot().ItemCount()) })
	s.Metrics.GaugeFunc("peregrine_catalog_triggers", "Triggers in the catalog snapshot.", func() float64 { return float64(len(s.Catalog.Snapshot().Triggers())) })
	s.Metrics.GaugeFunc("peregrine_problems_open", "Open problems in the event store.", func() float64 { return float64(s.Events.Stats().OpenProblems) })
	s.Metrics.GaugeFunc("peregrine_events_retained", "Events kept by the event store (within events.retention).", func() float64 { return float64(s.Events.Stats().Events) })
	s.Metrics.CounterFunc("peregrine_event_commits_total", "Event store commits (batches of events, acknowledge actions and trigger states).", func() float64 { return float64(s.Events.Stats().Commits) })
	s.Metrics.CounterFunc("peregrine_event_commit_errors_total", "Event store commits that failed (their events were not stored).", func() float64 { return float64(s.Events.Stats().CommitErrors) })
	return nil
}

// apiQueue adapts the poller's queue to the API's view.
// apiFlush serves history.flush with the housekeeper.
type apiFlush struct{ h *housekeep.Housekeeper }

func (f apiFlush) FlushHistory(ctx context.Context, compact bool) (int64, int, time.Duration, error) {
	r, err := f.h.FlushNow(ctx, compact)
	if errors.Is(err, housekeep.ErrBusy) {
		err = api.ErrFlushBusy
	}
	return r.Flushed, r.Compacted, r.Took, err
}

type apiQueue struct{ p *poll.Scheduler }

func (q apiQueue) Overdue() []api.OverdueCheck {
	od := q.p.Overdue()
	out := make([]api.OverdueCheck, len(od))
	for i, c := range od {
		out[i] = api.OverdueCheck(c)
	}
	return out
}

// apiTrends adapts a store's trends to the API's view.
type apiTrends struct{ tr history.TrendReader }

func (a apiTrends) ReadTrends(ctx context.Context, item uint64, from, till int64) ([]api.Trend, error) {
	ts, err := a.tr.ReadTrends(ctx, item, from, till)
	if err != nil {
		return nil, err
	}
	out := make([]api.Trend, len(ts))
	for i, t := range ts {
		out[i] = api.Trend{Clock: t.Clock, Num: t.Num, Min: t.Min, Max: t.Max, Avg: t.Avg()}
	}
	return out, nil
}
