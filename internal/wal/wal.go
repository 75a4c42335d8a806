package wal

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// SyncMode is the fsync policy: what a nil error from Append promises.
// It is a named setting on purpose (see docs/format/wal.md, "Sync
// policies"): the trapper tells senders "processed" on the strength of it.
type SyncMode int

const (
	// SyncBatch: Append returns after an fsync that covers its record.
	// Concurrent Appends share one write(2) and one fsync (group commit).
	// An acknowledged record survives a crash of the process or the OS.
	SyncBatch SyncMode = iota
	// SyncInterval: Append returns after its record was handed to the
	// kernel with write(2); the WAL fsyncs every Options.SyncInterval. An
	// acknowledged record survives a crash of the process, but an OS crash
	// or power loss may lose up to one interval of acknowledged records.
	SyncInterval
	// SyncNever: like SyncInterval without the periodic fsync; only Close
	// fsyncs. For tests and benchmarks.
	SyncNever
)

// String returns the name used in configuration and benchmark names.
func (m SyncMode) String() string {
	switch m {
	case SyncBatch:
		return "batch"
	case SyncInterval:
		return "interval"
	case SyncNever:
		return "never"
	}
	return fmt.Sprintf("SyncMode(%d)", int(m))
}

// Defaults applied by Open to zero Options fields.
const (
	DefaultSegmentSize    = 128 << 20
	DefaultSyncInterval   = 100 * time.Millisecond
	DefaultMaxQueuedBytes = 64 << 20
	DefaultRetryInterval  = time.Second
)

// Options configures a WAL. Zero fields take the defaults above.
type Options struct {
	// Dir holds the segment files; Open creates it. One WAL per directory:
	// nothing stops a second process from opening the same one.
	Dir string
	// SegmentSize is the size at which a segment is closed: a record that
	// would make the current segment larger goes into a new one. A record
	// larger than SegmentSize is written whole into a segment of its own.
	SegmentSize int64
	// Sync is the fsync policy; the zero value is SyncBatch.
	Sync SyncMode
	// SyncInterval is the fsync period under SyncInterval.
	SyncInterval time.Duration
	// MaxQueuedBytes bounds the framed bytes waiting for the writer
	// goroutine. Append and AppendAsync block while the queue is full, so a
	// disk slower than the producers pushes back on them instead of
	// growing memory. A single record larger than the bound is still
	// accepted once the queue is empty.
	MaxQueuedBytes int64
	// RetryInterval is how often a WAL that undid a failed write (see
	// Append: a full disk, an I/O error) tries to start a new segment
	// and accept appends again.
	RetryInterval time.Duration
	// FS is the filesystem; nil means the operating system's.
	FS FS
	// Logger receives torn-tail cuts and write failures; nil discards.
	Logger *slog.Logger
}

func (o *Options) ensureDefaults() {
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.MaxQueuedBytes == 0 {
		o.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = DefaultRetryInterval
	}
	if o.FS == nil {
		o.FS = OS()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func (o *Options) validate() error {
	switch {
	case o.Dir == "":
		return errors.New("wal: Options.Dir is empty; set it to the WAL directory")
	case o.SegmentSize < segHeaderSize+recHeaderSize:
		return fmt.Errorf("wal: Options.SegmentSize %d is too small; use at least %d bytes (default %d)", o.SegmentSize, segHeaderSize+recHeaderSize, DefaultSegmentSize)
	case o.Sync < SyncBatch || o.Sync > SyncNever:
		return fmt.Errorf("wal: Options.Sync %d is not a sync mode; use SyncBatch, SyncInterval or SyncNever", int(o.Sync))
	case o.SyncInterval < 0:
		return fmt.Errorf("wal: Options.SyncInterval %v is negative", o.SyncInterval)
	case o.MaxQueuedBytes < 0:
		return fmt.Errorf("wal: Options.MaxQueuedBytes %d is negative", o.MaxQueuedBytes)
	}
	return nil
}

var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("wal: closed")
	// ErrNotReplayed is returned by Append, AppendAsync and Cut when the
	// directory held segments at Open and Replay has not yet succeeded:
	// until the last segment's torn tail is cut, writing a new segment
	// after it would turn that tail into mid-log corruption.
	ErrNotReplayed = errors.New("wal: Replay must succeed before the first Append")
)

// WAL is a segmented write-ahead log. See the package documentation for
// the concurrency contract.
type WAL struct {
	opts Options
	fs   FS
	log  *slog.Logger

	// opMu serialises Replay, Truncate and Close, so a replay never reads
	// a segment that a truncation is deleting, and Close never races
	// Replay starting the active segment. Lock order: opMu, then mu.
	opMu sync.Mutex
	// replayLast is the last segment present at Open (-1 if none): the
	// one whose torn tail Replay cuts. Replay never reads segments after
	// it, which are this WAL's own.
	replayLast int

	// mu guards everything down to the counters. It is held only to
	// enqueue or swap the queue, never during I/O.
	mu sync.Mutex
	// space is signalled (on mu) when the writer takes the queue, and on
	// Close and failure, to release producers held by MaxQueuedBytes.
	space sync.Cond
	// queue holds framed records not yet taken by the writer goroutine.
	queue []byte
	// cuts lists the offsets in queue where a new segment starts, in
	// order, with the index of that segment.
	cuts []cut
	// group is shared by everything enqueued since the writer last took
	// the queue; the writer completes it after the write and, under
	// SyncBatch, the fsync.
	group *group
	// seg is the segment the next enqueued record goes to and segSize the
	// bytes written or queued for it, header included.
	seg     int
	segSize int64
	// fileSeg is the segment the writer goroutine has open: the lowest
	// segment that can still change, so Truncate stops below it.
	fileSeg int
	// started is set once the active segment exists (at Open for a new
	// WAL, at the end of Replay otherwise); Appends wait for it.
	started bool
	// err is the first write or fsync failure. It stays until a retry
	// starts a new segment (recoverable: the failed group's bytes were
	// removed from the files) or, when it is not recoverable, until the
	// WAL is reopened: see Append.
	err         error
	recoverable bool
	closed      bool
	// failed mirrors err != nil for Failure, which the pipeline asks
	// once per request.
	failed atomic.Bool
	// spare and spareCuts are the previous queue's arrays, handed back by
	// the writer for reuse (double buffering).
	spare     []byte
	spareCuts []cut

	// Owned by the writer goroutine (and by Open/Replay before any record
	// can be queued).
	file       File
	fileSize   int64 // bytes in file, header included
	unsynced   bool  // bytes written to file since its last fsync
	syncFailed bool  // an fsync of file failed in the current group

	work        chan struct{} // 1-buffered "queue is not empty" signal
	flusherDone chan struct{}

	nRecords, nBytes, nWrites, nSyncs, nSegments, nFailures, nRecoveries atomic.Int64
}

// Stats are cumulative counters of one WAL, for self-monitoring.
type Stats struct {
	Records  int64 // records accepted by Append and AppendAsync
	Bytes    int64 // bytes written to segment files, headers included
	Writes   int64 // write(2) calls for record data
	Syncs    int64 // fsyncs of segment files (directory syncs not counted)
	Segments int64 // segment files created
	// Failures counts failed groups (write or fsync errors), Recoveries
	// the times the WAL accepted appends again after undoing one.
	Failures   int64
	Recoveries int64
}

// Stats returns the WAL's counters.
func (w *WAL) Stats() Stats {
	return Stats{
		Records:    w.nRecords.Load(),
		Bytes:      w.nBytes.Load(),
		Writes:     w.nWrites.Load(),
		Syncs:      w.nSyncs.Load(),
		Segments:   w.nSegments.Load(),
		Failures:   w.nFailures.Load(),
		Recoveries: w.nRecoveries.Load(),
	}
}

// Failure returns why appends are refused now, or nil when they are
// accepted (or the WAL is closed). A WAL that undid its failure keeps
// returning it until a retry has started a new segment.
func (w *WAL) Failure() error {
	if !w.failed.Load() {
		return nil // the usual answer, without the appenders' lock
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	return w.err
}

// Open opens the WAL in opts.Dir, creating the directory if needed. It
// does not read existing segments: if there are any, call Replay, which
// also cuts a torn tail, before the first Append. In an empty directory
// Open creates the first segment and the WAL is ready for appends.
func Open(opts Options) (*WAL, error) {
	opts.ensureDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	w := &WAL{
		opts:        opts,
		fs:          opts.FS,
		log:         opts.Logger,
		fileSeg:     -1,
		work:        make(chan struct{}, 1),
		flusherDone: make(chan struct{}),
	}
	w.space.L = &w.mu
	// Owner-only, whatever the umask: segments hold every value written.
	if err := w.fs.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("wal: cannot create directory %s: %w", opts.Dir, err)
	}
	// Make the directory itself durable, in case MkdirAll created it.
	if err := w.fs.SyncDir(filepath.Dir(filepath.Clean(opts.Dir))); err != nil {
		return nil, fmt.Errorf("wal: cannot sync parent of %s: %w", opts.Dir, err)
	}
	segs, err := listSegments(w.fs, opts.Dir)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		w.replayLast = -1
		if err := w.startSegment(firstSegment); err != nil {
			return nil, err
		}
	} else {
		w.replayLast = segs[len(segs)-1]
		w.seg = w.replayLast + 1
	}
	go w.flushLoop()
	return w, nil
}

// startSegment creates segment idx as the active segment. It runs before
// any record can be queued, so the writer goroutine is idle.
func (w *WAL) startSegment(idx int) error {
	f, err := w.createSegment(idx)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.file = f
	w.fileSize = segHeaderSize
	w.fileSeg = idx
	w.seg = idx
	w.segSize = segHeaderSize
	w.started = true
	w.mu.Unlock()
	return nil
}

// createSegment creates segment file idx with its header, fsyncs it, and
// makes the new directory entry durable, so that a record acknowledged in
// it cannot vanish with the entry.
func (w *WAL) createSegment(idx int) (File, error) {
	path := segmentPath(w.opts.Dir, idx)
	f, err := w.fs.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("wal: cannot create segment: %w", err)
	}
	if _, err := f.Write(segHeader()); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: cannot write header of segment %s: %w", path, err)
	}
	w.nBytes.Add(segHeaderSize)
	// The header is fsynced on its own: a crash may tear the unsynced
	// bytes of the last segment, and a torn header cannot be told apart
	// from a segment of another format or version, which replay must
	// refuse rather than cut. One extra fsync per segment is nothing
	// against a segment's worth of records. SyncNever promises no fsync
	// before Close, headers included.
	if w.opts.Sync != SyncNever {
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("wal: cannot fsync header of segment %s: %w", path, err)
		}
		w.nSyncs.Add(1)
	}
	if err := w.fs.SyncDir(w.opts.Dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: cannot sync directory %s after creating %s: %w", w.opts.Dir, segmentName(idx), err)
	}
	w.nSegments.Add(1)
	return f, nil
}

// usableLocked returns why records cannot be appended now, or nil.
func (w *WAL) usableLocked() error {
	switch {
	case w.closed:
		return ErrClosed
	case w.err != nil && w.recoverable:
		return fmt.Errorf("wal: refusing to append until the WAL can write again (retried every %v): %w", w.opts.RetryInterval, w.err)
	case w.err != nil:
		return fmt.Errorf("wal: refusing to append after an earlier write or fsync failure; reopen the WAL to continue: %w", w.err)
	case !w.started:
		return ErrNotReplayed
	}
	return nil
}

// Append writes rec as one record and returns when it is durable as the
// sync policy promises: under SyncBatch after an fsync covering it, under
// SyncInterval and SyncNever after write(2). Append may be called from
// many goroutines at once; concurrent calls are group-committed. It does
// not keep rec after it returns.
//
// A non-nil error means rec is not in the log: after a write or fsync
// failure the writer removes every byte of the failed group from the
// segment files (it truncates the segment the group started in back to
// where it started, fsyncs it, and deletes the segments the group
// created), so that no record of a group whose Appends failed is
// replayed after a restart, whole ones included. Every later Append
// fails too, until the WAL can write again: every
// Options.RetryInterval the writer tries to start a new segment, and
// once it has, appends are accepted again (a disk that was full has
// room again). The removed bytes take with them whatever a failed
// fsync left uncertain ("fsyncgate": the kernel may have dropped the
// dirty pages and marked them clean), and what precedes them was
// fsynced by earlier groups. Two failures are not undone, and leave the
// WAL refusing appends until it is closed and reopened (which replays
// what is really on disk): one whose bytes cannot be removed, and under
// SyncInterval or SyncNever a failed fsync, which may have lost records
// already acknowledged.
func (w *WAL) Append(rec []byte) error { return w.AppendAsync(rec).Wait() }

// AppendAsync enqueues rec like Append but returns at once; the Pending
// reports when the record is durable. A caller can encode its next batch
// while this one is being written. AppendAsync still blocks while
// Options.MaxQueuedBytes are queued. rec is copied before AppendAsync
// returns. Records are written in the order AppendAsync and Append enqueue
// them.
func (w *WAL) AppendAsync(rec []byte) Pending {
	if len(rec) > MaxRecordSize {
		return failedPending(fmt.Errorf("wal: record of %d bytes is larger than MaxRecordSize (%d); split the batch", len(rec), MaxRecordSize))
	}
	h := frameHeader(rec) // checksum outside the lock
	n := int64(recHeaderSize + len(rec))
	w.mu.Lock()
	for {
		if err := w.usableLocked(); err != nil {
			w.mu.Unlock()
			return failedPending(err)
		}
		if len(w.queue) == 0 || int64(len(w.queue))+n <= w.opts.MaxQueuedBytes {
			break
		}
		w.space.Wait()
	}
	if w.segSize > segHeaderSize && w.segSize+n > w.opts.SegmentSize {
		w.cutLocked()
	}
	w.segSize += n
	w.queue = append(w.queue, h[:]...)
	w.queue = append(w.queue, rec...)
	g := w.groupLocked()
	w.mu.Unlock()
	w.nRecords.Add(1)
	w.signal()
	return Pending{g}
}

// cutLocked makes the next queued byte start a new segment.
func (w *WAL) cutLocked() {
	w.seg++
	w.segSize = segHeaderSize
	w.cuts = append(w.cuts, cut{off: len(w.queue), seg: w.seg})
}

func (w *WAL) groupLocked() *group {
	if w.group == nil {
		w.group = &group{done: make(chan struct{})}
	}
	return w.group
}

// signal wakes the writer goroutine without blocking.
func (w *WAL) signal() {
	select {
	case w.work <- struct{}{}:
	default:
	}
}

// Cut closes the current segment (fsyncing it unless the policy is
// SyncNever) and starts a new one, and returns the new segment's index.
// Records appended after Cut returns go to segments with at least that
// index, and every segment before it is complete on disk, so a checkpoint
// may read them.
func (w *WAL) Cut() (int, error) {
	w.mu.Lock()
	if err := w.usableLocked(); err != nil {
		w.mu.Unlock()
		return 0, err
	}
	w.cutLocked()
	idx := w.seg
	g := w.groupLocked()
	w.mu.Unlock()
	w.signal()
	if err := (Pending{g}).Wait(); err != nil {
		return 0, err
	}
	return idx, nil
}

// Truncate deletes the segments with index < before, oldest first, then
// syncs the directory. It refuses to delete the segment being written:
// before may be at most the index Cut last returned (or the active
// segment's index); before Replay, at most the last segment's index. The
// directory therefore never becomes empty, and segment indexes keep
// increasing across restarts. The engine calls Truncate after a
// checkpoint made the segments redundant.
func (w *WAL) Truncate(before int) error {
	w.opMu.Lock()
	defer w.opMu.Unlock()
	w.mu.Lock()
	// Before Replay there is no active segment yet: keep the last one, so
	// the directory never empties and indexes are never reused.
	closed, limit := w.closed, w.replayLast
	if w.started {
		limit = w.fileSeg
	}
	w.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if before > limit {
		return fmt.Errorf("wal: cannot truncate segments before %d: segment %d is still being written", before, limit)
	}
	segs, err := listSegments(w.fs, w.opts.Dir)
	if err != nil {
		return err
	}
	removed := false
	for _, idx := range segs {
		if idx >= before {
			break
		}
		if err := w.fs.Remove(segmentPath(w.opts.Dir, idx)); err != nil {
			return fmt.Errorf("wal: cannot delete segment: %w", err)
		}
		removed = true
	}
	if removed {
		if err := w.fs.SyncDir(w.opts.Dir); err != nil {
			return fmt.Errorf("wal: cannot sync directory %s after deleting segments: %w", w.opts.Dir, err)
		}
	}
	return nil
}

// Segments returns the indexes of the first and last segment files in the
// directory, or -1, -1 if there are none.
func (w *WAL) Segments() (first, last int, err error) {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return 0, 0, ErrClosed
	}
	segs, err := listSegments(w.fs, w.opts.Dir)
	if err != nil {
		return 0, 0, err
	}
	if len(segs) == 0 {
		return -1, -1, nil
	}
	return segs[0], segs[len(segs)-1], nil
}

// Close writes what is queued, fsyncs the active segment (under every
// policy, SyncNever included) and closes it. Records enqueued before Close
// are written; later calls get ErrClosed. Close waits for a Replay or
// Truncate in progress. It returns the WAL's sticky failure, if any.
func (w *WAL) Close() error {
	// Wait for a running Replay or Truncate: Replay may be starting the
	// active segment, which the writer goroutine closes below.
	w.opMu.Lock()
	defer w.opMu.Unlock()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.closed = true
	w.space.Broadcast()
	w.mu.Unlock()
	w.signal()
	<-w.flusherDone
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return fmt.Errorf("wal: close %s: %w", w.opts.Dir, w.err)
	}
	return nil
}
