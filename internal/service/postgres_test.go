package service

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

// pgBackends maps a test running on PostgreSQL (its name, a prefix of
// its subtests') to its cluster.
var pgBackends sync.Map // string → *hatest.Cluster

var (
	pgSchemas atomic.Int64
	pgPaths   sync.Map // a test's file path → its schema, so a reopen finds it
)

// pgPlace returns where the store a test opens at path lives: nil (the
// SQLite file) unless the test runs on PostgreSQL, where each path has
// a schema of its own.
func pgPlace(t testing.TB, path string) *sqlitedb.PG {
	var c *hatest.Cluster
	pgBackends.Range(func(k, v any) bool {
		if name := k.(string); t.Name() == name || strings.HasPrefix(t.Name(), name+"/") {
			c = v.(*hatest.Cluster)
		}
		return c == nil
	})
	if c == nil {
		return nil
	}
	schema, _ := pgPaths.LoadOrStore(path, fmt.Sprintf("svc%d", pgSchemas.Add(1)))
	return &sqlitedb.PG{Pool: c.Node.Pool(), Fence: c.Lease.FenceSQL, Schema: schema.(string)}
}

// TestPostgresBehaviour runs the engine's behavioural tests on
// PostgreSQL (a real PostgreSQL 15, every write fenced by an active HA
// node's lease).
func TestPostgresBehaviour(t *testing.T) {
	c := hatest.Start(t, "services-a")
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"TestReopen", TestReopen},
		{"TestEditRefused", TestEditRefused},
		{"TestQueueOverflow", TestQueueOverflow},
		{"TestStatusGolden", TestStatusGolden},
		{"TestAlarmSequence", TestAlarmSequence},
		{"TestSLIGolden", TestSLIGolden},
		{"Follower", testFollower},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pgBackends.Store(t.Name(), c)
			defer pgBackends.Delete(t.Name())
			tc.fn(t)
		})
	}
}
