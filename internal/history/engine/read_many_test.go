package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// TestReadManyDuringFlush: ReadMany's one view per group of items stays
// consistent while flushes swap the head out and publish blocks: every
// value acknowledged before a read started is in it, once, in order,
// whether it sits in the head, the series being flushed or a block.
func TestReadManyDuringFlush(t *testing.T) {
	s := open(t, t.TempDir(), 32)
	defer s.Close()
	const items, rounds = 600, 300 // more items than one ReadMany group
	ids := make([]uint64, items)
	for i := range ids {
		ids[i] = uint64(i + 1)
	}
	var acked atomic.Int64 // rounds fully acknowledged
	stop := make(chan struct{})
	errc := make(chan error, 3)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // flusher
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.Flush(); err != nil {
				errc <- err
				return
			}
		}
	}()
	go func() { // reader
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			min := acked.Load()
			count := make([]int64, items+1)
			last := make([]int64, items+1)
			for i := range last {
				last[i] = -1
			}
			err := s.ReadMany(context.Background(), ids, history.Query{From: 0, Till: 1 << 40}, func(v *history.Sample) bool {
				if v.Clock <= last[v.ItemID] {
					errc <- fmt.Errorf("item %d: clock %d after %d", v.ItemID, v.Clock, last[v.ItemID])
					return false
				}
				last[v.ItemID] = v.Clock
				count[v.ItemID]++
				return true
			})
			if err != nil {
				errc <- err
				return
			}
			for _, id := range ids {
				if count[id] < min {
					errc <- fmt.Errorf("item %d: read %d values, %d were acknowledged before the read", id, count[id], min)
					return
				}
			}
		}
	}()
	batch := make([]history.Sample, items)
	for r := 0; r < rounds; r++ {
		for i := range batch {
			batch[i] = history.Sample{ItemID: ids[i], Clock: int64(1_700_000_000 + 10*r), Type: history.Float, F: float64(r)}
		}
		if err := s.Write(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		acked.Store(int64(r + 1))
	}
	close(stop)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}
