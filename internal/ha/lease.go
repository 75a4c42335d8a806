package ha

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Lease is an active node's hold on the cluster: its fencing token
// (Epoch) and a context that ends when the node must stop processing.
type Lease struct {
	node   *Node
	epoch  int64
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	deadline time.Time // local monotonic clock
	timer    *time.Timer
}

func newLease(n *Node, epoch int64) *Lease {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Lease{node: n, epoch: epoch, ctx: ctx, cancel: cancel}
}

// Epoch is the fencing token: the cluster's epoch when this node took
// over. A later takeover has a larger one.
func (l *Lease) Epoch() int64 { return l.epoch }

// Context ends when the lease does: the node must stop collecting,
// evaluating and alerting. context.Cause says why.
func (l *Lease) Context() context.Context { return l.ctx }

// Done is Context().Done().
func (l *Lease) Done() <-chan struct{} { return l.ctx.Done() }

// Deadline is when the lease ends unless renewed (local clock).
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// extend moves the deadline to t0 + delay − Margin(delay), t0 being
// when the renewal that succeeded was sent (doc.go).
func (l *Lease) extend(t0 time.Time, delay time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return
	}
	l.deadline = t0.Add(delay - Margin(delay))
	wait := time.Until(l.deadline)
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, l.expire)
	} else {
		l.timer.Reset(wait)
	}
}

// expire ends the lease if its deadline passed (a timer that fired
// late, after an extension, finds a later deadline and re-arms).
func (l *Lease) expire() {
	l.mu.Lock()
	if wait := time.Until(l.deadline); wait > 0 {
		l.timer.Reset(wait)
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	l.end(fmt.Errorf("%w: not renewed within the failover delay less the margin (PostgreSQL out of reach or too slow)", ErrFenced))
	l.node.leaseEnded(l)
}

func (l *Lease) end(cause error) {
	l.mu.Lock()
	if l.timer != nil {
		l.timer.Stop()
	}
	l.mu.Unlock()
	l.cancel(cause)
}

// Fence checks, inside tx, that this lease still holds: the cluster's
// epoch is the lease's, this node is the active one and its heartbeat
// is younger than the failover delay. It locks the cluster row FOR
// SHARE until tx ends, so no takeover commits in between: a write made
// in tx after Fence succeeded commits only while the lease holds.
// Every state write of the active node calls it, as the transaction's
// first statement (READ COMMITTED; under REPEATABLE READ a takeover
// that committed while Fence waited fails the transaction, which is
// as safe); on ErrFenced the caller rolls back. The transaction must
// not sit idle longer than Margin(delay) between statements:
// PostgreSQL ends it then (doc.go).
func (l *Lease) Fence(ctx context.Context, tx pgx.Tx) error {
	return l.fence(ctx, tx)
}

// FenceSQL is Fence for a database/sql transaction on the state
// database through pgx's driver (stdlib.OpenDBFromPool(node.Pool())),
// for the stores written through database/sql.
func (l *Lease) FenceSQL(ctx context.Context, tx *sql.Tx) error {
	return l.fence(ctx, sqlTx{tx})
}

// WriteSQL is Write for database/sql: fn runs in a transaction of db
// after FenceSQL, and it commits only if both succeed. db must be the
// state database, best stdlib.OpenDBFromPool(node.Pool()) so that its
// connections end transactions left idle (doc.go).
func (l *Lease) WriteSQL(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err := l.FenceSQL(ctx, tx); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// querier is what the cluster read needs of a transaction: pgx.Tx, or
// a database/sql one through sqlTx.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) Exec(ctx context.Context, q string, args ...any) (pgconn.CommandTag, error) {
	_, err := t.tx.ExecContext(ctx, q, args...)
	return pgconn.CommandTag{}, err
}

func (t sqlTx) QueryRow(ctx context.Context, q string, args ...any) pgx.Row {
	return t.tx.QueryRowContext(ctx, q, args...)
}

func (l *Lease) fence(ctx context.Context, tx querier) error {
	if l.ctx.Err() != nil {
		if cause := context.Cause(l.ctx); !errors.Is(cause, ErrFenced) {
			return fmt.Errorf("%w: %v", ErrFenced, cause)
		} else {
			return cause
		}
	}
	return l.fenceDB(ctx, tx)
}

// fenceDB is Fence's check in the database alone, which holds even
// when the node's own clock and timers do not (a paused process).
func (l *Lease) fenceDB(ctx context.Context, tx querier) error {
	c, err := readCluster(ctx, tx, "FOR SHARE")
	if err != nil {
		return err
	}
	n := l.node
	switch {
	case c.epoch != l.epoch:
		return fmt.Errorf("%w: the cluster is at epoch %d, this lease has %d", ErrFenced, c.epoch, l.epoch)
	case c.active != n.id || c.activeSession != n.session || c.activeStatus != StatusActive:
		return fmt.Errorf("%w: node %q is not the active node", ErrFenced, n.opts.Name)
	case c.now.Sub(c.activeLastaccess) >= c.delay:
		return fmt.Errorf("%w: its heartbeat is %s old, the failover delay %s", ErrFenced, c.now.Sub(c.activeLastaccess).Round(time.Millisecond), c.delay)
	}
	return nil
}

// Write runs fn in a transaction on the node's pool after Fence, and
// commits only if both succeed.
func (l *Lease) Write(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, l.node.pool, func(tx pgx.Tx) error {
		if err := l.Fence(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	})
}

// IsFenced reports whether err says a lease was lost.
func IsFenced(err error) bool { return errors.Is(err, ErrFenced) }
