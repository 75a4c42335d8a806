package ha

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/peregrine-mon/peregrine/internal/audit"
)

// Status is a node's state, as Zabbix 6.0 numbers it.
type Status int

// The node states of 6.0's ha_node.status.
const (
	StatusStandby     Status = 0
	StatusStopped     Status = 1
	StatusUnavailable Status = 2
	StatusActive      Status = 3
)

// String is the state's name as 6.0's ha_status prints it.
func (s Status) String() string {
	switch s {
	case StatusStandby:
		return "standby"
	case StatusStopped:
		return "stopped"
	case StatusUnavailable:
		return "unavailable"
	case StatusActive:
		return "active"
	}
	return "unknown"
}

// Errors of the cluster.
var (
	// ErrFenced: the lease was lost (another node took over, or the
	// node could not renew in time); the write must not commit.
	ErrFenced = errors.New("ha: this node no longer holds the active lease")
	// ErrNameInUse: a running node already has the name.
	ErrNameInUse = errors.New("ha: a running node has this name")
	// ErrRemoved: the node's registry row was removed (or taken over by
	// a newer start under the same name).
	ErrRemoved = errors.New("ha: this node was removed from the cluster")
	// ErrSchemaNewer: the database was migrated by a newer Peregrine.
	ErrSchemaNewer = errors.New("ha: the cluster schema is newer than this binary")
	// ErrVersion: a running node is of another major.minor version.
	ErrVersion = errors.New("ha: a running node is of another version")
)

// compatible reports whether two Peregrine versions may run in one
// cluster: the same major.minor (6.0's nodes are compatible across
// minor releases, that is across its third number).
func compatible(a, b string) bool {
	mm := func(v string) string {
		v = strings.TrimPrefix(v, "v")
		if i := strings.IndexByte(v, '.'); i >= 0 {
			if j := strings.IndexByte(v[i+1:], '.'); j >= 0 {
				return v[:i+1+j]
			}
		}
		return v
	}
	return mm(a) == mm(b)
}

// Options configures a Node.
type Options struct {
	// DSN is the PostgreSQL connection string (state.postgres.dsn).
	DSN string
	// Name and Address identify the node (ha.node_name, ha.node_address
	// split into host and port).
	Name    string
	Address string
	Port    int
	// FailoverDelay is the cluster's delay if this node creates the
	// cluster (ha.failover_delay). Tests may use less than 6.0's 10s
	// minimum; at least 1s.
	FailoverDelay time.Duration
	// Version is the node's Peregrine version, kept in its row.
	Version string
	Logger  *slog.Logger
}

// Margin is M of doc.go: how long before a standby may take over the
// active node gives up its lease.
func Margin(delay time.Duration) time.Duration { return min(5*time.Second, delay/2) }

// Heartbeat is H of doc.go: how often nodes stamp their lastaccess.
func Heartbeat(delay time.Duration) time.Duration {
	return min(5*time.Second, (delay-Margin(delay))/3)
}

// Node is this server's membership of the cluster.
type Node struct {
	opts    Options
	pool    *pgxpool.Pool
	id      string
	session string
	log     *slog.Logger

	mu     sync.Mutex
	lease  *Lease // nil unless active
	status Status
	delay  time.Duration // the cluster's current failover delay, as last read
	change chan struct{} // closed and replaced when lease or status changes
}

// Open connects to PostgreSQL, migrates the schema and registers the
// node as standby, all in one transaction: on any error nothing is
// written. It fails when PostgreSQL cannot be reached, when a running
// node has the same name, or when the schema is newer than this binary.
func Open(ctx context.Context, opts Options) (*Node, error) {
	if opts.Name == "" || opts.Address == "" || opts.Port < 1 || opts.Port > 65535 {
		return nil, fmt.Errorf("ha: a node needs a name, an address and a port, not %q, %q, %d", opts.Name, opts.Address, opts.Port)
	}
	if opts.FailoverDelay < time.Second || opts.FailoverDelay > 15*time.Minute {
		return nil, fmt.Errorf("ha: failover delay %s out of range", opts.FailoverDelay)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	pool, err := openPool(ctx, opts.DSN, "peregrine-ha "+opts.Name, Margin(opts.FailoverDelay))
	if err != nil {
		return nil, err
	}
	n := &Node{opts: opts, pool: pool, session: randomHex(8), log: opts.Logger.With("ha_node", opts.Name),
		status: StatusStandby, change: make(chan struct{})}
	if err := n.register(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return n, nil
}

// openPool opens a pool whose sessions end a transaction left idle for
// longer than idle (doc.go: a paused writer cannot hold up a takeover),
// and checks that PostgreSQL answers. Errors never carry the DSN's
// password.
func openPool(ctx context.Context, dsn, app string, idle time.Duration) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("ha: state.postgres.dsn cannot be parsed as a PostgreSQL connection string")
	}
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > 10*time.Second {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(max(idle.Milliseconds(), 1), 10)
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ha: cannot open a pool to PostgreSQL at %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ha: cannot reach PostgreSQL at %s:%d (state.postgres.dsn): %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	return pool, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// register migrates and writes the node's row in one transaction.
func (n *Node) register(ctx context.Context) error {
	return pgx.BeginFunc(ctx, n.pool, func(tx pgx.Tx) error {
		if err := migrate(ctx, tx, n.opts.FailoverDelay.Milliseconds()); err != nil {
			return err
		}
		c, err := readCluster(ctx, tx, "FOR SHARE")
		if err != nil {
			return err
		}
		if err := n.checkVersions(ctx, tx, c); err != nil {
			return err
		}
		var (
			id         string
			status     Status
			lastaccess time.Time
			addr       string
			port       int
		)
		err = tx.QueryRow(ctx, `SELECT ha_nodeid, status, lastaccess, address, port FROM peregrine_ha.node WHERE name = $1 FOR UPDATE`,
			n.opts.Name).Scan(&id, &status, &lastaccess, &addr, &port)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			id = audit.NewCUID(time.Now())
			_, err = tx.Exec(ctx, `INSERT INTO peregrine_ha.node VALUES ($1, $2, $3, $4, clock_timestamp(), 0, $5, $6)`,
				id, n.opts.Name, n.opts.Address, n.opts.Port, n.session, n.opts.Version)
			if err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			age := c.now.Sub(lastaccess)
			if (status == StatusActive || status == StatusStandby) && age < c.takeoverDelay() {
				return fmt.Errorf("%w: found %s duplicate %q node: node %q (%s) at %s:%d was seen %s ago; give this node another ha.node_name, or stop that one and wait the failover delay (%s)",
					ErrNameInUse, status, n.opts.Name, n.opts.Name, status, addr, port, age.Round(time.Second), c.takeoverDelay())
			}
			// The same name again after a stop or a crash: the row and
			// its ID carry on, as 6.0's do.
			_, err = tx.Exec(ctx, `UPDATE peregrine_ha.node SET address = $2, port = $3, lastaccess = clock_timestamp(), status = 0, session = $4, version = $5 WHERE ha_nodeid = $1`,
				id, n.opts.Address, n.opts.Port, n.session, n.opts.Version)
			if err != nil {
				return err
			}
		}
		n.id = id
		n.delay = c.delay
		return nil
	})
}

// checkVersions refuses to join a cluster where a running node (active
// or standby, heartbeat younger than the failover delay) is of another
// major.minor version.
func (n *Node) checkVersions(ctx context.Context, tx pgx.Tx, c *cluster) error {
	rows, err := tx.Query(ctx, `SELECT name, version FROM peregrine_ha.node WHERE status IN (0, 3) AND name <> $1
		AND lastaccess > clock_timestamp() - $2 * interval '1 millisecond' ORDER BY name`, n.opts.Name, c.takeoverDelay().Milliseconds())
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name, version string
		if err := rows.Scan(&name, &version); err != nil {
			return err
		}
		if !compatible(version, n.opts.Version) {
			return fmt.Errorf("%w: node %q runs Peregrine %s, this one is %s; every running node must be of one major.minor version (stop the others to upgrade)",
				ErrVersion, name, version, n.opts.Version)
		}
	}
	return rows.Err()
}

// cluster is the cluster row as a transaction read it.
type cluster struct {
	epoch     int64
	active    string // "" when none
	delay     time.Duration
	prevDelay time.Duration
	changedAt time.Time
	now       time.Time // the database's clock
	// The active node's row (zero when none).
	activeStatus     Status
	activeLastaccess time.Time
	activeSession    string
}

// takeoverDelay is how old the active node's heartbeat must be before a
// standby takes over: the longer of the current and the previous delay
// until the previous one has passed since the change (doc.go).
func (c *cluster) takeoverDelay() time.Duration {
	if c.now.Before(c.changedAt.Add(c.prevDelay)) {
		return max(c.delay, c.prevDelay)
	}
	return c.delay
}

// readCluster reads the cluster row and its active node with lock
// ("FOR SHARE", "FOR UPDATE" or "") on the cluster row. The lock is
// taken by a statement of its own before the read: a locking read that
// waited for a takeover would see the new cluster row joined with the
// node rows of its older snapshot (READ COMMITTED re-checks only the
// locked row), and could take an active node for a stale one.
func readCluster(ctx context.Context, tx querier, lock string) (*cluster, error) {
	if lock != "" {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM peregrine_ha.cluster WHERE id = 1 `+lock); err != nil {
			return nil, fmt.Errorf("cannot lock the cluster row: %w", err)
		}
	}
	var (
		c               cluster
		active, session *string
		status          *int16
		lastaccess      *time.Time
		delayMS, prevMS int64
	)
	err := tx.QueryRow(ctx, `SELECT c.epoch, c.active_nodeid, c.failover_delay_ms, c.prev_delay_ms, c.delay_changed_at, clock_timestamp(),
			n.status, n.lastaccess, n.session
		FROM peregrine_ha.cluster c LEFT JOIN peregrine_ha.node n ON n.ha_nodeid = c.active_nodeid
		WHERE c.id = 1`).Scan(&c.epoch, &active, &delayMS, &prevMS, &c.changedAt, &c.now, &status, &lastaccess, &session)
	if err != nil {
		return nil, fmt.Errorf("cannot read the cluster row: %w", err)
	}
	c.delay, c.prevDelay = time.Duration(delayMS)*time.Millisecond, time.Duration(prevMS)*time.Millisecond
	if active != nil {
		c.active = *active
	}
	if status != nil {
		c.activeStatus, c.activeLastaccess, c.activeSession = Status(*status), *lastaccess, *session
	}
	return &c, nil
}

// ID is the node's ha_nodeid.
func (n *Node) ID() string { return n.id }

// Pool is the node's connection pool, for fenced state writes.
func (n *Node) Pool() *pgxpool.Pool { return n.pool }

// Lease returns the node's current lease, nil unless it is active.
func (n *Node) Lease() *Lease {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lease
}

// Status returns the node's own view of its state.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status
}

// Changed returns a channel closed at the next change of Lease or
// Status.
func (n *Node) Changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.change
}

func (n *Node) setState(s Status, l *Lease) {
	n.mu.Lock()
	n.status, n.lease = s, l
	close(n.change)
	n.change = make(chan struct{})
	n.mu.Unlock()
}

// Run heartbeats, takes over and renews until ctx ends or the node is
// removed (ErrRemoved). It does not stop the node: on ctx's end the
// node's row is left as it is, as after a crash; Close stops it.
func (n *Node) Run(ctx context.Context) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if err := n.step(ctx); err != nil {
			if errors.Is(err, ErrRemoved) {
				n.endLease(ErrRemoved)
				n.setState(StatusStopped, nil)
				n.log.Error("this node was removed from the cluster (peregrine ha remove-node, or another start under its name); stopping")
				return err
			}
			if ctx.Err() == nil {
				n.log.Warn("cluster heartbeat failed", "err", err)
			}
		}
		n.mu.Lock()
		d := n.delay
		n.mu.Unlock()
		t.Reset(Heartbeat(d))
	}
}

// step is one heartbeat: renew as the active node, or stamp and maybe
// take over as a standby.
func (n *Node) step(ctx context.Context) error {
	n.mu.Lock()
	d := n.delay
	n.mu.Unlock()
	// No statement outlives the heartbeat: a hung database must not
	// keep the loop from noticing.
	ctx, cancel := context.WithTimeout(ctx, max(Heartbeat(d), 500*time.Millisecond))
	defer cancel()
	if l := n.Lease(); l != nil && l.ctx.Err() == nil {
		return n.renew(ctx, l)
	}
	return n.standby(ctx)
}

// renew extends the lease if the cluster row still names this node
// with the lease's epoch; otherwise the lease ends.
func (n *Node) renew(ctx context.Context, l *Lease) error {
	t0 := time.Now()
	var lost error
	var delay time.Duration
	err := pgx.BeginFunc(ctx, n.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = 1000`); err != nil {
			return err
		}
		c, err := readCluster(ctx, tx, "FOR SHARE")
		if err != nil {
			return err
		}
		delay = c.delay
		if c.epoch != l.epoch || c.active != n.id || c.activeSession != n.session {
			lost = fmt.Errorf("%w: the cluster is at epoch %d with node %q active", ErrFenced, c.epoch, c.active)
			return nil
		}
		tag, err := tx.Exec(ctx, `UPDATE peregrine_ha.node SET lastaccess = clock_timestamp() WHERE ha_nodeid = $1 AND session = $2 AND status = 3`, n.id, n.session)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			lost = ErrRemoved
			return nil
		}
		// Standbys that stopped heartbeating are unavailable (6.0).
		_, err = tx.Exec(ctx, `UPDATE peregrine_ha.node SET status = 2 WHERE status = 0 AND lastaccess < clock_timestamp() - $1 * interval '1 millisecond'`, c.delay.Milliseconds())
		return err
	})
	if err != nil {
		return err
	}
	if lost != nil {
		n.endLease(lost)
		if errors.Is(lost, ErrRemoved) {
			return ErrRemoved
		}
		n.setState(StatusStandby, nil)
		n.log.Warn("lost the active lease; standby now", "err", lost)
		return nil
	}
	n.mu.Lock()
	n.delay = delay
	n.mu.Unlock()
	l.extend(t0, delay)
	return nil
}

// standby stamps the node's heartbeat and takes over when the active
// node's heartbeat is older than the failover delay, when it stopped,
// or when there is none.
func (n *Node) standby(ctx context.Context) error {
	if l := n.Lease(); l != nil {
		// The lease ended by its deadline (the database was out of
		// reach): standby until a takeover gives a new one.
		n.leaseEnded(l)
	}
	// A row still saying active (this node lost its lease but no one
	// took over) keeps its old heartbeat: it must not look alive while
	// this node does not process; it becomes active again by a takeover
	// below, with a new epoch.
	tag, err := n.pool.Exec(ctx, `UPDATE peregrine_ha.node SET lastaccess = CASE WHEN status = 3 THEN lastaccess ELSE clock_timestamp() END,
		status = CASE WHEN status = 3 THEN 3 ELSE 0 END WHERE ha_nodeid = $1 AND session = $2`, n.id, n.session)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrRemoved
	}
	// A plain read first: a FOR UPDATE every beat would queue behind
	// the active node's fenced writes (FOR SHARE) and hold up the ones
	// after it.
	var c *cluster
	err = pgx.BeginFunc(ctx, n.pool, func(tx pgx.Tx) error {
		c, err = readCluster(ctx, tx, "")
		return err
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.delay = c.delay
	n.mu.Unlock()
	if !c.expired(n.id) {
		return nil
	}
	t0 := time.Now()
	var took *Lease
	delay := c.delay
	err = pgx.BeginFunc(ctx, n.pool, func(tx pgx.Tx) error {
		// Whoever holds the cluster row is writing or taking over: try
		// again next beat rather than wait.
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = 1000`); err != nil {
			return err
		}
		c, err := readCluster(ctx, tx, "FOR UPDATE")
		if err != nil {
			return err
		}
		if !c.expired(n.id) {
			return nil
		}
		delay = c.delay
		if c.active != "" && c.active != n.id && c.activeStatus == StatusActive {
			if _, err := tx.Exec(ctx, `UPDATE peregrine_ha.node SET status = 2 WHERE ha_nodeid = $1`, c.active); err != nil {
				return err
			}
		}
		var epoch int64
		if err := tx.QueryRow(ctx, `UPDATE peregrine_ha.cluster SET epoch = epoch + 1, active_nodeid = $1 WHERE id = 1 RETURNING epoch`, n.id).Scan(&epoch); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE peregrine_ha.node SET status = 3, lastaccess = clock_timestamp() WHERE ha_nodeid = $1 AND session = $2`, n.id, n.session)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrRemoved
		}
		took = newLease(n, epoch)
		n.log.Info("taking over as the active node", "epoch", epoch, "previous", c.active, "previous_status", c.activeStatus.String())
		return nil
	})
	if err != nil {
		if took != nil {
			took.end(err)
		}
		return err
	}
	if took != nil {
		took.extend(t0, delay)
		n.setState(StatusActive, took)
	}
	return nil
}

// expired reports whether node self may take over: no active node, or
// itself from before (its lease ended), or one that stopped or whose
// heartbeat is older than the failover delay.
func (c *cluster) expired(self string) bool {
	return c.active == "" || c.active == self || c.activeStatus != StatusActive ||
		c.now.Sub(c.activeLastaccess) > c.takeoverDelay()
}

// leaseEnded makes the node standby if l is still its lease.
func (n *Node) leaseEnded(l *Lease) {
	n.mu.Lock()
	cur := n.lease == l
	n.mu.Unlock()
	if cur {
		n.setState(StatusStandby, nil)
		n.log.Warn("the active lease ran out before it could be renewed; stopped processing", "epoch", l.epoch)
	}
}

func (n *Node) endLease(cause error) {
	if l := n.Lease(); l != nil {
		l.end(cause)
	}
}

// Close stops the node cleanly: its lease ends, its row becomes
// stopped and, if it was active, the cluster has no active node, so a
// standby takes over at its next heartbeat (as 6.0's). Run must have
// returned. The pool is closed.
func (n *Node) Close(ctx context.Context) error {
	n.endLease(errors.New("ha: node stopped"))
	defer n.pool.Close()
	err := pgx.BeginFunc(ctx, n.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE peregrine_ha.cluster SET active_nodeid = NULL WHERE id = 1 AND active_nodeid = $1
			AND EXISTS (SELECT 1 FROM peregrine_ha.node WHERE ha_nodeid = $1 AND session = $2)`, n.id, n.session); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE peregrine_ha.node SET status = 1, lastaccess = clock_timestamp() WHERE ha_nodeid = $1 AND session = $2`, n.id, n.session)
		return err
	})
	n.setState(StatusStopped, nil)
	if err != nil {
		return fmt.Errorf("ha: cannot mark node %q stopped: %w", n.opts.Name, err)
	}
	return nil
}
