package pipeline

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// seedGrab is how many items a Seed worker takes at a time: enough to
// make the shared counter cheap, few enough to spread a small catalog.
const seedGrab = 256

// Seed restores the per-item state (Last) from r: the newest two stored
// values of each of items. The API's lastvalue, prevvalue and lastclock
// come from that state, so without it they would read as empty after
// every restart until each item received two new values; Zabbix rebuilds
// its value cache from history the same way.
//
// Each item costs one newest-first read limited to two values, which the
// engine answers from the newest chunk of the item's newest block or its
// head, never the whole history. A store that is a history.NewestReader
// (ClickHouse, where a read is a round trip) is asked for seedChunk items
// at a time instead. Items or chunks are read by up to GOMAXPROCS
// goroutines.
//
// Seed is meant to run before Run, but is safe at any time: a value
// committed meanwhile is merged by time with the seeded ones, and on an
// equal timestamp the committed one wins.
//
// It returns how many items had values. A read that fails leaves that
// item's state as it was; Seed carries on with the others and returns an
// error naming the first failed item and the number that failed. ctx ends
// it early with ctx's error.
func (p *Pipeline) Seed(ctx context.Context, r history.Reader, items []uint64) (int, error) {
	if nr, ok := r.(history.NewestReader); ok {
		return p.seedBatched(ctx, nr, items)
	}
	var (
		next     atomic.Int64
		seeded   atomic.Int64
		failedN  atomic.Int64
		firstMu  sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	workers := min(runtime.GOMAXPROCS(0), (len(items)+seedGrab-1)/seedGrab)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var newest [2]history.Sample
			for ctx.Err() == nil {
				lo := int(next.Add(seedGrab)) - seedGrab
				if lo >= len(items) {
					return
				}
				for _, item := range items[lo:min(lo+seedGrab, len(items))] {
					n := 0
					err := r.Read(ctx, history.Query{ItemID: item, From: math.MinInt64, Till: math.MaxInt64 - 1, Desc: true, Limit: 2},
						func(v *history.Sample) bool {
							newest[n] = *v
							n++
							return n < len(newest)
						})
					if err != nil {
						if ctx.Err() != nil {
							return
						}
						if failedN.Add(1) == 1 {
							firstMu.Lock()
							firstErr = fmt.Errorf("item %d: %w", item, err)
							firstMu.Unlock()
						}
						continue
					}
					if n == 0 {
						continue
					}
					p.shards[p.shardFor(item)].seed(newest[:n])
					seeded.Add(1)
					clear(newest[:]) // drop string references
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return int(seeded.Load()), err
	}
	if n := failedN.Load(); n > 0 {
		return int(seeded.Load()), fmt.Errorf("cannot read the newest values of %d items; first: %w", n, firstErr)
	}
	return int(seeded.Load()), nil
}

// seedChunk is how many items a Seed worker asks a history.NewestReader
// for at once: ClickHouse's reads take an IN list of up to 8192 items per
// query, and a chunk's failure costs no more than its items.
const seedChunk = 8192

// seedBatched is Seed for a history.NewestReader: the same state, errors
// and counts, a chunk of items per call.
func (p *Pipeline) seedBatched(ctx context.Context, r history.NewestReader, items []uint64) (int, error) {
	var (
		next     atomic.Int64
		seeded   atomic.Int64
		failedN  atomic.Int64
		firstMu  sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	workers := min(runtime.GOMAXPROCS(0), (len(items)+seedChunk-1)/seedChunk)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				lo := int(next.Add(seedChunk)) - seedChunk
				if lo >= len(items) {
					return
				}
				chunk := items[lo:min(lo+seedChunk, len(items))]
				err := r.ReadNewest(ctx, chunk, 2, func(newest []history.Sample) bool {
					p.shards[p.shardFor(newest[0].ItemID)].seed(newest)
					seeded.Add(1)
					return true
				})
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					// The chunk's items seeded before the error keep their state;
					// all of its items count as failed, the read being one.
					if failedN.Add(int64(len(chunk))) == int64(len(chunk)) {
						firstMu.Lock()
						firstErr = fmt.Errorf("items %d to %d: %w", chunk[0], chunk[len(chunk)-1], err)
						firstMu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return int(seeded.Load()), err
	}
	if n := failedN.Load(); n > 0 {
		return int(seeded.Load()), fmt.Errorf("cannot read the newest values of %d items; first: %w", n, firstErr)
	}
	return int(seeded.Load()), nil
}
