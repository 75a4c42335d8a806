package catalogtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// Open returns a new catalog in a temporary directory of tb with spec
// applied. It is closed when tb's cleanups run, after the test's own
// defers, so a server deferred-closed in the test stops before it.
func Open(tb testing.TB, spec catalog.Spec) *catalog.Catalog {
	tb.Helper()
	c := open(tb, filepath.Join(tb.TempDir(), "catalog.db"), spec)
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Errorf("closing the test catalog: %v", err)
		}
	})
	return c
}

// Write creates the catalog file at path with spec applied and closes it,
// for a test that starts a server which opens that file itself (a catalog
// file takes one process's lock at a time).
func Write(tb testing.TB, path string, spec catalog.Spec) {
	tb.Helper()
	c := open(tb, path, spec)
	if err := c.Close(); err != nil {
		tb.Fatalf("closing catalog %s: %v", path, err)
	}
}

func open(tb testing.TB, path string, spec catalog.Spec) *catalog.Catalog {
	tb.Helper()
	ctx := context.Background()
	c, err := catalog.Open(ctx, catalog.Options{Path: path, ExprRefs: trigger.ItemRefs})
	if err != nil {
		tb.Fatalf("opening catalog %s: %v", path, err)
	}
	if _, err := c.Apply(ctx, spec); err != nil {
		c.Close()
		tb.Fatalf("applying the test spec to %s: %v", path, err)
	}
	return c
}
