package wal

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var errInjected = errors.New("injected I/O error")

// waitRecovered waits until w accepts appends again after a failure.
func waitRecovered(t *testing.T, w *WAL) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.Failure() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the WAL did not recover within 10s: %v", w.Failure())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFailedGroupLeavesNoRecord is fault 4 of issue 25 at the WAL: a
// group commit whose write fails half-way (a disk filling up) fails every
// Append of the group, and none of its records may come back at replay,
// not even the ones written whole before the failure: their appenders
// were told they failed. Before the fix they were replayed after a
// restart (the torn record alone was cut).
func TestFailedGroupLeavesNoRecord(t *testing.T) {
	for _, restart := range []string{"process", "os"} {
		t.Run("restart="+restart, func(t *testing.T) {
			fs := newMemFS()
			w := openMem(t, fs, Options{Sync: SyncBatch, RetryInterval: time.Hour})
			mustAppend(t, w, []byte("acknowledged"))
			// Hold the writer in the write of "slow" until three more
			// records are queued behind it: they form one group.
			var mu sync.Mutex
			writes := 0
			entered, release := make(chan struct{}), make(chan struct{})
			fs.setInject(func(op fsOp, _ string) error {
				if op != opWrite {
					return nil
				}
				mu.Lock()
				writes++
				n := writes
				mu.Unlock()
				switch n {
				case 1:
					close(entered)
					<-release
				case 2:
					// Two records and a half fit on the disk.
					return shortWrite{n: 2*(recHeaderSize+len("group-0")) + 5, err: syscall.ENOSPC}
				}
				return nil
			})
			slow := w.AppendAsync([]byte("slow"))
			<-entered
			var group []Pending
			for i := range 3 {
				group = append(group, w.AppendAsync(fmt.Appendf(nil, "group-%d", i)))
			}
			close(release)
			if err := slow.Wait(); err != nil {
				t.Fatalf("the record before the failing group: %v", err)
			}
			for i, p := range group {
				if err := p.Wait(); !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("group record %d: %v, want ENOSPC", i, err)
				}
			}
			if err := w.Append([]byte("refused")); err == nil {
				t.Fatal("an Append right after the failure was accepted")
			}
			w.Close()
			after := fs
			if restart == "os" {
				after = fs.CrashClone(keepSynced, nil)
			}
			got := reopenReplay(t, after, Options{})
			want := [][]byte{[]byte("acknowledged"), []byte("slow")}
			if diff := cmp.Diff(want, got, recsEqual); diff != "" {
				t.Fatalf("replay after a failed group (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecoversAfterFailure is fault 3 of issue 25 at the WAL: after a
// failed write or fsync the WAL refuses appends until it can write again,
// and then accepts them without being reopened; the replay holds what
// was acknowledged before and after, and nothing of the failed group.
func TestRecoversAfterFailure(t *testing.T) {
	f := func(name string, op fsOp, segSize int64, rec []byte) {
		t.Run(name, func(t *testing.T) {
			fs := newMemFS()
			w := openMem(t, fs, Options{Sync: SyncBatch, SegmentSize: segSize, RetryInterval: time.Millisecond})
			defer w.Close()
			mustAppend(t, w, []byte("before"))
			var mu sync.Mutex
			failing := true
			fs.setInject(func(o fsOp, _ string) error {
				mu.Lock()
				defer mu.Unlock()
				if o == op && failing {
					return syscall.ENOSPC
				}
				return nil
			})
			if err := w.Append(rec); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Append with failing %s = %v; want ENOSPC", op, err)
			}
			// The retries fail while the fault lasts.
			time.Sleep(20 * time.Millisecond)
			if err := w.Append([]byte("refused")); err == nil {
				t.Fatal("Append accepted while every retry fails")
			}
			if w.Failure() == nil {
				t.Fatal("Failure() is nil while appends are refused")
			}
			mu.Lock()
			failing = false
			mu.Unlock()
			waitRecovered(t, w)
			mustAppend(t, w, []byte("after"))
			if st := w.Stats(); st.Failures == 0 || st.Recoveries != 1 {
				t.Errorf("Stats = %+v; want failures counted and one recovery", st)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := reopenReplay(t, fs.CrashClone(keepSynced, nil), Options{})
			want := [][]byte{[]byte("before"), []byte("after")}
			if diff := cmp.Diff(want, got, recsEqual); diff != "" {
				t.Fatalf("replay (-want +got):\n%s", diff)
			}
		})
	}
	f("write", opWrite, 0, []byte("failing"))
	f("fsync", opSync, 0, []byte("failing"))
	// A record that does not fit the segment: the rollover's new
	// segment cannot be made (its directory entry cannot be synced).
	f("rollover", opSyncDir, 64, []byte(fmt.Sprintf("%064d", 1)))
}

// TestIntervalFsyncFailureIsSticky: under SyncInterval a failed fsync may
// have lost records already acknowledged, which no retry can restore: the
// WAL refuses appends until it is reopened, and replays what the disk
// really holds.
func TestIntervalFsyncFailureIsSticky(t *testing.T) {
	fs := newMemFS()
	w := openMem(t, fs, Options{Sync: SyncInterval, SyncInterval: time.Millisecond, RetryInterval: time.Millisecond})
	mustAppend(t, w, []byte("synced"))
	for w.Stats().Syncs < 2 { // the header's, then the interval's
		time.Sleep(time.Millisecond)
	}
	fs.setInject(func(op fsOp, _ string) error {
		if op == opSync {
			return errInjected
		}
		return nil
	})
	mustAppend(t, w, []byte("acknowledged, never synced"))
	deadline := time.Now().Add(10 * time.Second)
	for w.Failure() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the interval fsync's failure was not recorded")
		}
		time.Sleep(time.Millisecond)
	}
	fs.setInject(nil)
	time.Sleep(20 * time.Millisecond) // retries would have run by now
	if err := w.Append([]byte("x")); !errors.Is(err, errInjected) {
		t.Fatalf("Append after a failed interval fsync = %v; want it refused with the first error", err)
	}
	if err := w.Close(); !errors.Is(err, errInjected) {
		t.Fatalf("Close = %v; want the failure", err)
	}
	w = openMem(t, fs.CrashClone(keepSynced, nil), Options{})
	defer w.Close()
	if got := replayAll(t, w); len(got) == 0 || string(got[0]) != "synced" {
		t.Fatalf("after reopen replayed %q; want the synced record first", got)
	}
	mustAppend(t, w, []byte("reopened"))
}
