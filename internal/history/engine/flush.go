package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/fsutil"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// PartitionDuration is the time span of one partition: the unit that
// retention drops as a whole directory.
const PartitionDuration = 2 * time.Hour

func partitionOf(t int64) int64 {
	p := int64(PartitionDuration)
	return floorDiv(t, p) * p
}

func (s *Store) blocksDir() string { return filepath.Join(s.opts.Dir, "blocks") }

// loadBlocks opens the history blocks.
func (s *Store) loadBlocks() error {
	if err := s.loadDir(s.blocksDir(), func(b *block) { s.blocks = append(s.blocks, b) }); err != nil {
		return err
	}
	sort.Slice(s.blocks, func(i, j int) bool { return s.blocks[i].seq < s.blocks[j].seq })
	return nil
}

// loadDir opens every block file under root (partition directories p<S>
// of two hours, d<S> of a day), quarantining the ones that do not decode
// and removing temporary files left by a crash in the middle of a write.
func (s *Store) loadDir(root string, add func(*block)) error {
	parts, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, pd := range parts {
		name := pd.Name()
		if !pd.IsDir() || len(name) < 2 || (name[0] != 'p' && name[0] != 'd') {
			continue
		}
		psec, err := strconv.ParseInt(name[1:], 10, 64)
		if err != nil {
			continue
		}
		span := int64(PartitionDuration)
		if name[0] == 'd' {
			span = int64(DayPartition)
		}
		dir := filepath.Join(root, name)
		files, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, f := range files {
			path := filepath.Join(dir, f.Name())
			if strings.HasSuffix(f.Name(), ".tmp") {
				os.Remove(path) // a write that crashed before its rename
				continue
			}
			seqStr, ok := strings.CutSuffix(f.Name(), ".blk")
			if !ok {
				continue
			}
			seq, err := strconv.ParseUint(seqStr, 10, 64)
			if err != nil {
				continue
			}
			b, err := openBlock(path, psec*1e9, seq)
			if err != nil {
				s.quarantine(path, err)
				continue
			}
			b.span = span
			add(b)
			s.nextSeq = max(s.nextSeq, seq+1)
		}
	}
	return nil
}

// writeBlockFile gives w the next sequence number, writes it as
// root/<prefix><partition seconds>/<seq>.blk and opens it.
func (s *Store) writeBlockFile(w *blockWriter, root string, prefix byte, partition, span int64) (*block, error) {
	s.blocksMu.Lock()
	seq := s.nextSeq
	s.nextSeq++
	s.blocksMu.Unlock()
	path := filepath.Join(root, string(prefix)+strconv.FormatInt(floorDiv(partition, 1e9), 10), fmt.Sprintf("%012d.blk", seq))
	if err := w.write(path); err != nil {
		return nil, fmt.Errorf("cannot write block %s: %w", path, err)
	}
	b, err := openBlock(path, partition, seq)
	if err != nil {
		return nil, fmt.Errorf("cannot reopen block %s: %w", path, err)
	}
	b.span = span
	return b, nil
}

// quarantine moves a bad block aside, reporting it by name: the other
// blocks stay readable and nothing panics.
func (s *Store) quarantine(path string, cause error) {
	qdir := filepath.Join(s.opts.Dir, "quarantine")
	dst := filepath.Join(qdir, strings.ReplaceAll(strings.TrimPrefix(path, s.blocksDir()+string(filepath.Separator)), string(filepath.Separator), "_"))
	err := os.MkdirAll(qdir, dirMode)
	if err == nil {
		err = os.Rename(path, dst)
	}
	s.opts.Logger.Error("history block is corrupt; moved to quarantine, its values are not readable", "block", path, "quarantined_as", dst, "cause", cause, "move_err", err)
	s.quarantined.Add(1)
}

// acquireBlocks returns, in write order, the blocks that may hold item in
// [lo, hi), each with a reference the caller must release, and the series
// being flushed, as one consistent view.
func (s *Store) acquireBlocks(item uint64, lo, hi int64) ([]*block, *series) {
	s.blocksMu.RLock()
	defer s.blocksMu.RUnlock()
	var fl *series
	if m := s.flushing.Load(); m != nil {
		fl = (*m)[item]
	}
	var out []*block
	for _, b := range s.blocks {
		if b.maxT < lo || b.minT >= hi {
			continue
		}
		if _, ok := b.index[item]; !ok {
			continue
		}
		b.acquire()
		out = append(out, b)
	}
	return out, fl
}

// readBlock collects item's samples in [lo, hi) from one block.
func (s *Store) readBlock(ctx context.Context, b *block, item uint64, lo, hi int64) (*buf, history.ValueType, error) {
	ix := b.index[item]
	out := &buf{}
	r := reader{vt: ix.vt, lo: lo, hi: hi, collect: out, late: &buf{}}
	var data []byte
	for _, c := range ix.chunks {
		if c.maxT < lo || c.minT >= hi {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		var err error
		data, err = b.readChunk(c, data)
		if err != nil {
			return nil, 0, err
		}
		if _, err := r.piece(&piece{lower: c.minT - 1, upper: c.maxT, data: data}, false); err != nil {
			return nil, 0, fmt.Errorf("%s: item %d: %w", b.path, item, err)
		}
	}
	return out, ix.vt, nil
}

// Flush moves everything in the head into block files, one per touched
// partition, then truncates the WAL segments those blocks made
// unnecessary. Writes wait only while the head is swapped out, not while
// the blocks are encoded and written.
func (s *Store) Flush() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	start := time.Now()

	// Barrier: no Write is between its WAL append and its head apply while
	// the WAL is cut and the head swapped, so every sample in a segment
	// before the cut is in the set being flushed.
	s.writeMu.Lock()
	cut, err := s.wal.Cut()
	if err != nil {
		s.writeMu.Unlock()
		return fmt.Errorf("flush: cannot cut the WAL: %w", err)
	}
	// All stripe locks are held until the swapped-out head is published
	// as "flushing": a reader that finds a stripe already swapped is then
	// sure to find its data in the flushing set or, later, in blocks.
	taken := map[uint64]*series{}
	for i := range s.stripes {
		s.stripes[i].mu.Lock()
	}
	for i := range s.stripes {
		str := &s.stripes[i]
		for id, sr := range str.series {
			if len(sr.chunks) == 0 && sr.open.len() == 0 && sr.late.len() == 0 {
				continue
			}
			taken[id] = sr
			str.series[id] = &series{vt: sr.vt}
		}
	}
	s.flushing.Store(&taken)
	s.headValues.Store(0)
	for i := range s.stripes {
		s.stripes[i].mu.Unlock()
	}
	s.writeMu.Unlock()

	if len(taken) == 0 {
		s.flushing.Store(nil)
		return s.wal.Truncate(cut)
	}
	writers := map[int64]*blockWriter{}
	trendRows := map[uint64][]Trend{}
	trendTypes := map[uint64]history.ValueType{}
	values := 0
	for id, sr := range taken {
		all := &buf{}
		r := reader{vt: sr.vt, lo: -1 << 63, hi: 1<<63 - 1, collect: all}
		if err := r.series(context.Background(), sr, -1<<63, 1<<63-1, false); err != nil {
			s.restore(taken)
			return fmt.Errorf("flush: item %d: %w", id, err)
		}
		if all.len() == 0 {
			continue
		}
		values += all.len()
		if sr.vt.Numeric() {
			trendRows[id], trendTypes[id] = hourly(sr.vt, all), sr.vt
		}
		// Split by partition and into chunks of ChunkValues that do not
		// cross the item's time window (chunkspan.go); windows of two
		// hours and less align with partitions.
		win := ownWindow(all, all.ts[all.len()-1]-all.ts[0], s.opts.ChunkValues)
		if win == 0 || win > int64(PartitionDuration) {
			win = int64(PartitionDuration) // chunks never cross a partition
		}
		cutChunks(sr.vt, all, win, s.opts.ChunkValues, func(c chunk) {
			p := partitionOf(c.minT)
			w := writers[p]
			if w == nil {
				w = newBlockWriter(true)
				writers[p] = w
			}
			w.add(id, sr.vt, c.minT, c.maxT, c.n, c.data)
		})
	}
	var opened []*block
	for p, w := range writers {
		b, err := s.writeBlockFile(w, s.blocksDir(), 'p', p, int64(PartitionDuration))
		if err != nil {
			for _, b := range opened {
				b.release()
			}
			s.restore(taken)
			return fmt.Errorf("flush: %w", err)
		}
		opened = append(opened, b)
	}
	sort.Slice(opened, func(i, j int) bool { return opened[i].seq < opened[j].seq })
	trendFiles, err := s.writeTrends(trendRows, trendTypes)
	if err != nil {
		for _, b := range append(opened, trendFiles...) {
			b.release()
		}
		s.restore(taken)
		return fmt.Errorf("flush: cannot write trends: %w", err)
	}
	// Blocks and trends in, flushing out, in one step as readers see it.
	s.blocksMu.Lock()
	s.blocks = append(s.blocks, opened...)
	s.trends = append(s.trends, trendFiles...)
	s.flushing.Store(nil)
	s.blocksMu.Unlock()
	if err := s.wal.Truncate(cut); err != nil {
		return fmt.Errorf("flush: blocks written, but the WAL could not be truncated: %w", err)
	}
	s.opts.Logger.Info("history head flushed", "items", len(taken), "values", values, "blocks", len(opened), "duration", time.Since(start))
	return nil
}

// restore puts a failed flush's series back into the head, under what
// was written since the swap (newer writes win), so that nothing becomes
// unreadable; the WAL was not truncated, so nothing is lost either.
// Block files already written stay; they hold the same values and lose
// to the head on equal timestamps.
func (s *Store) restore(taken map[uint64]*series) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	for id, old := range taken {
		str := &s.stripes[id%stripes]
		str.mu.Lock()
		merged := &series{vt: old.vt}
		collect := func(sr *series) {
			all := &buf{}
			r := reader{vt: sr.vt, lo: -1 << 63, hi: 1<<63 - 1, collect: all}
			if err := r.series(context.Background(), sr, -1<<63, 1<<63-1, false); err != nil {
				s.opts.Logger.Error("cannot restore a series after a failed flush; its values are in the WAL", "item", id, "err", err)
				return
			}
			for k := 0; k < all.len(); k++ {
				smp := history.Sample{ItemID: id, Clock: floorDiv(all.ts[k], 1e9), Type: sr.vt}
				smp.NS = int32(all.ts[k] - smp.Clock*1e9)
				switch sr.vt {
				case history.Float:
					smp.F = f64frombits(all.num[k])
				case history.Uint:
					smp.U = all.num[k]
				default:
					smp.S = all.str[k]
					if sr.vt == history.Log {
						m := all.meta[k]
						smp.Log = &history.LogMeta{Timestamp: m.Timestamp, Source: m.Source, Severity: m.Severity, EventID: m.EventID}
					}
				}
				merged.add(&smp, s.opts.ChunkValues)
			}
		}
		collect(old)
		if cur := str.series[id]; cur != nil {
			if cur.vt != old.vt {
				merged = &series{vt: cur.vt}
			}
			collect(cur)
		}
		str.series[id] = merged
		str.mu.Unlock()
	}
	s.blocksMu.Lock()
	s.flushing.Store(nil)
	s.blocksMu.Unlock()
}

// HeadValues implements history.Flusher: the values applied since the
// last flush, the measure a flush policy bounds.
func (s *Store) HeadValues() int64 { return s.headValues.Load() }

// DropBefore removes every partition that ends at or before cutoff (unix
// seconds): whole directories, never rows. Readers that hold a dropped
// block keep reading it until they release it.
func (s *Store) DropBefore(cutoff int64) (dropped int, err error) {
	limit := nanos(cutoff)
	s.blocksMu.Lock()
	var keep, drop []*block
	for _, b := range s.blocks {
		if b.partition+b.span <= limit {
			drop = append(drop, b)
		} else {
			keep = append(keep, b)
		}
	}
	s.blocks = keep
	s.blocksMu.Unlock()
	dirs := map[string]bool{}
	for _, b := range drop {
		if rerr := os.Remove(b.path); rerr != nil && err == nil {
			err = rerr
		}
		dirs[filepath.Dir(b.path)] = true
		b.release()
	}
	for d := range dirs {
		os.Remove(d) // only succeeds once empty
	}
	if len(dirs) > 0 {
		fsutil.SyncDir(s.blocksDir())
	}
	return len(drop), err
}
