package server

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/audit"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history/clickhouse"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/service"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
	"github.com/peregrine-mon/peregrine/internal/trigger"

	"github.com/jackc/pgx/v5/stdlib"
)

// A standby's reads (issue 31 item 2, docs/ha.md): the API and UI of a
// standby node serve reads from the cluster's stores, opened without
// writing — the catalog, users, events, services, alert and audit logs,
// item states and interface availabilities from PostgreSQL, history and last values from ClickHouse
// (hanode_standby_api.go), the queue asked of the active node
// (hanode_queue.go) — serve logouts (hanode_logout.go) and refuse
// changes with a text naming the active node. Every standbyPoll the
// stores follow the active node's commits.

// standbyPoll is how often a standby reads what the active node changed.
const standbyPoll = 2 * time.Second

// standbyReads are the stores a standby's API reads, each opened
// read-only; close closes them all.
type standbyReads struct {
	cat      *catalog.Catalog
	auth     *auth.Store
	events   *event.Store
	services *service.Engine
	alerts   *alert.Follower
	audit    *audit.Log
	hist     *clickhouse.Store
	// states are the active node's item states and interface
	// availabilities, read from PostgreSQL (itemstate.Writer's rows)
	// through db.
	states   *itemstate.Registry
	statesPG *itemstate.Follower
	db       *sql.DB
	js       *jsvm.Pool
	api      *api.Server
}

// openStandbyReads opens the cluster's stores for reading. It fails
// while no node has been active yet (the schemas do not exist): the
// standby then answers as before and tries again at the next poll.
func (s *Server) openStandbyReads(ctx context.Context) (_ *standbyReads, err error) {
	r := &standbyReads{}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	ro := &sqlitedb.PG{Pool: s.node.Pool(), ReadOnly: true}
	o := CatalogOptions("", s.log.With("component", "catalog"))
	o.Path, o.Postgres = "", ro
	if r.cat, err = catalog.Open(ctx, o); err != nil {
		return nil, err
	}
	if r.auth, err = auth.Open(ctx, auth.Options{Postgres: ro, Logger: s.log.With("component", "auth")}); err != nil {
		return nil, err
	}
	if r.events, err = event.OpenFollower(ctx, event.Options{Postgres: &pglog.Options{Pool: s.node.Pool()},
		Logger: s.log.With("component", "events")}); err != nil {
		return nil, err
	}
	// The services after the events: their problems are the followed
	// open problems.
	if r.services, err = service.OpenFollower(ctx, service.Options{Postgres: ro, Events: r.events,
		Logger: s.log.With("component", "service")}); err != nil {
		return nil, err
	}
	if r.alerts, err = alert.OpenFollower(ctx, pglog.Options{Pool: s.node.Pool()}, s.cfg.Alerts.KeepAlerts,
		s.log.With("component", "alert")); err != nil {
		return nil, err
	}
	auditRetention := time.Duration(s.cfg.Audit.RetentionSeconds()) * time.Second
	if auditRetention == 0 {
		auditRetention = -1 // "0": keep everything, as the active node
	}
	if r.audit, err = audit.OpenFollower(ctx, audit.Options{Postgres: &pglog.Options{Pool: s.node.Pool()},
		Retention: auditRetention, MaxRecords: s.cfg.Audit.MaxRecords, Logger: s.log.With("component", "audit")}); err != nil {
		return nil, err
	}
	r.db = stdlib.OpenDBFromPool(s.node.Pool())
	r.states = itemstate.New()
	if r.statesPG, err = itemstate.NewFollower(r.db, "", r.states); err != nil {
		return nil, err
	}
	// Not there yet (an active node of an older version): every item
	// shown supported, and reload says why until it is.
	_, _ = r.statesPG.Follow(ctx)
	chc := s.cfg.History.ClickHouse
	tc, err := clickhouseTLS(chc.TLS)
	if err != nil {
		return nil, err
	}
	if r.hist, err = clickhouse.Open(ctx, clickhouse.Options{URLs: chc.URLs, Database: chc.Database, User: chc.User,
		Password: chc.Password, TLS: tc, QueryTimeout: chc.QueryTimeout.Std(), Cluster: chc.Cluster, ReadOnly: true,
		Metrics: selfmon.NewRegistry(), Logger: s.log.With("component", "history")}); err != nil {
		return nil, err
	}
	// preprocessing.test runs users' JavaScript in worker processes, as
	// on the active node; none starts before the first test.
	if r.js, err = jsvm.NewPool(jsvm.PoolOptions{Workers: s.cfg.JavaScript.Workers, MemLimit: uint64(s.cfg.JavaScript.MemoryLimit),
		Metrics: selfmon.NewRegistry(), Logger: s.log.With("component", "javascript")}); err != nil {
		return nil, err
	}
	cfg := s.cfg
	refuse := func() error { return apiText(s.standbyText(context.Background(), standbyChange)) }
	r.api = api.New(api.Options{
		JS:     r.js,
		States: r.states, Availability: r.states,
		Catalog: r.cat, History: r.hist, Trends: apiTrends{r.hist}, Auth: r.auth, Accounts: r.auth,
		Last:   standbyLast{h: r.hist, timeout: chc.QueryTimeout.Std()},
		Events: r.events, TriggerStates: standbyTriggers{r.events}, Autoreg: r.cat,
		Services: r.services, Audit: standbyAudit{Log: r.audit, pool: s.node.Pool(), warn: s.log.Warn}, Queue: standbyQueue{s: s, timeout: 10 * time.Second},
		Alerting:     standbyAlerting{cat: r.cat, alerts: r.alerts, minStep: cfg.Alerts.MinStepDuration.Std(), refuse: refuse},
		MaxBodyBytes: int64(cfg.API.MaxBodySize), MaxRows: cfg.API.MaxRows, MaxBatchCalls: cfg.API.MaxBatchCalls, Timeout: cfg.API.Timeout.Std(),
		MaxConcurrentCalls: cfg.API.MaxConcurrentCalls, MaxWaitingPerUser: cfg.API.MaxWaitingCallsPerUser,
		HACluster: s.haCluster(),
		Standby:   refuse,
		Logger:    s.log.With("component", "api"),
	})
	return r, nil
}

// reload reads what the active node committed since the last poll: the
// catalog when its revision moved, the events, and the users' caches
// dropped.
func (r *standbyReads) reload(ctx context.Context) error {
	_, cerr := r.cat.Reload(ctx)
	_, eerr := r.events.Follow(ctx)
	r.auth.Reload()
	serr := r.services.Follow(ctx) // after the events: it matches their open problems
	_, aerr := r.alerts.Follow(ctx)
	_, uerr := r.audit.Follow(ctx)
	_, ierr := r.statesPG.Follow(ctx)
	return errors.Join(cerr, eerr, serr, aerr, uerr, ierr)
}

func (r *standbyReads) close() {
	if r.js != nil {
		r.js.Close()
	}
	if r.hist != nil {
		r.hist.Close()
	}
	if r.db != nil {
		_ = r.db.Close()
	}
	if r.audit != nil {
		r.audit.Close()
	}
	if r.alerts != nil {
		r.alerts.Close()
	}
	if r.services != nil {
		r.services.Close()
	}
	if r.events != nil {
		r.events.Close()
	}
	if r.auth != nil {
		r.auth.Close()
	}
	if r.cat != nil {
		r.cat.Close()
	}
}

// followStandby keeps the standby's reads open and current until ctx
// ends: it opens them (again at every poll until that works), then
// reloads them every standbyPoll. It hands them to published once open
// and returns them when ctx ends, for the caller to close once it has
// stopped serving HTTP.
func (s *Server) followStandby(ctx context.Context, published func(*standbyReads)) *standbyReads {
	var r *standbyReads
	t := time.NewTicker(standbyPoll)
	defer t.Stop()
	// A first start of a cluster has no stores until the first active
	// node made them: a standby says so at Info level, then warns once a
	// minute when reading fails for longer.
	since, warned, told := time.Now(), time.Time{}, false
	for {
		var err error
		if r == nil {
			if r, err = s.openStandbyReads(ctx); err == nil {
				published(r)
				s.log.Info("standby: serving reads from the cluster's stores")
			}
		} else {
			err = r.reload(ctx)
		}
		switch {
		case err == nil || ctx.Err() != nil:
			since, told = time.Now(), false
		case time.Since(since) < 30*time.Second:
			if !told {
				told = true
				s.log.Info("standby: the cluster's stores are not readable yet; retrying every poll", "poll", standbyPoll, "err", err)
			}
		case time.Since(warned) > time.Minute:
			warned = time.Now()
			s.log.Warn("standby: cannot read the cluster's stores; serving what was read last and retrying every poll", "poll", standbyPoll, "err", err)
		}
		select {
		case <-ctx.Done():
			return r
		case <-t.C:
		}
	}
}

// standbyTriggers gives the API the triggers' runtime as the active
// node committed it; acknowledgements are changes, refused before they
// reach it.
type standbyTriggers struct{ ev *event.Store }

func (t standbyTriggers) Runtime(id uint64) event.Runtime {
	if r, ok := t.ev.Runtime(id); ok {
		return r
	}
	return event.Runtime{TriggerID: id}
}

func (standbyTriggers) Acknowledge(*catalog.Snapshot, trigger.AckRequest) error {
	return event.ErrReadOnly
}

// standbyHandler serves the API of the standby's reads once they are
// open, else fallback.
func standbyHandler(cur func() *standbyReads, fallback http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rd := cur(); rd != nil {
			rd.api.Handler().ServeHTTP(w, r)
			return
		}
		fallback(w, r)
	})
}
