package pipeline

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

// recordingStore records the items of every write, fails the writes that
// hold item poison, and holds the first write until release is closed.
type recordingStore struct {
	history.Store
	poison  uint64
	release chan struct{}
	mu      sync.Mutex
	writes  [][]uint64
}

func (r *recordingStore) Write(ctx context.Context, s []history.Sample) error {
	r.mu.Lock()
	first := len(r.writes) == 0
	var ids []uint64
	for i := range s {
		ids = append(ids, s[i].ItemID)
	}
	r.writes = append(r.writes, ids)
	r.mu.Unlock()
	if first && r.release != nil {
		<-r.release
	}
	for i := range s {
		if s[i].ItemID == r.poison {
			return errors.New("injected storage error")
		}
	}
	return r.Store.Write(ctx, s)
}

// TestSubmitIsOneWritePerShard: a shard cuts its MaxBatch pieces between
// Submits, so that each Submit's values reach the store in one write (a
// write is all or nothing), even a Submit larger than MaxBatch.
func TestSubmitIsOneWritePerShard(t *testing.T) {
	st := &recordingStore{Store: memstore.New(), release: make(chan struct{})}
	p := start(t, Options{Shards: 1, MaxBatch: 4, Store: st})
	sizes := []int{1, 3, 3, 10, 2, 5}
	var wg sync.WaitGroup
	for k, n := range sizes {
		// Submit k's values are all of item 100+k.
		v := make([]history.Sample, n)
		for i := range v {
			v[i] = history.Sample{ItemID: uint64(100 + k), Clock: int64(i), Type: history.Float}
		}
		wg.Go(func() {
			if err := p.Submit(v, nil); err != nil {
				t.Error(err)
			}
		})
		if k == 0 {
			// The first write holds the shard while the others queue
			// up, so that they are drained as one batch.
			for {
				st.mu.Lock()
				n := len(st.writes)
				st.mu.Unlock()
				if n > 0 {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	close(st.release)
	wg.Wait()
	in := map[uint64]int{} // item -> writes it appeared in
	for _, w := range st.writes {
		seen := map[uint64]bool{}
		for _, id := range w {
			if !seen[id] {
				seen[id] = true
				in[id]++
			}
		}
		if len(w) > 4 && len(seen) > 1 {
			t.Errorf("a write of %d values (more than MaxBatch) holds several Submits: %v", len(w), w)
		}
	}
	for k := range sizes {
		if in[uint64(100+k)] != 1 {
			t.Errorf("Submit %d (%d values) went to the store in %d writes, want 1: %v", k, sizes[k], in[uint64(100+k)], st.writes)
		}
	}
}

// TestSubmitPartialError: when one shard's write fails and another's
// succeeds, Submit says exactly what was stored.
func TestSubmitPartialError(t *testing.T) {
	st := &recordingStore{Store: memstore.New()}
	p := start(t, Options{Shards: 4, Store: st})
	var v []history.Sample
	for id := uint64(1); id <= 10; id++ {
		v = append(v, history.Sample{ItemID: id, Clock: 1, Type: history.Float}, history.Sample{ItemID: id, Clock: 2, Type: history.Float})
	}
	st.poison = 3
	err := p.Submit(v, NewTicket())
	var pe *PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("Submit = %v, want a *PartialError", err)
	}
	stored := 0
	for id := uint64(1); id <= 10; id++ {
		n := 0
		st.Store.Read(context.Background(), history.Query{ItemID: id, From: 0, Till: 10}, func(*history.Sample) bool { n++; return true })
		if pe.StoredItem(id) != (n == 2) {
			t.Errorf("item %d: StoredItem %v, %d values stored", id, pe.StoredItem(id), n)
		}
		if n != 0 && n != 2 {
			t.Errorf("item %d: %d of its 2 values stored", id, n)
		}
		stored += n
	}
	if pe.Stored != stored || stored == 0 || stored == len(v) {
		t.Fatalf("PartialError.Stored = %d, %d of %d values stored", pe.Stored, stored, len(v))
	}
	if pe.StoredItem(3) {
		t.Error("the poisoned item reported stored")
	}
	// Nothing stored at all: the store's error itself.
	one := []history.Sample{{ItemID: 3, Clock: 5, Type: history.Float}}
	if err := p.Submit(one, nil); err == nil || errors.As(err, &pe) {
		t.Fatalf("Submit of only the poisoned item = %v, want the store's error", err)
	}
}

// TestAdmitRefusesWholeSubmit: while Admit says no, nothing is written.
func TestAdmitRefusesWholeSubmit(t *testing.T) {
	st := &recordingStore{Store: memstore.New()}
	refuse := errors.New("not enough disk space")
	var mu sync.Mutex
	admit := refuse
	p := start(t, Options{Shards: 2, Store: st, Admit: func() error { mu.Lock(); defer mu.Unlock(); return admit }})
	if err := p.Submit(floats(1, 20, 0), nil); !errors.Is(err, refuse) {
		t.Fatalf("Submit = %v, want the refusal", err)
	}
	if len(st.writes) != 0 {
		t.Fatalf("%d writes while refused", len(st.writes))
	}
	mu.Lock()
	admit = nil
	mu.Unlock()
	if err := p.Submit(floats(1, 20, 0), nil); err != nil {
		t.Fatal(err)
	}
}
