package fsutil

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// noTemp fails the test if a temporary file of WriteFileAtomic is left
// in dir.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".tmp" {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func readOrAbsent(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteFileAtomic(t *testing.T) {
	f := func(name string, before map[string]string, data string) {
		t.Helper()
		dir := t.TempDir()
		for n, c := range before {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, "state")
		if err := WriteFileAtomic(path, []byte(data), 0o600); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := string(readOrAbsent(t, path)); got != data {
			t.Errorf("%s: file holds %q, want %q", name, got, data)
		}
		noTemp(t, dir)
	}
	f("new file", nil, "hello")
	f("empty data", nil, "")
	f("replaces the old file", map[string]string{"state": "an older and longer content"}, "new")
	// A crash between create and rename leaves state.tmp: the next write
	// truncates it rather than appending to it.
	f("stale temporary file", map[string]string{"state": "old", "state.tmp": "a torn write from before the crash"}, "new")
}

func TestWriteFileAtomicPerm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	if err := WriteFileAtomic(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

// TestWriteFileAtomicFailureLeavesNoTemp: whatever step fails, the target
// keeps its old content (or stays absent) and no temporary file remains.
func TestWriteFileAtomicFailureLeavesNoTemp(t *testing.T) {
	t.Run("rename fails", func(t *testing.T) {
		// A directory in the target's place: the temporary file is
		// written and synced, and the rename over it fails.
		dir := t.TempDir()
		path := filepath.Join(dir, "state")
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(path, []byte("new"), 0o600); err == nil {
			t.Fatal("rename over a directory succeeded")
		}
		if st, err := os.Stat(path); err != nil || !st.IsDir() {
			t.Errorf("target changed: %v %v", st, err)
		}
		noTemp(t, dir)
	})
	t.Run("write fails", func(t *testing.T) {
		// The temporary file's name is a link to /dev/full: the open
		// succeeds and the write fails with ENOSPC.
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full:", err)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "state")
		if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/full", path+".tmp"); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(path, []byte("new"), 0o600); err == nil {
			t.Fatal("write to /dev/full succeeded")
		}
		if got := string(readOrAbsent(t, path)); got != "old" {
			t.Errorf("target holds %q after a failed write, want the old content", got)
		}
		noTemp(t, dir)
	})
	t.Run("directory missing", func(t *testing.T) {
		dir := t.TempDir()
		if err := WriteFileAtomic(filepath.Join(dir, "no", "state"), []byte("new"), 0o600); err == nil {
			t.Fatal("write into a missing directory succeeded")
		}
		noTemp(t, dir)
	})
}

// TestWriteFileAtomicCompleteOrAbsent: a reader racing with repeated
// replacements sees no file, the whole old content or the whole new
// one, never a mixture or a prefix.
func TestWriteFileAtomicCompleteOrAbsent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	a := bytes.Repeat([]byte("a"), 256<<10)
	b := bytes.Repeat([]byte("b"), 192<<10+1)
	rounds := 20
	if testing.Short() {
		rounds = 6
	}
	last := a
	if (rounds-1)%2 == 1 {
		last = b
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := range rounds {
			data := a
			if i%2 == 1 {
				data = b
			}
			if err := WriteFileAtomic(path, data, 0o600); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	reads := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		// Not readOrAbsent: a t.Fatal here would leave the writer running.
		got, err := os.ReadFile(path)
		reads++
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("read during writes: %v", err)
			break
		}
		if err == nil && !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Errorf("reader saw a partial file of %d bytes", len(got))
			break
		}
	}
	wg.Wait()
	if got := readOrAbsent(t, path); !bytes.Equal(got, last) {
		t.Errorf("final content is %d bytes, want the last write's %d", len(got), len(last))
	}
	noTemp(t, dir)
	t.Logf("%d reads during %d writes", reads, rounds)
}

func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	if err := SyncDir(dir); err != nil {
		t.Errorf("SyncDir(%s): %v", dir, err)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncDir of a missing directory: %v, want ErrNotExist", err)
	}
}
