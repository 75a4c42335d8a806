package api

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// grant waits for a call of key in a goroutine and reports its release
// once it has a slot.
func grant(a *admission, ctx context.Context, key string, got chan<- func(), failed chan<- *Error) {
	go func() {
		rel, e := a.acquire(ctx, key)
		if e != nil {
			failed <- e
			return
		}
		got <- rel
	}()
}

// waitQueued waits until n calls are waiting (the goroutines above run
// in their own time).
func waitQueued(t *testing.T, a *admission, n int) {
	t.Helper()
	for i := 0; ; i++ {
		a.mu.Lock()
		w := a.nwait
		a.mu.Unlock()
		if w == n {
			return
		}
		if i > 5000 {
			t.Fatalf("%d calls waiting, want %d", w, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A user flooding the API holds every slot and queues more; another
// user's one call gets the next slot freed, ahead of the flood.
func TestAdmissionFair(t *testing.T) {
	a := newAdmission(2, 100, nil)
	ctx := context.Background()
	var held []func()
	for i := 0; i < 2; i++ {
		rel, e := a.acquire(ctx, "user:1")
		if e != nil {
			t.Fatal(e)
		}
		held = append(held, rel)
	}
	floodGot, bGot := make(chan func(), 10), make(chan func(), 1)
	failed := make(chan *Error, 11)
	for i := 0; i < 10; i++ {
		grant(a, ctx, "user:1", floodGot, failed)
	}
	waitQueued(t, a, 10)
	grant(a, ctx, "user:2", bGot, failed)
	waitQueued(t, a, 11)
	held[0]()
	select {
	case rel := <-bGot:
		rel()
	case <-floodGot:
		t.Fatal("the flooding user got the freed slot ahead of the other user")
	case <-time.After(10 * time.Second):
		t.Fatal("nobody got the freed slot")
	}
	// B's release hands its slot to the flood; then A's calls run one by
	// one as slots free, and at the end nothing is held.
	held[1]()
	for i := 0; i < 10; i++ {
		select {
		case rel := <-floodGot:
			rel()
		case e := <-failed:
			t.Fatal(e)
		case <-time.After(10 * time.Second):
			t.Fatalf("flood call %d never ran", i)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.used != 0 || a.nwait != 0 || len(a.callers) != 0 {
		t.Fatalf("after every release: used %d, waiting %d, callers %v", a.used, a.nwait, a.callers)
	}
}

// A caller whose queue is full is refused at once; one that waits until
// its deadline is refused then; neither leaks a slot.
func TestAdmissionBounds(t *testing.T) {
	reg := selfmon.NewRegistry()
	a := newAdmission(1, 2, reg)
	ctx := context.Background()
	rel, e := a.acquire(ctx, "user:1")
	if e != nil {
		t.Fatal(e)
	}
	got, failed := make(chan func(), 2), make(chan *Error, 3)
	grant(a, ctx, "user:1", got, failed)
	grant(a, ctx, "user:1", got, failed)
	waitQueued(t, a, 2)
	if _, e := a.acquire(ctx, "user:1"); e == nil || !strings.Contains(e.Data, "2 calls of this user are waiting already") {
		t.Fatalf("third waiting call: %v", e)
	}
	// Another user still queues.
	dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, e := a.acquire(dctx, "user:2"); e == nil || !strings.Contains(e.Data, "until the request's deadline") {
		t.Fatalf("call past its deadline: %v", e)
	}
	rel()
	for i := 0; i < 2; i++ {
		select {
		case r := <-got:
			r()
		case e := <-failed:
			t.Fatal(e)
		case <-time.After(10 * time.Second):
			t.Fatal("a waiting call never ran")
		}
	}
	a.mu.Lock()
	used, nwait, callers := a.used, a.nwait, len(a.callers)
	a.mu.Unlock()
	if used != 0 || nwait != 0 || callers != 0 {
		t.Fatalf("leak: used %d, waiting %d, callers %d", used, nwait, callers)
	}
	var b strings.Builder
	reg.WriteText(&b)
	for _, want := range []string{`peregrine_api_calls_refused_total{reason="busy"} 1`, `peregrine_api_calls_refused_total{reason="timeout"} 1`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// Many callers acquiring and releasing at once (run with -race): every
// call runs, never more than the slots at a time, nothing is left.
func TestAdmissionConcurrent(t *testing.T) {
	a := newAdmission(3, 1000, nil)
	var mu sync.Mutex
	running, peak := 0, 0
	var wg sync.WaitGroup
	for u := 0; u < 8; u++ {
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func(key string) {
				defer wg.Done()
				rel, e := a.acquire(context.Background(), key)
				if e != nil {
					t.Error(e)
					return
				}
				mu.Lock()
				running++
				peak = max(peak, running)
				mu.Unlock()
				time.Sleep(100 * time.Microsecond)
				mu.Lock()
				running--
				mu.Unlock()
				rel()
			}(string(rune('a' + u)))
		}
	}
	wg.Wait()
	if peak > 3 {
		t.Fatalf("%d calls ran at once with 3 slots", peak)
	}
	if a.used != 0 || a.nwait != 0 || len(a.callers) != 0 {
		t.Fatalf("leak: used %d, waiting %d, callers %v", a.used, a.nwait, a.callers)
	}
}

// Through the HTTP handler: with the only slot taken, a user's next call
// waits and then runs, and one beyond its queue gets the busy error in a
// JSON-RPC envelope; calls without a session queue by address.
func TestAdmissionHandler(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{})
	s := New(Options{Catalog: cat, History: memstore.New(), MaxConcurrentCalls: 1, MaxWaitingPerUser: 1,
		Auth: &fakeAuth{sessions: map[string]User{"tok": {ID: 1, Username: "Admin", Role: RoleSuperAdmin}}}})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	f := &fixture{srv: srv, cat: cat}
	rel, e := s.admit.acquire(context.Background(), "other")
	if e != nil {
		t.Fatal(e)
	}
	done := make(chan string, 1)
	go func() {
		done <- f.post(t, `{"jsonrpc":"2.0","method":"host.get","params":{"countOutput":true},"id":1,"auth":"tok"}`)
	}()
	waitQueued(t, s.admit, 1)
	if got := f.post(t, `{"jsonrpc":"2.0","method":"host.get","params":{"countOutput":true},"id":2,"auth":"tok"}`); !strings.Contains(got, `"code":-32500`) || !strings.Contains(got, "The server is busy") || !strings.Contains(got, `"id":2`) {
		t.Fatalf("call beyond the user's queue: %s", got)
	}
	// apiinfo.version is another caller (the address): it queues too.
	go func() {
		f.post(t, `{"jsonrpc":"2.0","method":"apiinfo.version","params":{},"id":3}`)
	}()
	waitQueued(t, s.admit, 2)
	rel()
	select {
	case got := <-done:
		if !strings.Contains(got, `"result":"0"`) {
			t.Fatalf("waiting call: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting call never ran")
	}
	waitQueued(t, s.admit, 0)
}
