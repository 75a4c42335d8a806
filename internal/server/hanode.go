package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/service"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// A server with ha.node_name is a node of an HA cluster (issue 31,
// docs/ha.md). New opens its membership (internal/ha) and binds nothing
// else; Run keeps it standby until it wins the lease, then builds a whole
// server (New's four stages) whose state stores write to PostgreSQL
// through the lease, runs it until the lease ends (or Run's context), and
// goes back to standby. So a standby has no trapper, no poller, no
// evaluator and no alerts: like 6.0's standby it does not listen on the
// trapper port, and agents (ServerActive=a;b), zabbix_sender and proxies
// move on to the next address (recorded from 6.0.14,
// bench/zabbix-ha-failover.sh).

// pgState is what an active node's stores need to keep their state in
// PostgreSQL: the node's pool, and the lease whose fence every write
// runs first. nil on an embedded server; its methods are nil-safe.
type pgState struct {
	node  *ha.Node
	lease *ha.Lease
	db    *sql.DB // pgx's database/sql driver over the node's pool
}

func newPGState(n *ha.Node, l *ha.Lease) *pgState {
	return &pgState{node: n, lease: l, db: stdlib.OpenDBFromPool(n.Pool())}
}

// logOptions are a pglog store's options (events, alerts, audit); nil
// on an embedded server, where the store keeps its own log.
func (p *pgState) logOptions() *pglog.Options {
	if p == nil {
		return nil
	}
	return &pglog.Options{Pool: p.node.Pool(), Write: p.lease.Write}
}

// writeSQL runs fn in a fenced database/sql transaction (the SQL stores).
func (p *pgState) writeSQL(ctx context.Context, fn func(*sql.Tx) error) error {
	return p.lease.WriteSQL(ctx, p.db, fn)
}

// preprocessState is the pipeline's state store in PostgreSQL, nil on
// an embedded server (the pipeline's file then).
func (p *pgState) preprocessState() (pipeline.StateStore, error) {
	if p == nil {
		return nil, nil
	}
	b, err := pglog.OpenBlob(pglog.Options{Pool: p.node.Pool(), Write: p.lease.Write, Table: "preprocess_state"}, "state")
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (p *pgState) close() {
	if p != nil {
		p.db.Close()
	}
}

// errPostgresNeedsNode refuses state.store: postgres on a server that is
// not a cluster node: every write to the shared state is fenced by the
// lease of an HA node.
var errPostgresNeedsNode = errors.New(`state.store: "postgres" needs ha.node_name (and ha.node_address): the state in PostgreSQL is written by the active node of an HA cluster, a cluster of one node included`)

// sqlPG places an SQL store (catalog, auth, services) in PostgreSQL on
// an active node: its pool, every write transaction fenced by the
// lease; nil on an embedded server.
func (p *pgState) sqlPG() *sqlitedb.PG {
	if p == nil {
		return nil
	}
	return &sqlitedb.PG{Pool: p.node.Pool(), Fence: p.lease.FenceSQL}
}

// The catalog, users and services, one opener each, selected by
// state.store: in data_dir (SQLite) on an embedded server, in
// PostgreSQL (shared by every node of the cluster) on an active node.

func (s *Server) openCatalog(ctx context.Context) (*catalog.Catalog, error) {
	o := CatalogOptions(s.cfg.DataDir, s.log.With("component", "catalog"))
	if s.pg != nil {
		o.Path, o.Postgres = "", s.pg.sqlPG()
	}
	return catalog.Open(ctx, o)
}

func (s *Server) openAuth(ctx context.Context) (*auth.Store, error) {
	o := auth.Options{Path: AuthPath(s.cfg.DataDir), Logger: s.log.With("component", "auth")}
	if s.pg != nil {
		o.Path, o.Postgres = "", s.pg.sqlPG()
	}
	return auth.Open(ctx, o)
}

func (s *Server) openServices(o service.Options) (*service.Engine, error) {
	o.Path = ServicesPath(s.cfg.DataDir)
	if s.pg != nil {
		o.Path, o.Postgres = "", s.pg.sqlPG()
	}
	return service.Open(context.Background(), o)
}

// newNode is New for a cluster node: the checks of a bad start (ClickHouse not answering, PostgreSQL out of
// reach, a running node of the same name or of another version), each a
// clear error with nothing written, then the node's registration as
// standby. It binds the HTTP port for the standby's answers.
func newNode(ctx context.Context, cfg config.Config, log *slog.Logger) (*Server, error) {
	if err := pingClickHouse(ctx, cfg.History.ClickHouse.URLs); err != nil {
		return nil, err
	}
	host, port, err := config.SplitNodeAddress(cfg.HA.NodeAddress)
	if err != nil {
		return nil, fmt.Errorf("ha.node_address: %w", err)
	}
	n, err := ha.Open(ctx, ha.Options{DSN: cfg.State.Postgres.DSN, Name: cfg.HA.NodeName, Address: host, Port: port,
		FailoverDelay: cfg.HA.FailoverDelay.Std(), Version: Version, Logger: log.With("component", "ha")})
	if err != nil {
		return nil, fmt.Errorf("cannot join the HA cluster as node %q: %w", cfg.HA.NodeName, err)
	}
	s := &Server{cfg: cfg, log: log, Metrics: selfmon.NewRegistry(), started: time.Now(), node: n}
	if err := s.listenStandby(); err != nil {
		n.Close(context.Background())
		return nil, err
	}
	// The standby and the active server bind the same port every time
	// (http.listen may name port 0).
	s.cfg.HTTP.Listen = s.httpLn.Addr().String()
	s.nodeAddr = s.httpLn.Addr()
	return s, nil
}

// pingClickHouse checks that one of the history URLs answers: a node
// that could never write history must not wait as a standby.
func pingClickHouse(ctx context.Context, urls []string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var errs []error
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(u, "/")+"/ping", nil)
		if err != nil {
			return fmt.Errorf("history.clickhouse.urls: %w", err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("HTTP %s", resp.Status)
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("ClickHouse does not answer at history.clickhouse.urls (an HA node keeps its history there, shared by every node): %w", errors.Join(errs...))
}

// Active is the server the node runs while it holds the lease, nil on a
// standby (and on an embedded server, which is always itself).
func (s *Server) Active() *Server { return s.active.Load() }

// Node is the server's cluster membership, nil on a standalone server.
func (s *Server) Node() *ha.Node { return s.node }

// runNode is Run for a cluster node: standby until the lease is won,
// active while it holds, standby again when it ends, until ctx ends;
// then the node stops cleanly (a standby takes over at once).
func (s *Server) runNode(ctx context.Context) error {
	nctx, stopNode := context.WithCancel(context.Background())
	nodeDone := make(chan error, 1)
	go func() { nodeDone <- s.node.Run(nctx) }()
	defer func() {
		stopNode()
		<-nodeDone
		if err := s.node.Close(context.Background()); err != nil {
			s.log.Warn("cannot mark this node stopped", "err", err)
		}
	}()
	for {
		stopStandby := s.serveStandby()
		lease, err := s.waitLease(ctx, nodeDone)
		stopStandby()
		if lease == nil {
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				err = nil
			}
			return err
		}
		s.log.Info("this node is active", "epoch", lease.Epoch())
		err = s.runActive(ctx, lease)
		if ctx.Err() != nil {
			return err
		}
		if lease.Context().Err() == nil {
			// The server stopped by itself with the lease held (a stage
			// failed at takeover): stop the node, so another takes over
			// now rather than after the failover delay.
			return fmt.Errorf("active node stopped: %w", err)
		}
		s.log.Warn("this node lost the active lease; standby again", "epoch", lease.Epoch(), "err", err)
		if err := s.listenStandby(); err != nil {
			return err
		}
	}
}

// waitLease waits for the node to become active; nil when ctx ends or
// the node stops (removed from the cluster).
func (s *Server) waitLease(ctx context.Context, nodeDone <-chan error) (*ha.Lease, error) {
	for {
		ch := s.node.Changed()
		if l := s.node.Lease(); l != nil && l.Context().Err() == nil {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case err := <-nodeDone:
			return nil, fmt.Errorf("the HA node stopped: %w", err)
		case <-ch:
		}
	}
}

// runActive builds a whole server on the lease and runs it until the
// lease or ctx ends. Every stage stops before it returns: the lease
// ends ha.Margin before a standby may take over, and what the stages
// still write after that is refused by the fence.
func (s *Server) runActive(ctx context.Context, lease *ha.Lease) error {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(lease.Context(), cancel)
	defer stop()
	pg := newPGState(s.node, lease)
	defer pg.close()
	t0 := time.Now()
	a, err := build(actx, s.cfg, s.log, pg, s.node)
	if err != nil {
		return err
	}
	s.log.Info("active: every store open and every port bound", "took", time.Since(t0).Round(time.Millisecond))
	s.active.Store(a)
	defer s.active.Store(nil)
	return a.Run(actx)
}

// listenStandby binds the HTTP port for the standby's answers; the
// active server binds its own after serveStandby's stop closed it.
func (s *Server) listenStandby() error {
	ln, err := net.Listen("tcp", s.cfg.HTTP.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen for HTTP on %s (set http.listen): %w", s.cfg.HTTP.Listen, err)
	}
	s.httpLn = ln
	return nil
}

// nodeHTTPAddr is a node's HTTP address, standby or active.
func (s *Server) nodeHTTPAddr() net.Addr { return s.nodeAddr }

// haCluster reads the registry for hanode.get; nil standalone (the
// API's own answer, 6.0.14's).
func (s *Server) haCluster() func(context.Context) (*ha.Cluster, error) {
	if s.node == nil {
		return nil
	}
	return s.node.Admin().Cluster
}

// clusterNodes answers zabbix[cluster,discovery,nodes]; nil standalone.
func (s *Server) clusterNodes() func() ([]byte, error) {
	if s.node == nil {
		return nil
	}
	return func() ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cl, err := s.node.Admin().Cluster(ctx)
		if err != nil {
			return nil, err
		}
		return ha.NodesJSON(cl), nil
	}
}

// AuthPath is the auth database (users, sessions) under data_dir.
func AuthPath(dataDir string) string { return filepath.Join(dataDir, "auth.db") }

// apiStandby is the API's Options.Standby on an active node: once its
// lease has ended (while the server stops) calls that change state are
// refused; nil on an embedded server.
func (s *Server) apiStandby() func() error {
	if s.pg == nil {
		return nil
	}
	return func() error {
		if s.pg.lease.Context().Err() != nil {
			return apiText(fmt.Sprintf("This node (%q) no longer holds the active lease of the HA cluster and is stopping: changes are made on the active node.", s.cfg.HA.NodeName))
		}
		return nil
	}
}

// apiText is an error whose text is the API's answer, a sentence as
// Zabbix words its errors.
type apiText string

func (e apiText) Error() string { return string(e) }

// shipHistory, on an active node's stop, waits (at most 10 s) until the
// ClickHouse spool is shipped: the values it acknowledged are then
// readable from the node that takes over, not only once this one is
// active again (issue 31 item 3 makes that the rule for every value).
func (s *Server) shipHistory() {
	f, ok := s.Store.(interface{ Flush(context.Context) error })
	if s.pg == nil || !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.Flush(ctx); err != nil {
		s.log.Warn("history not all shipped to ClickHouse at stop; the rest stays in this node's spool until it is active again", "err", err)
	}
}
