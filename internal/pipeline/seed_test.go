package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

func TestOnCommitSeesEveryCommittedValueOncePerBatch(t *testing.T) {
	store := memstore.New()
	var (
		mu    sync.Mutex
		calls int
		seen  = map[uint64]int{}
		bad   []string
	)
	var p *Pipeline
	p = start(t, Options{Shards: 3, QueueValues: 1024, MaxBatch: 50, Store: store, OnCommit: func(shard int, samples []history.Sample) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if len(samples) == 0 || len(samples) > 50 {
			bad = append(bad, fmt.Sprintf("batch of %d values", len(samples)))
		}
		for i := range samples {
			v := &samples[i]
			seen[v.ItemID]++
			if got := p.shardOf(v.ItemID); got != shard {
				bad = append(bad, fmt.Sprintf("item %d reported by shard %d, owned by %d", v.ItemID, shard, got))
			}
			// The state is updated before the hook runs.
			if last, _, ok := p.Last(v.ItemID); !ok || last.Before(v) {
				bad = append(bad, fmt.Sprintf("item %d: Last %+v older than committed %+v", v.ItemID, last, *v))
			}
		}
	}})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			tk := NewTicket()
			for r := 0; r < 10; r++ {
				if err := p.Submit(floats(1, 70, int64(g*10000+r*100)), tk); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
	// Submit returned, so the hook has run for all of its values.
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("hook saw: %s", strings.Join(bad, "; "))
	}
	total := 0
	for item := uint64(1); item <= 7; item++ {
		if seen[item] != 4*10*10 {
			t.Errorf("item %d seen %d times, want %d", item, seen[item], 4*10*10)
		}
		total += seen[item]
	}
	if total != 4*10*70 {
		t.Errorf("hook saw %d values, want %d", total, 4*10*70)
	}
	if want := int(p.batches.Load()); calls != want {
		t.Errorf("hook called %d times for %d store batches", calls, want)
	}
}

func TestOnCommitNotCalledForFailedWrites(t *testing.T) {
	g := &gateStore{Store: memstore.New(), gate: make(chan struct{})}
	close(g.gate)
	g.fail.Store(true)
	var mu sync.Mutex
	calls := 0
	p := start(t, Options{Shards: 2, QueueValues: 1024, Store: g, OnCommit: func(int, []history.Sample) { mu.Lock(); calls++; mu.Unlock() }})
	if err := p.Submit(floats(1, 100, 0), nil); err == nil {
		t.Fatal("Submit succeeded on a failing store")
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 0 {
		t.Fatalf("hook called %d times for values the store refused", calls)
	}
}

func TestSeedRestoresNewestTwo(t *testing.T) {
	store := memstore.New()
	var vals []history.Sample
	// item 1..300: item%4 values (0 to 3), written out of order; item 7
	// also holds strings.
	for item := uint64(1); item <= 300; item++ {
		for k := int64(item % 4); k > 0; k-- {
			v := history.Sample{ItemID: item, Clock: 1000 + k, NS: int32(item), Type: history.Float, F: float64(k)}
			if item == 7 {
				v = history.Sample{ItemID: item, Clock: 1000 + k, Type: history.Str, S: fmt.Sprint("s", k)}
			}
			vals = append(vals, v)
		}
	}
	if err := store.Write(context.Background(), vals); err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Shards: 3, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	items := make([]uint64, 0, 301)
	for item := uint64(1); item <= 301; item++ {
		items = append(items, item)
	}
	n, err := p.Seed(context.Background(), store, items)
	if err != nil {
		t.Fatal(err)
	}
	if n != 225 { // items with item%4 != 0 among 1..300
		t.Fatalf("Seed reported %d items with values, want 225", n)
	}
	for _, item := range items {
		last, prev, ok := p.Last(item)
		cnt := int64(item % 4)
		if item == 301 {
			cnt = 0
		}
		switch {
		case cnt == 0:
			if ok {
				t.Errorf("item %d has no values but Last = %+v", item, last)
			}
		case !ok || last.Clock != 1000+cnt:
			t.Errorf("item %d: last %+v, %v; want clock %d", item, last, ok, 1000+cnt)
		case cnt == 1 && prev.ItemID != 0:
			t.Errorf("item %d has one value but prev = %+v", item, prev)
		case cnt >= 2 && prev.Clock != 1000+cnt-1:
			t.Errorf("item %d: prev %+v, want clock %d", item, prev, 1000+cnt-1)
		}
	}
	if last, prev, _ := p.Last(7); last.S != "s3" || prev.S != "s2" || last.Type != history.Str {
		t.Errorf("string item: last %+v prev %+v", last, prev)
	}
}

// Values committed before a late Seed win over stored ones by time.
func TestSeedMergesWithCommittedState(t *testing.T) {
	s := func(clock int64, f float64) history.Sample {
		return history.Sample{ItemID: 9, Clock: clock, Type: history.Float, F: f}
	}
	f := func(name string, committed []history.Sample, stored []history.Sample, wantLast, wantPrev history.Sample) {
		t.Helper()
		p, err := New(Options{Shards: 1, Store: discard{}})
		if err != nil {
			t.Fatal(err)
		}
		sh := p.shards[0]
		if len(committed) > 0 {
			sh.updateState(committed)
		}
		sh.seed(stored)
		last, prev, _ := p.Last(9)
		if last != wantLast || prev != wantPrev {
			t.Errorf("%s: last %+v prev %+v, want %+v and %+v", name, last, prev, wantLast, wantPrev)
		}
	}
	f("empty state", nil, []history.Sample{s(20, 2), s(10, 1)}, s(20, 2), s(10, 1))
	f("newer committed", []history.Sample{s(30, 3), s(40, 4)}, []history.Sample{s(20, 2), s(10, 1)}, s(40, 4), s(30, 3))
	f("one committed, stored fills prev", []history.Sample{s(30, 3)}, []history.Sample{s(20, 2), s(10, 1)}, s(30, 3), s(20, 2))
	f("equal time: committed wins", []history.Sample{s(20, 9)}, []history.Sample{s(20, 2), s(10, 1)}, s(20, 9), s(10, 1))
	f("stored newer than committed", []history.Sample{s(5, 0)}, []history.Sample{s(20, 2)}, s(20, 2), s(5, 0))
}

// failingReader fails reads of one item.
type failingReader struct {
	history.Reader
	bad uint64
}

func (f failingReader) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	if q.ItemID == f.bad {
		return errors.New("block unreadable")
	}
	return f.Reader.Read(ctx, q, fn)
}

func TestSeedReportsFailedItemsAndGoesOn(t *testing.T) {
	store := memstore.New()
	var vals []history.Sample
	for item := uint64(1); item <= 1000; item++ {
		vals = append(vals, history.Sample{ItemID: item, Clock: 50, Type: history.Uint, U: item})
	}
	if err := store.Write(context.Background(), vals); err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Shards: 2, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	items := make([]uint64, 1000)
	for i := range items {
		items[i] = uint64(i + 1)
	}
	n, err := p.Seed(context.Background(), failingReader{store, 613}, items)
	if err == nil || !strings.Contains(err.Error(), "item 613: block unreadable") || !strings.Contains(err.Error(), "of 1 items") {
		t.Fatalf("Seed error = %v, want one failed item 613", err)
	}
	if n != 999 {
		t.Fatalf("seeded %d items, want 999", n)
	}
	if _, _, ok := p.Last(613); ok {
		t.Error("the failed item has state")
	}
	if last, _, ok := p.Last(1000); !ok || last.U != 1000 {
		t.Errorf("item 1000: %+v %v", last, ok)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Seed(ctx, store, items); !errors.Is(err, context.Canceled) {
		t.Fatalf("Seed with a cancelled context = %v", err)
	}
}

// newestReader is a history.NewestReader over a store, answering each
// item with one newest-first Read, as a reference; it records the size
// of every call and fails the call whose chunk holds bad.
type newestReader struct {
	history.Reader
	bad   uint64
	mu    sync.Mutex
	calls []int
}

func (r *newestReader) ReadNewest(ctx context.Context, items []uint64, n int, fn func([]history.Sample) bool) error {
	r.mu.Lock()
	r.calls = append(r.calls, len(items))
	r.mu.Unlock()
	for _, id := range items {
		if id == r.bad {
			return errors.New("shard unreachable")
		}
		var got []history.Sample
		err := r.Read(ctx, history.Query{ItemID: id, From: 0, Till: 1 << 40, Desc: true, Limit: n}, func(v *history.Sample) bool {
			got = append(got, *v)
			return true
		})
		if err != nil {
			return err
		}
		if len(got) > 0 && !fn(got) {
			return nil
		}
	}
	return nil
}

// A NewestReader is asked per chunk of items, and the state is the one
// per-item reads give; a failed chunk is counted whole, its items read
// before the failure keep their state, and the other chunks are seeded.
func TestSeedBatchedByChunk(t *testing.T) {
	const items = 2*seedChunk + 100
	store := memstore.New()
	var vals []history.Sample
	ids := make([]uint64, 0, items)
	for item := uint64(1); item <= items; item++ {
		ids = append(ids, item)
		for k := int64(item % 3); k > 0; k-- { // 0, 1 or 2 values
			vals = append(vals, history.Sample{ItemID: item, Clock: 1000 + k, Type: history.Uint, U: item*10 + uint64(k)})
		}
	}
	if err := store.Write(context.Background(), vals); err != nil {
		t.Fatal(err)
	}
	ref, err := New(Options{Shards: 2, Store: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Seed(context.Background(), store, ids); err != nil {
		t.Fatal(err)
	}
	f := func(bad uint64, wantSeeded int, wantErr string) {
		t.Helper()
		r := &newestReader{Reader: store, bad: bad}
		p, err := New(Options{Shards: 2, Store: discard{}})
		if err != nil {
			t.Fatal(err)
		}
		n, err := p.Seed(context.Background(), r, ids)
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Fatalf("bad item %d: Seed error %v, want %q", bad, err, wantErr)
		}
		if n != wantSeeded {
			t.Fatalf("bad item %d: seeded %d items, want %d", bad, n, wantSeeded)
		}
		if len(r.calls) != 3 {
			t.Fatalf("bad item %d: %d ReadNewest calls (%v), want 3 for %d items", bad, len(r.calls), r.calls, items)
		}
		for _, id := range ids {
			last, prev, ok := p.Last(id)
			rl, rp, rok := ref.Last(id)
			if bad != 0 && id >= bad && id <= 2*seedChunk { // the failed chunk after the failure
				if ok {
					t.Fatalf("item %d of the failed chunk has state %+v", id, last)
				}
				continue
			}
			if last != rl || prev != rp || ok != rok {
				t.Fatalf("bad item %d: item %d: last %+v prev %+v %v; per-item reads give %+v %+v %v", bad, id, last, prev, ok, rl, rp, rok)
			}
		}
	}
	withValues := items - items/3
	f(0, withValues, "")
	// Item seedChunk+10 fails the second chunk (items seedChunk+1 to
	// 2*seedChunk); the 9 items before it in that chunk were read.
	before := 0
	for id := seedChunk + 1; id < seedChunk+10; id++ {
		if id%3 != 0 {
			before++
		}
	}
	inChunk := 0
	for id := seedChunk + 1; id <= 2*seedChunk; id++ {
		if id%3 != 0 {
			inChunk++
		}
	}
	f(seedChunk+10, withValues-inChunk+before, fmt.Sprintf("cannot read the newest values of %d items; first: items %d to %d: shard unreachable", seedChunk, seedChunk+1, 2*seedChunk))
}
