package catalog

import (
	"context"
	"errors"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

// TestPostgresReadOnlyFollows: a catalog opened read-only in PostgreSQL
// (an HA standby: no lease) writes nothing, refuses changes with
// sqlitedb.ErrReadOnly, and follows the writer's edits on Reload; a
// read-only open of a catalog no active node has made is refused.
func TestPostgresReadOnlyFollows(t *testing.T) {
	cl := hatest.Start(t, "catalog-readonly")
	b := &pgBackend{c: cl}
	ctx := context.Background()
	if _, err := Open(ctx, Options{Postgres: &sqlitedb.PG{Pool: cl.Node.Pool(), ReadOnly: true, Schema: "never_made"}}); err == nil {
		t.Fatal("a read-only open of a catalog never made succeeded")
	}
	w, path := b.open(t)
	mustApply(t, w, testSpec())
	o, _ := pgPaths.Load(path)
	ro := *o.(Options).Postgres
	ro.Fence, ro.ReadOnly = nil, true
	r, err := Open(ctx, Options{Postgres: &ro})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Snapshot().Version() != w.Snapshot().Version() {
		t.Fatalf("read-only revision %d, writer's %d", r.Snapshot().Version(), w.Snapshot().Version())
	}
	if changed, err := r.Reload(ctx); err != nil || changed {
		t.Fatalf("reload with nothing new: %v, %v", changed, err)
	}
	g := w.Snapshot().Groups()[0].ID
	if _, err := w.Edit(ctx, func(e *Edit) error {
		_, err := e.CreateHosts([]NewHost{{Host: "made-by-active", GroupIDs: []uint64{g}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if r.Snapshot().Host("made-by-active") != nil {
		t.Fatal("the read-only catalog changed before a reload")
	}
	changed, err := r.Reload(ctx)
	if err != nil || !changed || r.Snapshot().Host("made-by-active") == nil || r.Snapshot().Version() != w.Snapshot().Version() {
		t.Fatalf("after reload: changed %v, %v, host %v", changed, err, r.Snapshot().Host("made-by-active"))
	}
	_, err = r.Edit(ctx, func(e *Edit) error {
		_, err := e.CreateHosts([]NewHost{{Host: "made-by-standby", GroupIDs: []uint64{g}}})
		return err
	})
	if !errors.Is(err, sqlitedb.ErrReadOnly) {
		t.Fatalf("an edit of the read-only catalog: %v", err)
	}
	if changed, err := w.Reload(ctx); err != nil || changed || w.Snapshot().Host("made-by-standby") != nil {
		t.Fatalf("the standby's edit reached the catalog: %v, %v", changed, err)
	}
}
