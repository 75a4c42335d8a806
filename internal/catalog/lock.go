package catalog

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrLocked is returned by Open when another process holds the catalog.
var ErrLocked = errors.New("catalog is in use by another process")

// lockFile takes an exclusive, non-blocking flock on path+".lock". The
// single-owner rule (see Open) is enforced rather than documented only:
// `peregrine import` run beside a live server would otherwise write rows
// the server's snapshot never sees, and the server's next Apply would diff
// against stale state. The kernel drops the lock when the process dies, so
// a crash never leaves the catalog locked.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("catalog: cannot open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w (is `peregrine serve` running on this data directory? stop it first; live changes go through the API)", path, ErrLocked)
		}
		return nil, fmt.Errorf("catalog: cannot lock %s.lock: %w", path, err)
	}
	return f, nil
}
