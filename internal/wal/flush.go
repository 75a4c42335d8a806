package wal

import (
	"fmt"
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
	for {
		select {
		case <-w.work:
			if w.flush() {
				return
			}
		case <-tick:
			w.intervalSync()
		}
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
	} else {
		err = w.writeOut(buf, cuts)
		if err == nil && w.opts.Sync == SyncBatch && w.unsynced {
			err = w.syncFile()
		}
		if err != nil {
			w.fail(err)
		}
	}
	if closed {
		if cerr := w.closeFile(err == nil); err == nil && cerr != nil {
			err = cerr
			w.fail(err)
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
	if _, err := w.file.Write(p); err != nil {
		return fmt.Errorf("wal: cannot write %d bytes to segment %s: %w", len(p), segmentName(w.fileSeg), err)
	}
	w.unsynced = true
	w.nWrites.Add(1)
	w.nBytes.Add(int64(len(p)))
	return nil
}

func (w *WAL) syncFile() error {
	if err := w.file.Sync(); err != nil {
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
	w.file = f
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
		w.fail(err)
	}
}

// fail records the WAL's first failure; from then on it refuses appends.
func (w *WAL) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.space.Broadcast()
	if w.err != nil {
		return
	}
	w.err = err
	w.log.Error("wal: write failed; refusing further appends until the WAL is reopened", "dir", w.opts.Dir, "err", err)
}
