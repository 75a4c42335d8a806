package fsutil

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestSpaceGuard(t *testing.T) {
	var free atomic.Uint64
	var calls atomic.Int64
	g := NewSpaceGuard(SpaceOptions{Dir: "/data", MinFree: 100 << 20, Setting: "history.min_free_space", Interval: time.Hour,
		statfs: func(string) (uint64, error) { calls.Add(1); return free.Load(), nil }})
	free.Store(1 << 30)
	if err := g.Check(); err != nil {
		t.Fatalf("1 GiB free: %v", err)
	}
	free.Store(10 << 20)
	if err := g.Check(); err != nil {
		t.Fatalf("the measurement was not reused within the interval: %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d measurements within one interval, want 1", n)
	}
	g.next.Store(0) // the interval is over
	err := g.Check()
	var low *LowSpaceError
	if !errors.As(err, &low) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("10 MiB free of 100 required: %v, want a *LowSpaceError matching ENOSPC", err)
	}
	want := "not enough disk space: the file system of /data has 10.0 MiB free, less than history.min_free_space = 100.0 MiB; values are refused until there is more (free space there, or lower history.min_free_space)"
	if err.Error() != want {
		t.Errorf("message\n got %s\nwant %s", err, want)
	}
	if f, _ := g.Free(); f != 10<<20 {
		t.Errorf("Free = %d", f)
	}
	free.Store(200 << 20)
	g.next.Store(0)
	if err := g.Check(); err != nil {
		t.Fatalf("space came back: %v", err)
	}

	// Unmeasurable: not refused. Disabled: never refused.
	bad := NewSpaceGuard(SpaceOptions{Dir: "/nowhere", MinFree: 1, statfs: func(string) (uint64, error) { return 0, errors.New("no such directory") }})
	if err := bad.Check(); err != nil {
		t.Errorf("unmeasurable file system refused: %v", err)
	}
	off := NewSpaceGuard(SpaceOptions{Dir: t.TempDir()})
	if err := off.Check(); err != nil {
		t.Errorf("MinFree 0 refused: %v", err)
	}
	if f, err := off.Free(); err != nil || f == 0 {
		t.Errorf("Free of a real directory = %d, %v", f, err)
	}
	var nilGuard *SpaceGuard
	if err := nilGuard.Check(); err != nil {
		t.Errorf("nil guard: %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 256 << 20: "256.0 MiB", 3 << 40: "3.0 TiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %s, want %s", n, got, want)
		}
	}
}
