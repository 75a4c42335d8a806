package ingest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

// TestIntegrationLogPositionsInPostgres: with the state in PostgreSQL
// (a real PostgreSQL 15, every write fenced by an active HA node's
// lease through database/sql) positions are saved, reopened and
// pruned as in the file; once the cluster's epoch moved on (a takeover
// this node has not noticed) a Save is refused and nothing of it is
// stored or shown.
func TestIntegrationLogPositionsInPostgres(t *testing.T) {
	c := hatest.Start(t, "ingest-a")
	n := c.Node
	lease := n.Lease()
	ctx := context.Background()
	open := func() *LogPositions {
		t.Helper()
		db := stdlib.OpenDBFromPool(n.Pool())
		lp, err := OpenLogPositionsPG(ctx, db, func(ctx context.Context, fn func(*sql.Tx) error) error {
			return lease.WriteSQL(ctx, db, fn)
		}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return lp
	}
	lp := open()
	for i := uint64(1); i <= 20; i++ {
		if err := lp.Save([]uint64{i, i}, []LogPos{{LastLogSize: 1}, {LastLogSize: i * 100, Mtime: int64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	lp.Close()
	lp = open()
	if lp.Len() != 20 {
		t.Fatalf("%d positions after reopen, want 20", lp.Len())
	}
	if p, ok := lp.Get(7); !ok || p.LastLogSize != 700 || p.Mtime != 7 {
		t.Fatalf("item 7: %+v %v", p, ok)
	}
	if k, err := lp.Prune(ctx, func(id uint64) bool { return id <= 10 }); err != nil || k != 10 {
		t.Fatalf("pruned %d, %v; want 10", k, err)
	}
	lp.Close()
	lp = open()
	defer lp.Close()
	if lp.Len() != 10 {
		t.Fatalf("%d positions after prune and reopen, want 10", lp.Len())
	}

	if _, err := n.Pool().Exec(ctx, `UPDATE peregrine_ha.cluster SET epoch = epoch + 1`); err != nil {
		t.Fatal(err)
	}
	if err := lp.Save([]uint64{1, 99}, []LogPos{{LastLogSize: 12345}, {LastLogSize: 1}}); !ha.IsFenced(err) {
		t.Fatalf("save after the epoch moved: %v, want ErrFenced", err)
	}
	if p, _ := lp.Get(1); p.LastLogSize != 100 {
		t.Fatalf("a refused save is shown: %+v", p)
	}
	var rows, size int64
	if err := n.Pool().QueryRow(ctx, `SELECT count(*), max(lastlogsize) FROM peregrine_state.log_position`).Scan(&rows, &size); err != nil || rows != 10 || size != 1000 {
		t.Fatalf("%d rows, max size %d (%v): a refused save was stored", rows, size, err)
	}
}
