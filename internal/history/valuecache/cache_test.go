package valuecache

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

// countingStore counts the reads that reach the store.
type countingStore struct {
	history.Store
	reads atomic.Int64
}

func (s *countingStore) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	s.reads.Add(1)
	return s.Store.Read(ctx, q, fn)
}

func newCache(t testing.TB, opts Options) (*Cache, *countingStore) {
	t.Helper()
	st := &countingStore{Store: memstore.New()}
	opts.Store = st
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

// commit writes samples to the store, then hands them to the cache,
// as the pipeline does.
func commit(t testing.TB, c *Cache, st history.Writer, samples ...history.Sample) {
	t.Helper()
	if err := st.Write(context.Background(), samples); err != nil {
		t.Fatal(err)
	}
	c.Add(0, samples)
}

func read(t testing.TB, r history.Reader, q history.Query) []history.Sample {
	t.Helper()
	var out []history.Sample
	if err := r.Read(context.Background(), q, func(s *history.Sample) bool { out = append(out, *s); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

func fv(item uint64, clock int64, ns int32, v float64) history.Sample {
	return history.Sample{ItemID: item, Clock: clock, NS: ns, Type: history.Float, F: v}
}

// TestMatchesStore checks every cached answer against the store's own
// for random reads of the two shapes functions use (count, and window)
// while values keep arriving, some out of order and some repeating a
// timestamp; and that after the first read of an item its reads hit.
func TestMatchesStore(t *testing.T) {
	c, st := newCache(t, Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	const items = 20
	clock := int64(1_700_000_000)
	for step := range 3000 {
		item := uint64(rng.IntN(items) + 1)
		switch r := rng.IntN(10); {
		case r < 6:
			s := fv(item, clock, int32(rng.IntN(1000)), float64(step))
			if rng.IntN(10) == 0 {
				s.Clock -= int64(rng.IntN(30)) // late value
			}
			commit(t, c, st, s)
			if rng.IntN(3) == 0 {
				clock++
			}
		case r < 8:
			q := history.Query{ItemID: item, Till: clock, Desc: true, Limit: rng.IntN(5) + 1}
			want := read(t, st.Store, q)
			if got := read(t, c, q); !slices.Equal(got, want) {
				t.Fatalf("step %d: count read %+v:\n got %v\nwant %v", step, q, got, want)
			}
			if got, err := c.AppendRead(context.Background(), q, nil); err != nil || !slices.Equal(got, want) {
				t.Fatalf("step %d: AppendRead %+v:\n got %v (%v)\nwant %v", step, q, got, err, want)
			}
		default:
			q := history.Query{ItemID: item, From: clock - int64(rng.IntN(60)), Till: clock, Desc: true}
			want := read(t, st.Store, q)
			if got := read(t, c, q); !slices.Equal(got, want) {
				t.Fatalf("step %d: window read %+v:\n got %v\nwant %v", step, q, got, want)
			}
			if got, err := c.AppendRead(context.Background(), q, nil); err != nil || !slices.Equal(got, want) {
				t.Fatalf("step %d: AppendRead %+v:\n got %v (%v)\nwant %v", step, q, got, err, want)
			}
		}
	}
	s := c.Stats()
	if s.Hits < 10*s.Misses || s.Items == 0 || s.Items > items {
		t.Fatalf("stats %+v: want hits well above misses and at most %d items", s, items)
	}
}

// TestFallback checks the reads the cache does not keep: longer than
// MaxPeriod or MaxCount, ascending, and an item's history older than
// what is cached; each is answered by the store, exactly.
func TestFallback(t *testing.T) {
	c, st := newCache(t, Options{MaxPeriod: 10 * time.Minute, MaxCount: 5})
	for i := range int64(3600) {
		commit(t, c, st, fv(1, 1000+i, 0, float64(i)))
	}
	check := func(q history.Query, wantStore bool) {
		t.Helper()
		before := st.reads.Load()
		got := read(t, c, q)
		if want := read(t, st.Store, q); !slices.Equal(got, want) {
			t.Fatalf("%+v: %d values, want %d", q, len(got), len(want))
		}
		if went := st.reads.Load() > before; went != wantStore {
			t.Fatalf("%+v: store read %v, want %v", q, went, wantStore)
		}
	}
	check(history.Query{ItemID: 1, From: 4000, Till: 4599, Desc: true}, true)  // first: a miss loads the item
	check(history.Query{ItemID: 1, From: 4400, Till: 4599, Desc: true}, false) // inside: a hit
	check(history.Query{ItemID: 1, Till: 4599, Desc: true, Limit: 3}, false)   // count inside: a hit
	check(history.Query{ItemID: 1, From: 1000, Till: 4599, Desc: true}, true)  // 1 h > MaxPeriod: bypass
	check(history.Query{ItemID: 1, Till: 4599, Desc: true, Limit: 6}, true)    // > MaxCount: bypass
	check(history.Query{ItemID: 1, From: 4400, Till: 4599}, true)              // ascending: bypass
	check(history.Query{ItemID: 1, From: 2000, Till: 2500, Desc: true}, true)  // older than cached: a miss
	if s := c.Stats(); s.Bypass != 3 || s.Misses != 2 || s.Hits != 2 {
		t.Fatalf("stats %+v, want 2 hits, 2 misses, 3 bypasses", s)
	}
	// An item with no values at all: cached as empty, then filled.
	check(history.Query{ItemID: 2, Till: 5000, Desc: true, Limit: 2}, true)
	check(history.Query{ItemID: 2, Till: 5000, Desc: true, Limit: 2}, false)
	commit(t, c, st, fv(2, 4999, 0, 7))
	check(history.Query{ItemID: 2, Till: 5000, Desc: true, Limit: 2}, false)
}

// TestTrimKeepsWindow checks that an item keeps what its reads need and
// no more: after 10,000 values a 5-minute window item holds about 5
// minutes of them and still answers its reads without the store.
func TestTrimKeepsWindow(t *testing.T) {
	c, st := newCache(t, Options{})
	commit(t, c, st, fv(1, 1000, 0, 0))
	read(t, c, history.Query{ItemID: 1, From: 1000 - 300, Till: 1000, Desc: true})
	for i := range int64(10_000) {
		commit(t, c, st, fv(1, 1001+i, 0, float64(i)))
	}
	sh := c.shard(1)
	sh.mu.Lock()
	n := len(sh.items[1].vals)
	sh.mu.Unlock()
	if n < 301 || n > 600 {
		t.Fatalf("%d values kept for a 300 s window at 1 value/s", n)
	}
	before := st.reads.Load()
	q := history.Query{ItemID: 1, From: 11000 - 300, Till: 11000, Desc: true}
	if got, want := read(t, c, q), read(t, st.Store, q); !slices.Equal(got, want) || len(got) != 301 {
		t.Fatalf("window after trimming: %d values, want %d", len(got), len(want))
	}
	if st.reads.Load() != before {
		t.Fatal("the window read went to the store after trimming")
	}
	if want := entryBytes + int64(n)*sampleBytes; c.Stats().Bytes != want {
		t.Fatalf("bytes %d, want %d", c.Stats().Bytes, want)
	}
}

// TestEviction checks the memory bound: reading more items than fit
// evicts the least recently read ones, keeps the cache under MaxBytes,
// and evicted items are loaded again (correctly) when read.
func TestEviction(t *testing.T) {
	per := entryBytes + 10*sampleBytes
	now := time.Unix(1_700_000_000, 0)
	c, st := newCache(t, Options{MaxBytes: 50 * per, Now: func() time.Time { return now }})
	for item := uint64(1); item <= 100; item++ {
		for i := range int64(10) {
			commit(t, c, st, fv(item, 1000+i, 0, float64(item)))
		}
	}
	q := func(item uint64) history.Query {
		return history.Query{ItemID: item, From: 1000, Till: 1009, Desc: true}
	}
	for item := uint64(1); item <= 100; item++ {
		now = now.Add(time.Second) // item 1 is the least recently read
		read(t, c, q(item))
		if b := c.Stats().Bytes; b > 50*per {
			t.Fatalf("after item %d: %d bytes cached, bound %d", item, b, 50*per)
		}
	}
	s := c.Stats()
	if s.Evictions < 50 || s.Items > 50 || s.Items < 40 {
		t.Fatalf("stats %+v: want ≥ 50 evictions and 40–50 items", s)
	}
	// The newest read is cached, the oldest is not.
	before := st.reads.Load()
	read(t, c, q(100))
	if st.reads.Load() != before {
		t.Fatal("the most recently read item was evicted")
	}
	if got, want := read(t, c, q(1)), read(t, st.Store, q(1)); !slices.Equal(got, want) || len(got) != 10 {
		t.Fatalf("evicted item read again: %v, want %v", got, want)
	}
	if st.reads.Load() != before+1 {
		t.Fatal("the least recently read item was not evicted")
	}
	// Idle items are dropped after IdleDrop.
	now = now.Add(DefaultIdleDrop + time.Hour)
	cached := c.Stats().Items
	if n := c.DropIdle(); int64(n) != cached || c.Stats().Items != 0 || c.Stats().Bytes != 0 {
		t.Fatalf("DropIdle removed %d, left %+v", n, c.Stats())
	}
}

// slowStore holds reads until released, so that values can be committed
// while an item loads.
type slowStore struct {
	history.Store
	started, release chan struct{}
	once             sync.Once
}

func (s *slowStore) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	s.once.Do(func() { close(s.started); <-s.release })
	return s.Store.Read(ctx, q, fn)
}

// TestValuesDuringLoad checks that values committed while an item is
// being loaded are in the cache afterwards, whether the load saw them
// or not.
func TestValuesDuringLoad(t *testing.T) {
	st := &slowStore{Store: memstore.New(), started: make(chan struct{}), release: make(chan struct{})}
	c, err := New(Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	commit(t, c, st, fv(1, 1000, 0, 1))
	done := make(chan []history.Sample)
	go func() {
		var out []history.Sample
		c.Read(context.Background(), history.Query{ItemID: 1, Till: 1000, Desc: true, Limit: 1}, func(s *history.Sample) bool { out = append(out, *s); return true })
		done <- out
	}()
	<-st.started
	// Before the store read: seen by the load and by Add.
	commit(t, c, st, fv(1, 1001, 0, 2))
	close(st.release)
	if got := <-done; len(got) != 1 || got[0].F != 1 {
		t.Fatalf("read during load: %v", got)
	}
	// After the load, not yet read by it: Add alone.
	commit(t, c, st, fv(1, 1002, 0, 3))
	q := history.Query{ItemID: 1, From: 1000, Till: 1002, Desc: true}
	got, want := read(t, c, q), read(t, st.Store, q)
	if !slices.Equal(got, want) || len(got) != 3 {
		t.Fatalf("after the load: %v, want %v", got, want)
	}
}

// TestConcurrent runs Add and Read of many items from several goroutines
// (for -race) and checks the figures add up.
func TestConcurrent(t *testing.T) {
	c, st := newCache(t, Options{MaxBytes: 200 * (entryBytes + 20*sampleBytes)})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range int64(500) {
				s := fv(uint64(g*100+int(i%100)+1), 1000+i, 0, float64(i))
				if err := st.Write(context.Background(), []history.Sample{s}); err != nil {
					panic(err)
				}
				c.Add(g, []history.Sample{s})
			}
		}()
		go func() {
			defer wg.Done()
			for i := range int64(500) {
				item := uint64(g*100 + int(i%100) + 1)
				c.Read(context.Background(), history.Query{ItemID: item, Till: 2000, Desc: true, Limit: 2}, func(*history.Sample) bool { return true })
			}
		}()
	}
	wg.Wait()
	var bytes, items int64
	for i := range c.shards {
		for _, e := range c.shards[i].items {
			bytes += e.bytes
			items++
		}
	}
	if s := c.Stats(); s.Bytes != bytes || s.Items != items {
		t.Fatalf("stats %+v, entries hold %d bytes in %d items", s, bytes, items)
	}
}

// A count-read item keeps a few values beyond its count, so that a read
// at the time of an older value (an evaluation that ran after newer
// values arrived) still hits.
func TestTrimKeepsSpare(t *testing.T) {
	c, st := newCache(t, Options{})
	commit(t, c, st, fv(1, 1000, 0, 0))
	read(t, c, history.Query{ItemID: 1, Till: 1000, Desc: true, Limit: 1})
	for i := range int64(100) {
		commit(t, c, st, fv(1, 1001+i, 0, float64(i)))
	}
	before := st.reads.Load()
	for lag := int64(0); lag <= trimSpare; lag++ {
		q := history.Query{ItemID: 1, Till: 1100 - lag, Desc: true, Limit: 1}
		if got, want := read(t, c, q), read(t, st.Store, q); !slices.Equal(got, want) {
			t.Fatalf("lag %d: %v, want %v", lag, got, want)
		}
	}
	if st.reads.Load() != before {
		t.Fatalf("reads %d values behind the newest went to the store", trimSpare)
	}
	sh := c.shard(1)
	sh.mu.Lock()
	n := len(sh.items[1].vals)
	sh.mu.Unlock()
	if n > 8 {
		t.Fatalf("%d values kept for last()", n)
	}
}

// Reads as of times behind the newest value, each later than the last (an
// evaluation working through a backlog of values, one at a time), hit
// after the first: the miss loads every value newer than its end, and
// trimming keeps the values from the last read's end on while values
// keep arriving. Before issue 30 each of these reads missed and loaded.
// A read at the newest value lets trimming return to count+trimSpare.
func TestReadsBehindHit(t *testing.T) {
	c, st := newCache(t, Options{})
	for i := range int64(200) {
		commit(t, c, st, fv(1, 1000+i, 0, float64(i)))
	}
	before := st.reads.Load()
	for i := range int64(300) {
		if i >= 200 {
			commit(t, c, st, fv(1, 1000+i, 0, float64(i))) // arriving meanwhile
		}
		for _, q := range []history.Query{
			{ItemID: 1, Till: 1000 + i/2, Desc: true, Limit: 2},
			{ItemID: 1, From: 1000 + i/2 - 5, Till: 1000 + i/2, Desc: true},
		} {
			if got, want := read(t, c, q), read(t, st.Store, q); !slices.Equal(got, want) {
				t.Fatalf("%+v: %v, want %v", q, got, want)
			}
		}
	}
	// Only the first read's miss: its load reads with a growing limit
	// (8, 32, 128, 512 values: four reads), then nothing (st.Store, the
	// comparison's reads, is not counted).
	if n := st.reads.Load() - before; n > 4 {
		t.Fatalf("%d reads of the store behind the newest value, want at most 4", n)
	}
	read(t, c, history.Query{ItemID: 1, Till: 1299, Desc: true, Limit: 2})
	for i := range int64(20) {
		commit(t, c, st, fv(1, 1300+i, 0, float64(i)))
	}
	sh := c.shard(1)
	sh.mu.Lock()
	n := len(sh.items[1].vals)
	sh.mu.Unlock()
	if n > 40 {
		t.Fatalf("%d values kept after reads caught up", n)
	}
}

// TestSelectIntoMatchesScan: selectInto's shortcuts (no search when the
// read is as of the newest value or has no lower bound) select what a
// plain scan of the ascending values does, for random entries and
// queries with and without a period, a count and a till inside or past
// the values.
func TestSelectIntoMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		var vals []history.Sample
		clock := int64(1_700_000_000)
		for range r.IntN(40) {
			clock += int64(r.IntN(3))
			vals = append(vals, history.Sample{Clock: clock, NS: int32(r.IntN(1e9)), F: float64(len(vals))})
		}
		slices.SortFunc(vals, func(a, b history.Sample) int { return cmp.Compare(ts(&a), ts(&b)) })
		q := history.Query{Till: 1_700_000_000 + int64(r.IntN(90)) - 5}
		if r.IntN(2) == 0 {
			q.From = q.Till - int64(r.IntN(30))
		}
		if r.IntN(2) == 0 {
			q.Limit = 1 + r.IntN(10)
		}
		var want []history.Sample
		for i := len(vals) - 1; i >= 0; i-- {
			s := vals[i]
			if s.Clock > q.Till || (q.From > 0 && s.Clock < q.From) {
				continue
			}
			if q.Limit > 0 && len(want) == q.Limit {
				break
			}
			want = append(want, s)
		}
		if got := selectInto(nil, vals, q); !slices.Equal(got, want) {
			t.Fatalf("round %d: query %+v over %d values: got %d values, want %d", round, q, len(vals), len(got), len(want))
		}
	}
}
