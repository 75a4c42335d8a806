package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/record"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

const stripes = 64

// Options configures the engine.
type Options struct {
	// Dir holds the engine's files: wal/, blocks/, trends/ and
	// quarantine/.
	Dir string
	// Sync is the WAL fsync policy: wal.SyncBatch (the default: a Write
	// returns after the fsync that covers it) or wal.SyncInterval.
	Sync         wal.SyncMode
	SyncInterval time.Duration
	// SegmentSize of WAL segment files; 0 = the WAL's default.
	SegmentSize int64
	// ChunkValues is how many samples an item's open buffer holds before
	// it is sealed into a compressed chunk.
	ChunkValues int
	Logger      *slog.Logger
	// Precision is the timestamp precision of every item that
	// ItemPrecision does not name; the zero value keeps nanoseconds
	// exactly. See history.Precision and precision.go.
	Precision history.Precision
	// ItemPrecision, when set, returns an item's own precision (ok false:
	// Precision applies). It is called once per written value and MUST be
	// cheap and safe for concurrent use (a catalog snapshot lookup).
	ItemPrecision func(item uint64) (p history.Precision, ok bool)
}

// Modes of everything the engine creates: the history is the monitored
// systems' data, for the server's user only (the WAL uses the same).
// Explicit modes, not the umask's: with umask 0 a 0644 file is readable by
// every local user.
const (
	dirMode  = 0o700
	fileMode = 0o600
)

// DefaultChunkValues trades compression (longer chunks compress better)
// against the cost of decoding a whole chunk for a short read.
const DefaultChunkValues = 512

type stripe struct {
	mu     sync.RWMutex
	series map[uint64]*series
	_      [32]byte
}

// Store is the embedded engine.
type Store struct {
	opts    Options
	wal     *wal.WAL
	stripes [stripes]stripe
	striper *history.Striper
	encBufs sync.Pool // *[]byte WAL record buffers
	truncs  sync.Pool // *[]history.Sample batches with truncated timestamps

	closeMu sync.RWMutex
	closed  bool

	// writeMu is held shared by Write from its WAL append to its head
	// apply, and exclusively by Flush while it cuts the WAL and swaps the
	// head out, so no sample can be in a truncated segment but not in a
	// block.
	writeMu  sync.RWMutex
	flushMu  sync.Mutex
	flushing atomic.Pointer[map[uint64]*series]

	blocksMu    sync.RWMutex
	blocks      []*block // in write order (seq)
	trends      []*block // trend files, see trend.go
	nextSeq     uint64
	quarantined atomic.Int64
	headValues  atomic.Int64 // values applied since the last flush

	replayed atomic.Int64 // samples replayed at Open
}

// The optional history interfaces the engine implements; the housekeeping
// stage and the API find them by assertion on history.Store.
var (
	_ history.Store        = (*Store)(nil)
	_ history.TrendReader  = (*Store)(nil)
	_ history.Flusher      = (*Store)(nil)
	_ history.Dropper      = (*Store)(nil)
	_ history.Compactor    = (*Store)(nil)
	_ history.WriteChecker = (*Store)(nil)
)

// Open opens the engine in opts.Dir, replaying the WAL into the head.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("engine: Options.Dir is required")
	}
	if opts.ChunkValues <= 0 {
		opts.ChunkValues = DefaultChunkValues
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(opts.Dir, dirMode); err != nil {
		return nil, fmt.Errorf("engine: cannot create %s: %w", opts.Dir, err)
	}
	s := &Store{opts: opts, nextSeq: 1, striper: history.NewStriper(stripes)}
	for i := range s.stripes {
		s.stripes[i].series = map[uint64]*series{}
	}
	if err := s.loadBlocks(); err != nil {
		return nil, fmt.Errorf("engine: cannot open blocks in %s: %w", opts.Dir, err)
	}
	if err := s.loadTrends(); err != nil {
		return nil, fmt.Errorf("engine: cannot open trends in %s: %w", opts.Dir, err)
	}
	w, err := wal.Open(wal.Options{
		Dir:          filepath.Join(opts.Dir, "wal"),
		SegmentSize:  opts.SegmentSize,
		Sync:         opts.Sync,
		SyncInterval: opts.SyncInterval,
		Logger:       opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("engine: cannot open WAL: %w", err)
	}
	start := time.Now()
	var batch []history.Sample
	err = w.Replay(func(rec []byte) error {
		batch, err = record.DecodeSamples(batch[:0], rec)
		if err != nil {
			return err
		}
		s.apply(batch)
		s.replayed.Add(int64(len(batch)))
		return nil
	})
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("engine: WAL replay in %s failed: %w", opts.Dir, err)
	}
	s.wal = w
	opts.Logger.Info("history engine opened", "dir", opts.Dir, "blocks", len(s.blocks), "replayed_values", s.replayed.Load(), "duration", time.Since(start))
	return s, nil
}

// WriteErr implements history.WriteChecker: the WAL's failure while it
// refuses appends (after a failed write it retries every second and
// takes appends again once it can write; see wal.Append).
func (s *Store) WriteErr() error {
	if err := s.wal.Failure(); err != nil {
		return fmt.Errorf("history WAL cannot write: %w", err)
	}
	return nil
}

// WALStats returns the counters of the engine's WAL (failed groups and
// recoveries among them), for self-monitoring.
func (s *Store) WALStats() wal.Stats { return s.wal.Stats() }

// Replayed is the number of samples replayed from the WAL at Open.
func (s *Store) Replayed() int64 { return s.replayed.Load() }

// Write implements history.Writer: WAL first, head second.
func (s *Store) Write(_ context.Context, samples []history.Sample) error {
	if len(samples) == 0 {
		return nil
	}
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed {
		return history.ErrClosed
	}
	samples, release := s.truncate(samples)
	defer release()
	bp, _ := s.encBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	rec := record.AppendSamples((*bp)[:0], samples)
	s.writeMu.RLock()
	defer s.writeMu.RUnlock()
	err := s.wal.Append(rec)
	if cap(rec) <= 4<<20 {
		*bp = rec
		s.encBufs.Put(bp)
	}
	if err != nil {
		return fmt.Errorf("cannot append to the WAL: %w", err)
	}
	s.apply(samples)
	return nil
}

// apply inserts samples into the head, one lock per touched stripe.
func (s *Store) apply(samples []history.Sample) {
	s.striper.Each(samples, func(st int, idx []int32) {
		str := &s.stripes[st]
		str.mu.Lock()
		defer str.mu.Unlock()
		var last *series
		var lastID uint64
		for _, i := range idx {
			v := &samples[i]
			sr := last
			if sr == nil || lastID != v.ItemID {
				sr = str.series[v.ItemID]
				if sr == nil {
					sr = &series{vt: v.Type}
					str.series[v.ItemID] = sr
				}
				last, lastID = sr, v.ItemID
			}
			if sr.vt != v.Type {
				// The item's value type changed: Zabbix reads only the
				// table of the current type, so the series starts over.
				*sr = series{vt: v.Type}
			}
			sr.add(v, s.opts.ChunkValues)
		}
	})
	s.headValues.Add(int64(len(samples)))
}

// Stats describes the head.
type Stats struct {
	Items      int
	Samples    int
	HeadBytes  int // estimated memory held by the head's series
	Chunks     int
	ChunkBytes int
}

// Stats walks the head; it is for tests, benchmarks and metrics, not for
// hot paths.
func (s *Store) Stats() Stats {
	var st Stats
	for i := range s.stripes {
		str := &s.stripes[i]
		str.mu.RLock()
		for _, sr := range str.series {
			st.Items++
			st.Samples += sr.open.len() + sr.late.len()
			for _, c := range sr.chunks {
				st.Samples += c.n
				st.ChunkBytes += len(c.data)
			}
			st.Chunks += len(sr.chunks)
			st.HeadBytes += sr.bytes()
		}
		str.mu.RUnlock()
	}
	return st
}

// Close syncs and closes the WAL. The head is discarded; the next Open
// replays it.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.blocksMu.Lock()
	for _, b := range s.blocks {
		b.release()
	}
	for _, b := range s.trends {
		b.release()
	}
	s.blocks, s.trends = nil, nil
	s.blocksMu.Unlock()
	return s.wal.Close()
}

// Quarantined is the number of corrupt blocks moved aside since Open.
func (s *Store) Quarantined() int64 { return s.quarantined.Load() }

// BlockCount is the number of open block files.
func (s *Store) BlockCount() int {
	s.blocksMu.RLock()
	defer s.blocksMu.RUnlock()
	return len(s.blocks)
}

// Items lists the items holding values, in blocks or in the head, in
// no particular order (the migration to ClickHouse walks them).
func (s *Store) Items() []uint64 {
	seen := map[uint64]struct{}{}
	s.blocksMu.RLock()
	for _, b := range s.blocks {
		for id := range b.index {
			seen[id] = struct{}{}
		}
	}
	s.blocksMu.RUnlock()
	for i := range s.stripes {
		st := &s.stripes[i]
		st.mu.RLock()
		for id := range st.series {
			seen[id] = struct{}{}
		}
		st.mu.RUnlock()
	}
	if f := s.flushing.Load(); f != nil {
		for id := range *f {
			seen[id] = struct{}{}
		}
	}
	out := make([]uint64, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	return out
}
