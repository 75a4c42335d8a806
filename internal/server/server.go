package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/expr"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/clickhouse"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/history/valuecache"
	"github.com/peregrine-mon/peregrine/internal/housekeep"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/ingest/snmptrap"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/maintenance"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/agent"
	"github.com/peregrine-mon/peregrine/internal/poll/calc"
	"github.com/peregrine-mon/peregrine/internal/poll/external"
	httpagent "github.com/peregrine-mon/peregrine/internal/poll/http"
	"github.com/peregrine-mon/peregrine/internal/poll/icmp"
	"github.com/peregrine-mon/peregrine/internal/poll/selfcheck"
	"github.com/peregrine-mon/peregrine/internal/poll/snmp"
	"github.com/peregrine-mon/peregrine/internal/poll/tcpsvc"
	"github.com/peregrine-mon/peregrine/internal/preprocess"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/trigger"
	"github.com/peregrine-mon/peregrine/internal/wal"
	"github.com/peregrine-mon/peregrine/internal/web"
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

// AlertsPath is the alert engine's log (alerts and escalations).
func AlertsPath(dataDir string) string { return filepath.Join(dataDir, "alerts") }

// ClickHouseSpoolPath is the ClickHouse backend's spool (a WAL of values
// acknowledged but not yet in ClickHouse).
func ClickHouseSpoolPath(dataDir string) string { return filepath.Join(dataDir, "clickhouse-spool") }

// AgentStatePath is where active agents' log positions live.
func AgentStatePath(dataDir string) string { return filepath.Join(dataDir, "agent-state.db") }

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

// Server is a running Peregrine.
type Server struct {
	cfg       config.Config
	log       *slog.Logger
	Metrics   *selfmon.Registry
	Catalog   *catalog.Catalog
	Store     history.Store
	Pipeline  *pipeline.Pipeline
	Housekeep *housekeep.Housekeeper
	Trapper   *ingest.Server
	// SNMPTraps receives SNMP traps; nil unless snmp.trap_listen is set.
	SNMPTraps *snmptrap.Receiver
	// Runtime holds item states and interface availability (not
	// persisted); pollers and the trapper write it, the API reads it.
	Runtime *itemstate.Registry
	// agentState keeps active log items' positions (lastlogsize).
	agentState *ingest.LogPositions
	// Poller schedules and runs polled checks (passive agents).
	Poller *poll.Scheduler
	// icmp is the ICMP checker: its sockets and goroutines close after
	// the poller stops.
	icmp      *icmp.Checker
	httpAgent *httpagent.Checker
	// cmdAgent asks agents for system.run (remote commands): its own
	// checker, so that commands are not counted as item checks.
	cmdAgent *agent.Checker
	API      *api.Server
	// Events is the event store (data_dir/events) and Triggers the
	// problem state machine over it: evaluation results go to
	// Triggers.Process, the API reads both.
	Events   *event.Store
	Triggers *trigger.Machine
	// Maintenance suppresses problems covered by maintenances (at their
	// creation through Triggers, and as periods start and end); its
	// Suppressed is the action engine's "problem is suppressed" hook.
	Maintenance *maintenance.Tracker
	// Evaluator evaluates triggers when the pipeline commits values of
	// their items (its Commit is the pipeline's OnCommit) and on a timer.
	Evaluator *trigger.Evaluator
	// Alerts matches committed events to actions and sends alerts
	// (data_dir/alerts); it runs until the evaluator has stopped.
	Alerts *alert.Engine
	// ValueCache keeps the recent values trigger functions and
	// calculated items read (fed by the pipeline's commit hook).
	ValueCache *valuecache.Cache
	authStore  *auth.Store
	started    time.Time // zabbix[uptime]
	httpLn     net.Listener
	httpSrv    *http.Server
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

// New opens the data directory, restores state and writes the first API
// credentials, and only then binds the listeners; Run serves.
func New(ctx context.Context, cfg config.Config, log *slog.Logger) (*Server, error) {
	if err := PrepareDataDir(cfg.DataDir, log); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, Metrics: selfmon.NewRegistry(), started: time.Now()}
	ok := false
	defer func() {
		if !ok {
			s.closeAll()
		}
	}()
	var err error
	// Trigger expressions are validated, and their items found, by the
	// expression parser (CatalogOptions).
	s.Catalog, err = catalog.Open(ctx, CatalogOptions(cfg.DataDir, log.With("component", "catalog")))
	if err != nil {
		return nil, err
	}
	evSync := wal.SyncBatch
	if cfg.Events.Fsync == "interval" {
		evSync = wal.SyncInterval
	}
	s.Events, err = event.Open(event.Options{
		Dir: EventsPath(cfg.DataDir), Sync: evSync, SyncInterval: cfg.Events.FsyncInterval.Std(),
		Retention: time.Duration(cfg.Events.RetentionSeconds()) * time.Second, Logger: log.With("component", "events"),
	})
	if err != nil {
		return nil, err
	}
	s.Maintenance, err = maintenance.New(maintenance.Options{Catalog: s.Catalog, Events: s.Events,
		Metrics: s.Metrics, Logger: log.With("component", "maintenance")})
	if err != nil {
		return nil, err
	}
	alSync := wal.SyncBatch
	if cfg.Alerts.Fsync == "interval" {
		alSync = wal.SyncInterval
	}
	s.Alerts, err = alert.New(alert.Options{
		Dir: AlertsPath(cfg.DataDir), Sync: alSync, SyncInterval: cfg.Alerts.FsyncInterval.Std(),
		Config: s.Catalog.AlertConfig, Snapshot: s.Catalog.Snapshot, Events: s.Events,
		// Closures: the accounts and the pipeline are made below.
		UsersOfGroups:  s.usersOfGroups,
		Rights:         s.readsOf,
		Commander:      s.commander(),
		CommandTimeout: cfg.Alerts.CommandTimeout.Std(),
		LastValue: func(id uint64) (string, bool) {
			if s.Pipeline == nil {
				return "", false
			}
			last, _, ok := s.Pipeline.Last(id)
			if !ok {
				return "", false
			}
			return sampleText(&last), true
		},
		QueueSize: cfg.Alerts.QueueSize, RateLimit: cfg.Alerts.RateLimit, MaxSessions: cfg.Alerts.MaxSessions,
		KeepAlerts: cfg.Alerts.KeepAlerts, InboxSize: cfg.Alerts.InboxSize, ScriptsDir: cfg.Alerts.ScriptsDir,
		MaxBody: int64(cfg.Alerts.WebhookMaxBody),
		// A problem is suppressed when made in a maintenance (its flag) or
		// covered by one that started later (the tracker's record).
		Suppressed: func(ev *event.Event) bool { return ev.Suppressed || s.Maintenance.Suppressed(ev.ID) },
		Metrics:    s.Metrics, Logger: log.With("component", "alert"),
	})
	if err != nil {
		return nil, err
	}
	// The state machine commits through notifyStore: every committed
	// batch of events and acknowledges is handed to the alert engine,
	// which only queues it (it never blocks evaluation).
	s.Triggers, err = trigger.New(trigger.Options{Store: notifyStore{s.Events, s.Alerts.Notify}, Suppress: s.Maintenance.Covers,
		// A soft trigger's items are re-checked at their retry interval;
		// the poller is made later, and results only flow once it runs.
		OnSoft: func(t *catalog.Trigger, soft bool) {
			if s.Poller == nil {
				return
			}
			// A dependent item is re-checked through its master.
			snap := s.Catalog.Snapshot()
			ids := make([]uint64, 0, len(t.ItemIDs))
			for _, id := range t.ItemIDs {
				if it := snap.Item(id); it != nil {
					ids = append(ids, snap.Root(it).ID)
				}
			}
			s.Poller.SetRetry(ids, soft)
		},
		Logger: log.With("component", "trigger")})
	if err != nil {
		return nil, err
	}
	switch cfg.History.Store {
	case "engine":
		sync := wal.SyncBatch
		if cfg.History.Fsync == "interval" {
			sync = wal.SyncInterval
		}
		prec, perr := history.ParsePrecision(cfg.History.TimestampPrecision)
		if perr != nil {
			return nil, fmt.Errorf("history.timestamp_precision: %w", perr)
		}
		s.Store, err = engine.Open(engine.Options{
			Dir:          HistoryPath(cfg.DataDir),
			Sync:         sync,
			SyncInterval: cfg.History.FsyncInterval.Std(),
			Logger:       log.With("component", "history"),
			Precision:    prec,
			// An item's own precision (catalog) over the server's; a
			// snapshot lookup per written value, no lock.
			ItemPrecision: func(id uint64) (history.Precision, bool) {
				if it := s.Catalog.Snapshot().Item(id); it != nil {
					return it.Precision()
				}
				return 0, false
			},
		})
		if err != nil {
			return nil, err
		}
	case "clickhouse":
		sync := wal.SyncBatch
		if cfg.History.Fsync == "interval" {
			sync = wal.SyncInterval
		}
		chc := cfg.History.ClickHouse
		tc, terr := clickhouseTLS(chc.TLS)
		if terr != nil {
			return nil, terr
		}
		s.Store, err = clickhouse.Open(ctx, clickhouse.Options{
			URLs: chc.URLs, Database: chc.Database, User: chc.User, Password: chc.Password, TLS: tc,
			Dir: ClickHouseSpoolPath(cfg.DataDir), Sync: sync, SyncInterval: cfg.History.FsyncInterval.Std(),
			BatchSize: chc.BatchSize, FlushInterval: chc.FlushInterval.Std(), SpoolLimit: chc.SpoolLimit,
			QueryTimeout: chc.QueryTimeout.Std(), Cluster: chc.Cluster, DirectWrites: chc.DirectWrites,
			Metrics: s.Metrics, Logger: log.With("component", "history"),
		})
		if err != nil {
			return nil, err
		}
	case "memory":
		s.Store = memstore.New()
	default:
		return nil, fmt.Errorf("unknown history.store %q", cfg.History.Store)
	}
	// Trigger evaluation hangs off the pipeline's commit hook: Commit
	// only queues the affected triggers; the evaluation runs on the
	// evaluator's goroutine (Run).
	// The value cache sits in front of the store for trigger functions
	// and calculated items; the commit hook feeds it before the
	// evaluator queues, so a pass never reads a cache that lacks the
	// values that queued it.
	s.ValueCache, err = valuecache.New(valuecache.Options{
		Store: s.Store, MaxBytes: int64(cfg.Triggers.ValueCacheSize), MaxPeriod: cfg.Triggers.ValueCacheMaxPeriod.Std(),
		Metrics: s.Metrics, Logger: log.With("component", "valuecache"),
	})
	if err != nil {
		return nil, err
	}
	s.Evaluator, err = trigger.NewEvaluator(trigger.EvaluatorOptions{
		Machine:       s.Triggers,
		Snapshot:      s.Catalog.Snapshot,
		Store:         s.Store,
		Values:        s.ValueCache,
		MaxPending:    cfg.Triggers.MaxPending,
		Shards:        cfg.Triggers.EvalShards,
		TimerInterval: cfg.Triggers.TimerInterval.Std(),
		Started:       s.started,
		Metrics:       s.Metrics,
		Logger:        log.With("component", "trigger", "stage", "evaluation"),
	})
	if err != nil {
		return nil, err
	}
	s.Runtime = itemstate.New()
	s.Pipeline, err = pipeline.New(pipeline.Options{
		OnCommit: func(shard int, samples []history.Sample) {
			s.ValueCache.Add(shard, samples)
			s.Evaluator.Commit(shard, samples)
		},
		Shards:      cfg.Pipeline.EffectiveShards(),
		QueueValues: cfg.Pipeline.QueueValues,
		MaxBatch:    cfg.Pipeline.MaxBatch,
		Store:       s.Store,
		Metrics:     s.Metrics,
		Logger:      log.With("component", "pipeline"),
		Catalog:     s.Catalog.Snapshot,
		ItemStates:  s.Runtime,
		StatePath:   PreprocessStatePath(cfg.DataDir),
	})
	if err != nil {
		return nil, err
	}
	if err := s.ensureSelfHost(ctx); err != nil {
		return nil, err
	}
	if err := s.seedLastValues(ctx); err != nil {
		return nil, err
	}
	warnOpenFiles(cfg, log)
	tlsMaterial, err := loadTLS(cfg.TLS)
	if err != nil {
		return nil, err
	}
	calcChecker, err := calc.New(calc.Options{
		Snapshot: s.Catalog.Snapshot,
		Store:    s.Store,
		Values:   s.ValueCache,
		Started:  s.started,
		Logger:   log.With("component", "poll", "checker", "calculated"),
	})
	if err != nil {
		return nil, err
	}
	icmpSocket := cfg.Poll.ICMPSocket
	if icmpSocket == "auto" {
		icmpSocket = icmp.ModeAuto
	}
	s.icmp = icmp.New(icmp.Options{
		Rate:    cfg.Poll.ICMPRate,
		Socket:  icmpSocket,
		Metrics: s.Metrics,
		Logger:  log.With("component", "poll", "checker", "icmp"),
	})
	s.cmdAgent = agent.New(agent.Options{
		ConnectTimeout: cfg.Poll.ConnectTimeout.Std(),
		MaxReplySize:   int(cfg.Poll.MaxReplySize),
		TLS:            agentTLS(s.Catalog, tlsMaterial),
		Metrics:        selfmon.NewRegistry(),
		Logger:         log.With("component", "alert", "checker", "agent"),
	})
	s.httpAgent = httpagent.New(httpagent.Options{
		Item:            func(id uint64) *catalog.Item { return s.Catalog.Snapshot().Item(id) },
		MaxBodySize:     int64(cfg.Poll.HTTPMaxBodySize),
		MaxHeaderSize:   int64(cfg.Poll.HTTPMaxHeaderSize),
		MaxConnsPerHost: cfg.Poll.HTTPMaxConnsPerHost,
		DefaultTimeout:  cfg.Poll.DefaultTimeout.Std(),
		Metrics:         s.Metrics,
		Logger:          log.With("component", "poll", "checker", "http"),
	})
	s.Poller, err = poll.New(poll.Options{
		Catalog: s.Catalog,
		Submit:  func(v []history.Sample) error { return s.Pipeline.Submit(v, pipeline.NewTicket()) },
		Runtime: s.Runtime,
		Checkers: map[catalog.ItemType]poll.CheckerSpec{
			catalog.ZabbixAgent: {
				Checker: agent.New(agent.Options{
					ConnectTimeout: cfg.Poll.ConnectTimeout.Std(),
					MaxReplySize:   int(cfg.Poll.MaxReplySize),
					TLS:            agentTLS(s.Catalog, tlsMaterial),
					Metrics:        s.Metrics,
					Logger:         log.With("component", "poll", "checker", "agent"),
				}),
				MaxInFlight: cfg.Poll.AgentMaxInFlight,
			},
			catalog.SNMPAgent: {
				Checker: snmp.New(snmp.Options{
					Snapshot:          s.Catalog.Snapshot,
					MaxOIDsPerRequest: cfg.SNMP.MaxOIDsPerRequest,
					MaxRepetitions:    cfg.SNMP.MaxRepetitions,
					MaxWalkValues:     cfg.SNMP.MaxWalkValues,
					MaxValueSize:      int(cfg.Poll.MaxReplySize),
					IdleClose:         cfg.SNMP.IdleClose.Std(),
					Metrics:           s.Metrics,
					Logger:            log.With("component", "poll", "checker", "snmp"),
				}),
				MaxInFlight: cfg.SNMP.MaxInFlight,
			},
			catalog.Internal:   {Checker: s.selfChecker(), NoInterface: true},
			catalog.Calculated: {Checker: calcChecker, NoInterface: true},
			// Simple checks: ICMP ping, TCP services and web pages, by key.
			catalog.SimpleCheck: {
				Checker: &poll.KeyRouter{Routes: []poll.Route{
					{Match: icmp.IsKey, Checker: s.icmp},
					{Match: tcpsvc.IsKey, Checker: tcpsvc.New(tcpsvc.Options{
						Metrics: s.Metrics,
						Logger:  log.With("component", "poll", "checker", "tcpsvc"),
					})},
					{Match: httpagent.IsWebPageKey, Checker: s.httpAgent.WebPage()},
				}},
				MaxInFlight:    cfg.Poll.SimpleMaxInFlight,
				NoAvailability: true,
			},
			// HTTP agent items: the URL says where; no interface, no
			// availability (Zabbix keeps none for them).
			catalog.HTTPAgent: {Checker: s.httpAgent, MaxInFlight: cfg.Poll.HTTPMaxInFlight, NoInterface: true},
			// External checks and nagios[] plugins: processes from the
			// configured directories; like simple checks they may name an
			// interface but keep no availability (Zabbix keeps none).
			catalog.External: {
				Checker: external.New(external.Options{
					Dirs:           cfg.Poll.ExternalScripts,
					MaxProcesses:   cfg.Poll.ExternalMaxProcesses,
					MaxOutput:      int(cfg.Poll.ExternalMaxOutput),
					DefaultTimeout: cfg.Poll.DefaultTimeout.Std(),
					Metrics:        s.Metrics,
					Logger:         log.With("component", "poll", "checker", "external"),
				}),
				NoAvailability: true,
			},
		},
		MaxInFlight:       cfg.Poll.MaxInFlight,
		DefaultTimeout:    cfg.Poll.DefaultTimeout.Std(),
		UnreachablePeriod: cfg.Poll.UnreachablePeriod.Std(),
		UnreachableDelay:  cfg.Poll.UnreachableDelay.Std(),
		UnavailableDelay:  cfg.Poll.UnavailableDelay.Std(),
		StampTolerance:    cfg.Poll.TimestampTolerance.Std(),
		Metrics:           s.Metrics,
		Logger:            log.With("component", "poll"),
	})
	if err != nil {
		return nil, err
	}
	s.Housekeep, err = housekeep.New(housekeep.Options{
		Store:         s.Store,
		Retention:     s.retention,
		FlushInterval: cfg.History.FlushInterval.Std(),
		MaxHeadValues: cfg.History.MaxHeadValues,
		CheckInterval: cfg.History.RetentionCheck.Std(),
		Metrics:       s.Metrics,
		Logger:        log.With("component", "housekeep"),
	})
	if err != nil {
		return nil, err
	}
	// The first API credentials exist before any port is bound: from the
	// moment the kernel accepts a connection, an operator may try to log
	// in, and must find the admin-password file already there.
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
	s.agentState, err = ingest.OpenLogPositions(ctx, AgentStatePath(cfg.DataDir), log.With("component", "trapper"))
	if err != nil {
		return nil, err
	}
	// Positions of items deleted since the last run go; an item deleted
	// while running keeps its few bytes until the next start.
	snap := s.Catalog.Snapshot()
	if n, err := s.agentState.Prune(ctx, func(id uint64) bool { return snap.Item(id) != nil }); err != nil {
		return nil, err
	} else if n > 0 {
		log.Info("dropped the log positions of deleted items", "items", n)
	}
	// Listeners last: binding makes the ports accept connections (into
	// the kernel's queue) before Serve, so everything a request needs is
	// ready first.
	s.Trapper, err = ingest.New(ingest.Options{
		Listen:           cfg.Trapper.Listen,
		MaxConnections:   cfg.Trapper.MaxConnections,
		MaxFrameSize:     int64(cfg.Trapper.MaxFrameSize),
		MaxBufferedBytes: int64(cfg.Trapper.MaxBufferedBytes),
		Timeout:          cfg.Trapper.Timeout.Std(),
		IdleTimeout:      cfg.Trapper.IdleTimeout.Std(),
		Catalog:          s.Catalog,
		Pipeline:         s.Pipeline,
		ItemStates:       s.Runtime,
		LogPositions:     s.agentState,
		TLS:              trapperTLS(tlsMaterial),
		Metrics:          s.Metrics,
		Logger:           log.With("component", "trapper"),
	})
	if err != nil {
		return nil, err
	}
	if cfg.SNMP.TrapListen != "" {
		users := make([]snmptrap.User, len(cfg.SNMP.TrapUsers))
		for i, u := range cfg.SNMP.TrapUsers {
			users[i] = snmptrap.User{SecurityName: u.SecurityName, EngineID: u.EngineIDBytes(), SecurityLevel: u.SecurityLevel,
				AuthProtocol: u.AuthProtocol, AuthPassphrase: u.AuthPassphrase, PrivProtocol: u.PrivProtocol, PrivPassphrase: u.PrivPassphrase}
		}
		s.SNMPTraps, err = snmptrap.New(snmptrap.Options{
			Listen:     cfg.SNMP.TrapListen,
			Users:      users,
			Snapshot:   s.Catalog.Snapshot,
			Submit:     func(v []history.Sample) error { return s.Pipeline.Submit(v, pipeline.NewTicket()) },
			ItemStates: s.Runtime,
			Metrics:    s.Metrics,
			Logger:     log.With("component", "snmptrap"),
		})
		if err != nil {
			return nil, err
		}
	}
	s.httpLn, err = net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return nil, fmt.Errorf("cannot listen for HTTP on %s (set http.listen): %w", cfg.HTTP.Listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.Metrics.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	var trends api.TrendReader
	if tr, ok := s.Store.(history.TrendReader); ok {
		trends = apiTrends{tr}
	}
	s.API = api.New(api.Options{
		Catalog: s.Catalog, History: s.Store, Trends: trends, Auth: s.authStore, Accounts: s.authStore, Ingest: pusher{s.Trapper}, Last: s.Pipeline,
		States: s.Runtime, Availability: s.Runtime, CheckNow: s.Poller, Queue: apiQueue{s.Poller},
		Events: s.Events, TriggerStates: s.Triggers,
		Alerting: &apiAlerting{e: s.Alerts, c: s.Catalog, minStep: cfg.Alerts.MinStepDuration.Std(),
			cmd: s.commander(), cmdTimeout: cfg.Alerts.CommandTimeout.Std()},
		MaxBodyBytes: int64(cfg.API.MaxBodySize), MaxRows: cfg.API.MaxRows, MaxBatchCalls: cfg.API.MaxBatchCalls, Timeout: cfg.API.Timeout.Std(),
		Logger: log.With("component", "api"), Metrics: s.Metrics,
	})
	mux.Handle("/api_jsonrpc.php", s.API.Handler())
	httpsConf, err := loadHTTPS(cfg.HTTP)
	if err != nil {
		return nil, err
	}
	if cfg.HTTP.UI {
		ui, err := web.New(web.Options{
			API: s.API.Handler(), AdminPasswordFile: pwPath,
			TLS: httpsConf != nil, HSTSMaxAge: cfg.HTTP.HSTSMaxAge.Std(),
			Logger: log.With("component", "web"), Metrics: s.Metrics,
		})
		if err != nil {
			return nil, err
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
	ok = true
	return s, nil
}

// TrapperAddr is the bound trapper address.
func (s *Server) TrapperAddr() net.Addr { return s.Trapper.Addr() }

// HTTPAddr is the bound HTTP address.
func (s *Server) HTTPAddr() net.Addr { return s.httpLn.Addr() }

// Run serves until ctx is done, then shuts down in order: the trapper
// stops accepting and finishes its requests, the pipeline writes what it
// holds while housekeeping finishes its current step, the store and
// catalog close.
func (s *Server) Run(ctx context.Context) error {
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
	go func() { defer wg.Done(); s.reconcileProblems(pctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.Evaluator.Run(pctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.Maintenance.Run(pctx) }()
	// The alert engine outlives evaluation: it stops after the last
	// evaluation pass below, so every event made is matched (or in the
	// log's catch-up at the next start).
	actx, stopAlerts := context.WithCancel(context.Background())
	alertsDone := make(chan struct{})
	go func() { defer close(alertsDone); s.Alerts.Run(actx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.ValueCache.Run(pctx) }()

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
	close(stopRates)
	if err := s.closeAll(); err != nil && runErr == nil {
		runErr = err
	}
	s.log.Info("stopped")
	return runErr
}

// reconcileProblems resolves the problems of deleted triggers at start
// and after every catalog change, until ctx ends.
func (s *Server) reconcileProblems(ctx context.Context) {
	changed := s.Catalog.Subscribe()
	for {
		if _, err := s.Triggers.Reconcile(s.Catalog.Snapshot()); err != nil {
			s.log.Error("cannot resolve the problems of deleted triggers", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
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
	if s.agentState != nil {
		errs = append(errs, s.agentState.Close())
	}
	if s.Store != nil {
		errs = append(errs, s.Store.Close())
	}
	if s.Alerts != nil {
		errs = append(errs, s.Alerts.Close())
	}
	if s.Events != nil {
		errs = append(errs, s.Events.Close())
	}
	if s.Catalog != nil {
		errs = append(errs, s.Catalog.Close())
	}
	if s.authStore != nil {
		errs = append(errs, s.authStore.Close())
	}
	return errors.Join(errs...)
}

// seedLastValues restores the pipeline's last and previous value of every
// catalog item from the store, before anything listens, so that item.get
// shows them from the first request after a restart. A failed read costs
// that item its last value until new ones arrive, not the start: it is
// logged, not returned; only cancellation is.
func (s *Server) seedLastValues(ctx context.Context) error {
	start := time.Now()
	var items []uint64
	for _, h := range s.Catalog.Snapshot().Hosts() {
		for _, it := range h.Items() {
			items = append(items, it.ID)
		}
	}
	n, err := s.Pipeline.Seed(ctx, s.Store, items)
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("start cancelled while restoring last values: %w", err)
	case err != nil:
		s.log.Error("cannot restore the last values of some items; item.get shows them once new values arrive", "items", len(items), "restored", n, "err", err)
	default:
		s.log.Info("last values restored from history", "items", len(items), "with_values", n, "duration", time.Since(start))
	}
	return nil
}

// CheckFormula validates a calculated item's formula for the catalog
// (catalog.Options.CheckFormula): it must parse as a Zabbix 6.0
// expression; the error carries the position.
func CheckFormula(formula string) error {
	_, err := expr.Parse(formula)
	return err
}

// selfChecker answers internal items from this server's figures. The
// stages are read through closures: the trapper and housekeeper are
// created after the poller, and no check runs before Run.
func (s *Server) selfChecker() *selfcheck.Checker {
	return selfcheck.New(selfcheck.Options{
		Figures: selfcheck.Figures{
			ValuesWritten:     s.Pipeline.ValuesCommitted,
			NotSupportedTotal: s.Runtime.NotSupportedTotal,
			QueueRange:        func(from, to int64) int { return s.Poller.QueueRange(from, to) },
			Snapshot:          s.Catalog.Snapshot,
			CountNotSupported: s.Runtime.CountNotSupported,
			Busy:              s.busyOf,
			Started:           s.started,
			Version:           Version,
		},
		Logger: s.log.With("component", "poll", "checker", "internal"),
	})
}

// busyOf is the busy meter of a stage, by zabbix[process,<type>] name.
func (s *Server) busyOf(process string) (*selfmon.Busy, bool) {
	switch process {
	case "poller":
		return s.Poller.Busy(), true
	case "trapper":
		return s.Trapper.Busy(), true
	case "pipeline shard":
		return s.Pipeline.Busy(), true
	case "housekeeper":
		return s.Housekeep.Busy(), true
	}
	return nil, false
}

// warnOpenFiles says so at start when the checks in flight and the
// trapper's connections together could exhaust the open-files limit:
// each holds a socket, and checks that cannot get one fail as local
// errors (counted), which an operator should hear about before load.
func warnOpenFiles(cfg config.Config, log *slog.Logger) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return
	}
	need := uint64(cfg.Poll.MaxInFlight) + uint64(cfg.Trapper.MaxConnections) + 1024
	if need > rl.Cur {
		log.Warn("the open files limit is below poll.max_in_flight + trapper.max_connections + 1024: under load, checks may fail for want of a socket; raise the limit (LimitNOFILE=) or lower poll.max_in_flight",
			"limit", rl.Cur, "poll.max_in_flight", cfg.Poll.MaxInFlight, "trapper.max_connections", cfg.Trapper.MaxConnections)
	}
}

// retention is the catalog's retention now, for the housekeeper: the
// longest history and trends retention of any item (whole partitions
// older than that go) and each item's own (applied at compaction).
func (s *Server) retention() housekeep.Retention {
	snap := s.Catalog.Snapshot()
	var r housekeep.Retention
	for _, h := range snap.Hosts() {
		for _, it := range h.Items() {
			r.History = max(r.History, it.HistorySeconds)
			r.Trends = max(r.Trends, it.TrendsSeconds)
		}
	}
	r.Item = func(id uint64) (int64, bool) {
		if it := snap.Item(id); it != nil {
			return it.HistorySeconds, true
		}
		return 0, false
	}
	return r
}

// apiQueue adapts the poller's queue to the API's view.
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

// clickhouseTLS builds the client TLS settings for https:// ClickHouse
// URLs; nil (Go's defaults, the system's CAs) when nothing is set.
func clickhouseTLS(c config.ClickHouseTLS) (*tls.Config, error) {
	if c.CAFile == "" && c.CertFile == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("history.clickhouse.tls.ca_file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("history.clickhouse.tls.ca_file: %s holds no PEM certificate", c.CAFile)
		}
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("history.clickhouse.tls.cert_file/key_file: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}
