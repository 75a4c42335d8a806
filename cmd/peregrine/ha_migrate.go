package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/hamigrate"
	"github.com/peregrine-mon/peregrine/internal/history/clickhouse"
	"github.com/peregrine-mon/peregrine/internal/server"
)

// haMigrate is `peregrine ha migrate`: the data directory's embedded
// stores into the cluster's PostgreSQL and ClickHouse (package
// hamigrate), run as the configuration's node once it is active, so
// that every write is fenced. Interrupted (SIGINT, SIGTERM, a lost
// lease), it stops; run again, it resumes.
func haMigrate(cfg config.Config, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "peregrine ha migrate: %v\n", err)
		return 1
	}
	if !cfg.HA.Enabled() || cfg.History.Store != "clickhouse" {
		fmt.Fprintln(stderr, "peregrine ha migrate: the configuration must be the cluster node's: ha.node_name, state.store: postgres and history.store: clickhouse")
		return 2
	}
	if _, err := os.Stat(cfg.DataDir); err != nil {
		return fail(fmt.Errorf("data directory: %w", err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	host, port, err := config.SplitNodeAddress(cfg.HA.NodeAddress)
	if err != nil {
		return fail(err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	node, err := ha.Open(ctx, ha.Options{DSN: cfg.State.Postgres.DSN, Name: cfg.HA.NodeName, Address: host, Port: port,
		FailoverDelay: cfg.HA.FailoverDelay.Std(), Version: server.Version, Logger: log})
	if err != nil {
		return fail(err)
	}
	nctx, ncancel := context.WithCancel(ctx)
	ndone := make(chan struct{})
	go func() { defer close(ndone); node.Run(nctx) }()
	defer func() {
		ncancel()
		<-ndone
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		node.Close(cctx)
	}()
	fmt.Fprintf(stdout, "node %s: waiting to become the active node\n", cfg.HA.NodeName)
	for node.Lease() == nil {
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-node.Changed():
		case <-time.After(time.Second):
		}
	}
	lease := node.Lease()
	fmt.Fprintf(stdout, "node %s: active (epoch %d); moving %s\n", cfg.HA.NodeName, lease.Epoch(), cfg.DataDir)
	// The run ends with the lease: a node that lost it writes nothing.
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	go func() {
		select {
		case <-lease.Done():
			rcancel()
		case <-rctx.Done():
		}
	}()
	chc := cfg.History.ClickHouse
	tc, err := server.ClickHouseTLS(chc.TLS)
	if err != nil {
		return fail(err)
	}
	ch, err := clickhouse.Open(rctx, clickhouse.Options{URLs: chc.URLs, Database: chc.Database, User: chc.User, Password: chc.Password, TLS: tc,
		Dir: server.ClickHouseSpoolPath(cfg.DataDir), BatchSize: chc.BatchSize, QueryTimeout: chc.QueryTimeout.Std(),
		Cluster: chc.Cluster, DirectWrites: chc.DirectWrites, Ack: clickhouse.AckInserted, AckTimeout: chc.QueryTimeout.Std(), Logger: log})
	if err != nil {
		return fail(err)
	}
	defer ch.Close()
	d := cfg.DataDir
	err = hamigrate.Run(rctx, hamigrate.Options{
		Sources: hamigrate.Sources{Events: server.EventsPath(d), Audit: server.AuditPath(d), Alerts: server.AlertsPath(d),
			PreprocessState: server.PreprocessStatePath(d), AgentState: server.AgentStatePath(d), AutoregState: server.AutoregStatePath(d),
			History: server.HistoryPath(d), Catalog: server.CatalogPath(d), Auth: server.AuthPath(d), Services: server.ServicesPath(d)},
		Pool: node.Pool(), Write: lease.Write, WriteSQL: lease.WriteSQL, FenceSQL: lease.FenceSQL, History: ch, Out: stdout,
	})
	if err != nil {
		return fail(fmt.Errorf("%w (run it again to resume)", err))
	}
	fmt.Fprintln(stdout, "migration complete")
	return 0
}
