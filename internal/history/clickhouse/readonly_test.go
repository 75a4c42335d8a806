package clickhouse

import (
	"context"
	"errors"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestReadOnly: a store opened read-only (an HA standby) on the tables
// a writer made reads what the writer inserts, also for an item it had
// already read while it had no values (a read-only store looks an
// item's tables up at every read), and refuses writes with ErrReadOnly,
// storing nothing.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	w := openStore(t, ch, inserted)
	r := openStore(t, ch, func(o *Options) { o.Database, o.Dir, o.ReadOnly = w.o.Database, "", true })
	ctx := context.Background()
	read := func() int {
		t.Helper()
		n := 0
		err := r.Read(ctx, history.Query{ItemID: 1, From: 0, Till: 2_000_000_000}, func(*history.Sample) bool { n++; return true })
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := read(); n != 0 {
		t.Fatalf("%d values before any write", n)
	}
	for i := range 3 {
		if err := w.Write(ctx, ackBatch(i, 2)); err != nil {
			t.Fatal(err)
		}
	}
	if n := read(); n != 3 {
		t.Fatalf("the read-only store reads %d values of item 1, want 3", n)
	}
	if err := r.Write(ctx, ackBatch(9, 2)); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("a write on the read-only store: %v, want ErrReadOnly", err)
	}
	if raw, _ := countRows(t, w, "history"); raw != 6 {
		t.Fatalf("rows after the refused write: %d, want 6", raw)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}
