package server

import (
	"context"
	"github.com/peregrine-mon/peregrine/internal/lld"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/maintenance"
	"github.com/peregrine-mon/peregrine/internal/poll/agent"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/service"
	"github.com/peregrine-mon/peregrine/internal/trigger"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// buildRules is New's second stage: what turns stored values into
// problems and problems into notifications.
//
// Needs from the state stage: s.Catalog, s.Events, s.Store,
// s.ValueCache and s.authStore (alert recipients' groups and rights);
// and the zbx TLS material (nil without a tls section) for the agent
// checker of remote commands.
//
// Builds: s.Maintenance, s.cmdAgent (system.run on agents), s.JS (the
// pool of script workers, which the pipeline and the API use too),
// s.Alerts (with its log), s.Services (IT services, data_dir/services.db),
// s.Triggers (the problem state machine, committing through the alert
// engine's and the services' Notify) and s.Evaluator.
//
// Two hooks reach stages built later, read when called, never here:
// the alert engine's {ITEM.LASTVALUE} reads s.Pipeline and a soft
// trigger re-checks its items through s.Poller (ways-in stage). Neither
// is called before Run, and both answer nothing while nil. The
// evaluator is fed by the pipeline's commit hook, set in the ways-in
// stage. A new rule engine (discovery rules, proxies' events) is built
// here.
func (s *Server) buildRules(tlsMaterial *zbxtls.Material) error {
	cfg, log := s.cfg, s.log
	var err error
	s.Maintenance, err = maintenance.New(maintenance.Options{Catalog: s.Catalog, Events: s.Events,
		Metrics: s.Metrics, Logger: log.With("component", "maintenance")})
	if err != nil {
		return err
	}
	// Remote commands ask agents through a checker of their own, so
	// that they are not counted as item checks.
	s.cmdAgent = agent.New(agent.Options{
		ConnectTimeout: cfg.Poll.ConnectTimeout.Std(),
		MaxReplySize:   int(cfg.Poll.MaxReplySize),
		TLS:            agentTLS(s.Catalog, tlsMaterial),
		Metrics:        selfmon.NewRegistry(),
		Logger:         log.With("component", "alert", "checker", "agent"),
	})
	// Users' scripts run in worker processes started on demand from
	// this binary (package jsvm turns a process started so into a
	// worker): the alert engine's webhooks, the pipeline's steps and the
	// API's preprocessing.test share them.
	s.JS, err = jsvm.NewPool(jsvm.PoolOptions{Workers: cfg.JavaScript.Workers, MemLimit: uint64(cfg.JavaScript.MemoryLimit),
		Metrics: s.Metrics, Logger: log.With("component", "javascript")})
	if err != nil {
		return err
	}
	s.Alerts, err = alert.New(alert.Options{
		Dir: AlertsPath(cfg.DataDir), Sync: walSync(cfg.Alerts.Fsync), SyncInterval: cfg.Alerts.FsyncInterval.Std(), Postgres: s.pg.logOptions(),
		Config: s.Catalog.AlertConfig, Snapshot: s.Catalog.Snapshot, Events: s.Events,
		UsersOfGroups:  s.usersOfGroups,
		Rights:         s.readsOf,
		Commander:      s.commander(),
		CommandTimeout: cfg.Alerts.CommandTimeout.Std(),
		// A closure: the pipeline is made in the ways-in stage.
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
		MaxBody: int64(cfg.Alerts.WebhookMaxBody), JS: s.JS,
		// A problem is suppressed when made in a maintenance (its flag) or
		// covered by one that started later (the tracker's record).
		Suppressed: func(ev *event.Event) bool { return ev.Suppressed || s.Maintenance.Suppressed(ev.ID) },
		Autoreg:    s.autoregMatches, AutoregMacros: s.autoregMacros, Discovery: s.discoveryMatches,
		DiscoveryMacros: s.discoveryMacros,
		Metrics:         s.Metrics, Logger: log.With("component", "alert"),
	})
	if err != nil {
		return err
	}
	s.Services, err = s.openServices(service.Options{Events: s.Events,
		Metrics: s.Metrics, Logger: log.With("component", "service")})
	if err != nil {
		return err
	}
	// The state machine commits through notifyStore: every committed
	// batch of events and acknowledges is handed to the alert engine and
	// the services, which only queue it (they never block evaluation).
	notify := func(b *event.Batch) { s.Alerts.Notify(b); s.Services.Notify(b); s.triggerStates(b) }
	if err := s.buildEventProducers(); err != nil {
		return err
	}
	// Discovery rules' values reach the LLD engine from the pipeline's
	// commit hook (ways-in stage), durable first.
	s.LLD = lld.New(lld.Options{Catalog: s.Catalog, ItemStates: s.ItemStates, Logger: log.With("component", "lld")})
	s.Triggers, err = trigger.New(trigger.Options{Store: notifyStore{s.Events, notify}, Suppress: s.Maintenance.Covers,
		// Event correlation rules apply to new problems from the next
		// batch after an edit (correlation.* writes the alert config).
		Correlations: s.Catalog.AlertConfig,
		// A soft trigger's items are re-checked at their retry interval;
		// the poller is made in the ways-in stage, and results only flow
		// once it runs.
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
		return err
	}
	// Trigger evaluation hangs off the pipeline's commit hook: Commit
	// only queues the affected triggers; the evaluation runs on the
	// evaluator's goroutines (Run).
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
	return err
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
