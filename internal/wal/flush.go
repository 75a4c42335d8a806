package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// The writer goroutine.
//
// Group commit works like a bus: producers (Append, AppendAsync, Cut)
// frame their record outside the lock, then under the lock copy it onto
// the queue and take a reference to the queue's group. The writer takes
// the whole queue at once (swapping in the spare buffer), writes it with
// one write(2) per segment it touches, fsyncs once (SyncBatch), and closes
// the group's channel, releasing every producer in the group. While it
// writes and fsyncs, the next group fills, so under load each fsync
// carries everything that arrived during the previous one and the fsync
// rate adapts to the disk's latency without a timer.
//
// Rejected alternatives: a leader/follower scheme (the first waiting
// producer writes for everyone) saves one goroutine handoff, but puts the
// write and fsync latency on a random caller and makes Close and the
// interval fsync harder to reason about; a handoff costs microseconds
// against fsyncs of 100 µs or more. Writing the next group while the
// previous fsync runs (as Pebble's LogWriter does) would raise throughput
// on slow-sync disks, at the cost of tracking which write each fsync
// covers; one write-then-fsync loop already saturates this machine's CPU
// before its disk.

// maxSpare is the largest queue buffer kept for reuse: one huge record
// must not pin its buffer for the life of the WAL.
const maxSpare = 16 << 20

// cut marks the offset in the queue where segment seg starts.
type cut struct {
	off int
	seg int
}

// group is the unit of group commit: the records one write (and fsync)
// made durable. err is written before done is closed.
type group struct {
	done chan struct{}
	err  error
}

// Pending is a record accepted by AppendAsync.
type Pending struct{ g *group }

// Wait blocks until the record is durable per the sync policy and returns
// what Append would have returned.
func (p Pending) Wait() error {
	<-p.g.done
	return p.g.err
}

// Done returns a channel that is closed once Wait would not block.
func (p Pending) Done() <-chan struct{} { return p.g.done }

func failedPending(err error) Pending {
	g := &group{done: make(chan struct{}), err: err}
	close(g.done)
	return Pending{g}
}

func (w *WAL) flushLoop() {
	defer close(w.flusherDone)
	var tick <-chan time.Time
	if w.opts.Sync == SyncInterval {
		t := time.NewTicker(w.opts.SyncInterval)
		defer t.Stop()
		tick = t.C
	}
	// retry is armed while the WAL has undone a failure and waits to
	// write again.
	var retry <-chan time.Time
	arm := func() {
		w.mu.Lock()
		again := w.err != nil && w.recoverable && !w.closed
		w.mu.Unlock()
		if again && retry == nil {
			retry = time.After(w.opts.RetryInterval)
		}
	}
	for {
		select {
		case <-w.work:
			if w.flush() {
				return
			}
		case <-tick:
			w.intervalSync()
		case <-retry:
			retry = nil
			// First fail what was queued before the failure was
			// recorded: its segment accounting is the old layout's.
			if w.flush() {
				return
			}
			w.recover()
		}
		arm()
	}
}

// flush writes one group. It reports whether the WAL is closed, in which
// case the segment has been fsynced and closed and the loop ends.
func (w *WAL) flush() (closed bool) {
	w.mu.Lock()
	buf, cuts, g := w.queue, w.cuts, w.group
	w.queue, w.cuts, w.group = w.spare[:0], w.spareCuts[:0], nil
	w.spare, w.spareCuts = nil, nil
	closed, failed := w.closed, w.err
	w.space.Broadcast()
	w.mu.Unlock()

	var err error
	if failed != nil {
		// Records queued just before an earlier batch failed.
		err = fmt.Errorf("wal: not written after an earlier failure: %w", failed)
	} else if len(buf) > 0 || len(cuts) > 0 {
		startSeg, startSize := w.fileSeg, w.fileSize
		w.syncFailed = false
		err = w.writeOut(buf, cuts)
		if err == nil && w.opts.Sync == SyncBatch && w.unsynced {
			err = w.syncFile()
		}
		if err != nil {
			w.nFailures.Add(1)
			// Under SyncBatch a failed fsync concerns this group's
			// bytes only (every earlier group was fsynced); under the
			// other policies it may concern acknowledged records.
			recoverable := w.opts.Sync == SyncBatch || !w.syncFailed
			if uerr := w.undo(startSeg, startSize); uerr != nil {
				w.log.Error("wal: cannot remove the bytes of a failed write", "dir", w.opts.Dir, "err", uerr)
				recoverable = false
			}
			w.fail(err, recoverable)
		}
	}
	if closed {
		if cerr := w.closeFile(err == nil); err == nil && cerr != nil {
			err = cerr
			w.fail(err, false)
		}
	}
	if g != nil {
		g.err = err
		close(g.done)
	}

	w.mu.Lock()
	if cap(buf) <= maxSpare {
		w.spare = buf[:0]
	}
	w.spareCuts = cuts[:0]
	w.mu.Unlock()
	return closed
}

// writeOut writes buf, starting a new segment at each cut.
func (w *WAL) writeOut(buf []byte, cuts []cut) error {
	prev := 0
	for _, c := range cuts {
		if err := w.write(buf[prev:c.off]); err != nil {
			return err
		}
		prev = c.off
		if err := w.rotate(c.seg); err != nil {
			return err
		}
	}
	return w.write(buf[prev:])
}

func (w *WAL) write(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	n, err := w.file.Write(p)
	w.fileSize += int64(n)
	if n > 0 {
		w.unsynced = true
	}
	if err != nil {
		return fmt.Errorf("wal: cannot write %d bytes to segment %s: %w", len(p), segmentName(w.fileSeg), err)
	}
	w.nWrites.Add(1)
	w.nBytes.Add(int64(len(p)))
	return nil
}

func (w *WAL) syncFile() error {
	if err := w.file.Sync(); err != nil {
		w.syncFailed = true
		return fmt.Errorf("wal: cannot fsync segment %s: %w", segmentName(w.fileSeg), err)
	}
	w.unsynced = false
	w.nSyncs.Add(1)
	return nil
}

// rotate finishes the active segment and creates segment next. The old
// segment is fsynced before the new one receives a byte (unless the
// policy is SyncNever), so only the last segment can ever have a torn
// tail.
func (w *WAL) rotate(next int) error {
	if w.opts.Sync != SyncNever {
		if err := w.syncFile(); err != nil {
			return err
		}
	}
	if err := w.closeFile(false); err != nil {
		return err
	}
	f, err := w.createSegment(next)
	if err != nil {
		return err
	}
	w.file, w.fileSize, w.unsynced = f, segHeaderSize, false
	w.mu.Lock()
	w.fileSeg = next
	w.mu.Unlock()
	return nil
}

// closeFile closes the active segment, fsyncing it first if sync is set.
func (w *WAL) closeFile(sync bool) error {
	if w.file == nil {
		return nil
	}
	var err error
	if sync {
		err = w.syncFile()
	}
	if cerr := w.file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("wal: cannot close segment %s: %w", segmentName(w.fileSeg), cerr)
	}
	w.file = nil
	return err
}

// intervalSync is the SyncInterval timer's work.
func (w *WAL) intervalSync() {
	// Taking mu first orders this after startSegment (run by Replay on
	// another goroutine) published w.file.
	w.mu.Lock()
	ok := w.started && w.err == nil
	w.mu.Unlock()
	if !ok || !w.unsynced || w.file == nil {
		return
	}
	if err := w.syncFile(); err != nil {
		// Records acknowledged since the last fsync may be lost: only a
		// replay of what is on disk can say.
		w.nFailures.Add(1)
		w.fail(err, false)
	}
}

// fail records the WAL's first failure; from then on it refuses appends,
// until recover succeeds if the failure is recoverable (the failed
// group's bytes were removed), else until it is reopened.
func (w *WAL) fail(err error, recoverable bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.space.Broadcast()
	if w.err != nil {
		return
	}
	w.err, w.recoverable = err, recoverable
	w.failed.Store(true)
	if recoverable {
		w.log.Error("wal: write failed; its records were removed and appends are refused until it can write again", "dir", w.opts.Dir, "retry_every", w.opts.RetryInterval, "err", err)
	} else {
		w.log.Error("wal: write failed; refusing further appends until the WAL is reopened", "dir", w.opts.Dir, "err", err)
	}
}

// undo removes from the segment files every byte written since the
// group started at size startSize of segment startSeg: the segments the
// group created are deleted and startSeg is truncated back. The records
// of a failed group are then gone, whole ones included, so that a
// restart does not replay what was never acknowledged. The active file
// is closed; recover starts a new one. The truncation and the deletions
// are made durable here if the disk allows it, and in any case by
// recover before any append is accepted again.
func (w *WAL) undo(startSeg int, startSize int64) error {
	var err error
	truncated := false
	if w.file != nil {
		if w.fileSeg == startSeg {
			err, truncated = w.file.Truncate(startSize), true
			if err == nil {
				w.file.Sync() // best effort: recover fsyncs it again
			}
		}
		w.file.Close()
		w.file = nil
	}
	w.unsynced = false
	if err != nil {
		return fmt.Errorf("wal: cannot truncate segment %s after a failed write: %w", segmentName(startSeg), err)
	}
	segs, err := listSegments(w.fs, w.opts.Dir)
	if err != nil {
		return err
	}
	for _, idx := range segs {
		if idx > startSeg {
			if err := w.fs.Remove(segmentPath(w.opts.Dir, idx)); err != nil {
				return fmt.Errorf("wal: cannot delete segment %s: %w", segmentName(idx), err)
			}
		}
	}
	if !truncated {
		// The group rotated out of startSeg (which rotate closed).
		f, err := w.fs.OpenFile(segmentPath(w.opts.Dir, startSeg), os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("wal: cannot reopen segment %s: %w", segmentName(startSeg), err)
		}
		err = f.Truncate(startSize)
		f.Close()
		if err != nil {
			return fmt.Errorf("wal: cannot truncate segment %s after a failed write: %w", segmentName(startSeg), err)
		}
	}
	w.mu.Lock()
	w.fileSeg = startSeg
	w.mu.Unlock()
	w.fileSize = startSize
	return nil
}

// recover tries to start a new segment after an undone failure and, if
// it can, clears the failure so that appends are accepted again. A
// segment file it could only partly create is deleted, so that the next
// try can create it.
func (w *WAL) recover() {
	w.mu.Lock()
	ok := w.err != nil && w.recoverable && !w.closed && len(w.queue) == 0
	next := w.fileSeg + 1
	w.mu.Unlock()
	if !ok {
		return
	}
	// What undo removed must stay removed before anything follows it.
	if err := w.syncUndone(next - 1); err != nil {
		w.log.Debug("wal: still cannot write", "dir", w.opts.Dir, "err", err)
		return
	}
	f, err := w.createSegment(next)
	if err != nil {
		if rerr := w.fs.Remove(segmentPath(w.opts.Dir, next)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			w.log.Error("wal: cannot delete a partly created segment", "segment", segmentName(next), "err", rerr)
		}
		w.log.Debug("wal: still cannot write", "dir", w.opts.Dir, "err", err)
		return
	}
	w.mu.Lock()
	w.file, w.fileSize, w.unsynced = f, segHeaderSize, false
	w.fileSeg, w.seg, w.segSize = next, next, segHeaderSize
	w.cuts = w.cuts[:0]
	failed := w.err
	w.err, w.recoverable = nil, false
	w.failed.Store(false)
	w.mu.Unlock()
	w.nRecoveries.Add(1)
	w.log.Info("wal: writing again after a failure", "dir", w.opts.Dir, "segment", segmentName(next), "after", failed)
}

// syncUndone makes undo's truncation of segment seg and its deletions
// durable.
func (w *WAL) syncUndone(seg int) error {
	f, err := w.fs.OpenFile(segmentPath(w.opts.Dir, seg), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("wal: cannot reopen segment %s: %w", segmentName(seg), err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fmt.Errorf("wal: cannot fsync segment %s after removing a failed write: %w", segmentName(seg), err)
	}
	if err := w.fs.SyncDir(w.opts.Dir); err != nil {
		return fmt.Errorf("wal: cannot sync directory %s: %w", w.opts.Dir, err)
	}
	return nil
}
