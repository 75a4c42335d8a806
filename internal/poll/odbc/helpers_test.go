package odbc

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestMain fails the run if a test left a checker's goroutines behind
// (a check never reported, a Close forgotten).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := testutil.NoLeakedGoroutines("odbc.(*Checker)"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// items is a fixed set of database monitor items for Options.Item.
type items map[uint64]*catalog.Item

func (m items) get(id uint64) *catalog.Item { return m[id] }

// add adds an item with its query and login and returns its check.
func (m items) add(key, query, user, pass string, timeout time.Duration) poll.Check {
	id := uint64(len(m) + 1)
	m[id] = &catalog.Item{ID: id, HostID: 1, Key: key, Type: catalog.ODBC, Extra: &catalog.ItemExtra{Params: query, ODBC: &catalog.ODBCItem{Username: user, Password: pass}}}
	return poll.Check{ItemID: id, HostID: 1, Key: key, Timeout: timeout, Due: time.Now()}
}

// results collects the reports of checks by item.
type results struct {
	mu  sync.Mutex
	got map[uint64]*poll.Result
	n   chan struct{}
}

func newResults() *results {
	return &results{got: map[uint64]*poll.Result{}, n: make(chan struct{}, 1<<16)}
}

func (r *results) done(res *poll.Result) {
	r.mu.Lock()
	r.got[res.ItemID] = res
	r.mu.Unlock()
	r.n <- struct{}{}
}

// run hands batch to c and waits (up to d) for every report.
func run(t *testing.T, c poll.Checker, batch []poll.Check, d time.Duration) *results {
	t.Helper()
	r := newResults()
	c.Check(context.Background(), batch, r.done)
	timer := time.NewTimer(d)
	defer timer.Stop()
	for range batch {
		select {
		case <-r.n:
		case <-timer.C:
			t.Fatalf("%d of %d checks reported within %v", len(r.got), len(batch), d)
		}
	}
	return r
}

func (r *results) of(id uint64) *poll.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[id]
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
