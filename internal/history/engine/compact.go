package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/peregrine-mon/peregrine/internal/fsutil"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// DayPartition is the span of a compacted partition.
const DayPartition = 24 * time.Hour

// compactChunkValues bounds the chunk length in compacted blocks; chunks
// are also cut at the item's time window (chunkspan.go), which for most
// items comes first.
const compactChunkValues = 2048

// Compact merges, for every day that ended before now, that day's 2-hour
// blocks (and any earlier compaction of it) into one day block, and drops
// the values older than each item's own retention on the way: shorter
// per-item retention is applied here, the longest by DropBefore. It
// returns the number of days compacted.
//
// It holds the flush lock, so that no flush allocates a sequence number
// between the sources and the result: the compacted file must sort after
// everything it replaces and before everything written after it.
func (s *Store) Compact(ctx context.Context, now time.Time, retention history.RetentionFunc) (int, error) {
	return s.compact(ctx, now, false, retention)
}

// CompactNow is Compact with the current day included: its blocks so far
// become one day block, which the day's later flushes add blocks beside
// and the next compaction merges again. It is for an operator who wants
// the store at its smallest now (before a backup, for a measurement).
func (s *Store) CompactNow(ctx context.Context, now time.Time, retention history.RetentionFunc) (int, error) {
	return s.compact(ctx, now, true, retention)
}

func (s *Store) compact(ctx context.Context, now time.Time, withToday bool, retention history.RetentionFunc) (int, error) {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	day := int64(DayPartition)
	today := floorDiv(now.UnixNano(), day) * day
	if withToday {
		today += day
	}
	s.blocksMu.Lock()
	byDay := map[int64][]*block{}
	for _, b := range s.blocks {
		d := floorDiv(b.partition, day) * day
		if d+day > today {
			continue // the day is not over
		}
		byDay[d] = append(byDay[d], b)
	}
	var days []int64
	for d, bs := range byDay {
		if len(bs) == 1 && bs[0].span == day && !retentionDrops(bs[0], now, retention) {
			continue // already one day block and nothing to drop
		}
		days = append(days, d)
		for _, b := range bs {
			b.acquire()
		}
	}
	s.blocksMu.Unlock()
	sort.Slice(days, func(i, j int) bool { return days[i] < days[j] })
	done := 0
	for k, d := range days {
		if err := ctx.Err(); err != nil {
			for _, dd := range days[k:] {
				for _, b := range byDay[dd] {
					b.release()
				}
			}
			return done, err
		}
		changed, err := s.compactDay(d, byDay[d], now, retention)
		for _, b := range byDay[d] {
			b.release()
		}
		if err != nil {
			for _, dd := range days[k+1:] {
				for _, b := range byDay[dd] {
					b.release()
				}
			}
			return done, err
		}
		if changed {
			done++
		}
	}
	return done, nil
}

// retentionDrops reports, from the index alone, whether retention would
// drop any value of b.
func retentionDrops(b *block, now time.Time, retention history.RetentionFunc) bool {
	if retention == nil {
		return false
	}
	for id, ix := range b.index {
		if secs, ok := retention(id); ok && len(ix.chunks) > 0 && ix.chunks[0].minT < nanos(now.Unix()-secs) {
			return true
		}
	}
	return false
}

// compactDay rewrites the blocks of one day (sorted by seq) as one file.
func (s *Store) compactDay(d int64, sources []*block, now time.Time, retention history.RetentionFunc) (bool, error) {
	sort.Slice(sources, func(i, j int) bool { return sources[i].seq < sources[j].seq })
	items := map[uint64]bool{}
	for _, b := range sources {
		for id := range b.index {
			items[id] = true
		}
	}
	ids := make([]uint64, 0, len(items))
	for id := range items {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	w := newBlockWriter(true)
	dropped := 0
	for _, id := range ids {
		var acc *buf
		var vt history.ValueType
		for _, b := range sources {
			if _, ok := b.index[id]; !ok {
				continue
			}
			out, bvt, err := s.readBlock(context.Background(), b, id, -1<<63, 1<<63-1)
			if err != nil {
				return false, fmt.Errorf("compaction of day %s: %w", time.Unix(0, d).UTC().Format(time.DateOnly), err)
			}
			switch {
			case acc == nil || bvt != vt:
				acc, vt = out, bvt // a newer value type replaces older data
			default:
				acc = mergeBufs(vt, acc, out)
			}
		}
		if acc == nil {
			continue
		}
		start := 0
		if retention != nil {
			if secs, ok := retention(id); ok {
				cutoff := nanos(now.Unix() - secs)
				start = acc.search(cutoff)
				dropped += start
			}
		}
		if start > 0 {
			kept := acc.slice(vt, start, acc.len())
			acc = &kept
		}
		// Chunks cut at the item's time window (chunkspan.go), its rate
		// taken over the whole day.
		cutChunks(vt, acc, ownWindow(acc, int64(DayPartition), compactChunkValues), compactChunkValues, func(c chunk) {
			w.add(id, vt, c.minT, c.maxT, c.n, c.data)
		})
	}
	if len(sources) == 1 && sources[0].span == int64(DayPartition) && dropped == 0 {
		return false, nil
	}
	var nb *block
	if len(w.index) > 0 {
		var err error
		if nb, err = s.writeBlockFile(w, s.blocksDir(), 'd', d, int64(DayPartition)); err != nil {
			return false, fmt.Errorf("compaction: %w", err)
		}
	}
	// Swap: the day block in, its sources out, as one step for readers.
	gone := map[*block]bool{}
	for _, b := range sources {
		gone[b] = true
	}
	s.blocksMu.Lock()
	keep := s.blocks[:0:0]
	for _, b := range s.blocks {
		if !gone[b] {
			keep = append(keep, b)
		}
	}
	if nb != nil {
		keep = append(keep, nb)
		sort.Slice(keep, func(i, j int) bool { return keep[i].seq < keep[j].seq })
	}
	s.blocks = keep
	s.blocksMu.Unlock()
	// The day block is durable: the sources can go. A crash before this
	// leaves both; the day block has the higher sequence and wins, and the
	// next compaction removes the sources.
	for _, b := range sources {
		os.Remove(b.path)
		os.Remove(filepath.Dir(b.path)) // once empty
		b.release()                     // the engine's own reference
	}
	fsutil.SyncDir(s.blocksDir())
	s.opts.Logger.Info("history day compacted", "day", time.Unix(0, d).UTC().Format(time.DateOnly), "sources", len(sources), "items", len(ids), "values_dropped_by_retention", dropped)
	return true, nil
}
