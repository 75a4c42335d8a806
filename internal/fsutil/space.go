package fsutil

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// SpaceOptions configures a SpaceGuard.
type SpaceOptions struct {
	// Dir is a directory on the file system to watch.
	Dir string
	// MinFree is the free space below which Check refuses; 0 never
	// refuses (Free still reports).
	MinFree uint64
	// Setting names MinFree's configuration field in the refusal's
	// message, so that an operator knows what to change.
	Setting string
	// Interval is the longest a measurement is reused; default one
	// second.
	Interval time.Duration
	// statfs returns the bytes free to an unprivileged user on dir's
	// file system; tests replace it.
	statfs func(dir string) (uint64, error)
}

// SpaceGuard tells whether the file system of a directory has at least a
// minimum of free space: the history refuses values early, with a clear
// message, instead of failing in the middle of a write once the disk is
// full, and leaves the rest of the data directory a reserve (events,
// alerts, the catalog, and the block flushes that shrink the WAL).
//
// It measures (statfs) at most once per Interval, lazily in Check or
// Free, so it needs no goroutine: the first call after the space came
// back sees it. Safe for concurrent use; Check costs an atomic load and
// a clock read between measurements.
type SpaceGuard struct {
	o     SpaceOptions
	mu    sync.Mutex   // one measurement at a time
	next  atomic.Int64 // UnixNano after which the measurement is stale
	state atomic.Pointer[spaceState]
}

type spaceState struct {
	free uint64
	err  error // statfs's error
	low  error // *LowSpaceError when free < MinFree
}

// NewSpaceGuard returns a guard for o.Dir.
func NewSpaceGuard(o SpaceOptions) *SpaceGuard {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.statfs == nil {
		o.statfs = statfsFree
	}
	g := &SpaceGuard{o: o}
	g.state.Store(&spaceState{})
	return g
}

// Check returns a *LowSpaceError when the file system has less than
// MinFree free, else nil. A file system that cannot be measured is not
// refused (the writes themselves then say whether there is room).
func (g *SpaceGuard) Check() error {
	if g == nil || g.o.MinFree == 0 {
		return nil
	}
	return g.current().low
}

// Free returns the bytes free on the file system, as last measured.
func (g *SpaceGuard) Free() (uint64, error) {
	st := g.current()
	return st.free, st.err
}

func (g *SpaceGuard) current() *spaceState {
	now := time.Now().UnixNano()
	if now >= g.next.Load() && g.mu.TryLock() {
		// The others use the previous measurement meanwhile.
		if now >= g.next.Load() {
			g.measure()
			g.next.Store(time.Now().Add(g.o.Interval).UnixNano())
		}
		g.mu.Unlock()
	}
	return g.state.Load()
}

func (g *SpaceGuard) measure() {
	free, err := g.o.statfs(g.o.Dir)
	st := &spaceState{free: free, err: err}
	if err == nil && free < g.o.MinFree {
		st.low = &LowSpaceError{Dir: g.o.Dir, Free: free, Min: g.o.MinFree, Setting: g.o.Setting}
	}
	g.state.Store(st)
}

// LowSpaceError says that a file system has less free space than its
// guard's minimum. It matches syscall.ENOSPC with errors.Is, as the
// write it forestalls would have.
type LowSpaceError struct {
	Dir       string
	Free, Min uint64
	Setting   string
}

func (e *LowSpaceError) Error() string {
	return fmt.Sprintf("not enough disk space: the file system of %s has %s free, less than %s = %s; values are refused until there is more (free space there, or lower %s)",
		e.Dir, FormatBytes(e.Free), e.Setting, FormatBytes(e.Min), e.Setting)
}

// Unwrap makes the error match syscall.ENOSPC.
func (e *LowSpaceError) Unwrap() error { return syscall.ENOSPC }

// FormatBytes writes n in binary units with one decimal ("1.5 GiB").
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[i])
}
