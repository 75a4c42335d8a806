package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/wal"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func open(t *testing.T, dir string, c *clock, max int) *Log {
	t.Helper()
	l, err := Open(Options{Dir: dir, Sync: wal.SyncBatch, Now: c.now, MaxRecords: max})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func names(l *Log, desc bool) []string {
	var out []string
	l.Walk(desc, func(r *Record) bool { out = append(out, r.ResourceName); return true })
	return out
}

func rec(name string, clock int64) Record {
	return Record{ID: NewCUID(time.Unix(clock, 0)), Clock: clock, ResourceName: name, Action: ActionAdd, ResourceType: ResourceHostGroup, RecordSetID: "s"}
}

func TestAppendReplayAndOrder(t *testing.T) { eachBackend(t, testAppendReplayAndOrder) }

func testAppendReplayAndOrder(t *testing.T, open opener) {
	dir := t.TempDir()
	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := &clock{day}
	l := open(t, dir, c, 0)
	if err := l.Append([]Record{rec("a", day.Unix()), rec("c", day.Unix()+2)}); err != nil {
		t.Fatal(err)
	}
	// A request that waited behind a later one still reads in clock order.
	if err := l.Append([]Record{rec("b", day.Unix()+1)}); err != nil {
		t.Fatal(err)
	}
	c.t = day.Add(24 * time.Hour) // the next day: a second directory
	if err := l.Append([]Record{rec("d", c.t.Unix())}); err != nil {
		t.Fatal(err)
	}
	if got := names(l, false); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("walk: %v", got)
	}
	if got := names(l, true); !slices.Equal(got, []string{"d", "c", "b", "a"}) {
		t.Fatalf("walk newest first: %v", got)
	}
	if days, _ := l.b.Days(); !slices.Equal(days, []string{"20260301", "20260302"}) {
		t.Fatalf("days: %v", days)
	}
	l.Close()
	if l.opts.Postgres == nil {
		ents, _ := os.ReadDir(dir)
		if len(ents) != 2 || ents[0].Name() != "20260301" || ents[1].Name() != "20260302" {
			t.Fatalf("day directories: %v", ents)
		}
	}
	l = open(t, dir, c, 0)
	if got := names(l, false); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("after reopening: %v", got)
	}
}

func TestRetentionDropsWholeDays(t *testing.T) { eachBackend(t, testRetentionDropsWholeDays) }

func testRetentionDropsWholeDays(t *testing.T, open opener) {
	dir := t.TempDir()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := &clock{start}
	l := open(t, dir, c, 0)
	for i := range 4 {
		c.t = start.Add(time.Duration(i) * 24 * time.Hour)
		if err := l.Append([]Record{rec(c.t.Format("0102"), c.t.Unix())}); err != nil {
			t.Fatal(err)
		}
	}
	l.SetRetention(48 * time.Hour)
	// Now 03-04 12:00: records older than 03-02 12:00 go; day 03-01
	// ended at 03-02 00:00, before the cutoff: deleted; 03-02 stays on
	// disk (it holds a record at 12:00, at the cutoff).
	n, err := l.ApplyRetention()
	if err != nil || n != 1 {
		t.Fatalf("ApplyRetention: %d, %v", n, err)
	}
	if got := names(l, false); !slices.Equal(got, []string{"0302", "0303", "0304"}) {
		t.Fatalf("kept: %v", got)
	}
	if days, _ := l.b.Days(); len(days) == 0 || days[0] != "20260302" {
		t.Fatalf("days after retention: %v", days)
	}
	if l.opts.Postgres == nil {
		if _, err := os.Stat(filepath.Join(dir, "20260301")); !os.IsNotExist(err) {
			t.Fatalf("day 20260301 is still there: %v", err)
		}
	}
	l.SetRetention(0) // keep everything
	if n, _ := l.ApplyRetention(); n != 0 {
		t.Fatalf("deleted %d days with retention off", n)
	}
}

func TestMaxRecordsBoundsMemoryAndDisk(t *testing.T) {
	eachBackend(t, testMaxRecordsBoundsMemoryAndDisk)
}

func testMaxRecordsBoundsMemoryAndDisk(t *testing.T, open opener) {
	dir := t.TempDir()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := &clock{start}
	l := open(t, dir, c, 2)
	for i := range 3 {
		c.t = start.Add(time.Duration(i) * 24 * time.Hour)
		if err := l.Append([]Record{rec(c.t.Format("0102"), c.t.Unix())}); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(l, false); !slices.Equal(got, []string{"0302", "0303"}) {
		t.Fatalf("kept: %v", got)
	}
	if n, err := l.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("ApplyRetention: %d, %v", n, err)
	}
}

func TestCorruptRecordIsAnError(t *testing.T) {
	dir := t.TempDir()
	w, err := wal.Open(wal.Options{Dir: filepath.Join(dir, "20260301")})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Replay(func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := w.Append([]byte("not json")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, err = Open(Options{Dir: dir, Now: func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }})
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("Open: %v, want a corruption error", err)
	}
}

func TestCUID(t *testing.T) {
	now := time.Unix(1795937205, 0)
	a, b := NewCUID(now), NewCUID(now)
	if len(a) != 25 || a[0] != 'c' || a == b {
		t.Fatalf("CUIDs %q %q", a, b)
	}
	// The time digits come first, so CUIDs sort by time.
	if later := NewCUID(now.Add(time.Second)); later[:9] <= a[:9] {
		t.Fatalf("%q does not sort after %q", later, a)
	}
}

// TestConcurrentAppendsAndWalks appends from several goroutines while
// others read: every record arrives once, in clock order (run with
// -race).
func TestConcurrentAppendsAndWalks(t *testing.T) { eachBackend(t, testConcurrentAppendsAndWalks) }

func testConcurrentAppendsAndWalks(t *testing.T, open opener) {
	c := &clock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	l := open(t, t.TempDir(), c, 0)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if err := l.Append([]Record{rec(fmt.Sprint(g, "-", i), c.t.Unix()+int64(i%7))}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 50 {
				var last int64
				l.Walk(false, func(r *Record) bool {
					if r.Clock < last {
						t.Errorf("walk out of clock order: %d after %d", r.Clock, last)
					}
					last = r.Clock
					return true
				})
			}
		}()
	}
	wg.Wait()
	if l.Len() != 200 {
		t.Fatalf("%d records, want 200", l.Len())
	}
}
