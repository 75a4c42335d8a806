package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/peregrine-mon/peregrine/internal/audit"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/clickhouse"
	"github.com/peregrine-mon/peregrine/internal/history/engine"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/history/valuecache"
	"github.com/peregrine-mon/peregrine/internal/housekeep"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// adminPasswordPath is the file holding the first API user's random
// password (written by the state stage, shown by the web UI's login
// page until deleted).
func adminPasswordPath(dataDir string) string { return filepath.Join(dataDir, "admin-password") }

// openState is New's first stage: everything the server keeps, on disk
// or in memory, that the later stages read and write.
//
// Needs: s.cfg, s.log, s.Metrics and s.started (set by New); nothing
// from another stage.
//
// Builds: the data directory (PrepareDataDir), s.Catalog, s.Events (the
// event store), s.Store (the configured history backend), s.ValueCache
// (in front of s.Store), s.ItemStates (item states and availability),
// s.Housekeep (flush, retention and compaction of s.Store), s.authStore
// with the first API user (the admin-password file) and s.agentState
// (active agents' log positions, pruned of deleted items), and
// Zabbix 6.0's default objects in the catalog and the auth store
// (defaults.go).
//
// It starts no goroutine that Run must stop and binds no port; whatever
// it opened, closeAll closes. A new kind of kept state (a proxy's
// configuration copy, an HA lease) opens here.
func (s *Server) openState(ctx context.Context) error {
	cfg, log := s.cfg, s.log
	if err := PrepareDataDir(cfg.DataDir, log); err != nil {
		return err
	}
	var err error
	// Trigger expressions are validated, and their items found, by the
	// expression parser (CatalogOptions).
	s.Catalog, err = s.openCatalog(ctx) // hanode.go: one opener per state.store
	if err != nil {
		return err
	}
	if err := s.ensureCatalogDefaults(ctx); err != nil {
		return err
	}
	s.Events, err = event.Open(event.Options{
		Dir: EventsPath(cfg.DataDir), Sync: walSync(cfg.Events.Fsync), SyncInterval: cfg.Events.FsyncInterval.Std(),
		Retention: time.Duration(cfg.Events.RetentionSeconds()) * time.Second, Logger: log.With("component", "events"),
		Postgres: s.pg.logOptions(), // nil: the embedded log under Dir
	})
	if err != nil {
		return err
	}
	auditRetention := time.Duration(cfg.Audit.RetentionSeconds()) * time.Second
	if auditRetention == 0 {
		auditRetention = -1 // "0": keep everything
	}
	s.Audit, err = audit.Open(audit.Options{
		Dir: AuditPath(cfg.DataDir), Sync: walSync(cfg.Audit.Fsync), SyncInterval: cfg.Audit.FsyncInterval.Std(),
		Retention: auditRetention, MaxRecords: cfg.Audit.MaxRecords, Logger: log.With("component", "audit"),
		Postgres: s.pg.logOptions(),
	})
	if err != nil {
		return err
	}
	if s.Store, err = s.openHistory(ctx); err != nil {
		return err
	}
	s.openSpaceGuard()
	// The value cache sits in front of the store for trigger functions
	// and calculated items; the pipeline's commit hook (ways-in stage)
	// feeds it before the evaluator queues, so a pass never reads a
	// cache that lacks the values that queued it.
	s.ValueCache, err = valuecache.New(valuecache.Options{
		Store: s.Store, MaxBytes: int64(cfg.Triggers.ValueCacheSize), MaxPeriod: cfg.Triggers.ValueCacheMaxPeriod.Std(),
		Metrics: s.Metrics, Logger: log.With("component", "valuecache"),
	})
	if err != nil {
		return err
	}
	s.ItemStates = itemstate.New()
	if s.pg != nil {
		// A cluster node stores its item states and interface
		// availabilities for the standbys' API (and starts from those the
		// previous active node stored).
		if s.itemStatesPG, err = itemstate.OpenWriter(ctx, s.pg.db, s.pg.writeSQL, "", s.ItemStates); err != nil {
			return err
		}
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
		return err
	}
	// The first API credentials exist before any port is bound (the
	// ways-in and HTTP stages bind): from the moment the kernel accepts
	// a connection, an operator may try to log in, and must find the
	// admin-password file already there.
	s.authStore, err = s.openAuth(ctx)
	if err != nil {
		return err
	}
	pwPath := adminPasswordPath(cfg.DataDir)
	created, err := s.authStore.EnsureAdmin(ctx, pwPath)
	if err != nil {
		return fmt.Errorf("cannot create the first API user: %w", err)
	}
	if created {
		log.Warn("created API user \"Admin\" with a random password; it is in this file (readable by this user only): log in, then delete the file", "file", pwPath)
	}
	if err := s.ensureAuthDefaults(ctx); err != nil {
		return err
	}
	if s.pg != nil {
		s.agentState, err = ingest.OpenLogPositionsPG(ctx, s.pg.db, s.pg.writeSQL, "", log.With("component", "trapper"))
	} else {
		s.agentState, err = ingest.OpenLogPositions(ctx, AgentStatePath(cfg.DataDir), log.With("component", "trapper"))
	}
	if err != nil {
		return err
	}
	// Positions of items deleted since the last run go; an item deleted
	// while running keeps its few bytes until the next start.
	snap := s.Catalog.Snapshot()
	if n, err := s.agentState.Prune(ctx, func(id uint64) bool { return snap.Item(id) != nil }); err != nil {
		return err
	} else if n > 0 {
		log.Info("dropped the log positions of deleted items", "items", n)
	}
	return nil
}

// walSync is the WAL sync mode of a section's fsync setting
// (history.fsync for the engine's WAL and the ClickHouse spool,
// events.fsync, alerts.fsync: "batch" or "interval", validated by
// package config). Every log the server opens maps the word here, so
// that the same setting can never mean two things; "batch", the
// stronger promise, is also what anything else means.
func walSync(fsync string) wal.SyncMode {
	if fsync == "interval" {
		return wal.SyncInterval
	}
	return wal.SyncBatch
}

// openHistory opens the configured history backend (history.store).
// The server knows it afterwards only through history's interfaces.
func (s *Server) openHistory(ctx context.Context) (history.Store, error) {
	cfg, log := s.cfg, s.log
	switch cfg.History.Store {
	case "engine":
		prec, err := history.ParsePrecision(cfg.History.TimestampPrecision)
		if err != nil {
			return nil, fmt.Errorf("history.timestamp_precision: %w", err)
		}
		// Typed nils never leave: a nil *engine.Store in s.Store would
		// look open to closeAll.
		st, err := engine.Open(engine.Options{
			Dir:          HistoryPath(cfg.DataDir),
			Sync:         walSync(cfg.History.Fsync),
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
		return st, nil
	case "clickhouse":
		chc := cfg.History.ClickHouse
		tc, err := clickhouseTLS(chc.TLS)
		if err != nil {
			return nil, err
		}
		st, err := clickhouse.Open(ctx, clickhouse.Options{
			URLs: chc.URLs, Database: chc.Database, User: chc.User, Password: chc.Password, TLS: tc,
			Dir: ClickHouseSpoolPath(cfg.DataDir), Sync: walSync(cfg.History.Fsync), SyncInterval: cfg.History.FsyncInterval.Std(),
			BatchSize: chc.BatchSize, FlushInterval: chc.FlushInterval.Std(), SpoolLimit: chc.SpoolLimit,
			QueryTimeout: chc.QueryTimeout.Std(), Cluster: chc.Cluster, DirectWrites: chc.DirectWrites,
			Ack: cfg.AckMode(), AckTimeout: chc.AckTimeout.Std(),
			Metrics: s.Metrics, Logger: log.With("component", "history"),
		})
		if err != nil {
			return nil, err
		}
		return st, nil
	case "memory":
		return memstore.New(), nil
	}
	return nil, fmt.Errorf("unknown history.store %q", cfg.History.Store)
}

// retention is the catalog's retention now, for the housekeeper: the
// longest history and trends retention of any item (whole partitions
// older than that go) and each item's own (applied at compaction),
// under Zabbix's housekeeping settings (housekeepingRetention).
func (s *Server) retention() housekeep.Retention {
	snap := s.Catalog.Snapshot()
	var r housekeep.Retention
	for _, h := range snap.Hosts() {
		for _, it := range h.Items() {
			r.History = max(r.History, int64(it.HistorySeconds))
			r.Trends = max(r.Trends, int64(it.TrendsSeconds))
		}
	}
	r.Item = func(id uint64) (int64, bool) {
		if it := snap.Item(id); it != nil {
			return int64(it.HistorySeconds), true
		}
		return 0, false
	}
	return s.housekeepingRetention(r, func(id uint64) bool { return snap.Item(id) != nil })
}

// ClickHouseTLS is clickhouseTLS for the commands that open ClickHouse
// themselves (`peregrine ha migrate`).
func ClickHouseTLS(c config.ClickHouseTLS) (*tls.Config, error) { return clickhouseTLS(c) }

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
