package wal

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// logCapture is an slog.Handler that keeps what was logged.
type logCapture struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, r.Clone())
	h.mu.Unlock()
	return nil
}
func (h *logCapture) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logCapture) WithGroup(string) slog.Handler      { return h }

func (h *logCapture) take() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, r := range h.recs {
		m := map[string]any{"msg": r.Message, "level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.Any(); return true })
		out = append(out, m)
	}
	h.recs = nil
	return out
}

// twoSegments writes records 0-4 into segment 1 and 5-9 into segment 2
// and returns the filesystem, the records, and the offsets at which each
// record starts within its segment.
func twoSegments(t *testing.T) (*memFS, [][]byte, []int64) {
	t.Helper()
	fs := newMemFS()
	w := openMem(t, fs, Options{})
	var recs [][]byte
	var offs []int64
	off := int64(segHeaderSize)
	for i := range 10 {
		if i == 5 {
			if _, err := w.Cut(); err != nil {
				t.Fatal(err)
			}
			off = segHeaderSize
		}
		recs = append(recs, testRec(i))
		offs = append(offs, off)
		off += recHeaderSize + int64(len(testRec(i)))
		mustAppend(t, w, testRec(i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, recs, offs
}

func TestReplayCutsTornTail(t *testing.T) {
	seg2 := segmentPath(testDir, 2)
	f := func(name string, mutate func(seg []byte, offs []int64) []byte, keep int, reason string) {
		t.Run(name, func(t *testing.T) {
			fs, recs, offs := twoSegments(t)
			orig := fs.fileBytes(seg2)
			fs.setFileBytes(seg2, mutate(bytes.Clone(orig), offs))
			// The good prefix: everything up to the first kept-out record.
			wantSize := int64(len(orig))
			if keep < 10 {
				wantSize = offs[keep]
				if keep == 5 {
					wantSize = 0
				}
			}
			if strings.Contains(name, "header only") {
				wantSize = segHeaderSize
			}
			logs := &logCapture{}
			o := Options{Logger: slog.New(logs)}
			w := openMem(t, fs, o)
			got := replayAll(t, w)
			if diff := cmp.Diff(recs[:keep], got, recsEqual); diff != "" {
				t.Fatalf("replay (-want +got):\n%s", diff)
			}
			if reason == "" {
				if l := logs.take(); len(l) != 0 {
					t.Fatalf("clean segment logged %v", l)
				}
				wantSize = int64(len(fs.fileBytes(seg2)))
			} else {
				l := logs.take()
				if len(l) != 1 || l[0]["segment"] != seg2 || l[0]["offset"] != wantSize || l[0]["level"] != "WARN" ||
					!strings.Contains(l[0]["reason"].(string), reason) {
					t.Fatalf("logged %v; want one warning naming %s, offset %d and reason %q", l, seg2, wantSize, reason)
				}
			}
			if n := int64(len(fs.fileBytes(seg2))); n != wantSize {
				t.Fatalf("last segment is %d bytes after replay; want it cut to %d", n, wantSize)
			}
			// The cut was fsynced: a crash now still finds it cut.
			if n := int64(len(fs.CrashClone(keepSynced, nil).fileBytes(seg2))); n != wantSize {
				t.Fatalf("after a crash the last segment is %d bytes; want %d", n, wantSize)
			}
			// Appending after the cut and replaying again is clean.
			mustAppend(t, w, []byte("new"))
			w.Close()
			got = reopenReplay(t, fs, o)
			if diff := cmp.Diff(append(recs[:keep:keep], []byte("new")), got, recsEqual); diff != "" {
				t.Fatalf("replay after append (-want +got):\n%s", diff)
			}
			if l := logs.take(); len(l) != 0 {
				t.Fatalf("second replay logged %v", l)
			}
		})
	}
	last := func(offs []int64) int64 { return offs[9] }
	f("clean", func(s []byte, _ []int64) []byte { return s }, 10, "")
	f("partial record header", func(s []byte, _ []int64) []byte { return append(s, 9, 0, 0) }, 10, "partial record header")
	f("partial payload", func(s []byte, _ []int64) []byte {
		h := frameHeader(bytes.Repeat([]byte("p"), 100))
		return append(append(s, h[:]...), "pppppppppp"...)
	}, 10, "runs past the end")
	f("last record cut short", func(s []byte, _ []int64) []byte { return s[:len(s)-3] }, 9, "runs past the end")
	f("bad checksum at tail", func(s []byte, _ []int64) []byte { s[len(s)-1] ^= 1; return s }, 9, "checksum mismatch")
	f("bad checksum field", func(s []byte, o []int64) []byte { s[last(o)+5] ^= 0x40; return s }, 9, "checksum mismatch")
	f("length field damaged", func(s []byte, o []int64) []byte { s[last(o)] ^= 0x02; return s }, 9, "runs past the end")
	f("zero-filled tail", func(s []byte, _ []int64) []byte { return append(s, make([]byte, 4096)...) }, 10, "zero-filled record header")
	f("short zero tail", func(s []byte, _ []int64) []byte { return append(s, make([]byte, 5)...) }, 10, "partial record header")
	f("zeros over last record", func(s []byte, o []int64) []byte { clear(s[last(o):]); return s }, 9, "zero-filled record header")
	f("huge length", func(s []byte, _ []int64) []byte {
		return binary.LittleEndian.AppendUint32(append(s, 0xff, 0xff, 0xff, 0xff), 7)
	}, 10, "runs past the end")
	// Damage followed by intact records: a crash can leave this too, since
	// the kernel writes back the pages of one unsynced write in any order.
	f("checksum mismatch mid-segment", func(s []byte, o []int64) []byte { s[o[7]+recHeaderSize] ^= 1; return s }, 7, "checksum mismatch")
	f("partial segment header", func(s []byte, _ []int64) []byte { return s[:5] }, 5, "partial segment header")
	f("zeroed segment", func(s []byte, _ []int64) []byte { clear(s); return s }, 5, "zeroed segment header")
	f("empty segment", func([]byte, []int64) []byte { return nil }, 5, "")
	f("header only", func(s []byte, _ []int64) []byte { return s[:segHeaderSize] }, 5, "")
}

func TestReplayCorruptionIsAnError(t *testing.T) {
	f := func(name string, seg int, mutate func(s []byte, offs []int64) []byte, wantOff func(offs []int64, size int) int64, reason string) {
		t.Run(name, func(t *testing.T) {
			fs, _, offs := twoSegments(t)
			path := segmentPath(testDir, seg)
			orig := fs.fileBytes(path)
			segOffs := offs[:5]
			if seg == 2 {
				segOffs = offs[5:]
			}
			mutated := mutate(bytes.Clone(orig), segOffs)
			fs.setFileBytes(path, mutated)
			w := openMem(t, fs, Options{})
			defer w.Close()
			err := w.Replay(func([]byte) error { return nil })
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Replay = %v; want ErrCorrupt", err)
			}
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.Segment != path || ce.Offset != wantOff(segOffs, len(orig)) || !strings.Contains(ce.Reason, reason) {
				t.Fatalf("Replay = %#v; want segment %s, offset %d, reason %q", ce, path, wantOff(segOffs, len(orig)), reason)
			}
			if !strings.Contains(err.Error(), segmentName(seg)) {
				t.Fatalf("error %q does not name the file", err)
			}
			if err := w.Append([]byte("x")); !errors.Is(err, ErrNotReplayed) {
				t.Fatalf("Append after failed Replay = %v; want ErrNotReplayed", err)
			}
			if !bytes.Equal(fs.fileBytes(path), mutated) {
				t.Fatal("Replay changed the corrupt segment")
			}
		})
	}
	at := func(i int) func([]int64, int) int64 { return func(o []int64, _ int) int64 { return o[i] } }
	end := func(_ []int64, size int) int64 { return int64(size) }
	zero := func([]int64, int) int64 { return 0 }
	f("flipped payload byte", 1, func(s []byte, o []int64) []byte { s[o[2]+recHeaderSize+3] ^= 1; return s }, at(2), "checksum mismatch")
	f("cut mid-record", 1, func(s []byte, _ []int64) []byte { return s[:len(s)-3] }, at(4), "runs past the end")
	f("zero tail", 1, func(s []byte, _ []int64) []byte { return append(s, make([]byte, 100)...) }, end, "zero-filled")
	f("partial header", 1, func(s []byte, _ []int64) []byte { return append(s, 1) }, end, "partial record header")
	f("partial segment header", 1, func(s []byte, _ []int64) []byte { return s[:3] }, zero, "partial segment header")
	f("bad magic", 1, func(s []byte, _ []int64) []byte { s[0] = 'X'; return s }, zero, "not a WAL segment")
	// In the last segment a wrong magic or version is not a crash artefact.
	f("bad magic in last", 2, func(s []byte, _ []int64) []byte { s[1] = 'X'; return s }, zero, "not a WAL segment")
	f("future version in last", 2, func(s []byte, _ []int64) []byte { s[4] = 2; return s }, zero, "unsupported segment version 2")
}

func TestReplayMissingSegment(t *testing.T) {
	fs := newMemFS()
	w := openMem(t, fs, Options{})
	for range 3 {
		mustAppend(t, w, []byte("r"))
		if _, err := w.Cut(); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if err := fs.Remove(segmentPath(testDir, 2)); err != nil {
		t.Fatal(err)
	}
	w = openMem(t, fs, Options{})
	defer w.Close()
	err := w.Replay(func([]byte) error { return nil })
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.Segment != segmentPath(testDir, 2) || !strings.Contains(ce.Reason, "missing") {
		t.Fatalf("Replay = %v; want a CorruptionError for the missing segment 2", err)
	}
}

func TestReplayCallbackError(t *testing.T) {
	fs, _, offs := twoSegments(t)
	w := openMem(t, fs, Options{})
	defer w.Close()
	stop := errors.New("stop")
	n := 0
	err := w.Replay(func([]byte) error {
		if n++; n == 7 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("Replay = %v; want the callback's error", err)
	}
	if !strings.Contains(err.Error(), segmentName(2)) || !strings.Contains(err.Error(), "offset "+strconv.FormatInt(offs[6], 10)) {
		t.Fatalf("error %q should name segment 2 and offset %d", err, offs[6])
	}
	if err := w.Append([]byte("x")); !errors.Is(err, ErrNotReplayed) {
		t.Fatalf("Append after failed Replay = %v; want ErrNotReplayed", err)
	}
	// Nothing was cut: the next replay sees everything.
	if got := replayAll(t, w); len(got) != 10 {
		t.Fatalf("replayed %d records after a callback error; want 10", len(got))
	}
}
