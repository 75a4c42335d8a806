package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/peregrine-mon/peregrine/internal/lld"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/audit"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/autoreg"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/expr"
	"github.com/peregrine-mon/peregrine/internal/fsutil"
	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/valuecache"
	"github.com/peregrine-mon/peregrine/internal/housekeep"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/ingest/snmptrap"
	"github.com/peregrine-mon/peregrine/internal/internalev"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/maintenance"
	"github.com/peregrine-mon/peregrine/internal/netdisc"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/agent"
	httpagent "github.com/peregrine-mon/peregrine/internal/poll/http"
	"github.com/peregrine-mon/peregrine/internal/poll/icmp"
	"github.com/peregrine-mon/peregrine/internal/poll/ipmi"
	"github.com/peregrine-mon/peregrine/internal/poll/odbc"
	"github.com/peregrine-mon/peregrine/internal/preprocess"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/service"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// Version is the Peregrine version, set at build time with
// -ldflags "-X github.com/peregrine-mon/peregrine/internal/server.Version=...".
var Version = "0.1.0-dev"

// CatalogPath is where the catalog database lives in a data directory.
func CatalogPath(dataDir string) string { return filepath.Join(dataDir, "catalog.db") }

// HistoryPath is the embedded history engine's directory.
func HistoryPath(dataDir string) string { return filepath.Join(dataDir, "history") }

// EventsPath is the event store's directory under dataDir.
func EventsPath(dataDir string) string { return filepath.Join(dataDir, "events") }

// ServicesPath is the services database: IT services, SLAs and the
// services' status history.
func ServicesPath(dataDir string) string { return filepath.Join(dataDir, "services.db") }

// AlertsPath is the alert engine's log (alerts and escalations).
func AlertsPath(dataDir string) string { return filepath.Join(dataDir, "alerts") }

// AuditPath is the audit log of API changes.
func AuditPath(dataDir string) string { return filepath.Join(dataDir, "audit") }

// ClickHouseSpoolPath is the ClickHouse backend's spool (a WAL of values
// acknowledged but not yet in ClickHouse).
func ClickHouseSpoolPath(dataDir string) string { return filepath.Join(dataDir, "clickhouse-spool") }

// AgentStatePath is where active agents' log positions live.
func AgentStatePath(dataDir string) string { return filepath.Join(dataDir, "agent-state.db") }

// AutoregStatePath is where auto-registrations are kept across
// restarts (Zabbix's autoreg_host; package autoreg's Store).
func AutoregStatePath(dataDir string) string { return filepath.Join(dataDir, "autoreg.db") }

// PreprocessStatePath is where the pipeline keeps the preprocessing
// steps' per-item state across restarts (docs/format/preprocess-state.md).
func PreprocessStatePath(dataDir string) string { return filepath.Join(dataDir, "preprocess.state") }

// CatalogOptions are the catalog's options for the data directory, with
// the validation hooks of steps (package preprocess), formulas (package
// expr) and trigger expressions (package trigger), which the catalog
// cannot import, for the server and
// `peregrine import` alike.
func CatalogOptions(dataDir string, log *slog.Logger) catalog.Options {
	return catalog.Options{Path: CatalogPath(dataDir), Logger: log, CheckPreprocessing: preprocess.CheckSteps, CheckFormula: CheckFormula,
		ExprRefs: trigger.ItemRefs}
}

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

// Server is a running Peregrine. Its fields are grouped by the stage of
// New that sets them.
type Server struct {
	cfg     config.Config
	log     *slog.Logger
	Metrics *selfmon.Registry
	started time.Time // zabbix[uptime]

	// State (openState).

	Catalog *catalog.Catalog
	// Events is the event store (data_dir/events) and Triggers the
	// problem state machine over it: evaluation results go to
	// Triggers.Process, the API reads both.
	Events *event.Store
	// Audit is the audit log of API changes (auditlog.get).
	Audit *audit.Log
	Store history.Store
	// ValueCache keeps the recent values trigger functions and
	// calculated items read (fed by the pipeline's commit hook).
	ValueCache *valuecache.Cache
	// ItemStates holds item states and interface availability (not
	// persisted); pollers and the trapper write it, the API reads it.
	ItemStates *itemstate.Registry
	Housekeep  *housekeep.Housekeeper
	// space refuses values while data_dir's file system is short of
	// history.min_free_space (nil: no check); see storageErr.
	space     *fsutil.SpaceGuard
	authStore *auth.Store
	// agentState keeps active log items' positions (lastlogsize).
	agentState *ingest.LogPositions
	// itemStatesPG stores ItemStates' changes in PostgreSQL for the
	// standbys (state.store: postgres); nil on an embedded server.
	itemStatesPG *itemstate.Writer
	passive      ingest.PassiveOptions // passive proxies' schedule and TLS

	// Rules (buildRules).

	// JS runs users' scripts (preprocessing steps, webhooks, the API's
	// preprocessing.test) in worker processes of this binary.
	JS *jsvm.Pool

	// Maintenance suppresses problems covered by maintenances (at their
	// creation through Triggers, and as periods start and end); its
	// Suppressed is the action engine's "problem is suppressed" hook.
	Maintenance *maintenance.Tracker
	// Services computes the IT services' statuses from the problems the
	// state machine commits (data_dir/services.db); like Alerts it runs
	// until the evaluator has stopped.
	Services *service.Engine
	// cmdAgent asks agents for system.run (remote commands): its own
	// checker, so that commands are not counted as item checks.
	cmdAgent *agent.Checker
	// Alerts matches committed events to actions and sends alerts
	// (data_dir/alerts); it runs until the evaluator has stopped.
	Alerts *alert.Engine
	// Autoreg registers active agents (event source 2) and runs the
	// auto-registration actions' host operations; Internal makes
	// internal events (source 3) of items and triggers changing state.
	Autoreg *autoreg.Registrar
	// autoregStore keeps Autoreg's registrations in the data directory.
	autoregStore *autoreg.Store
	Internal     *internalev.Producer
	// Discovery sweeps network discovery rules (event source 1).
	Discovery *netdisc.Discoverer
	Triggers  *trigger.Machine
	// Evaluator evaluates triggers when the pipeline commits values of
	// their items (its Commit is the pipeline's OnCommit) and on a timer.
	Evaluator *trigger.Evaluator
	// LLD applies discovery rules' committed values to the catalog
	// (its Commit is on the pipeline's OnCommit, after the evaluator's).
	LLD *lld.Engine

	// Ways in (openWaysIn).

	Pipeline *pipeline.Pipeline
	// Poller schedules and runs polled checks (passive agents).
	Poller *poll.Scheduler
	// icmp is the ICMP checker: its sockets and goroutines close after
	// the poller stops.
	icmp      *icmp.Checker
	httpAgent *httpagent.Checker
	ipmi      *ipmi.Checker // its sessions close after the poller stops
	// odbc is the database monitor checker: its pooled connections
	// close after the poller stops.
	odbc    *odbc.Checker
	Trapper *ingest.Server
	// SNMPTraps receives SNMP traps; nil unless snmp.trap_listen is set.
	SNMPTraps *snmptrap.Receiver

	// HTTP (openHTTP).

	API     *api.Server
	httpLn  net.Listener
	httpSrv *http.Server

	// HA (hanode.go): node is the cluster membership (nil standalone);
	// on a node's outer server active is the server built while the
	// node holds the lease; pg is that server's PostgreSQL state.
	node     *ha.Node
	active   atomic.Pointer[Server]
	pg       *pgState
	nodeAddr net.Addr // the HTTP port a node's standby and active server bind
}

// PrepareDataDir creates the data directory with mode 0700, or takes group
// and other access away from an existing one, saying so: it holds password
// hashes, sessions and every stored value. Everything Peregrine creates
// inside is owner-only as well (0700 directories, 0600 files), whatever
// the umask.
func PrepareDataDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create data directory %s (set data_dir): %w", dir, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cannot use data directory %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("data directory %s is not a directory (set data_dir)", dir)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("data directory %s is mode %#o, open to other users, and cannot be made 0700: %w (run `chmod 700 %s` as its owner)", dir, perm, err, dir)
		}
		log.Warn("data directory was open to other users; made it owner-only", "dir", dir, "mode_was", fmt.Sprintf("%#o", perm), "mode", "0700")
	}
	return nil
}

// New builds a server in four stages, each adding to s what the later
// ones need (their contracts are on the functions):
//
//   - openState (server_state.go): the data directory, catalog, event
//     and history stores, value cache, item runtime, housekeeper, API
//     accounts with the first credentials, active agents' log positions;
//   - buildRules (server_rules.go): maintenance, the alert engine, the
//     problem state machine and trigger evaluation;
//   - openWaysIn (server_wayin.go): the pipeline, the self-monitoring
//     host, the poller and its checkers, then the trapper and SNMP trap
//     listeners;
//   - openHTTP (server_http.go): the HTTP port with the API, web UI and
//     metrics.
//
// So state is restored and the first API credentials written before any
// port is bound, and every port is bound before New returns; Run serves.
// If a stage fails, what the earlier ones opened is closed.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (*Server, error) {
	if cfg.HA.Enabled() {
		return newNode(ctx, cfg, log) // hanode.go
	}
	if cfg.State.Store != "embedded" {
		return nil, errPostgresNeedsNode
	}
	return build(ctx, cfg, log, nil, nil)
}

// build is New's four stages; pg and node are the PostgreSQL state and
// the cluster membership of an active node (hanode.go), nil on an
// embedded server.
func build(ctx context.Context, cfg config.Config, log *slog.Logger, pg *pgState, node *ha.Node) (*Server, error) {
	s := &Server{cfg: cfg, log: log, Metrics: selfmon.NewRegistry(), started: time.Now(), pg: pg, node: node}
	ok := false
	defer func() {
		if !ok {
			s.closeAll()
		}
	}()
	if err := s.openState(ctx); err != nil {
		return nil, err
	}
	// Certificate files are read before any port is bound (ways in and
	// HTTP), so that a bad file stops the start with its name and no
	// port was ever open.
	tlsMaterial, err := loadTLS(cfg.TLS)
	if err != nil {
		return nil, err
	}
	httpsConf, err := loadHTTPS(cfg.HTTP)
	if err != nil {
		return nil, err
	}
	if err := s.buildRules(tlsMaterial); err != nil {
		return nil, err
	}
	if err := s.openWaysIn(ctx, tlsMaterial); err != nil {
		return nil, err
	}
	if err := s.openHTTP(httpsConf); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// TrapperAddr is the bound trapper address.
func (s *Server) TrapperAddr() net.Addr { return s.Trapper.Addr() }

// isNode reports whether s is a cluster node's outer server (hanode.go).
func (s *Server) isNode() bool { return s.node != nil && s.pg == nil }

// HTTPAddr is the bound HTTP address.
func (s *Server) HTTPAddr() net.Addr {
	if s.isNode() {
		return s.nodeHTTPAddr()
	}
	return s.httpLn.Addr()
}

// Run serves until ctx is done, then shuts down in order: the trapper
// stops accepting and finishes its requests, the pipeline writes what it
// holds while housekeeping finishes its current step, the store and
// catalog close.
func (s *Server) Run(ctx context.Context) error {
	if s.isNode() {
		return s.runNode(ctx)
	}
	pctx, stopPipeline := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	wg.Add(1)
	go func() { defer wg.Done(); errc <- s.Pipeline.Run(pctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.Housekeep.Run(pctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.Events.Run(pctx) }() // event retention
	wg.Add(1)
	go func() { defer wg.Done(); s.Audit.Run(pctx) }() // audit log retention
	wg.Add(1)
	go func() { defer wg.Done(); s.reconcileProblems(pctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.dropEndedSessions(pctx) }() // a node's: logouts on standbys
	wg.Add(1)
	go func() { defer wg.Done(); s.listenLogouts(pctx) }() // hanode_logout.go
	if s.itemStatesPG != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.itemStatesPG.Run(pctx, itemStatesFlush, func(err error) { s.log.Warn("cannot store the item states for the standbys", "err", err) })
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); s.Evaluator.Run(pctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.Maintenance.Run(pctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); _ = s.LLD.Run(pctx) }()
	// The alert engine outlives evaluation: it stops after the last
	// evaluation pass below, so every event made is matched (or in the
	// log's catch-up at the next start).
	actx, stopAlerts := context.WithCancel(context.Background())
	alertsDone := make(chan struct{})
	go func() { defer close(alertsDone); s.Alerts.Run(actx) }()
	servicesDone := make(chan struct{})
	go func() { defer close(servicesDone); s.Services.Run(actx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.ValueCache.Run(pctx) }()
	wg.Add(2)
	go func() { defer wg.Done(); s.Autoreg.Run(pctx) }()
	go func() { defer wg.Done(); s.Internal.Run(pctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.Discovery.Run(pctx) }()

	stopRates := make(chan struct{})
	go s.Metrics.RunRates(stopRates, 5*time.Second)

	// The TLS listener is made here, before Serve: Serve writes to
	// httpSrv.TLSConfig (HTTP/2 set-up), so nothing may read it after.
	ln := s.httpLn
	https := s.httpSrv.TLSConfig != nil
	if https {
		ln = tls.NewListener(ln, s.httpSrv.TLSConfig)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http: %w", err)
		}
	}()
	s.log.Info("http listening", "addr", s.httpLn.Addr().String(), "https", https)

	tctx, stopTrapper := context.WithCancel(ctx)
	trapperDone := make(chan error, 1)
	go func() { trapperDone <- s.Trapper.Run(tctx) }()
	proxiesDone := make(chan struct{})
	go func() { defer close(proxiesDone); s.runProxies(tctx) }()
	// The trap receiver stores through the pipeline too: it stops with
	// the trapper, before the pipeline.
	trapsDone := make(chan struct{})
	go func() {
		defer close(trapsDone)
		if s.SNMPTraps != nil {
			s.log.Info("SNMP traps listening", "addr", s.SNMPTraps.Addr().String())
			s.SNMPTraps.Run(tctx)
		}
	}()
	// The poller stores through the pipeline: it stops (its checks in
	// flight come back and are stored) before the pipeline does.
	pollCtx, stopPoller := context.WithCancel(ctx)
	pollerDone := make(chan struct{})
	go func() { defer close(pollerDone); s.Poller.Run(pollCtx) }()

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
	<-proxiesDone
	<-trapsDone
	stopPoller()
	<-pollerDone
	shCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	s.httpSrv.Shutdown(shCtx)
	cancel()
	stopPipeline()
	s.Pipeline.Stop()
	wg.Wait()
	// The pipeline's last batches were committed after the evaluator
	// stopped: their triggers are evaluated now, while the event store is
	// still open, so that no acknowledged value goes unevaluated.
	s.Evaluator.Drain(context.Background())
	stopAlerts()
	<-alertsDone
	<-servicesDone
	close(stopRates)
	s.shipHistory() // hanode.go: a node's spool goes to ClickHouse before it stops
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
	if s.SNMPTraps != nil {
		s.SNMPTraps.Close()
	}
	if s.icmp != nil {
		errs = append(errs, s.icmp.Close())
	}
	if s.httpAgent != nil {
		s.httpAgent.Close()
	}
	if s.ipmi != nil {
		s.ipmi.Close()
	}
	if s.odbc != nil {
		s.odbc.Close()
	}
	if s.agentState != nil {
		errs = append(errs, s.agentState.Close())
	}
	if s.autoregStore != nil {
		errs = append(errs, s.autoregStore.Close())
	}
	if s.Store != nil {
		errs = append(errs, s.Store.Close())
	}
	if s.Alerts != nil {
		errs = append(errs, s.Alerts.Close())
	}
	if s.JS != nil {
		errs = append(errs, s.JS.Close())
	}
	if s.Services != nil {
		errs = append(errs, s.Services.Close())
	}
	if s.Events != nil {
		errs = append(errs, s.Events.Close())
	}
	if s.Audit != nil {
		errs = append(errs, s.Audit.Close())
	}
	if s.Catalog != nil {
		errs = append(errs, s.Catalog.Close())
	}
	if s.authStore != nil {
		errs = append(errs, s.authStore.Close())
	}
	return errors.Join(errs...)
}

// CheckFormula validates a calculated item's formula for the catalog
// (catalog.Options.CheckFormula): it must parse as a Zabbix 6.0
// expression; the error carries the position.
func CheckFormula(formula string) error {
	_, err := expr.Parse(formula)
	return err
}
