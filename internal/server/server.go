package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/engine/wal"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Version is the Peregrine version, set at build time with
// -ldflags "-X github.com/peregrine-mon/peregrine/internal/server.Version=...".
var Version = "0.1.0-dev"

// CatalogPath is where the catalog database lives in a data directory.
func CatalogPath(dataDir string) string { return filepath.Join(dataDir, "catalog.db") }

// HistoryPath is the embedded history engine's directory.
func HistoryPath(dataDir string) string { return filepath.Join(dataDir, "history") }

// NewLogger builds the process logger from the log configuration.
func NewLogger(c config.LogConfig, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Server is a running Peregrine.
type Server struct {
	cfg       config.Config
	log       *slog.Logger
	Metrics   *selfmon.Registry
	Catalog   *catalog.Catalog
	Store     history.Store
	Pipeline  *pipeline.Pipeline
	Trapper   *ingest.Server
	API       *api.Server
	authStore *auth.Store
	httpLn    net.Listener
	httpSrv   *http.Server
}

// New opens the data directory and binds the listeners; Run serves.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (*Server, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("cannot create data directory %s (set data_dir): %w", cfg.DataDir, err)
	}
	s := &Server{cfg: cfg, log: log, Metrics: selfmon.NewRegistry()}
	ok := false
	defer func() {
		if !ok {
			s.closeAll()
		}
	}()
	var err error
	s.Catalog, err = catalog.Open(ctx, catalog.Options{Path: CatalogPath(cfg.DataDir), Logger: log.With("component", "catalog")})
	if err != nil {
		return nil, err
	}
	switch cfg.History.Store {
	case "engine":
		sync := wal.SyncBatch
		if cfg.History.Fsync == "interval" {
			sync = wal.SyncInterval
		}
		s.Store, err = engine.Open(engine.Options{
			Dir:          HistoryPath(cfg.DataDir),
			Sync:         sync,
			SyncInterval: cfg.History.FsyncInterval.Std(),
			Logger:       log.With("component", "history"),
		})
		if err != nil {
			return nil, err
		}
	case "memory":
		s.Store = memstore.New()
	default:
		return nil, fmt.Errorf("unknown history.store %q", cfg.History.Store)
	}
	s.Pipeline, err = pipeline.New(pipeline.Options{
		Shards:      cfg.Pipeline.EffectiveShards(),
		QueueValues: cfg.Pipeline.QueueValues,
		MaxBatch:    cfg.Pipeline.MaxBatch,
		Store:       s.Store,
		Metrics:     s.Metrics,
		Logger:      log.With("component", "pipeline"),
	})
	if err != nil {
		return nil, err
	}
	s.Trapper, err = ingest.New(ingest.Options{
		Listen:           cfg.Trapper.Listen,
		MaxConnections:   cfg.Trapper.MaxConnections,
		MaxFrameSize:     int64(cfg.Trapper.MaxFrameSize),
		MaxBufferedBytes: int64(cfg.Trapper.MaxBufferedBytes),
		Timeout:          cfg.Trapper.Timeout.Std(),
		IdleTimeout:      cfg.Trapper.IdleTimeout.Std(),
		Catalog:          s.Catalog,
		Pipeline:         s.Pipeline,
		Metrics:          s.Metrics,
		Logger:           log.With("component", "trapper"),
	})
	if err != nil {
		return nil, err
	}
	s.httpLn, err = net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return nil, fmt.Errorf("cannot listen for HTTP on %s (set http.listen): %w", cfg.HTTP.Listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.Metrics.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	s.authStore, err = auth.Open(ctx, auth.Options{Path: filepath.Join(cfg.DataDir, "auth.db"), Logger: log.With("component", "auth")})
	if err != nil {
		return nil, err
	}
	pwPath := filepath.Join(cfg.DataDir, "admin-password")
	created, err := s.authStore.EnsureAdmin(ctx, pwPath)
	if err != nil {
		return nil, fmt.Errorf("cannot create the first API user: %w", err)
	}
	if created {
		log.Warn("created API user \"Admin\" with a random password; it is in this file (readable by this user only): log in, then delete the file", "file", pwPath)
	}
	var trends api.TrendReader
	if eng, ok := s.Store.(*engine.Store); ok {
		trends = engineTrends{eng}
	}
	s.API = api.New(api.Options{
		Catalog: s.Catalog, History: s.Store, Trends: trends, Auth: s.authStore, Accounts: s.authStore, Ingest: s.Trapper, Last: s.Pipeline,
		MaxBodyBytes: int64(cfg.API.MaxBodySize), MaxRows: cfg.API.MaxRows, Timeout: cfg.API.Timeout.Std(),
		Logger: log.With("component", "api"), Metrics: s.Metrics,
	})
	mux.Handle("/api_jsonrpc.php", s.API.Handler())
	if cfg.HTTP.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	}
	s.httpSrv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      5 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	s.Metrics.GaugeFunc("peregrine_catalog_items", "Items in the catalog snapshot.", func() float64 { return float64(s.Catalog.Snapshot().ItemCount()) })
	ok = true
	return s, nil
}

// TrapperAddr is the bound trapper address.
func (s *Server) TrapperAddr() net.Addr { return s.Trapper.Addr() }

// HTTPAddr is the bound HTTP address.
func (s *Server) HTTPAddr() net.Addr { return s.httpLn.Addr() }

// Run serves until ctx is done, then shuts down in order: the trapper
// stops accepting and finishes its requests, the pipeline writes what it
// holds, the store and catalog close.
func (s *Server) Run(ctx context.Context) error {
	pctx, stopPipeline := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	wg.Add(1)
	go func() { defer wg.Done(); errc <- s.Pipeline.Run(pctx) }()
	if eng, ok := s.Store.(*engine.Store); ok {
		wg.Add(2)
		go func() {
			defer wg.Done()
			eng.Run(pctx, engine.FlushPolicy{Interval: s.cfg.History.FlushInterval.Std(), MaxHeadValues: s.cfg.History.MaxHeadValues})
		}()
		go func() { defer wg.Done(); s.runRetention(pctx, eng) }()
	}

	stopRates := make(chan struct{})
	go s.Metrics.RunRates(stopRates, 5*time.Second)

	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.httpSrv.Serve(s.httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http: %w", err)
		}
	}()
	s.log.Info("http listening", "addr", s.httpLn.Addr().String())

	tctx, stopTrapper := context.WithCancel(ctx)
	trapperDone := make(chan error, 1)
	go func() { trapperDone <- s.Trapper.Run(tctx) }()

	var runErr error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down")
	case runErr = <-trapperDone:
		trapperDone <- runErr
		s.log.Error("trapper stopped", "err", runErr)
	case runErr = <-errc:
	}
	stopTrapper()
	<-trapperDone
	shCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	s.httpSrv.Shutdown(shCtx)
	cancel()
	stopPipeline()
	s.Pipeline.Stop()
	wg.Wait()
	close(stopRates)
	if err := s.closeAll(); err != nil && runErr == nil {
		runErr = err
	}
	s.log.Info("stopped")
	return runErr
}

func (s *Server) closeAll() error {
	var errs []error
	if s.httpLn != nil && s.httpSrv == nil {
		s.httpLn.Close()
	}
	if s.Trapper != nil {
		s.Trapper.Close() // no-op after Run; frees the port if New failed later
	}
	if s.Store != nil {
		errs = append(errs, s.Store.Close())
	}
	if s.Catalog != nil {
		errs = append(errs, s.Catalog.Close())
	}
	if s.authStore != nil {
		errs = append(errs, s.authStore.Close())
	}
	return errors.Join(errs...)
}

// runRetention drops history partitions older than the longest history
// retention of any item, and trend partitions older than the longest
// trends retention: whole files, never rows. (Shorter per-item retention
// is for compaction, which is not built yet.)
func (s *Server) runRetention(ctx context.Context, eng *engine.Store) {
	t := time.NewTicker(s.cfg.History.RetentionCheck.Std())
	defer t.Stop()
	for {
		longest, longestTrends := int64(0), int64(0)
		for _, h := range s.Catalog.Snapshot().Hosts() {
			for _, it := range h.Items() {
				longest = max(longest, it.HistorySeconds)
				longestTrends = max(longestTrends, it.TrendsSeconds)
			}
		}
		if longestTrends > 0 {
			cutoff := time.Now().Unix() - longestTrends
			if n, err := eng.DropTrendsBefore(cutoff); err != nil {
				s.log.Error("trends retention: cannot drop partitions", "cutoff", cutoff, "err", err)
			} else if n > 0 {
				s.log.Info("trends retention dropped files", "files", n, "older_than", time.Unix(cutoff, 0).UTC())
			}
		}
		// Compact finished days into day blocks, applying each item's own
		// (shorter) retention on the way.
		snap := s.Catalog.Snapshot()
		if n, err := eng.Compact(ctx, time.Now(), func(id uint64) (int64, bool) {
			if it := snap.Item(id); it != nil {
				return it.HistorySeconds, true
			}
			return 0, false
		}); err != nil {
			s.log.Error("history compaction failed; the partitions stay as they are", "err", err)
		} else if n > 0 {
			s.log.Info("history compacted", "days", n)
		}
		if longest > 0 {
			cutoff := time.Now().Unix() - longest
			if n, err := eng.DropBefore(cutoff); err != nil {
				s.log.Error("history retention: cannot drop partitions", "cutoff", cutoff, "err", err)
			} else if n > 0 {
				s.log.Info("history retention dropped blocks", "blocks", n, "older_than", time.Unix(cutoff, 0).UTC())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// engineTrends adapts the engine's trends to the API's view.
type engineTrends struct{ eng *engine.Store }

func (e engineTrends) ReadTrends(ctx context.Context, item uint64, from, till int64) ([]api.Trend, error) {
	ts, err := e.eng.ReadTrends(ctx, item, from, till)
	if err != nil {
		return nil, err
	}
	out := make([]api.Trend, len(ts))
	for i, t := range ts {
		out[i] = api.Trend{Clock: t.Clock, Num: t.Num, Min: t.Min, Max: t.Max, Avg: t.Avg()}
	}
	return out, nil
}
