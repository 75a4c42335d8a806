package catalog

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

// pgBackends maps a test running on PostgreSQL (its name, a prefix of
// its subtests') to the catalogs openTemp opens there.
var pgBackends sync.Map // string → *pgBackend

type pgBackend struct {
	c *hatest.Cluster
}

// pgSchemas numbers the test catalogs' schemas.
var pgSchemas atomic.Int64

// pgFor returns the PostgreSQL backend t runs on, nil for SQLite.
func pgFor(t testing.TB) *pgBackend {
	var b *pgBackend
	pgBackends.Range(func(k, v any) bool {
		if name := k.(string); t.Name() == name || strings.HasPrefix(t.Name(), name+"/") {
			b = v.(*pgBackend)
		}
		return b == nil
	})
	return b
}

// options returns the options of a new catalog in a schema of its own.
func (b *pgBackend) options() Options {
	return Options{Postgres: b.pg(fmt.Sprintf("cat%d", pgSchemas.Add(1)))}
}

func (b *pgBackend) pg(schema string) *sqlitedb.PG {
	return &sqlitedb.PG{Pool: b.c.Node.Pool(), Fence: b.c.Lease.FenceSQL, Schema: schema}
}

// pgPaths maps the paths openTemp returns for catalogs in PostgreSQL
// ("pg:" and the schema) to their options, for openPath.
var pgPaths sync.Map // string → Options

// open opens a new catalog in PostgreSQL, closed when the test ends,
// and returns it with the path openPath reopens it by.
func (b *pgBackend) open(t testing.TB) (*Catalog, string) {
	t.Helper()
	o := b.options()
	path := "pg:" + o.Postgres.Schema
	pgPaths.Store(path, o)
	c, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, path
}

// openPath opens the catalog at path: a file, or one openTemp made in
// PostgreSQL.
func openPath(path string) (*Catalog, error) {
	if o, ok := pgPaths.Load(path); ok {
		return Open(context.Background(), o.(Options))
	}
	return Open(context.Background(), Options{Path: path})
}

// onPostgres runs test with openTemp's catalogs in PostgreSQL (a real
// PostgreSQL 15, every write fenced by an active HA node's lease).
func onPostgres(t *testing.T, c *hatest.Cluster, test func(*testing.T)) {
	b := &pgBackend{c: c}
	pgBackends.Store(t.Name(), b)
	defer pgBackends.Delete(t.Name())
	test(t)
}

// pgBehaviour are the catalog's behavioural tests that run on
// PostgreSQL too: those that open their catalogs with openTemp and
// never reopen them by path.
var pgBehaviour = []struct {
	name string
	fn   func(*testing.T)
}{
	{"TestOpenApplyReopen", TestOpenApplyReopen},
	{"TestApplyIdempotentAndImmutable", TestApplyIdempotentAndImmutable},
	{"TestApplyHostChangesNoDeletes", TestApplyHostChangesNoDeletes},
	{"TestSubscribeCoalesces", TestSubscribeCoalesces},
	{"TestApplyInvalidWritesNothing", TestApplyInvalidWritesNothing},
	{"TestApplyCancelled", TestApplyCancelled},
	{"TestLookupDoesNotAllocate", TestLookupDoesNotAllocate},
	{"TestHostItemsShared", TestHostItemsShared},
	{"TestEnsureDefaultsExisting", TestEnsureDefaultsExisting},
	{"TestEditRoundTrip", TestEditRoundTrip},
	{"TestEditHostTags", TestEditHostTags},
	{"TestEditErrors", TestEditErrors},
	{"TestEditRollback", TestEditRollback},
	{"TestEditDeleteAllItemsOfHost", TestEditDeleteAllItemsOfHost},
	{"TestEditBatchIsOneSnapshot", TestEditBatchIsOneSnapshot},
	{"TestEditUnusableAfterDatabaseError", TestEditUnusableAfterDatabaseError},
	{"TestExportHostInventory", TestExportHostInventory},
	{"TestHTTPItemStored", TestHTTPItemStored},
	{"TestApplyInterfaces", TestApplyInterfaces},
	{"TestApplyInterfacesKeepIDs", TestApplyInterfacesKeepIDs},
	{"TestEditInterfaceRules", TestEditInterfaceRules},
	{"TestEditIPMI", TestEditIPMI},
	{"TestItemParamsStored", TestItemParamsStored},
	{"TestItemTags", TestItemTags},
	{"TestApplyItemTags", TestApplyItemTags},
	{"TestJMXItemStored", TestJMXItemStored},
	{"TestJMXItemNeedsInterface", TestJMXItemNeedsInterface},
	{"TestLoginItems", TestLoginItems},
	{"TestLoginItemsRefused", TestLoginItemsRefused},
	{"TestItemLogTimeFmt", TestItemLogTimeFmt},
	{"TestMacrosImportAndResolve", TestMacrosImportAndResolve},
	{"TestMacrosEdit", TestMacrosEdit},
	{"TestTemplateLinkCycle", TestTemplateLinkCycle},
	{"TestDelayMacros", TestDelayMacros},
	{"TestMaintenancesEdit", TestMaintenancesEdit},
	{"TestUserMacrosOfHosts", TestUserMacrosOfHosts},
	{"TestHostUserMacrosFollowEdits", TestHostUserMacrosFollowEdits},
	{"TestODBCItemStored", TestODBCItemStored},
	{"TestItemTimestampPrecision", TestItemTimestampPrecision},
	{"TestEditTimestampPrecision", TestEditTimestampPrecision},
	{"TestImportPreprocessingAndDependents", TestImportPreprocessingAndDependents},
	{"TestImportDependentErrors", TestImportDependentErrors},
	{"TestEditDependents", TestEditDependents},
	{"TestEditHostPSK", TestEditHostPSK},
	{"TestApplyHostPSK", TestApplyHostPSK},
	{"TestSNMPOID", TestSNMPOID},
	{"TestSNMPDetails", TestSNMPDetails},
	{"TestSNMPTrapType", TestSNMPTrapType},
	{"TestEditHostTLS", TestEditHostTLS},
	{"TestApplyHostTLS", TestApplyHostTLS},
	{"TestEditValueMaps", TestEditValueMaps},
	{"TestApplyValueMaps", TestApplyValueMaps},
	{"TestMarks", TestMarks},
}

// TestPostgresBehaviour runs pgBehaviour on PostgreSQL.
func TestPostgresBehaviour(t *testing.T) {
	if raceEnabled {
		// The same tests run on SQLite under -race; on PostgreSQL they
		// check the dialect layer's SQL, which the race detector only
		// slows (280 s against about 60): .ci/run runs them plainly.
		t.Skip("run without -race (see .ci/run)")
	}
	c := hatest.Start(t, "catalog-a")
	for _, tc := range pgBehaviour {
		t.Run(tc.name, func(t *testing.T) { onPostgres(t, c, tc.fn) })
	}
}

// TestPostgresFencedEditCommitsNothing: once the cluster's epoch moved
// on (a takeover this node has not noticed), an Edit and an Apply of
// the catalog in PostgreSQL are refused with the lease's error, commit
// no row and leave the snapshot as it was.
func TestPostgresFencedEditCommitsNothing(t *testing.T) {
	cl := hatest.Start(t, "catalog-fence")
	b := &pgBackend{c: cl}
	c, path := b.open(t)
	mustApply(t, c, testSpec())
	before := c.Snapshot()
	cl.Fence(t)
	_, err := c.Edit(context.Background(), func(e *Edit) error {
		_, err := e.CreateHosts([]NewHost{{Host: "fenced", GroupIDs: []uint64{before.Groups()[0].ID}}})
		return err
	})
	if !ha.IsFenced(err) {
		t.Fatalf("Edit of a fenced-out node: %v, want the lease's error", err)
	}
	spec := testSpec()
	spec.Hosts[0].Name = "renamed"
	spec.Hosts[0].Items = spec.Hosts[0].Items[1:]
	if _, err := c.Apply(context.Background(), spec); !ha.IsFenced(err) {
		t.Fatalf("Apply of a fenced-out node: %v, want the lease's error", err)
	}
	if c.Snapshot() != before {
		t.Fatal("a refused write swapped the snapshot")
	}
	// Nothing of either write in PostgreSQL (reopening needs the lease:
	// read the tables).
	o, _ := pgPaths.Load(path)
	schema := o.(Options).Postgres.Schema
	var rev uint64
	var fenced, renamed int
	err = cl.Node.Pool().QueryRow(context.Background(), `SELECT (SELECT revision FROM `+schema+`.catalog_meta),
		(SELECT count(*) FROM `+schema+`.hosts WHERE host = 'fenced'), (SELECT count(*) FROM `+schema+`.hosts WHERE name = 'renamed')`).Scan(&rev, &fenced, &renamed)
	if err != nil {
		t.Fatal(err)
	}
	if rev != before.Version() || fenced != 0 || renamed != 0 {
		t.Fatalf("after the refused writes: revision %d, %d fenced, %d renamed; want %d, 0, 0", rev, fenced, renamed, before.Version())
	}
}

// TestPostgresStandbyReadsSameSnapshot: a catalog opened in PostgreSQL
// after another node wrote to it (a standby that became active and
// reloads) reads the same snapshot: revision, hosts, items with their
// IDs and fields, triggers; and IDs go on from where the writer left
// them, never reused (SQLite's AUTOINCREMENT, kept by sqlite_sequence).
func TestPostgresStandbyReadsSameSnapshot(t *testing.T) {
	cl := hatest.Start(t, "catalog-reload")
	b := &pgBackend{c: cl}
	a, path := b.open(t)
	mustApply(t, a, genSpec(3, 20))
	spec := testSpec()
	mustApply(t, a, spec)
	want := a.Snapshot()
	var last uint64
	for _, h := range want.Hosts() {
		last = max(last, h.ID)
	}
	// The writer goes on while the reader opens: it must not matter.
	bcat, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer bcat.Close()
	got := bcat.Snapshot()
	if got.Version() != want.Version() || got.HostCount() != want.HostCount() || got.ItemCount() != want.ItemCount() || len(got.triggers) != len(want.triggers) {
		t.Fatalf("reloaded: revision %d, %d hosts, %d items, %d triggers; want %d, %d, %d, %d",
			got.Version(), got.HostCount(), got.ItemCount(), len(got.triggers), want.Version(), want.HostCount(), want.ItemCount(), len(want.triggers))
	}
	for _, h := range want.Hosts() {
		for _, it := range h.Items() {
			g := got.Lookup(h.Host, it.Key)
			if g == nil || g.ID != it.ID || g.Name != it.Name || g.Units != it.Units || g.Delay != it.Delay || g.Type != it.Type || g.ValueType != it.ValueType || len(g.Preprocessing) != len(it.Preprocessing) {
				t.Fatalf("item %s:%s reloaded as %+v, want %+v", h.Host, it.Key, g, it)
			}
		}
	}
	a.Close()
	// Delete the newest host, then create one: its ID is new.
	_, err = bcat.Edit(context.Background(), func(e *Edit) error {
		if err := e.DeleteHosts([]uint64{last}); err != nil {
			return err
		}
		ids, err := e.CreateHosts([]NewHost{{Host: "after", GroupIDs: []uint64{got.Groups()[0].ID}}})
		if err == nil && ids[0] <= last {
			return fmt.Errorf("new host ID %d, not above %d: an ID was reused", ids[0], last)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPostgresRefusesNewerSchema: a catalog in PostgreSQL of a newer
// Peregrine's schema is refused, and nothing is written.
func TestPostgresRefusesNewerSchema(t *testing.T) {
	cl := hatest.Start(t, "catalog-newer")
	b := &pgBackend{c: cl}
	c, path := b.open(t)
	c.Close()
	o, _ := pgPaths.Load(path)
	schema := o.(Options).Postgres.Schema
	ctx := context.Background()
	if _, err := cl.Node.Pool().Exec(ctx, `UPDATE peregrine_state.schema_version SET version = $1 WHERE component = $2`, schemaVersion+1, schema); err != nil {
		t.Fatal(err)
	}
	_, err := openPath(path)
	if err == nil || !strings.Contains(err.Error(), "newer than this Peregrine's") {
		t.Fatalf("open of a newer schema: %v", err)
	}
	var v int
	if err := cl.Node.Pool().QueryRow(ctx, `SELECT version FROM peregrine_state.schema_version WHERE component = $1`, schema).Scan(&v); err != nil || v != schemaVersion+1 {
		t.Fatalf("version after the refusal: %d, %v", v, err)
	}
}
