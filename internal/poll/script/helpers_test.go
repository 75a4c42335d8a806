package script

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestMain fails the run if a test left a checker's goroutines behind.
// Worker processes are this test binary (jsvm's init makes them
// workers before TestMain runs).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := testutil.NoLeakedGoroutines("script.(*Checker)"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// fixture is a catalog with one host ("web", user macro {$M}, an agent
// interface) and its script items, keyed by key.
type fixture struct {
	cat *catalog.Catalog
}

// newFixture stores items (Type script, ValueType text unless set) on
// the host "web".
func newFixture(t testing.TB, items ...catalog.ItemSpec) *fixture {
	t.Helper()
	c, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for i := range items {
		if items[i].Type == "" {
			items[i].Type = "script"
		}
		if items[i].ValueType == "" {
			items[i].ValueType = "text"
		}
	}
	_, err = c.Apply(context.Background(), catalog.Spec{Hosts: []catalog.HostSpec{{
		Host: "web", Name: "Web server", Groups: []string{"G"},
		Macros:     []catalog.MacroSpec{{Macro: "{$M}", Value: "macroval"}},
		Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: "127.0.0.9", DNS: "web.example", Port: "10059"}},
		Items:      items,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{cat: c}
}

func (f *fixture) item(id uint64) *catalog.Item { return f.cat.Snapshot().Item(id) }

// check is the check of the item with key, with timeout.
func (f *fixture) check(t testing.TB, key string, timeout time.Duration) poll.Check {
	t.Helper()
	it := f.cat.Snapshot().Lookup("web", key)
	if it == nil {
		t.Fatalf("no item %q", key)
	}
	return poll.Check{ItemID: it.ID, HostID: it.HostID, Key: key, Timeout: timeout, Due: time.Now()}
}

// newPool returns a pool of this test binary's workers, closed with t.
func newPool(t testing.TB, workers int) *jsvm.Pool {
	t.Helper()
	p, err := jsvm.NewPool(jsvm.PoolOptions{Workers: workers, MemLimit: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// results collects the reports of checks by item.
type results struct {
	mu  sync.Mutex
	got map[uint64]*poll.Result
	n   chan struct{}
}

// run hands batch to c and waits (up to d) for every report.
func run(t *testing.T, c poll.Checker, batch []poll.Check, d time.Duration) *results {
	t.Helper()
	r := &results{got: map[uint64]*poll.Result{}, n: make(chan struct{}, len(batch))}
	c.Check(context.Background(), batch, func(res *poll.Result) {
		r.mu.Lock()
		r.got[res.ItemID] = res
		r.mu.Unlock()
		r.n <- struct{}{}
	})
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
