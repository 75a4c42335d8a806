package engine

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// TestFileModesOwnerOnly creates every kind of file the engine writes
// (WAL segments, history and trend blocks, a compacted day block) under a
// umask of 0, which hides nothing, and checks that each directory is 0700
// and each file 0600: the modes are the engine's, not the umask's.
func TestFileModesOwnerOnly(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "history")
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Unix(1_700_000_000, 0)
	var vals []history.Sample
	for d := int64(0); d < 3; d++ {
		vals = append(vals, history.Sample{ItemID: 1, Clock: now.Unix() - d*86400, Type: history.Float, F: 1})
	}
	if err := s.Write(context.Background(), vals); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Compact(context.Background(), now, nil); err != nil || n == 0 {
		t.Fatalf("Compact = %d, %v; want a day compacted", n, err)
	}
	kinds := map[string]int{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, info.Mode().Perm(), want)
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			top, _, _ := strings.Cut(rel, string(filepath.Separator))
			kinds[top+"|"+filepath.Ext(rel)]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk saw WAL segments and block files of both kinds.
	for _, k := range []string{"wal|.wal", "blocks|.blk", "trends|.blk"} {
		if kinds[k] == 0 {
			t.Errorf("no %q entries in the walk: %v", k, kinds)
		}
	}
}
