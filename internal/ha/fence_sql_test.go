package ha

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// TestIntegrationFenceSQL: a database/sql transaction through pgx's
// driver is fenced as a pgx one: it commits while the lease holds, and
// once the cluster's epoch moved on (a takeover the node has not
// noticed: its local lease still runs) it is refused by the database
// and nothing of it is written.
func TestIntegrationFenceSQL(t *testing.T) {
	c := newTestCluster(t)
	ctx := context.Background()
	a := c.start("node-a", 10*time.Second)
	waitFor(t, "node-a active", 20*time.Second, func() bool { return a.Lease() != nil })
	l := a.Lease()
	db := stdlib.OpenDBFromPool(a.pool)
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE s (x int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	insert := func(x int) error {
		return l.WriteSQL(ctx, db, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO s VALUES ($1)`, x)
			return err
		})
	}
	if err := insert(1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.pool.Exec(ctx, `UPDATE peregrine_ha.cluster SET epoch = epoch + 1`); err != nil {
		t.Fatal(err)
	}
	if l.Context().Err() != nil {
		t.Fatal("the lease ended locally already; the test needs the database's refusal")
	}
	if err := insert(2); !IsFenced(err) {
		t.Fatalf("write after the epoch moved: %v, want ErrFenced", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM s`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows (%v), want 1", n, err)
	}
}
