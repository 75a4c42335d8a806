package hatest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// Cluster is a PostgreSQL server with one active HA node on it.
type Cluster struct {
	PG    *testutil.Postgres
	Node  *ha.Node
	Lease *ha.Lease
}

// Start starts PostgreSQL and a node named name, and waits (at most a
// minute) until the node is active. It skips under -short.
func Start(t *testing.T, name string) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL")
	}
	pg := testutil.StartPostgres(t)
	n, err := ha.Open(context.Background(), ha.Options{DSN: DSN(pg),
		Name: name, Address: "127.0.0.1", Port: 10051, FailoverDelay: 10 * time.Second, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; n.Close(context.Background()) })
	deadline := time.Now().Add(60 * time.Second)
	for n.Lease() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the node never became active")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &Cluster{PG: pg, Node: n, Lease: n.Lease()}
}

// DSN is the superuser's connection string for pg.
func DSN(pg *testutil.Postgres) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port)
}

// SQL opens database/sql on the node's pool (closed with the test) and
// returns it with the lease's fenced writer, as a store's PostgreSQL
// opener takes them.
func (c *Cluster) SQL(t *testing.T) (*sql.DB, func(context.Context, func(*sql.Tx) error) error) {
	t.Helper()
	db := stdlib.OpenDBFromPool(c.Node.Pool())
	t.Cleanup(func() { db.Close() })
	return db, func(ctx context.Context, fn func(*sql.Tx) error) error { return c.Lease.WriteSQL(ctx, db, fn) }
}

// Fence moves the cluster's epoch on, as a takeover this node has not
// noticed does: every later fenced write of the node is refused.
func (c *Cluster) Fence(t *testing.T) {
	t.Helper()
	if _, err := c.Node.Pool().Exec(context.Background(), `UPDATE peregrine_ha.cluster SET epoch = epoch + 1`); err != nil {
		t.Fatal(err)
	}
}
