package ha

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NodeInfo is a node's registry row, as hanode.get and ha_status show
// it.
type NodeInfo struct {
	ID         string
	Name       string
	Address    string
	Port       int
	LastAccess int64 // Unix seconds, the database's clock
	Status     Status
}

// Cluster is the registry as one transaction read it.
type Cluster struct {
	Nodes         []NodeInfo // by ha_nodeid: the order nodes first started in
	FailoverDelay time.Duration
	Epoch         int64
	DBTime        int64 // the database's clock, Unix seconds
}

// Admin reads and changes the registry: hanode.get, the
// zabbix[cluster,discovery,nodes] item and `peregrine ha`.
type Admin struct {
	pool *pgxpool.Pool
	own  bool
}

// OpenAdmin connects to the cluster's PostgreSQL for `peregrine ha`.
func OpenAdmin(ctx context.Context, dsn string) (*Admin, error) {
	pool, err := openPool(ctx, dsn, "peregrine-ha admin", 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &Admin{pool: pool, own: true}, nil
}

// Admin returns the registry through the node's own pool.
func (n *Node) Admin() *Admin { return &Admin{pool: n.pool} }

// Close closes the pool OpenAdmin opened.
func (a *Admin) Close() {
	if a.own {
		a.pool.Close()
	}
}

// errNoCluster: no node ever started on the database.
var errNoCluster = errors.New("ha: no cluster in this database (no node has started with ha.node_name and this state.postgres.dsn)")

// noSchema maps PostgreSQL's "undefined table" to errNoCluster.
func noSchema(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "3F000") {
		return errNoCluster
	}
	return err
}

// Cluster reads the registry.
func (a *Admin) Cluster(ctx context.Context) (*Cluster, error) {
	var cl Cluster
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		var delayMS int64
		err := tx.QueryRow(ctx, `SELECT epoch, failover_delay_ms, extract(epoch FROM clock_timestamp())::bigint FROM peregrine_ha.cluster WHERE id = 1`).
			Scan(&cl.Epoch, &delayMS, &cl.DBTime)
		if err != nil {
			return err
		}
		cl.FailoverDelay = time.Duration(delayMS) * time.Millisecond
		rows, err := tx.Query(ctx, `SELECT ha_nodeid, name, address, port, extract(epoch FROM lastaccess)::bigint, status FROM peregrine_ha.node ORDER BY ha_nodeid`)
		if err != nil {
			return err
		}
		cl.Nodes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (NodeInfo, error) {
			var n NodeInfo
			var st int16
			err := r.Scan(&n.ID, &n.Name, &n.Address, &n.Port, &n.LastAccess, &st)
			n.Status = Status(st)
			return n, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ha: cannot read the cluster: %w", noSchema(err))
	}
	return &cl, nil
}

// RemoveNode removes the node named target (its name or ha_nodeid), as
// 6.0's ha_remove_node: only a node that is stopped or unavailable, or
// whose heartbeat is older than the failover delay; a running node must
// be stopped first. It returns the removed node. The messages follow
// 6.0.14's (its binary's strings): "cannot remove HA node: unknown
// node ...", "... node "x" is active".
func (a *Admin) RemoveNode(ctx context.Context, target string) (NodeInfo, error) {
	var n NodeInfo
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		c, err := readCluster(ctx, tx, "FOR UPDATE")
		if err != nil {
			return err
		}
		var st int16
		var last time.Time
		err = tx.QueryRow(ctx, `SELECT ha_nodeid, name, address, port, lastaccess, status FROM peregrine_ha.node WHERE ha_nodeid = $1 OR name = $1 FOR UPDATE`, target).
			Scan(&n.ID, &n.Name, &n.Address, &n.Port, &last, &st)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("cannot remove HA node: unknown node %q (a name or an ID from peregrine ha status)", target)
		}
		if err != nil {
			return err
		}
		n.Status, n.LastAccess = Status(st), last.Unix()
		if (n.Status == StatusActive || n.Status == StatusStandby) && c.now.Sub(last) < c.takeoverDelay() {
			return fmt.Errorf("cannot remove HA node: node %q is %s (seen %s ago): stop it before removing it", n.Name, n.Status, c.now.Sub(last).Round(time.Second))
		}
		if c.active == n.ID {
			if _, err := tx.Exec(ctx, `UPDATE peregrine_ha.cluster SET active_nodeid = NULL WHERE id = 1`); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `DELETE FROM peregrine_ha.node WHERE ha_nodeid = $1`, n.ID)
		return err
	})
	if err != nil {
		return NodeInfo{}, noSchema(err)
	}
	return n, nil
}

// SetFailoverDelay changes the cluster's failover delay (10s to 15m, as
// 6.0's ha_set_failover_delay). A shorter delay binds standbys only
// once the previous one has passed (doc.go); nodes pick it up at their
// next heartbeat.
func (a *Admin) SetFailoverDelay(ctx context.Context, d time.Duration) error {
	if d < 10*time.Second || d > 15*time.Minute || d%time.Second != 0 {
		return fmt.Errorf("failover delay must be in range from 10s to 15m (whole seconds), not %s", d)
	}
	return a.setDelay(ctx, d)
}

func (a *Admin) setDelay(ctx context.Context, d time.Duration) error {
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		c, err := readCluster(ctx, tx, "FOR UPDATE")
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE peregrine_ha.cluster SET prev_delay_ms = $1, failover_delay_ms = $2, delay_changed_at = clock_timestamp() WHERE id = 1`,
			c.takeoverDelay().Milliseconds(), d.Milliseconds())
		return err
	})
	return noSchema(err)
}

// ParseDelay reads a failover delay as ha_set_failover_delay takes it:
// seconds, or a number with a suffix s, m or h.
func ParseDelay(s string) (time.Duration, error) {
	mult := time.Second
	num := s
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 's':
			num = s[:n-1]
		case 'm':
			num, mult = s[:n-1], time.Minute
		case 'h':
			num, mult = s[:n-1], time.Hour
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 || v > 1<<20 {
		return 0, fmt.Errorf("ha: %q is not a delay (seconds, or with a suffix s, m or h)", s)
	}
	return time.Duration(v) * mult, nil
}

// WriteStatus writes the cluster as 6.0's ha_status prints it
// (recorded from 6.0.14: the failover delay in seconds, then a table of
// number, ID, name, address:port, status and the heartbeat's age).
func WriteStatus(w io.Writer, cl *Cluster) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Failover delay: %d seconds\nCluster status:\n", int64(cl.FailoverDelay/time.Second))
	fmt.Fprintf(&b, "  %2s  %-25s %-25s %-30s %-11s %s\n", "#", "ID", "Name", "Address", "Status", "Last Access")
	for i, n := range cl.Nodes {
		fmt.Fprintf(&b, "  %2d. %-25s %-25s %-30s %-11s %s\n", i+1, n.ID, n.Name,
			n.Address+":"+strconv.Itoa(n.Port), n.Status, formatAge(cl.DBTime-n.LastAccess))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// formatAge writes an age in seconds as 6.0's ha_status does: days,
// hours and minutes from the largest that is not zero, then seconds
// ("5s", "1m 5s", "2h 0m 3s", "1d 0h 0m 0s").
func formatAge(s int64) string {
	s = max(s, 0)
	d, h, m := s/86400, s%86400/3600, s%3600/60
	s %= 60
	var b strings.Builder
	if d != 0 {
		fmt.Fprintf(&b, "%dd ", d)
	}
	if d != 0 || h != 0 {
		fmt.Fprintf(&b, "%dh ", h)
	}
	if d != 0 || h != 0 || m != 0 {
		fmt.Fprintf(&b, "%dm ", m)
	}
	fmt.Fprintf(&b, "%ds", s)
	return b.String()
}

// NodesJSON is the value of zabbix[cluster,discovery,nodes]: one object
// per node with id, name, status, lastaccess, address (host:port),
// db_timestamp and lastaccess_age, as 6.0's. A standalone server has
// none ("[]", recorded from 6.0.14).
func NodesJSON(cl *Cluster) []byte {
	type node struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		Status        int    `json:"status"`
		LastAccess    int64  `json:"lastaccess"`
		Address       string `json:"address"`
		DBTimestamp   int64  `json:"db_timestamp"`
		LastAccessAge int64  `json:"lastaccess_age"`
	}
	out := make([]node, 0, len(cl.Nodes))
	for _, n := range cl.Nodes {
		out = append(out, node{n.ID, n.Name, int(n.Status), n.LastAccess, n.Address + ":" + strconv.Itoa(n.Port), cl.DBTime, cl.DBTime - n.LastAccess})
	}
	b, _ := json.Marshal(out)
	return b
}
