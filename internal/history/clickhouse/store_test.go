package clickhouse

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// dbSeq names each test's database, so that one server serves many
// stores without their data meeting.
var dbSeq atomic.Int64

func openStore(t *testing.T, ch *testutil.ClickHouse, mod func(*Options)) *Store {
	t.Helper()
	o := Options{
		URLs:          []string{ch.URL},
		Database:      fmt.Sprintf("t%d_%d", time.Now().UnixNano()%1e6, dbSeq.Add(1)),
		Dir:           t.TempDir(),
		FlushInterval: 50 * time.Millisecond,
		RetryInterval: 100 * time.Millisecond,
		QueryTimeout:  10 * time.Second,
	}
	if mod != nil {
		mod(&o)
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	// Each test has its own servers; most of their time is waiting
	// (an outage, the server starting), so they overlap.
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	historytest.Run(t, func(t *testing.T) history.Store { return openStore(t, ch, nil) })
}
