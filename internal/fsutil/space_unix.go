//go:build linux || darwin

package fsutil

import "syscall"

// statfsFree is the space free to an unprivileged user (f_bavail) on the
// file system of dir: what the server, which should not run as root,
// can write.
func statfsFree(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
