package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestLogPositionsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent-state.db")
	ctx := context.Background()
	lp, err := OpenLogPositions(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A second owner is refused while the first holds the file.
	if _, err := OpenLogPositions(ctx, path, nil); !errors.Is(err, ErrLogPositionsLocked) {
		t.Fatalf("second open: %v", err)
	}
	// Concurrent saves (grouped into shared commits) all land; a later
	// entry for the same item wins within one Save.
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := uint64(i + 1)
			if err := lp.Save([]uint64{id, id}, []LogPos{{LastLogSize: 1}, {LastLogSize: id * 100, Mtime: int64(id)}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := lp.Save([]uint64{1 << 62}, []LogPos{{LastLogSize: 1 << 62}}); err != nil {
		t.Fatal(err)
	}
	if err := lp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := lp.Save([]uint64{1}, []LogPos{{}}); err == nil {
		t.Fatal("Save after Close succeeded")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode %v, want 0600", st.Mode().Perm())
	}

	lp, err = OpenLogPositions(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lp.Close()
	if lp.Len() != 21 {
		t.Fatalf("%d positions after reopen, want 21", lp.Len())
	}
	for i := uint64(1); i <= 20; i++ {
		if p, ok := lp.Get(i); !ok || p.LastLogSize != i*100 || p.Mtime != int64(i) {
			t.Fatalf("item %d: %+v, %v", i, p, ok)
		}
	}
	if p, _ := lp.Get(1 << 62); p.LastLogSize != 1<<62 {
		t.Fatalf("large position %+v", p)
	}
	// Prune drops the positions of items that no longer exist, on disk
	// too.
	n, err := lp.Prune(ctx, func(id uint64) bool { return id <= 10 })
	if err != nil || n != 11 {
		t.Fatalf("pruned %d, %v; want 11", n, err)
	}
	lp.Close()
	lp, err = OpenLogPositions(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lp.Close()
	if lp.Len() != 10 {
		t.Fatalf("%d positions after prune and reopen, want 10", lp.Len())
	}
}
