package event

import (
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/wal"
)

// failingDayFS is the operating system's file system, except that while
// failing is set, making a directory whose path contains day fails with
// ENOSPC, as on a full disk.
type failingDayFS struct {
	wal.FS
	day     string
	failing atomic.Bool
}

func (f *failingDayFS) MkdirAll(dir string, perm os.FileMode) error {
	if f.failing.Load() && strings.Contains(dir, f.day) {
		return &os.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOSPC}
	}
	return f.FS.MkdirAll(dir, perm)
}

// A day that cannot be started (a full disk at midnight) fails the
// commits, which go on failing without harm until it can, and then
// succeed: before, the second commit dereferenced the closed day's nil
// log and crashed the server.
func TestRolloverFailureThenRecovery(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Date(2026, 11, 23, 23, 0, 0, 0, time.UTC)}
	fs := &failingDayFS{FS: wal.OS(), day: "20261124"}
	s, err := Open(Options{Dir: dir, Now: c.now, Sync: wal.SyncNever, Retention: 2 * 24 * time.Hour, FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	commit(t, s, Batch{Events: []Event{problem(10, 100, "before midnight")}})
	c.t = c.t.Add(2 * time.Hour)
	fs.failing.Store(true)
	for i := range 3 {
		b := Batch{Events: []Event{problem(20, 200, "after midnight")}}
		if err := s.Commit(&b); err == nil {
			t.Fatalf("commit %d succeeded while the new day cannot be made", i)
		}
	}
	fs.failing.Store(false)
	commit(t, s, Batch{Events: []Event{problem(30, 300, "space back")}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, c)
	defer s.Close()
	var names []string
	for _, e := range s.OpenProblems() {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "before midnight,space back" {
		t.Fatalf("open problems after reopen: %q", names)
	}
}
