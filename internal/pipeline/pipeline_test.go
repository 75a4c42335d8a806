package pipeline

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

func start(t testing.TB, opts Options) *Pipeline {
	t.Helper()
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(context.Background()); close(done) }()
	t.Cleanup(func() { p.Stop(); <-done })
	return p
}

func floats(item uint64, n int, clock0 int64) []history.Sample {
	v := make([]history.Sample, n)
	for i := range v {
		v[i] = history.Sample{ItemID: item + uint64(i%7), Clock: clock0 + int64(i), Type: history.Float, F: float64(i)}
	}
	return v
}

func TestSubmitReachesStoreAndState(t *testing.T) {
	for _, shards := range []int{1, 2, 5} {
		store := memstore.New()
		p := start(t, Options{Shards: shards, QueueValues: 1024, MaxBatch: 100, Store: store})
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				tk := NewTicket()
				for r := 0; r < 20; r++ {
					if err := p.Submit(floats(1, 70, int64(g*100000+r*100)), tk); err != nil {
						t.Error(err)
						return
					}
				}
			}(g)
		}
		wg.Wait()
		total := 0
		for item := uint64(1); item <= 7; item++ {
			total += len(historytest.ReadAll(t, store, history.Query{ItemID: item, From: 0, Till: 1 << 40}))
		}
		if total != 8*20*70 {
			t.Fatalf("shards=%d: store holds %d values, submitted %d", shards, total, 8*20*70)
		}
		last, prev, ok := p.Last(1)
		if !ok || last.Clock != 7*100000+19*100+63 || prev.Clock != 7*100000+19*100+56 {
			t.Fatalf("shards=%d: Last(1) = %+v, %+v, %v", shards, last, prev, ok)
		}
		if _, _, ok := p.Last(99); ok {
			t.Fatal("Last of an unknown item reported ok")
		}
	}
}

// gateStore blocks every Write until released and can be told to fail.
type gateStore struct {
	*memstore.Store
	gate    chan struct{}
	fail    atomic.Bool
	writes  atomic.Int64
	entered atomic.Int64 // Writes begun, blocked or not
	once    sync.Once
}

// release opens the gate; it may be called more than once.
func (g *gateStore) release() { g.once.Do(func() { close(g.gate) }) }

func (g *gateStore) Write(ctx context.Context, v []history.Sample) error {
	g.entered.Add(1)
	<-g.gate
	g.writes.Add(1)
	if g.fail.Load() {
		return errors.New("disk on fire")
	}
	return g.Store.Write(ctx, v)
}

func TestBackPressureBoundsQueue(t *testing.T) {
	g := &gateStore{Store: memstore.New(), gate: make(chan struct{})}
	const queue = 1024
	p := start(t, Options{Shards: 1, QueueValues: queue, MaxBatch: 512, Store: g})
	var submitted atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := p.Submit(floats(1, 256, int64(i*1000)), nil); err != nil {
				t.Error(err)
			}
			submitted.Add(256)
		}(i)
	}
	// With the store stalled, the shard holds at most two batches in
	// flight (jobsInFlight) plus a full queue; everyone else waits.
	deadline := time.Now().Add(5 * time.Second)
	for p.shards[0].depth.Load() < queue && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if d := p.shards[0].depth.Load(); d > queue {
		t.Fatalf("queue depth %d exceeds the bound %d", d, queue)
	}
	if n := submitted.Load(); n != 0 {
		t.Fatalf("%d values acknowledged while the store accepted nothing", n)
	}
	close(g.gate)
	wg.Wait()
	if n := submitted.Load(); n != 16*256 {
		t.Fatalf("acknowledged %d, want %d", n, 16*256)
	}
}

func TestStoreErrorIsNotAcknowledged(t *testing.T) {
	g := &gateStore{Store: memstore.New(), gate: make(chan struct{})}
	close(g.gate)
	g.fail.Store(true)
	p := start(t, Options{Shards: 2, QueueValues: 1024, MaxBatch: 64, Store: g})
	err := p.Submit(floats(1, 300, 0), nil)
	if err == nil || err.Error() != "disk on fire" {
		t.Fatalf("Submit = %v, want the store's error", err)
	}
	if _, _, ok := p.Last(1); ok {
		t.Fatal("state updated for values the store refused")
	}
	g.fail.Store(false)
	if err := p.Submit(floats(1, 300, 1000), nil); err != nil {
		t.Fatalf("pipeline did not recover after the store did: %v", err)
	}
}

func TestStopDrainsAndRefuses(t *testing.T) {
	store := memstore.New()
	p, err := New(Options{Shards: 2, QueueValues: 1024, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(context.Background()); close(done) }()
	if err := p.Submit(floats(1, 100, 0), nil); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	<-done
	if err := p.Submit(floats(1, 1, 500), nil); !errors.Is(err, ErrStopped) {
		t.Fatalf("Submit after Stop = %v, want ErrStopped", err)
	}
}

func TestOversizedBatchAdmitted(t *testing.T) {
	store := memstore.New()
	p := start(t, Options{Shards: 1, QueueValues: 1024, MaxBatch: 1000, Store: store})
	if err := p.Submit(floats(1, 5000, 0), nil); err != nil {
		t.Fatal(err)
	}
	if n := store.Len(1); n != 715 { // 5000 values over 7 items: item 1 gets i%7==0
		t.Fatalf("item 1 has %d values, want 715", n)
	}
}

type discard struct{}

func (discard) Write(context.Context, []history.Sample) error { return nil }

// go test -run '^$' -bench Submit -count 6 ./internal/pipeline/
func BenchmarkSubmit(b *testing.B) {
	for _, bs := range []int{250, 4096} {
		b.Run("batch="+strconv.Itoa(bs), func(b *testing.B) {
			p := start(b, Options{Store: discard{}})
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				v := floats(1, bs, 0)
				for i := range v {
					v[i].ItemID = uint64(i)
				}
				tk := NewTicket()
				for pb.Next() {
					if err := p.Submit(v, tk); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(bs)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
	}
}
