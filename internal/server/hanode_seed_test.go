package server

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/hamigrate"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// seedNode runs fn as the only node ("seed") of the cluster at dsn,
// active, which then stops and leaves the registry. Call it before any
// node of the test starts.
func seedNode(t *testing.T, dsn string, fn func(n *ha.Node, l *ha.Lease)) {
	t.Helper()
	ctx := context.Background()
	n, err := ha.Open(ctx, ha.Options{DSN: dsn, Name: "seed", Address: "127.0.0.1", Port: 10051,
		FailoverDelay: 10 * time.Second, Version: Version})
	if err != nil {
		t.Fatal(err)
	}
	nctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); n.Run(nctx) }()
	defer func() {
		cancel()
		<-done
		n.Close(ctx)
		a, err := ha.OpenAdmin(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if _, err := a.RemoveNode(ctx, "seed"); err != nil {
			t.Errorf("cannot remove the seed node: %v", err)
		}
	}()
	for deadline := time.Now().Add(time.Minute); n.Lease() == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the seed node never became active")
		}
	}
	fn(n, n.Lease())
}

// seedPGFromDir moves a stopped standalone server's catalog, users and
// services (data directory dir) into the cluster's PostgreSQL, as
// peregrine ha migrate does.
func seedPGFromDir(t *testing.T, dsn, dir string) {
	t.Helper()
	seedNode(t, dsn, func(n *ha.Node, l *ha.Lease) {
		err := hamigrate.Run(context.Background(), hamigrate.Options{
			Sources: hamigrate.Sources{Catalog: CatalogPath(dir), Auth: AuthPath(dir), Services: ServicesPath(dir)},
			Pool:    n.Pool(), Write: l.Write, WriteSQL: l.WriteSQL, FenceSQL: l.FenceSQL})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// seedPGCatalog applies spec to the cluster's catalog in PostgreSQL
// (shared by every node) as a node of its own ("seed"), which then
// stops and leaves the registry; it returns the catalog's snapshot
// after the apply. Call it before any node of the test starts.
func seedPGCatalog(t *testing.T, dsn string, spec catalog.Spec) *catalog.Snapshot {
	t.Helper()
	var snap *catalog.Snapshot
	seedNode(t, dsn, func(n *ha.Node, l *ha.Lease) {
		ctx := context.Background()
		o := CatalogOptions("", slog.New(slog.DiscardHandler))
		o.Path, o.Postgres = "", &sqlitedb.PG{Pool: n.Pool(), Fence: l.FenceSQL}
		cat, err := catalog.Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer cat.Close()
		if _, err := cat.Apply(ctx, spec); err != nil {
			t.Fatal(err)
		}
		snap = cat.Snapshot()
	})
	return snap
}
