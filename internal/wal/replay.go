package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// readChunk is the size of the reads Replay issues; records larger than it
// grow the buffer to their size (bounded by the segment's size).
const readChunk = 1 << 20

// Replay reads every segment that existed at Open, in order, and calls fn
// with each record's payload. The slice is valid only during the call.
// If fn returns an error, Replay stops and returns it, wrapped with the
// segment and offset.
//
// A torn tail in the last segment (a partial frame header or payload, a
// checksum mismatch, a zero-filled frame header, a partial or zeroed
// segment header) is what a crash leaves behind: Replay truncates the
// segment after its last good record, fsyncs it, logs the cut once with
// the segment and offset, and returns nil. Any damage in an earlier
// segment, a segment header with the wrong magic or version, or a gap in
// the segment sequence is returned as a *CorruptionError (wrapping
// ErrCorrupt): the caller decides whether to stop or to accept the loss.
//
// When Replay succeeds for the first time it creates the segment new
// records go to, and Append may be used. Replay never returns records
// appended after Open. It may be called again; it then reads the same
// segments again.
func (w *WAL) Replay(fn func(rec []byte) error) error {
	w.opMu.Lock()
	defer w.opMu.Unlock()
	w.mu.Lock()
	closed, started := w.closed, w.started
	w.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if w.replayLast >= 0 {
		segs, err := listSegments(w.fs, w.opts.Dir)
		if err != nil {
			return err
		}
		for len(segs) > 0 && segs[len(segs)-1] > w.replayLast {
			segs = segs[:len(segs)-1]
		}
		r := &segmentReader{}
		for i, idx := range segs {
			if i > 0 && idx != segs[i-1]+1 {
				return &CorruptionError{Segment: segmentPath(w.opts.Dir, segs[i-1]+1), Reason: "segment is missing"}
			}
			if err := w.replaySegment(r, idx, i == len(segs)-1, fn); err != nil {
				return err
			}
		}
	}
	if !started {
		return w.startSegment(w.seg)
	}
	return nil
}

// replaySegment replays segment idx; last says whether a torn tail may be
// cut.
func (w *WAL) replaySegment(r *segmentReader, idx int, last bool, fn func([]byte) error) error {
	path := segmentPath(w.opts.Dir, idx)
	flag := os.O_RDONLY
	if last {
		flag = os.O_RDWR
	}
	f, err := w.fs.OpenFile(path, flag, 0)
	if err != nil {
		return fmt.Errorf("wal: cannot open segment for replay: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("wal: cannot stat segment %s: %w", path, err)
	}
	size := fi.Size()
	good, dmg, err := r.read(f, size, fn)
	if err != nil {
		return fmt.Errorf("wal: replay of %s at offset %d: %w", path, good, err)
	}
	if dmg == nil {
		return nil
	}
	if !last || !dmg.torn {
		return &CorruptionError{Segment: path, Offset: good, Reason: dmg.reason}
	}
	w.log.Warn("wal: cut torn tail of the last segment after a crash",
		"segment", path, "offset", good, "dropped_bytes", size-good, "reason", dmg.reason)
	if err := f.Truncate(good); err != nil {
		return fmt.Errorf("wal: cannot truncate torn tail of %s at offset %d: %w", path, good, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: cannot fsync %s after cutting its torn tail: %w", path, err)
	}
	return nil
}

// damage describes where a segment stops being readable. torn says
// whether a crash can explain it (and so whether it may be cut in the
// last segment).
type damage struct {
	reason string
	torn   bool
}

// segmentReader reads segments through one reusable buffer.
type segmentReader struct {
	f    File
	buf  []byte // valid data is buf[r:w]
	r, w int
	left int64 // bytes of the file not yet read into buf
}

// read calls fn for each record of f (of size bytes). It returns the
// offset after the last good record, and the damage found there if the
// segment does not end cleanly. A non-nil error is an I/O error or fn's.
func (r *segmentReader) read(f File, size int64, fn func([]byte) error) (good int64, dmg *damage, err error) {
	r.f, r.r, r.w, r.left = f, 0, 0, size
	defer func() { r.f = nil }()
	if size == 0 {
		return 0, nil, nil
	}
	ok, err := r.need(segHeaderSize)
	if err != nil {
		return 0, nil, err
	}
	if !ok {
		return 0, &damage{reason: fmt.Sprintf("partial segment header (%d bytes)", size), torn: true}, nil
	}
	hdr := r.buf[r.r : r.r+segHeaderSize]
	switch {
	case allZero(hdr):
		return 0, &damage{reason: "zeroed segment header", torn: true}, nil
	case !bytes.Equal(hdr[:4], segMagic[:]):
		return 0, &damage{reason: fmt.Sprintf("not a WAL segment (magic %q)", hdr[:4])}, nil
	case binary.LittleEndian.Uint32(hdr[4:]) != segVersion:
		return 0, &damage{reason: fmt.Sprintf("unsupported segment version %d (this build reads %d)", binary.LittleEndian.Uint32(hdr[4:]), segVersion)}, nil
	}
	r.r += segHeaderSize
	good = segHeaderSize
	for {
		avail := int64(r.w-r.r) + r.left
		if avail == 0 {
			return good, nil, nil
		}
		if ok, err := r.need(recHeaderSize); err != nil {
			return good, nil, err
		} else if !ok {
			return good, &damage{reason: fmt.Sprintf("partial record header (%d bytes)", avail), torn: true}, nil
		}
		h := r.buf[r.r : r.r+recHeaderSize]
		n := binary.LittleEndian.Uint32(h[0:4])
		sum := binary.LittleEndian.Uint32(h[4:8])
		if n == 0 && sum == 0 {
			return good, &damage{reason: "zero-filled record header", torn: true}, nil
		}
		if n > MaxRecordSize || int64(n) > avail-recHeaderSize {
			return good, &damage{reason: fmt.Sprintf("record length %d runs past the end of the segment (%d bytes left)", n, avail-recHeaderSize), torn: true}, nil
		}
		if _, err := r.need(recHeaderSize + int(n)); err != nil {
			return good, nil, err
		}
		h = r.buf[r.r : r.r+recHeaderSize]
		payload := r.buf[r.r+recHeaderSize : r.r+recHeaderSize+int(n)]
		if crc32.Update(crc32.Update(0, castagnoli, h[0:4]), castagnoli, payload) != sum {
			return good, &damage{reason: "record checksum mismatch", torn: true}, nil
		}
		if err := fn(payload); err != nil {
			return good, nil, err
		}
		r.r += recHeaderSize + int(n)
		good += recHeaderSize + int64(n)
	}
}

// need makes at least n bytes available in buf[r:w]. It returns false,
// without reading, if the file does not have that many left.
func (r *segmentReader) need(n int) (bool, error) {
	if r.w-r.r >= n {
		return true, nil
	}
	if int64(r.w-r.r)+r.left < int64(n) {
		return false, nil
	}
	if r.r > 0 {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	if want := max(n, readChunk); cap(r.buf) < want {
		nb := make([]byte, want)
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	r.buf = r.buf[:cap(r.buf)]
	for r.w < n {
		m := int(min(int64(len(r.buf)-r.w), r.left))
		k, err := io.ReadFull(r.f, r.buf[r.w:r.w+m])
		r.w += k
		r.left -= int64(k)
		if err != nil {
			return false, fmt.Errorf("read: %w", err)
		}
	}
	return true, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
