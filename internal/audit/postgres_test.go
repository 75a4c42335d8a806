package audit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// opener opens the log a test works on; the same dir reopens it.
type opener func(t *testing.T, dir string, c *clock, max int) *Log

// eachBackend runs a behavioural test against the embedded log and
// against PostgreSQL (a real PostgreSQL 15, every write fenced).
func eachBackend(t *testing.T, test func(*testing.T, opener)) {
	t.Run("embedded", func(t *testing.T) { test(t, open) })
	t.Run("postgres", func(t *testing.T) {
		n, l := activeNode(t)
		schemas := map[string]string{}
		test(t, func(t *testing.T, dir string, c *clock, max int) *Log {
			t.Helper()
			sc, ok := schemas[dir]
			if !ok {
				sc = fmt.Sprintf("au%d", len(schemas))
				schemas[dir] = sc
			}
			lg, err := Open(Options{Now: c.now, MaxRecords: max, Postgres: &pglog.Options{Pool: n, Write: l.Write, Schema: sc}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { lg.Close() })
			return lg
		})
	})
}

// fencer stands in for the HA lease (package ha imports audit, so
// its tests cannot use a real node): every write transaction first
// reads the epoch row FOR SHARE and fails unless it is still 1, as
// Lease.Fence checks the cluster's epoch.
type fencer struct{ pool *pgxpool.Pool }

var errFenced = errors.New("fenced: the epoch moved on")

func (f fencer) Write(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		var epoch int
		if err := tx.QueryRow(ctx, `SELECT epoch FROM test_fence FOR SHARE`).Scan(&epoch); err != nil {
			return err
		}
		if epoch != 1 {
			return errFenced
		}
		return fn(tx)
	})
}

// activeNode starts PostgreSQL and returns a pool and the fenced
// writer of epoch 1.
func activeNode(t *testing.T) (*pgxpool.Pool, fencer) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	pool, err := pgxpool.New(context.Background(), fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE test_fence (epoch int NOT NULL); INSERT INTO test_fence VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	return pool, fencer{pool}
}

// TestPGFencedAppendRefused: once the epoch moved on (a takeover
// this node has not noticed), Append is refused by
// PostgreSQL, nothing is stored, and the records are not shown.
func TestPGFencedAppendRefused(t *testing.T) {
	n, lease := activeNode(t)
	c := &clock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	l, err := Open(Options{Now: c.now, Postgres: &pglog.Options{Pool: n, Write: lease.Write}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append([]Record{rec("kept", c.t.Unix())}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Exec(context.Background(), `UPDATE test_fence SET epoch = epoch + 1`); err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]Record{rec("refused", c.t.Unix()+1), rec("refused too", c.t.Unix()+2)}); !errors.Is(err, errFenced) {
		t.Fatalf("append after the epoch moved: %v, want ErrFenced", err)
	}
	if got := names(l, false); !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("records shown: %v", got)
	}
	var rows int
	if err := n.QueryRow(context.Background(), `SELECT count(*) FROM peregrine_state.audit_log`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d rows (%v), want 1", rows, err)
	}
}
