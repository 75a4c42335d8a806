package autoreg

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

// TestIntegrationStoreInPostgres: with the state in PostgreSQL (a real
// PostgreSQL 15, every write fenced by an active HA node's lease
// through database/sql) registrations are saved, reloaded in order and
// forgotten as in the file; once the cluster's epoch moved on (a
// takeover this node has not noticed) a Save is refused and nothing of
// it is stored.
func TestIntegrationStoreInPostgres(t *testing.T) {
	c := hatest.Start(t, "autoreg-a")
	n := c.Node
	lease := n.Lease()
	ctx := context.Background()
	open := func() *Store {
		t.Helper()
		db := stdlib.OpenDBFromPool(n.Pool())
		st, err := OpenStorePG(ctx, db, func(ctx context.Context, fn func(*sql.Tx) error) error {
			return lease.WriteSQL(ctx, db, fn)
		}, "")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	clock := time.Unix(1700000000, 5)
	host := func(id uint64, name string) Host {
		return Host{ID: id, Request: Request{Host: name, HostMetadata: "linux " + name, IP: "127.0.0.1", Port: 10050, Flag: ConnIP, Clock: clock, ProxyID: 7}}
	}
	st := open()
	if err := st.Save(ctx, []Host{host(1, "a"), host(2, "b"), host(3, "c")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(ctx, []Host{host(1, "a")}, []uint64{2}); err != nil { // a seen again, b forgotten
		t.Fatal(err)
	}
	st.Close()
	st = open()
	defer st.Close()
	got, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Host != "c" || got[1].Host != "a" || got[1].HostMetadata != "linux a" || !got[1].Clock.Equal(clock) || got[1].ProxyID != 7 {
		t.Fatalf("loaded %+v: want c then a", got)
	}

	if _, err := n.Pool().Exec(ctx, `UPDATE peregrine_ha.cluster SET epoch = epoch + 1`); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(ctx, []Host{host(4, "d")}, []uint64{3}); !ha.IsFenced(err) {
		t.Fatalf("save after the epoch moved: %v, want ErrFenced", err)
	}
	if got, err := st.Load(ctx); err != nil || len(got) != 2 {
		t.Fatalf("after a refused save: %+v (%v)", got, err)
	}
}
