package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const testDir = "/data/wal"

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := checkNoWriterGoroutines(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkNoWriterGoroutines fails if a WAL was left open by a test.
func checkNoWriterGoroutines() error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		if !bytes.Contains(buf, []byte("wal.(*WAL).flushLoop")) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("leaked WAL writer goroutines (a test did not Close its WAL):\n%s", buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openMem opens a WAL on fs in testDir with o's other settings.
func openMem(t testing.TB, fs *memFS, o Options) *WAL {
	t.Helper()
	o.FS = fs
	if o.Dir == "" {
		o.Dir = testDir
	}
	w, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return w
}

// replayAll replays w and returns copies of the records.
func replayAll(t testing.TB, w *WAL) [][]byte {
	t.Helper()
	var out [][]byte
	if err := w.Replay(func(rec []byte) error {
		out = append(out, bytes.Clone(rec))
		return nil
	}); err != nil {
		t.Fatalf("Replay: %v", err)
	}
	return out
}

// reopenReplay closes nothing: it opens a second WAL over fs and replays.
func reopenReplay(t testing.TB, fs *memFS, o Options) [][]byte {
	t.Helper()
	w := openMem(t, fs, o)
	defer w.Close()
	return replayAll(t, w)
}

// testRec returns a distinct record of varying length for i.
func testRec(i int) []byte {
	return fmt.Appendf(nil, "rec-%06d-%s", i, strings.Repeat("x", i*37%101))
}

func mustAppend(t testing.TB, w *WAL, rec []byte) {
	t.Helper()
	if err := w.Append(rec); err != nil {
		t.Fatalf("Append(%q): %v", rec, err)
	}
}

// recsEqual compares records as byte strings (nil equals empty); go-cmp's
// element-by-element default is far too slow for megabyte records.
var recsEqual = cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })

func TestAppendReplayRoundTrip(t *testing.T) {
	for _, mode := range []SyncMode{SyncBatch, SyncInterval, SyncNever} {
		t.Run(mode.String(), func(t *testing.T) {
			fs := newMemFS()
			w := openMem(t, fs, Options{Sync: mode})
			if got := replayAll(t, w); len(got) != 0 {
				t.Fatalf("fresh WAL replayed %d records", len(got))
			}
			var want [][]byte
			want = append(want, []byte{}) // empty records are allowed
			mustAppend(t, w, nil)
			for i := range 100 {
				want = append(want, testRec(i))
				mustAppend(t, w, testRec(i))
			}
			st := w.Stats()
			if st.Records != 101 || st.Segments != 1 || st.Bytes == 0 {
				t.Fatalf("Stats = %+v", st)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			// Close fsyncs under every policy: a crash now loses nothing.
			got := reopenReplay(t, fs.CrashClone(keepSynced, nil), Options{})
			if diff := cmp.Diff(want, got, recsEqual); diff != "" {
				t.Fatalf("replay mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendBeforeReplay(t *testing.T) {
	fs := newMemFS()
	w := openMem(t, fs, Options{})
	mustAppend(t, w, []byte("a"))
	w.Close()

	w = openMem(t, fs, Options{})
	defer w.Close()
	if err := w.Append([]byte("b")); !errors.Is(err, ErrNotReplayed) {
		t.Fatalf("Append before Replay = %v; want ErrNotReplayed", err)
	}
	if _, err := w.Cut(); !errors.Is(err, ErrNotReplayed) {
		t.Fatalf("Cut before Replay = %v; want ErrNotReplayed", err)
	}
	if got := replayAll(t, w); len(got) != 1 {
		t.Fatalf("replayed %q", got)
	}
	mustAppend(t, w, []byte("b"))
	// A second Replay reads the segments of Open only, not our own record.
	if got := replayAll(t, w); len(got) != 1 || string(got[0]) != "a" {
		t.Fatalf("second Replay = %q; want [a]", got)
	}
}

func TestClosed(t *testing.T) {
	w := openMem(t, newMemFS(), Options{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v; want ErrClosed", name, err)
		}
	}
	f("Append", w.Append([]byte("x")))
	f("AppendAsync", w.AppendAsync([]byte("x")).Wait())
	_, err := w.Cut()
	f("Cut", err)
	f("Truncate", w.Truncate(1))
	_, _, err = w.Segments()
	f("Segments", err)
	f("Replay", w.Replay(func([]byte) error { return nil }))
	f("Close", w.Close())
}

func TestOptionsValidate(t *testing.T) {
	f := func(o Options, want string) {
		t.Helper()
		o.FS = newMemFS()
		w, err := Open(o)
		if err == nil {
			w.Close()
			t.Fatalf("Open(%+v) succeeded; want error mentioning %q", o, want)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("Open(%+v) = %v; want error mentioning %q", o, err, want)
		}
	}
	f(Options{}, "Options.Dir is empty")
	f(Options{Dir: testDir, SegmentSize: 10}, "Options.SegmentSize 10 is too small")
	f(Options{Dir: testDir, Sync: 7}, "Options.Sync 7")
	f(Options{Dir: testDir, SyncInterval: -1}, "Options.SyncInterval")
	f(Options{Dir: testDir, MaxQueuedBytes: -1}, "Options.MaxQueuedBytes")
}

func TestAppendAsyncKeepsOrder(t *testing.T) {
	fs := newMemFS()
	w := openMem(t, fs, Options{})
	var want [][]byte
	var pend []Pending
	buf := make([]byte, 0, 256)
	for i := range 2000 {
		buf = append(buf[:0], testRec(i)...)
		pend = append(pend, w.AppendAsync(buf)) // buf is reused: AppendAsync must copy
		want = append(want, testRec(i))
	}
	for i, p := range pend {
		<-p.Done()
		if err := p.Wait(); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	w.Close()
	if diff := cmp.Diff(want, reopenReplay(t, fs, Options{}), recsEqual); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestGroupCommit appends from many goroutines at once. Each fsync takes a
// little while (as on a real disk), so the writers queue up behind it and
// the next fsync covers all of them.
func TestGroupCommit(t *testing.T) {
	const writers, perWriter = 16, 100
	fs := newMemFS()
	fs.setInject(func(op fsOp, _ string) error {
		if op == opSync {
			time.Sleep(200 * time.Microsecond)
		}
		return nil
	})
	w := openMem(t, fs, Options{Sync: SyncBatch})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter {
				if err := w.Append(fmt.Appendf(nil, "w%02d-%04d", g, i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	syncs := fs.count(opSync)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	const appends = writers * perWriter
	t.Logf("%d appends, %d fsyncs (%.1f records per fsync)", appends, syncs, float64(appends)/float64(syncs))
	if syncs*4 > appends {
		t.Errorf("%d fsyncs for %d concurrent appends; group commit should need far fewer", syncs, appends)
	}

	// Every record exactly once, and each writer's records in its order.
	next := make([]int, writers)
	for _, rec := range reopenReplay(t, fs.CrashClone(keepSynced, nil), Options{}) {
		var g, i int
		if _, err := fmt.Sscanf(string(rec), "w%02d-%04d", &g, &i); err != nil {
			t.Fatalf("unexpected record %q", rec)
		}
		if i != next[g] {
			t.Fatalf("writer %d: got record %d, want %d (lost, duplicated or reordered)", g, i, next[g])
		}
		next[g]++
	}
	for g, n := range next {
		if n != perWriter {
			t.Errorf("writer %d: replayed %d records; want %d", g, n, perWriter)
		}
	}
}

// segmentRecords returns the records stored in segment idx.
func segmentRecords(t *testing.T, fs *memFS, idx int) [][]byte {
	t.Helper()
	f, err := fs.OpenFile(segmentPath(testDir, idx), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	var out [][]byte
	r := &segmentReader{}
	_, dmg, err := r.read(f, fi.Size(), func(rec []byte) error {
		out = append(out, bytes.Clone(rec))
		return nil
	})
	if err != nil || dmg != nil {
		t.Fatalf("segment %d: %v %+v", idx, err, dmg)
	}
	return out
}

func TestSegmentsRolloverCutTruncate(t *testing.T) {
	const segSize = 256
	fs := newMemFS()
	o := Options{SegmentSize: segSize}
	w := openMem(t, fs, o)
	checkSegments := func(wantFirst, wantLast int) {
		t.Helper()
		first, last, err := w.Segments()
		if err != nil || first != wantFirst || last != wantLast {
			t.Fatalf("Segments() = %d, %d, %v; want %d, %d", first, last, err, wantFirst, wantLast)
		}
	}
	checkSegments(1, 1)

	var want [][]byte
	for i := range 20 {
		rec := bytes.Repeat([]byte{byte(i)}, 50) // 58 bytes framed: 4 per segment
		want = append(want, rec)
		mustAppend(t, w, rec)
	}
	checkSegments(1, 5)
	for idx := 1; idx <= 5; idx++ {
		if n := len(fs.fileBytes(segmentPath(testDir, idx))); n > segSize {
			t.Errorf("segment %d has %d bytes; SegmentSize is %d", idx, n, segSize)
		}
		if got := segmentRecords(t, fs, idx); len(got) != 4 {
			t.Errorf("segment %d holds %d records; want 4", idx, len(got))
		}
	}

	// A record larger than a segment goes whole into a fresh one.
	big := bytes.Repeat([]byte("B"), 3*segSize)
	mustAppend(t, w, big)
	want = append(want, big)
	checkSegments(1, 6)
	if got := segmentRecords(t, fs, 6); len(got) != 1 || !bytes.Equal(got[0], big) {
		t.Fatalf("segment 6 does not hold exactly the big record")
	}
	mustAppend(t, w, []byte("after big"))
	want = append(want, []byte("after big"))
	checkSegments(1, 7)

	// Cut starts a new segment even if the current one has room.
	idx, err := w.Cut()
	if err != nil || idx != 8 {
		t.Fatalf("Cut() = %d, %v; want 8", idx, err)
	}
	checkSegments(1, 8)
	mustAppend(t, w, []byte("after cut"))
	want = append(want, []byte("after cut"))
	if got := segmentRecords(t, fs, 8); len(got) != 1 || string(got[0]) != "after cut" {
		t.Fatalf("segment 8 = %q; want the record appended after Cut", got)
	}
	if got := segmentRecords(t, fs, 7); len(got) != 1 {
		t.Fatalf("segment 7 = %q", got)
	}

	if err := w.Truncate(9); err == nil {
		t.Fatal("Truncate(9) deleted the segment being written")
	}
	if err := w.Truncate(3); err != nil {
		t.Fatal(err)
	}
	checkSegments(3, 8)
	if err := w.Truncate(2); err != nil { // nothing left below 2
		t.Fatal(err)
	}
	checkSegments(3, 8)

	// Replay of a reopened WAL sees the remaining segments, in order.
	if diff := cmp.Diff(want[8:], reopenReplay(t, fs, o), recsEqual); diff != "" {
		t.Fatalf("after Truncate(3) (-want +got):\n%s", diff)
	}
	if err := w.Truncate(8); err != nil {
		t.Fatal(err)
	}
	checkSegments(8, 9) // the reopen above started segment 9
	w.Close()

	// Before Replay, Truncate keeps at least the last segment.
	w = openMem(t, fs, o)
	defer w.Close()
	if err := w.Truncate(10); err == nil {
		t.Fatal("Truncate before Replay emptied the directory")
	}
	if err := w.Truncate(9); err != nil {
		t.Fatal(err)
	}
	checkSegments(9, 9)
	replayAll(t, w)
	checkSegments(9, 10)
}

func TestReplayLargeRecords(t *testing.T) {
	fs := newMemFS()
	w := openMem(t, fs, Options{})
	var want [][]byte
	for i, n := range []int{10, 3 << 20, 100, readChunk - recHeaderSize - segHeaderSize, readChunk, 1, 5 << 20, 7} {
		rec := bytes.Repeat([]byte{byte(i + 1)}, n)
		want = append(want, rec)
		mustAppend(t, w, rec)
	}
	w.Close()
	if diff := cmp.Diff(want, reopenReplay(t, fs, Options{}), recsEqual); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestSyncIntervalFsyncsInBackground(t *testing.T) {
	fs := newMemFS()
	w := openMem(t, fs, Options{Sync: SyncInterval, SyncInterval: time.Millisecond})
	defer w.Close()
	headerSyncs := w.Stats().Syncs // the new segment's header
	mustAppend(t, w, []byte("x"))
	// Append returned after write(2); the timer fsyncs soon after.
	deadline := time.Now().Add(10 * time.Second)
	for w.Stats().Syncs == headerSyncs {
		if time.Now().After(deadline) {
			t.Fatal("no interval fsync within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	if got := reopenReplay(t, fs.CrashClone(keepSynced, nil), Options{}); len(got) != 1 {
		t.Fatalf("after the interval fsync a crash kept %q; want [x]", got)
	}
}

func TestSyncNeverDoesNotFsync(t *testing.T) {
	fs := newMemFS()
	w := openMem(t, fs, Options{Sync: SyncNever, SegmentSize: 64})
	for i := range 10 {
		mustAppend(t, w, testRec(i))
	}
	if n := fs.count(opSync); n != 0 {
		t.Fatalf("SyncNever fsynced %d times before Close", n)
	}
	if got := reopenReplay(t, fs.CrashClone(keepSynced, nil), Options{}); len(got) != 0 {
		t.Fatalf("a crash under SyncNever kept %d records; the model keeps only synced bytes", len(got))
	}
	w.Close()
}

// TestMaxQueuedBytes: with the writer stuck in an fsync, producers may
// queue at most MaxQueuedBytes and then wait.
func TestMaxQueuedBytes(t *testing.T) {
	fs := newMemFS()
	w := openMem(t, fs, Options{MaxQueuedBytes: 100})
	release := make(chan struct{})
	entered := make(chan struct{}, 100)
	// Installed after Open, whose segment header fsync must not block.
	fs.setInject(func(op fsOp, _ string) error {
		if op == opSync {
			entered <- struct{}{}
			<-release
		}
		return nil
	})
	rec := bytes.Repeat([]byte("q"), 60) // 68 bytes framed
	p1 := w.AppendAsync(rec)
	<-entered // the writer holds record 1 in its fsync
	p2 := w.AppendAsync(rec)
	third := make(chan Pending)
	go func() { third <- w.AppendAsync(rec) }()
	select {
	case <-third:
		t.Fatal("AppendAsync returned with 136 bytes queued; MaxQueuedBytes is 100")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	p3 := <-third
	for i, p := range []Pending{p1, p2, p3} {
		if err := p.Wait(); err != nil {
			t.Fatalf("record %d: %v", i+1, err)
		}
	}
	w.Close()
	if got := reopenReplay(t, fs, Options{}); len(got) != 3 {
		t.Fatalf("replayed %d records; want 3", len(got))
	}
}

func TestOSFS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wal")
	o := Options{Dir: dir, SegmentSize: 1024}
	w, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for i := range 50 {
		want = append(want, testRec(i))
		mustAppend(t, w, testRec(i))
	}
	if _, err := w.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Tear the tail of the last segment the way a crash would.
	_, last, _ := func() (int, int, error) {
		w, _ := Open(o)
		defer w.Close()
		return w.Segments()
	}()
	f, err := os.OpenFile(filepath.Join(dir, segmentName(last)), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{9, 0, 0})
	f.Close()
	w, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var got [][]byte
	if err := w.Replay(func(rec []byte) error { got = append(got, bytes.Clone(rec)); return nil }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, recsEqual); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(filepath.Join(dir, segmentName(last))); err != nil || fi.Size() != segHeaderSize {
		t.Fatalf("torn segment after replay: %v, %v; want it cut to its header", fi, err)
	}
}

// TestSyncIntervalAfterReplay runs the interval timer while Replay starts
// the active segment (a data race before the timer took the lock).
func TestSyncIntervalAfterReplay(t *testing.T) {
	fs := newMemFS()
	w := openMem(t, fs, Options{})
	mustAppend(t, w, []byte("old"))
	w.Close()
	w = openMem(t, fs, Options{Sync: SyncInterval, SyncInterval: 100 * time.Microsecond})
	defer w.Close()
	time.Sleep(time.Millisecond) // let the timer fire before Replay
	if got := replayAll(t, w); len(got) != 1 {
		t.Fatalf("replayed %q", got)
	}
	mustAppend(t, w, []byte("new"))
}

// TestCloseWhileAppending: every Append racing Close either succeeds, and
// its record is on disk, or fails with ErrClosed.
func TestCloseWhileAppending(t *testing.T) {
	fs := newMemFS()
	w := openMem(t, fs, Options{})
	var mu sync.Mutex
	ok := map[string]bool{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				rec := fmt.Sprintf("g%d-%d", g, i)
				err := w.Append([]byte(rec))
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				mu.Lock()
				ok[rec] = true
				mu.Unlock()
			}
		})
	}
	for {
		mu.Lock()
		n := len(ok)
		mu.Unlock()
		if n >= 200 {
			break
		}
		runtime.Gosched()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	have := map[string]bool{}
	for _, rec := range reopenReplay(t, fs.CrashClone(keepSynced, nil), Options{}) {
		have[string(rec)] = true
	}
	for rec := range ok {
		if !have[rec] {
			t.Fatalf("acknowledged record %q lost", rec)
		}
	}
}
