// Package ha is the high-availability cluster of Peregrine nodes
// (issue 31): the node registry and the active node's lease, kept in
// PostgreSQL, with Zabbix 6.0's node states and a fencing token that
// every state write carries.
//
// # What it owns
//
// The schema peregrine_ha in the state database (state.postgres.dsn):
// schema_version, node (one row per node name: ha_nodeid, name,
// address, port, lastaccess, status, session) and cluster (one row:
// the fencing epoch, the active node, the failover delay). Migrations
// run in the transaction that registers a node, behind an advisory
// lock, so two nodes starting at once migrate once and a refused start
// (a name in use, a schema newer than this binary, a running node of
// another major.minor version) writes nothing.
//
// It does not own what the nodes do while active or standby: the
// wiring asks Node.Lease for the lease and stops the value and event
// paths when the lease's context ends. It does not hold the catalog,
// events or alerts (the rest of issue 31): their writes take a Lease
// and call Fence inside their own transactions.
//
// # States (Zabbix 6.0's)
//
// A node is standby (0), stopped (1: shut down cleanly), unavailable
// (2: its heartbeat is older than the failover delay) or active (3). At
// most one node is active. Every node heartbeats (stamps lastaccess with
// the database's clock); a standby takes over when the active node's
// heartbeat is older than the failover delay, when the active node
// stopped, or when there is none, and marks the old active unavailable;
// the active node marks standbys unavailable the same way. The failover
// delay lives in the cluster row and can be changed while the cluster
// runs (SetFailoverDelay, `peregrine ha set-failover-delay`); a node
// removed from the registry (RemoveNode: only a stopped or unavailable
// one) that comes back stops with ErrRemoved.
//
// # The lease and the fencing token
//
// Taking over increments cluster.epoch in the transaction that makes a
// node active; the epoch is the fencing token of that node's Lease.
// Lease.Fence(ctx, tx) reads the cluster row FOR SHARE inside the
// caller's transaction and fails with ErrFenced unless the epoch is
// still the lease's, the node is still the active one and its heartbeat
// is younger than the failover delay. A takeover updates that row, so it
// waits for every transaction that passed Fence to end, and a
// transaction that calls Fence after a takeover sees the new epoch: a
// node that lost its lease can never commit a fenced write, whatever its
// clock or scheduler did. This is the safety property; the database
// checks it, not the node's good behaviour. FenceSQL and WriteSQL do
// the same for a database/sql transaction through pgx's driver, for the
// stores written through database/sql. Every locking read of the
// cluster row takes the lock in a statement of its own and reads in the
// next: a locking read that waited for a takeover would otherwise join
// the new cluster row with node rows from before it (READ COMMITTED
// re-checks only the locked row), which once let a second standby
// take a fresh active node for a stale one.
//
// A paused writer holding the share lock would hold up the takeover:
// every connection of the node's pool sets
// idle_in_transaction_session_timeout to the margin M below, so
// PostgreSQL ends such a transaction (rolling it back) before a standby
// is allowed to take over; a takeover also runs with a lock_timeout and
// retries at the next tick rather than waiting.
//
// # Stopping before a standby may take over
//
// Fencing makes a lost lease harmless to the state; the active node
// must also stop collecting, evaluating and alerting before another node
// starts (no double alerts). With D the failover delay, the active node
// renews every H and holds its lease until t0 + D − M by its own
// monotonic clock, t0 being when it sent its last successful renewal:
//
//	M = min(5s, D/2)      (6.0 stops its active node after D − 5s without the database)
//	H = min(5s, (D − M)/3) (6.0 heartbeats every 5s; at least three tries per lease)
//
// The renewal stamps lastaccess with the database's clock at a moment
// after t0, and a standby takes over only once the database's clock is
// past lastaccess + D, so by then the old active's lease ended at least
// M earlier (clock rates differ by parts per million, not by M). When the
// lease ends (the database unreachable, a renewal refused) the Lease's
// context is cancelled: that is the wiring's signal to stop processing.
// Neither clock has to agree with the other's time of day; only the
// database's clock compares heartbeats.
//
// A shorter failover delay set at run time would let a standby take
// over before an active that renewed under the longer delay gives up.
// So the cluster row keeps the previous delay and the time of the
// change, and standbys use the longer of the two until the previous
// delay has passed since the change; the active node always uses the
// current one (shorter or equal), which is the safe side.
//
// # Concurrency
//
// Lock order in PostgreSQL: the cluster row first, then node rows, then
// (in a fenced transaction) the caller's tables; every transaction of
// this package and Fence keep it, so none deadlock. The standby
// heartbeat touches only its own node row.
//
// A Node is run by one Run goroutine; Lease, Status, Nodes and the
// Lease's methods are safe from any goroutine. A Lease is ended once
// and never renewed after that: a node that becomes active again gets
// a new Lease with a larger epoch.
package ha
